#include "graph/ops.h"
#include "graph/roles.h"

#include <stdlib.h>
#include <string.h>
#include "graph/alloc.h"

static uint8_t input_dim_role(const pl_tensor *t, int d)
{
	if (t->role == PL_ROLE_PARAM || t->role == PL_ROLE_CONST)
		return PL_LOOP_MODEL;
	if (d == 0)
		return PL_LOOP_DATA;
	int ids = t->dtype == PL_DT_INT32 || t->dtype == PL_DT_INT64;
	if (d == 1 && ((ids && t->rank == 2) || t->rank == 3))
		return PL_LOOP_SEQ;
	return PL_LOOP_MODEL;
}

int pl_loop_roles(const pl_graph *g, uint8_t *roles)
{
	/* per tensor dimension, its role once its producer is seen */
	uint8_t *dim = pl_malloc((size_t)g->ntensors * PL_MAX_RANK + 1);
	if (!dim)
		return -1;
	for (int t = 0; t < g->ntensors; t++)
		for (int d = 0; d < PL_MAX_RANK; d++)
			dim[(size_t)t * PL_MAX_RANK + d] = input_dim_role(&g->tensors[t], d);
	memset(roles, PL_LOOP_MODEL, (size_t)g->nops * PL_MAX_LOOPS);
	for (int o = 0; o < g->nops; o++) {
		const pl_op *op = &g->ops[o];
		uint8_t *r = roles + (size_t)o * PL_MAX_LOOPS;
		for (int i = 0; i < op->ninputs; i++) {
			const pl_tensor *t = &g->tensors[op->in[i]];
			for (int d = 0; d < t->rank; d++) {
				const pl_dimmap *m = &op->spec.in[i][d];
				uint8_t v = dim[(size_t)op->in[i] * PL_MAX_RANK + d];
				if (m->count > 0 && v > r[m->first])
					r[m->first] = v;
			}
		}
		for (int i = 0; i < op->noutputs; i++) {
			const pl_tensor *t = &g->tensors[op->out[i]];
			uint8_t *od = dim + (size_t)op->out[i] * PL_MAX_RANK;
			for (int d = 0; d < t->rank; d++) {
				const pl_dimmap *m = &op->spec.out[i][d];
				od[d] = m->count > 0 ? r[m->first] : PL_LOOP_MODEL;
			}
			/* the experts are not a loop of the dispatch (ops/moe.c) */
			if ((pl_op_traits(op) & PL_OPT_DISPATCH) && i == 0)
				od[0] = PL_LOOP_EXPERT;
		}
	}
	free(dim);
	return 0;
}

int pl_degrees_any(const pl_degrees *d)
{
	return d && (d->dp > 0 || d->tp > 0 || d->cp > 0 || d->ep > 0 ||
	             d->seq_parallel == PL_SEQ_PAR_OFF);
}

static int uf_find(int *up, int x)
{
	while (up[x] != x)
		x = up[x] = up[up[x]];
	return x;
}

/* Tensor and dimension map of slot k of op: its inputs, then its outputs */
static const pl_dimmap *slot(const pl_op *op, int k, int *t)
{
	if (k < op->ninputs) {
		*t = op->in[k];
		return op->spec.in[k];
	}
	*t = op->out[k - op->ninputs];
	return op->spec.out[k - op->ninputs];
}

/* Union-find over tensor dimensions (t * PL_MAX_RANK + d): the dimensions
 * one loop of an op runs over are one class; a residual Add's model
 * dimensions mark their classes. */
int pl_stream_loops(const pl_graph *g, const uint8_t *roles, uint8_t *stream)
{
	size_t n = (size_t)g->ntensors * PL_MAX_RANK;
	int *up = pl_malloc(sizeof(int) * n + 1);
	uint8_t *mark = pl_calloc(n + 1, 1);
	if (!up || !mark) {
		free(up);
		free(mark);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		up[i] = (int)i;
	for (int o = 0; o < g->nops; o++) {
		const pl_op *op = &g->ops[o];
		int first[PL_MAX_LOOPS];
		for (int l = 0; l < PL_MAX_LOOPS; l++)
			first[l] = -1;
		for (int k = 0, t; k < op->ninputs + op->noutputs; k++) {
			const pl_dimmap *m = slot(op, k, &t);
			for (int d = 0; d < g->tensors[t].rank; d++) {
				if (!m[d].count)
					continue;
				int x = uf_find(up, t * PL_MAX_RANK + d), l = m[d].first;
				if (first[l] < 0)
					first[l] = x;
				else
					up[x] = uf_find(up, first[l]);
			}
		}
	}
	for (int o = 0; o < g->nops; o++) {
		const pl_op *op = &g->ops[o];
		if (op->type != PL_OP_ADD || op->ninputs != 2)
			continue;
		const pl_tensor *a = &g->tensors[op->in[0]], *b = &g->tensors[op->in[1]];
		if (a->role == PL_ROLE_PARAM || a->role == PL_ROLE_CONST ||
		    b->role == PL_ROLE_PARAM || b->role == PL_ROLE_CONST || a->rank != b->rank ||
		    a->rank > 3 || memcmp(a->shape, b->shape, sizeof(int64_t) * (size_t)a->rank))
			continue;
		for (int d = 0; d < a->rank; d++) {
			const pl_dimmap *m = &op->spec.in[0][d];
			if (m->count && roles[(size_t)o * PL_MAX_LOOPS + m->first] == PL_LOOP_MODEL)
				mark[uf_find(up, op->in[0] * PL_MAX_RANK + d)] = 1;
		}
	}
	memset(stream, 0, (size_t)g->nops * PL_MAX_LOOPS);
	for (int o = 0; o < g->nops; o++) {
		const pl_op *op = &g->ops[o];
		for (int k = 0, t; k < op->ninputs + op->noutputs; k++) {
			const pl_dimmap *m = slot(op, k, &t);
			for (int d = 0; d < g->tensors[t].rank; d++)
				if (m[d].count && mark[uf_find(up, t * PL_MAX_RANK + d)] &&
				    roles[(size_t)o * PL_MAX_LOOPS + m[d].first] == PL_LOOP_MODEL)
					stream[(size_t)o * PL_MAX_LOOPS + m[d].first] = 1;
		}
	}
	free(up);
	free(mark);
	return 0;
}

int pl_is_weight(const pl_tensor *t)
{
	return t->role == PL_ROLE_PARAM && t->rank >= 2;
}

int pl_op_reads_weight(const pl_graph *g, const pl_op *op)
{
	for (int i = 0; i < op->ninputs; i++)
		if (pl_is_weight(&g->tensors[op->in[i]]))
			return 1;
	return 0;
}

int pl_op_can_cut_role(const pl_op *op, const uint8_t *roles, int role)
{
	for (int l = 0; l < op->spec.nloops; l++)
		if (roles[l] == role && op->spec.loop[l].splittable && op->spec.loop[l].size > 1)
			return 1;
	return 0;
}

int pl_split_keeps_degrees(const pl_graph *g, const pl_op *op, const uint8_t *roles,
                           const uint8_t *stream, const int64_t *split, const pl_degrees *d)
{
	int64_t cut[4] = {1, 1, 1, 1};
	int has[4];
	for (int r = 0; r < 4; r++)
		has[r] = pl_op_can_cut_role(op, roles, r);
	for (int l = 0; l < op->spec.nloops; l++)
		cut[roles[l]] *= split[l];
	if (d->ep > 0 && has[PL_LOOP_EXPERT] && cut[PL_LOOP_EXPERT] != d->ep)
		return 0;
	if (d->dp > 0 && has[PL_LOOP_DATA]) {
		int64_t data = cut[PL_LOOP_DATA] * (has[PL_LOOP_EXPERT] ? cut[PL_LOOP_EXPERT] : 1);
		if (data != d->dp)
			return 0;
	}
	if (d->cp > 0 && has[PL_LOOP_SEQ] && cut[PL_LOOP_SEQ] % d->cp)
		return 0;
	/* weight ops under tp, and every other op without sequence
	 * parallelism, cut the sequence exactly as cp does */
	int weight = pl_op_reads_weight(g, op), off = d->seq_parallel == PL_SEQ_PAR_OFF;
	if (weight && d->tp > 0 && has[PL_LOOP_MODEL] && cut[PL_LOOP_MODEL] != d->tp)
		return 0;
	if (((weight && d->tp > 0) || (!weight && off)) && has[PL_LOOP_SEQ] &&
	    cut[PL_LOOP_SEQ] != (d->cp > 0 ? d->cp : 1))
		return 0;
	/* a fused attention core under fixed tp cuts its heads tp ways and its
	 * queries cp ways, as Megatron's and Transformer Engine's attention does
	 * (its heads by the tensor-parallel ranks, the sequence by the context-
	 * parallel ones), when its heads divide by tp */
	if ((pl_op_traits(op) & PL_OPT_ATTENTION_CORE) && d->tp > 0 && has[PL_LOOP_MODEL]) {
		int64_t heads = 1;
		for (int l = 0; l < op->spec.nloops; l++)
			if (roles[l] == PL_LOOP_MODEL && op->spec.loop[l].splittable)
				heads *= op->spec.loop[l].size;
		if (heads % d->tp == 0 &&
		    (cut[PL_LOOP_MODEL] != d->tp ||
		     (has[PL_LOOP_SEQ] && cut[PL_LOOP_SEQ] != (d->cp > 0 ? d->cp : 1))))
			return 0;
	}
	for (int l = 0; !weight && off && stream && l < op->spec.nloops; l++)
		if (stream[l] && split[l] > 1)
			return 0;
	return 1;
}
