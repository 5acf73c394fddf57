/* The cuda backend: rank r is a thread of this process driving CUDA device r
 * through its own stream and cuBLAS handle; buffers are device memory;
 * collectives are NCCL's on one communicator per rank group, made on demand
 * by the members (ncclCommInitRankConfig with a unique id the first member
 * draws). Communicators are non-blocking, and every wait -- for a
 * communicator, a collective, the end of a step -- polls the run's failure
 * flag and a timeout, and aborts its communicator when the run fails: one
 * failing rank stops the others instead of leaving them in an NCCL kernel.
 *
 * With its ranks as processes (pl_backend_cuda_procs: mpirun, srun), this
 * process runs one rank on the GPU its launcher's node order gives it; the
 * first member of a group draws the unique id and the processes' runtime
 * (MPI) carries it to the others; a failure, or a wait past the timeout,
 * stops every process through that runtime.
 *
 * Kernels: cuBLAS for matrix products, the CUDA kernels of cuda_kernels.cu
 * for the other operators (this file does the bookkeeping kernels.c does).
 * MoE routing is sequential over the tokens of a group; MoEDispatch and
 * MoECombine run the host kernel on copies of their pieces. */
#include "executor/backend_impl.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <nccl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "executor/cuda_kernels.h"
#include "executor/ranks.h"
#include "graph/ops.h"
#include "graph/clock.h"
#include "graph/alloc.h"

_Static_assert(PL_MAX_RANK == PLK_MAX_RANK, "the kernels' shapes hold every tensor rank");

struct pl_comm {
	pl_backend *b;
	int n;
	const int64_t *members; /* the group registry's copy */
	ncclUniqueId id;
	ncclComm_t *nc;    /* per member, made by the member */
	atomic_int broken; /* a member aborted its communicator: the group is gone */
};

typedef struct crank {
	cudaStream_t s;
	cublasHandle_t h;
} crank;

typedef struct cuda {
	pl_ranks rk; /* failures and the communicators */
	double timeout_s;
	crank *r;  /* per rank; with procs, this process's rank's alone */
	int procs; /* ranks are processes: pr says which one this is */
	pl_procs pr;
} cuda;

/* The device of a rank, and its slot of r */
static int device_of(const cuda *c, int64_t rank)
{
	return c->procs ? c->pr.device : (int)rank;
}

static size_t slot_of(const cuda *c, int64_t rank)
{
	return c->procs ? 0 : (size_t)rank;
}

int pl_cuda_devices(void)
{
	int n = 0;
	if (cudaGetDeviceCount(&n) != cudaSuccess)
		return 0;
	return n;
}

static void cu_fail(pl_backend *b, int64_t rank, const char *msg)
{
	cuda *c = b->impl;
	if (c->procs)
		c->pr.abort(c->pr.ud, rank, msg); /* every process stops */
	pl_ranks_fail(&c->rk, rank, msg);
}

static int cu_failed(pl_backend *b)
{
	return pl_ranks_failed(&((cuda *)b->impl)->rk);
}

/* 0, or -1 after failing the run with what went wrong */
static int cuda_ok(pl_backend *b, int64_t rank, cudaError_t e, const char *what)
{
	if (e == cudaSuccess)
		return 0;
	char m[300];
	snprintf(m, sizeof m, "CUDA error in %s on GPU %d: %s", what, device_of(b->impl, rank),
	         cudaGetErrorString(e));
	cu_fail(b, rank, m);
	return -1;
}

static int blas_ok(pl_backend *b, int64_t rank, cublasStatus_t e)
{
	if (e == CUBLAS_STATUS_SUCCESS)
		return 0;
	char m[200];
	snprintf(m, sizeof m, "cuBLAS error %d in a matrix product on GPU %lld", (int)e,
	         (long long)rank);
	cu_fail(b, rank, m);
	return -1;
}

static crank *rk(pl_backend *b, int64_t rank)
{
	cuda *c = b->impl;
	cudaError_t e = cudaSetDevice(device_of(c, rank));
	if (e != cudaSuccess) { /* the rank's work stops at its next check */
		char m[160];
		snprintf(m, sizeof m, "cudaSetDevice(%d): %s", device_of(c, rank),
		         cudaGetErrorString(e));
		cu_fail(b, rank, m);
	}
	return &c->r[slot_of(c, rank)];
}

static void nap(void)
{
	struct timespec ts = {0, 50 * 1000};
	nanosleep(&ts, NULL);
}

/* Waits for the rank's stream (and, with nc, for the communicator to leave
 * its in-progress state first). -1 if the run failed meanwhile, the work
 * failed, or -- with nc, where the wait depends on the other ranks -- it took
 * longer than the timeout; then nc is aborted. A rank's own work has no
 * timeout: nothing of another rank's is left in its stream after a wait. */
static int wait_rank(pl_backend *b, int64_t rank, ncclComm_t *nc, const char *what)
{
	cuda *c = b->impl;
	crank *r = rk(b, rank);
	double t0 = pl_now();
	for (;;) {
		ncclResult_t ns = ncclSuccess;
		if (nc && *nc)
			ncclCommGetAsyncError(*nc, &ns);
		cudaError_t e = ns == ncclInProgress ? cudaErrorNotReady : cudaStreamQuery(r->s);
		const char *bad = NULL;
		char m[300];
		if (ns != ncclSuccess && ns != ncclInProgress) {
			snprintf(m, sizeof m, "NCCL error in %s: %s", what, ncclGetErrorString(ns));
			bad = m;
		} else if (e != cudaSuccess && e != cudaErrorNotReady) {
			snprintf(m, sizeof m, "CUDA error in %s on GPU %lld: %s", what,
			         (long long)rank, cudaGetErrorString(e));
			bad = m;
		} else if (e == cudaSuccess) {
			return 0;
		} else if (pl_ranks_failed(&c->rk)) {
			bad = "";
		} else if (nc && pl_now() - t0 > c->timeout_s) {
			snprintf(m, sizeof m, "%s waited %.0f s for the other ranks", what,
			         c->timeout_s);
			bad = m;
		}
		if (bad) {
			if (*bad)
				cu_fail(b, rank, bad);
			if (nc && *nc) {
				ncclCommAbort(*nc);
				*nc = NULL;
			}
			return -1;
		}
		nap();
	}
}

/* ---- buffers and rank-local work ---- */

/* The device's pool keeps what is given back (its default gives memory back
 * to the driver at every synchronisation, and takes it again after) */
static int keep_pool(int dev)
{
	cudaMemPool_t pool;
	uint64_t keep = UINT64_MAX;
	return cudaDeviceGetDefaultMemPool(&pool, dev) != cudaSuccess ||
	       cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep) != cudaSuccess;
}

/* Buffers come from the device's memory pool in the rank's stream order
 * (cudaMallocAsync), as frameworks' caching allocators do: a buffer given back
 * is reused by the rank's later work without a device-wide synchronisation
 * (cudaFree waits for the whole device). Zeroed in the rank's stream, so the
 * rank's later work sees the zeros. */
static float *cu_alloc(pl_backend *b, int64_t rank, size_t elems)
{
	crank *r = rk(b, rank);
	void *p = NULL;
	size_t bytes = sizeof(float) * (elems ? elems : 1);
	if (cudaMallocAsync(&p, bytes, r->s) != cudaSuccess) {
		cudaGetLastError(); /* out of memory is not sticky */
		return NULL;
	}
	if (cudaMemsetAsync(p, 0, bytes, r->s) != cudaSuccess) {
		cudaFreeAsync(p, r->s);
		return NULL;
	}
	return p;
}

static void cu_release(pl_backend *b, int64_t rank, float *p)
{
	if (!p)
		return;
	crank *r = rk(b, rank);
	cudaFreeAsync(p, r->s);
}

static int cu_wait(pl_backend *b, int64_t rank)
{
	crank *r = rk(b, rank);
	return cuda_ok(b, rank, cudaStreamSynchronize(r->s), "waiting for the GPU");
}

static int cu_copy(pl_backend *b, int64_t rank, float *dst, size_t dpitch, const float *src,
                   size_t spitch, size_t width, size_t rows)
{
	crank *r = rk(b, rank);
	if (!width || !rows)
		return 0;
	cudaError_t e =
	    rows == 1
	        ? cudaMemcpyAsync(dst, src, sizeof(float) * width, cudaMemcpyDeviceToDevice, r->s)
	        : cudaMemcpy2DAsync(dst, sizeof(float) * dpitch, src, sizeof(float) * spitch,
	                            sizeof(float) * width, rows, cudaMemcpyDeviceToDevice, r->s);
	return cuda_ok(b, rank, e, "a copy");
}

static int cu_fill(pl_backend *b, int64_t rank, float *p, size_t n, float value)
{
	crank *r = rk(b, rank);
	return cuda_ok(b, rank, (cudaError_t)plk_fill(r->s, p, n, value), "a fill");
}

static int cu_add(pl_backend *b, int64_t rank, float *y, const float *x, size_t n)
{
	crank *r = rk(b, rank);
	return cuda_ok(b, rank, (cudaError_t)plk_add(r->s, y, x, n), "a gradient sum");
}

static int cu_update(pl_backend *b, int64_t rank, const pl_update *u, float *w, const float *g,
                     float *m, float *v, size_t n)
{
	crank *r = rk(b, rank);
	return cuda_ok(b, rank,
	               (cudaError_t)plk_update(r->s, u->adam, w, g, m, v, n, u->lr, u->grad_scale,
	                                       u->b1, u->b2, u->eps, u->c1, u->c2),
	               "the optimizer");
}

/* a copy between host and device memory, waited for */
static int cu_move(pl_backend *b, int64_t rank, void *dst, const void *src, size_t n,
                   enum cudaMemcpyKind kind)
{
	crank *r = rk(b, rank);
	const char *what =
	    kind == cudaMemcpyHostToDevice ? "a copy to the GPU" : "a copy from the GPU";
	if (n && cuda_ok(b, rank, cudaMemcpyAsync(dst, src, sizeof(float) * n, kind, r->s), what))
		return -1;
	return wait_rank(b, rank, NULL, what);
}

static int cu_upload(pl_backend *b, int64_t rank, float *dst, const float *host, size_t n)
{
	return cu_move(b, rank, dst, host, n, cudaMemcpyHostToDevice);
}

static int cu_download(pl_backend *b, int64_t rank, float *host, const float *src, size_t n)
{
	return cu_move(b, rank, host, src, n, cudaMemcpyDeviceToHost);
}

/* ---- collectives ---- */

/* the group's record; each member makes its own NCCL communicator in cu_comm */
static void *cu_make_comm(void *b, const int64_t *members, int n)
{
	pl_comm *cm = pl_calloc(1, sizeof *cm);
	int procs = ((cuda *)((pl_backend *)b)->impl)->procs; /* then cu_comm draws it */
	if (!cm || !(cm->nc = pl_calloc((size_t)n, sizeof *cm->nc)) ||
	    (n > 1 && !procs && ncclGetUniqueId(&cm->id) != ncclSuccess)) {
		if (cm)
			free(cm->nc);
		free(cm);
		return NULL;
	}
	cm->b = b;
	cm->n = n;
	cm->members = members;
	return cm;
}

/* With ranks as processes: the group's first member draws the unique id,
 * the processes' runtime carries it to the others. 0, or -1 (failed). */
static int share_id(pl_backend *b, pl_comm *cm, int64_t rank, int idx)
{
	cuda *c = b->impl;
	const char *bad = NULL;
	if (idx == 0 && ncclGetUniqueId(&cm->id) != ncclSuccess)
		bad = "cannot draw an NCCL unique id";
	else if (c->pr.bcast(c->pr.ud, cm->members, cm->n, &cm->id, sizeof cm->id))
		bad = "cannot pass the NCCL unique id to the group's processes";
	if (bad) {
		atomic_store(&cm->broken, 1);
		cu_fail(b, rank, bad);
		return -1;
	}
	return 0;
}

static pl_comm *cu_comm(pl_backend *b, int64_t rank, const int64_t *members, int n)
{
	cuda *c = b->impl;
	int idx = -1;
	for (int k = 0; k < n; k++)
		if (members[k] == rank)
			idx = k;
	if (idx < 0)
		return NULL;
	pl_comm *cm = pl_ranks_group(&c->rk, members, n, cu_make_comm, b);
	if (cm && atomic_load(&cm->broken)) {
		cu_fail(b, rank,
		        "an NCCL communicator was aborted by an earlier failure; make a "
		        "new backend");
		return NULL;
	}
	if (!cm || n == 1 || cm->nc[idx])
		return cm;
	if (c->procs && share_id(b, cm, rank, idx))
		return NULL;
	/* every member joins here; the call returns at once (non-blocking) */
	rk(b, rank);
	ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
	cfg.blocking = 0;
	ncclResult_t e = ncclCommInitRankConfig(&cm->nc[idx], n, cm->id, idx, &cfg);
	if (e != ncclSuccess && e != ncclInProgress) {
		char m[300];
		snprintf(m, sizeof m, "cannot create an NCCL communicator of %d ranks: %s", n,
		         ncclGetErrorString(e));
		cu_fail(b, rank, m);
		cm->nc[idx] = NULL;
		atomic_store(&cm->broken, 1);
		return NULL;
	}
	if (wait_rank(b, rank, &cm->nc[idx], "creating an NCCL communicator")) {
		atomic_store(&cm->broken, 1);
		return NULL;
	}
	return cm;
}

static int nccl_call(pl_comm *cm, int idx, ncclResult_t e, const char *what)
{
	int64_t rank = cm->members[idx];
	if (e != ncclSuccess && e != ncclInProgress) {
		char m[300];
		snprintf(m, sizeof m, "NCCL error in %s: %s", what, ncclGetErrorString(e));
		cu_fail(cm->b, rank, m); /* the others see the run failed and abort theirs */
		if (cm->nc[idx]) {
			rk(cm->b, rank);
			ncclCommAbort(cm->nc[idx]);
			cm->nc[idx] = NULL;
		}
		atomic_store(&cm->broken, 1);
		return -1;
	}
	if (wait_rank(cm->b, rank, &cm->nc[idx], what)) {
		atomic_store(&cm->broken, 1);
		return -1;
	}
	return 0;
}

/* A collective's start: 1 when a group of one has done it already (a copy
 * of send to recv, or nothing), -1 when the member has no communicator (its
 * creation failed), 0 to go on with the member's rank in *r. */
static int coll_start(pl_comm *cm, int idx, const float *send, float *recv, size_t count, crank **r)
{
	int64_t rank = cm->members[idx];
	if (cm->n == 1) {
		if (send != recv && cu_copy(cm->b, rank, recv, count, send, count, count, 1))
			return -1;
		return cu_failed(cm->b) ? -1 : 1;
	}
	if (!cm->nc[idx])
		return -1;
	*r = rk(cm->b, rank);
	return 0;
}

/* all_to_all as NCCL has it: a send and a receive of count floats with
 * each member, in one group */
static ncclResult_t nccl_all_to_all(const float *send, float *recv, size_t count, int n,
                                    ncclComm_t nc, cudaStream_t s)
{
	ncclResult_t e = ncclGroupStart();
	for (int k = 0; k < n && (e == ncclSuccess || e == ncclInProgress); k++) {
		e = ncclSend(send + (size_t)k * count, count, ncclFloat, k, nc, s);
		if (e == ncclSuccess || e == ncclInProgress)
			e = ncclRecv(recv + (size_t)k * count, count, ncclFloat, k, nc, s);
	}
	ncclResult_t ge = ncclGroupEnd();
	return e == ncclSuccess || e == ncclInProgress ? ge : e;
}

/* The backend's collectives, each one NCCL call on the member's stream */
enum { COLL_ALL_REDUCE, COLL_ALL_GATHER, COLL_REDUCE_SCATTER, COLL_ALL_TO_ALL };

/* Collective `kind` of member idx, count floats a member (all_reduce in
 * place in recv, of their maximum when max, else their sum; of none, only
 * the run's failure seen) */
static int collective(pl_comm *cm, int idx, int kind, const float *send, float *recv, size_t count,
                      int max)
{
	static const char *const what[] = {"all_reduce", "all_gather", "reduce_scatter",
	                                   "all_to_all"};
	crank *r;
	int st = count || kind != COLL_ALL_REDUCE ? coll_start(cm, idx, send, recv, count, &r)
	         : cu_failed(cm->b)               ? -1
	                                          : 1;
	if (st)
		return st < 0 ? -1 : 0;
	ncclComm_t nc = cm->nc[idx];
	ncclResult_t e;
	if (kind == COLL_ALL_REDUCE)
		e = ncclAllReduce(send, recv, count, ncclFloat, max ? ncclMax : ncclSum, nc, r->s);
	else if (kind == COLL_ALL_GATHER)
		e = ncclAllGather(send, recv, count, ncclFloat, nc, r->s);
	else if (kind == COLL_REDUCE_SCATTER)
		e = ncclReduceScatter(send, recv, count, ncclFloat, ncclSum, nc, r->s);
	else
		e = nccl_all_to_all(send, recv, count, cm->n, nc, r->s);
	return nccl_call(cm, idx, e, what[kind]);
}

static int cu_all_reduce(pl_comm *cm, int idx, float *buf, size_t count, int max)
{
	return collective(cm, idx, COLL_ALL_REDUCE, buf, buf, count, max);
}

static int cu_all_gather(pl_comm *cm, int idx, const float *send, float *recv, size_t count)
{
	return collective(cm, idx, COLL_ALL_GATHER, send, recv, count, 0);
}

static int cu_reduce_scatter(pl_comm *cm, int idx, const float *send, float *recv, size_t count)
{
	return collective(cm, idx, COLL_REDUCE_SCATTER, send, recv, count, 0);
}

static int cu_all_to_all(pl_comm *cm, int idx, const float *send, float *recv, size_t count)
{
	return collective(cm, idx, COLL_ALL_TO_ALL, send, recv, count, 0);
}

/* ---- kernels ---- */

/* C = alpha op(A) op(B) + beta C, row-major: cuBLAS (column-major) computes
 * C^T = op(B)^T op(A)^T */
static int dgemm(pl_backend *b, int64_t rank, int ta, int tb, int64_t m, int64_t n, int64_t k,
                 float alpha, const float *a, int64_t lda, const float *bb, int64_t ldb, float beta,
                 float *c, int64_t ldc)
{
	crank *r = rk(b, rank);
	if (m > INT32_MAX || n > INT32_MAX || k > INT32_MAX) {
		cu_fail(b, rank, "a matrix product larger than cuBLAS's 32-bit sizes");
		return -1;
	}
	return blas_ok(b, rank,
	               cublasSgemm(r->h, tb ? CUBLAS_OP_T : CUBLAS_OP_N,
	                           ta ? CUBLAS_OP_T : CUBLAS_OP_N, (int)n, (int)m, (int)k, &alpha,
	                           bb, (int)ldb, a, (int)lda, &beta, c, (int)ldc));
}

static int zero(pl_backend *b, int64_t rank, const pl_xt *x)
{
	return x->v ? cu_fill(b, rank, x->v, x->n, 0) : 0;
}

static int matmul(pl_backend *b, pl_kctx *k, pl_xt *in, pl_xt *c, const pl_xt *dc, pl_xt *din)
{
	int64_t R = k->rank;
	pl_xt *a = &in[0], *bm = &in[1];
	const pl_xt *cc = c ? c : dc;
	int64_t m = a->shape[a->rank - 2], kk = a->shape[a->rank - 1], n = bm->shape[bm->rank - 1];
	int64_t batches = 1;
	for (int d = 0; d < cc->rank - 2; d++)
		batches *= cc->shape[d];
	if (din && (zero(b, R, &din[0]) || zero(b, R, &din[1])))
		return -1;
	/* A batched as C is and B one matrix: one product over batches * m rows */
	int flat = bm->rank == 2 && (int64_t)(a->n / (size_t)(m * kk)) == batches;
	if (flat) {
		m *= batches;
		batches = 1;
	}
	for (int64_t i = 0; i < batches; i++) {
		int64_t oa = 0, ob = 0;
		if (!flat)
			pl_kernel_batch_offsets(a, bm, cc, i, &oa, &ob);
		const float *pa = a->v + oa * m * kk, *pb = bm->v + ob * kk * n;
		if (!din) {
			if (dgemm(b, R, 0, 0, m, n, kk, 1, pa, kk, pb, n, 0, c->v + i * m * n, n))
				return -1;
			continue;
		}
		const float *pc = dc->v + i * m * n;
		if (din[0].v &&
		    dgemm(b, R, 0, 1, m, kk, n, 1, pc, n, pb, n, 1, din[0].v + oa * m * kk, kk))
			return -1;
		if (din[1].v &&
		    dgemm(b, R, 1, 0, kk, n, m, 1, pa, kk, pc, n, 1, din[1].v + ob * kk * n, n))
			return -1;
	}
	return 0;
}

static void shape_of(const pl_xt *x, plk_shape *s)
{
	memset(s, 0, sizeof *s);
	s->rank = x->rank;
	memcpy(s->s, x->shape, sizeof(int64_t) * (size_t)x->rank);
}

static int sce(pl_backend *b, pl_kctx *k, pl_xt *in, const pl_xt *y, const pl_xt *dy, pl_xt *din)
{
	int64_t R = k->rank;
	crank *r = rk(b, R);
	const pl_xt *x = &in[0], *lab = &in[1];
	int64_t cl, c0, np;
	double positions = pl_kernel_sce_dims(k, x, &cl, &c0, &np);
	float *lse = k->saved->v;
	if (din) {
		if (!din[0].v)
			return 0;
		return cuda_ok(b, R,
		               (cudaError_t)plk_sce_grad(r->s, x->v, lab->v, lse, dy->v, din[0].v,
		                                         np, cl, c0, positions),
		               "SoftmaxCrossEntropy");
	}
	float *mx = NULL;
	if (cuda_ok(b, R,
	            cudaMallocAsync((void **)&mx, sizeof(float) * 3 * (size_t)(np ? np : 1), r->s),
	            "SoftmaxCrossEntropy"))
		return -1;
	float *st = mx + np;
	int rc =
	    cuda_ok(b, R, (cudaError_t)plk_sce_max(r->s, x->v, mx, np, cl), "SoftmaxCrossEntropy");
	if (!rc && k->class_allreduce)
		rc = k->class_allreduce(k->ud, mx, (size_t)np, 1);
	if (!rc)
		rc = cuda_ok(b, R, (cudaError_t)plk_sce_sum(r->s, x->v, lab->v, mx, st, np, cl, c0),
		             "SoftmaxCrossEntropy");
	if (!rc && k->class_allreduce)
		rc = k->class_allreduce(k->ud, st, 2 * (size_t)np, 0);
	if (!rc)
		rc = cuda_ok(b, R,
		             (cudaError_t)plk_sce_loss(r->s, mx, st, lse, y->v, np, positions,
		                                       k->loss_share),
		             "SoftmaxCrossEntropy");
	cudaFreeAsync(mx, r->s);
	return rc;
}

static int reduce(pl_backend *b, pl_kctx *k, const pl_xt *x, const pl_xt *y, const pl_xt *dy,
                  pl_xt *dx)
{
	int64_t ost[PL_MAX_RANK];
	double scale = pl_kernel_reduce_map(k, x, ost);
	plk_shape xs;
	shape_of(x, &xs);
	crank *r = rk(b, k->rank);
	return cuda_ok(b, k->rank,
	               (cudaError_t)plk_reduce(r->s, x->v, dx ? NULL : y->v, dx ? dy->v : NULL,
	                                       dx ? dx->v : NULL, &xs, ost, dx ? 0 : y->n, scale),
	               "a reduction");
}

/* MoE on the host: the pieces copied out, kernels.c's kernel, the results back */
/* A host kernel's collective: its host buffer through a device one */
typedef struct host_coll {
	pl_backend *b;
	int64_t rank;
	int (*allreduce)(void *ud, float *buf, size_t n, int max);
	void *ud;
} host_coll;

static int host_allreduce(void *ud, float *buf, size_t n, int max)
{
	host_coll *h = ud;
	float *d = cu_alloc(h->b, h->rank, n);
	int rc = !d || cu_upload(h->b, h->rank, d, buf, n) || h->allreduce(h->ud, d, n, max) ||
	                 cu_download(h->b, h->rank, buf, d, n)
	             ? -1
	             : 0;
	cu_release(h->b, h->rank, d);
	return rc;
}

static int host_kernel(pl_backend *b, pl_kctx *k, pl_xt *in, const pl_xt *out, const pl_xt *dout,
                       pl_xt *din)
{
	int64_t R = k->rank;
	int nin = k->op->ninputs, rc = -1;
	pl_xt hin[PL_MAX_OP_INPUTS], hout = *out, hdout = {0}, hdin[PL_MAX_OP_INPUTS], hsaved = {0};
	memset(hin, 0, sizeof hin);
	memset(hdin, 0, sizeof hdin);
	hout.v = NULL;
	for (int i = 0; i < nin; i++) {
		hin[i] = in[i];
		hin[i].v = pl_malloc(sizeof(float) * (in[i].n ? in[i].n : 1));
		if (!hin[i].v || cu_download(b, R, hin[i].v, in[i].v, in[i].n))
			goto out;
		if (din) {
			hdin[i] = din[i];
			hdin[i].v = NULL;
			if (din[i].v &&
			    !(hdin[i].v = pl_malloc(sizeof(float) * (din[i].n ? din[i].n : 1))))
				goto out;
		}
	}
	if (!(hout.v = pl_malloc(sizeof(float) * (out->n ? out->n : 1))))
		goto out;
	if (din) {
		hdout = *dout;
		if (!(hdout.v = pl_malloc(sizeof(float) * (dout->n ? dout->n : 1))) ||
		    cu_download(b, R, hout.v, out->v, out->n) ||
		    cu_download(b, R, hdout.v, dout->v, dout->n))
			goto out;
	}
	pl_kctx hk = *k;
	hk.gemm = pl_cpu_gemm;
	host_coll hc = {b, R, k->class_allreduce, k->ud};
	if (k->class_allreduce) {
		hk.class_allreduce = host_allreduce;
		hk.ud = &hc;
	}
	if (k->saved && k->saved->v) { /* the op's scratch kept from forward to backward */
		hsaved = *k->saved;
		hsaved.n = pl_kernel_saved_elems(k, in); /* (the executor sets .v alone) */
		if (!(hsaved.v = pl_malloc(sizeof(float) * (hsaved.n ? hsaved.n : 1))) ||
		    (din && cu_download(b, R, hsaved.v, k->saved->v, hsaved.n)))
			goto out;
		hk.saved = &hsaved;
	}
	if (din ? pl_kernel_backward(&hk, hin, &hout, &hdout, hdin)
	        : pl_kernel_forward(&hk, hin, &hout))
		goto out;
	rc = 0;
	if (!din)
		rc = cu_upload(b, R, out->v, hout.v, out->n) ||
		     (hsaved.v && cu_upload(b, R, k->saved->v, hsaved.v, hsaved.n));
	for (int i = 0; din && i < nin && !rc; i++)
		if (din[i].v)
			rc = cu_upload(b, R, din[i].v, hdin[i].v, din[i].n);
out:
	for (int i = 0; i < nin; i++) {
		free(hin[i].v);
		free(hdin[i].v);
	}
	free(hout.v);
	free(hdout.v);
	free(hsaved.v);
	return rc;
}

/* The element-wise ops plk_elementwise computes: one kernel (Dropout's mask
 * a function of the element's global index) */
static int unary(pl_backend *b, pl_kctx *k, pl_xt *in, const pl_xt *out, const pl_xt *dout,
                 pl_xt *din)
{
	const pl_op *op = k->op;
	crank *r = rk(b, k->rank);
	if (din && !din[0].v)
		return 0;
	int kind = pl_kernel_unary_kind(op);
	plk_dropout dr;
	memset(&dr, 0, sizeof dr);
	if (kind == PLK_DROPOUT) {
		const pl_tensor *t = &k->g->tensors[op->out[0]];
		dr.seed = k->seed;
		dr.op = (int)(op - k->g->ops);
		dr.ratio = op->attrs->ratio;
		shape_of(&in[0], &dr.local);
		dr.global.rank = t->rank;
		memcpy(dr.global.s, t->shape, sizeof(int64_t) * (size_t)t->rank);
		memcpy(dr.off, k->out_off, sizeof dr.off);
	}
	return cuda_ok(b, k->rank,
	               (cudaError_t)plk_unary(r->s, kind, in[0].v, din ? NULL : out->v,
	                                      din ? dout->v : NULL, din ? din[0].v : NULL, in[0].n,
	                                      &dr),
	               op->name);
}

/* Long on purpose: one case per operator type of the cuda
 * backend (a kernel launch each, or the host kernel), the switch without a
 * default so that the compiler names a type left out. */
static int run(pl_backend *b, pl_kctx *k, pl_xt *in, const pl_xt *out, const pl_xt *dout,
               pl_xt *din)
{
	int64_t R = k->rank;
	crank *r = rk(b, R);
	const pl_op *op = k->op;
	cudaError_t e = cudaSuccess;
	switch (op->type) {
	case PL_OP_MATMUL:
		return matmul(b, k, in, (pl_xt *)out, dout, din);
	PL_CASES_BINARY : {
		const pl_xt *ref = din ? dout : out;
		int64_t sa[PL_MAX_RANK], sb[PL_MAX_RANK];
		pl_kernel_bcast_strides(&in[0], ref, sa);
		pl_kernel_bcast_strides(&in[1], ref, sb);
		plk_shape os;
		shape_of(ref, &os);
		if (din && (zero(b, R, &din[0]) || zero(b, R, &din[1])))
			return -1;
		e = plk_binary(r->s, pl_kernel_binary_kind(op->type), in[0].v, in[1].v,
		               din ? NULL : out->v, din ? dout->v : NULL, din ? din[0].v : NULL,
		               din ? din[1].v : NULL, &os, sa, sb);
		break;
	}
	case PL_OP_SOFTMAX: {
		if (din && !din[0].v)
			return 0;
		int64_t outer, n, inner;
		pl_kernel_split3(&in[0], pl_kernel_axis(op, in[0].rank, -1), &outer, &n, &inner);
		e = plk_softmax(r->s, in[0].v, out->v, din ? dout->v : NULL, din ? din[0].v : NULL,
		                outer, n, inner);
		break;
	}
	case PL_OP_LAYERNORM:
	case PL_OP_RMSNORM: {
		const pl_xt *x = &in[0];
		int has_b = op->ninputs > 2;
		int64_t axis = pl_kernel_axis(op, x->rank, -1), rows = 1, cols = 1;
		for (int d = 0; d < x->rank; d++)
			*(d < axis ? &rows : &cols) *= x->shape[d];
		if (din && (zero(b, R, &din[1]) || (has_b && zero(b, R, &din[2]))))
			return -1;
		e = plk_norm(r->s, op->type == PL_OP_RMSNORM, x->v, in[1].v, has_b ? in[2].v : NULL,
		             din ? NULL : out->v, din ? dout->v : NULL, din ? din[0].v : NULL,
		             din ? din[1].v : NULL, din && has_b ? din[2].v : NULL, rows, cols,
		             op->attrs->epsilon);
		break;
	}
	case PL_OP_GATHER: {
		const pl_xt *x = &in[0];
		int64_t axis = pl_kernel_axis(op, x->rank, 0), pre, vl, post;
		pl_kernel_split3(x, axis, &pre, &vl, &post);
		if (din && (!din[0].v || zero(b, R, &din[0])))
			return din[0].v ? -1 : 0;
		e = plk_gather(r->s, x->v, in[1].v, din ? NULL : out->v, din ? dout->v : NULL,
		               din ? din[0].v : NULL, pre, vl, post, (int64_t)in[1].n,
		               k->in_off[0][axis], k->g->tensors[op->in[0]].shape[axis]);
		break;
	}
	case PL_OP_TRANSPOSE: {
		if (din && !din[0].v)
			return 0;
		int64_t st[PL_MAX_RANK], src[PL_MAX_RANK];
		int n = in[0].rank;
		pl_kernel_row_strides(&in[0], st);
		for (int d = 0; d < n; d++)
			src[d] = st[op->attrs->nperm ? op->attrs->perm[d] : n - 1 - d];
		plk_shape os;
		shape_of(din ? dout : out, &os);
		e = plk_transpose(r->s, in[0].v, din ? NULL : out->v, din ? dout->v : NULL,
		                  din ? din[0].v : NULL, &os, src);
		break;
	}
	case PL_OP_REDUCESUM:
	case PL_OP_REDUCEMEAN:
		if (din && !din[0].v)
			return 0;
		return reduce(b, k, &in[0], out, dout, din ? &din[0] : NULL);
	case PL_OP_SCE: return sce(b, k, in, out, dout, din);
	case PL_OP_MOE_DISPATCH:
	case PL_OP_MOE_COMBINE:
	/* on the host for now: a copy each way around the cpu backend's kernel
	 * (correct, and slow; docs/benchmarks.md) */
	case PL_OP_CONV:
	case PL_OP_CONVTRANSPOSE:
	case PL_OP_ATTENTION:
	case PL_OP_RNN:
	case PL_OP_GRU:
	case PL_OP_LSTM:
	case PL_OP_CUMSUM:
	case PL_OP_REDUCEMAX:
	case PL_OP_REDUCEMIN:
	case PL_OP_REDUCEPROD:
	case PL_OP_ARGMAX:
	case PL_OP_ARGMIN:
	case PL_OP_TOPK:
	case PL_OP_ONEHOT:
	case PL_OP_GATHERELEMENTS:
	case PL_OP_GRIDSAMPLE:
	case PL_OP_PAD:
	case PL_OP_MAXPOOL:
	case PL_OP_AVGPOOL:
	case PL_OP_BATCHNORM:
	case PL_OP_EXPAND:
	case PL_OP_CONCAT:
	case PL_OP_SLICE:
	case PL_OP_HARDSIGMOID:
	case PL_OP_HARDSWISH:
	case PL_OP_RESIZE:
	case PL_OP_WHERE:
	case PL_OP_POW:
	case PL_OP_LEAKYRELU:
	case PL_OP_ELU:
	case PL_OP_SELU:
	case PL_OP_CELU:
	case PL_OP_CLIP: return host_kernel(b, k, in, out, dout, din);
	case PL_OP_RESHAPE: /* the local pieces keep their element order */
		if (din)
			return din[0].v ? cu_copy(b, R, din[0].v, din[0].n, dout->v, din[0].n,
			                          din[0].n, 1)
			                : 0;
		return cu_copy(b, R, out->v, out->n, in[0].v, out->n, out->n, 1);
	case PL_OP_COUNT:
		return -1; /* no kernel */
	PL_CASES_UNARY_MATH:
		return unary(b, k, in, out, dout, din);
	}
	return cuda_ok(b, R, e, op->name);
}

static int cu_forward(pl_backend *b, pl_kctx *k, pl_xt *in, pl_xt *out)
{
	return run(b, k, in, out, NULL, NULL);
}

static int cu_backward(pl_backend *b, pl_kctx *k, pl_xt *in, const pl_xt *out, const pl_xt *dout,
                       pl_xt *din)
{
	return run(b, k, in, out, dout, din);
}

/* ---- ranks ---- */

static int rank_enter(pl_backend *b, int64_t rank)
{
	rk(b, rank);
	return 0;
}

/* the rank's queued work is part of its step */
static int rank_leave(pl_backend *b, int64_t rank)
{
	return wait_rank(b, rank, NULL, "the step's kernels");
}

static int cu_launch(pl_backend *b, int (*fn)(void *, int64_t), void *arg, char *msg, size_t msglen)
{
	cuda *c = b->impl;
	if (c->procs) { /* this process's rank; a failure stops every process */
		rank_enter(b, b->self);
		int bad = fn(arg, b->self);
		if (rank_leave(b, b->self) || bad)
			cu_fail(b, b->self, "the step failed");
		return 0;
	}
	return pl_ranks_launch(&c->rk, b, fn, arg, rank_enter, rank_leave, msg, msglen);
}

static int cu_sum_host(pl_backend *b, double *buf, size_t n)
{
	cuda *c = b->impl;
	return c->pr.sum_host(c->pr.ud, buf, n);
}

static void cu_drop_comm(void *b, void *obj)
{
	pl_comm *cm = obj;
	/* finalize (flush what is in flight) every member's communicator at
	 * once, as one thread must for a group it drives, then destroy; one
	 * that failed was aborted and is NULL here */
	if (ncclGroupStart() == ncclSuccess) {
		for (int k = 0; k < cm->n; k++)
			if (cm->nc[k]) {
				rk(b, cm->members[k]);
				ncclCommFinalize(cm->nc[k]);
			}
		ncclGroupEnd();
	}
	for (int k = 0; k < cm->n; k++)
		if (cm->nc[k]) {
			rk(b, cm->members[k]);
			ncclCommDestroy(cm->nc[k]);
		}
	free(cm->nc);
	free(cm);
}

static void cu_destroy(pl_backend *b)
{
	if (!b)
		return;
	cuda *c = b->impl;
	pl_ranks_destroy(&c->rk, cu_drop_comm, b);
	for (int64_t r = 0; c->r && r < (c->procs ? 1 : b->nranks); r++) {
		crank *cr = &c->r[r];
		cudaSetDevice(device_of(c, r)); /* (as it was made; nothing to report) */
		if (cr->h)
			cublasDestroy(cr->h);
		if (cr->s)
			cudaStreamDestroy(cr->s);
	}
	free(c->r);
	free(c);
	free(b);
}

/* The backend of nranks ranks, threads of this process on GPUs 0..nranks-1,
 * or (pr) of one rank, this process's, on GPU pr->device */
static pl_status start(pl_backend **out, int64_t nranks, const pl_procs *pr, double timeout_s,
                       pl_err *err)
{
	*out = NULL;
	int ndev = 0;
	cudaError_t e = cudaGetDeviceCount(&ndev);
	if (e != cudaSuccess || ndev == 0)
		return pl_err_set(err, PL_EDEVICE, "the cuda backend found no GPU (%s)",
		                  e != cudaSuccess ? cudaGetErrorString(e) : "no CUDA devices");
	if (!pr && (nranks < 1 || nranks > ndev))
		return pl_err_set(
		    err, PL_EDEVICE,
		    "the plan needs %lld ranks, one GPU each; this machine has %d GPU%s",
		    (long long)nranks, ndev, ndev == 1 ? "" : "s");
	pl_procs here;
	if (pr) { /* a process that sees one GPU (Slurm's --gpus-per-task) runs on it */
		here = *pr;
		here.device = pr->device < ndev ? pr->device : ndev == 1 ? 0 : -1;
		if (here.device < 0)
			return pl_err_set(
			    err, PL_EDEVICE,
			    "rank %lld: its node runs more ranks than it has GPUs (%d); "
			    "start one process per GPU",
			    (long long)pr->self, ndev);
		pr = &here;
	}
	int64_t slots = pr ? 1 : nranks;
	pl_backend *b = pl_calloc(1, sizeof *b);
	cuda *c = pl_calloc(1, sizeof *c);
	if (!b || !c || !(c->r = pl_calloc((size_t)slots, sizeof *c->r))) {
		free(b);
		if (c)
			free(c->r);
		free(c);
		return pl_err_set(err, PL_ENOMEM, "out of memory");
	}
	pl_ranks_init(&c->rk);
	c->timeout_s = timeout_s > 0 ? timeout_s : 60;
	if (pr) {
		c->procs = 1;
		c->pr = *pr;
	}
	*b = (pl_backend){.name = pr ? "cuda (MPI processes)" : "cuda",
	                  .caps = pr ? 0 : PL_CAP_THREAD_RANKS,
	                  .nranks = pr ? pr->nranks : nranks,
	                  .self = pr ? pr->self : -1,
	                  .impl = c,
	                  .launch = cu_launch,
	                  .alloc = cu_alloc,
	                  .release = cu_release,
	                  .copy = cu_copy,
	                  .fill = cu_fill,
	                  .add = cu_add,
	                  .update = cu_update,
	                  .upload = cu_upload,
	                  .download = cu_download,
	                  .forward = cu_forward,
	                  .backward = cu_backward,
	                  .comm = cu_comm,
	                  .all_reduce = cu_all_reduce,
	                  .all_gather = cu_all_gather,
	                  .reduce_scatter = cu_reduce_scatter,
	                  .all_to_all = cu_all_to_all,
	                  .fail = cu_fail,
	                  .failed = cu_failed,
	                  .sum_host = pr ? cu_sum_host : NULL,
	                  .wait = cu_wait,
	                  .destroy = cu_destroy};
	for (int64_t k = 0; k < slots; k++) {
		crank *cr = &c->r[k];
		int dev = pr ? pr->device : (int)k;
		const char *what = NULL;
		if (cudaSetDevice(dev) != cudaSuccess)
			what = "selecting the GPU";
		else if (cudaStreamCreateWithFlags(&cr->s, cudaStreamNonBlocking) != cudaSuccess)
			what = "creating a stream";
		else if (keep_pool(dev))
			what = "setting up its memory pool";
		else if (cublasCreate(&cr->h) != CUBLAS_STATUS_SUCCESS ||
		         cublasSetStream(cr->h, cr->s) != CUBLAS_STATUS_SUCCESS)
			what = "starting cuBLAS";
		if (what) {
			cu_destroy(b);
			return pl_err_set(err, PL_EDEVICE, "the cuda backend: GPU %d: %s failed",
			                  dev, what);
		}
	}
	*out = b;
	return PL_OK;
}

pl_status pl_backend_cuda(pl_backend **out, int64_t nranks, double timeout_s, pl_err *err)
{
	return start(out, nranks, NULL, timeout_s, err);
}

pl_status pl_backend_cuda_procs(pl_backend **out, const pl_procs *pr, double timeout_s, pl_err *err)
{
	return start(out, 0, pr, timeout_s, err);
}
