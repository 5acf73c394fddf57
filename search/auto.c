/* auto: picks the searcher per model. dp solves the transformer-shaped graphs
 * of the zoo exactly in well under a second, including binding memory limits,
 * faster than ilp (docs/benchmarks.md), so dp runs first. If dp cannot solve
 * the graph (a table too large, the time limit), rec's plan is returned and
 * the result says so. The checkpoint's search.why records what ran. */
#include <stdio.h>
#include <string.h>

#include "search/search.h"
#include "search/ve.h"

pl_status pl_search_auto(pl_problem *p, const pl_search_opts *o, pl_search_result *r, pl_err *err)
{
	double t0 = ve_now();
	pl_err dperr;
	pl_status st = pl_search_dp(p, o, r, &dperr);
	if (st == PL_OK) {
		char why[sizeof r->why];
		memcpy(why, r->why, sizeof why);
		snprintf(r->why, sizeof r->why, "auto ran dp%s%.200s", why[0] ? ": " : "", why);
		return PL_OK;
	}
	if (st == PL_EINFEASIBLE || st == PL_EINVAL || st == PL_ENOMEM) {
		*err = dperr; /* a fact about the model, not about dp */
		return st;
	}
	/* dp could not finish: rec, in the time that is left */
	pl_search_opts ro = *o;
	if (o->time_limit_s > 0) {
		ro.time_limit_s = o->time_limit_s - (ve_now() - t0);
		if (ro.time_limit_s <= 0)
			ro.time_limit_s = 1e-3;
	}
	st = pl_search_rec(p, &ro, r, err);
	if (st == PL_OK)
		snprintf(r->why, sizeof r->why, "auto fell back to rec because dp failed: %.200s",
		         dperr.msg);
	r->seconds = ve_now() - t0;
	return st;
}
