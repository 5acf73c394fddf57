/* Strategy checkpoint writer and reader. The writer derives everything but
 * the strategies (layouts, slice shapes, groups) from the op rules; the
 * reader needs only parallel_strategy_item. */
#define _GNU_SOURCE /* qsort_r */
#include "planner/checkpoint.h"

#include "planner/parts.h"
#include "graph/parse.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "costmodel/cost.h"
#include "graph/layout.h"
#include "graph/ops.h"
#include "graph/alloc.h"
#include "graph/json.h"

/* An op's matrix-product FLOPs (what profilers count: MatMul, Conv,
 * attention's two products, the way FlashAttention counts them) forward
 * and backward at full size, for a step: times the micro-batches the graph
 * is one of. Recompute not counted. */
static void op_flops(const pl_graph *g, const pl_op *op, double *fwd, double *bwd)
{
	int64_t ones[PL_MAX_LOOPS];
	for (int l = 0; l < PL_MAX_LOOPS; l++)
		ones[l] = 1;
	pl_opwork w;
	memset(&w, 0, sizeof w);
	pl_op_rule_get(op->type)->work(g, op, ones, &w);
	double m = g->micro_batches > 1 ? (double)g->micro_batches : 1;
	*fwd = m * w.gemm_flops_fwd;
	*bwd = m * w.gemm_flops_bwd;
}

static cJSON *int_array(const int64_t *v, int n)
{
	cJSON *a = cJSON_CreateArray();
	for (int i = 0; a && i < n; i++)
		pl_json_push(a, cJSON_CreateNumber((double)v[i]));
	return a;
}

/* The coordinate of rank along every axis of dm but those in `axes`: ranks
 * with equal keys differ only along `axes`. */
static int64_t key_off_axes(const pl_devmat *dm, const int8_t *axes, int naxes, int64_t rank)
{
	int8_t rest[PL_MAX_AXES];
	int n = 0;
	for (int a = 0; a < dm->n; a++) {
		int in = 0;
		for (int k = 0; k < naxes; k++)
			in |= axes[k] == a;
		if (!in)
			rest[n++] = (int8_t)a;
	}
	return pl_devmat_coord(dm, rest, n, rank);
}

/* Sequence parallel, read off the first LayerNorm/RMSNorm: the ranks of one
 * tp group (they hold different slices of the largest param, `tp` axes of
 * gl) that also hold different token slices (its input's dimensions before
 * the last) of that norm's input -- Megatron's sequence parallelism, the
 * norm regions' tokens cut over the tensor-parallel ranks. NULL when there
 * is no norm or no such split (every group would be one rank). */
typedef struct rank_key {
	int64_t a, b, r;
} rank_key;

static int cmp_rank_key(const void *x, const void *y)
{
	const rank_key *p = x, *q = y;
	if (p->a != q->a)
		return p->a < q->a ? -1 : 1;
	if (p->b != q->b)
		return p->b < q->b ? -1 : 1;
	return (p->r > q->r) - (p->r < q->r);
}

static int cmp_rank_first(const void *x, const void *y)
{
	const rank_key *p = x, *q = y;
	return (p->r > q->r) - (p->r < q->r);
}

static cJSON *sp_groups(const pl_graph *g, int64_t *const *splits, int64_t mesh, int64_t stages,
                        const pl_layout *gl, const int8_t *tp_axes, int ntp)
{
	int o = 0;
	while (o < g->nops && !(pl_op_traits(&g->ops[o]) & PL_OPT_NORM))
		o++;
	if (o == g->nops)
		return NULL;
	pl_layout nl;
	pl_op_input_layout(g, &g->ops[o], splits[o], mesh, 0, &nl);
	int8_t tok[PL_MAX_AXES];
	int ntok = 0;
	for (int d = 0; d + 1 < nl.rank; d++)
		for (int k = 0; k < nl.nmap[d]; k++)
			tok[ntok++] = nl.map[d][k];
	/* a group: the ranks with the same (tp group, token group) pair. Ranks
	 * sorted by that pair and then by rank make each group a run, its first
	 * member first; groups are listed by first member (n log n in the mesh). */
	rank_key *rk = pl_malloc(sizeof *rk * (size_t)mesh);
	int64_t *members = pl_malloc(sizeof *members * (size_t)mesh);
	int64_t *start = pl_malloc(sizeof *start * ((size_t)mesh + 1));
	cJSON *all = NULL;
	if (!rk || !members || !start)
		goto done;
	for (int64_t r = 0; r < mesh; r++)
		rk[r] = (rank_key){key_off_axes(&gl->dm, tp_axes, ntp, r),
		                   key_off_axes(&nl.dm, tok, ntok, r), r};
	qsort(rk, (size_t)mesh, sizeof *rk, cmp_rank_key);
	int64_t ng = 0, biggest = 1;
	for (int64_t i = 0; i < mesh; i++)
		if (i == 0 || rk[i].a != rk[i - 1].a || rk[i].b != rk[i - 1].b)
			start[ng++] = i;
	start[ng] = mesh;
	for (int64_t k = 0; k < ng; k++)
		if (start[k + 1] - start[k] > biggest)
			biggest = start[k + 1] - start[k];
	if (biggest == 1)
		goto done;
	/* the groups in the order of their first members */
	rank_key *firsts = pl_malloc(sizeof *firsts * (size_t)(ng + 1));
	if (!firsts)
		goto done;
	for (int64_t k = 0; k < ng; k++)
		firsts[k] = (rank_key){0, k, rk[start[k]].r};
	qsort(firsts, (size_t)ng, sizeof *firsts, cmp_rank_first);
	all = cJSON_CreateArray();
	for (int64_t s = 0; s < stages; s++) /* the same position in every stage */
		for (int64_t k = 0; k < ng; k++) {
			int64_t g0 = firsts[k].b, n = 0;
			for (int64_t i = start[g0]; i < start[g0 + 1]; i++)
				members[n++] = rk[i].r + s * mesh;
			pl_json_push(all, int_array(members, (int)n));
		}
	free(firsts);
done:
	free(rk);
	free(members);
	free(start);
	return all;
}

/* Rank groups along the given axes of a device matrix of one stage's mesh,
 * repeated for every stage (ranks s * mesh ..): every rank in one. */
static cJSON *groups_json(const pl_devmat *dm, const int8_t *axes, int naxes, int64_t devices,
                          int64_t stages)
{
	cJSON *all = cJSON_CreateArray();
	pl_prim p = {.kind = PL_PRIM_ALL_REDUCE, .dm = *dm, .naxes = naxes, .group_size = 1};
	for (int k = 0; k < naxes; k++) {
		p.axes[k] = axes[k];
		p.group_size *= dm->size[axes[k]];
	}
	int64_t *members = pl_malloc(sizeof *members * (size_t)p.group_size);
	if (!members)
		return all;
	for (int64_t s = 0; s < stages; s++)
		for (int64_t r = 0; r < devices; r++) {
			/* list each group once, from its first member: the rank at
			 * coordinate 0 on the group's axes (linear in the devices) */
			if (pl_devmat_coord(dm, p.axes, naxes, r) != 0)
				continue;
			int64_t idx;
			pl_prim_group(&p, r, members, &idx);
			for (int64_t k = 0; k < p.group_size; k++)
				members[k] += s * devices;
			pl_json_push(all, int_array(members, (int)p.group_size));
		}
	free(members);
	return all;
}

const char *const pl_ckpt_mem_names[PL_CKPT_MEM] = {"weights",     "gradients", "optimizer_states",
                                                    "activations", "transient", "reserved"};

/* A param a matrix product reads first: what a layer's weight is. */
static int gemm_param(const pl_graph *g, const pl_tensor *t)
{
	return t->role == PL_ROLE_PARAM && t->nconsumers > 0 &&
	       (pl_op_traits(&g->ops[t->consumers[0]]) & PL_OPT_GEMM);
}

/* Two such params in the order of what makes them the same weight of
 * different layers: shape and dtype, and names alike but for digits (0). */
static int weight_cmp(const pl_tensor *a, const pl_tensor *b)
{
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	if (a->dtype != b->dtype)
		return a->dtype < b->dtype ? -1 : 1;
	for (int d = 0; d < a->rank; d++)
		if (a->shape[d] != b->shape[d])
			return a->shape[d] < b->shape[d] ? -1 : 1;
	return pl_cmp_but_digits(a->name, b->name);
}

/* Params a and b are the same weight of different layers. */
static int same_layer_weight(const pl_graph *g, int ta, int tb)
{
	const pl_tensor *a = &g->tensors[ta], *b = &g->tensors[tb];
	return gemm_param(g, a) && gemm_param(g, b) && !weight_cmp(a, b);
}

/* A weight of a repeated layer: another param is the same weight of another
 * layer (an embedding or a head is one of a kind). Per tensor into flag[],
 * by sorting the candidates on weight_cmp: O(T log T). */
typedef struct lw_key {
	const pl_tensor *t;
	int idx;
} lw_key;

static int lw_cmp(const void *x, const void *y)
{
	return weight_cmp(((const lw_key *)x)->t, ((const lw_key *)y)->t);
}

/* The experts of a model with MoE ops (its dispatch's router width), or 0. */
static int64_t model_experts(const pl_graph *g)
{
	int64_t experts = 0;
	for (int o = 0; o < g->nops; o++)
		if (pl_op_traits(&g->ops[o]) & PL_OPT_DISPATCH)
			experts = g->tensors[g->ops[o].in[1]].shape[1];
	return experts;
}

/* An expert weight: a param [experts, ., .] (the ep groups follow it) */
static int expert_weight(const pl_tensor *t, int64_t experts)
{
	return experts > 0 && t->rank == 3 && t->shape[0] == experts;
}

static int layer_weights(const pl_graph *g, uint8_t *flag)
{
	lw_key *k = pl_malloc(sizeof *k * ((size_t)g->ntensors + 1));
	if (!k)
		return -1;
	int n = 0;
	int64_t experts = model_experts(g);
	for (int u = 0; u < g->ntensors; u++) {
		const pl_tensor *t = &g->tensors[u];
		flag[u] = 0;
		/* the layers' dp/tp groups follow a dense weight; the experts' own
		 * cut is the ep group's */
		if (gemm_param(g, t) && !expert_weight(t, experts))
			k[n++] = (lw_key){t, u};
	}
	qsort(k, (size_t)n, sizeof *k, lw_cmp);
	for (int i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && !lw_cmp(&k[i], &k[j]); j++)
			;
		for (int q = i; q < j && j - i > 1; q++)
			flag[k[q].idx] = 1;
	}
	free(k);
	return 0;
}

/* The device matrix of a param's gradient layout, and which of its axes cut
 * the param (the rest replicate it): what its dp and tp groups follow. */
static void weight_axes(const pl_graph *g, int64_t *const *splits, int64_t mesh, int t,
                        pl_layout *l, uint32_t *cut)
{
	const pl_tensor *pt = &g->tensors[t];
	int o = pt->consumers[0];
	pl_op_input_grad_layout(g, &g->ops[o], splits[o], mesh, pt->consumer_slots[0], l);
	*cut = 0;
	for (int d = 0; d < l->rank; d++)
		for (int k = 0; k < l->nmap[d]; k++)
			*cut |= 1u << l->map[d][k];
}

/* common_layout's sort: by cut, then device matrix, then index */
typedef struct layout_keys {
	const pl_layout *l;
	const uint32_t *cut;
} layout_keys;

static int layout_key_diff(const layout_keys *k, int a, int b)
{
	const pl_devmat *x = &k->l[a].dm, *y = &k->l[b].dm;
	if (k->cut[a] != k->cut[b])
		return k->cut[a] < k->cut[b] ? -1 : 1;
	if (x->n != y->n)
		return x->n < y->n ? -1 : 1;
	for (int i = 0; i < x->n; i++)
		if (x->size[i] != y->size[i])
			return x->size[i] < y->size[i] ? -1 : 1;
	return 0;
}

static int cmp_layout_key(const void *pa, const void *pb, void *keys)
{
	int a = *(const int *)pa, b = *(const int *)pb, d = layout_key_diff(keys, a, b);
	return d ? d : (a > b) - (a < b);
}

/* Among the weights of t's kind in every layer, the one whose groups most of
 * them share (the first of equals); *except lists those that differ (NULL
 * when none). Returns the tensor and sets its op and slot. */
static int common_layout(const pl_graph *g, int64_t *const *splits, int64_t mesh, int t, int *op,
                         int *slot, cJSON **except)
{
	int *kin = pl_malloc(sizeof *kin * (size_t)g->ntensors), n = 0;
	pl_layout *l = pl_malloc(sizeof *l * (size_t)g->ntensors);
	uint32_t *cut = pl_malloc(sizeof *cut * (size_t)g->ntensors);
	*except = NULL;
	if (!kin || !l || !cut)
		goto done;
	for (int u = 0; u < g->ntensors; u++) {
		if (u != t && !same_layer_weight(g, t, u))
			continue;
		weight_axes(g, splits, mesh, u, &l[n], &cut[n]);
		kin[n++] = u;
	}
	/* the most common (cut, device matrix), the first of equals: sorted, so
	 * that a model of many layers is not n^2 (one entry per layer) */
	int best = 0, best_count = -1;
	int *ix = pl_malloc(sizeof *ix * ((size_t)n + 1));
	if (!ix)
		goto done;
	for (int i = 0; i < n; i++)
		ix[i] = i;
	layout_keys keys = {l, cut};
	qsort_r(ix, (size_t)n, sizeof *ix, cmp_layout_key, &keys);
	for (int i = 0, j; i < n; i = j) {
		for (j = i; j < n && !layout_key_diff(&keys, ix[i], ix[j]); j++)
			;
		/* a run holds one key, in index order: ix[i] is its first */
		if (j - i > best_count || (j - i == best_count && ix[i] < best)) {
			best_count = j - i;
			best = ix[i];
		}
	}
	free(ix);
	if (n > 0 && best_count < n) {
		*except = cJSON_CreateArray();
		for (int j = 0; j < n; j++)
			if (!(cut[best] == cut[j] && pl_devmat_equal(&l[best].dm, &l[j].dm)))
				pl_json_push(*except, cJSON_CreateString(g->tensors[kin[j]].name));
	}
	if (n > 0) {
		t = kin[best];
		*op = g->tensors[t].consumers[0];
		*slot = g->tensors[t].consumer_slots[0];
	}
done:
	free(kin);
	free(l);
	free(cut);
	return t;
}

void pl_ckpt_add_comm(cJSON *cost, const pl_commbook *bk)
{
	cJSON *a = cJSON_AddArrayToObject(cost, "communication_by_collective");
	for (int k = 0; k < PL_COLL_COUNT; k++)
		for (int l = 0; l < PL_LINK_COUNT; l++) {
			if (!(bk->seconds[k][l] > 0))
				continue;
			cJSON *e = cJSON_CreateObject();
			cJSON_AddStringToObject(e, "collective", pl_coll_name((pl_coll)k));
			cJSON_AddStringToObject(e, "link", pl_link_name(l));
			cJSON_AddNumberToObject(e, "seconds", bk->seconds[k][l]);
			cJSON_AddNumberToObject(e, "bus_bytes", bk->bus_bytes[k][l]);
			pl_json_push(a, e);
		}
	if (bk->slice_s > 0) {
		cJSON *e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "collective", "slice");
		cJSON_AddStringToObject(e, "link", "local");
		cJSON_AddNumberToObject(e, "seconds", bk->slice_s);
		cJSON_AddNumberToObject(e, "bus_bytes", 0);
		pl_json_push(a, e);
	}
	cJSON_AddNumberToObject(cost, "communication_hidden_seconds", bk->hidden_s);
}

void pl_ckpt_add_attention_beyond(cJSON *cost, const pl_cluster *c, double seq, double longest)
{
	if (!(seq > 0) || !c)
		return;
	cJSON *a = cJSON_AddObjectToObject(cost, "attention_beyond_measured");
	cJSON_AddStringToObject(a, "kernel", c->attention_kernel);
	cJSON_AddNumberToObject(a, "sequence", seq);
	cJSON_AddNumberToObject(a, "longest_measured", longest);
}

cJSON *pl_ckpt_stage_memory(const pl_membreak *per, int64_t stages)
{
	cJSON *a = cJSON_CreateArray();
	for (int64_t s = 0; s < stages; s++) {
		cJSON *e = cJSON_CreateObject();
		cJSON_AddNumberToObject(e, "weights", per[s].weights);
		cJSON_AddNumberToObject(e, "gradients", per[s].gradients);
		cJSON_AddNumberToObject(e, "optimizer_states", per[s].optimizer_states);
		cJSON_AddNumberToObject(e, "activations", per[s].activations);
		cJSON_AddNumberToObject(e, "transient", per[s].transient);
		pl_json_push(a, e);
	}
	return a;
}

/* The checkpoint's head: format, model, cluster, search, current stage. */
static void add_head(cJSON *root, const pl_graph *g, const pl_ckpt_info *info)
{
	cJSON_AddStringToObject(root, "format", "planner.strategy/1");
	cJSON *m = cJSON_AddObjectToObject(root, "model");
	cJSON_AddStringToObject(m, "name", g->name);
	cJSON_AddStringToObject(m, "sha256", g->sha256);
	cJSON *c = cJSON_AddObjectToObject(root, "cluster");
	cJSON_AddStringToObject(c, "name", info->cluster_name);
	cJSON_AddNumberToObject(c, "devices", (double)info->devices);
	cJSON_AddNumberToObject(c, "nodes", (double)info->nodes);
	cJSON_AddNumberToObject(c, "devices_per_node", (double)info->devices_per_node);
	if (info->cluster)
		pl_json_add(c, "description", cJSON_Duplicate(info->cluster, 1));
	cJSON *s = cJSON_AddObjectToObject(root, "search");
	cJSON_AddStringToObject(s, "mode", info->mode);
	/* 0.1 s resolution keeps the file byte-identical across runs of small
	 * searches; with SOURCE_DATE_EPOCH set (reproducible-builds.org's
	 * convention for "make the output reproducible") it is 0 */
	const char *sde = getenv("SOURCE_DATE_EPOCH");
	cJSON_AddNumberToObject(s, "seconds", sde && *sde ? 0 : round(info->seconds * 10) / 10);
	cJSON_AddBoolToObject(s, "optimal", info->optimal);
	if (info->why && info->why[0])
		cJSON_AddStringToObject(s, "why", info->why);
	if (info->repeated_layers)
		cJSON_AddNumberToObject(s, "repeated_layers", info->repeated_layers);
	if (info->memory_limit > 0)
		cJSON_AddNumberToObject(s, "memory_limit_bytes", info->memory_limit);
	cJSON_AddNumberToObject(root, "current_stage", 0);
}

/* A whole-job plan's pipeline section, ZeRO level and recompute. */
static void add_pipeline(cJSON *root, const pl_graph *g, const pl_ckpt_info *info, int64_t mesh)
{
	if (info->stages > 0) {
		cJSON *pp = cJSON_AddObjectToObject(root, "pipeline");
		cJSON_AddNumberToObject(pp, "stages", (double)info->stages);
		cJSON_AddNumberToObject(pp, "micro_batches", (double)info->micro_batches);
		int64_t vs = info->virtual_stages > 1 ? info->virtual_stages : 1;
		cJSON_AddStringToObject(pp, "schedule", vs > 1 ? "interleaved-1F1B" : "1F1B");
		cJSON_AddNumberToObject(pp, "virtual_stages", (double)vs);
		cJSON_AddBoolToObject(pp, "overlap_grad_reduce", info->overlap & PL_OVERLAP_GRAD);
		if (info->overlap & PL_OVERLAP_TP)
			cJSON_AddBoolToObject(pp, "tp_comm_overlap", 1);
		if (info->overlap & PL_OVERLAP_PARAM)
			cJSON_AddBoolToObject(pp, "overlap_param_gather", 1);
		if (info->seq_parallel != PL_SEQ_PAR_AUTO)
			cJSON_AddBoolToObject(pp, "sequence_parallel",
			                      info->seq_parallel == PL_SEQ_PAR_ON);
		cJSON_AddNumberToObject(pp, "stage_devices", (double)mesh);
		if (info->stage_s) {
			cJSON *a = cJSON_AddArrayToObject(pp, "stage_microbatch_seconds");
			for (int64_t k = 0; k < info->stages; k++)
				pl_json_push(a, cJSON_CreateNumber(info->stage_s[k]));
		}
		if (info->stage_mem)
			pl_json_add(pp, "stage_memory_bytes",
			            pl_ckpt_stage_memory(info->stage_mem, info->stages));
		cJSON_AddNumberToObject(root, "optimizer_shard", info->zero);
		cJSON_AddStringToObject(
		    root, "recompute",
		    pl_recompute_name(pl_recompute_of_plan(g, info->op_recompute)));
	}
}

/* Per op: stage, recompute, the strategy's tuples, type, part and, when
 * priced, its time, memory and FLOPs. */
static void add_strategies(cJSON *root, const pl_graph *g, int64_t *const *splits,
                           const pl_ckpt_info *info)
{
	cJSON *items = cJSON_AddObjectToObject(root, "parallel_strategy_item");
	int *part = pl_malloc(sizeof *part * ((size_t)g->nops + 1));
	if (part && pl_op_parts(g, part)) {
		free(part);
		part = NULL;
	}
	for (int o = 0; o < g->nops; o++) {
		const pl_op *op = &g->ops[o];
		int64_t tuples[PL_MAX_OP_INPUTS][PL_MAX_RANK];
		pl_op_split_to_tuples(g, op, splits[o], tuples);
		cJSON *it = cJSON_AddObjectToObject(items, op->name);
		cJSON_AddNumberToObject(it, "stage", info->op_stage ? info->op_stage[o] : 0);
		/* the model's own recomputes (pl_op.recompute) are not the plan's */
		if (info->op_recompute && info->op_recompute[o] &&
		    info->op_recompute[o] != op->recompute)
			cJSON_AddNumberToObject(it, "recompute", info->op_recompute[o]);
		cJSON *ps = cJSON_AddArrayToObject(it, "parallel_strategy");
		for (int i = 0; i < op->ninputs; i++)
			pl_json_push(ps, int_array(tuples[i], g->tensors[op->in[i]].rank));
		cJSON_AddStringToObject(it, "type", pl_optype_name(op->type));
		if (part)
			cJSON_AddStringToObject(it, "part", pl_part_name(part[o]));
		if (info->op_compute_s) {
			cJSON_AddNumberToObject(it, "compute_seconds", info->op_compute_s[o]);
			cJSON_AddNumberToObject(it, "communication_seconds", info->op_comm_s[o]);
			cJSON_AddNumberToObject(it, "memory_bytes", info->op_mem_bytes[o]);
			double f, b;
			op_flops(g, op, &f, &b);
			cJSON_AddNumberToObject(it, "flops_forward", f);
			cJSON_AddNumberToObject(it, "flops_backward", b);
		}
	}

	free(part);
}

/* The layers' weight the groups are read off: the largest param of a MatMul
 * whose shape repeats (lw), else the largest param; op and slot of its owner. */
typedef struct lw_pick {
	int op, slot, t, lw;
	int64_t elems;
} lw_pick;

/* params: each one's layout (MindSpore's parallel_layout_item), and the
 * layers' weight picked on the way; -1 when out of memory. */
static int add_layouts(cJSON *root, const pl_graph *g, int64_t *const *splits,
                       const pl_ckpt_info *info, int64_t mesh, lw_pick *pick)
{
	/* params: the layout of the op that owns them (first consumer) */
	cJSON *layouts = cJSON_AddObjectToObject(root, "parallel_layout_item");
	uint8_t *lwf = pl_malloc((size_t)g->ntensors + 1);
	if (!lwf || layer_weights(g, lwf)) { /* out of memory: the caller's document is
		                              * incomplete, and pl_alloc_null_count says so */
		free(lwf);
		return -1;
	}
	for (int t = 0; t < g->ntensors; t++) {
		const pl_tensor *pt = &g->tensors[t];
		if (pt->role != PL_ROLE_PARAM || pt->nconsumers == 0)
			continue;
		int o = pt->consumers[0], slot = pt->consumer_slots[0];
		pl_layout l;
		pl_op_input_layout(g, &g->ops[o], splits[o], mesh, slot, &l);
		int64_t dev[PL_MAX_AXES], map[PL_MAX_RANK], local[PL_MAX_RANK];
		int nd;
		pl_layout_ms(&l, dev, &nd, map);
		pl_layout_local_shape(&l, local);
		cJSON *it = cJSON_AddObjectToObject(layouts, pt->name);
		pl_json_add(it, "dev_matrix", int_array(dev, nd));
		pl_json_add(it, "tensor_map", int_array(map, pt->rank));
		pl_json_add(it, "tensor_shape", int_array(pt->shape, pt->rank));
		pl_json_add(it, "slice_shape", int_array(local, pt->rank));
		/* what MindSpore's strategy reader requires too: field (an
		 * embedding's field split: none), and the optimizer shard of ZeRO
		 * (its group: the ranks holding the same piece, the device-matrix
		 * axes no dimension uses; step: the rank distance between members,
		 * the product of the axes right of them; both 0 without ZeRO) */
		int64_t shard = 1, step = 1;
		int last = -1;
		for (int a = 0; a < nd; a++) {
			int used = 0;
			for (int d = 0; d < pt->rank; d++)
				used |= map[d] == nd - 1 - a;
			if (!used && dev[a] > 1) {
				shard *= dev[a];
				last = a;
			}
		}
		for (int a = last + 1; last >= 0 && a < nd; a++)
			step *= dev[a];
		int zs = info->zero > 0 && shard > 1;
		cJSON_AddNumberToObject(it, "field", 0);
		cJSON_AddNumberToObject(it, "opt_weight_shard_step", zs ? (double)step : 0);
		cJSON_AddNumberToObject(it, "opt_weight_shard_size", zs ? (double)shard : 0);
		/* the layers' weight: the largest param of a MatMul whose shape
		 * repeats (every layer has one); the largest param if none repeats */
		int lw = lwf[t];
		if (lw > pick->lw || (lw == pick->lw && pl_tensor_elems(pt) > pick->elems)) {
			pick->elems = pl_tensor_elems(pt);
			pick->lw = lw;
			pick->op = o;
			pick->slot = slot;
			pick->t = t;
		}
	}

	free(lwf);
	return 0;
}

/* The rank groups (dp, tp, cp, sp, ep, pp), the parts, and which weight the
 * groups follow. */
static void add_groups(cJSON *root, const pl_graph *g, int64_t *const *splits,
                       const pl_ckpt_info *info, int64_t mesh, lw_pick pick)
{
	/* the layers' weights may differ (a layer cut otherwise than the rest):
	 * the groups follow the layout most of them share; the others are named */
	cJSON *except = NULL;
	int big_t = pick.t, big_op = pick.op, big_slot = pick.slot;
	if (big_t >= 0 && pick.lw)
		big_t = common_layout(g, splits, mesh, big_t, &big_op, &big_slot, &except);
	/* groups, read off the layers' weight: ranks that hold the same slice and
	 * all-reduce its gradient (dp), ranks that hold its different slices (tp) */
	if (big_t >= 0)
		cJSON_AddStringToObject(root, "groups_param", g->tensors[big_t].name);
	if (except)
		pl_json_add(root, "groups_exceptions", except);
	cJSON *parts = pl_plan_parts(g, splits, mesh, info->op_stage);
	if (parts)
		pl_json_add(root, "parts", parts);
	cJSON *groups = cJSON_AddObjectToObject(root, "groups");
	pl_layout gl;
	if (big_op >= 0) {
		pl_op_input_grad_layout(g, &g->ops[big_op], splits[big_op], mesh, big_slot, &gl);
	} else { /* no params: the first op's first input */
		pl_op_input_grad_layout(g, &g->ops[0], splits[0], mesh, 0, &gl);
	}
	int8_t dp_axes[PL_MAX_AXES] = {0}, tp_axes[PL_MAX_AXES] = {0};
	int ndp = 0, ntp = 0;
	for (int a = 0; a < gl.dm.n; a++) {
		int mapped = 0;
		for (int d = 0; d < gl.rank; d++)
			for (int k = 0; k < gl.nmap[d]; k++)
				mapped |= gl.map[d][k] == a;
		if (mapped)
			tp_axes[ntp++] = (int8_t)a;
		else
			dp_axes[ndp++] = (int8_t)a;
	}
	int64_t pp = info->stages > 0 ? info->stages : 1;
	pl_json_add(groups, "dp", groups_json(&gl.dm, dp_axes, ndp, mesh, pp));
	pl_json_add(groups, "tp", groups_json(&gl.dm, tp_axes, ntp, mesh, pp));
	/* context parallel: the ranks that hold different pieces of the
	 * sequence the layers' weight reads (its activation's dimensions between
	 * the batch and the contracted one; the weight's dp groups span them) */
	if (big_op >= 0 && g->ops[big_op].ninputs == 2 && big_slot == 1) {
		pl_layout al;
		pl_op_input_layout(g, &g->ops[big_op], splits[big_op], mesh, 0, &al);
		int8_t cp_axes[PL_MAX_AXES] = {0};
		int ncp = 0;
		int64_t cpd = 1;
		for (int d = 1; d + 1 < al.rank; d++)
			for (int k = 0; k < al.nmap[d]; k++) {
				cp_axes[ncp++] = al.map[d][k];
				cpd *= al.dm.size[al.map[d][k]];
			}
		if (cpd > 1)
			pl_json_add(groups, "cp", groups_json(&al.dm, cp_axes, ncp, mesh, pp));
	}
	cJSON *sp = sp_groups(g, splits, mesh, pp, &gl, tp_axes, ntp);
	if (sp)
		pl_json_add(groups, "sp", sp);
	/* expert parallel, read off the largest expert weight (a param [experts,
	 * ., .] of a batched MatMul in a model with MoE ops): the ranks that hold
	 * different experts */
	int64_t experts = model_experts(g), ebig = -1;
	int eop = -1, eslot = -1;
	for (int t = 0; experts > 0 && t < g->ntensors; t++) {
		const pl_tensor *pt = &g->tensors[t];
		if (pt->role != PL_ROLE_PARAM || pt->nconsumers == 0 ||
		    !expert_weight(pt, experts) ||
		    !(pl_op_traits(&g->ops[pt->consumers[0]]) & PL_OPT_GEMM) ||
		    pl_tensor_elems(pt) <= ebig)
			continue;
		ebig = pl_tensor_elems(pt);
		eop = pt->consumers[0];
		eslot = pt->consumer_slots[0];
	}
	if (eop >= 0) {
		pl_layout el;
		pl_op_input_layout(g, &g->ops[eop], splits[eop], mesh, eslot, &el);
		pl_json_add(groups, "ep", groups_json(&el.dm, el.map[0], el.nmap[0], mesh, pp));
	}
	if (info->stages > 0) { /* the same position in every stage */
		cJSON *all = cJSON_AddArrayToObject(groups, "pp");
		int64_t *mem = pl_malloc(sizeof *mem * (size_t)pp);
		for (int64_t r = 0; mem && r < mesh; r++) {
			for (int64_t s = 0; s < pp; s++)
				mem[s] = s * mesh + r;
			pl_json_push(all, int_array(mem, (int)pp));
		}
		free(mem);
	}
}

/* The plan's price: step, its parts, memory, communication, utilisation. */
static void add_cost(cJSON *root, const pl_graph *g, const pl_ckpt_info *info)
{
	cJSON *cost = cJSON_AddObjectToObject(root, "cost");
	cJSON_AddNumberToObject(cost, "step_seconds", info->step_s);
	cJSON_AddNumberToObject(cost, "compute_seconds", info->compute_s);
	cJSON_AddNumberToObject(cost, "optimizer_seconds", info->optimizer_s);
	cJSON_AddNumberToObject(cost, "communication_seconds", info->comm_s);
	cJSON_AddNumberToObject(cost, "peak_memory_bytes", info->mem_bytes);
	if (info->mem_breakdown) {
		cJSON *mb = cJSON_AddObjectToObject(cost, "memory_breakdown_bytes");
		for (int k = 0; k < PL_CKPT_MEM; k++)
			cJSON_AddNumberToObject(mb, pl_ckpt_mem_names[k], info->mem_breakdown[k]);
		if (info->stages > 0)
			cJSON_AddNumberToObject(cost, "peak_memory_stage", info->mem_stage);
	}
	if (info->stages > 0)
		cJSON_AddNumberToObject(cost, "bubble_seconds", info->bubble_s);
	if (info->comm)
		pl_ckpt_add_comm(cost, info->comm);
	pl_ckpt_add_attention_beyond(cost, info->cl, info->attn_seq, info->attn_longest);
	if (info->cl)
		pl_ckpt_add_utilisation(cost, g, info->cl, info->step_s);
}

/* The checkpoint's fields in the order docs/formats.md lists them, each
 * section a function adding to the one document. */
cJSON *pl_ckpt_build(const pl_graph *g, int64_t *const *splits, const pl_ckpt_info *info)
{
	cJSON *root = cJSON_CreateObject();
	add_head(root, g, info);
	int64_t mesh =
	    info->stages > 0 && info->mesh_devices > 0 ? info->mesh_devices : info->devices;
	add_pipeline(root, g, info, mesh);
	add_strategies(root, g, splits, info);
	lw_pick pick = {.op = -1, .slot = -1, .t = -1, .lw = -1, .elems = -1};
	if (add_layouts(root, g, splits, info, mesh, &pick))
		return root; /* out of memory: the document is incomplete, and
		              * pl_alloc_null_count says so */
	add_groups(root, g, splits, info, mesh, pick);
	add_cost(root, g, info);
	return root;
}

void pl_ckpt_add_utilisation(cJSON *cost, const pl_graph *g, const pl_cluster *c, double step_s)
{
	if (!(step_s > 0) || !c)
		return;
	double flops = 0, tokens = 0, biggest = 0;
	for (int o = 0; o < g->nops; o++) {
		double f, b;
		op_flops(g, &g->ops[o], &f, &b);
		flops += f + b;
	}
	pl_dtype dt = PL_DT_FLOAT32;
	for (int t = 0; t < g->ntensors; t++) {
		const pl_tensor *x = &g->tensors[t];
		double n = (double)pl_tensor_elems(x);
		if (x->role == PL_ROLE_PARAM && n > biggest) {
			biggest = n;
			dt = x->dtype;
		}
		if (x->role == PL_ROLE_INPUT && x->rank >= 2 &&
		    (x->dtype == PL_DT_INT32 || x->dtype == PL_DT_INT64) && n > tokens)
			tokens = n; /* token ids [batch, sequence] */
	}
	double m = g->micro_batches > 1 ? (double)g->micro_batches : 1;
	double devices = (double)pl_cluster_devices_total(c);
	double peak = c->peak_flops[dt] > 0 ? c->peak_flops[dt] : c->peak_flops[PL_DT_FLOAT32];
	cJSON_AddNumberToObject(cost, "model_flops_per_step", flops);
	if (peak > 0)
		cJSON_AddNumberToObject(cost, "mfu", flops / (step_s * devices * peak));
	double tf = flops / (step_s * devices) / 1e12;
	cJSON_AddNumberToObject(cost, "model_tflops_per_device", tf);
	const char *family = NULL, *gemm = NULL;
	double seen = pl_cluster_seen_tflops(c, &family, &gemm);
	if (seen > 0 && tf > seen) { /* more than any published run of the kind measured */
		cJSON *a = cJSON_AddObjectToObject(cost, "tflops_above_measured");
		cJSON_AddStringToObject(a, "gpu_family", family);
		cJSON_AddStringToObject(a, "gemm", gemm);
		cJSON_AddNumberToObject(a, "most_measured", seen);
	}
	double lo, hi;
	char basis[200];
	pl_cluster_step_band(c, step_s, &lo, &hi, basis, sizeof basis);
	double lohi[2] = {lo, hi};
	cJSON *band = cJSON_CreateDoubleArray(lohi, 2);
	if (band && !cJSON_AddItemToObject(cost, "step_band_seconds", band))
		cJSON_Delete(band); /* out of memory: the caller's check finds it */
	cJSON_AddStringToObject(cost, "step_band_basis", basis);
	cJSON_AddNumberToObject(cost, "samples_per_second", (double)pl_graph_batch(g) * m / step_s);
	cJSON_AddNumberToObject(cost, "global_batch", (double)pl_graph_batch(g) * m);
	if (tokens > 0) {
		cJSON_AddNumberToObject(cost, "tokens_per_second_per_device",
		                        tokens * m / (step_s * devices));
		cJSON_AddNumberToObject(cost, "tokens_per_step", tokens * m);
	}
}

/* o.k, when present: an integer in [lo, hi] into *v (1), absent (0), or
 * anything else (-1) */
static int get_count(const cJSON *o, const char *k, double lo, double hi, double *v)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, k);
	if (!x)
		return 0;
	if (!cJSON_IsNumber(x) || x->valuedouble != floor(x->valuedouble) || x->valuedouble < lo ||
	    x->valuedouble > hi)
		return -1;
	*v = x->valuedouble;
	return 1;
}

/* o.key, when present, is not a finite number >= 0 */
static int bad_amount(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return v && !(cJSON_IsNumber(v) && isfinite(v->valuedouble) && v->valuedouble >= 0);
}

pl_status pl_ckpt_check(const cJSON *root, const char *where, pl_err *err)
{
	static const char *const op_numbers[] = {"compute_seconds", "communication_seconds",
	                                         "memory_bytes", "flops_forward", "flops_backward"};
	/* the blocks walked by key below: an array or a scalar in their place has
	 * members without names */
	static const char *const blocks[] = {"parallel_strategy_item", "cost", "cluster",
	                                     "pipeline"};
	for (size_t k = 0; k < sizeof blocks / sizeof *blocks; k++) {
		const cJSON *b = cJSON_GetObjectItemCaseSensitive(root, blocks[k]);
		if (b && !cJSON_IsObject(b))
			return pl_err_set(err, PL_EINVAL, "%s: %s: expected an object", where,
			                  blocks[k]);
	}
	const cJSON *it;
	double v;
	cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive(root, "parallel_strategy_item")) {
		if (!cJSON_IsObject(it))
			return pl_err_set(err, PL_EINVAL, "%s: op '%s': expected an object", where,
			                  it->string);
		const cJSON *ps = cJSON_GetObjectItemCaseSensitive(it, "parallel_strategy"), *in,
		            *d;
		int ok = !ps || (cJSON_IsArray(ps) && cJSON_GetArraySize(ps) <= PL_MAX_OP_INPUTS);
		if (ok && ps)
			cJSON_ArrayForEach (in, ps) {
				ok &= cJSON_IsArray(in) && cJSON_GetArraySize(in) <= PL_MAX_RANK;
				if (ok)
					cJSON_ArrayForEach (d, in)
						ok &= cJSON_IsNumber(d) && d->valuedouble >= 1 &&
						      d->valuedouble <= PL_MAX_DEVICES &&
						      d->valuedouble == floor(d->valuedouble);
			}
		if (!ok)
			return pl_err_set(
			    err, PL_EINVAL,
			    "%s: op '%s': parallel_strategy: expected one list per input of "
			    "integer slice counts from 1 to %d",
			    where, it->string, PL_MAX_DEVICES);
		if (get_count(it, "stage", 0, PL_MAX_DEVICES, &v) < 0)
			return pl_err_set(err, PL_EINVAL,
			                  "%s: op '%s': stage: expected an integer from 0 to %d",
			                  where, it->string, PL_MAX_DEVICES);
		for (size_t k = 0; k < sizeof op_numbers / sizeof *op_numbers; k++)
			if (bad_amount(it, op_numbers[k]))
				return pl_err_set(err, PL_EINVAL,
				                  "%s: op '%s': %s: expected a finite number >= 0",
				                  where, it->string, op_numbers[k]);
	}
	pl_status st = pl_ckpt_check_cluster(root, where, err);
	if (st)
		return st;
	const cJSON *e;
	cJSON_ArrayForEach (e, cJSON_GetObjectItemCaseSensitive(root, "cost")) {
		if (!strcmp(e->string, "step_band_basis") && cJSON_IsString(e))
			continue;
		if (!strcmp(e->string, "step_band_seconds")) {
			const cJSON *lo = cJSON_GetArrayItem(e, 0), *hi = cJSON_GetArrayItem(e, 1);
			if (!cJSON_IsArray(e) || cJSON_GetArraySize(e) != 2 ||
			    !cJSON_IsNumber(lo) || !cJSON_IsNumber(hi) ||
			    !(isfinite(lo->valuedouble) && lo->valuedouble >= 0 &&
			      isfinite(hi->valuedouble) && hi->valuedouble >= lo->valuedouble))
				return pl_err_set(
				    err, PL_EINVAL,
				    "%s: cost.step_band_seconds: expected [low, high], "
				    "finite, 0 <= low <= high",
				    where);
			continue;
		}
		if (cJSON_IsNumber(e) ? !(isfinite(e->valuedouble) && e->valuedouble >= 0)
		                      : !(cJSON_IsObject(e) || cJSON_IsArray(e) || cJSON_IsBool(e)))
			return pl_err_set(err, PL_EINVAL,
			                  "%s: cost.%s: expected a finite number >= 0", where,
			                  e->string);
	}
	const cJSON *pp = cJSON_GetObjectItemCaseSensitive(root, "pipeline");
	static const char *const pcounts[] = {"stages", "micro_batches", "virtual_stages"};
	for (size_t k = 0; k < sizeof pcounts / sizeof *pcounts; k++)
		if (get_count(pp, pcounts[k], 1, PL_MAX_DEVICES, &v) < 0)
			return pl_err_set(err, PL_EINVAL,
			                  "%s: pipeline.%s: expected an integer from 1 to %d",
			                  where, pcounts[k], PL_MAX_DEVICES);
	return PL_OK;
}

pl_status pl_ckpt_check_cluster(const cJSON *root, const char *where, pl_err *err)
{
	const cJSON *cl = cJSON_GetObjectItemCaseSensitive(root, "cluster");
	if (cl && !cJSON_IsObject(cl))
		return pl_err_set(err, PL_EINVAL, "%s: cluster: expected an object", where);
	static const char *const counts[] = {"devices", "nodes", "devices_per_node"};
	double v;
	for (size_t k = 0; k < sizeof counts / sizeof *counts; k++)
		if (get_count(cl, counts[k], 1, PL_MAX_DEVICES, &v) < 0)
			return pl_err_set(err, PL_EINVAL,
			                  "%s: cluster.%s: expected an integer from 1 to %d", where,
			                  counts[k], PL_MAX_DEVICES);
	double dev = pl_json_num(cl, "devices", 0), nodes = pl_json_num(cl, "nodes", 0),
	       per = pl_json_num(cl, "devices_per_node", 0);
	const cJSON *desc = cJSON_GetObjectItemCaseSensitive(cl, "description");
	if (desc && (nodes <= 0 || per <= 0)) {
		nodes = pl_json_num(desc, "nodes", 0);
		per = pl_json_num(desc, "devices_per_node", 0);
	}
	if (dev > 0 && nodes > 0 && per > 0 && dev != nodes * per)
		return pl_err_set(
		    err, PL_EINVAL,
		    "%s: cluster.devices: %g, but nodes x devices_per_node is %g x %g", where, dev,
		    nodes, per);
	return PL_OK;
}

pl_status pl_ckpt_parse_job(const pl_graph *g, const cJSON *root, const char *where,
                            int64_t *stages, int64_t *micro_batches, int64_t *virtual_stages,
                            int *overlap, int *zero, int *stage, uint8_t *recompute, int *is_job,
                            pl_err *err)
{
	*stages = *micro_batches = *virtual_stages = 1;
	*zero = *overlap = 0;
	*is_job = 0;
	memset(stage, 0, sizeof *stage * (size_t)g->nops);
	memset(recompute, 0, (size_t)g->nops);
	const cJSON *pp = cJSON_GetObjectItemCaseSensitive(root, "pipeline");
	double v;
	if (pp) {
		if (!cJSON_IsObject(pp))
			return pl_err_set(err, PL_EINVAL, "%s: pipeline: expected an object",
			                  where);
		*is_job = 1;
		int r = get_count(pp, "stages", 1, 1 << 20, &v);
		if (r < 0)
			return pl_err_set(err, PL_EINVAL,
			                  "%s: pipeline.stages: expected an integer >= 1", where);
		if (r)
			*stages = (int64_t)v;
		r = get_count(pp, "micro_batches", 1, 1 << 30, &v);
		if (r < 0)
			return pl_err_set(err, PL_EINVAL,
			                  "%s: pipeline.micro_batches: expected an integer >= 1",
			                  where);
		if (r)
			*micro_batches = (int64_t)v;
		r = get_count(pp, "virtual_stages", 1, PL_JOB_MAX_VIRTUAL, &v);
		if (r < 0)
			return pl_err_set(
			    err, PL_EINVAL,
			    "%s: pipeline.virtual_stages: expected an integer from 1 to %d", where,
			    PL_JOB_MAX_VIRTUAL);
		if (r)
			*virtual_stages = (int64_t)v;
		const cJSON *ov = cJSON_GetObjectItemCaseSensitive(pp, "overlap_grad_reduce");
		if (ov && !cJSON_IsBool(ov))
			return pl_err_set(
			    err, PL_EINVAL,
			    "%s: pipeline.overlap_grad_reduce: expected true or false", where);
		*overlap = cJSON_IsTrue(ov) ? PL_OVERLAP_GRAD : 0;
		const cJSON *tov = cJSON_GetObjectItemCaseSensitive(pp, "tp_comm_overlap");
		if (tov && !cJSON_IsBool(tov))
			return pl_err_set(err, PL_EINVAL,
			                  "%s: pipeline.tp_comm_overlap: expected true or false",
			                  where);
		if (cJSON_IsTrue(tov))
			*overlap |= PL_OVERLAP_TP;
		const cJSON *pov = cJSON_GetObjectItemCaseSensitive(pp, "overlap_param_gather");
		if (pov && !cJSON_IsBool(pov))
			return pl_err_set(
			    err, PL_EINVAL,
			    "%s: pipeline.overlap_param_gather: expected true or false", where);
		if (cJSON_IsTrue(pov))
			*overlap |= PL_OVERLAP_PARAM;
	}
	int r = get_count(root, "optimizer_shard", 0, 3, &v);
	if (r < 0)
		return pl_err_set(err, PL_EINVAL,
		                  "%s: optimizer_shard: expected a ZeRO level 0, 1, 2 or 3", where);
	if (r) {
		*zero = (int)v;
		*is_job = 1;
	}
	const cJSON *items = cJSON_GetObjectItemCaseSensitive(root, "parallel_strategy_item");
	for (int o = 0; o < g->nops; o++) {
		const cJSON *it = cJSON_GetObjectItemCaseSensitive(items, g->ops[o].name);
		if ((r = get_count(it, "stage", 0, (double)*stages - 1, &v)) < 0)
			return pl_err_set(err, PL_EINVAL,
			                  "%s: op '%s': stage: expected an integer from 0 to %lld",
			                  where, g->ops[o].name, (long long)*stages - 1);
		stage[o] = r ? (int)v : 0;
		if (o > 0 && stage[o] < stage[o - 1])
			return pl_err_set(
			    err, PL_EINVAL,
			    "%s: op '%s': stage %d comes after an op on stage %d; stages "
			    "must not decrease in the model's op order",
			    where, g->ops[o].name, stage[o], stage[o - 1]);
		if ((r = get_count(it, "recompute", 0, PL_RC_FLAGS - 1, &v)) < 0)
			return pl_err_set(
			    err, PL_EINVAL,
			    "%s: op '%s': recompute: expected 0, 1, 2 (run again, keeps "
			    "its output) or 3 (saved inside a recomputed layer)",
			    where, g->ops[o].name);
		recompute[o] = r ? (uint8_t)v : 0;
		*is_job |= recompute[o] != 0;
	}
	return PL_OK;
}

/* A MindSpore layout of one of the model's params must be one: dev_matrix
 * 1 to PL_MAX_AXES axes of integer sizes >= 1 (their product at most
 * PL_MAX_DEVICES), tensor_map one integer per dimension of the param from -1
 * to the axes' count - 1, no axis twice. Layouts of names the model does not
 * have are MindSpore's graph's own and stay unread. */
static pl_status check_layouts(const pl_graph *g, const cJSON *layouts, const char *where,
                               pl_err *err)
{
	const cJSON *li;
	if (!cJSON_IsObject(layouts))
		return PL_OK;
	cJSON_ArrayForEach (li, layouts) {
		int t = pl_graph_find_tensor(g, li->string);
		if (t < 0 || g->tensors[t].role != PL_ROLE_PARAM)
			continue;
		const pl_tensor *x = &g->tensors[t];
		const cJSON *dm = cJSON_GetObjectItemCaseSensitive(li, "dev_matrix"),
		            *tm = cJSON_GetObjectItemCaseSensitive(li, "tensor_map"), *e;
		int nd = cJSON_GetArraySize(dm),
		    ok = cJSON_IsArray(dm) && nd >= 1 && nd <= PL_MAX_AXES;
		double all = 1;
		if (ok)
			cJSON_ArrayForEach (e, dm) {
				ok &= cJSON_IsNumber(e) && e->valuedouble >= 1 &&
				      e->valuedouble == floor(e->valuedouble);
				all *= ok ? e->valuedouble : 1;
			}
		if (!ok || all > PL_MAX_DEVICES)
			return pl_err_set(
			    err, PL_EINVAL,
			    "%s: parallel_layout_item.%s.dev_matrix: expected 1 to %d "
			    "integer axis sizes >= 1, at most %d devices in all",
			    where, li->string, PL_MAX_AXES, PL_MAX_DEVICES);
		unsigned used = 0;
		ok = cJSON_IsArray(tm) && cJSON_GetArraySize(tm) == x->rank;
		if (ok)
			cJSON_ArrayForEach (e, tm) {
				double m = cJSON_IsNumber(e) ? e->valuedouble : NAN;
				ok &= m >= -1 && m < nd && m == floor(m) &&
				      (m < 0 || !(used >> (int)m & 1));
				if (ok && m >= 0)
					used |= 1u << (int)m;
			}
		if (!ok)
			return pl_err_set(
			    err, PL_EINVAL,
			    "%s: parallel_layout_item.%s.tensor_map: expected %d integers "
			    "(one per dimension of the param) from -1 to %d, no axis twice",
			    where, li->string, x->rank, nd - 1);
	}
	return PL_OK;
}

/* Where op names differ (a strategy file MindSpore wrote for its own graph),
 * the params' layouts by name: an op whose weight has a layout there cuts the
 * weight's dimensions as the layout does (dimension d: the device-matrix axis
 * its tensor_map entry counts from the right), and its batch over the
 * devices left (MindSpore's data parallel); ops that do not fit, and ops
 * without such a weight, are left to the search. */
static void by_param_names(const pl_graph *g, const cJSON *layouts, int64_t **splits, int *has)
{
	if (!cJSON_IsObject(layouts))
		return;
	for (int o = 0; o < g->nops; o++) {
		const pl_op *op = &g->ops[o];
		if (has[o])
			continue;
		int64_t sp[PL_MAX_LOOPS], cut = 1, devices = 0;
		for (int l = 0; l < op->spec.nloops; l++)
			sp[l] = 0;
		for (int i = 0; i < op->ninputs; i++) {
			const pl_tensor *t = &g->tensors[op->in[i]];
			const cJSON *li = cJSON_GetObjectItemCaseSensitive(layouts, t->name);
			const cJSON *dm = li ? cJSON_GetObjectItemCaseSensitive(li, "dev_matrix")
			                     : NULL,
			            *tm = li ? cJSON_GetObjectItemCaseSensitive(li, "tensor_map")
			                     : NULL;
			int nd = cJSON_GetArraySize(dm);
			if (t->role != PL_ROLE_PARAM || !cJSON_IsArray(dm) || !cJSON_IsArray(tm) ||
			    cJSON_GetArraySize(tm) != t->rank || nd < 1 || nd > PL_MAX_AXES)
				continue;
			int64_t dev[PL_MAX_AXES], all = 1;
			for (int a = 0; a < nd; a++) {
				double v = cJSON_GetNumberValue(cJSON_GetArrayItem(dm, a));
				dev[a] = v >= 1 && v <= 1e9 ? (int64_t)v : 1;
				all *= dev[a];
			}
			devices = all;
			for (int d = 0; d < t->rank; d++) {
				double m = cJSON_GetNumberValue(cJSON_GetArrayItem(tm, d));
				const pl_dimmap *dmap = &op->spec.in[i][d];
				int64_t n = m >= 0 && m < nd ? dev[nd - 1 - (int)m] : 1;
				if (!dmap->count)
					continue;
				if (sp[dmap->first] && sp[dmap->first] != n)
					cut = 0; /* two weights disagree */
				sp[dmap->first] = n;
			}
		}
		if (!devices || !cut)
			continue;
		for (int l = 0; l < op->spec.nloops; l++)
			cut *= sp[l] ? sp[l] : 1;
		const pl_dimmap *batch = g->tensors[op->in[0]].rank > 0 ? &op->spec.in[0][0] : NULL;
		for (int l = 0; l < op->spec.nloops; l++)
			if (!sp[l])
				sp[l] = batch && batch->count && batch->first == l &&
				                g->tensors[op->in[0]].role != PL_ROLE_PARAM &&
				                devices % cut == 0
				            ? devices / cut
				            : 1;
		pl_err err;
		if (pl_op_check_split(op, sp, devices, &err))
			continue;
		memcpy(splits[o], sp, sizeof(int64_t) * (size_t)op->spec.nloops);
		has[o] = 1;
	}
}

int pl_ckpt_is_mindspore(const pl_graph *g, const cJSON *root)
{
	if (cJSON_GetObjectItemCaseSensitive(root, "format"))
		return 0;
	const cJSON *it;
	cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive(root, "parallel_strategy_item"))
		if (it->string && pl_graph_find_op(g, it->string) >= 0)
			return 0;
	return 1;
}

pl_status pl_ckpt_parse_splits(const pl_graph *g, const cJSON *root, const char *where, int partial,
                               int64_t **splits, int *has, pl_err *err)
{
	if (!cJSON_IsObject(root))
		return pl_err_set(err, PL_EINVAL, "%s: expected a JSON object", where);
	const cJSON *items = cJSON_GetObjectItemCaseSensitive(root, "parallel_strategy_item");
	if (!cJSON_IsObject(items))
		return pl_err_set(err, PL_EINVAL,
		                  "%s: parallel_strategy_item: expected an object of op name -> "
		                  "{\"parallel_strategy\": [[...], ...]}",
		                  where);
	for (int o = 0; o < g->nops; o++)
		has[o] = 0;
	int foreign = partial && pl_ckpt_is_mindspore(g, root);
	const cJSON *it;
	cJSON_ArrayForEach (it, items) {
		int o = pl_graph_find_op(g, it->string);
		if (o < 0 && foreign)
			continue;
		if (o < 0)
			return pl_err_set(
			    err, PL_EINVAL,
			    "%s: parallel_strategy_item.%s: the model '%s' has no op of "
			    "that name",
			    where, it->string, g->name);
		const pl_op *op = &g->ops[o];
		const cJSON *ps = cJSON_IsObject(it)
		                      ? cJSON_GetObjectItemCaseSensitive(it, "parallel_strategy")
		                      : NULL;
		if (!cJSON_IsArray(ps) || cJSON_GetArraySize(ps) > PL_MAX_OP_INPUTS)
			return pl_err_set(err, PL_EINVAL,
			                  "%s: op '%s': parallel_strategy: expected one array of "
			                  "split counts per input",
			                  where, op->name);
		int64_t tuples[PL_MAX_OP_INPUTS][PL_MAX_RANK];
		int ranks[PL_MAX_OP_INPUTS] = {0}, nt = 0;
		const cJSON *tu;
		cJSON_ArrayForEach (tu, ps) {
			if (!cJSON_IsArray(tu) || cJSON_GetArraySize(tu) > PL_MAX_RANK)
				return pl_err_set(err, PL_EINVAL,
				                  "%s: op '%s': parallel_strategy[%d]: expected an "
				                  "array of split counts",
				                  where, op->name, nt);
			const cJSON *v;
			int d = 0;
			cJSON_ArrayForEach (v, tu) {
				if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) ||
				    v->valuedouble < 1 || v->valuedouble > 1e9)
					return pl_err_set(err, PL_EINVAL,
					                  "%s: op '%s': parallel_strategy[%d][%d]: "
					                  "expected a positive integer",
					                  where, op->name, nt, d);
				tuples[nt][d++] = (int64_t)v->valuedouble;
			}
			ranks[nt++] = d;
		}
		pl_status st = pl_op_tuples_to_split(g, op, tuples, ranks, nt, splits[o], err);
		if (st) {
			pl_err_prefix(err, "%s: op '%s': parallel_strategy", where, op->name);
			return st;
		}
		has[o] = 1;
	}
	if (!partial)
		for (int o = 0; o < g->nops; o++)
			if (!has[o])
				return pl_err_set(
				    err, PL_EINVAL,
				    "%s: parallel_strategy_item: op '%s' of the model has "
				    "no strategy",
				    where, g->ops[o].name);
	if (foreign) {
		const cJSON *layouts =
		    cJSON_GetObjectItemCaseSensitive(root, "parallel_layout_item");
		pl_status st = check_layouts(g, layouts, where, err);
		if (st)
			return st;
		by_param_names(g, layouts, splits, has);
		int any = 0;
		for (int o = 0; o < g->nops; o++)
			any |= has[o];
		const cJSON *first = items->child;
		if (!any)
			return pl_err_set(
			    err, PL_EINVAL,
			    "%s: none of its ops%s%s%s is an op of the model '%s', and no "
			    "param of it has a layout in parallel_layout_item",
			    where, first ? " ('" : "", first ? first->string : "",
			    first ? "', ...)" : "", g->name);
	}
	return PL_OK;
}

static const char *view_str(const cJSON *o, const char *key, const char *dflt)
{
	const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, key));
	return s ? s : dflt;
}

/* o.key's number, or (absent, another type) NAN as cJSON_GetNumberValue
 * gives it: what the printers printed of a number the checkpoint lacks */
static double view_num(const cJSON *o, const char *key)
{
	return cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, key));
}

/* o.key: 1 true, 0 false, -1 absent or not a boolean */
static int view_bool(const cJSON *o, const char *key)
{
	const cJSON *b = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsBool(b) ? cJSON_IsTrue(b) : -1;
}

/* The cost block's numbers into v. */
static void view_cost(const cJSON *cost, pl_ckpt_view *v)
{
	const cJSON *band = cJSON_GetObjectItemCaseSensitive(cost, "step_band_seconds");
	v->step_s = view_num(cost, "step_seconds");
	v->compute_s = view_num(cost, "compute_seconds");
	v->comm_s = view_num(cost, "communication_seconds");
	v->optimizer_s = view_num(cost, "optimizer_seconds");
	v->bubble_s = view_num(cost, "bubble_seconds");
	v->peak_mem_bytes = view_num(cost, "peak_memory_bytes");
	v->model_flops = view_num(cost, "model_flops_per_step");
	v->mfu = view_num(cost, "mfu");
	v->model_tflops = view_num(cost, "model_tflops_per_device");
	v->tokens_per_s = view_num(cost, "tokens_per_second_per_device");
	v->band_lo = cJSON_GetNumberValue(cJSON_GetArrayItem(band, 0));
	v->band_hi = cJSON_GetNumberValue(cJSON_GetArrayItem(band, 1));
	v->samples_per_s = view_num(cost, "samples_per_second");
	v->global_batch = view_num(cost, "global_batch");
	v->tokens_per_step = view_num(cost, "tokens_per_step");
	v->band_basis = view_str(cost, "step_band_basis", NULL);
	v->comm_hidden_s = view_num(cost, "communication_hidden_seconds");
	v->peak_mem_stage = view_num(cost, "peak_memory_stage");
	const cJSON *ab = cJSON_GetObjectItemCaseSensitive(cost, "attention_beyond_measured");
	v->attn_kernel = view_str(ab, "kernel", NULL);
	v->attn_seq = view_num(ab, "sequence");
	v->attn_longest = view_num(ab, "longest_measured");
	const cJSON *tm = cJSON_GetObjectItemCaseSensitive(cost, "tflops_above_measured");
	v->seen_family = view_str(tm, "gpu_family", NULL);
	v->seen_gemm = view_str(tm, "gemm", NULL);
	v->seen_tflops = view_num(tm, "most_measured");
}

int pl_ckpt_above_measured(const pl_ckpt_view *v)
{
	return v->seen_family && v->seen_gemm && isfinite(v->seen_tflops) && v->seen_tflops > 0 &&
	       isfinite(v->model_tflops) && v->model_tflops > v->seen_tflops;
}

int pl_ckpt_attention_beyond(const pl_ckpt_view *v)
{
	return v->attn_kernel && isfinite(v->attn_seq) && isfinite(v->attn_longest) &&
	       v->attn_longest > 0 && v->attn_seq > v->attn_longest;
}

int pl_ckpt_caveat(const pl_ckpt_view *v, int k, char *buf, size_t n)
{
	if (k == 0 && pl_ckpt_above_measured(v))
		snprintf(buf, n,
		         "%.1f model TFLOP/s per device is more than any published run of the "
		         "validation set measured on %s with %s GEMMs (%.1f): no run has shown it, and "
		         "the prediction may be optimistic (docs/cost-model.md, \"How far to trust a "
		         "step\")",
		         v->model_tflops, v->seen_family, v->seen_gemm, v->seen_tflops);
	else if (k == 1 && pl_ckpt_attention_beyond(v))
		snprintf(buf, n,
		         "the fused attention (%s) runs %.0f tokens a sequence, past the longest its "
		         "published measurements on this GPU cover (%.0f): it is priced at that length's "
		         "rate, which the band above does not vouch for (docs/cost-model.md, "
		         "\"Attention past its measurements\")",
		         v->attn_kernel, v->attn_seq, v->attn_longest);
	else
		return 0;
	return 1;
}

/* The pipeline block, ZeRO and recompute into v. */
static void view_pipeline(const cJSON *root, const cJSON *pp, pl_ckpt_view *v)
{
	enum { BIG = 1 << 30 }; /* no count in a checkpoint is larger */
	v->has_pipeline = pp != NULL;
	v->pp_is_object = cJSON_IsObject(pp);
	v->stages = pl_json_int(pp, "stages", 1, 0, BIG);
	v->micro_batches = pl_json_int(pp, "micro_batches", 1, 0, BIG);
	v->schedule = view_str(pp, "schedule", "1F1B");
	v->pp_stages = view_num(pp, "stages");
	v->pp_micro_batches = view_num(pp, "micro_batches");
	v->pp_virtual_stages = view_num(pp, "virtual_stages");
	v->pp_stage_devices = view_num(pp, "stage_devices");
	v->sequence_parallel = view_bool(pp, "sequence_parallel");
	v->overlap_grad_reduce = view_bool(pp, "overlap_grad_reduce") == 1;
	v->tp_comm_overlap = view_bool(pp, "tp_comm_overlap") == 1;
	v->overlap_param_gather = view_bool(pp, "overlap_param_gather") == 1;
	v->zero = pl_json_int(root, "optimizer_shard", 0, 0, 3);
	v->optimizer_shard = view_num(root, "optimizer_shard");
	v->recompute = view_str(root, "recompute", NULL);
}

void pl_ckpt_view_read(const cJSON *root, pl_ckpt_view *v)
{
	enum { BIG = 1 << 30 }; /* no count in a checkpoint is larger */
	const cJSON *md = cJSON_GetObjectItemCaseSensitive(root, "model"),
	            *cl = cJSON_GetObjectItemCaseSensitive(root, "cluster"),
	            *se = cJSON_GetObjectItemCaseSensitive(root, "search");
	*v = (pl_ckpt_view){
	    .model_name = view_str(md, "name", NULL),
	    .model_sha256 = view_str(md, "sha256", NULL),
	    .cluster_name = view_str(cl, "name", NULL),
	    .devices = pl_json_int(cl, "devices", 0, 0, BIG),
	    .nodes = pl_json_int(cl, "nodes", 1, 0, BIG),
	    .devices_per_node = pl_json_int(cl, "devices_per_node", 0, 0, BIG),
	    .cluster_desc = cJSON_GetObjectItemCaseSensitive(cl, "description"),
	    .cp_exchange =
	        view_str(cJSON_GetObjectItemCaseSensitive(
	                     cJSON_GetObjectItemCaseSensitive(cl, "description"), "device"),
	                 "cp_exchange", NULL),
	    .mode = view_str(se, "mode", NULL),
	    .optimal = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(se, "optimal")),
	    .why = view_str(se, "why", NULL),
	    .space = view_str(se, "space", NULL),
	    .space_widen = view_str(se, "space_widen", NULL),
	    .framework = view_str(se, "framework", NULL),
	    .repeated_layers = view_num(se, "repeated_layers"),
	    .search_seconds = view_num(se, "seconds"),
	    .memory_limit = view_num(se, "memory_limit_bytes"),
	    .per_op_step_s = view_num(se, "per_op_step_seconds"),
	    .groups_param = view_str(root, "groups_param", NULL),
	    .has_groups_exceptions =
	        cJSON_GetObjectItemCaseSensitive(root, "groups_exceptions") != NULL,
	};
	view_cost(cJSON_GetObjectItemCaseSensitive(root, "cost"), v);
	view_pipeline(root, cJSON_GetObjectItemCaseSensitive(root, "pipeline"), v);
}

/* n zeroed elements of size sz (n may be 0), or NULL when out of memory */
static void *view_alloc(int n, size_t sz)
{
	return pl_calloc((size_t)n + 1, sz);
}

static void view_op(const cJSON *it, pl_ckpt_op *op)
{
	*op = (pl_ckpt_op){
	    .name = it->string,
	    .type = view_str(it, "type", NULL),
	    .part = view_str(it, "part", NULL),
	    .stage = view_num(it, "stage"),
	    .recompute = view_num(it, "recompute"),
	    .compute_s = view_num(it, "compute_seconds"),
	    .comm_s = view_num(it, "communication_seconds"),
	    .mem_bytes = view_num(it, "memory_bytes"),
	    .flops_fwd = view_num(it, "flops_forward"),
	    .flops_bwd = view_num(it, "flops_backward"),
	};
	const cJSON *tu, *x, *ps = cJSON_GetObjectItemCaseSensitive(it, "parallel_strategy");
	op->has_strategy = ps != NULL;
	cJSON_ArrayForEach (tu, ps) {
		if (op->ninputs == PL_MAX_OP_INPUTS)
			break;
		int d = 0;
		cJSON_ArrayForEach (x, tu)
			if (d < PL_MAX_RANK)
				op->split[op->ninputs][d++] = x->valueint;
		op->rank[op->ninputs++] = d;
	}
}

static pl_status view_groups(const cJSON *groups, pl_ckpt_doc *d)
{
	d->has_groups = groups != NULL;
	d->ngroups = cJSON_GetArraySize(groups);
	if (!(d->groups = view_alloc(d->ngroups, sizeof *d->groups)))
		return PL_ENOMEM;
	const cJSON *kind, *gr, *r;
	int k = 0;
	cJSON_ArrayForEach (kind, groups) {
		pl_ckpt_groups *gs = &d->groups[k++];
		int n = cJSON_GetArraySize(kind), total = 0, i = 0;
		cJSON_ArrayForEach (gr, kind)
			total += cJSON_GetArraySize(gr);
		*gs = (pl_ckpt_groups){.kind = kind->string,
		                       .is_array = cJSON_IsArray(kind),
		                       .n = n,
		                       .first_is_array = cJSON_IsArray(cJSON_GetArrayItem(kind, 0)),
		                       .start = view_alloc(n + 1, sizeof *gs->start),
		                       .ranks = view_alloc(total, sizeof *gs->ranks)};
		if (!gs->start || !gs->ranks)
			return PL_ENOMEM;
		int g = 0;
		cJSON_ArrayForEach (gr, kind) {
			gs->start[g++] = i;
			cJSON_ArrayForEach (r, gr)
				gs->ranks[i++] = cJSON_IsNumber(r) ? r->valuedouble : NAN;
		}
		gs->start[g] = i;
	}
	return PL_OK;
}

static pl_status view_parts(const cJSON *parts, pl_ckpt_doc *d)
{
	d->has_parts = cJSON_IsObject(parts);
	d->nparts = cJSON_GetArraySize(parts);
	if (!(d->parts = view_alloc(d->nparts, sizeof *d->parts)))
		return PL_ENOMEM;
	const cJSON *p;
	int k = 0;
	cJSON_ArrayForEach (p, parts) {
		const cJSON *st = cJSON_GetObjectItemCaseSensitive(p, "stages");
		d->parts[k++] = (pl_ckpt_part){
		    .name = p->string,
		    .ops = view_num(p, "ops"),
		    .weight_cut = view_num(p, "weight_cut"),
		    .batch_cut = view_num(p, "batch_cut"),
		    .sequence_cut = view_num(p, "sequence_cut"),
		    .norms_sequence_cut = view_num(p, "norms_sequence_cut"),
		    .experts_cut = view_num(p, "experts_cut"),
		    .has_experts_cut = cJSON_GetObjectItemCaseSensitive(p, "experts_cut") != NULL,
		    .replicated = view_num(p, "replicated"),
		    .stage_first = cJSON_GetNumberValue(cJSON_GetArrayItem(st, 0)),
		    .stage_last = cJSON_GetNumberValue(cJSON_GetArrayItem(st, 1)),
		};
	}
	return PL_OK;
}

/* A memory-by-category object's entries into m (NULL o: none) */
static int view_memory(const cJSON *o, pl_ckpt_memory *m)
{
	const cJSON *e;
	m->n = 0;
	if (!(m->e = view_alloc(cJSON_GetArraySize(o), sizeof *m->e)))
		return -1;
	cJSON_ArrayForEach (e, o)
		m->e[m->n++] = (pl_ckpt_amount){e->string, cJSON_GetNumberValue(e)};
	return 0;
}

double pl_ckpt_memory_of(const pl_ckpt_memory *m, const char *name)
{
	for (int k = 0; k < m->n; k++)
		if (m->e[k].name && !strcmp(m->e[k].name, name))
			return m->e[k].bytes;
	return NAN;
}

/* The cost's and the pipeline's lists: communication, memory by category,
 * stages' memory and times. */
static pl_status view_lists(const cJSON *root, pl_ckpt_doc *d)
{
	const cJSON *cost = cJSON_GetObjectItemCaseSensitive(root, "cost"),
	            *pp = cJSON_GetObjectItemCaseSensitive(root, "pipeline"), *e;
	const cJSON *bc = cJSON_GetObjectItemCaseSensitive(cost, "communication_by_collective"),
	            *mb = cJSON_GetObjectItemCaseSensitive(cost, "memory_breakdown_bytes"),
	            *sm = cJSON_GetObjectItemCaseSensitive(pp, "stage_memory_bytes"),
	            *ts = cJSON_GetObjectItemCaseSensitive(pp, "stage_microbatch_seconds");
	d->has_comm = cJSON_IsArray(bc);
	d->ncomm = d->has_comm ? cJSON_GetArraySize(bc) : 0;
	d->has_mem_breakdown = mb != NULL;
	d->has_stage_mem = cJSON_IsArray(sm);
	d->nstage_mem = cJSON_GetArraySize(sm);
	d->nstage_s = cJSON_GetArraySize(ts);
	d->comm = view_alloc(d->ncomm, sizeof *d->comm);
	d->stage_mem = view_alloc(d->nstage_mem, sizeof *d->stage_mem);
	d->stage_s = view_alloc(d->nstage_s, sizeof *d->stage_s);
	if (!d->comm || !d->stage_mem || !d->stage_s || view_memory(mb, &d->mem_breakdown))
		return PL_ENOMEM;
	int k = 0;
	if (d->has_comm)
		cJSON_ArrayForEach (e, bc)
			d->comm[k++] = (pl_ckpt_comm){view_str(e, "collective", NULL),
			                              view_str(e, "link", NULL),
			                              view_num(e, "seconds"), view_num(e, "bus_bytes")};
	k = 0;
	cJSON_ArrayForEach (e, sm)
		if (view_memory(e, &d->stage_mem[k++]))
			return PL_ENOMEM;
	k = 0;
	cJSON_ArrayForEach (e, ts)
		d->stage_s[k++] = cJSON_GetNumberValue(e);
	return PL_OK;
}

/* The search block's lists: framework defaults, conflicts, alternatives. */
static pl_status view_search(const cJSON *se, pl_ckpt_doc *d)
{
	const cJSON *fd = cJSON_GetObjectItemCaseSensitive(se, "framework_defaults"),
	            *cf = cJSON_GetObjectItemCaseSensitive(se, "conflicts"),
	            *al = cJSON_GetObjectItemCaseSensitive(se, "alternatives"), *e;
	d->nsettings = cJSON_GetArraySize(fd);
	d->nconflicts = cJSON_GetArraySize(cf);
	d->nalts = cJSON_GetArraySize(al);
	d->settings = view_alloc(d->nsettings, sizeof *d->settings);
	d->conflicts = view_alloc(d->nconflicts, sizeof *d->conflicts);
	d->alts = view_alloc(d->nalts, sizeof *d->alts);
	if (!d->settings || !d->conflicts || !d->alts)
		return PL_ENOMEM;
	int k = 0;
	cJSON_ArrayForEach (e, fd)
		d->settings[k++] = (pl_ckpt_setting){e->string, cJSON_GetStringValue(e)};
	k = 0;
	cJSON_ArrayForEach (e, cf)
		d->conflicts[k++] = (pl_ckpt_conflict){
		    view_str(e, "from", NULL), view_str(e, "to", NULL), view_str(e, "tensor", NULL),
		    view_num(e, "seconds")};
	k = 0;
	cJSON_ArrayForEach (e, al)
		d->alts[k++] = (pl_ckpt_alt){.stages = view_num(e, "pipeline_stages"),
		                             .micro_batches = view_num(e, "micro_batches"),
		                             .virtual_stages = view_num(e, "virtual_stages"),
		                             .zero = view_num(e, "optimizer_shard"),
		                             .step_s = view_num(e, "step_seconds"),
		                             .mem_bytes = view_num(e, "peak_memory_bytes"),
		                             .recompute = view_str(e, "recompute", NULL)};
	return PL_OK;
}

pl_status pl_ckpt_doc_read(const cJSON *root, pl_ckpt_doc *d, pl_err *err)
{
	memset(d, 0, sizeof *d);
	pl_ckpt_view_read(root, &d->v);
	const cJSON *items = cJSON_GetObjectItemCaseSensitive(root, "parallel_strategy_item"), *it;
	d->has_items = items != NULL;
	d->nops = cJSON_GetArraySize(items);
	d->ops = view_alloc(d->nops, sizeof *d->ops);
	int k = 0;
	if (d->ops)
		cJSON_ArrayForEach (it, items)
			view_op(it, &d->ops[k++]);
	if (!d->ops || view_groups(cJSON_GetObjectItemCaseSensitive(root, "groups"), d) ||
	    view_parts(cJSON_GetObjectItemCaseSensitive(root, "parts"), d) || view_lists(root, d) ||
	    view_search(cJSON_GetObjectItemCaseSensitive(root, "search"), d))
		return pl_err_set(err, PL_ENOMEM, "out of memory");
	return PL_OK;
}

void pl_ckpt_doc_free(pl_ckpt_doc *d)
{
	for (int k = 0; d->groups && k < d->ngroups; k++) {
		free(d->groups[k].start);
		free(d->groups[k].ranks);
	}
	for (int k = 0; d->stage_mem && k < d->nstage_mem; k++)
		free(d->stage_mem[k].e);
	free(d->mem_breakdown.e);
	free(d->ops);
	free(d->groups);
	free(d->parts);
	free(d->comm);
	free(d->stage_mem);
	free(d->stage_s);
	free(d->settings);
	free(d->conflicts);
	free(d->alts);
	memset(d, 0, sizeof *d);
}

const pl_ckpt_groups *pl_ckpt_doc_groups(const pl_ckpt_doc *d, const char *kind)
{
	for (int k = 0; k < d->ngroups; k++)
		if (d->groups[k].kind && !strcmp(d->groups[k].kind, kind))
			return &d->groups[k];
	return NULL;
}

int pl_ckpt_group_size(const pl_ckpt_groups *gs, int k)
{
	return gs && k >= 0 && k < gs->n ? gs->start[k + 1] - gs->start[k] : 0;
}
