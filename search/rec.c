/* rec: recursive programming in the spirit of MindSpore's double-recursive
 * planner. The devices are cut step by step by the prime factors of D
 * (largest first), and at each step every op multiplies the split of one of
 * its loops by the factor: the loop whose cut costs least given its
 * neighbours as they stand (already cut in this step, or as of the last one).
 * Heavy ops choose first (by node cost); element-wise and other light ops
 * follow and so take their neighbours' cuts. The plan is then polished: the
 * exact optimum over every op's neighbourhood at once (variable elimination,
 * as dp, on a few candidates per op), and ICM over each op's candidates, in
 * turn while they improve it; small graphs also from three other starts.
 * Repeated layers of large graphs are decided once (blocks 0 and 1) and
 * copied to the rest. Under a memory limit a price on memory is searched and
 * the plans that fit are improved within the limit (rec_within).
 * Not optimal, fast: per polish round, the neighbourhoods' tables (about
 * edges x 20^2 cost evaluations on the decided part, or lookups in the
 * problem's tables where an edge's ends have few candidates) and an
 * elimination capped at 2^20-entry tables; a few rounds. Its plan never
 * beats dp's optimum and is within 15 % of it on the random graphs of
 * tests/search/test_searchers.c (both checked there). */
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

#include "search/search.h"
#include "search/ve.h"
#include "graph/ops.h"
#include "graph/alloc.h"
#include "graph/roles.h"
#include "graph/clock.h"

typedef struct keyed {
	double key;
	int op;
} keyed;

typedef struct recctx {
	pl_problem *p;
	int64_t *split; /* nops x PL_MAX_LOOPS */
	char *active;   /* decided here (not a hidden copy) */
	char *done;     /* cut in the current step */
	double lam;     /* seconds added per byte of an op's memory (a memory limit's price) */
	keyed *ord;     /* room for any op's candidates (by_node) */
	unsigned *ver;  /* per op: bumped when its split changes */
	/* per op: extra()'s last picks (XMAX candidate indices, xn of them; -1:
	 * none yet) and the sum of its neighbours' ver when it picked them */
	int *xk, *xn;
	unsigned *xsum;
	int64_t *keep;  /* room for a plan (rec_plan's first start) */
	uint8_t *roles; /* pl_loop_roles: the batch loops of the data-parallel start */
	size_t built;   /* the most table entries a wide polish's elimination built */
	int repeated;   /* repeated layers are decided once */
	double deadline;
} recctx;

static int64_t *S(const recctx *c, int o)
{
	return c->split + (size_t)o * PL_MAX_LOOPS;
}

/* op's split set to the problem's strategy k of op */
static void take_strat(const recctx *c, int op, int k)
{
	int nl = c->p->g->ops[op].spec.nloops;
	memcpy(S(c, op), c->p->strat[op] + (size_t)k * nl, sizeof(int64_t) * (size_t)nl);
}

/* Cost of op o's edges at split s against its active neighbours' current
 * splits, edge skip left out. */
static double edge_cost_but(const recctx *c, int o, const int64_t *s, int skip)
{
	const pl_problem *p = c->p;
	double t = 0;
	for (int k = 0; k < p->op_nedges[o]; k++) {
		const pl_edge *e = &p->edges[p->op_edges[o][k]];
		int other = e->src_op == o ? e->dst_op : e->src_op;
		if (!c->active[other] || p->op_edges[o][k] == skip)
			continue;
		const int64_t *so = e->src_op == o ? s : S(c, other);
		const int64_t *sd = e->dst_op == o ? s : S(c, other);
		t += pl_cost_edge(p, p->op_edges[o][k], so, sd);
	}
	return t;
}

static double edge_cost(const recctx *c, int o, const int64_t *s)
{
	return edge_cost_but(c, o, s, -1);
}

/* Cost of op o at split s against its active neighbours' current splits. */
static double local_cost(const recctx *c, int o, const int64_t *s)
{
	pl_nodecost n;
	pl_cost_node(c->p, o, s, &n);
	return n.compute_s + n.comm_s + c->lam * n.mem_bytes + edge_cost(c, o, s);
}

static int heavy(const pl_op *op)
{
	return (pl_op_traits(op) & PL_OPT_ANCHOR) != 0;
}

static int by_key_desc(const void *a, const void *b)
{
	const keyed *x = a, *y = b;
	if (x->key != y->key)
		return x->key > y->key ? -1 : 1;
	return x->op - y->op;
}

/* Op's candidates cheapest node cost first (at the memory price) into ord:
 * .op the candidate, .key minus its cost. Edges cost at least 0, so a scan in
 * this order may stop at the first candidate whose node alone costs more
 * than the best whole local cost so far. 0, or -1 out of memory. */
static int by_node(recctx *c, int op, keyed *ord)
{
	const pl_nodecost *n = pl_problem_node(c->p, op);
	if (!n)
		return -1;
	for (int k = 0; k < c->p->nstrat[op]; k++)
		ord[k] = (keyed){-(n[k].compute_s + n[k].comm_s + c->lam * n[k].mem_bytes), k};
	qsort(ord, (size_t)c->p->nstrat[op], sizeof *ord, by_key_desc);
	return 0;
}

/* The neighbourhood of a split: itself and every move of one prime factor
 * from one loop to another (or onto a loop, where devices are left, or off
 * one, where the problem offers cuts over fewer than all devices). */
static int neighbours(const pl_problem *p, int op, const int64_t *s, int64_t D,
                      const int64_t *primes, int np, int64_t *out, int max)
{
	const pl_op *x = &p->g->ops[op];
	int n = 0, nl = x->spec.nloops;
	memcpy(out, s, sizeof(int64_t) * (size_t)nl);
	n = 1;
	for (int i = 0; p->replicas && i < nl; i++)
		for (int q = 0; q < np && n < max; q++) {
			if ((q > 0 && primes[q - 1] == primes[q]) || s[i] % primes[q])
				continue;
			int64_t *c = out + (size_t)n * nl;
			memcpy(c, s, sizeof(int64_t) * (size_t)nl);
			c[i] /= primes[q];
			n++;
		}
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
			take_strat(c, op, best);
	}
}

/* Appends split s to cand[0..*n) (room for max) unless it is there. */
static void add_unique(int64_t *cand, int *n, int max, int nl, const int64_t *s)
{
	for (int i = 0; i < *n; i++)
		if (!memcmp(cand + (size_t)i * nl, s, sizeof(int64_t) * (size_t)nl))
			return;
	if (*n < max)
		memcpy(cand + (size_t)(*n)++ * nl, s, sizeof(int64_t) * (size_t)nl);
}

/* TABCAP: the largest problem table polish builds (an edge's candidates
 * squared: dp's on 8 devices, not on 512) */
enum { TABSIDE = 128, TABCAP = 8192 };
/* rec_plan's other starts only where the first start's polish built at most
 * SEEDCAP table entries (llama.onnx on 64 devices: 96587, 1.46 -> 1.00x dp;
 * the polish of a graph of MobileNet's width, 512k, costs as
 * much as dp's whole search); on a graph of repeated layers with more than
 * SEEDOPS decided ops only the first two (Swin, seq2seq: 1.42 and 1.16x dp
 * without them, 1.00x with; the third start's cost is left to small graphs) */
enum { SEEDOPS = 40, SEEDCAP = 1 << 17 };
/* WIDE_ENTRIES: the largest table a wide polish's elimination builds (4x in
 * all); past it, as on DenseNet's concatenations, the narrow polish runs */
enum { WIDE_ENTRIES = 1 << 20 };
/* ALL_BLOCKS: graphs of at most this many ops have every repeated block decided */
enum { ALL_BLOCKS = 128 };
enum { FEW = 32, SCAN = 16, TOP = 4, NODE = 2, NEDGE = 16, XMAX = NODE + TOP + NEDGE };

/* Adds to op's polish domain cand[0..n) (room for max) candidates of dp's
 * domain that one factor's moves may not reach: the whole list when it is
 * short (FEW); else the NODE cheapest alone (where its neighbours may
 * follow), and of the SCAN cheapest nodes the TOP that cost least against
 * the decided neighbours as they stand and, for each neighbour, the one that
 * meets its split at least cost (SCAN bounds the cost on large meshes, where
 * an op has hundreds of candidates). A chain's coordinated change (a
 * transpose turned round with its consumers, a cut moved by two factors at
 * once) is then within one polish. Returns the new count, -1 out of memory. */
static int extra(recctx *c, int op, int64_t *cand, int n, int max)
{
	const pl_problem *p = c->p;
	int nl = p->g->ops[op].spec.nloops, ns = p->nstrat[op];
	if (ns <= FEW) {
		for (int k = 0; k < ns; k++)
			add_unique(cand, &n, max, nl, p->strat[op] + (size_t)k * nl);
		return n;
	}
	int be[NEDGE], bk[NEDGE], ne = 0, top[TOP] = {0}, nt = 0, *xk = c->xk + (size_t)op * XMAX;
	double bc[NEDGE], tc[TOP];
	unsigned sum = 0;
	for (int k = 0; k < p->op_nedges[op] && ne < NEDGE; k++) {
		const pl_edge *e = &p->edges[p->op_edges[op][k]];
		int other = e->src_op == op ? e->dst_op : e->src_op;
		if (c->active[other]) {
			sum += c->ver[other];
			bk[ne] = -1;
			be[ne++] = p->op_edges[op][k];
		}
	}
	if (c->xn[op] >= 0 && c->xsum[op] == sum) { /* its neighbours as they were */
		for (int i = 0; i < c->xn[op]; i++)
			add_unique(cand, &n, max, nl, p->strat[op] + (size_t)xk[i] * nl);
		return n;
	}
	if (by_node(c, op, c->ord))
		return -1;
	for (int j = 0; j < ns; j++) {
		int k = c->ord[j].op;
		double t = -c->ord[j].key;
		if (j >= SCAN || (nt == TOP && t >= tc[TOP - 1]))
			break;
		const int64_t *sk = p->strat[op] + (size_t)k * nl;
		for (int i = 0; i < ne; i++) {
			const pl_edge *e = &p->edges[be[i]];
			int other = e->src_op == op ? e->dst_op : e->src_op;
			double ec = pl_cost_edge(p, be[i], e->src_op == op ? sk : S(c, other),
			                         e->dst_op == op ? sk : S(c, other));
			t += ec;
			if (bk[i] < 0 || ec < bc[i]) {
				bc[i] = ec;
				bk[i] = k;
			}
		}
		/* insertion into the TOP cheapest */
		int at = nt < TOP ? nt++ : TOP;
		while (at > 0 && tc[at - 1] > t) {
			if (at < TOP) {
				tc[at] = tc[at - 1];
				top[at] = top[at - 1];
			}
			at--;
		}
		if (at < TOP) {
			tc[at] = t;
			top[at] = k;
		}
	}
	c->xn[op] = 0;
	c->xsum[op] = sum;
	for (int i = 0; i < NODE && i < ns; i++)
		xk[c->xn[op]++] = c->ord[i].op;
	for (int i = 0; i < ne; i++)
		if (bk[i] >= 0)
			xk[c->xn[op]++] = bk[i];
	for (int i = 0; i < nt; i++)
		xk[c->xn[op]++] = top[i];
	for (int i = 0; i < c->xn[op]; i++)
		add_unique(cand, &n, max, nl, p->strat[op] + (size_t)xk[i] * nl);
	return n;
}

/* The index of split sp among op's candidates, -1 if none. */
static int cand_index(const pl_problem *p, int op, const int64_t *sp)
{
	int nl = p->g->ops[op].spec.nloops;
	for (int k = 0; k < p->nstrat[op]; k++)
		if (!memcmp(p->strat[op] + (size_t)k * nl, sp, sizeof(int64_t) * (size_t)nl))
			return k;
	return -1;
}

/* polish's room: per op its candidates (dom of them, cand; ci their
 * indices among the problem's, or NULL) and node table, per edge its table,
 * the assignment, and the layouts of one edge's ends */
typedef struct polish_ws {
	int *dom, *a;
	int **ci;
	int64_t **cand;
	double **node, **tab;
	pl_layout *ls, *ld;
} polish_ws;

static void polish_ws_free(polish_ws *w, int n, int nedges)
{
	for (int op = 0; w->cand && op < n; op++) {
		free(w->cand[op]);
		if (w->ci)
			free(w->ci[op]);
		if (w->node)
			free(w->node[op]);
	}
	for (int e = 0; w->tab && e < nedges; e++)
		free(w->tab[e]);
	free(w->dom);
	free(w->a);
	free(w->ci);
	free(w->cand);
	free(w->node);
	free(w->tab);
	free(w->ls);
	free(w->ld);
}

static int polish_ws_new(polish_ws *w, int n, int nedges)
{
	*w = (polish_ws){.dom = pl_calloc((size_t)n, sizeof *w->dom),
	                 .a = pl_calloc((size_t)n, sizeof *w->a),
	                 .ci = pl_calloc((size_t)n, sizeof *w->ci),
	                 .cand = pl_calloc((size_t)n, sizeof *w->cand),
	                 .node = pl_calloc((size_t)n, sizeof *w->node),
	                 .tab = pl_calloc((size_t)nedges + 1, sizeof *w->tab),
	                 .ls = pl_malloc(sizeof *w->ls * 2 * MAXN),
	                 .ld = pl_malloc(sizeof *w->ld * 4 * MAXN)};
	return w->dom && w->a && w->ci && w->cand && w->node && w->tab && w->ls && w->ld ? 0 : -1;
}

/* Each op's candidates for a round: its split first, then its neighbours'
 * moves (wide: and extra()'s), with their indices among the problem's
 * candidates where it has few (TABSIDE). 0, or -1 out of memory. */
static int polish_domains(recctx *c, polish_ws *w, const int64_t *primes, int np, int wide)
{
	pl_problem *p = c->p;
	const pl_graph *g = p->g;
	for (int op = 0; op < g->nops; op++) {
		w->dom[op] = 1;
		free(w->cand[op]);
		free(w->ci[op]);
		w->ci[op] = NULL;
		w->cand[op] = pl_malloc(sizeof(int64_t) * PL_MAX_LOOPS * 2 * MAXN);
		if (!w->cand[op])
			return -1;
		if (!c->active[op] || g->ops[op].has_strategy) {
			memcpy(w->cand[op], S(c, op),
			       sizeof(int64_t) * (size_t)g->ops[op].spec.nloops);
			continue;
		}
		w->dom[op] = admitted(
		    p, op, w->cand[op],
		    neighbours(p, op, S(c, op), p->devices, primes, np, w->cand[op], MAXN));
		if (wide && (w->dom[op] = extra(c, op, w->cand[op], w->dom[op], 2 * MAXN)) < 0)
			return -1;
		if (!wide || p->nstrat[op] > TABSIDE)
			continue;
		if (!(w->ci[op] = pl_malloc(sizeof *w->ci[op] * (size_t)w->dom[op])))
			return -1;
		for (int k = 0; k < w->dom[op]; k++)
			w->ci[op][k] =
			    cand_index(p, op, w->cand[op] + (size_t)k * g->ops[op].spec.nloops);
	}
	return 0;
}

/* The active ops' node tables (at the memory price) into v: 0, or 1 out of
 * memory. */
static int polish_nodes(recctx *c, polish_ws *w, ve *v)
{
	pl_problem *p = c->p;
	const pl_graph *g = p->g;
	for (int op = 0; op < g->nops; op++) {
		if (!c->active[op])
			continue;
		free(w->node[op]);
		w->node[op] = pl_malloc(sizeof(double) * (size_t)w->dom[op]);
		if (!w->node[op])
			return 1;
		int nl = g->ops[op].spec.nloops;
		const pl_nodecost *known = w->ci[op] ? pl_problem_node(p, op) : NULL;
		for (int k = 0; k < w->dom[op]; k++) {
			pl_nodecost nc;
			if (known && w->ci[op][k] >= 0)
				nc = known[w->ci[op][k]];
			else
				pl_cost_node(p, op, w->cand[op] + (size_t)k * nl, &nc);
			w->node[op][k] = nc.compute_s + nc.comm_s + c->lam * nc.mem_bytes;
		}
		size_t one = 1;
		if (ve_add(v, 1, &op, &one, (size_t)w->dom[op], w->node[op], NULL))
			return 1;
	}
	return 0;
}

/* Whether edge e's table comes from the problem's: both ends among few
 * candidates (TABCAP), every one of them a candidate of the problem. */
static int polish_known(const pl_problem *p, const polish_ws *w, int s, int d)
{
	int known = w->ci[s] && w->ci[d] && (double)p->nstrat[s] * p->nstrat[d] <= TABCAP;
	for (int k = 0; known && k < w->dom[s]; k++)
		known = w->ci[s][k] >= 0;
	for (int k = 0; known && k < w->dom[d]; k++)
		known = w->ci[d][k] >= 0;
	return known;
}

/* Edge e's table over its ends' candidates: from the problem's table
 * (polish_known), else priced from their layouts. 0, or 1 out of memory. */
static int polish_edge(recctx *c, polish_ws *w, int e)
{
	pl_problem *p = c->p;
	const pl_graph *g = p->g;
	const pl_edge *ed = &p->edges[e];
	int s = ed->src_op, d = ed->dst_op, ds = w->dom[s], dd = w->dom[d];
	free(w->tab[e]);
	double *tab = w->tab[e] = pl_malloc(sizeof(double) * (size_t)ds * (size_t)dd);
	if (!tab)
		return 1;
	const double *full = polish_known(p, w, s, d) ? pl_problem_edge(p, e) : NULL;
	if (full) {
		for (int i = 0; i < ds; i++)
			for (int j = 0; j < dd; j++)
				tab[(size_t)i * dd + j] =
				    full[(size_t)w->ci[s][i] * p->nstrat[d] + w->ci[d][j]];
		return 0;
	}
	if (polish_known(p, w, s, d))
		return 1; /* the problem's table: out of memory */
	const pl_op *so = &g->ops[s], *dop = &g->ops[d];
	for (int k = 0; k < ds; k++) {
		const int64_t *sp = w->cand[s] + (size_t)k * so->spec.nloops;
		if (ed->src_is_input)
			pl_op_input_layout(g, so, sp, p->devices, ed->src_slot, &w->ls[k]);
		else
			pl_op_output_layout(g, so, sp, p->devices, ed->src_slot, &w->ls[k]);
	}
	for (int k = 0; k < dd; k++) {
		const int64_t *dp = w->cand[d] + (size_t)k * dop->spec.nloops;
		pl_op_input_layout(g, dop, dp, p->devices, ed->dst_slot, &w->ld[2 * k]);
		pl_op_input_grad_layout(g, dop, dp, p->devices, ed->dst_slot, &w->ld[2 * k + 1]);
	}
	for (int i = 0; i < ds; i++)
		for (int j = 0; j < dd; j++)
			tab[(size_t)i * dd + j] =
			    pl_cost_edge_layouts(p, e, &w->ls[i], &w->ld[2 * j], &w->ld[2 * j + 1]);
	return 0;
}

/* What rec's steps return (each names the ones it can) */
typedef enum {
	REC_NOMEM = -1,  /* out of memory */
	REC_DONE = 0,    /* done: c's splits are the plan */
	REC_LATE = 1,    /* past the deadline */
	REC_NOFIT = 2,   /* rec_within: no memory price made a plan fit; shrink: no move left */
	REC_TANGLED = 3, /* polish: the first round too entangled to solve exactly (the plan as
	                  * it was) */
} rec_outcome;

/* The edges' tables between active ops into v: REC_DONE, REC_NOMEM, or REC_LATE
 * (a table priced on first use takes seconds on thousands of devices: the plan
 * as it is). */
static rec_outcome polish_edges(recctx *c, polish_ws *w, ve *v)
{
	pl_problem *p = c->p;
	for (int e = 0; e < p->nedges; e++) {
		const pl_edge *ed = &p->edges[e];
		int s = ed->src_op, d = ed->dst_op;
		if (!c->active[s] || !c->active[d])
			continue;
		if (c->deadline > 0 && pl_now() > c->deadline)
			return REC_LATE;
		if (polish_edge(c, w, e))
			return REC_NOMEM;
		int vars[2] = {s, d};
		size_t stride[2] = {(size_t)w->dom[d], 1};
		if (ve_add(v, 2, vars, stride, (size_t)w->dom[s] * w->dom[d], w->tab[e], NULL))
			return REC_NOMEM;
	}
	return REC_DONE;
}

/* The ops that eliminated to another candidate than their split (candidate
 * 0) take it: whether any did. */
static int polish_apply(recctx *c, const polish_ws *w)
{
	const pl_graph *g = c->p->g;
	int changed = 0;
	for (int op = 0; op < g->nops; op++)
		if (c->active[op] && w->a[op]) {
			memcpy(S(c, op), w->cand[op] + (size_t)w->a[op] * g->ops[op].spec.nloops,
			       sizeof(int64_t) * (size_t)g->ops[op].spec.nloops);
			c->ver[op]++;
			changed = 1;
		}
	return changed;
}

/* Large-neighbourhood polish: the exact optimum (variable elimination, as in
 * dp) over each op's neighbourhood of its current split; repeated while the
 * plan improves. Captures coordinated moves along chains that single-op
 * changes cannot make. wide: the neighbourhoods with extra()'s candidates,
 * edges whose ends have few candidates (TABCAP) priced from the problem's
 * tables (built once, shared by every round, start and price); else one
 * factor's moves alone. REC_DONE, REC_TANGLED or REC_NOMEM. */
static rec_outcome polish(recctx *c, const int64_t *primes, int np, int wide, int rounds)
{
	pl_problem *p = c->p;
	int n = p->g->nops;
	rec_outcome rc = REC_NOMEM;
	polish_ws w;
	if (polish_ws_new(&w, n, p->nedges))
		goto out;
	double prev = -1;
	for (int round = 0; round < rounds; round++) {
		if (polish_domains(c, &w, primes, np, wide))
			goto out;
		ve v;
		if (ve_init(&v, n, w.dom))
			goto out;
		v.deadline = c->deadline;
		if (wide) { /* a wide polish costs at most a few times a narrow one's */
			v.max_entries = WIDE_ENTRIES;
			v.max_total = 4 * WIDE_ENTRIES;
		}
		rec_outcome got = polish_nodes(c, &w, &v) ? REC_NOMEM : polish_edges(c, &w, &v);
		if (got != REC_DONE) { /* past the deadline: the plan as it is */
			ve_free(&v);
			rc = got == REC_LATE ? REC_DONE : REC_NOMEM;
			goto out;
		}
		if (ve_run(&v)) { /* neighbourhoods too entangled to solve exactly
			           * (DenseNet's concatenations): the plan so far */
			ve_free(&v);
			rc = round == 0 ? REC_TANGLED : REC_DONE;
			goto out;
		}
		if (wide && v.built > c->built)
			c->built = v.built;
		memset(w.a, 0, sizeof *w.a * (size_t)n);
		double val = ve_value(&v, w.a);
		ve_backtrack(&v, w.a);
		ve_free(&v);
		int changed = polish_apply(c, &w);
		if (!changed || (prev >= 0 && val >= prev * (1 - 1e-9)))
			break;
		prev = val;
	}
	rc = REC_DONE;
out:
	polish_ws_free(&w, n, p->nedges);
	return rc;
}

/* Iterated conditional modes over each op's candidate list (dp's domain;
 * of a long one the SCAN cheapest nodes), cheapest node first: each decided op in turn takes the
 * candidate that costs least against its neighbours as they stand, while one moves. Reaches what
 * one factor's move cannot (a cut two moves away, with its neighbours' cuts a good fit as they
 * are). With a budget (> 0), a move must keep the plan's memory *mem (mult[op] copies of each op)
 * within it. Returns whether any op moved, -1 out of memory. */
static int icm(recctx *c, const int *mult, double budget, double *mem)
{
	pl_problem *p = c->p;
	const pl_graph *g = p->g;
	int moved = 0;
	for (int round = 0; round < 4; round++) {
		int any = 0;
		for (int op = 0; op < g->nops; op++) {
			if (!c->active[op] || g->ops[op].has_strategy)
				continue;
			const pl_nodecost *tab = pl_problem_node(p, op);
			if (!tab || by_node(c, op, c->ord))
				return -1;
			int nl = g->ops[op].spec.nloops, best = -1;
			pl_nodecost nc;
			pl_cost_node(p, op, S(c, op), &nc);
			double m0 = nc.mem_bytes, bm = 0,
			       bt = nc.compute_s + nc.comm_s + c->lam * m0 +
			            edge_cost(c, op, S(c, op));
			for (int j = 0; j < p->nstrat[op]; j++) {
				int k = c->ord[j].op;
				double node = -c->ord[j].key, m = tab[k].mem_bytes;
				if (node >= bt || (j >= SCAN && p->nstrat[op] > FEW))
					break;
				if (budget > 0 && *mem + mult[op] * (m - m0) > budget)
					continue;
				double t = node + edge_cost(c, op, p->strat[op] + (size_t)k * nl);
				if (t < bt - 1e-12 * (bt < 0 ? -bt : bt)) {
					best = k;
					bt = t;
					bm = m;
				}
			}
			if (best < 0)
				continue;
			take_strat(c, op, best);
			c->ver[op]++;
			if (budget > 0)
				*mem += mult[op] * (bm - m0);
			any = 1;
		}
		if (!any)
			break;
		moved = 1;
	}
	return moved;
}

/* Multiplies the split of one of op's loops by f (where devices are left for
 * it): the loop that costs least against its neighbours as they stand (on
 * c->p; p says which loops may be cut). */
static void cut_by(recctx *c, const pl_problem *p, int op, int64_t f)
{
	const pl_op *x = &p->g->ops[op];
	int64_t *s = S(c, op);
	if (p->devices % (pl_split_product(x, s) * f))
		return;
	double best = 0;
	int best_l = -1;
	for (int l = 0; l < x->spec.nloops; l++) {
		const pl_loop *lp = &x->spec.loop[l];
		if (!pl_problem_cuttable(p, op, l) || (lp->size / s[l]) % f)
			continue;
		s[l] *= f;
		double t = local_cost(c, op, s);
		s[l] /= f;
		if (best_l < 0 || t < best) {
			best = t;
			best_l = l;
		}
	}
	if (best_l >= 0)
		s[best_l] *= f;
}

/* The searchers' objective over the decided ops: node costs (at the memory
 * price) and the edges between them. */
static double objective(const recctx *c)
{
	const pl_problem *p = c->p;
	double t = 0;
	for (int op = 0; op < p->nops; op++) {
		if (!c->active[op])
			continue;
		pl_nodecost n;
		pl_cost_node(p, op, S(c, op), &n);
		t += n.compute_s + n.comm_s + c->lam * n.mem_bytes;
	}
	for (int e = 0; e < p->nedges; e++) {
		const pl_edge *ed = &p->edges[e];
		if (c->active[ed->src_op] && c->active[ed->dst_op])
			t += pl_cost_edge(p, e, S(c, ed->src_op), S(c, ed->dst_op));
	}
	return t;
}

/* The polish and ICM in turn while they improve the plan, at most rounds
 * times (and the polish as many rounds). 0, or -1 out of memory. */
static int improve(recctx *c, const int64_t *primes, int np, int rounds)
{
	for (int round = 0; round < rounds; round++) {
		rec_outcome st = polish(c, primes, np, 1, rounds);
		if (st == REC_TANGLED) /* the wide neighbourhoods too entangled: the narrow ones */
			st = polish(c, primes, np, 0, rounds);
		if (st == REC_NOMEM)
			return -1;
		int mv = icm(c, NULL, 0, NULL);
		if (mv < 0)
			return -1;
		if (!mv || (c->deadline > 0 && pl_now() > c->deadline))
			break;
	}
	return 0;
}

/* One plan at the memory price c->lam, from scratch: the steps over the prime
 * factors of the devices (largest first; priced on pu, one convention for
 * every op), the degrees kept, then the polish and ICM in turn while they
 * improve it; the same from other starts (below), the best kept (keep: room
 * for a plan). REC_DONE, REC_NOMEM or REC_LATE. */
static rec_outcome rec_plan(recctx *c, pl_problem *pu, const int64_t *primes, int np, keyed *order,
                            int64_t *keep)
{
	pl_problem *p = c->p;
	const pl_graph *g = p->g;
	c->built = 0;
	for (int op = 0; op < g->nops; op++) {
		c->xn[op] = -1; /* a new price, a new start */
		for (int l = 0; l < PL_MAX_LOOPS; l++)
			S(c, op)[l] = 1;
		if (g->ops[op].has_strategy)
			memcpy(S(c, op), g->ops[op].strategy, sizeof(int64_t) * PL_MAX_LOOPS);
	}
	c->p = pu;
	for (int step = 0; step < np; step++) {
		int64_t f = primes[step];
		int no = 0;
		for (int op = 0; op < g->nops; op++) {
			if (!c->active[op] || g->ops[op].has_strategy)
				continue;
			pl_nodecost nc;
			pl_cost_node(pu, op, S(c, op), &nc);
			/* heavy ops first, by cost; then the rest in graph order */
			order[no++] = (keyed){
			    heavy(&g->ops[op]) ? 1e300 - 1e290 + nc.compute_s : -(double)op, op};
		}
		qsort(order, (size_t)no, sizeof *order, by_key_desc);
		for (int i = 0; i < no; i++)
			cut_by(c, p, order[i].op, f);
		if (c->deadline > 0 && pl_now() > c->deadline) {
			c->p = p;
			return REC_LATE;
		}
	}
	c->p = p;
	if (p->roles)
		repair_degrees(c, order);
	if (improve(c, primes, np, 4))
		return REC_NOMEM;
	int decided = 0;
	for (int op = 0; op < g->nops; op++)
		decided += c->active[op] && !g->ops[op].has_strategy;
	if (!keep || p->roles || c->built > SEEDCAP)
		return REC_DONE;
	/* three more starts, the best kept: every op whole, where the problem
	 * offers replicated cuts (a small or latency-bound graph, whose cuts cost
	 * more than they save, is many factors' moves away from the cuts above);
	 * every op cut along its batch (data parallel: a cut the steps above left
	 * for a model-parallel one that costs a little less on its own and more
	 * where its consumers meet the rest); every op on its cheapest candidate
	 * alone (a batch norm's channel cut, that its neighbours then follow) */
	for (int seed = !p->replicas; seed < 3; seed++) {
		if (seed == 2 && decided > SEEDOPS && c->repeated)
			break; /* of the large repeated graphs', the first two suffice */
		double first = objective(c);
		memcpy(keep, c->split, sizeof *keep * (size_t)g->nops * PL_MAX_LOOPS);
		for (int op = 0; op < g->nops; op++) {
			c->xn[op] = -1;
			if (!c->active[op] || g->ops[op].has_strategy)
				continue;
			int64_t *sp = S(c, op);
			if (seed == 2) {
				if (by_node(c, op, c->ord))
					return REC_NOMEM;
				take_strat(c, op, c->ord[0].op);
				continue;
			}
			for (int l = 0; l < PL_MAX_LOOPS; l++)
				sp[l] = 1;
			for (int q = 0; seed && q < np; q++) {
				int l = 0;
				for (; l < g->ops[op].spec.nloops; l++)
					if (c->roles[(size_t)op * PL_MAX_LOOPS + l] ==
					        PL_LOOP_DATA &&
					    pl_problem_cuttable(p, op, l) &&
					    (g->ops[op].spec.loop[l].size / sp[l]) % primes[q] ==
					        0) {
						sp[l] *= primes[q];
						break;
					}
				/* no batch left to cut: where the problem offers only cuts of
				 * all devices, the factor goes where it costs least */
				if (l == g->ops[op].spec.nloops && !p->replicas)
					cut_by(c, p, op, primes[q]);
			}
		}
		/* after one round, a start that is no near rival, or has come to the
		 * plan kept, is left there */
		if (improve(c, primes, np, 1))
			return REC_NOMEM;
		double now = objective(c);
		if (now < first * 1.1 &&
		    memcmp(c->split, keep, sizeof *keep * (size_t)g->nops * PL_MAX_LOOPS) &&
		    improve(c, primes, np, 4))
			return REC_NOMEM;
		if (objective(c) >= first)
			memcpy(c->split, keep, sizeof *keep * (size_t)g->nops * PL_MAX_LOOPS);
	}
	return REC_DONE;
}

/* Copies block 1 of each run to the hidden blocks. */
static void copy_hidden(recctx *c, const pl_run *runs, int nruns)
{
	for (int k = 0; k < nruns; k++)
		for (int b = 2; b < runs[k].count; b++)
			for (int i = 0; i < runs[k].len; i++)
				memcpy(S(c, runs[k].first + b * runs[k].len + i),
				       S(c, runs[k].first + runs[k].len + i),
				       sizeof(int64_t) * PL_MAX_LOOPS);
}

/* Copies block 1 of each run to the hidden blocks and prices the plan. */
static int rec_price(recctx *c, const pl_run *runs, int nruns, double *t, double *m)
{
	const pl_problem *p = c->p;
	copy_hidden(c, runs, nruns);
	int64_t **sp = pl_malloc(sizeof *sp * ((size_t)p->nops + 1));
	if (!sp)
		return -1;
	for (int op = 0; op < p->nops; op++)
		sp[op] = S(c, op);
	pl_plancost pc;
	pl_cost_plan(p, sp, &pc, NULL);
	free(sp);
	*t = pc.step_s;
	*m = pc.mem_bytes;
	return 0;
}

/* Under a budget: the two ends of an edge moved at once (both with few
 * candidates: the problem's table), each time the pair that gains most
 * within the budget (mult[op] copies of each op; *mem the plan's memory);
 * for what one op's move cannot reach within a budget (a contraction cut
 * together with its consumer's). Returns whether any pair moved, -1 out of
 * memory. */
static int pairs(recctx *c, const int *mult, double budget, double *mem)
{
	pl_problem *p = c->p;
	const pl_graph *g = p->g;
	int moved = 0, cap = 0, rc = -1;
	double *ls = NULL, *ld = NULL;
	for (int round = 0; round < 4; round++) {
		int any = 0;
		for (int e = 0; e < p->nedges; e++) {
			const pl_edge *ed = &p->edges[e];
			int s = ed->src_op, d = ed->dst_op, ns = p->nstrat[s], nd = p->nstrat[d];
			if (s == d || !c->active[s] || !c->active[d] || g->ops[s].has_strategy ||
			    g->ops[d].has_strategy || (double)ns * nd > TABCAP)
				continue;
			if (c->deadline > 0 && pl_now() > c->deadline) { /* the plan so far */
				rc = moved || any;
				goto out;
			}
			int cs = cand_index(p, s, S(c, s)), cd = cand_index(p, d, S(c, d));
			if (cs < 0 || cd < 0)
				continue;
			const double *tab = pl_problem_edge(p, e);
			const pl_nodecost *ts = pl_problem_node(p, s), *td = pl_problem_node(p, d);
			if (!tab || !ts || !td)
				goto out;
			if (ns > cap || nd > cap) {
				cap = ns > nd ? ns : nd;
				free(ls);
				free(ld);
				ls = pl_malloc(sizeof *ls * (size_t)cap);
				ld = pl_malloc(sizeof *ld * (size_t)cap);
				if (!ls || !ld)
					goto out;
			}
			int nls = g->ops[s].spec.nloops, nld = g->ops[d].spec.nloops;
			for (int i = 0; i < ns; i++)
				ls[i] = ts[i].compute_s + ts[i].comm_s +
				        edge_cost_but(c, s, p->strat[s] + (size_t)i * nls, e);
			for (int j = 0; j < nd; j++)
				ld[j] = td[j].compute_s + td[j].comm_s +
				        edge_cost_but(c, d, p->strat[d] + (size_t)j * nld, e);
			double m0 = mult[s] * ts[cs].mem_bytes + mult[d] * td[cd].mem_bytes,
			       bt = ls[cs] + ld[cd] + tab[(size_t)cs * nd + cd], bdm = 0;
			int bi = -1, bj = -1;
			for (int i = 0; i < ns; i++)
				for (int j = 0; j < nd; j++) {
					double t = ls[i] + ld[j] + tab[(size_t)i * nd + j];
					double dm = mult[s] * ts[i].mem_bytes +
					            mult[d] * td[j].mem_bytes - m0;
					if (t < bt - 1e-12 * bt && *mem + dm <= budget) {
						bt = t;
						bi = i;
						bj = j;
						bdm = dm;
					}
				}
			if (bi < 0)
				continue;
			take_strat(c, s, bi);
			take_strat(c, d, bj);
			c->ver[s]++;
			c->ver[d]++;
			*mem += bdm;
			any = 1;
		}
		if (!any)
			break;
		moved = 1;
	}
	rc = moved;
out:
	free(ls);
	free(ld);
	return rc;
}

/* From a plan over the budget: moves one op at a time to a candidate that
 * needs less memory, the move that costs least time per byte saved (a
 * knapsack's greedy; mult[op] copies of each op), until the plan's memory
 * *mem fits: REC_DONE, REC_NOFIT when no move is left, REC_NOMEM, REC_LATE. */
static rec_outcome shrink(recctx *c, const int *mult, double budget, double *mem)
{
	pl_problem *p = c->p;
	const pl_graph *g = p->g;
	while (*mem > budget) {
		int bo = -1, bk = -1;
		double br = 0, bdm = 0;
		for (int op = 0; op < g->nops; op++) {
			if (!c->active[op] || g->ops[op].has_strategy)
				continue;
			const pl_nodecost *tab = pl_problem_node(p, op);
			if (!tab)
				return REC_NOMEM;
			int nl = g->ops[op].spec.nloops;
			pl_nodecost nc;
			pl_cost_node(p, op, S(c, op), &nc);
			double t0 = nc.compute_s + nc.comm_s + edge_cost(c, op, S(c, op));
			for (int k = 0; k < p->nstrat[op]; k++) {
				double dm = mult[op] * (nc.mem_bytes - tab[k].mem_bytes);
				if (!(dm > 0))
					continue;
				double dt = tab[k].compute_s + tab[k].comm_s +
				            edge_cost(c, op, p->strat[op] + (size_t)k * nl) - t0;
				if (bo < 0 || dt / dm < br) {
					bo = op;
					bk = k;
					br = dt / dm;
					bdm = dm;
				}
			}
		}
		if (bo < 0)
			return REC_NOFIT;
		take_strat(c, bo, bk);
		c->ver[bo]++;
		*mem -= bdm;
		if (c->deadline > 0 && pl_now() > c->deadline)
			return REC_LATE;
	}
	return REC_DONE;
}

/* Under a memory limit the fastest plan does not fit: the memory price that
 * makes one fit (doubled from time per byte until one does, then bisected),
 * each plan that fits improved on time alone by ICM and pairs, every move
 * within the limit; and the plan just over the limit and the fastest plan shrunk until
 * they fit (shrink) and improved alike. The fastest that fits is the plan: REC_DONE (c's splits
 * the plan; *t, *m its price), REC_NOFIT, REC_NOMEM or REC_LATE. Long on purpose: the price's
 * doubling and bisection and the shrinking share the plans they keep. */
static rec_outcome rec_within(recctx *c, pl_problem *pu, const int64_t *primes, int np,
                              keyed *order, const pl_run *runs, int nruns, double limit,
                              int64_t *best, double *t, double *m)
{
	const pl_problem *p = c->p;
	size_t bytes = sizeof(int64_t) * (size_t)p->nops * PL_MAX_LOOPS;
	double lo = 0, hi = *m > 0 ? *t / *m : 1e-12, bt = -1, bm = 0;
	int rc = 0, *mult = pl_malloc(sizeof *mult * ((size_t)p->nops + 1));
	/* the fastest plan, and the plan at the highest price that did not fit */
	int64_t *fast = pl_malloc(bytes + 1), *over = pl_malloc(bytes + 1);
	if (!mult || !fast || !over) {
		free(mult);
		free(fast);
		free(over);
		return -1;
	}
	for (int op = 0; op < p->nops; op++)
		mult[op] = 1;
	for (int k = 0; k < nruns; k++)
		for (int i = 0; i < runs[k].len; i++)
			mult[runs[k].first + runs[k].len + i] = runs[k].count - 1;
	memcpy(over, c->split, bytes);
	memcpy(fast, c->split, bytes);
	/* steps 0..63: the doubling; then 16 of bisection; then the shrinking of
	 * the plan just over and of the fastest; then the best polished at eight
	 * prices between the bisection's ends (from where it stands, the moves
	 * of several ops that a fresh start at one price does not find) */
	for (int step = 0; step < 64 + 16 + 2 + 8 && !rc; step++) {
		if (step < 64 && bt >= 0)
			step = 64; /* the doubling found a price: bisect */
		if (step >= 64 && step < 80 && (bt < 0 || lo <= 0))
			continue;
		if (step >= 82) { /* the best so far polished at prices below hi */
			if (bt < 0)
				break;
			memcpy(c->split, best, bytes);
			for (int op = 0; op < p->nops; op++)
				c->xn[op] = -1;
			c->lam =
			    hi * (lo > 0 ? pow(lo / hi, (step - 81) / 9.0) : pow(0.25, step - 81));
			if ((rc = improve(c, primes, np, 4)) ||
			    (rc = rec_price(c, runs, nruns, t, m)))
				break;
			if (*m > limit)
				continue;
		} else if (step >= 80) {
			memcpy(c->split, step == 80 ? over : fast, bytes);
			if ((rc = rec_price(c, runs, nruns, t, m)))
				break;
			double mem = *m;
			c->lam = 0;
			for (int op = 0; op < p->nops; op++)
				c->xn[op] = -1;
			rec_outcome sh = shrink(c, mult, limit, &mem);
			if (sh == REC_NOFIT)
				continue;
			if (sh != REC_DONE) {
				rc = sh == REC_NOMEM ? -1 : REC_LATE;
				break;
			}
		} else {
			c->lam = step < 64 ? hi : (lo + hi) / 2;
			if ((rc = rec_plan(c, pu, primes, np, order, c->keep)) ||
			    (rc = rec_price(c, runs, nruns, t, m)))
				break;
			if (*m > limit) {
				memcpy(over, c->split, bytes);
				lo = c->lam;
				if (step < 64)
					hi *= 4;
				continue;
			}
			hi = c->lam;
		}
		/* fits: time alone, within the limit, one op and two at a time */
		double mem = *m;
		c->lam = 0;
		for (int k = 0; k < 4; k++) {
			int one = icm(c, mult, limit, &mem),
			    two = one < 0 ? 0 : pairs(c, mult, limit, &mem);
			if (one < 0 || two < 0) {
				rc = -1;
				break;
			}
			if (!two)
				break;
		}
		if (rc || rec_price(c, runs, nruns, t, m)) {
			rc = -1;
			break;
		}
		if (*m <= limit && (bt < 0 || *t < bt)) {
			memcpy(best, c->split, bytes);
			bt = *t;
			bm = *m;
		}
	}
	c->lam = 0;
	free(mult);
	free(fast);
	free(over);
	if (rc) /* REC_LATE (rec_plan's, shrink's), or out of memory */
		return rc < 0 ? REC_NOMEM : REC_LATE;
	if (bt < 0)
		return REC_NOFIT;
	memcpy(c->split, best, bytes);
	*t = bt;
	*m = bm;
	return REC_DONE;
}

/* The prime factors of n into primes (room for 64), largest first; their
 * count. rec cuts the devices one prime at a time. */
static int prime_factors(int64_t n, int64_t *primes)
{
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
	return np;
}

/* choice[op]: the candidate index of op's split where it is a candidate
 * (the last such), else 0 */
static void candidate_choice(const pl_problem *p, const recctx *c, int *choice)
{
	for (int op = 0; op < p->g->nops; op++) {
		int nl = p->g->ops[op].spec.nloops;
		choice[op] = 0;
		for (int k = 0; k < p->nstrat[op]; k++)
			if (!memcmp(p->strat[op] + (size_t)k * nl, S(c, op), sizeof(int64_t) * (size_t)nl))
				choice[op] = k;
	}
}

/* rec's setup (the repeated layers, the prime factors of the devices, one
 * pricing convention for the steps), the plan, under a memory limit the
 * price that makes it fit, the result: one function, as every exit frees
 * the same working arrays. */
pl_status pl_search_rec(pl_problem *p, const pl_search_opts *o, pl_search_result *r, pl_err *err)
{
	double t0 = pl_now();
	memset(r, 0, sizeof *r);
	pl_status st = PL_OK;
	const pl_graph *g = p->g;
	recctx c = {.p = p};
	pl_run runs[64];
	/* Repeated layers decided once (blocks 0 and 1, copied to the rest) on
	 * large graphs only: the copies' boundaries are not priced while rec
	 * decides (block 1's last op against block 1's first, once a copy), and
	 * on a small graph every block decided costs little */
	int nruns = o->no_repeat || p->nops <= ALL_BLOCKS ? 0 : pl_problem_runs(p, runs, 64);
	pl_graph gu = *g;
	pl_problem pu = *p;
	gu.ops = NULL;
	pu.memo = NULL; /* another graph: its prices are not p's */
	/* rec prices the same splits off the candidate lists many times: their
	 * prices kept while it runs (pl_cost_plan, icm, extra, the steps) */
	int memo_own = !p->memo;
	c.split = pl_malloc(sizeof *c.split * (size_t)g->nops * PL_MAX_LOOPS);
	c.active = pl_calloc((size_t)g->nops, 1);
	c.done = pl_calloc((size_t)g->nops, 1);
	int64_t *best = pl_malloc(sizeof *best * (size_t)g->nops * PL_MAX_LOOPS + 1);
	keyed *order = pl_malloc(sizeof *order * ((size_t)g->nops + 1));
	int most = 1;
	for (int op = 0; op < g->nops; op++)
		most = p->nstrat[op] > most ? p->nstrat[op] : most;
	c.ord = pl_malloc(sizeof *c.ord * (size_t)most);
	c.keep = pl_malloc(sizeof *c.keep * (size_t)g->nops * PL_MAX_LOOPS + 1);
	c.roles = pl_malloc((size_t)g->nops * PL_MAX_LOOPS + 1);
	c.ver = pl_calloc((size_t)g->nops + 1, sizeof *c.ver);
	c.xsum = pl_calloc((size_t)g->nops + 1, sizeof *c.xsum);
	c.xn = pl_calloc((size_t)g->nops + 1, sizeof *c.xn);
	c.xk = pl_malloc(sizeof *c.xk * (size_t)g->nops * XMAX + 1);
	r->choice = pl_calloc((size_t)g->nops, sizeof *r->choice);
	if (!c.split || !c.active || !c.done || !best || !order || !c.ord || !c.keep || !c.roles ||
	    pl_loop_roles(g, c.roles) || !c.ver || !c.xsum || !c.xn || !c.xk || !r->choice ||
	    pl_problem_memo(p, 1))
		goto nomem;
	if (o->time_limit_s > 0)
		c.deadline = t0 + o->time_limit_s;
	c.repeated = nruns > 0;
	for (int op = 0; op < g->nops; op++)
		c.active[op] = 1;
	for (int k = 0; k < nruns; k++)
		for (int b = 2; b < runs[k].count; b++)
			for (int i = 0; i < runs[k].len; i++)
				c.active[runs[k].first + b * runs[k].len + i] = 0;
	int64_t primes[64];
	int np = prime_factors(p->devices, primes);
	/* The steps price partial cuts, the devices not yet cut standing as
	 * replicas: on one convention for every op (the major axis), so that
	 * neighbours cut alike meet without a redistribution whatever they read;
	 * the plan itself is priced on the problem's. The copies are read only
	 * (pl_cost_node and pl_cost_edge fill no table). */
	gu.ops = pl_malloc(sizeof *gu.ops * ((size_t)g->nops + 1));
	if (!gu.ops)
		goto nomem;
	memcpy(gu.ops, g->ops, sizeof *gu.ops * (size_t)g->nops);
	for (int op = 0; op < g->nops; op++)
		gu.ops[op].replica_minor = 0;
	pu.g = &gu;
	double t, m;
	rec_outcome rc = rec_plan(&c, &pu, primes, np, order, c.keep);
	if (rc == REC_NOMEM ||
	    (rc == REC_DONE && o->memory_limit > 0 && rec_price(&c, runs, nruns, &t, &m)))
		goto nomem;
	if (rc == REC_DONE && o->memory_limit > 0 && m > o->memory_limit) {
		double least = pl_problem_least_plan_memory(p);
		if (least < 0)
			goto nomem;
		if (least > o->memory_limit) {
			r->min_mem_bytes = least;
			st = pl_search_err_no_fit(err, o->memory_limit, least);
			goto cleanup;
		}
		rc = rec_within(&c, &pu, primes, np, order, runs, nruns, o->memory_limit, best, &t,
		                &m);
		if (rc == REC_NOMEM)
			goto nomem;
	}
	if (rc == REC_NOFIT) { /* no memory price rec tried made its plan fit */
		st = pl_search_err_over_limit(err, "rec's plan", m, o->memory_limit,
		                              "no memory price rec tried fits it under the limit; "
		                              "--mode dp or ilp search under the limit");
		goto cleanup;
	}
	if (rc == REC_LATE) {
		st = pl_err_set(err, PL_ETIMEOUT, "rec: the time limit of %.3g s ran out",
		                o->time_limit_s);
		goto cleanup;
	}
	copy_hidden(&c, runs, nruns);
	candidate_choice(p, &c, r->choice);
	r->splits = c.split;
	c.split = NULL;
	if (pl_search_result_price(p, r))
		goto nomem;
	r->optimal = 0;
	snprintf(r->why, sizeof r->why, "rec is a heuristic%s",
	         c.deadline > 0 && pl_now() > c.deadline
	             ? "; the time limit stopped its improvement: the plan so far"
	             : "");
	for (int k = 0; k < nruns; k++)
		r->repeated_layers += runs[k].count;
	if (o->memory_limit > 0 && r->mem_bytes > o->memory_limit)
		st = pl_search_err_over_limit(err, "rec's plan", r->mem_bytes, o->memory_limit,
		                              "--mode dp or ilp search under the limit");
	goto cleanup;
nomem:
	st = pl_err_set(err, PL_ENOMEM, "rec: out of memory");
cleanup:
	if (memo_own)
		pl_problem_memo(p, 0);
	free(gu.ops);
	free(c.split);
	free(c.active);
	free(c.done);
	free(best);
	free(order);
	free(c.ord);
	free(c.keep);
	free(c.roles);
	free(c.ver);
	free(c.xsum);
	free(c.xn);
	free(c.xk);
	r->seconds = pl_now() - t0;
	if (st)
		pl_search_result_free(r);
	return st;
}
