/* The backend interface: what the executor needs from a machine. Ranks run
 * the same program concurrently (launch); buffers are the backend's; matrix
 * products and the other kernels run on its devices; collectives have NCCL's
 * semantics on flat buffers over a communicator of an ordered rank group
 * (all-gather concatenates in group order, reduce-scatter leaves chunk `idx`,
 * all-to-all sends chunk k to member k). Layout-aware packing is the
 * executor's job, so a backend only moves flat buffers. */
#ifndef PL_BACKEND_H
#define PL_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "executor/kernels.h"
#include "planner/status.h"

typedef struct pl_comm pl_comm;
typedef struct pl_backend pl_backend;

enum {
	PL_CAP_HOST_MEMORY = 1 << 0, /* buffers are host pointers every rank can read */
	PL_CAP_THREAD_RANKS = 1 << 1 /* ranks are threads of this process */
};

struct pl_backend {
	const char *name;
	unsigned caps;
	int64_t nranks;
	void *impl;
	/* Runs fn(arg, rank) on every rank concurrently and waits for all.
	 * Returns 0, or -1 with msg set to the first failure (naming its rank). */
	int (*launch)(pl_backend *b, int (*fn)(void *arg, int64_t rank), void *arg, char *msg,
	              size_t msglen);
	float *(*alloc)(pl_backend *b, size_t elems); /* zeroed */
	void (*release)(pl_backend *b, float *p); /* NULL: nothing */
	/* The communicator of the ordered group `members` (every member asks for
	 * the same one); NULL when out of memory. */
	pl_comm *(*comm)(pl_backend *b, const int64_t *members, int n);
	/* Collectives: 0, or -1 when the run is aborting (another rank failed). */
	int (*all_reduce)(pl_comm *c, int idx, float *buf, size_t count, int max);
	int (*all_gather)(pl_comm *c, int idx, const float *send, float *recv, size_t count);
	int (*reduce_scatter)(pl_comm *c, int idx, const float *send, float *recv, size_t count);
	int (*all_to_all)(pl_comm *c, int idx, const float *send, float *recv, size_t count);
	pl_gemm_fn gemm;
	/* Marks the run as failed by rank (first call wins); every rank waiting
	 * in a collective returns -1 within a bounded time. */
	void (*fail)(pl_backend *b, int64_t rank, const char *msg);
	int (*failed)(pl_backend *b);
	void (*destroy)(pl_backend *b);
};

/* The cpu backend: one thread per rank, OpenBLAS sgemm, shared-memory
 * collectives. timeout_s bounds how long a collective waits for the rest of
 * its group before it declares the run failed (0: 60 s). */
pl_status pl_backend_cpu(pl_backend **out, int64_t nranks, double timeout_s, pl_err *err);

#endif
