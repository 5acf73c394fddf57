/* Repeated-layer detection. A cut after op position p is clean when exactly
 * one activation crosses it and no param is read on both sides. The ops
 * between clean cuts form segments; a run is a block of P consecutive segments
 * (a transformer layer is usually two: attention and MLP) repeated at least
 * twice with identical ops, attributes, shapes, annotations and wiring. The
 * search solves one block and reuses it (search/dp.c). Cost O(ops * P * L). */
#include <stdlib.h>
#include <string.h>

#include "search/search.h"
#include "graph/alloc.h"

#define MAX_PERIOD 6

typedef struct ctx {
	const pl_graph *g;
	int *pos; /* op -> position (ops are stored in topological order: identity) */
} ctx;

static int tensor_equal(const pl_tensor *a, const pl_tensor *b)
{
	if (a->rank != b->rank || a->dtype != b->dtype || a->role != b->role)
		return 0;
	for (int d = 0; d < a->rank; d++)
		if (a->shape[d] != b->shape[d])
			return 0;
	return 1;
}

/* Are ops [a, a+len) and [b, b+len) the same block? */
static int block_equal(const pl_graph *g, const uint8_t *tag, int a, int b, int len)
{
	for (int k = 0; k < len; k++) {
		const pl_op *x = &g->ops[a + k], *y = &g->ops[b + k];
		if (tag && tag[a + k] != tag[b + k])
			return 0;
		if (x->type != y->type || x->ninputs != y->ninputs || x->noutputs != y->noutputs ||
		    x->has_strategy != y->has_strategy ||
		    memcmp(x->attrs, y->attrs, sizeof *x->attrs) ||
		    memcmp(&x->spec, &y->spec, sizeof x->spec))
			return 0;
		if (x->has_strategy &&
		    memcmp(x->strategy, y->strategy, sizeof(int64_t) * PL_MAX_LOOPS))
			return 0;
		for (int i = 0; i < x->noutputs; i++)
			if (!tensor_equal(&g->tensors[x->out[i]], &g->tensors[y->out[i]]))
				return 0;
		for (int i = 0; i < x->ninputs; i++) {
			const pl_tensor *tx = &g->tensors[x->in[i]], *ty = &g->tensors[y->in[i]];
			if (!tensor_equal(tx, ty))
				return 0;
			int inx = tx->producer >= a && tx->producer < a + len;
			int iny = ty->producer >= b && ty->producer < b + len;
			if (inx != iny)
				return 0;
			if (inx && (tx->producer - a != ty->producer - b ||
			            tx->producer_slot != ty->producer_slot))
				return 0;
			if (!inx && (tx->producer < 0) != (ty->producer < 0))
				return 0;
		}
	}
	return 1;
}

int pl_clean_cuts(const pl_graph *g, int *cuts)
{
	int n = g->nops, nc = 0;
	int *cnt = pl_calloc((size_t)n + 1, sizeof *cnt),
	    *params = pl_calloc((size_t)n + 1, sizeof *params);
	if (!cnt || !params) {
		free(cnt);
		free(params);
		return -1;
	}
	for (int t = 0; t < g->ntensors; t++) {
		const pl_tensor *tt = &g->tensors[t];
		if (tt->nconsumers == 0 || tt->role == PL_ROLE_INPUT || tt->role == PL_ROLE_CONST)
			continue;
		int start = tt->producer, last = -1;
		for (int k = 0; k < tt->nconsumers; k++) {
			int c = tt->consumers[k];
			if (c > last)
				last = c;
			if (tt->producer < 0 && (start < 0 || c < start))
				start = c;
		}
		if (start >= last)
			continue;
		/* crosses cuts start .. last-1 */
		cnt[start]++;
		cnt[last]--;
		if (tt->role == PL_ROLE_PARAM) {
			params[start]++;
			params[last]--;
		}
	}
	/* segment boundaries: 0, clean cuts + 1, n */
	int run = 0, prun = 0;
	cuts[nc++] = 0;
	for (int p = 0; p < n - 1; p++) {
		run += cnt[p];
		prun += params[p];
		if (run == 1 && prun == 0)
			cuts[nc++] = p + 1;
	}
	cuts[nc++] = n;
	free(cnt);
	free(params);
	return nc;
}

static int find_runs(const pl_graph *g, const uint8_t *tag, pl_run *runs, int max)
{
	int n = g->nops, nr = 0;
	if (n < 4)
		return 0;
	int *cuts = pl_malloc(sizeof *cuts * ((size_t)n + 2));
	int nc = cuts ? pl_clean_cuts(g, cuts) : -1;
	if (nc < 0)
		goto done;
	int nseg = nc - 1;
	for (int s = 0; s < nseg && nr < max;) {
		int best_p = 0, best_k = 0, best_cover = 0;
		for (int P = 1; P <= MAX_PERIOD && s + 2 * P <= nseg; P++) {
			int len = cuts[s + P] - cuts[s], k = 1;
			while (s + (k + 1) * P <= nseg &&
			       cuts[s + (k + 1) * P] - cuts[s + k * P] == len &&
			       block_equal(g, tag, cuts[s], cuts[s + k * P], len))
				k++;
			if (k >= 2 && k * len > best_cover) {
				best_cover = k * len;
				best_p = P;
				best_k = k;
			}
		}
		if (!best_k) {
			s++;
			continue;
		}
		int first = cuts[s], len = cuts[s + best_p] - first;
		/* the op that produces the tensor leaving the block */
		int out_pos = -1;
		for (int k = 0; k < len && out_pos < 0; k++) {
			const pl_op *op = &g->ops[first + k];
			for (int i = 0; i < op->noutputs; i++) {
				const pl_tensor *t = &g->tensors[op->out[i]];
				for (int c = 0; c < t->nconsumers; c++)
					if (t->consumers[c] >= first + len)
						out_pos = k;
			}
		}
		if (out_pos >= 0) {
			runs[nr++] = (pl_run){first, len, best_k, out_pos};
		}
		s += best_p * best_k;
	}
done:
	free(cuts);
	return nr;
}

int pl_find_runs(const pl_graph *g, pl_run *runs, int max)
{
	return find_runs(g, NULL, runs, max);
}

int pl_layer_cuts(const pl_graph *g, int *cuts, int nc)
{
	pl_run runs[64];
	int nr = pl_find_runs(g, runs, 64), k = 0;
	if (nr <= 0)
		return nc; /* no repeated layers: every clean cut is a layer's end */
	for (int i = 0; i < nc; i++) {
		int c = cuts[i], keep = i == 0 || i == nc - 1;
		for (int r = 0; r < nr && !keep; r++) {
			int d = c - runs[r].first;
			keep = d >= 0 && d <= runs[r].len * runs[r].count && d % runs[r].len == 0;
		}
		if (keep)
			cuts[k++] = c;
	}
	return k;
}

int pl_even_stages(const pl_graph *g, const int *cuts, int K, int64_t pp, int items, int *first)
{
	pl_run runs[64];
	int nr = pl_find_runs(g, runs, 64);
	int64_t L = 0;
	for (int r = 0; r < nr; r++)
		L += runs[r].count;
	/* items: the layers, or (uniform) the embedding, the layers, the final
	 * norm and the head */
	int64_t n = items ? L + 3 : L;
	if (pp < 1 || L < 1 || n < pp)
		return -1;
	first[0] = 0;
	first[pp] = K;
	for (int64_t s = 1; s < pp; s++) {
		/* the item stage s starts with: floor(s L / pp) of the layers, or
		 * partition_uniform's s (n / pp) + min(s, n mod pp), the first
		 * n mod pp stages one item longer */
		int64_t l = items ? s * (n / pp) + (s < n % pp ? s : n % pp) - 1 : s * L / pp;
		if (l < 0 || l > L)
			return -1; /* the last stage the head alone */
		int op = -1;
		for (int r = 0; r < nr && op < 0; r++) {
			if (l < runs[r].count)
				op = runs[r].first + (int)l * runs[r].len;
			else
				l -= runs[r].count;
		}
		if (op < 0) /* the final norm: the end of the last layer */
			op = runs[nr - 1].first + runs[nr - 1].len * runs[nr - 1].count;
		int j = 0;
		while (j <= K && cuts[j] < op)
			j++;
		if (j > K || cuts[j] != op || j <= first[s - 1] || j >= K)
			return -1;
		first[s] = j;
	}
	return 0;
}

int pl_problem_runs(const pl_problem *p, pl_run *runs, int max)
{
	/* found once per problem (every dp of it asks: a pass over the graph's
	 * ops and their attributes); the problem keeps the answer as a cache */
	pl_problem *q = (pl_problem *)p;
	if (max > 0 && q->runs_memo_max == max) {
		memcpy(runs, q->runs_memo, sizeof *runs * (size_t)q->runs_memo_n);
		return q->runs_memo_n;
	}
	/* blocks repeat where ops are priced alike: the same recompute flag and
	 * the same outputs kept for the backward */
	const pl_graph *g = p->g;
	uint8_t *tag = pl_calloc((size_t)g->nops + 1, 1);
	if (!tag)
		return 0;
	for (int o = 0; o < g->nops; o++) {
		tag[o] = p->job.recompute ? p->job.recompute[o] : 0;
		for (int i = 0; p->kept && i < g->ops[o].noutputs; i++)
			tag[o] |= (uint8_t)(p->kept[g->ops[o].out[i]] << (2 + i));
	}
	int n = find_runs(g, tag, runs, max);
	free(tag);
	pl_run *keep = n >= 0 && max > 0 && !q->runs_memo ? pl_malloc(sizeof *keep * ((size_t)n + 1))
	                                                : NULL;
	if (keep) { /* without memory to keep it, found again next time */
		memcpy(keep, runs, sizeof *keep * (size_t)n);
		q->runs_memo = keep;
		q->runs_memo_n = n;
		q->runs_memo_max = max;
	}
	return n;
}
