/* propagate: sharding propagation from user annotations (semi-auto), as in
 * GSPMD and MindSpore's sharding_propagation. Annotated ops (the model's
 * "strategy" fields, or --load) are the seeds; strategies spread
 * breadth-first over the edges, in both directions. An op takes, against
 * its neighbours decided so far, a candidate whose redistribution costs
 * nothing if one exists (ties: least communication inside the op, then more
 * partitions, then least time), otherwise the least redistribution cost.
 * Edges where fronts from different seeds meet at a cost are reported as
 * conflicts. Ops no seed reaches start fronts of their own (noted).
 * Cost: ops x candidates x degree edge evaluations. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search/search.h"
#include "search/ve.h"
#include "graph/alloc.h"
#include "graph/clock.h"

typedef struct pctx {
	pl_problem *p;
	int *choice, *origin;
	char *decided;
} pctx;

static const int64_t *cand(const pl_problem *p, int op, int k)
{
	return p->strat[op] + (size_t)k * p->g->ops[op].spec.nloops;
}

/* Redistribution cost of op at candidate k against its decided neighbours. */
static double edge_cost(const pctx *c, int op, int k)
{
	const pl_problem *p = c->p;
	double t = 0;
	for (int i = 0; i < p->op_nedges[op]; i++) {
		int e = p->op_edges[op][i];
		const pl_edge *ed = &p->edges[e];
		int other = ed->src_op == op ? ed->dst_op : ed->src_op;
		if (!c->decided[other])
			continue;
		const int64_t *mine = cand(p, op, k), *theirs = cand(p, other, c->choice[other]);
		t += pl_cost_edge(p, e, ed->src_op == op ? mine : theirs,
		                  ed->dst_op == op ? mine : theirs);
	}
	return t;
}

static void decide(pctx *c, int op, int origin)
{
	pl_problem *p = c->p;
	const pl_nodecost *nc = pl_problem_node(p, op);
	int best = 0;
	double bc = 0;
	for (int k = 0; k < p->nstrat[op]; k++) {
		double e = edge_cost(c, op, k);
		int better;
		if (k == 0) {
			better = 1;
		} else if (e != bc) {
			better = e < bc;
		} else if (nc[k].comm_s != nc[best].comm_s) {
			better = nc[k].comm_s < nc[best].comm_s;
		} else {
			int64_t pk = pl_split_product(&p->g->ops[op], cand(p, op, k));
			int64_t pb = pl_split_product(&p->g->ops[op], cand(p, op, best));
			better = pk != pb ? pk > pb
			                  : nc[k].compute_s + nc[k].comm_s <
			                        nc[best].compute_s + nc[best].comm_s;
		}
		if (better) {
			best = k;
			bc = e;
		}
	}
	c->choice[op] = best;
	c->decided[op] = 1;
	c->origin[op] = origin;
}

pl_status pl_search_propagate(pl_problem *p, const pl_search_opts *o, pl_search_result *r,
                              pl_err *err)
{
	double t0 = pl_now();
	memset(r, 0, sizeof *r);
	const pl_graph *g = p->g;
	pl_status st = PL_OK;
	pctx c = {.p = p};
	c.choice = pl_calloc((size_t)g->nops + 1, sizeof *c.choice);
	c.origin = pl_calloc((size_t)g->nops + 1, sizeof *c.origin);
	c.decided = pl_calloc((size_t)g->nops + 1, 1);
	int *queue = pl_malloc(sizeof *queue * ((size_t)g->nops + 1));
	if (!c.choice || !c.origin || !c.decided || !queue) {
		st = pl_err_set(err, PL_ENOMEM, "propagate: out of memory");
		goto cleanup;
	}
	int head = 0, tail = 0, seeds = 0, fronts = 0, unreached = 0;
	for (int op = 0; op < g->nops; op++)
		if (g->ops[op].has_strategy) {
			c.choice[op] = 0; /* an annotated op has its annotation as only candidate */
			c.decided[op] = 1;
			c.origin[op] = seeds++;
			queue[tail++] = op;
		}
	if (!seeds) {
		st =
		    pl_err_set(err, PL_EINVAL,
		               "%s: propagate needs at least one annotated op: give an op (for "
		               "example the first MatMul) a \"strategy\" in the model, or --load a "
		               "checkpoint that names some ops",
		               g->path);
		goto cleanup;
	}
	fronts = seeds;
	for (;;) {
		while (head < tail) {
			int v = queue[head++];
			for (int i = 0; i < p->op_nedges[v]; i++) {
				const pl_edge *ed = &p->edges[p->op_edges[v][i]];
				int u = ed->src_op == v ? ed->dst_op : ed->src_op;
				if (c.decided[u])
					continue;
				decide(&c, u, c.origin[v]);
				queue[tail++] = u;
			}
			if (o->time_limit_s > 0 && pl_now() - t0 > o->time_limit_s) {
				st = pl_err_set(err, PL_ETIMEOUT,
				                "propagate: the time limit of %.3g s ran out",
				                o->time_limit_s);
				goto cleanup;
			}
		}
		int next = -1;
		for (int op = 0; op < g->nops && next < 0; op++)
			if (!c.decided[op])
				next = op;
		if (next < 0)
			break;
		decide(&c, next, fronts++); /* no seed reaches it: a front of its own */
		unreached++;
		queue[tail++] = next;
	}
	/* conflicts: edges between different fronts that pay a redistribution */
	r->conflicts = pl_malloc(sizeof *r->conflicts * ((size_t)p->nedges + 1));
	if (!r->conflicts) {
		st = pl_err_set(err, PL_ENOMEM, "propagate: out of memory");
		goto cleanup;
	}
	for (int e = 0; e < p->nedges; e++) {
		const pl_edge *ed = &p->edges[e];
		if (c.origin[ed->src_op] == c.origin[ed->dst_op])
			continue;
		double t = pl_cost_edge(p, e, cand(p, ed->src_op, c.choice[ed->src_op]),
		                        cand(p, ed->dst_op, c.choice[ed->dst_op]));
		if (t > 0)
			r->conflicts[r->nconflicts++] = (pl_conflict){e, t};
	}
	r->choice = c.choice;
	c.choice = NULL;
	if (pl_search_result_price(p, r)) {
		st = pl_err_set(err, PL_ENOMEM, "propagate: out of memory");
		goto cleanup;
	}
	r->optimal = 0;
	snprintf(r->why, sizeof r->why,
	         "propagated from %d annotated op%s; %d conflict%s where fronts met%s", seeds,
	         seeds == 1 ? "" : "s", r->nconflicts, r->nconflicts == 1 ? "" : "s",
	         unreached ? "; some ops no annotation reaches were decided on their own" : "");
	if (o->memory_limit > 0 && r->mem_bytes > o->memory_limit)
		st = pl_search_err_over_limit(err, "the propagated plan", r->mem_bytes,
		                              o->memory_limit,
		                              "annotate differently or use --mode dp");
cleanup:
	free(c.choice);
	free(c.origin);
	free(c.decided);
	free(queue);
	r->seconds = pl_now() - t0;
	if (st)
		pl_search_result_free(r);
	return st;
}
