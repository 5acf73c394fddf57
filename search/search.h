/* Searchers: one interface, one result. A searcher picks one candidate
 * strategy per op (pl_problem) minimizing the predicted step time subject to a
 * per-device memory limit. */
#ifndef PL_SEARCH_H
#define PL_SEARCH_H

#include "costmodel/cost.h"

typedef struct pl_search_opts {
	double memory_limit; /* bytes per device; 0 = none */
	double time_limit_s; /* 0 = none */
	int pareto_cap;      /* points kept per table entry under a memory limit (0: default) */
	int no_repeat;       /* 1: do not compress repeated layers (tests compare both) */
	int threads;         /* for pricing tables; 0: one per online CPU */
	void (*progress)(void *ud, const char *msg);
	void *ud;
} pl_search_opts;

typedef struct pl_search_result {
	int *choice; /* per op: index into the problem's candidates; caller frees */
	double step_s, mem_bytes;
	int optimal;                        /* proven optimal under the cost model */
	char why[256];                      /* why not optimal, or notes */
	double seconds;                     /* search time */
	int repeated_runs, repeated_layers; /* layers solved once and reused */
	double min_mem_bytes;               /* when infeasible: least memory any plan needs */
} pl_search_result;

typedef struct pl_searcher {
	const char *name;
	pl_status (*run)(pl_problem *p, const pl_search_opts *o, pl_search_result *r, pl_err *err);
} pl_searcher;

/* Looks a searcher up by mode name; NULL if unknown. */
const pl_searcher *pl_searcher_get(const char *mode);

pl_status pl_search_dp(pl_problem *p, const pl_search_opts *o, pl_search_result *r, pl_err *err);
pl_status pl_search_brute(pl_problem *p, const pl_search_opts *o, pl_search_result *r, pl_err *err);

void pl_search_result_free(pl_search_result *r);

/* ---- repeated layers (search/repeat.c) ----
 * A run is k >= 2 consecutive segments of identical structure, each joined to
 * the next by exactly one activation tensor. Segment s of run r covers ops
 * [first + s*len, first + (s+1)*len) in topological order; out_pos is the
 * position in a segment of the op producing the tensor that leaves it. */
typedef struct pl_run {
	int first, len, count, out_pos;
} pl_run;

/* Finds runs; returns their number (at most max). */
int pl_find_runs(const pl_graph *g, pl_run *runs, int max);

#endif
