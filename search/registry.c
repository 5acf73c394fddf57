/* The table of searchers behind `--mode`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search/search.h"
#include "costmodel/pipeline.h"
#include "graph/alloc.h"

static const pl_searcher searchers[] = {
    {/* .name = */ "dp", /* .run = */ pl_search_dp},
    {/* .name = */ "brute", /* .run = */ pl_search_brute},
    {/* .name = */ "rec", /* .run = */ pl_search_rec},
    {/* .name = */ "propagate", /* .run = */ pl_search_propagate},
    {/* .name = */ "ilp", /* .run = */ pl_search_ilp},
    {/* .name = */ "auto", /* .run = */ pl_search_auto},
};

const pl_searcher *pl_searcher_get(const char *mode)
{
	for (size_t i = 0; i < sizeof searchers / sizeof *searchers; i++)
		if (!strcmp(searchers[i].name, mode))
			return &searchers[i];
	return NULL;
}

const char *pl_searcher_names(char *buf, size_t n)
{
	size_t at = 0;
	if (n)
		buf[0] = 0;
	for (size_t i = 0; i < sizeof searchers / sizeof *searchers && at < n; i++)
		at += (size_t)snprintf(buf + at, n - at, "%s%s", i ? ", " : "", searchers[i].name);
	return buf;
}

void pl_search_result_free(pl_search_result *r)
{
	if (r) {
		free(r->choice);
		free(r->splits);
		free(r->conflicts);
		r->choice = NULL;
		r->splits = NULL;
		r->conflicts = NULL;
	}
}

pl_status pl_search_err_no_fit(pl_err *err, double limit, double least)
{
	if (least <= limit) /* the transient bytes, or a solver's tolerances */
		return pl_err_set(
		    err, PL_EINFEASIBLE,
		    "no plan fits the memory limit of %.0f bytes per device: the least memory "
		    "any plan needs for its weights, optimizer states and kept activations is "
		    "%.0f bytes, and none fits with its transient bytes beside them "
		    "(gradients and workspace at their most in the backward)",
		    limit, least);
	return pl_err_set(
	    err, PL_EINFEASIBLE,
	    "no plan fits the memory limit of %.0f bytes per device: the least memory "
	    "any plan needs is %.0f bytes (%.1f%% more)",
	    limit, least, 100.0 * (least - limit) / limit);
}

pl_status pl_search_err_over_limit(pl_err *err, const char *whose, double need, double limit,
                                   const char *instead)
{
	return pl_err_set(
	    err, PL_EINFEASIBLE,
	    "%s needs %.0f bytes per device, over the limit of %.0f (%.1f%% more); %s", whose, need,
	    limit, 100.0 * (need - limit) / limit, instead);
}

const int64_t *pl_search_result_split(const pl_problem *p, const pl_search_result *r, int o)
{
	if (r->splits)
		return r->splits + (size_t)o * PL_MAX_LOOPS;
	return p->strat[o] + (size_t)r->choice[o] * (size_t)p->g->ops[o].spec.nloops;
}

/* the result's plan as per-op split pointers (into r or the candidates),
 * NULL out of memory; the caller frees the array */
static int64_t **result_splits(const pl_problem *p, const pl_search_result *r)
{
	int64_t **sp = pl_malloc(sizeof *sp * ((size_t)p->nops + 1));
	for (int o = 0; sp && o < p->nops; o++)
		sp[o] = (int64_t *)pl_search_result_split(p, r, o);
	return sp;
}

double pl_search_result_transient(const pl_problem *p, const pl_search_result *r)
{
	int64_t **sp = result_splits(p, r);
	pl_membreak mb;
	double t = !sp || pl_job_memory(p, sp, NULL, &mb, NULL) ? -1 : mb.transient;
	free(sp);
	return t;
}

int pl_search_result_price(const pl_problem *p, pl_search_result *r)
{
	int64_t **splits = result_splits(p, r);
	if (!splits)
		return -1;
	pl_plancost pc;
	pl_cost_plan(p, splits, &pc, NULL);
	r->step_s = pc.step_s;
	r->mem_bytes = pc.mem_bytes;
	free(splits);
	return 0;
}
