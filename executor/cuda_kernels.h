/* CUDA kernels of the cuda backend, behind plain C launchers: the backend
 * (cuda.c) does the bookkeeping the host kernels in kernels.c do -- shapes,
 * strides, offsets, which gradient to write -- and hands the results here.
 * Each launcher queues its work on `stream` (a cudaStream_t) and returns 0
 * or the cudaError_t of the launch. Pointers are device memory; a NULL
 * output is not written. Gradients of broadcast inputs, of norm scales and
 * of Gather tables are accumulated with atomics: the caller zeroes them. */
#ifndef PL_CUDA_KERNELS_H
#define PL_CUDA_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "executor/kernel_math.h" /* the element-wise kinds */

#ifdef __cplusplus
extern "C" {
#endif

#define PLK_MAX_RANK 8

typedef struct plk_shape {
	int rank;
	int64_t s[PLK_MAX_RANK];
} plk_shape;

/* Dropout: the keep decision of a global element, as pl_dropout_keep. */
typedef struct plk_dropout {
	uint64_t seed;
	int op;
	double ratio;
	plk_shape local, global;   /* shapes of the local piece and of the tensor */
	int64_t off[PLK_MAX_RANK]; /* global offset of the piece */
} plk_dropout;

int plk_fill(void *stream, float *p, size_t n, float value);
int plk_add(void *stream, float *y, const float *x, size_t n);
int plk_update(void *stream, int adam, float *w, const float *g, float *m, float *v, size_t n,
               double lr, double grad_scale, double b1, double b2, double eps, double c1,
               double c2);

/* forward: y = f(x); backward (dy != NULL): dx = dy * f'(x) */
int plk_unary(void *stream, int kind, const float *x, float *y, const float *dy, float *dx,
              size_t n, const plk_dropout *dr);
/* out: the output's shape; sa, sb: the inputs' strides seen from it (0 where
 * broadcast). Forward writes y; backward adds into da, db. */
int plk_binary(void *stream, int kind, const float *a, const float *b, float *y, const float *dy,
               float *da, float *db, const plk_shape *out, const int64_t *sa, const int64_t *sb);
/* rows of n elements inner apart: forward y = softmax(x); backward dx from y, dy */
int plk_softmax(void *stream, const float *x, float *y, const float *dy, float *dx, int64_t outer,
                int64_t n, int64_t inner);
/* rows x cols; b may be NULL; backward writes dx and adds into ds, db */
int plk_norm(void *stream, int rms, const float *x, const float *s, const float *b, float *y,
             const float *dy, float *dx, float *ds, float *db, int64_t rows, int64_t cols,
             double eps);
/* table pieces [pre, vl, post] holding global rows v0.., indices ix (ni);
 * forward y [pre, ni, post]; backward adds into dx */
int plk_gather(void *stream, const float *x, const float *ix, float *y, const float *dy, float *dx,
               int64_t pre, int64_t vl, int64_t post, int64_t ni, int64_t v0, int64_t vglob);
/* element j of the output (shape out) reads x at sum ix[d] * src[d] */
int plk_transpose(void *stream, const float *x, float *y, const float *dy, float *dx,
                  const plk_shape *out, const int64_t *src);
/* x has shape xs; ost: output strides per x dimension (0 where reduced);
 * forward y = scale * sum (yn elements); backward dx = scale * dy */
int plk_reduce(void *stream, const float *x, float *y, const float *dy, float *dx,
               const plk_shape *xs, const int64_t *ost, size_t yn, double scale);
/* SoftmaxCrossEntropy over np positions of cl local classes (global class
 * c0 + c): the row maxima; the sums of exp and the target logits (st, 2 per
 * position); then lse and the loss (y[0], 0 unless share); the gradient. */
int plk_sce_max(void *stream, const float *x, float *mx, int64_t np, int64_t cl);
int plk_sce_sum(void *stream, const float *x, const float *lab, const float *mx, float *st,
                int64_t np, int64_t cl, int64_t c0);
int plk_sce_loss(void *stream, const float *mx, const float *st, float *lse, float *y, int64_t np,
                 double positions, int share);
int plk_sce_grad(void *stream, const float *x, const float *lab, const float *lse, const float *dy,
                 float *dx, int64_t np, int64_t cl, int64_t c0, double positions);

#ifdef __cplusplus
}
#endif

#endif
