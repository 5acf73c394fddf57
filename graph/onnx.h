/* ONNX models in: a ModelProto as a planner.model/1 document (graph/onnx/).
 * Built when protobuf-c and the onnx.proto Debian ships (libonnx-dev) are
 * found; otherwise the reader says so. */
#ifndef PL_ONNX_H
#define PL_ONNX_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "graph/status.h"

typedef struct pl_onnx_opts {
	int64_t batch;    /* the batch where dimension 0 of an input is symbolic (0: none) */
	const char *loss; /* "cross-entropy" (NULL: the default) or "none" */
	/* the axis of the first output the appended cross-entropy takes as its
	 * classes: 1 or -1 (the last); 0: 1 for outputs of rank 4 or more
	 * (images: PyTorch's CrossEntropyLoss and ONNX's SoftmaxCrossEntropyLoss
	 * take classes on dimension 1), the last otherwise (a language model's
	 * [batch, sequence, vocabulary]) */
	int loss_axis;
	/* initializers to keep constant (buffers such as attention masks, which
	 * exporters write like weights): fnmatch patterns of their names */
	const char *const *consts;
	int nconsts;
	/* Dropout nodes: "keep" (the planner's Dropout), "drop", or NULL / "auto":
	 * kept where the export trains (training_mode true) */
	const char *dropout;
} pl_onnx_opts;

/* The model in data[0..len) (an ONNX file named path) as a planner.model/1
 * document (*out; the caller deletes it). PL_EINVAL naming the file and the
 * node, op type and opset of what it cannot import, or the symbolic
 * dimension --batch should set; PL_ENOMEM. */
/* The ONNX operators the importer reads, as one line of prose (what an
 * unsupported node's message and 'planner import --help' list). */
const char *pl_onnx_supported(void);

pl_status pl_onnx_to_model(const unsigned char *data, size_t len, const char *path,
                           const pl_onnx_opts *o, cJSON **out, pl_err *err);

/* planner run --weights: the values of the initializers of the ONNX file
 * data[0..len) (named path) for g's params and for its consts without
 * values, by name: a tensor named as an initializer takes all its values
 * (the same shape), one named 'W[lo:hi]' (the importer's cut of a fused
 * projection) columns lo..hi of W's last dimension; float32, float16,
 * bfloat16 and double data as float32. *vals: per tensor of g its values
 * (NULL for the others and for a const the file does not hold); the caller
 * frees each and the array. PL_EINVAL naming the file and the tensor: a
 * param the file does not hold, another shape, dims only, external data,
 * not a float type. */
struct pl_graph;
pl_status pl_onnx_weights(const unsigned char *data, size_t len, const char *path,
                          const struct pl_graph *g, float ***vals, pl_err *err);

#endif
