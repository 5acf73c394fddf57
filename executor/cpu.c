/* The cpu backend: ranks are threads; a collective publishes each member's
 * buffer in the group's slots, waits for the group, reads what it needs and
 * waits again before anyone reuses a buffer. Waits poll a failure flag, so
 * one failing rank stops the others instead of hanging them. */
#include "executor/backend_impl.h"
#include "executor/ranks.h"

#include <cblas.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "graph/clock.h"
#include "graph/alloc.h"

struct pl_comm {
	pl_backend *b;
	int n;
	const int64_t *members; /* the group registry's copy */
	const float **slot;
	float *red; /* all_reduce: the shared result */
	size_t rcap;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int arrived;
	unsigned gen;
};

typedef struct cpu {
	pl_ranks rk; /* failures and the communicators */
	double timeout_s;
} cpu;

void pl_cpu_gemm(int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha, const float *a,
                 int64_t lda, const float *b, int64_t ldb, float beta, float *c, int64_t ldc)
{
	cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
	            (blasint)m, (blasint)n, (blasint)k, alpha, a, (blasint)lda, b, (blasint)ldb,
	            beta, c, (blasint)ldc);
}

static void cpu_fail(pl_backend *b, int64_t rank, const char *msg)
{
	pl_ranks_fail(&((cpu *)b->impl)->rk, rank, msg);
}

static int cpu_failed(pl_backend *b)
{
	return pl_ranks_failed(&((cpu *)b->impl)->rk);
}

/* group barrier; -1 if the run failed or the group did not arrive in time */
static int barrier(pl_comm *cm, int idx)
{
	cpu *c = cm->b->impl;
	pthread_mutex_lock(&cm->mu);
	unsigned gen = cm->gen;
	if (++cm->arrived == cm->n) {
		cm->arrived = 0;
		cm->gen++;
		pthread_cond_broadcast(&cm->cv);
		pthread_mutex_unlock(&cm->mu);
		return pl_ranks_failed(&c->rk) ? -1 : 0;
	}
	double t0 = pl_now();
	while (gen == cm->gen) {
		if (pl_ranks_failed(&c->rk)) {
			pthread_mutex_unlock(&cm->mu);
			return -1;
		}
		if (pl_now() - t0 > c->timeout_s) {
			pthread_mutex_unlock(&cm->mu);
			char m[160];
			snprintf(m, sizeof m,
			         "a collective over %d ranks waited %.0f s for the others "
			         "(member %d)",
			         cm->n, c->timeout_s, idx);
			cpu_fail(cm->b, cm->members[idx], m);
			return -1;
		}
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 20 * 1000 * 1000;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&cm->cv, &cm->mu, &ts);
	}
	pthread_mutex_unlock(&cm->mu);
	return pl_ranks_failed(&c->rk) ? -1 : 0;
}

static void *cpu_make_comm(void *b, const int64_t *members, int n)
{
	pl_comm *cm = pl_calloc(1, sizeof *cm);
	if (!cm || !(cm->slot = pl_calloc((size_t)n, sizeof *cm->slot))) {
		free(cm);
		return NULL;
	}
	cm->b = b;
	cm->n = n;
	cm->members = members;
	pthread_mutex_init(&cm->mu, NULL);
	pthread_cond_init(&cm->cv, NULL);
	return cm;
}

static pl_comm *cpu_comm(pl_backend *b, int64_t rank, const int64_t *members, int n)
{
	(void)rank;
	return pl_ranks_group(&((cpu *)b->impl)->rk, members, n, cpu_make_comm, b);
}

static int cpu_all_reduce(pl_comm *cm, int idx, float *buf, size_t count, int max)
{
	if (cm->n == 1)
		return 0;
	size_t cap = cm->rcap; /* stable: it only changes after everyone has arrived */
	cm->slot[idx] = buf;
	if (barrier(cm, idx))
		return -1;
	if (cap < count) { /* member 0 grows the shared result while the others wait */
		if (idx == 0) {
			float *nb = pl_realloc(cm->red, sizeof(float) * count);
			if (nb) {
				cm->red = nb;
				cm->rcap = count;
			} else {
				cpu_fail(cm->b, cm->members[idx], "out of memory in all_reduce");
			}
		}
		if (barrier(cm, idx))
			return -1;
	}
	/* member idx reduces chunk idx in member order, so all get the same bits */
	size_t per = (count + (size_t)cm->n - 1) / (size_t)cm->n, lo = (size_t)idx * per;
	size_t hi = lo + per < count ? lo + per : count;
	for (size_t e = lo; e < hi; e++) {
		float s = cm->slot[0][e];
		for (int k = 1; k < cm->n; k++)
			s = max ? (cm->slot[k][e] > s ? cm->slot[k][e] : s) : s + cm->slot[k][e];
		cm->red[e] = s;
	}
	if (barrier(cm, idx))
		return -1;
	memcpy(buf, cm->red, sizeof(float) * count);
	return 0;
}

static int cpu_all_gather(pl_comm *cm, int idx, const float *send, float *recv, size_t count)
{
	cm->slot[idx] = send;
	if (barrier(cm, idx))
		return -1;
	for (int k = 0; k < cm->n; k++)
		memcpy(recv + (size_t)k * count, cm->slot[k], sizeof(float) * count);
	return barrier(cm, idx);
}

static int cpu_reduce_scatter(pl_comm *cm, int idx, const float *send, float *recv, size_t count)
{
	cm->slot[idx] = send;
	if (barrier(cm, idx))
		return -1;
	size_t off = (size_t)idx * count;
	for (size_t e = 0; e < count; e++) {
		float s = cm->slot[0][off + e];
		for (int k = 1; k < cm->n; k++)
			s += cm->slot[k][off + e];
		recv[e] = s;
	}
	return barrier(cm, idx);
}

static int cpu_all_to_all(pl_comm *cm, int idx, const float *send, float *recv, size_t count)
{
	cm->slot[idx] = send;
	if (barrier(cm, idx))
		return -1;
	for (int k = 0; k < cm->n; k++)
		memcpy(recv + (size_t)k * count, cm->slot[k] + (size_t)idx * count,
		       sizeof(float) * count);
	return barrier(cm, idx);
}

static float *cpu_alloc(pl_backend *b, int64_t rank, size_t elems)
{
	(void)b, (void)rank;
	return pl_calloc(elems ? elems : 1, sizeof(float));
}

static void cpu_release(pl_backend *b, int64_t rank, float *p)
{
	(void)b, (void)rank;
	free(p);
}

static int cpu_copy(pl_backend *b, int64_t rank, float *dst, size_t dpitch, const float *src,
                    size_t spitch, size_t width, size_t rows)
{
	(void)b, (void)rank;
	for (size_t r = 0; r < rows; r++)
		memcpy(dst + r * dpitch, src + r * spitch, sizeof(float) * width);
	return 0;
}

static int cpu_fill(pl_backend *b, int64_t rank, float *p, size_t n, float value)
{
	(void)b, (void)rank;
	if (value == 0) {
		memset(p, 0, sizeof(float) * n);
		return 0;
	}
	for (size_t e = 0; e < n; e++)
		p[e] = value;
	return 0;
}

static int cpu_add(pl_backend *b, int64_t rank, float *y, const float *x, size_t n)
{
	(void)b, (void)rank;
	for (size_t e = 0; e < n; e++)
		y[e] += x[e];
	return 0;
}

static int cpu_update(pl_backend *b, int64_t rank, const pl_update *u, float *w, const float *g,
                      float *m, float *v, size_t n)
{
	(void)b, (void)rank;
	for (size_t e = 0; e < n; e++) {
		double gv = u->grad_scale * g[e];
		if (!u->adam) {
			w[e] -= (float)(u->lr * gv);
			continue;
		}
		m[e] = (float)(u->b1 * m[e] + (1 - u->b1) * gv);
		v[e] = (float)(u->b2 * v[e] + (1 - u->b2) * gv * gv);
		w[e] -= (float)(u->lr * (m[e] / u->c1) / (sqrt(v[e] / u->c2) + u->eps));
	}
	return 0;
}

static int cpu_move(pl_backend *b, int64_t rank, float *dst, const float *src, size_t n)
{
	(void)b, (void)rank;
	memcpy(dst, src, sizeof(float) * n);
	return 0;
}

static int cpu_forward(pl_backend *b, pl_kctx *k, pl_xt *in, pl_xt *out)
{
	k->gemm = b->gemm;
	return pl_kernel_forward(k, in, out);
}

static int cpu_backward(pl_backend *b, pl_kctx *k, pl_xt *in, const pl_xt *out, const pl_xt *dout,
                        pl_xt *din)
{
	k->gemm = b->gemm;
	return pl_kernel_backward(k, in, out, dout, din);
}

static int cpu_launch(pl_backend *b, int (*fn)(void *, int64_t), void *arg, char *msg,
                      size_t msglen)
{
	/* ranks share the cores: keep OpenBLAS single-threaded inside each */
	openblas_set_num_threads(1);
	return pl_ranks_launch(&((cpu *)b->impl)->rk, b, fn, arg, NULL, NULL, msg, msglen);
}

static void cpu_drop_comm(void *ud, void *obj)
{
	pl_comm *cm = obj;
	(void)ud;
	pthread_mutex_destroy(&cm->mu);
	pthread_cond_destroy(&cm->cv);
	free(cm->slot);
	free(cm->red);
	free(cm);
}

static void cpu_destroy(pl_backend *b)
{
	if (!b)
		return;
	cpu *c = b->impl;
	pl_ranks_destroy(&c->rk, cpu_drop_comm, NULL);
	free(c);
	free(b);
}

pl_status pl_backend_cpu(pl_backend **out, int64_t nranks, double timeout_s, pl_err *err)
{
	*out = NULL;
	if (nranks < 1 || nranks > PL_MAX_THREAD_RANKS)
		return pl_err_set(err, PL_EINVAL,
		                  "the cpu backend runs 1 to %d ranks as threads of one process, "
		                  "not %lld (start one process per rank with an MPI launcher: "
		                  "mpirun -np %lld planner run ...)",
		                  PL_MAX_THREAD_RANKS, (long long)nranks, (long long)nranks);
	pl_backend *b = pl_calloc(1, sizeof *b);
	cpu *c = pl_calloc(1, sizeof *c);
	if (!b || !c) {
		free(b);
		free(c);
		return pl_err_set(err, PL_ENOMEM, "out of memory");
	}
	pl_ranks_init(&c->rk);
	c->timeout_s = timeout_s > 0 ? timeout_s : 60;
	*b = (pl_backend){.name = "cpu",
	                  .caps = PL_CAP_HOST_MEMORY | PL_CAP_THREAD_RANKS,
	                  .nranks = nranks,
	                  .self = -1,
	                  .impl = c,
	                  .launch = cpu_launch,
	                  .alloc = cpu_alloc,
	                  .release = cpu_release,
	                  .copy = cpu_copy,
	                  .fill = cpu_fill,
	                  .add = cpu_add,
	                  .update = cpu_update,
	                  .upload = cpu_move,
	                  .download = cpu_move,
	                  .forward = cpu_forward,
	                  .backward = cpu_backward,
	                  .comm = cpu_comm,
	                  .all_reduce = cpu_all_reduce,
	                  .all_gather = cpu_all_gather,
	                  .reduce_scatter = cpu_reduce_scatter,
	                  .all_to_all = cpu_all_to_all,
	                  .gemm = pl_cpu_gemm,
	                  .fail = cpu_fail,
	                  .failed = cpu_failed,
	                  .destroy = cpu_destroy};
	*out = b;
	return PL_OK;
}
