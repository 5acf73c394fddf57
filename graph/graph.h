/* The graph IR: tensors and operators of one model, arena-allocated, ops kept
 * in a topological order. Each op carries its loop space (pl_loopspec), which
 * the op rules fill at import: a strategy is one split count per loop, and
 * every tensor dimension of the op maps onto a run of loops. */
#ifndef PL_GRAPH_H
#define PL_GRAPH_H

#include <stdint.h>

#include "graph/arena.h"
#include "graph/status.h"

#define PL_MAX_RANK       8
/* a const's values the model format carries, at most (16 MiB as float32:
 * a 2048x2048 causal mask) */
#define PL_MAX_CONST_VALUES (1 << 22)
#define PL_MAX_LOOPS      12
#define PL_MAX_SPATIAL    3 /* Conv and pools: 1-, 2- and 3-d */
/* an LSTM's X, W, R, B, initial_h, initial_c (16 bytes more an op than 5) */
#define PL_MAX_OP_INPUTS  6
#define PL_MAX_OP_OUTPUTS 2

typedef enum pl_dtype {
	PL_DT_FLOAT32,
	PL_DT_FLOAT16,
	PL_DT_BFLOAT16,
	PL_DT_INT32,
	PL_DT_INT64,
	PL_DT_FLOAT64, /* computed in float32 by the executors; priced at its own peak */
	PL_DT_COUNT
} pl_dtype;

typedef enum pl_role {
	PL_ROLE_INPUT,
	PL_ROLE_PARAM,
	PL_ROLE_CONST,
	PL_ROLE_ACTIVATION,
	PL_ROLE_COUNT
} pl_role;

typedef enum pl_optype {
	PL_OP_MATMUL,
	PL_OP_ADD,
	PL_OP_SUB,
	PL_OP_MUL,
	PL_OP_DIV,
	PL_OP_RELU,
	PL_OP_GELU,
	PL_OP_SILU,
	PL_OP_TANH,
	PL_OP_SIGMOID,
	PL_OP_SOFTMAX,
	PL_OP_LAYERNORM,
	PL_OP_RMSNORM,
	PL_OP_GATHER,
	PL_OP_RESHAPE,
	PL_OP_TRANSPOSE,
	PL_OP_REDUCESUM,
	PL_OP_REDUCEMEAN,
	PL_OP_DROPOUT,
	PL_OP_SCE,
	PL_OP_IDENTITY,
	PL_OP_CAST,
	PL_OP_MOE_DISPATCH,
	PL_OP_MOE_COMBINE,
	PL_OP_CONV,
	PL_OP_MAXPOOL,
	PL_OP_AVGPOOL,
	PL_OP_CLIP,
	PL_OP_BATCHNORM,
	PL_OP_EXPAND,
	PL_OP_CONCAT,
	PL_OP_SLICE,
	PL_OP_HARDSIGMOID,
	PL_OP_HARDSWISH,
	PL_OP_RESIZE,
	PL_OP_NEG,
	PL_OP_EXP,
	PL_OP_LOG,
	PL_OP_SQRT,
	PL_OP_ABS,
	PL_OP_SOFTPLUS,
	PL_OP_MAX,
	PL_OP_MIN,
	PL_OP_EQUAL,
	PL_OP_LESS,
	PL_OP_GREATER,
	PL_OP_WHERE,
	PL_OP_SIN,
	PL_OP_COS,
	PL_OP_CONVTRANSPOSE,
	PL_OP_PAD,
	PL_OP_RNN,
	PL_OP_GRU,
	PL_OP_LSTM,
	PL_OP_LEAKYRELU,
	PL_OP_ELU,
	PL_OP_SELU,
	PL_OP_CELU,
	PL_OP_PRELU,
	PL_OP_CUMSUM,
	PL_OP_POW,
	PL_OP_REDUCEMAX,
	PL_OP_REDUCEMIN,
	PL_OP_ATTENTION,
	PL_OP_ARGMAX,
	PL_OP_ARGMIN,
	PL_OP_TOPK,
	PL_OP_ONEHOT,
	PL_OP_GATHERELEMENTS,
	PL_OP_GRIDSAMPLE,
	PL_OP_ERF,
	PL_OP_SIGN,
	PL_OP_TAN,
	PL_OP_ASIN,
	PL_OP_ACOS,
	PL_OP_ATAN,
	PL_OP_SINH,
	PL_OP_COSH,
	PL_OP_ASINH,
	PL_OP_ACOSH,
	PL_OP_ATANH,
	PL_OP_FLOOR,
	PL_OP_CEIL,
	PL_OP_ROUND,
	PL_OP_REDUCEPROD,
	PL_OP_POW_TENSOR, /* Pow by a run-time exponent: the model's "Pow" with two inputs */
	PL_OP_COUNT
} pl_optype;

typedef enum pl_loopkind {
	PL_LOOP_PARALLEL, /* splitting it splits the outputs */
	PL_LOOP_REDUCE,   /* splitting it leaves partial sums in the outputs */
} pl_loopkind;

typedef struct pl_loop {
	int64_t size;
	uint8_t kind;       /* pl_loopkind */
	uint8_t splittable; /* 0: the op needs this loop whole (Softmax's axis, ...) */
} pl_loop;

/* A tensor dimension covers loops [first, first+count), major first; only the
 * first of them may be split (a later one would cut non-contiguous pieces).
 * count 0: the dimension is never split (broadcast or size 1). */
typedef struct pl_dimmap {
	int8_t first, count;
} pl_dimmap;

typedef struct pl_loopspec {
	int nloops;
	pl_loop loop[PL_MAX_LOOPS];
	pl_dimmap in[PL_MAX_OP_INPUTS][PL_MAX_RANK];
	pl_dimmap out[PL_MAX_OP_OUTPUTS][PL_MAX_RANK];
} pl_loopspec;

typedef struct pl_attrs {
	int64_t axis;
	int has_axis;
	double epsilon;
	double ratio;
	int nperm;
	int64_t perm[PL_MAX_RANK];
	int naxes, has_axes;
	int64_t axes[PL_MAX_RANK];
	int keepdims;
	int nshape;
	int64_t shape[PL_MAX_RANK];
	pl_dtype to;
	/* MoEDispatch / MoECombine: each token goes to its top_k experts, each
	 * expert takes at most ceil(capacity_factor * top_k * tokens / experts)
	 * tokens of every one of `groups` consecutive token groups */
	int64_t top_k, groups;
	double capacity_factor;
	/* Conv, MaxPool, AveragePool over the trailing nspatial dimensions, as
	 * ONNX states them: kernel_shape (Conv's is its weight's), strides, pads
	 * (the begins, then the ends), dilations, Conv's channel groups (group),
	 * the pools' ceil_mode and count_include_pad, ConvTranspose's
	 * output_padding (Pad's pads: the begins and ends of every dimension).
	 * nkernel/nstrides/npads/ndilations/noutput_padding: how many were given
	 * (0: the defaults) */
	int nkernel, nstrides, npads, ndilations, noutput_padding;
	int64_t kernel[PL_MAX_SPATIAL], strides[PL_MAX_SPATIAL], pads[2 * PL_MAX_RANK],
	    dilations[PL_MAX_SPATIAL], output_padding[PL_MAX_SPATIAL];
	/* Pad: how the new elements are filled (PL_PAD_*), and with what */
	int pad_mode;
	double pad_value;
	int64_t group;
	int ceil_mode, count_include_pad;
	/* Clip: the bounds (-inf, +inf when not given) */
	double min, max;
	/* Slice: per axis (axes[i]) the range [starts[i], ends[i]) (step 1),
	 * normalised to the input's shape; nslices of them */
	int nslices;
	int64_t starts[PL_MAX_RANK], ends[PL_MAX_RANK];
	/* HardSigmoid: max(0, min(1, alpha x + beta)) (ONNX: 0.2, 0.5; torch's
	 * hardsigmoid is 1/6, 0.5); HardSwish: x HardSigmoid(x) with 1/6, 0.5.
	 * LeakyRelu's slope below 0 (alpha, 0.01), Elu's and Celu's scale
	 * (alpha, 1), Selu's alpha and gamma (ONNX's defaults, SELU's constants) */
	double alpha, beta, gamma;
	/* Gelu: 1 the tanh approximation (attrs.approximate "tanh"), 0 the exact
	 * x Phi(x) (ONNX's default, "none") */
	int gelu_tanh;
	/* BatchNormalization: 1 normalises by the batch's statistics (training),
	 * 0 by the running ones its inputs 3 and 4 hold (ONNX's default) */
	int training_mode;
	/* Resize of the trailing spatial dimensions to shape[0..nshape): how an
	 * output position maps to an input one and what it reads there, as ONNX
	 * states them (PL_RESIZE_*) */
	int resize_mode, resize_coord, resize_nearest;
	/* cubic: the coefficient a of the cubic convolution (ONNX's default
	 * -0.75, PyTorch's bicubic), and whether taps past the input's edges
	 * are dropped and the rest renormalised (else they read the edge) */
	double cubic_coeff_a;
	int exclude_outside;
	/* RNN, GRU, LSTM: the direction of a one-direction layer (PL_RNN_*; two
	 * directions are bidirectional), and GRU's linear_before_reset (the
	 * reset gate applied after the recurrent product, as PyTorch's GRU) */
	int rnn_direction;
	int linear_before_reset;
	/* LSTM: 1 gives the cell state of every step instead of the hidden
	 * one (how c_n is read: its last step, as h_n is Y's) */
	int cell_states;
	/* CumSum along axis: each element the sum of those before it (and
	 * itself unless exclusive), counted from the end when reverse */
	int exclusive, reverse;
	/* Pow: x to a constant power (Reciprocal's is -1) */
	double exponent;
	/* Attention: query i sees keys 0..i only (is_causal), and the scores
	 * are scaled by `scale` (has_scale; else 1/sqrt(head size)); in the
	 * 3-D form the query and key/value heads (q_num_heads, kv_num_heads) */
	int causal, has_scale;
	double scale;
	int64_t q_heads, kv_heads;
	/* ArgMax, ArgMin: the last extreme's index when select_last_index, else
	 * the first's. TopK: the k largest (smallest unless largest) along axis,
	 * in order (sorted; ties to the lower index). OneHot: depth classes
	 * inserted at axis, each off_value but the index's on_value (values),
	 * of dtype `to` (attrs.dtype; int64 unless given) */
	int select_last, largest, sorted;
	int64_t k, depth;
	double off_value, on_value;
	/* GridSample: bilinear or nearest (resize_mode: PL_RESIZE_LINEAR or
	 * _NEAREST), positions outside read as zeros or the border's (0, 1:
	 * pl_grid_padding_name), the grid's -1 and 1 the corner pixels' centres
	 * (align_corners) or their outer edges */
	int grid_padding, align_corners;
} pl_attrs;

enum { PL_RESIZE_NEAREST, PL_RESIZE_LINEAR, PL_RESIZE_CUBIC };
/* x_in from x_out, s = out/in: (x + 1/2)/s - 1/2; the same but 0 where the
 * output has one element; x (in - 1)/(out - 1); x/s */
enum pl_resize_coord {
	PL_COORD_HALF_PIXEL,
	PL_COORD_PYTORCH_HALF_PIXEL,
	PL_COORD_ALIGN_CORNERS,
	PL_COORD_ASYMMETRIC
};
/* nearest: how x_in is rounded (halves down, halves up, floor, ceil) */
enum pl_resize_nearest {
	PL_NEAREST_ROUND_PREFER_FLOOR,
	PL_NEAREST_ROUND_PREFER_CEIL,
	PL_NEAREST_FLOOR,
	PL_NEAREST_CEIL
};
/* Pad's modes, as ONNX names them: constant (value), reflect (mirrored
 * about the edge element, which is not repeated), edge (the edge element
 * repeated), wrap (the other end's elements: circular) */
enum { PL_PAD_CONSTANT, PL_PAD_REFLECT, PL_PAD_EDGE, PL_PAD_WRAP };
/* A recurrent layer's direction, as ONNX names them */
enum { PL_RNN_FORWARD, PL_RNN_REVERSE, PL_RNN_BIDIRECTIONAL };

typedef struct pl_tensor {
	const char *name;
	int rank;
	int64_t shape[PL_MAX_RANK];
	pl_dtype dtype;
	pl_role role;
	int producer, producer_slot; /* -1 for inputs, params, consts */
	int nconsumers;
	int *consumers, *consumer_slots;
	int requires_grad; /* a param, or computed from one */
	/* a const's values when the model gives them (row-major, every element;
	 * NULL: not given, and planner run refuses to invent them), owned by the
	 * graph */
	const float *values;
} pl_tensor;

typedef struct pl_op {
	const char *name;
	pl_optype type;
	int ninputs, noutputs;
	int in[PL_MAX_OP_INPUTS], out[PL_MAX_OP_OUTPUTS];
	int has_strategy; /* user annotation, kept by every searcher */
	/* 1: a strategy that leaves devices over puts its replicas on the minor
	 * axis of its device matrix (ops that read no weight, replicated over
	 * the tensor-parallel ranks that come fastest in Megatron's rank order);
	 * 0: on the major one (ops that read a weight, replicated over the
	 * data-parallel groups). Set with the shapes (pl_is_weight). */
	int replica_minor;
	/* the model's "recompute": 1 when its framework runs this op's forward
	 * again in the backward instead of keeping its output, inside a fused
	 * kernel (Megatron-core's fused SwiGLU keeps only its input and
	 * recomputes the SiLU): priced and executed as a plan's per-op
	 * recompute flag 1 (costmodel/cost.h), whatever the plan's own */
	int recompute;
	/* the model's "view": 1 on a Reshape or Slice whose output shares its
	 * input's storage, as PyTorch's view, split and basic slicing do: no
	 * kernel of its own, and a backward that saves the output keeps the
	 * input's whole storage alive (the cost model counts that input,
	 * pl_view_base) */
	int view;
	/* the model's "copy": 1 on an Identity that is a clone (PyTorch's
	 * x.clone()): a copy kernel forward, its output a tensor of its own, and
	 * its gradient handed back unchanged (no backward kernel) */
	int copy;
	/* Never NULL once read, owned by the graph's arena and shared: ops whose
	 * attributes are the same (those that give none: their type's
	 * defaults) point to one record, so an op costs its attributes only
	 * when it has its own (888 bytes were inline in every op). Read-only,
	 * but for Slice's, which is the op's own (its inference normalises
	 * the ranges to the input's shape). */
	const pl_attrs *attrs;
	/* its PL_MAX_LOOPS split counts when has_strategy (in the graph's
	 * arena: most ops have none), else NULL */
	int64_t *strategy;
	pl_loopspec spec;
} pl_op; /* 408 bytes */

typedef struct pl_graph {
	pl_arena *arena;
	const char *name;
	const char *path; /* file it came from, for messages */
	char sha256[65];
	pl_dtype dtype;
	int ntensors;
	pl_tensor *tensors;
	int nops;
	pl_op *ops; /* topological order */
	int noutputs;
	int *outputs;
	int64_t micro_batches; /* 1, or the graph is one of this many micro-batches */
	const char *source;    /* the JSON it was built from (arena copy) */
	size_t source_len;
	/* What the model file holds that the reader does not use (an op
	 * attribute its type does not have, a key the format does not have at
	 * the top, in a tensor or in an op): up to PL_GRAPH_WARNINGS lines
	 * "FILE: op 'NAME': attrs.KEY: ...", "FILE: tensors.NAME.KEY: ...",
	 * each ending in a newline (NULL: none), and how many there were in
	 * all. The command line prints them as warnings. */
	const char *warnings;
	int nwarnings;
	/* per op, pl_op_hash at load (arena; NULL: not computed): the problems
	 * of a whole-job search share it instead of hashing every op's kilobytes
	 * again each (14 % of a GPT-3 175B search on 4096 devices) */
	const uint64_t *op_hash;
} pl_graph;
#define PL_GRAPH_WARNINGS 20

/* The longest file read: ONNX's own limit (a protobuf message of 2 GiB). */
#define PL_MAX_FILE_BYTES ((size_t)2 << 30)
/* Reads a whole file ("-": stdin) into a NUL-terminated buffer the caller
 * frees; errors name the file; a file longer than PL_MAX_FILE_BYTES is
 * refused (PL_EINVAL) once that much is read. */
pl_status pl_read_file(const char *path, char **text, size_t *len, pl_err *err);
/* Releases a graph a reader (graph/model.h) made; NULL is fine. */
void pl_graph_free(pl_graph *g);

/* The greatest common divisor of a and b (gcd(a, 0) = a). */
int64_t pl_gcd(int64_t a, int64_t b);

/* The batch: the greatest common divisor of dimension 0 of the input
 * tensors (0 if the model has none). Micro-batch counts divide it. */
int64_t pl_graph_batch(const pl_graph *g);

/* A hash of op o's type, loop spec, attributes and input shapes and dtypes:
 * ops equal in those have equal hashes (cost.c buckets op classes by it). */
uint64_t pl_op_hash(const pl_graph *g, int o);
/* FNV-1a over 8-byte words, then the tail bytes, from h (PL_HASH_SEED to
 * start): only for bucketing, where what is hashed is compared for equality
 * (an op's loop spec is kilobytes: words, not bytes) */
#define PL_HASH_SEED 14695981039346656037ULL
uint64_t pl_hash_bytes(uint64_t h, const void *data, size_t n);

int pl_graph_find_op(const pl_graph *g, const char *name);
int pl_graph_find_tensor(const pl_graph *g, const char *name);

const char *pl_dtype_name(pl_dtype dt);
int pl_dtype_bytes(pl_dtype dt);
int pl_dtype_parse(const char *s, pl_dtype *out);
const char *pl_role_name(pl_role r);

/* The elements of a tensor the model reader has checked (its product fits
 * 64 bits: pl_shape_elems) */
int64_t pl_tensor_elems(const pl_tensor *t);
/* The tensor whose storage t shares: t itself, or, through ops marked
 * "view" (pl_op.view), the input they view */
int pl_view_base(const pl_graph *g, int t);

/* The largest dimension of a tensor (the model format's bound on any
 * integer: exact in a double). Every tensor the reader declares or infers
 * has its dimensions within it and its elements' count within 64 bits, so
 * that a few of them added stay within 64 bits too. */
#define PL_MAX_DIM 9000000000000000LL

/* The one helper for products of sizes read or inferred from input (sums
 * of a few dimensions within PL_MAX_DIM cannot overflow): *out = a * b; 1
 * when it overflows 64 bits (the caller refuses naming the node and the
 * field), else 0. */
static inline int pl_size_mul(int64_t a, int64_t b, int64_t *out)
{
	return __builtin_mul_overflow(a, b, out);
}
/* The product of shape[0..rank), or -1 when a dimension is negative or
 * past PL_MAX_DIM or the product of those but zeros overflows 64 bits. */
int64_t pl_shape_elems(int rank, const int64_t *shape);

#endif
