/* rec: recursive programming in the spirit of MindSpore's double-recursive
 * planner. The devices are cut step by step by the prime factors of D
 * (largest first), and at each step every op multiplies the split of one of
 * its loops by the factor: the loop whose cut costs least given its
 * neighbours as they stand (already cut in this step, or as of the last one).
 * Heavy ops choose first (by node cost); element-wise and other light ops
 * follow and so take their neighbours' cuts. Repeated layers are decided once
 * (blocks 0 and 1) and copied to the rest.
 * Not optimal, fast: ops x log2(D) x loops x (1 + degree) cost evaluations on
 * the decided part only. Under a memory limit it says so (exit 3) when its
 * plan does not fit, rather than return it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search/search.h"
#include "search/ve.h"
#include "planner/ops.h"
#include "planner/alloc.h"

typedef struct recctx {
	pl_problem *p;
	int64_t *split; /* nops x PL_MAX_LOOPS */
	char *active;   /* decided here (not a hidden copy) */
	char *done;     /* cut in the current step */
} recctx;

static int64_t *S(const recctx *c, int o)
{
	return c->split + (size_t)o * PL_MAX_LOOPS;
}

/* Cost of op o at split s against its active neighbours' current splits. */
static double local_cost(const recctx *c, int o, const int64_t *s)
{
	const pl_problem *p = c->p;
	pl_nodecost n;
	pl_cost_node(p, o, s, &n);
	double t = n.compute_s + n.comm_s;
	for (int k = 0; k < p->op_nedges[o]; k++) {
		const pl_edge *e = &p->edges[p->op_edges[o][k]];
		int other = e->src_op == o ? e->dst_op : e->src_op;
		if (!c->active[other])
			continue;
		const int64_t *so = e->src_op == o ? s : S(c, other);
		const int64_t *sd = e->dst_op == o ? s : S(c, other);
		t += pl_cost_edge(p, p->op_edges[o][k], so, sd);
	}
	return t;
}

static int heavy(const pl_op *op)
{
	return (pl_op_traits(op) & PL_OPT_ANCHOR) != 0;
}

typedef struct keyed {
	double key;
	int op;
} keyed;

static int by_key_desc(const void *a, const void *b)
{
	const keyed *x = a, *y = b;
	if (x->key != y->key)
		return x->key > y->key ? -1 : 1;
	return x->op - y->op;
}

/* The neighbourhood of a split: itself and every move of one prime factor
 * from one loop to another (or onto a loop, where devices are left). */
static int neighbours(const pl_problem *p, int op, const int64_t *s, int64_t D,
                      const int64_t *primes, int np, int64_t *out, int max)
{
	const pl_op *x = &p->g->ops[op];
	int n = 0, nl = x->spec.nloops;
	memcpy(out, s, sizeof(int64_t) * (size_t)nl);
	n = 1;
	for (int i = -1; i < nl; i++)
		for (int j = 0; j < nl; j++) {
			if (i == j || !pl_problem_cuttable(p, op, j))
				continue;
			for (int q = 0; q < np && n < max; q++) {
				int64_t f = primes[q];
				if (q > 0 && primes[q - 1] == f)
					continue;
				if (i >= 0 && s[i] % f)
					continue;
				if (i < 0 && D % (pl_split_product(x, s) * f))
					continue;
				if ((x->spec.loop[j].size / s[j]) % f)
					continue;
				int64_t *c = out + (size_t)n * nl;
				memcpy(c, s, sizeof(int64_t) * (size_t)nl);
				if (i >= 0)
					c[i] /= f;
				c[j] *= f;
				n++;
			}
		}
	return n;
}

#define MAXN 128

/* Keeps the splits of cand[0..n) that the problem's fixed degrees admit,
 * the first (the op's own) always; returns how many. */
static int admitted(const pl_problem *p, int op, int64_t *cand, int n)
{
	int nl = p->g->ops[op].spec.nloops, k = 1;
	for (int i = 1; i < n; i++)
		if (pl_problem_admits(p, op, cand + (size_t)i * nl))
			memmove(cand + (size_t)k++ * nl, cand + (size_t)i * nl,
			        sizeof(int64_t) * (size_t)nl);
	return k;
}

/* With fixed degrees (--dp, --tp, ...), an op whose cut does not keep to
 * them takes the candidate (all keep to them) that costs least against its
 * neighbours as they stand, heavy ops first. */
static void repair_degrees(recctx *c, keyed *order)
{
	pl_problem *p = c->p;
	const pl_graph *g = p->g;
	int no = 0;
	for (int op = 0; op < g->nops; op++)
		if (c->active[op] && !g->ops[op].has_strategy)
			order[no++] = (keyed){heavy(&g->ops[op]) ? 1 : 0, op};
	qsort(order, (size_t)no, sizeof *order, by_key_desc);
	for (int i = 0; i < no; i++) {
		int op = order[i].op, nl = g->ops[op].spec.nloops, best = -1;
		if (pl_problem_admits(p, op, S(c, op)))
			continue;
		double bt = 0;
		for (int k = 0; k < p->nstrat[op]; k++) {
			double t = local_cost(c, op, p->strat[op] + (size_t)k * nl);
			if (best < 0 || t < bt) {
				best = k;
				bt = t;
			}
		}
		if (best >= 0)
			memcpy(S(c, op), p->strat[op] + (size_t)best * nl,
			       sizeof(int64_t) * (size_t)nl);
	}
}

/* Large-neighbourhood polish: the exact optimum (variable elimination, as in
 * dp) over each op's neighbourhood of its current split; repeated while the
 * plan improves. Captures coordinated moves along chains that single-op
 * changes cannot make. Returns -1 when out of memory.
 * Long on purpose (about 125 lines): per op its neighbourhood's candidates,
 * node and edge tables and elimination in one pass, the tables freed as the
 * op is done. */
static int polish(recctx *c, const int64_t *primes, int np)
{
	pl_problem *p = c->p;
	const pl_graph *g = p->g;
	int n = g->nops, rc = -1;
	int *dom = pl_calloc((size_t)n, sizeof *dom), *a = pl_calloc((size_t)n, sizeof *a);
	int64_t **cand = pl_calloc((size_t)n, sizeof *cand);
	double **node = pl_calloc((size_t)n, sizeof *node),
	       **tab = pl_calloc((size_t)p->nedges + 1, sizeof *tab);
	pl_layout *ls = pl_malloc(sizeof *ls * MAXN), *ld = pl_malloc(sizeof *ld * 2 * MAXN);
	if (!dom || !a || !cand || !node || !tab || !ls || !ld)
		goto out;
	double prev = -1;
	for (int round = 0; round < 4; round++) {
		for (int op = 0; op < n; op++) {
			dom[op] = 1;
			free(cand[op]);
			cand[op] = pl_malloc(sizeof(int64_t) * PL_MAX_LOOPS * MAXN);
			if (!cand[op])
				goto out;
			if (!c->active[op] || g->ops[op].has_strategy)
				memcpy(cand[op], S(c, op),
				       sizeof(int64_t) * (size_t)g->ops[op].spec.nloops);
			else
				dom[op] = admitted(p, op, cand[op],
				                   neighbours(p, op, S(c, op), p->devices, primes,
				                              np, cand[op], MAXN));
		}
		ve v;
		if (ve_init(&v, n, dom))
			goto out;
		int bad = 0;
		for (int op = 0; op < n && !bad; op++) {
			if (!c->active[op])
				continue;
			free(node[op]);
			node[op] = pl_malloc(sizeof(double) * (size_t)dom[op]);
			if (!node[op]) {
				bad = 1;
				break;
			}
			int nl = g->ops[op].spec.nloops;
			for (int k = 0; k < dom[op]; k++) {
				pl_nodecost nc;
				pl_cost_node(p, op, cand[op] + (size_t)k * nl, &nc);
				node[op][k] = nc.compute_s + nc.comm_s;
			}
			size_t one = 1;
			bad |= ve_add(&v, 1, &op, &one, (size_t)dom[op], node[op], NULL) != 0;
		}
		for (int e = 0; e < p->nedges && !bad; e++) {
			const pl_edge *ed = &p->edges[e];
			int s = ed->src_op, d = ed->dst_op;
			if (!c->active[s] || !c->active[d])
				continue;
			const pl_op *so = &g->ops[s], *dop = &g->ops[d];
			for (int k = 0; k < dom[s]; k++) {
				const int64_t *sp = cand[s] + (size_t)k * so->spec.nloops;
				if (ed->src_is_input)
					pl_op_input_layout(g, so, sp, p->devices, ed->src_slot,
					                   &ls[k]);
				else
					pl_op_output_layout(g, so, sp, p->devices, ed->src_slot,
					                    &ls[k]);
			}
			for (int k = 0; k < dom[d]; k++) {
				const int64_t *dp = cand[d] + (size_t)k * dop->spec.nloops;
				pl_op_input_layout(g, dop, dp, p->devices, ed->dst_slot,
				                   &ld[2 * k]);
				pl_op_input_grad_layout(g, dop, dp, p->devices, ed->dst_slot,
				                        &ld[2 * k + 1]);
			}
			free(tab[e]);
			tab[e] = pl_malloc(sizeof(double) * (size_t)dom[s] * (size_t)dom[d]);
			if (!tab[e]) {
				bad = 1;
				break;
			}
			for (int i = 0; i < dom[s]; i++)
				for (int j = 0; j < dom[d]; j++)
					tab[e][(size_t)i * dom[d] + j] = pl_cost_edge_layouts(
					    p, e, &ls[i], &ld[2 * j], &ld[2 * j + 1]);
			int vars[2] = {s, d};
			size_t stride[2] = {(size_t)dom[d], 1};
			bad |=
			    ve_add(&v, 2, vars, stride, (size_t)dom[s] * dom[d], tab[e], NULL) != 0;
		}
		if (bad) {
			ve_free(&v);
			goto out;
		}
		if (ve_run(&v)) { /* neighbourhoods too entangled to solve exactly
			           * (DenseNet's concatenations): the plan so far */
			ve_free(&v);
			break;
		}
		memset(a, 0, sizeof *a * (size_t)n);
		double val = ve_value(&v, a);
		ve_backtrack(&v, a);
		ve_free(&v);
		for (int op = 0; op < n; op++)
			if (c->active[op])
				memcpy(S(c, op), cand[op] + (size_t)a[op] * g->ops[op].spec.nloops,
				       sizeof(int64_t) * (size_t)g->ops[op].spec.nloops);
		if (prev >= 0 && val >= prev * (1 - 1e-9))
			break;
		prev = val;
	}
	rc = 0;
out:
	for (int op = 0; cand && op < n; op++) {
		free(cand[op]);
		if (node)
			free(node[op]);
	}
	for (int e = 0; tab && e < p->nedges; e++)
		free(tab[e]);
	free(dom);
	free(a);
	free(cand);
	free(node);
	free(tab);
	free(ls);
	free(ld);
	return rc;
}

/* Long on purpose (about 130 lines): rec's passes in their order (the repeated
 * layers, the prime factors of the devices, each factor's assignment op by op,
 * the degrees kept, the polish, the hidden blocks copied, the result), each
 * a few lines over the same context. */
pl_status pl_search_rec(pl_problem *p, const pl_search_opts *o, pl_search_result *r, pl_err *err)
{
	double t0 = ve_now();
	memset(r, 0, sizeof *r);
	pl_status st = PL_OK;
	const pl_graph *g = p->g;
	recctx c = {.p = p};
	pl_run runs[64];
	int nruns = o->no_repeat ? 0 : pl_problem_runs(p, runs, 64);
	c.split = pl_malloc(sizeof *c.split * (size_t)g->nops * PL_MAX_LOOPS);
	c.active = pl_calloc((size_t)g->nops, 1);
	c.done = pl_calloc((size_t)g->nops, 1);
	keyed *order = pl_malloc(sizeof *order * ((size_t)g->nops + 1));
	r->choice = pl_calloc((size_t)g->nops, sizeof *r->choice);
	if (!c.split || !c.active || !c.done || !order || !r->choice) {
		st = pl_err_set(err, PL_ENOMEM, "rec: out of memory");
		goto cleanup;
	}
	for (int op = 0; op < g->nops; op++) {
		c.active[op] = 1;
		for (int l = 0; l < PL_MAX_LOOPS; l++)
			S(&c, op)[l] = 1;
		if (g->ops[op].has_strategy)
			memcpy(S(&c, op), g->ops[op].strategy, sizeof(int64_t) * PL_MAX_LOOPS);
	}
	for (int k = 0; k < nruns; k++)
		for (int b = 2; b < runs[k].count; b++)
			for (int i = 0; i < runs[k].len; i++)
				c.active[runs[k].first + b * runs[k].len + i] = 0;
	/* prime factors of D, largest first */
	int64_t primes[64], D = p->devices, n = D;
	int np = 0;
	for (int64_t f = 2; f * f <= n; f++)
		while (n % f == 0) {
			primes[np++] = f;
			n /= f;
		}
	if (n > 1)
		primes[np++] = n;
	for (int i = 0; i < np / 2; i++) {
		int64_t t = primes[i];
		primes[i] = primes[np - 1 - i];
		primes[np - 1 - i] = t;
	}
	/* The steps price partial cuts, the devices not yet cut standing as
	 * replicas: on one convention for every op (the major axis), so that
	 * neighbours cut alike meet without a redistribution whatever they read;
	 * the plan itself is priced on the problem's. The copies are read only
	 * (pl_cost_node and pl_cost_edge fill no table). */
	pl_graph gu = *g;
	pl_problem pu = *p;
	gu.ops = pl_malloc(sizeof *gu.ops * ((size_t)g->nops + 1));
	if (!gu.ops)
		goto nomem;
	memcpy(gu.ops, g->ops, sizeof *gu.ops * (size_t)g->nops);
	for (int op = 0; op < g->nops; op++)
		gu.ops[op].replica_minor = 0;
	pu.g = &gu;
	c.p = &pu;
	for (int step = 0; step < np; step++) {
		int64_t f = primes[step];
		int no = 0;
		for (int op = 0; op < g->nops; op++) {
			if (!c.active[op] || g->ops[op].has_strategy)
				continue;
			pl_nodecost nc;
			pl_cost_node(&pu, op, S(&c, op), &nc);
			/* heavy ops first, by cost; then the rest in graph order */
			order[no++] = (keyed){
			    heavy(&g->ops[op]) ? 1e300 - 1e290 + nc.compute_s : -(double)op, op};
		}
		qsort(order, (size_t)no, sizeof *order, by_key_desc);
		for (int i = 0; i < no; i++) {
			int op = order[i].op;
			const pl_op *x = &g->ops[op];
			int64_t *s = S(&c, op);
			if (D % (pl_split_product(x, s) * f))
				continue;
			double best = 0;
			int best_l = -1;
			for (int l = 0; l < x->spec.nloops; l++) {
				const pl_loop *lp = &x->spec.loop[l];
				if (!pl_problem_cuttable(p, op, l) || (lp->size / s[l]) % f)
					continue;
				s[l] *= f;
				double t = local_cost(&c, op, s);
				s[l] /= f;
				if (best_l < 0 || t < best) {
					best = t;
					best_l = l;
				}
			}
			if (best_l >= 0)
				s[best_l] *= f;
		}
		if (o->time_limit_s > 0 && ve_now() - t0 > o->time_limit_s) {
			free(gu.ops);
			st = pl_err_set(err, PL_ETIMEOUT, "rec: the time limit of %g s ran out",
			                o->time_limit_s);
			goto cleanup;
		}
	}
	c.p = p;
	free(gu.ops);
	if (p->roles)
		repair_degrees(&c, order);
	if (polish(&c, primes, np))
		goto nomem;
	/* hidden blocks copy block 1 */
	for (int k = 0; k < nruns; k++)
		for (int b = 2; b < runs[k].count; b++)
			for (int i = 0; i < runs[k].len; i++)
				memcpy(S(&c, runs[k].first + b * runs[k].len + i),
				       S(&c, runs[k].first + runs[k].len + i),
				       sizeof(int64_t) * PL_MAX_LOOPS);
	/* the candidate index where the split is a candidate */
	for (int op = 0; op < g->nops; op++) {
		int nl = g->ops[op].spec.nloops;
		r->choice[op] = 0;
		for (int k = 0; k < p->nstrat[op]; k++)
			if (!memcmp(p->strat[op] + (size_t)k * nl, S(&c, op),
			            sizeof(int64_t) * (size_t)nl))
				r->choice[op] = k;
	}
	r->splits = c.split;
	c.split = NULL;
	if (pl_search_result_price(p, r)) {
		st = pl_err_set(err, PL_ENOMEM, "rec: out of memory");
		goto cleanup;
	}
	r->optimal = 0;
	snprintf(r->why, sizeof r->why, "rec is a heuristic");
	for (int k = 0; k < nruns; k++)
		r->repeated_layers += runs[k].count;
	if (o->memory_limit > 0 && r->mem_bytes > o->memory_limit)
		st = pl_search_err_over_limit(err, "rec's plan", r->mem_bytes, o->memory_limit,
		                              "--mode dp or ilp search under the limit");
	goto cleanup;
nomem:
	st = pl_err_set(err, PL_ENOMEM, "rec: out of memory");
cleanup:
	free(c.split);
	free(c.active);
	free(c.done);
	free(order);
	r->seconds = ve_now() - t0;
	if (st)
		pl_search_result_free(r);
	return st;
}
