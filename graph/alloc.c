/* The allocation hook and its fault injection (graph/alloc.h). Without
 * PL_FAIL_ALLOC it is the C library's allocator behind one branch. */
#include "graph/alloc.h"

#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OFF, NTH, SITE };
static int mode = OFF;
static long target;       /* N, or K */
static atomic_long calls; /* allocations so far (NTH) */
static atomic_int failed; /* the one failure has happened */
static pthread_mutex_t sites_lock = PTHREAD_MUTEX_INITIALIZER;
#define SITES 8192 /* distinct call sites remembered (a power of 2) */
static uintptr_t site[SITES];
static long nsites;

/* site mode: how many sites the run reached, for the test to know when it
 * has failed every one */
static void report_sites(void)
{
	fprintf(stderr, "pl_alloc: %ld allocation sites, %s\n", nsites,
	        atomic_load(&failed) ? "one failed" : "none failed");
}

void pl_alloc_init(void)
{
	static int done;
	if (done)
		return;
	done = 1;
	cJSON_Hooks h = {pl_malloc, pl_free};
	cJSON_InitHooks(&h);
	const char *e = getenv("PL_FAIL_ALLOC");
	if (!e || !*e)
		return;
	char *end;
	int s = !strncmp(e, "site:", 5);
	long v = strtol(s ? e + 5 : e, &end, 10);
	if (*end || v < 1)
		return;
	mode = s ? SITE : NTH;
	target = v;
	if (mode == SITE)
		atexit(report_sites);
}

static atomic_ulong nulls;

unsigned long pl_alloc_null_count(void)
{
	return atomic_load(&nulls);
}

static void *counted(void *p)
{
	if (!p)
		atomic_fetch_add(&nulls, 1);
	return p;
}

/* Whether this allocation, from return address ra, is the one to fail. */
static int inject(uintptr_t ra)
{
	if (mode == OFF || atomic_load(&failed))
		return 0;
	int fail = 0;
	if (mode == NTH) {
		fail = atomic_fetch_add(&calls, 1) + 1 == target;
	} else {
		pthread_mutex_lock(&sites_lock);
		size_t h = (size_t)(ra * 0x9E3779B97F4A7C15u) & (SITES - 1);
		while (site[h] && site[h] != ra)
			h = (h + 1) & (SITES - 1);
		if (!site[h] && nsites < SITES - 1) {
			site[h] = ra;
			fail = ++nsites == target;
		}
		pthread_mutex_unlock(&sites_lock);
	}
	if (fail)
		atomic_store(&failed, 1);
	return fail;
}

#define CALLER ((uintptr_t)__builtin_return_address(0))

void *pl_malloc(size_t n)
{
	return counted(inject(CALLER) ? NULL : malloc(n));
}

void *pl_calloc(size_t count, size_t size)
{
	return counted(inject(CALLER) ? NULL : calloc(count, size));
}

void *pl_realloc(void *p, size_t n)
{
	return counted(inject(CALLER) ? NULL : realloc(p, n));
}

char *pl_strdup(const char *s)
{
	return counted(inject(CALLER) ? NULL : strdup(s));
}

void pl_free(void *p)
{
	free(p);
}
