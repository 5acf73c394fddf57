/* dp: the exact optimum of the cost model by variable elimination (ve.c).
 *
 * Repeated layers: for a run of k identical blocks, block 0 is solved as part
 * of the graph, and one table T(out_{b-1}, out_b) -- the best cost of block b
 * given the strategies of the op leaving the previous block and of its own --
 * is computed once from block 1 and reused for blocks 1..k-1, which become a
 * chain T, T, ..., T in the reduced problem. Each block's inside is recovered
 * by backtracking the template with its two boundary strategies.
 *
 * Memory: the scalar optimum is taken when it fits; otherwise the least
 * memory any plan needs is computed (the same elimination on memory), and if
 * that fits, the Pareto elimination finds the fastest plan within the limit.
 * Both are exact unless a Pareto set exceeds its cap, which the result says.
 *
 * Relaxed (opts relax_pairs): edges with large tables are left out, as if
 * they cost nothing. Edges cost at least 0, so the elimination's optimum is a
 * lower bound of the true one (bound_s), at the price of the small tables
 * only; its plan is an ordinary plan, priced in full. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search/search.h"
#include "search/ve.h"
#include "graph/alloc.h"
#include "graph/clock.h"

enum { OP_EXPANDED, OP_CHAIN, OP_HIDDEN };

typedef struct dpctx {
	pl_problem *p;
	const pl_search_opts *o;
	pl_run runs[64];
	int nruns;
	int *kind;   /* per op */
	int *run_of; /* per op: run index or -1 */
	double deadline;
	double **mem_tab;  /* per op: node memory (objective or Pareto m) */
	double **time_tab; /* per op: node time */
	int left_out;      /* edges the relaxation left out */
} dpctx;

static int block_op(const pl_run *r, int b, int k)
{
	return r->first + b * r->len + k;
}

static void progress(const dpctx *c, const char *fmt, const char *a, double x)
{
	if (!c->o->progress)
		return;
	char msg[256];
	snprintf(msg, sizeof msg, fmt, a, x);
	c->o->progress(c->o->ud, msg);
}

static int node_tables(dpctx *c, int op)
{
	if (c->time_tab[op])
		return 0;
	const pl_nodecost *n = pl_problem_node(c->p, op);
	int ns = c->p->nstrat[op];
	double *t = pl_malloc(sizeof *t * (size_t)ns), *m = pl_malloc(sizeof *m * (size_t)ns);
	if (!n || !t || !m) {
		free(t);
		free(m);
		return -1;
	}
	for (int s = 0; s < ns; s++) {
		t[s] = n[s].compute_s + n[s].comm_s + c->o->dp.mem_price * n[s].mem_bytes;
		m[s] = n[s].mem_bytes;
	}
	c->time_tab[op] = t;
	c->mem_tab[op] = m;
	return 0;
}

static void free_tables(dpctx *c)
{
	for (int op = 0; op < c->p->nops; op++) {
		if (c->time_tab)
			free(c->time_tab[op]);
		if (c->mem_tab)
			free(c->mem_tab[op]);
	}
	free(c->time_tab);
	free(c->mem_tab);
}

static int add_unary(dpctx *c, ve *v, int op)
{
	if (node_tables(c, op))
		return -1;
	size_t one = 1;
	const double *t = c->time_tab[op];
	return ve_add(v, 1, &op, &one, (size_t)c->p->nstrat[op], t,
	              v->pareto ? c->mem_tab[op] : NULL);
}

/* Whether the relaxation leaves edge e out. */
static int relaxed(const dpctx *c, int e)
{
	const pl_edge *ed = &c->p->edges[e];
	return c->o->dp.relax_pairs > 0 &&
	       (double)c->p->nstrat[ed->src_op] * (double)c->p->nstrat[ed->dst_op] >
	           c->o->dp.relax_pairs;
}

static int add_edge(dpctx *c, ve *v, int e)
{
	const pl_edge *ed = &c->p->edges[e];
	if (relaxed(c, e)) {
		c->left_out++;
		return 0;
	}
	const double *t = pl_problem_edge(c->p, e);
	if (!t)
		return -1;
	int vars[2] = {ed->src_op, ed->dst_op};
	size_t nd = (size_t)c->p->nstrat[ed->dst_op];
	size_t stride[2] = {nd, 1};
	return ve_add(v, 2, vars, stride, (size_t)c->p->nstrat[ed->src_op] * nd, t, NULL);
}

/* Template of run r: block 1 with the out op of block 0 as its kept input.
 * Scalar mode fills the dense table *T (dom x dom); Pareto mode leaves the
 * table of Pareto sets as factor *tf of tv. tv stays for backtracking. */
static int run_template(dpctx *c, int r, ve *tv, int pareto, double **T, int *tf)
{
	const pl_run *run = &c->runs[r];
	pl_problem *p = c->p;
	int vin = block_op(run, 0, run->out_pos), vout = block_op(run, 1, run->out_pos);
	if (ve_init(tv, p->nops, p->nstrat))
		return -1;
	tv->deadline = c->deadline;
	tv->pareto = pareto;
	tv->limit = c->o->memory_limit;
	if (pareto && tv->limit > 0) {
		/* memory has no edge terms, so the rest of the graph needs exactly the sum
		 * of its ops' least memory: the block gets what is left of the limit */
		double outside = 0;
		int lo1 = block_op(run, 1, 0), hi1 = lo1 + run->len;
		for (int op = 0; op < p->nops; op++) {
			if (op >= lo1 && op < hi1)
				continue;
			double mn = pl_problem_least_memory(p, op);
			if (mn < 0)
				return -1;
			outside += mn;
		}
		tv->limit -= outside * (1 - 1e-12);
		if (tv->limit <= 0)
			tv->limit = 1e-300; /* nothing fits; still a limit */
	}
	tv->cap = c->o->dp.pareto_cap > 1 ? c->o->dp.pareto_cap : 256;
	tv->keep[vin] = tv->keep[vout] = 1;
	int lo = block_op(run, 1, 0), hi = lo + run->len;
	for (int op = lo; op < hi; op++) {
		if (add_unary(c, tv, op))
			return -1;
		for (int k = 0; k < p->op_nedges[op]; k++) {
			int e = p->op_edges[op][k];
			const pl_edge *ed = &p->edges[e];
			if (ed->dst_op != op)
				continue; /* counted at its consumer */
			if ((ed->src_op >= lo && ed->src_op < hi) || ed->src_op == vin) {
				if (add_edge(c, tv, e))
					return -1;
			}
		}
	}
	if (ve_run(tv))
		return -1;
	if (pareto) {
		int N[2] = {vin, vout};
		*tf = ve_combine_rest(tv, N, 2);
		return *tf < 0 ? -1 : 0;
	}
	int d = p->nstrat[vin];
	double *t = pl_malloc(sizeof *t * (size_t)d * (size_t)d);
	int *a = pl_calloc((size_t)p->nops, sizeof *a);
	if (!t || !a) {
		free(t);
		free(a);
		return -1;
	}
	for (int i = 0; i < d; i++)
		for (int j = 0; j < d; j++) {
			a[vin] = i;
			a[vout] = j;
			t[(size_t)i * d + j] = ve_value(tv, a);
		}
	free(a);
	*T = t;
	return 0;
}

/* Elimination on the reduced problem (repeated blocks as a chain of
 * template tables); fills choice for every op. Scalar mode minimizes time;
 * Pareto mode the time within the limit and
 * reports truncation. */
static int solve(dpctx *c, int pareto, int *choice, double *value, double *mem, int *truncated,
                 char *why, size_t nwhy)
{
	pl_problem *p = c->p;
	ve v, tv[64];
	double *T[64] = {0};
	int tf[64] = {0};
	int *chain_f[64] = {0};
	int ok = -1, ntv = 0;
	memset(tv, 0, sizeof tv);
	if (ve_init(&v, p->nops, p->nstrat))
		goto done;
	v.deadline = c->deadline;
	v.pareto = pareto;
	v.limit = c->o->memory_limit;
	v.cap = c->o->dp.pareto_cap > 1 ? c->o->dp.pareto_cap : 256;
	for (int r = 0; r < c->nruns; r++) {
		ntv = r + 1;
		if (run_template(c, r, &tv[r], pareto, &T[r], &tf[r])) {
			snprintf(why, nwhy, "%s", tv[r].fail[0] ? tv[r].fail : "out of memory");
			goto done;
		}
	}
	for (int op = 0; op < p->nops; op++)
		if (c->kind[op] == OP_EXPANDED && add_unary(c, &v, op))
			goto done;
	for (int e = 0; e < p->nedges; e++) {
		const pl_edge *ed = &p->edges[e];
		int ks = c->kind[ed->src_op], kd = c->kind[ed->dst_op];
		if (kd == OP_EXPANDED && ks != OP_HIDDEN && add_edge(c, &v, e))
			goto done;
	}
	for (int r = 0; r < c->nruns; r++) {
		const pl_run *run = &c->runs[r];
		int d = p->nstrat[block_op(run, 0, run->out_pos)];
		size_t stride[2] = {(size_t)d, 1};
		chain_f[r] = pl_calloc((size_t)run->count + 1, sizeof(int));
		if (!chain_f[r])
			goto done;
		for (int b = 1; b < run->count; b++) {
			int vars[2] = {block_op(run, b - 1, run->out_pos),
			               block_op(run, b, run->out_pos)};
			chain_f[r][b] = v.nf;
			if (pareto
			        ? ve_add_pareto(&v, 2, vars, stride, (size_t)d * d, &tv[r].f[tf[r]])
			        : ve_add(&v, 2, vars, stride, (size_t)d * d, T[r], NULL))
				goto done;
		}
	}
	if (ve_run(&v)) {
		snprintf(why, nwhy, "%s", v.fail);
		goto done;
	}
	for (int op = 0; op < p->nops; op++)
		choice[op] = 0;
	if (pareto) {
		double t, m;
		if (ve_pareto_solve(&v, choice, &t, &m)) {
			snprintf(why, nwhy, "%s",
			         v.fail[0] ? v.fail : "no plan fits the memory limit");
			goto done;
		}
		*value = t;
		*mem = m;
	} else {
		*value = ve_value(&v, choice);
		ve_backtrack(&v, choice);
	}
	/* the inside of each compressed block, from its two boundary strategies */
	int *a = pl_calloc((size_t)p->nops, sizeof *a);
	if (!a)
		goto done;
	for (int r = 0; r < c->nruns; r++) {
		const pl_run *run = &c->runs[r];
		for (int b = 1; b < run->count; b++) {
			a[block_op(run, 0, run->out_pos)] =
			    choice[block_op(run, b - 1, run->out_pos)];
			a[block_op(run, 1, run->out_pos)] = choice[block_op(run, b, run->out_pos)];
			if (pareto)
				ve_pareto_backtrack(&tv[r], tf[r], v.f[chain_f[r][b]].chosen, a);
			else
				ve_backtrack(&tv[r], a);
			for (int k = 0; k < run->len; k++)
				if (k != run->out_pos)
					choice[block_op(run, b, k)] = a[block_op(run, 1, k)];
		}
	}
	free(a);
	if (truncated) {
		*truncated = v.truncated;
		for (int r = 0; r < ntv; r++)
			*truncated |= tv[r].truncated;
	}
	ok = 0;
done:
	for (int r = 0; r < ntv; r++) {
		ve_free(&tv[r]);
		free(T[r]);
		free(chain_f[r]);
	}
	ve_free(&v);
	return ok;
}

static void plan_totals(pl_problem *p, const int *choice, double *t, double *m)
{
	int64_t **splits = pl_malloc(sizeof *splits * (size_t)p->nops);
	if (!splits) {
		*t = *m = 0;
		return;
	}
	for (int o = 0; o < p->nops; o++)
		splits[o] = p->strat[o] + (size_t)choice[o] * (size_t)p->g->ops[o].spec.nloops;
	pl_plancost pc;
	pl_cost_plan(p, splits, &pc, NULL);
	*t = pc.step_s;
	*m = pc.mem_bytes;
	free(splits);
}

/* Long on purpose: dp's steps in their order (repeated
 * layers, the template, the elimination, under the memory limit the least
 * memory and the Pareto elimination, the result and why), each short. */
pl_status pl_search_dp(pl_problem *p, const pl_search_opts *o, pl_search_result *r, pl_err *err)
{
	double t0 = pl_now();
	pl_status st = PL_OK;
	dpctx c = {.p = p, .o = o};
	memset(r, 0, sizeof *r);
	c.kind = pl_calloc((size_t)p->nops, sizeof *c.kind);
	c.run_of = pl_malloc(sizeof *c.run_of * (size_t)p->nops);
	c.time_tab = pl_calloc((size_t)p->nops, sizeof *c.time_tab);
	c.mem_tab = pl_calloc((size_t)p->nops, sizeof *c.mem_tab);
	r->choice = pl_calloc((size_t)p->nops, sizeof *r->choice);
	int *alt = pl_calloc((size_t)p->nops, sizeof *alt);
	char why[256] = "";
	if (!c.kind || !c.run_of || !c.time_tab || !c.mem_tab || !r->choice || !alt) {
		st = pl_err_set(err, PL_ENOMEM, "dp: out of memory");
		goto cleanup;
	}
	if (o->time_limit_s > 0)
		c.deadline = t0 + o->time_limit_s;
	c.nruns = o->no_repeat ? 0 : pl_problem_runs(p, c.runs, 64);
	for (int op = 0; op < p->nops; op++)
		c.run_of[op] = -1;
	for (int k = 0; k < c.nruns; k++) {
		const pl_run *run = &c.runs[k];
		r->repeated_runs++;
		r->repeated_layers += run->count;
		for (int b = 1; b < run->count; b++)
			for (int i = 0; i < run->len; i++) {
				int op = block_op(run, b, i);
				c.kind[op] = i == run->out_pos ? OP_CHAIN : OP_HIDDEN;
				c.run_of[op] = k;
			}
	}
	if (c.nruns)
		progress(&c, "dp: %s%g repeated blocks solved once", "",
		         (double)r->repeated_layers);
	{ /* price every edge the elimination will read, on all cores */
		int *need = pl_malloc(sizeof *need * ((size_t)p->nedges + 1)), n = 0;
		if (!need) {
			st = pl_err_set(err, PL_ENOMEM, "dp: out of memory");
			goto cleanup;
		}
		for (int e = 0; e < p->nedges; e++) {
			const pl_edge *ed = &p->edges[e];
			int ks = c.kind[ed->src_op], kd = c.kind[ed->dst_op];
			int in_template = 0;
			for (int k = 0; k < c.nruns; k++) {
				const pl_run *run = &c.runs[k];
				int lo = block_op(run, 1, 0), hi = lo + run->len;
				in_template |= ed->dst_op >= lo && ed->dst_op < hi;
			}
			if (((kd == OP_EXPANDED && ks != OP_HIDDEN) || in_template) &&
			    !relaxed(&c, e))
				need[n++] = e;
		}
		progress(&c, "dp: pricing %s%g edges", "", (double)n);
		int bad = pl_problem_prepare_by(p, need, n, o->threads, c.deadline);
		free(need);
		if (bad) {
			st = bad > 0 ? pl_err_set(err, PL_ETIMEOUT,
			                          "dp: the time limit ran out (pricing the edges)")
			             : pl_err_set(err, PL_ENOMEM, "dp: out of memory");
			goto cleanup;
		}
	}
	double value, mem_unused;
	if (solve(&c, 0, r->choice, &value, &mem_unused, NULL, why, sizeof why)) {
		int late = c.deadline > 0 && pl_now() > c.deadline;
		st = pl_err_set(err, late ? PL_ETIMEOUT : PL_ESOLVER, "dp: %s%s",
		                why[0] ? why : "out of memory",
		                why[0] && !late ? " (--mode rec or auto plans it, unproven)" : "");
		goto cleanup;
	}
	plan_totals(p, r->choice, &r->step_s, &r->mem_bytes);
	r->optimal = !c.left_out;
	/* with a memory price the optimum is of time + price x memory: no bound */
	double scale = pl_job_step_scale(&p->job);
	r->bound_s = o->dp.mem_price > 0 ? 0 : c.left_out ? value * scale : r->step_s;
	if (o->memory_limit > 0 && r->mem_bytes > o->memory_limit) {
		progress(&c, "dp: the fastest plan needs %s%.4g bytes; searching under the limit",
		         "", r->mem_bytes);
		/* memory has no edge terms: the sum of each op's least */
		double least = pl_problem_least_plan_memory(p);
		if (least < 0) {
			st = pl_err_set(err, PL_ENOMEM, "dp: out of memory");
			goto cleanup;
		}
		r->min_mem_bytes = least;
		if (least > o->memory_limit) {
			st = pl_search_err_no_fit(err, o->memory_limit, least);
			goto cleanup;
		}
		double t, m;
		int truncated = 0;
		if (solve(&c, 1, alt, &t, &m, &truncated, why, sizeof why)) {
			st = pl_err_set(
			    err, c.deadline > 0 && pl_now() > c.deadline ? PL_ETIMEOUT : PL_ESOLVER,
			    "dp (memory-constrained): %s", why);
			goto cleanup;
		}
		memcpy(r->choice, alt, sizeof *alt * (size_t)p->nops);
		plan_totals(p, r->choice, &r->step_s, &r->mem_bytes);
		r->optimal = !truncated && !c.left_out;
		r->bound_s = truncated || o->dp.mem_price > 0 ? 0
		             : c.left_out                     ? t * scale
		                                              : r->step_s;
		if (truncated)
			snprintf(
			    r->why, sizeof r->why,
			    "a (time, memory) Pareto set was cut to %d points; raise the cap, or "
			    "use --mode ilp, for a proof",
			    o->dp.pareto_cap > 1 ? o->dp.pareto_cap : 256);
	}
	if (c.left_out && !r->why[0]) {
		snprintf(r->why, sizeof r->why,
		         "relaxed: edges with more than %.0f table entries left out (a bound)",
		         o->dp.relax_pairs);
	}
cleanup:
	free_tables(&c);
	free(c.kind);
	free(c.run_of);
	free(alt);
	r->seconds = pl_now() - t0;
	if (st)
		pl_search_result_free(r);
	return st;
}

pl_status pl_dp_min_marginals(pl_problem *p, const pl_search_opts *o, double **mm, double *opt,
                              pl_err *err)
{
	pl_search_opts every = *o;
	every.dp.relax_pairs = 0;
	dpctx c = {.p = p, .o = &every};
	pl_status st = PL_OK;
	ve v;
	int ready = ve_init(&v, p->nops, p->nstrat) == 0;
	c.time_tab = pl_calloc((size_t)p->nops, sizeof *c.time_tab);
	c.mem_tab = pl_calloc((size_t)p->nops, sizeof *c.mem_tab);
	if (!ready || !c.time_tab || !c.mem_tab)
		goto nomem;
	if (o->time_limit_s > 0)
		v.deadline = pl_now() + o->time_limit_s;
	for (int op = 0; op < p->nops; op++)
		if (add_unary(&c, &v, op))
			goto nomem;
	for (int e = 0; e < p->nedges; e++)
		if (add_edge(&c, &v, e))
			goto nomem;
	if (ve_run(&v)) {
		st = pl_err_set(err,
		                v.deadline > 0 && pl_now() > v.deadline ? PL_ETIMEOUT : PL_ESOLVER,
		                "dp (min-marginals): %s", v.fail);
		goto cleanup;
	}
	if (ve_min_marginals(&v, mm))
		goto nomem;
	*opt = 1e300;
	for (int k = 0; p->nops > 0 && mm[0] && k < p->nstrat[0]; k++)
		if (mm[0][k] < *opt)
			*opt = mm[0][k];
	goto cleanup;
nomem:
	st = pl_err_set(err, PL_ENOMEM, "dp (min-marginals): out of memory");
cleanup:
	free_tables(&c);
	ve_free(&v); /* also after a failed ve_init */
	return st;
}
