/* The cpu backend: ranks are threads; a collective publishes each member's
 * buffer in the group's slots, waits for the group, reads what it needs and
 * waits again before anyone reuses a buffer. Waits poll a failure flag, so
 * one failing rank stops the others instead of hanging them. */
#include "executor/backend.h"

#include <cblas.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "search/ve.h"

struct pl_comm {
	pl_backend *b;
	int n;
	int64_t *members;
	const float **slot;
	float *red; /* all_reduce: the shared result */
	size_t rcap;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int arrived;
	unsigned gen;
	pl_comm *next;
};

typedef struct cpu {
	pthread_mutex_t mu; /* the communicator list and the failure message */
	pl_comm *comms;
	atomic_int failed;
	char msg[512];
	double timeout_s;
} cpu;

static void cpu_gemm(int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha, const float *a,
                     int64_t lda, const float *b, int64_t ldb, float beta, float *c, int64_t ldc)
{
	cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
	            (blasint)m, (blasint)n, (blasint)k, alpha, a, (blasint)lda, b, (blasint)ldb,
	            beta, c, (blasint)ldc);
}

static void cpu_fail(pl_backend *b, int64_t rank, const char *msg)
{
	cpu *c = b->impl;
	pthread_mutex_lock(&c->mu);
	if (!atomic_load(&c->failed)) {
		snprintf(c->msg, sizeof c->msg, "rank %lld: %s", (long long)rank, msg);
		atomic_store(&c->failed, 1);
	}
	pthread_mutex_unlock(&c->mu);
}

static int cpu_failed(pl_backend *b)
{
	return atomic_load(&((cpu *)b->impl)->failed);
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
		return atomic_load(&c->failed) ? -1 : 0;
	}
	double t0 = ve_now();
	while (gen == cm->gen) {
		if (atomic_load(&c->failed)) {
			pthread_mutex_unlock(&cm->mu);
			return -1;
		}
		if (ve_now() - t0 > c->timeout_s) {
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
	return atomic_load(&c->failed) ? -1 : 0;
}

static pl_comm *cpu_comm(pl_backend *b, const int64_t *members, int n)
{
	cpu *c = b->impl;
	pthread_mutex_lock(&c->mu);
	pl_comm *cm = c->comms;
	for (; cm; cm = cm->next)
		if (cm->n == n && !memcmp(cm->members, members, sizeof(int64_t) * (size_t)n))
			break;
	if (!cm && (cm = calloc(1, sizeof *cm))) {
		cm->b = b;
		cm->n = n;
		cm->members = malloc(sizeof(int64_t) * (size_t)n);
		cm->slot = calloc((size_t)n, sizeof *cm->slot);
		if (!cm->members || !cm->slot) {
			free(cm->members);
			free(cm->slot);
			free(cm);
			cm = NULL;
		} else {
			memcpy(cm->members, members, sizeof(int64_t) * (size_t)n);
			pthread_mutex_init(&cm->mu, NULL);
			pthread_cond_init(&cm->cv, NULL);
			cm->next = c->comms;
			c->comms = cm;
		}
	}
	pthread_mutex_unlock(&c->mu);
	return cm;
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
			float *nb = realloc(cm->red, sizeof(float) * count);
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

static float *cpu_alloc(pl_backend *b, size_t elems)
{
	(void)b;
	return calloc(elems ? elems : 1, sizeof(float));
}

static void cpu_release(pl_backend *b, float *p)
{
	(void)b;
	free(p);
}

typedef struct rankarg {
	int (*fn)(void *, int64_t);
	void *arg;
	int64_t rank;
	int rc;
} rankarg;

static void *rank_main(void *p)
{
	rankarg *a = p;
	a->rc = a->fn(a->arg, a->rank);
	return NULL;
}

static int cpu_launch(pl_backend *b, int (*fn)(void *, int64_t), void *arg, char *msg,
                      size_t msglen)
{
	cpu *c = b->impl;
	int64_t n = b->nranks;
	rankarg *ra = calloc((size_t)n, sizeof *ra);
	pthread_t *th = calloc((size_t)n, sizeof *th);
	char *started = calloc((size_t)n, 1);
	if (!ra || !th || !started) {
		free(ra);
		free(th);
		free(started);
		snprintf(msg, msglen, "out of memory starting %lld ranks", (long long)n);
		return -1;
	}
	atomic_store(&c->failed, 0);
	c->msg[0] = 0;
	/* ranks share the cores: keep OpenBLAS single-threaded inside each */
	openblas_set_num_threads(1);
	for (int64_t r = 0; r < n; r++) {
		ra[r] = (rankarg){fn, arg, r, 0};
		if (pthread_create(&th[r], NULL, rank_main, &ra[r]) == 0)
			started[r] = 1;
		else
			cpu_fail(b, r, "cannot start the rank's thread");
	}
	for (int64_t r = 0; r < n; r++)
		if (started[r])
			pthread_join(th[r], NULL);
	int rc = 0;
	for (int64_t r = 0; r < n && !rc; r++)
		if (ra[r].rc || !started[r])
			rc = -1;
	if (rc || atomic_load(&c->failed)) {
		snprintf(msg, msglen, "%s", c->msg[0] ? c->msg : "a rank failed");
		rc = -1;
	}
	free(ra);
	free(th);
	free(started);
	return rc;
}

static void cpu_destroy(pl_backend *b)
{
	if (!b)
		return;
	cpu *c = b->impl;
	for (pl_comm *cm = c->comms, *nx; cm; cm = nx) {
		nx = cm->next;
		pthread_mutex_destroy(&cm->mu);
		pthread_cond_destroy(&cm->cv);
		free(cm->members);
		free(cm->slot);
		free(cm->red);
		free(cm);
	}
	pthread_mutex_destroy(&c->mu);
	free(c);
	free(b);
}

pl_status pl_backend_cpu(pl_backend **out, int64_t nranks, double timeout_s, pl_err *err)
{
	pl_backend *b = calloc(1, sizeof *b);
	cpu *c = calloc(1, sizeof *c);
	if (!b || !c) {
		free(b);
		free(c);
		return pl_err_set(err, PL_ENOMEM, "out of memory");
	}
	pthread_mutex_init(&c->mu, NULL);
	c->timeout_s = timeout_s > 0 ? timeout_s : 60;
	*b = (pl_backend){.name = "cpu",
	                  .caps = PL_CAP_HOST_MEMORY | PL_CAP_THREAD_RANKS,
	                  .nranks = nranks,
	                  .impl = c,
	                  .launch = cpu_launch,
	                  .alloc = cpu_alloc,
	                  .release = cpu_release,
	                  .comm = cpu_comm,
	                  .all_reduce = cpu_all_reduce,
	                  .all_gather = cpu_all_gather,
	                  .reduce_scatter = cpu_reduce_scatter,
	                  .all_to_all = cpu_all_to_all,
	                  .gemm = cpu_gemm,
	                  .fail = cpu_fail,
	                  .failed = cpu_failed,
	                  .destroy = cpu_destroy};
	*out = b;
	return PL_OK;
}
