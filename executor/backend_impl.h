/* The backend interface for those who write a backend (cpu.c, mpi.c,
 * cuda.c) and for the executor that drives one: the function table. Code
 * outside executor/ holds a pl_backend through executor/backend.h only. */
#ifndef PL_BACKEND_IMPL_H
#define PL_BACKEND_IMPL_H

#include "executor/backend.h"
#include "executor/kernels.h"

enum {
	PL_CAP_HOST_MEMORY = 1 << 0, /* buffers are host pointers every rank can read */
	PL_CAP_THREAD_RANKS = 1 << 1 /* ranks are threads of this process */
};

/* The optimizer step on one piece of a param: SGD (m, v unused) or Adam with
 * bias corrections c1 = 1 - b1^t, c2 = 1 - b2^t. */
typedef struct pl_update {
	int adam;
	double lr, grad_scale, b1, b2, eps, c1, c2;
} pl_update;

struct pl_backend {
	const char *name;
	unsigned caps;
	int64_t nranks;
	/* The one rank this process runs (its ranks are processes, as under
	 * mpirun), or -1: every rank is here (threads). */
	int64_t self;
	void *impl;
	/* Runs fn(arg, rank) on every rank concurrently and waits for all (and
	 * for the work each rank queued on its device). Returns 0, or -1 with msg
	 * set to the first failure (naming its rank). */
	int (*launch)(pl_backend *b, int (*fn)(void *arg, int64_t rank), void *arg, char *msg,
	              size_t msglen);
	/* Buffers live on a rank's device: zeroed, NULL when out of memory. */
	float *(*alloc)(pl_backend *b, int64_t rank, size_t elems);
	void (*release)(pl_backend *b, int64_t rank, float *p); /* NULL: nothing */
	/* Rank-local work on the rank's buffers, in the order it is asked for.
	 * Each returns 0, or -1 after marking the run failed (fail). Counts and
	 * pitches are in floats. copy: `rows` rows of `width` floats. */
	int (*copy)(pl_backend *b, int64_t rank, float *dst, size_t dpitch, const float *src,
	            size_t spitch, size_t width, size_t rows);
	int (*fill)(pl_backend *b, int64_t rank, float *p, size_t n, float value);
	int (*add)(pl_backend *b, int64_t rank, float *y, const float *x, size_t n); /* y += x */
	int (*update)(pl_backend *b, int64_t rank, const pl_update *u, float *w, const float *g,
	              float *m, float *v, size_t n);
	/* Waits until the work queued for rank is done: 0, or -1 (failed).
	 * NULL: work is done when it returns. */
	int (*wait)(pl_backend *b, int64_t rank);
	/* Host memory to a buffer and back (waits until the data is there). */
	int (*upload)(pl_backend *b, int64_t rank, float *dst, const float *host, size_t n);
	int (*download)(pl_backend *b, int64_t rank, float *host, const float *src, size_t n);
	/* An op's local kernels (kernels.h) on the rank's device; k->rank is set.
	 * 0, or -1 (failed, or out of memory: failed() tells which). */
	int (*forward)(pl_backend *b, pl_kctx *k, pl_xt *in, pl_xt *out);
	int (*backward)(pl_backend *b, pl_kctx *k, pl_xt *in, const pl_xt *out, const pl_xt *dout,
	                pl_xt *din);
	/* The communicator of the ordered group `members` (every member asks for
	 * the same one, from its own rank); NULL when it cannot be made. */
	pl_comm *(*comm)(pl_backend *b, int64_t rank, const int64_t *members, int n);
	/* Collectives: 0, or -1 when the run is aborting (another rank failed). */
	int (*all_reduce)(pl_comm *c, int idx, float *buf, size_t count, int max);
	int (*all_gather)(pl_comm *c, int idx, const float *send, float *recv, size_t count);
	int (*reduce_scatter)(pl_comm *c, int idx, const float *send, float *recv, size_t count);
	int (*all_to_all)(pl_comm *c, int idx, const float *send, float *recv, size_t count);
	/* Host matrix products (PL_CAP_HOST_MEMORY backends; NULL otherwise). */
	pl_gemm_fn gemm;
	/* Marks the run as failed by rank (first call wins); every rank waiting
	 * in a collective returns -1 within a bounded time. */
	void (*fail)(pl_backend *b, int64_t rank, const char *msg);
	int (*failed)(pl_backend *b);
	/* Processes only (self >= 0): sums a host array over all processes, in
	 * place; every process calls it with the same n. 0, or -1. */
	int (*sum_host)(pl_backend *b, double *buf, size_t n);
	void (*destroy)(pl_backend *b);
};

#endif
