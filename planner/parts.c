/* Parts: ops before the first repeated layer are the embedding, ops after
 * the last one the head; in each layer, the ops up to the first residual add
 * after its softmax are the attention and the rest the MLP ("experts" when
 * it routes tokens). Each figure of a part is the value most of its ops
 * share (op order breaks ties), read off the ops' loops and their roles
 * (graph/roles.h). */
#include "graph/ops.h"
#include "planner/parts.h"

#include <stdlib.h>
#include <string.h>

#include "graph/roles.h"
#include "search/search.h"
#include "graph/alloc.h"
#include "graph/json.h"

enum { P_EMBED, P_ATTN, P_MLP, P_EXPERTS, P_HEAD, P_COUNT };
static const char *const part_name[P_COUNT] = {"embedding", "attention", "mlp", "experts", "head"};

/* the figures of one op under its split */
typedef struct figures {
	int64_t weight; /* slices of the weight it reads (0: reads none) */
	int64_t batch, seq, experts, replicated;
	int has_experts; /* it has a loop over the experts */
	int norm;        /* a LayerNorm or RMSNorm */
} figures;

static void op_figures(const pl_graph *g, const pl_op *op, const uint8_t *roles,
                       const int64_t *split, int64_t mesh, figures *f)
{
	memset(f, 0, sizeof *f);
	f->batch = f->seq = f->experts = 1;
	int64_t used = 1;
	for (int l = 0; l < op->spec.nloops; l++) {
		used *= split[l];
		if (roles[l] == PL_LOOP_DATA)
			f->batch *= split[l];
		else if (roles[l] == PL_LOOP_SEQ)
			f->seq *= split[l];
		else if (roles[l] == PL_LOOP_EXPERT) {
			f->experts *= split[l];
			f->has_experts = 1;
		}
	}
	f->norm = (pl_op_traits(op) & PL_OPT_NORM) != 0;
	f->replicated = used > 0 ? mesh / used : 1;
	for (int i = 0; i < op->ninputs; i++) {
		const pl_tensor *t = &g->tensors[op->in[i]];
		if (!pl_is_weight(t))
			continue;
		int64_t s = 1;
		for (int d = 0; d < t->rank; d++)
			if (op->spec.in[i][d].count > 0)
				s *= split[op->spec.in[i][d].first];
		if (s > f->weight)
			f->weight = s;
	}
}

/* the value most of n values share; the first seen among equals */
/* the most frequent value of v (of equals, the one seen first), by sorting
 * (value, position) pairs: O(n log n) */
typedef struct vpos {
	int64_t v;
	int pos;
} vpos;

static int vpos_cmp(const void *x, const void *y)
{
	const vpos *a = x, *b = y;
	if (a->v != b->v)
		return a->v < b->v ? -1 : 1;
	return (a->pos > b->pos) - (a->pos < b->pos);
}

static int64_t mode(const int64_t *v, int n, vpos *s)
{
	for (int i = 0; i < n; i++)
		s[i] = (vpos){v[i], i};
	qsort(s, (size_t)n, sizeof *s, vpos_cmp);
	int best = -1, bc = 0;
	for (int i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && s[j].v == s[i].v; j++)
			;
		/* s[i].pos: the value's first position */
		if (j - i > bc || (j - i == bc && s[i].pos < best)) {
			bc = j - i;
			best = s[i].pos;
		}
	}
	return best >= 0 ? v[best] : 0;
}

/* The figures a part reports: which value of an op, and whether the op
 * counts (0: every op). */
enum figure_kind { F_WEIGHT, F_BATCH, F_SEQ, F_REPLICATED, F_EXPERTS, F_NORM_SEQ, F_COUNT };
static const char *const figure_key[F_COUNT] = {
    "weight_cut", "batch_cut", "sequence_cut", "replicated", "experts_cut",
    /* the norms' cut of the sequence: Megatron's sequence parallelism cuts it
     * where the matmuls do not */
    "norms_sequence_cut"};

static int figure(const figures *f, int which, int64_t *v)
{
	switch ((enum figure_kind)which) {
	case F_WEIGHT: *v = f->weight; return f->weight > 0;
	case F_BATCH: *v = f->batch; return 1;
	case F_SEQ: *v = f->seq; return 1;
	case F_REPLICATED: *v = f->replicated; return 1;
	case F_EXPERTS: *v = f->experts; return f->has_experts;
	case F_NORM_SEQ: *v = f->seq; return f->norm;
	case F_COUNT: break;
	}
	*v = 0;
	return 0;
}

static void add_part(cJSON *parts, const char *name, const figures *f, int n, int s0, int s1)
{
	int64_t *v = pl_malloc(sizeof *v * (size_t)(n + 1));
	vpos *sc = pl_malloc(sizeof *sc * (size_t)(n + 1));
	if (!v || !sc) {
		free(v);
		free(sc);
		return;
	}
	cJSON *o = cJSON_AddObjectToObject(parts, name);
	cJSON_AddNumberToObject(o, "ops", n);
	for (int q = 0; q < F_COUNT; q++) {
		int k = 0;
		for (int i = 0; i < n; i++)
			k += figure(&f[i], q, &v[k]);
		if (k) /* a figure no op of the part has is left out */
			cJSON_AddNumberToObject(o, figure_key[q], (double)mode(v, k, sc));
	}
	cJSON *st = cJSON_AddArrayToObject(o, "stages");
	pl_json_push(st, cJSON_CreateNumber(s0));
	pl_json_push(st, cJSON_CreateNumber(s1));
	free(v);
	free(sc);
}

/* the part of op o of a layer starting at `first` of `len` ops */
static int layer_part(const pl_graph *g, int first, int len, int o)
{
	int softmax = -1, split = -1, moe = 0;
	for (int k = first; k < first + len; k++) {
		const pl_op *op = &g->ops[k];
		if ((pl_op_traits(op) & PL_OPT_ATTENTION) && softmax < 0)
			softmax = k;
		if (pl_op_traits(op) & PL_OPT_EXPERTS)
			moe = 1;
		/* the residual add: both inputs computed, one of them from before the softmax */
		if (softmax >= 0 && split < 0 && op->type == PL_OP_ADD && op->ninputs == 2 &&
		    g->tensors[op->in[0]].role == PL_ROLE_ACTIVATION &&
		    g->tensors[op->in[1]].role == PL_ROLE_ACTIVATION &&
		    (g->tensors[op->in[0]].producer < softmax ||
		     g->tensors[op->in[1]].producer < softmax))
			split = k;
	}
	if (softmax < 0 || split < 0)
		return moe ? P_EXPERTS : P_MLP;
	return o <= split ? P_ATTN : moe ? P_EXPERTS : P_MLP;
}

const char *pl_part_name(int part)
{
	return part >= 0 && part < P_COUNT ? part_name[part] : NULL;
}

int pl_op_parts(const pl_graph *g, int *part)
{
	pl_run runs[64];
	int nr = pl_find_runs(g, runs, 64);
	if (nr < 1)
		return -1;
	int lo = runs[0].first, hi = runs[nr - 1].first + runs[nr - 1].len * runs[nr - 1].count;
	for (int o = 0; o < g->nops; o++) {
		part[o] = o < lo ? P_EMBED : o >= hi ? P_HEAD : -1;
		for (int r = 0; r < nr && part[o] < 0; r++) {
			int end = runs[r].first + runs[r].len * runs[r].count;
			if (o >= runs[r].first && o < end) {
				int first =
				    runs[r].first + (o - runs[r].first) / runs[r].len * runs[r].len;
				part[o] = layer_part(g, first, runs[r].len, o);
			}
		}
		if (part[o] < 0) /* between two runs of layers */
			part[o] = P_MLP;
	}
	return 0;
}

cJSON *pl_plan_parts(const pl_graph *g, int64_t *const *splits, int64_t mesh, const int *stage)
{
	uint8_t *roles = pl_malloc((size_t)g->nops * PL_MAX_LOOPS + 1);
	int *part = pl_malloc(sizeof *part * ((size_t)g->nops + 1));
	figures *f = pl_malloc(sizeof *f * ((size_t)g->nops + 1));
	cJSON *parts = NULL;
	if (!roles || !part || !f || pl_op_parts(g, part) || pl_loop_roles(g, roles))
		goto done;
	parts = cJSON_CreateObject();
	for (int p = 0; p < P_COUNT && parts; p++) {
		int n = 0, s0 = -1, s1 = -1;
		for (int o = 0; o < g->nops; o++) {
			if (part[o] != p)
				continue;
			op_figures(g, &g->ops[o], roles + (size_t)o * PL_MAX_LOOPS, splits[o], mesh,
			           &f[n++]);
			int s = stage ? stage[o] : 0;
			if (s0 < 0 || s < s0)
				s0 = s;
			if (s > s1)
				s1 = s;
		}
		if (n)
			add_part(parts, part_name[p], f, n, s0, s1);
	}
done:
	free(roles);
	free(part);
	free(f);
	return parts;
}
