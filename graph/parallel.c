#include "graph/parallel.h"

#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#define PL_MAX_THREADS 16

int pl_threads(int asked)
{
	if (asked > 0)
		return asked < PL_MAX_THREADS ? asked : PL_MAX_THREADS;
	long c = sysconf(_SC_NPROCESSORS_ONLN);
	return c > 0 ? (int)(c < PL_MAX_THREADS ? c : PL_MAX_THREADS) : 1;
}

typedef struct pfor {
	void (*fn)(void *ctx, int i);
	void *ctx;
	int n;
	atomic_int next;
} pfor;

static void *pfor_worker(void *arg)
{
	pfor *w = arg;
	for (int i; (i = atomic_fetch_add(&w->next, 1)) < w->n;)
		w->fn(w->ctx, i);
	return NULL;
}

void pl_parallel_for(int n, int threads, void (*fn)(void *ctx, int i), void *ctx)
{
	pfor w = {.fn = fn, .ctx = ctx, .n = n};
	atomic_init(&w.next, 0);
	pthread_t tid[PL_MAX_THREADS];
	int t = pl_threads(threads), started = 0;
	for (int k = 1; k < t && k < n; k++)
		if (pthread_create(&tid[started], NULL, pfor_worker, &w) == 0)
			started++;
	pfor_worker(&w);
	for (int k = 0; k < started; k++)
		pthread_join(tid[k], NULL);
}
