/* ilp: the strategy choice as an integer program solved with GLPK.
 *
 * Columns: x[o][s] binary, one-hot per op; per edge, y[e][r][c] >= 0 over
 * the distinct rows r and columns c of its cost table (strategies with equal
 * rows are interchangeable on that edge), tied to x by transportation
 * constraints sum_c y[r][c] = sum_{s in r} x[u][s] and sum_r y[r][c] =
 * sum_{s in c} x[v][s]; with one-hot x the only solution is the product, so
 * the program is exact. Memory: sum m[o][s] x[o][s] <= limit.
 * Objective: node times + edge costs. The LP relaxation is solved first (it is
 * often integral); otherwise glp_intopt, started from an incumbent (rec's plan
 * when it fits), stopped by its callback at the time limit.
 * Large instances (more than PL_ILP_SHARE_COLUMNS columns) share variables
 * across repeated layers 2..k, which restricts them to repeat one strategy;
 * the result then says it is optimal among such plans only. */
#include <glpk.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search/search.h"
#include "search/ve.h"

#define PL_ILP_SHARE_COLUMNS 400000
/* GLPK's tolerances are absolute (1e-7 on reduced costs): price in
 * microseconds and measure memory in units of the limit */
#define OBJ_SCALE 1e6

typedef struct icol {
	int nr, nc;
	int *rc, *cc; /* strategy -> row class / column class */
	double *cost; /* nr x nc */
	int base;     /* first y column (1-based), 0 if the edge is free */
	double mult;
	int src, dst; /* variables */
} icol;

typedef struct ilpctx {
	pl_problem *p;
	int *var;     /* op -> variable op (shared across repeated layers) */
	double *mult; /* per variable: how many ops it stands for */
	int *xbase;   /* per variable: first x column (1-based) */
	icol *ec;     /* per edge (only for representative edges) */
	int *erep;    /* edge -> representative edge with the same variables */
	int ncols;
	double deadline;
	const int *incumbent; /* per op choice, or NULL */
	int stopped;
} ilpctx;

/* classes of identical rows (dim 0) or columns (dim 1) of a table */
static int classes(const double *t, int nr, int nc, int by_row, int *cls, int **rep_out)
{
	int n = by_row ? nr : nc, len = by_row ? nc : nr, k = 0;
	int *rep = malloc(sizeof *rep * ((size_t)n + 1));
	if (!rep)
		return -1;
	for (int i = 0; i < n; i++) {
		int found = -1;
		for (int j = 0; j < k && found < 0; j++) {
			int same = 1;
			for (int q = 0; q < len && same; q++) {
				double a = by_row ? t[(size_t)i * nc + q] : t[(size_t)q * nc + i];
				double b = by_row ? t[(size_t)rep[j] * nc + q]
				                  : t[(size_t)q * nc + rep[j]];
				same = a == b;
			}
			if (same)
				found = j;
		}
		if (found < 0) {
			rep[k] = i;
			found = k++;
		}
		cls[i] = found;
	}
	*rep_out = rep;
	return k;
}

static void cb(glp_tree *tree, void *info)
{
	ilpctx *c = info;
	if (c->deadline > 0 && ve_now() > c->deadline) {
		c->stopped = 1;
		glp_ios_terminate(tree);
		return;
	}
	if (glp_ios_reason(tree) == GLP_IHEUR && c->incumbent && glp_ios_curr_node(tree) == 1) {
		pl_problem *p = c->p;
		double *x = calloc((size_t)c->ncols + 1, sizeof *x);
		if (!x)
			return;
		for (int o = 0; o < p->nops; o++)
			if (c->var[o] == o)
				x[c->xbase[o] + c->incumbent[o]] = 1;
		for (int e = 0; e < p->nedges; e++) {
			const icol *ic = &c->ec[e];
			if (c->erep[e] != e || !ic->base)
				continue;
			int r = ic->rc[c->incumbent[ic->src]], k = ic->cc[c->incumbent[ic->dst]];
			x[ic->base + r * ic->nc + k] = 1;
		}
		glp_ios_heur_sol(tree, x);
		free(x);
	}
}

pl_status pl_search_ilp(pl_problem *p, const pl_search_opts *o, pl_search_result *r, pl_err *err)
{
	double t0 = ve_now();
	memset(r, 0, sizeof *r);
	pl_status st = PL_OK;
	const pl_graph *g = p->g;
	int n = g->nops, E = p->nedges;
	ilpctx c = {.p = p};
	glp_prob *lp = NULL;
	int *ia = NULL, *ja = NULL;
	double *ar = NULL;
	pl_search_result inc = {0};
	c.var = malloc(sizeof *c.var * ((size_t)n + 1));
	c.mult = calloc((size_t)n + 1, sizeof *c.mult);
	c.xbase = calloc((size_t)n + 1, sizeof *c.xbase);
	c.ec = calloc((size_t)E + 1, sizeof *c.ec);
	c.erep = malloc(sizeof *c.erep * ((size_t)E + 1));
	r->choice = calloc((size_t)n + 1, sizeof *r->choice);
	if (!c.var || !c.mult || !c.xbase || !c.ec || !c.erep || !r->choice)
		goto nomem;
	if (o->time_limit_s > 0)
		c.deadline = t0 + o->time_limit_s;

	/* the least memory any plan needs (memory has no edge terms) */
	double least = pl_problem_least_plan_memory(p);
	if (least < 0)
		goto nomem;
	r->min_mem_bytes = least;
	if (o->memory_limit > 0 && least > o->memory_limit) {
		st = pl_search_err_no_fit(err, o->memory_limit, least);
		goto cleanup;
	}
	{ /* price all edges on every core */
		int *all = malloc(sizeof *all * ((size_t)E + 1));
		if (!all)
			goto nomem;
		for (int e = 0; e < E; e++)
			all[e] = e;
		int bad = pl_problem_prepare(p, all, E, o->threads);
		free(all);
		if (bad)
			goto nomem;
	}

	/* variables: one per op, unless repeated layers are shared */
	long long full_cols = 0;
	for (int op = 0; op < n; op++)
		full_cols += p->nstrat[op];
	for (int e = 0; e < E; e++)
		full_cols += (long long)p->nstrat[p->edges[e].src_op] / 2 + 1;
	pl_run runs[64];
	int nruns = 0, shared = 0;
	for (int op = 0; op < n; op++)
		c.var[op] = op;
	if (full_cols > PL_ILP_SHARE_COLUMNS && !o->no_repeat) {
		nruns = pl_problem_runs(p, runs, 64);
		for (int k = 0; k < nruns; k++)
			for (int b = 2; b < runs[k].count; b++)
				for (int i = 0; i < runs[k].len; i++) {
					c.var[runs[k].first + b * runs[k].len + i] =
					    runs[k].first + runs[k].len + i;
					shared = 1;
				}
	}
	for (int op = 0; op < n; op++)
		c.mult[c.var[op]] += 1;

	/* columns */
	int col = 1;
	for (int op = 0; op < n; op++)
		if (c.var[op] == op) {
			c.xbase[op] = col;
			col += p->nstrat[op];
		}
	for (int e = 0; e < E; e++) {
		const pl_edge *ed = &p->edges[e];
		int s = c.var[ed->src_op], d = c.var[ed->dst_op];
		c.erep[e] = e;
		for (int f = 0; f < e && c.erep[e] == e; f++) { /* same variables and slots */
			const pl_edge *fd = &p->edges[f];
			if (c.erep[f] == f && c.var[fd->src_op] == s && c.var[fd->dst_op] == d &&
			    fd->src_slot == ed->src_slot && fd->dst_slot == ed->dst_slot &&
			    fd->src_is_input == ed->src_is_input && shared)
				c.erep[e] = f;
		}
		icol *ic = &c.ec[c.erep[e]];
		ic->mult += 1;
		if (c.erep[e] != e)
			continue;
		ic->src = s;
		ic->dst = d;
		const double *t = pl_problem_edge(p, e);
		int ns = p->nstrat[ed->src_op], nd = p->nstrat[ed->dst_op];
		int any = 0;
		for (size_t q = 0; q < (size_t)ns * nd && !any; q++)
			any = t[q] != 0;
		if (!any)
			continue; /* free edge: no columns */
		int *rrep = NULL, *crep = NULL;
		ic->rc = malloc(sizeof(int) * (size_t)ns);
		ic->cc = malloc(sizeof(int) * (size_t)nd);
		if (!ic->rc || !ic->cc)
			goto nomem;
		ic->nr = classes(t, ns, nd, 1, ic->rc, &rrep);
		ic->nc = classes(t, ns, nd, 0, ic->cc, &crep);
		if (ic->nr < 0 || ic->nc < 0) {
			free(rrep);
			free(crep);
			goto nomem;
		}
		ic->cost = malloc(sizeof(double) * (size_t)ic->nr * ic->nc);
		if (!ic->cost) {
			free(rrep);
			free(crep);
			goto nomem;
		}
		for (int a = 0; a < ic->nr; a++)
			for (int b = 0; b < ic->nc; b++)
				ic->cost[a * ic->nc + b] = t[(size_t)rrep[a] * nd + crep[b]];
		free(rrep);
		free(crep);
		ic->base = col;
		col += ic->nr * ic->nc;
	}
	c.ncols = col - 1;
	if (o->time_limit_s > 0 && ve_now() > c.deadline) {
		st = pl_err_set(err, PL_ETIMEOUT, "ilp: the time limit ran out while pricing");
		goto cleanup;
	}

	/* rows and the matrix */
	lp = glp_create_prob();
	glp_set_prob_name(lp, g->name);
	glp_set_obj_dir(lp, GLP_MIN);
	glp_add_cols(lp, c.ncols);
	size_t nz = 0, cap = 1024;
	ia = malloc(sizeof *ia * cap);
	ja = malloc(sizeof *ja * cap);
	ar = malloc(sizeof *ar * cap);
	if (!ia || !ja || !ar)
		goto nomem;
#define NZ(R, C, V)                                                                                \
	do {                                                                                       \
		if (nz + 2 >= cap) {                                                               \
			cap *= 2;                                                                  \
			int *ni = realloc(ia, sizeof *ia * cap),                                   \
			    *nj = realloc(ja, sizeof *ja * cap);                                   \
			double *na = realloc(ar, sizeof *ar * cap);                                \
			if (ni)                                                                    \
				ia = ni;                                                           \
			if (nj)                                                                    \
				ja = nj;                                                           \
			if (na)                                                                    \
				ar = na;                                                           \
			if (!ni || !nj || !na)                                                     \
				goto nomem;                                                        \
		}                                                                                  \
		nz++;                                                                              \
		ia[nz] = (R);                                                                      \
		ja[nz] = (C);                                                                      \
		ar[nz] = (V);                                                                      \
	} while (0)
	int row = 0, mem_row = 0;
	for (int op = 0; op < n; op++) {
		if (c.var[op] != op)
			continue;
		const pl_nodecost *nc = pl_problem_node(p, op);
		row = glp_add_rows(lp, 1);
		glp_set_row_bnds(lp, row, GLP_FX, 1, 1);
		for (int k = 0; k < p->nstrat[op]; k++) {
			int j = c.xbase[op] + k;
			char name[64];
			snprintf(name, sizeof name, "x%d_%d", op, k);
			glp_set_col_name(lp, j, name);
			glp_set_col_kind(lp, j, GLP_BV);
			glp_set_obj_coef(lp, j,
			                 OBJ_SCALE * c.mult[op] * (nc[k].compute_s + nc[k].comm_s));
			NZ(row, j, 1.0);
		}
	}
	for (int e = 0; e < E; e++) {
		icol *ic = &c.ec[e];
		if (c.erep[e] != e || !ic->base)
			continue;
		const pl_edge *ed = &p->edges[e];
		int first = glp_add_rows(lp, ic->nr + ic->nc);
		for (int q = 0; q < ic->nr + ic->nc; q++)
			glp_set_row_bnds(lp, first + q, GLP_FX, 0, 0);
		for (int a = 0; a < ic->nr; a++)
			for (int b = 0; b < ic->nc; b++) {
				int j = ic->base + a * ic->nc + b;
				char name[64];
				snprintf(name, sizeof name, "y%d_%d_%d", e, a, b);
				glp_set_col_name(lp, j, name);
				glp_set_col_bnds(lp, j, GLP_LO, 0, 0);
				glp_set_obj_coef(lp, j,
				                 OBJ_SCALE * ic->mult * ic->cost[a * ic->nc + b]);
				NZ(first + a, j, 1.0);
				NZ(first + ic->nr + b, j, 1.0);
			}
		for (int k = 0; k < p->nstrat[ed->src_op]; k++)
			NZ(first + ic->rc[k], c.xbase[ic->src] + k, -1.0);
		for (int k = 0; k < p->nstrat[ed->dst_op]; k++)
			NZ(first + ic->nr + ic->cc[k], c.xbase[ic->dst] + k, -1.0);
	}
	if (o->memory_limit > 0) {
		mem_row = glp_add_rows(lp, 1);
		glp_set_row_name(lp, mem_row, "memory");
		glp_set_row_bnds(lp, mem_row, GLP_UP, 0, 1.0);
		for (int op = 0; op < n; op++) {
			if (c.var[op] != op)
				continue;
			const pl_nodecost *nc = pl_problem_node(p, op);
			for (int k = 0; k < p->nstrat[op]; k++)
				if (nc[k].mem_bytes != 0)
					NZ(mem_row, c.xbase[op] + k,
					   c.mult[op] * nc[k].mem_bytes / o->memory_limit);
		}
	}
#undef NZ
	glp_load_matrix(lp, (int)nz, ia, ja, ar);
	free(ia);
	free(ja);
	free(ar);
	ia = ja = NULL;
	ar = NULL;
	if (o->dump_lp && glp_write_lp(lp, NULL, o->dump_lp)) {
		st = pl_err_set(err, PL_EIO, "%s: cannot write the LP file", o->dump_lp);
		goto cleanup;
	}
	if (o->progress) {
		char msg[160];
		snprintf(msg, sizeof msg, "ilp: %d columns, %d rows, %zu nonzeros%s", c.ncols,
		         glp_get_num_rows(lp), nz,
		         shared ? " (repeated layers share variables)" : "");
		o->progress(o->ud, msg);
	}

	/* incumbent: rec's plan, when it fits */
	{
		pl_search_opts ro = *o;
		ro.progress = NULL;
		pl_err e2;
		if (pl_search_rec(p, &ro, &inc, &e2) == PL_OK) {
			int ok = 1;
			for (int op = 0; op < n && ok; op++)
				ok = !memcmp(pl_search_result_split(p, &inc, op),
				             p->strat[op] +
				                 (size_t)inc.choice[op] * g->ops[op].spec.nloops,
				             sizeof(int64_t) * (size_t)g->ops[op].spec.nloops);
			for (int op = 0; op < n && ok; op++) /* shared layers must agree */
				ok = inc.choice[op] == inc.choice[c.var[op]];
			if (ok)
				c.incumbent = inc.choice;
		}
	}

	/* LP relaxation first */
	glp_smcp sm;
	glp_init_smcp(&sm);
	sm.msg_lev = GLP_MSG_OFF;
	sm.presolve = GLP_ON;
	if (c.deadline > 0) {
		double left = c.deadline - ve_now();
		sm.tm_lim = left > 0.001 ? (int)(left * 1000) : 1;
	}
	int ret = glp_simplex(lp, &sm);
	if (ret == GLP_ENOPFS || glp_get_status(lp) == GLP_NOFEAS) {
		st = pl_search_err_no_fit(err, o->memory_limit, least);
		goto cleanup;
	}
	if (ret == GLP_ETMLIM || (c.deadline > 0 && ve_now() > c.deadline)) {
		st = pl_err_set(err, PL_ETIMEOUT,
		                "ilp: the time limit ran out in the LP relaxation (%d columns); "
		                "raise --time-limit or use --mode dp or rec",
		                c.ncols);
		goto cleanup;
	}
	if (ret != 0 || glp_get_status(lp) != GLP_OPT) {
		st = pl_err_set(err, PL_ESOLVER, "ilp: GLPK's simplex failed (code %d, status %d)",
		                ret, glp_get_status(lp));
		goto cleanup;
	}
	int integral = 1;
	for (int op = 0; op < n && integral; op++) {
		if (c.var[op] != op)
			continue;
		for (int k = 0; k < p->nstrat[op] && integral; k++) {
			double v = glp_get_col_prim(lp, c.xbase[op] + k);
			integral = v < 1e-9 || v > 1 - 1e-9;
		}
	}
	int proven = 0;
	if (integral) {
		proven = 1;
		for (int op = 0; op < n; op++) {
			int v = c.var[op];
			for (int k = 0; k < p->nstrat[v]; k++)
				if (glp_get_col_prim(lp, c.xbase[v] + k) > 0.5)
					r->choice[op] = k;
		}
		snprintf(r->why, sizeof r->why, "the LP relaxation was integral");
	} else {
		glp_iocp io;
		glp_init_iocp(&io);
		io.msg_lev = GLP_MSG_OFF;
		io.cb_func = cb;
		io.cb_info = &c;
		io.mip_gap = 0;
		ret = glp_intopt(lp, &io);
		int ms = glp_mip_status(lp);
		if (ms == GLP_NOFEAS) {
			st = pl_search_err_no_fit(err, o->memory_limit, least);
			goto cleanup;
		}
		if (ms != GLP_OPT && ms != GLP_FEAS) {
			st = pl_err_set(err, c.stopped ? PL_ETIMEOUT : PL_ESOLVER,
			                c.stopped
			                    ? "ilp: the time limit ran out before a plan was found"
			                    : "ilp: GLPK's branch and bound failed (code %d)",
			                ret);
			goto cleanup;
		}
		proven = ms == GLP_OPT && !c.stopped && ret == 0;
		for (int op = 0; op < n; op++) {
			int v = c.var[op];
			for (int k = 0; k < p->nstrat[v]; k++)
				if (glp_mip_col_val(lp, c.xbase[v] + k) > 0.5)
					r->choice[op] = k;
		}
		if (!proven)
			snprintf(r->why, sizeof r->why,
			         "the time limit stopped branch and bound: feasible, not proven "
			         "optimal");
	}
	if (pl_search_result_price(p, r))
		goto nomem;
	r->optimal = proven && !shared;
	if (shared) {
		snprintf(r->why, sizeof r->why,
		         "repeated layers share one strategy (the instance has %lld columns "
		         "unshared); %s among such plans",
		         full_cols, proven ? "optimal" : "feasible");
		for (int k = 0; k < nruns; k++)
			r->repeated_layers += runs[k].count;
	}
	goto cleanup;
nomem:
	st = pl_err_set(err, PL_ENOMEM, "ilp: out of memory");
cleanup:
	if (lp)
		glp_delete_prob(lp);
	for (int e = 0; c.ec && e < E; e++) {
		free(c.ec[e].rc);
		free(c.ec[e].cc);
		free(c.ec[e].cost);
	}
	free(c.ec);
	free(c.erep);
	free(c.var);
	free(c.mult);
	free(c.xbase);
	free(ia);
	free(ja);
	free(ar);
	pl_search_result_free(&inc);
	r->seconds = ve_now() - t0;
	if (st)
		pl_search_result_free(r);
	return st;
}
