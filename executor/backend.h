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

/* The cpu backend: one thread per rank, OpenBLAS sgemm, shared-memory
 * collectives. timeout_s bounds how long a collective waits for the rest of
 * its group before it declares the run failed (0: 60 s). */
pl_status pl_backend_cpu(pl_backend **out, int64_t nranks, double timeout_s, pl_err *err);
/* The most ranks the thread backends run in one process (a thread and its
 * buffers each); PL_EINVAL beyond it, pointing at processes (mpirun). */
#define PL_MAX_THREAD_RANKS 4096

/* The cpu backend with ranks as processes: MPI_COMM_WORLD's, one per
 * process (started by mpirun, srun or any MPI launcher), MPI's collectives
 * on communicators of the plan's groups, OpenBLAS sgemm. A failing rank ends
 * every process (MPI_Abort, exit 4) after naming itself. PL_EDEVICE when
 * this build has no MPI. */
pl_status pl_backend_mpi(pl_backend **out, pl_err *err);
/* The size of the MPI job this process was started in, read from the
 * launcher's environment (Open MPI, MPICH/Hydra and PMI, Slurm): 0 when it
 * was not started by one. */
int64_t pl_mpi_launched(void);

/* The cuda backend: one GPU per rank (rank r on CUDA device r), ranks are
 * threads of this process, cuBLAS for matrix products, CUDA kernels for the
 * other operators, NCCL communicators per rank group. PL_EDEVICE with a
 * message when this build has no CUDA, or the machine has fewer GPUs than
 * ranks; timeout_s as for cpu. */
pl_status pl_backend_cuda(pl_backend **out, int64_t nranks, double timeout_s, pl_err *err);
/* CUDA devices this process sees (0 when none, or no CUDA in this build). */
int pl_cuda_devices(void);

#endif
