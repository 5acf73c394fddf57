/* auto: picks the searcher per model. dp runs first without the memory
 * limit: it solves the transformer-shaped graphs of the zoo exactly in well
 * under a second, and if its plan fits the limit that is the optimum. If the
 * limit binds, ilp runs: its Lagrangian bound and fixing by dp prove GPT-3
 * 1.3B on 64 devices under 7 GiB optimal in about 4 s, where dp's (time,
 * memory) Pareto sets need about a minute for the proof (docs/benchmarks.md).
 * ilp gets half the time limit, or AUTO_ILP_S without one; if it does not
 * prove its plan in that time, dp under the limit runs in the time left and
 * the faster plan is kept. If dp cannot solve the graph (a table too large,
 * the time limit), rec's plan is returned: rec is fast and runs to its end
 * even when the time limit has run out. The result's why says what ran. */
#include <stdio.h>
#include <string.h>

#include "search/search.h"
#include "search/ve.h"

#define AUTO_ILP_S 60.0

/* Puts what auto did before the searcher's own why: "HEAD: WHY" (HEAD alone
 * when the searcher said nothing), cut to fit. */
static void say(pl_search_result *r, const char *head)
{
	char why[sizeof r->why];
	memcpy(why, r->why, sizeof why);
	int room = (int)sizeof why - (int)strlen(head) - 3; /* what the why keeps */
	snprintf(r->why, sizeof r->why, "%s%s%.*s", head, why[0] ? ": " : "", room > 0 ? room : 0,
	         why);
}

/* the time left of o's limit, at least a millisecond; 0 without a limit */
static double left(const pl_search_opts *o, double t0)
{
	if (o->time_limit_s <= 0)
		return 0;
	double l = o->time_limit_s - (ve_now() - t0);
	return l > 1e-3 ? l : 1e-3;
}

/* rec's plan after dp failed with dperr. rec runs without the time limit:
 * it is the last resort, and it takes about 0.1 s on GPT-3 175B and 512
 * devices, so a plan that comes back a little late beats no plan. */
static pl_status fall_back(pl_problem *p, const pl_search_opts *o, const pl_err *dperr,
                           pl_search_result *r, pl_err *err)
{
	pl_search_opts ro = *o;
	ro.time_limit_s = 0;
	pl_status st = pl_search_rec(p, &ro, r, err);
	if (st == PL_OK)
		snprintf(r->why, sizeof r->why, "auto fell back to rec because dp failed: %.200s",
		         dperr->msg);
	return st;
}

pl_status pl_search_auto(pl_problem *p, const pl_search_opts *o, pl_search_result *r, pl_err *err)
{
	double t0 = ve_now();
	pl_err dperr, ilperr;
	pl_search_opts free_o = *o;
	free_o.memory_limit = 0;
	pl_status st = pl_search_dp(p, &free_o, r, &dperr);
	if (st == PL_OK && (o->memory_limit <= 0 || r->mem_bytes <= o->memory_limit)) {
		say(r, "auto ran dp");
		r->seconds = ve_now() - t0;
		return PL_OK;
	}
	if (st == PL_EINVAL || st == PL_ENOMEM) {
		*err = dperr; /* a fact about the model, not about dp */
		return st;
	}
	if (st) {
		st = fall_back(p, o, &dperr, r, err);
		r->seconds = ve_now() - t0;
		return st;
	}
	pl_search_result_free(r);

	/* the limit binds: ilp, then dp under the limit if ilp proved nothing */
	pl_search_opts io = *o;
	io.time_limit_s = o->time_limit_s > 0 ? 0.5 * left(o, t0) : AUTO_ILP_S;
	pl_search_result ri;
	pl_status si = pl_search_ilp(p, &io, &ri, &ilperr);
	if (si == PL_EINFEASIBLE) {
		*err = ilperr;
		return si;
	}
	if (si == PL_OK && ri.optimal) {
		*r = ri;
		say(r, "auto ran ilp (the memory limit binds)");
		r->seconds = ve_now() - t0;
		return PL_OK;
	}
	pl_search_opts dopt = *o;
	dopt.time_limit_s = left(o, t0);
	st = pl_search_dp(p, &dopt, r, &dperr);
	if (st == PL_EINFEASIBLE) {
		if (si == PL_OK)
			pl_search_result_free(&ri);
		*err = dperr;
		return st;
	}
	if (si == PL_OK && (st || ri.step_s < r->step_s)) {
		if (st == PL_OK)
			pl_search_result_free(r);
		*r = ri;
		say(r, "auto ran ilp (the memory limit binds), then dp, and kept ilp's plan");
	} else if (st == PL_OK) {
		if (si == PL_OK)
			pl_search_result_free(&ri);
		say(r, si == PL_OK ? "auto ran ilp (the memory limit binds; not proven), then dp"
		                   : "auto ran ilp (the memory limit binds; failed), then dp");
	} else {
		st = fall_back(p, o, &dperr, r, err);
	}
	r->seconds = ve_now() - t0;
	return st == PL_OK || si == PL_OK ? PL_OK : st;
}
