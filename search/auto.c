/* auto: picks the searcher per model. dp runs first without the memory
 * limit: it solves the transformer-shaped graphs of the zoo exactly in well
 * under a second, and if its plan fits the limit that is the optimum. If the
 * limit binds, ilp runs: its Lagrangian bound and fixing by dp prove GPT-3
 * 1.3B on 64 devices under 7 GiB optimal in about 4 s, where dp's (time,
 * memory) Pareto sets need about a minute for the proof (docs/benchmarks.md).
 * ilp gets half the time limit, or AUTO_ILP_S without one; if it does not
 * prove its plan in that time, dp under the limit runs in the time left and
 * the faster plan is kept. If dp cannot solve the graph (a table too large,
 * the time limit), rec's plan and a local search's are returned, with their
 * gap to a lower bound. With a time limit, the first dp gets AUTO_DP_SHARE of
 * it, so that the fall-back has the rest: rec and the local search stop at the
 * limit too (the local search's start, each op's cheapest or data parallel,
 * is a plan whenever the limit leaves no time at all). The result's why says
 * what ran. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/alloc.h"
#include "search/search.h"
#include "search/ve.h"
#include "graph/clock.h"

#define AUTO_ILP_S 60.0
/* the first dp's share of a time limit (the rest: the fall-back's) */
#define AUTO_DP_SHARE 0.6

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
	double l = o->time_limit_s - (pl_now() - t0);
	return l > 1e-3 ? l : 1e-3;
}

/* the summed objective of a choice (node + edge tables, as dp sums them),
 * its memory into *mem; NAN once past deadline (0: none): each edge table
 * is priced on first use, seconds on thousands of devices */
static double objective_by(pl_problem *p, const int *choice, double *mem, double deadline)
{
	double t = 0, m = 0;
	for (int o = 0; o < p->nops; o++) {
		const pl_nodecost *nc = pl_problem_node(p, o) + choice[o];
		t += nc->compute_s + nc->comm_s;
		m += nc->mem_bytes;
	}
	for (int e = 0; e < p->nedges; e++) {
		const pl_edge *ed = &p->edges[e];
		if (deadline > 0 && pl_now() > deadline)
			return NAN;
		t += pl_problem_edge(p,
		                     e)[(size_t)choice[ed->src_op] * (size_t)p->nstrat[ed->dst_op] +
		                        (size_t)choice[ed->dst_op]];
	}
	*mem = m;
	return t;
}

/* Iterated conditional modes: each op in turn takes the candidate that is
 * cheapest with its neighbours' fixed (its node and incident edges), the
 * memory limit kept, until a sweep changes nothing. A local optimum: no op
 * alone can improve the plan. */
static void polish(pl_problem *p, int *choice, double limit, double deadline)
{
	/* past the deadline: not a table priced (the edge tables a sweep reads
	 * are priced on first use, seconds on thousands of devices) */
	if (deadline > 0 && pl_now() > deadline)
		return;
	double mem, cur = objective_by(p, choice, &mem, deadline);
	if (isnan(cur))
		return;
	for (int sweep = 0, changed = 1; changed && sweep < 100; sweep++) {
		changed = 0;
		for (int o = 0; o < p->nops; o++) {
			if (deadline > 0 && pl_now() > deadline)
				return; /* the plan so far: each move keeps it a plan */
			const pl_nodecost *nc = pl_problem_node(p, o);
			int best = choice[o];
			double best_d = 0;
			for (int k = 0; k < p->nstrat[o]; k++) {
				if (k == choice[o])
					continue;
				double d = nc[k].compute_s + nc[k].comm_s -
				           (nc[choice[o]].compute_s + nc[choice[o]].comm_s);
				double dm = nc[k].mem_bytes - nc[choice[o]].mem_bytes;
				if (limit > 0 && mem + dm > limit)
					continue;
				for (int i = 0; i < p->op_nedges[o]; i++) {
					const pl_edge *ed = &p->edges[p->op_edges[o][i]];
					const double *tab = pl_problem_edge(p, p->op_edges[o][i]);
					size_t nd = (size_t)p->nstrat[ed->dst_op];
					int a = choice[ed->src_op], b = choice[ed->dst_op];
					int a2 = ed->src_op == o ? k : a,
					    b2 = ed->dst_op == o ? k : b;
					d += tab[(size_t)a2 * nd + (size_t)b2] -
					     tab[(size_t)a * nd + (size_t)b];
				}
				if (d < best_d - 1e-15 * fabs(cur)) {
					best_d = d;
					best = k;
				}
			}
			if (best != choice[o]) {
				mem += nc[best].mem_bytes - nc[choice[o]].mem_bytes;
				cur += best_d;
				choice[o] = best;
				changed = 1;
			}
		}
	}
}

/* rec's plan after dp failed with dperr, in the time left of o's limit (t0
 * its start): rec's, or where rec ran out of time a local search's (below);
 * the limit cuts that search's sweeps, and its start is a plan without any. */
static pl_status fall_back(pl_problem *p, const pl_search_opts *o, double t0,
                           const pl_err *dperr, pl_search_result *r, pl_err *err)
{
	pl_search_opts ro = *o;
	ro.time_limit_s = left(o, t0);
	double deadline = o->time_limit_s > 0 ? t0 + o->time_limit_s : 0;
	pl_status st = pl_search_rec(p, &ro, r, err);
	int rec_late = st == PL_ETIMEOUT;
	if (st != PL_OK && !rec_late)
		return st;
	if (rec_late) { /* no plan of rec's: the local search's is the plan */
		memset(r, 0, sizeof *r);
		r->step_s = INFINITY;
		st = PL_OK;
	}
	/* rec's partial cuts may be off the candidates: a local search over the
	 * candidates, from each op's cheapest alone and from data parallel, is
	 * priced beside it and the fastest plan kept (an entangled graph is where rec's splits go
	 * wrong: DenseNet's concatenations) */
	/* rec's plan, and no time left: it is the plan */
	for (int start = 0; start < 2 && !(st == PL_OK && !rec_late && deadline > 0 &&
	                                   pl_now() > deadline);
	     start++) {
		int *c = pl_calloc((size_t)p->nops + 1, sizeof *c);
		if (!c)
			break;
		for (int o = 0; o < p->nops; o++) {
			/* each op's cheapest alone; or its deepest cut of its first
			 * input's first dimension (the batch: data parallel), cheapest
			 * of those */
			const pl_nodecost *nc = pl_problem_node(p, o);
			const pl_op *op = &p->g->ops[o];
			int nl = op->spec.nloops, lb = -1;
			if (start == 1 && op->ninputs > 0 && p->g->tensors[op->in[0]].rank > 0 &&
			    op->spec.in[0][0].count)
				lb = op->spec.in[0][0].first;
			for (int k = 1; k < p->nstrat[o]; k++) {
				int64_t bk = lb >= 0 ? p->strat[o][(size_t)k * nl + lb] : 0,
				        bc = lb >= 0 ? p->strat[o][(size_t)c[o] * nl + lb] : 0;
				double tk = nc[k].compute_s + nc[k].comm_s,
				       tc = nc[c[o]].compute_s + nc[c[o]].comm_s;
				if (bk > bc || (bk == bc && tk < tc))
					c[o] = k;
			}
		}
		polish(p, c, o->memory_limit, deadline);
		double mem = 0; /* as objective_by() sums it, without the edge tables */
		for (int op = 0; op < p->nops; op++)
			mem += pl_problem_node(p, op)[c[op]].mem_bytes;
		pl_search_result q = {.choice = c};
		if ((o->memory_limit <= 0 || mem <= o->memory_limit) &&
		    !pl_search_result_price(p, &q) && q.step_s < r->step_s) {
			free(r->choice);
			free(r->splits);
			r->choice = c;
			r->splits = NULL;
			r->step_s = q.step_s;
			r->mem_bytes = q.mem_bytes;
			c = NULL;
		}
		free(c);
	}
	if (!r->choice) {
		pl_search_result_free(r);
		return pl_err_set(err, PL_ETIMEOUT,
		                  "auto: the time limit of %.3g s ran out before a plan was found "
		                  "(dp failed: %.300s)",
		                  o->time_limit_s, dperr->msg);
	}
	int late = rec_late || (deadline > 0 && pl_now() > deadline);
	/* a lower bound of every plan's step: each op's kernels at its cheapest
	 * candidate, no communication (kernels of one device run one at a time);
	 * the gap says how far rec's plan may be from the optimum */
	double lb = 0;
	for (int op = 0; op < p->nops; op++) {
		const pl_nodecost *nc = pl_problem_node(p, op);
		double least = HUGE_VAL;
		for (int k = 0; nc && k < p->nstrat[op]; k++)
			least = fmin(least, nc[k].compute_s);
		lb += isfinite(least) ? least : 0;
	}
	lb *= pl_job_step_scale(&p->job);
	if (lb > 0 && r->step_s >= lb) {
		char why[512];
		snprintf(
		    why, sizeof why,
		    "auto fell back to %s, within %.1f %% of %.4g s (a bound "
		    "no plan beats: each op's kernels at their cheapest), because dp failed: "
		    "%.300s",
		    rec_late ? "a local search (the time limit stopped rec before its plan)"
		    : late   ? "rec and a local search (the time limit stopped it)"
		             : "rec and a local search",
		    100 * (r->step_s / lb - 1), lb, dperr->msg);
		size_t n = strlen(why) < sizeof r->why ? strlen(why) : sizeof r->why - 1;
		memcpy(r->why, why, n);
		r->why[n] = 0;
	} else
		snprintf(r->why, sizeof r->why, "auto fell back to %s because dp failed: %.200s",
		         rec_late ? "a local search" : "rec", dperr->msg);
	return st;
}

pl_status pl_search_auto_fallback(pl_problem *p, const pl_search_opts *o, const char *reason,
                                  pl_search_result *r, pl_err *err)
{
	double t0 = pl_now();
	pl_err why;
	snprintf(why.msg, sizeof why.msg, "%s", reason);
	memset(r, 0, sizeof *r);
	pl_status st = fall_back(p, o, t0, &why, r, err);
	r->seconds = pl_now() - t0;
	return st;
}

pl_status pl_search_auto(pl_problem *p, const pl_search_opts *o, pl_search_result *r, pl_err *err)
{
	double t0 = pl_now();
	pl_err dperr, ilperr;
	pl_search_opts free_o = *o;
	free_o.memory_limit = 0;
	if (o->time_limit_s > 0) /* the rest for a fall-back */
		free_o.time_limit_s = AUTO_DP_SHARE * o->time_limit_s;
	pl_status st = pl_search_dp(p, &free_o, r, &dperr);
	if (st == PL_OK && (o->memory_limit <= 0 || r->mem_bytes <= o->memory_limit)) {
		say(r, "auto ran dp");
		r->seconds = pl_now() - t0;
		return PL_OK;
	}
	if (st == PL_EINVAL || st == PL_ENOMEM) {
		*err = dperr; /* a fact about the model, not about dp */
		return st;
	}
	if (st) {
		st = fall_back(p, o, t0, &dperr, r, err);
		r->seconds = pl_now() - t0;
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
		r->seconds = pl_now() - t0;
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
		st = fall_back(p, o, t0, &dperr, r, err);
	}
	r->seconds = pl_now() - t0;
	return st == PL_OK || si == PL_OK ? PL_OK : st;
}
