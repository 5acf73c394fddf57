/* Local kernels: one operator's forward and backward on the rank's pieces of
 * its tensors, in fp32 host memory. A kernel sees local shapes only; what it
 * needs to know about the global tensor (the offset of its piece, the global
 * count a mean divides by, the rank group of a split class axis) comes in the
 * context. The cpu backend runs these; they are also the single-device
 * reference, since one rank holding whole tensors is the unsharded program. */
#ifndef PL_KERNELS_H
#define PL_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "graph/graph.h"

/* The case labels of the element-wise op types whose formula is
 * plk_elementwise's (executor/kernel_math.h), for both backends' kernel
 * switches: one unary kernel each runs them all. */
#define PL_CASES_UNARY_MATH                                                                        \
	case PL_OP_RELU:                                                                           \
	case PL_OP_GELU:                                                                           \
	case PL_OP_SILU:                                                                           \
	case PL_OP_TANH:                                                                           \
	case PL_OP_SIGMOID:                                                                        \
	case PL_OP_DROPOUT:                                                                        \
	case PL_OP_IDENTITY:                                                                       \
	case PL_OP_CAST:                                                                           \
	case PL_OP_NEG:                                                                            \
	case PL_OP_EXP:                                                                            \
	case PL_OP_LOG:                                                                            \
	case PL_OP_SQRT:                                                                           \
	case PL_OP_ABS:                                                                            \
	case PL_OP_SOFTPLUS:                                                                       \
	case PL_OP_SIN:                                                                            \
	case PL_OP_COS:                                                                            \
	case PL_OP_ERF:                                                                            \
	case PL_OP_SIGN:                                                                           \
	case PL_OP_TAN:                                                                            \
	case PL_OP_ASIN:                                                                           \
	case PL_OP_ACOS:                                                                           \
	case PL_OP_ATAN:                                                                           \
	case PL_OP_SINH:                                                                           \
	case PL_OP_COSH:                                                                           \
	case PL_OP_ASINH:                                                                          \
	case PL_OP_ACOSH:                                                                          \
	case PL_OP_ATANH:                                                                          \
	case PL_OP_FLOOR:                                                                          \
	case PL_OP_CEIL:                                                                           \
	case PL_OP_ROUND

/* The binary element-wise op types, whose formulas are plk_binary_value's
 * and plk_binary_grad's (kernel_math.h; kinds by pl_kernel_binary_kind). */
#define PL_CASES_BINARY                                                                            \
	case PL_OP_ADD:                                                                            \
	case PL_OP_SUB:                                                                            \
	case PL_OP_MUL:                                                                            \
	case PL_OP_DIV:                                                                            \
	case PL_OP_MAX:                                                                            \
	case PL_OP_MIN:                                                                            \
	case PL_OP_EQUAL:                                                                          \
	case PL_OP_LESS:                                                                           \
	case PL_OP_GREATER:                                                                        \
	case PL_OP_PRELU:                                                                          \
	case PL_OP_POW_TENSOR

typedef struct pl_xt {
	int rank;
	int64_t shape[PL_MAX_RANK];
	size_t n;
	float *v;
} pl_xt;

/* C = alpha * op(A) op(B) + beta * C, row-major, lda/ldb/ldc in elements */
typedef void (*pl_gemm_fn)(int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha,
                           const float *a, int64_t lda, const float *b, int64_t ldb, float beta,
                           float *c, int64_t ldc);

/* OpenBLAS's sgemm as a pl_gemm_fn (the cpu backend's; device backends
 * running a host kernel use it too) */
void pl_cpu_gemm(int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha, const float *a,
                 int64_t lda, const float *b, int64_t ldb, float beta, float *c, int64_t ldc);

typedef struct pl_kctx {
	const pl_graph *g;
	const pl_op *op;
	pl_gemm_fn gemm;
	int64_t rank; /* the rank running it (device backends find their device by it) */
	/* global offset of the local piece, per dimension; out_off's first
	 * dimension counts the rows of the step's earlier micro-batches too
	 * (Dropout masks are a function of the whole step's index) */
	int64_t in_off[PL_MAX_OP_INPUTS][PL_MAX_RANK];
	int64_t out_off[PL_MAX_RANK];
	uint64_t seed; /* Dropout masks: a function of (seed, op, global index) */
	/* SoftmaxCrossEntropy with a split class axis: sums (or maxima) over the
	 * ranks that hold the other classes of the same positions. NULL when the
	 * class axis is whole. Returns 0 or -1 (the run is aborting). */
	int (*class_allreduce)(void *ud, float *buf, size_t n, int max);
	void *ud;
	int loss_share; /* SCE: this rank adds the loss of its positions (one per class group) */
	pl_xt *saved;   /* per-op scratch kept from forward to backward (SCE: log-sum-exp;
	                 * Dropout: its mask, a byte an element; LayerNorm, RMSNorm: fp32
	                 * mean and 1/std a row; NULL: the backward computes them again) */
} pl_kctx;

/* Runs op forward: out = f(in). Returns 0, or -1 (out of memory / aborting). */
int pl_kernel_forward(pl_kctx *k, pl_xt *in, pl_xt *out);
/* Backward: given the inputs, the output and its gradient dout, writes the
 * gradient of every input i with din[i].v != NULL (overwritten, not added). */
int pl_kernel_backward(pl_kctx *k, pl_xt *in, const pl_xt *out, const pl_xt *dout, pl_xt *din);
/* Elements of the per-op scratch the forward needs (0: none). */
size_t pl_kernel_saved_elems(const pl_kctx *k, const pl_xt *in);

/* Shape helpers the kernels of every backend share. */
/* the op's axis attribute (dflt when absent), made non-negative for rank */
int64_t pl_kernel_axis(const pl_op *op, int rank, int64_t dflt);
/* row-major strides of t */
void pl_kernel_row_strides(const pl_xt *t, int64_t *st);
/* strides of `in` seen from `out`'s index space (aligned right), 0 where in
 * is broadcast */
void pl_kernel_bcast_strides(const pl_xt *in, const pl_xt *out, int64_t *bs);
/* MatMul: offsets (in matrices) of a and b for batch index i of c */
void pl_kernel_batch_offsets(const pl_xt *a, const pl_xt *b, const pl_xt *c, int64_t i, int64_t *oa,
                             int64_t *ob);
/* x as [outer, n, inner] around axis */
void pl_kernel_split3(const pl_xt *x, int64_t axis, int64_t *outer, int64_t *n, int64_t *inner);
/* ReduceSum/ReduceMean: per dimension of x the stride of the output it sums
 * into (0 where reduced); returns the scale (1, or 1 / the global count) */
double pl_kernel_reduce_map(const pl_kctx *k, const pl_xt *x, int64_t *ost);
/* SoftmaxCrossEntropy on piece x: local classes, the global index of the
 * first, positions; returns the global number of positions (the mean's) */
double pl_kernel_sce_dims(const pl_kctx *k, const pl_xt *x, int64_t *cl, int64_t *c0, int64_t *np);
/* the element-wise kind (kernel_math.h) of an op (Gelu's by its attrs) */
int pl_kernel_unary_kind(const pl_op *op);
/* PLK_ADD... for a binary op type (PL_CASES_BINARY), else -1 */
int pl_kernel_binary_kind(pl_optype t);

/* The splitmix64 hash the executor uses for synthetic data and masks. */
uint64_t pl_hash64(uint64_t x);
/* Dropout's keep decision for global element idx. */
int pl_dropout_keep(uint64_t seed, int op, uint64_t idx, double ratio);

#endif
