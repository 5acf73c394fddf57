/* Starting values for `planner run` (planner/values.c): a framework's weights
 * (--weights MODEL.onnx: its initializers) and batch (--batch-file
 * NAME=FILE: a .npy file or raw little-endian values), so that the first
 * loss can be compared with the framework's on the same numbers. */
#ifndef PL_VALUES_H
#define PL_VALUES_H

#include <stddef.h>
#include <stdint.h>

#include "executor/exec.h"
#include "graph/graph.h"

/* A .npy file's array: its element type (numpy's descr, such as "<f4"),
 * shape and data (borrowed from the file's bytes) */
typedef struct pl_npy {
	char descr[16];
	int rank;
	int64_t shape[PL_MAX_RANK];
	const unsigned char *data;
	size_t bytes;
	int width; /* bytes an element */
} pl_npy;

/* Parses a .npy file's bytes (format 1.0, 2.0 or 3.0: the magic, the
 * version, the header's dict of exactly 'descr', 'fortran_order' and
 * 'shape', then the data, exactly as many bytes as the shape needs).
 * Element types: <f4, <f8, <f2, <i8, <i4, <i2, |i1, |u1, |b1. PL_EINVAL
 * naming path and the field that is wrong. */
pl_status pl_npy_parse(const unsigned char *b, size_t len, const char *path, pl_npy *out,
                       pl_err *err);

/* What a run starts from: the values by tensor (into pl_exec_opts.values)
 * and what owns them */
typedef struct pl_start_values {
	pl_exec_values *v;
	int n, cap;
	int nweights; /* of them from --weights */
} pl_start_values;

/* --weights: the initializers of the ONNX file at path for g's params (every
 * one, else PL_EINVAL naming it) and for its consts without values */
pl_status pl_values_weights(pl_start_values *sv, const char *path, const pl_graph *g, pl_err *err);
/* --batch-file SPEC: NAME=FILE for g's input NAME, or FILE alone where g has
 * one input; a .npy file (by its magic) of the input's shape and kind (a
 * float type for a float input, an integer type for an integer one), else
 * raw little-endian float32 (a float input) or int64 or int32 (an integer
 * one, by the size). Integers beyond 2^24 are refused (float32 holds them
 * inexactly). PL_EINVAL naming the file and what is wrong. */
pl_status pl_values_batch(pl_start_values *sv, const char *spec, const pl_graph *g, pl_err *err);
void pl_values_free(pl_start_values *sv);

#endif
