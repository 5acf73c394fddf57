/* Planning end to end: search, checkpoint, reading a checkpoint back and
 * pricing it (planner/plan.h). The command line and the auto-parallel API
 * both go through here, so a plan made either way is the same plan. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "costmodel/pipeline.h"
#include "planner/checkpoint.h"
#include "graph/ops.h"
#include "graph/model.h"
#include "planner/plan.h"
#include "graph/alloc.h"
#include "graph/clock.h"
#include "graph/json.h"
#include "graph/parse.h"
#include "search/search.h"

int64_t **pl_splits_alloc(const pl_graph *g)
{
	int64_t **s = pl_calloc((size_t)g->nops + 1, sizeof *s);
	if (!s)
		return NULL;
	for (int o = 0; o < g->nops; o++)
		if (!(s[o] = pl_calloc(PL_MAX_LOOPS, sizeof **s))) {
			pl_splits_free(g, s);
			return NULL;
		}
	return s;
}

void pl_splits_free(const pl_graph *g, int64_t **s)
{
	if (!s)
		return;
	for (int o = 0; o < g->nops; o++)
		free(s[o]);
	free(s);
}

int pl_plan_detail_of(const pl_problem *p, int64_t *const *splits, const int *stage,
                      int64_t devices_per_node, int bottleneck, pl_plan_detail *d)
{
	memset(d, 0, sizeof *d);
	d->stages = stage && p->job.stages > 1 ? p->job.stages : 1;
	pl_membreak mb;
	if (!(d->stage_mem = pl_calloc((size_t)d->stages, sizeof *d->stage_mem)) ||
	    pl_job_memory(p, splits, stage, &mb, d->stage_mem)) {
		pl_plan_detail_free(d);
		return -1;
	}
	d->mem[0] = mb.weights;
	d->mem[1] = mb.gradients;
	d->mem[2] = mb.optimizer_states;
	d->mem[3] = mb.activations;
	d->mem[4] = mb.transient;
	d->mem[5] = p->c->memory_reserve;
	d->mem_stage = mb.stage;
	pl_job_comm(p, splits, stage, devices_per_node, bottleneck, &d->comm);
	pl_cost_attention_beyond(p, splits, &d->attn_seq, &d->attn_longest);
	return 0;
}

void pl_plan_detail_free(pl_plan_detail *d)
{
	free(d->stage_mem);
	d->stage_mem = NULL;
}

/* A checkpoint's cluster and search fields; the caller adds the prices. */
static pl_ckpt_info searched(const pl_cluster *cl, const cJSON *desc, const char *mode,
                             double seconds, int optimal, const char *why, int repeated_layers,
                             double limit)
{
	return (pl_ckpt_info){.cl = cl,
	                      .cluster_name = cl->name,
	                      .cluster = desc,
	                      .devices = pl_cluster_devices_total(cl),
	                      .nodes = cl->nodes,
	                      .devices_per_node = cl->devices_per_node,
	                      .mode = mode,
	                      .seconds = seconds,
	                      .optimal = optimal,
	                      .why = why,
	                      .repeated_layers = repeated_layers,
	                      .memory_limit = limit};
}

/* Prices a per-op plan and builds its checkpoint. */
static cJSON *op_plan_checkpoint(pl_problem *p, int64_t **splits, const pl_cluster *cl,
                                 const char *mode, const pl_search_result *r, double limit)
{
	const pl_graph *g = p->g;
	size_t n = (size_t)g->nops + 1;
	pl_nodecost *per = pl_calloc(n, sizeof *per);
	double *cs = pl_calloc(n, sizeof *cs), *cm = pl_calloc(n, sizeof *cm),
	       *mb = pl_calloc(n, sizeof *mb);
	cJSON *ck = NULL;
	pl_plan_detail det = {0};
	if (per && cs && cm && mb &&
	    !pl_plan_detail_of(p, splits, NULL, cl->devices_per_node, 0, &det)) {
		pl_plancost pc;
		pl_cost_plan(p, splits, &pc, per);
		for (int o = 0; o < g->nops; o++) {
			cs[o] = per[o].compute_s;
			cm[o] = per[o].comm_s;
			mb[o] = per[o].mem_bytes;
		}
		cJSON *desc = pl_cluster_to_json(cl);
		pl_ckpt_info info = searched(cl, desc, mode, r->seconds, r->optimal, r->why,
		                             r->repeated_layers, limit);
		info.step_s = pc.step_s;
		info.compute_s = pc.compute_s;
		info.optimizer_s = pc.optimizer_s;
		info.comm_s = pc.comm_s;
		info.mem_bytes = pc.mem_bytes + det.mem[4] + cl->memory_reserve;
		info.mem_breakdown = det.mem;
		info.comm = &det.comm;
		info.attn_seq = det.attn_seq;
		info.attn_longest = det.attn_longest;
		info.op_compute_s = cs;
		info.op_comm_s = cm;
		info.op_mem_bytes = mb;
		ck = desc ? pl_ckpt_build(g, splits, &info) : NULL;
		cJSON_Delete(desc);
	}
	pl_plan_detail_free(&det);
	free(per);
	free(cs);
	free(cm);
	free(mb);
	return ck;
}

/* The checkpoint of a whole-job plan: per-op numbers for all m micro-batches
 * of the op's stage, memory with the op's in-flight activations. */
/* search.alternatives: every point of a top-K job search with a plan that
 * fits, best first, as the search priced it (planner search --top re-solves
 * the best of them with their configuration fixed). */
static pl_status add_alternatives(cJSON *ck, const pl_job_plan *jp, pl_err *err)
{
	cJSON *list = cJSON_CreateArray();
	for (int i = 0; i < jp->nalts; i++) {
		const pl_job_alt *a = &jp->alts[i];
		cJSON *e = cJSON_CreateObject();
		cJSON_AddNumberToObject(e, "pipeline_stages", (double)a->pp);
		cJSON_AddNumberToObject(e, "micro_batches", (double)a->m);
		cJSON_AddNumberToObject(e, "virtual_stages", (double)(a->vs > 1 ? a->vs : 1));
		cJSON_AddNumberToObject(e, "optimizer_shard", a->zero);
		cJSON_AddStringToObject(e, "recompute", pl_recompute_name(a->recompute));
		cJSON_AddNumberToObject(e, "step_seconds", a->step_s);
		cJSON_AddNumberToObject(e, "peak_memory_bytes", a->mem_bytes);
		pl_json_push(list, e);
	}
	pl_json_add(cJSON_GetObjectItem(ck, "search"), "alternatives", list);
	return pl_alloc_null_count() ? pl_err_set(err, PL_ENOMEM, "out of memory") : PL_OK;
}

static pl_status job_plan_checkpoint(const pl_job_plan *jp, const pl_cluster *cl, const char *mode,
                                     double limit, cJSON **out, pl_err *err)
{
	const pl_graph *g = jp->g;
	const pl_problem *p = jp->p;
	int64_t pp = p->job.stages;
	size_t n = (size_t)g->nops + 1;
	int64_t **sp = pl_calloc(n, sizeof *sp);
	double *cs = pl_calloc(n, sizeof *cs), *cm = pl_calloc(n, sizeof *cm),
	       *mb = pl_calloc(n, sizeof *mb), *ts = pl_calloc((size_t)pp, sizeof *ts);
	pl_status st = PL_OK;
	pl_plan_detail det = {0};
	if (!sp || !cs || !cm || !mb || !ts) {
		st = pl_err_set(err, PL_ENOMEM, "out of memory");
		goto done;
	}
	for (int o = 0; o < g->nops; o++) {
		sp[o] = (int64_t *)pl_search_result_split(p, &jp->r, o);
		pl_stagecost acc = {0};
		double act = 0;
		pl_job_op_cost(p, o, sp[o], &acc, &act);
		double m = (double)p->job.micro_batches;
		cs[o] = m * acc.mb_compute_s + acc.step_compute_s;
		cm[o] = m * acc.mb_comm_s + acc.step_comm_s;
		mb[o] = acc.mem_bytes + pl_job_inflight(pp, p->job.micro_batches,
		                                        p->job.virtual_stages, jp->stage[o]) *
		                            act;
	}
	/* an op's communication includes the redistributions of the edges that
	 * end at it, every micro-batch, as a per-op plan's does */
	for (int e = 0; e < p->nedges; e++) {
		const pl_edge *ed = &p->edges[e];
		cm[ed->dst_op] += (double)p->job.micro_batches *
		                  pl_cost_edge(p, e, sp[ed->src_op], sp[ed->dst_op]);
	}
	for (int64_t s = 0; s < pp; s++)
		ts[s] = jp->stages[s].mb_compute_s + jp->stages[s].mb_comm_s;
	if (pl_plan_detail_of(p, sp, jp->stage, cl->devices_per_node, jp->cost.bottleneck, &det)) {
		st = pl_err_set(err, PL_ENOMEM, "out of memory");
		goto done;
	}
	cJSON *desc = pl_cluster_to_json(cl);
	pl_ckpt_info info = searched(cl, desc, mode, jp->seconds, jp->optimal, jp->why,
	                             jp->r.repeated_layers, limit);
	info.step_s = jp->cost.step_s;
	info.compute_s = jp->cost.compute_s;
	info.optimizer_s = jp->cost.optimizer_s;
	info.comm_s = jp->cost.comm_s;
	info.mem_bytes = jp->cost.mem_bytes + cl->memory_reserve;
	info.mem_breakdown = det.mem;
	info.mem_stage = det.mem_stage;
	info.stage_mem = det.stage_mem;
	info.comm = &det.comm;
	info.attn_seq = det.attn_seq;
	info.attn_longest = det.attn_longest;
	info.op_compute_s = cs;
	info.op_comm_s = cm;
	info.op_mem_bytes = mb;
	info.stages = pp;
	info.micro_batches = p->job.micro_batches;
	info.virtual_stages = p->job.virtual_stages;
	info.overlap = p->job.overlap;
	info.seq_parallel = p->job.degrees.seq_parallel;
	info.mesh_devices = p->devices;
	info.zero = p->job.zero;
	info.op_stage = jp->stage;
	info.op_recompute = p->job.recompute;
	info.bubble_s = jp->cost.bubble_s;
	info.stage_s = ts;
	*out = desc ? pl_ckpt_build(g, sp, &info) : NULL;
	cJSON_Delete(desc);
	if (!*out)
		st = pl_err_set(err, PL_ENOMEM, "out of memory");
done:
	pl_plan_detail_free(&det);
	free(sp);
	free(cs);
	free(cm);
	free(mb);
	free(ts);
	return st;
}

/* Where a propagate search's fronts met, and what it costs. */
static void add_conflicts(cJSON *ck, const pl_problem *p, const pl_search_result *r)
{
	const pl_graph *g = p->g;
	cJSON *arr = cJSON_AddArrayToObject(cJSON_GetObjectItem(ck, "search"), "conflicts");
	for (int k = 0; arr && k < r->nconflicts; k++) {
		const pl_edge *e = &p->edges[r->conflicts[k].edge];
		cJSON *c = cJSON_CreateObject();
		cJSON_AddStringToObject(c, "from", g->ops[e->src_op].name);
		cJSON_AddStringToObject(c, "to", g->ops[e->dst_op].name);
		cJSON_AddStringToObject(c, "tensor", g->tensors[e->tensor].name);
		cJSON_AddNumberToObject(c, "seconds", r->conflicts[k].seconds);
		pl_json_push(arr, c);
	}
}

/* A search that found no plan under the limit says how the limit was split. */
static pl_status reserve_note(pl_status st, double limit, double reserve, pl_err *err)
{
	if (st == PL_EINFEASIBLE && limit > 0 && reserve > 0) {
		size_t n = strlen(err->msg);
		snprintf(err->msg + n, sizeof err->msg - n,
		         " (the plan's tensors get the device limit %.0f bytes less the runtime "
		         "reserve of %.0f bytes; --memory-reserve changes the reserve)",
		         limit, reserve);
	}
	return st;
}

/* option names as the command line [0] and the API [1] spell them */
enum { N_MBS, N_MB, N_VS, N_DP, N_TP, N_PP, N_ZERO, N_CP, N_EP };
static const char *const opt_names[][2] = {
    [N_MBS] = {"--micro-batch-size", "micro_batch_size"},
    [N_MB] = {"--micro-batches", "micro_batch_num"},
    [N_VS] = {"--virtual-stages", "virtual_pipeline_stages"},
    [N_DP] = {"--dp", "data_parallel"},
    [N_TP] = {"--tp", "model_parallel"},
    [N_PP] = {"--pp", "pipeline_stage"},
    [N_ZERO] = {"--zero", "optimizer_shard_level"},
    [N_CP] = {"--cp", "context_parallel"},
    [N_EP] = {"--ep", "expert_parallel"},
};

int pl_dim_parse(const char *s, long long lo, long long hi, pl_dim *out)
{
	long long v;
	if (s && !strcmp(s, "auto")) {
		*out = pl_dim_auto();
		return 0;
	}
	if (!s || pl_parse_ll(s, &v) || v < lo || v > hi)
		return -1;
	*out = pl_dim_value(v);
	return 0;
}

pl_status pl_plan_opts_job(pl_plan_opts *o, const pl_job_request *r, int api, pl_err *err)
{
	api = api ? 1 : 0;
#define NAME(k)  opt_names[k][api]
#define GIVEN(d) ((d).how != PL_GIVEN_NOT)
#define VALUE(d) ((d).how == PL_GIVEN_VALUE)
	int given = r->all || GIVEN(r->stages) || GIVEN(r->micro_batches) || GIVEN(r->zero) ||
	            GIVEN(r->recompute) || GIVEN(r->micro_batch_size) || GIVEN(r->virtual_stages) ||
	            GIVEN(r->overlap) || GIVEN(r->tp_overlap) || GIVEN(r->param_overlap) ||
	            GIVEN(r->dp) || GIVEN(r->tp) || GIVEN(r->cp) || GIVEN(r->ep) ||
	            GIVEN(r->seq_parallel);
	if (VALUE(r->micro_batch_size) && VALUE(r->micro_batches))
		return pl_err_set(err, PL_EINVAL,
		                  "%s and %s both fix the micro-batches; give one of them",
		                  NAME(N_MBS), NAME(N_MB));
	if (VALUE(r->micro_batch_size) && !VALUE(r->dp) && !VALUE(r->tp))
		return pl_err_set(err, PL_EINVAL,
		                  "%s is per data-parallel rank (batch = size x data parallel x "
		                  "micro-batches): give %s, or %s so that data parallel is what "
		                  "is left",
		                  NAME(N_MBS), NAME(N_DP), NAME(N_TP));
	if (pl_dim_or(r->virtual_stages, 1) > 1 && pl_dim_or(r->stages, 0) == 1)
		return pl_err_set(
		    err, PL_EINVAL,
		    "%s %lld: the interleaved schedule cuts the model into chunks over "
		    "pipeline stages, and %s is 1",
		    NAME(N_VS), r->virtual_stages.v, NAME(N_PP));
	if (pl_dim_or(r->virtual_stages, 1) > PL_JOB_MAX_VIRTUAL)
		return pl_err_set(err, PL_EINVAL, "%s %lld: at most %d chunks per device",
		                  NAME(N_VS), r->virtual_stages.v, PL_JOB_MAX_VIRTUAL);
	if (pl_dim_or(r->zero, 0) >= 2 && pl_dim_or(r->stages, 1) > 1)
		return pl_err_set(err, PL_EINVAL, "%s %lld with %s %lld: %s", NAME(N_ZERO),
		                  r->zero.v, NAME(N_PP), r->stages.v, PL_ZERO_PIPELINE_WHY);
	o->job = given;
	int64_t max_tp = VALUE(r->max_tp) ? pl_max_tp_of_user(r->max_tp.v) : PL_MAX_TP_NODE;
	int replicas = !VALUE(r->replicas) ? PL_REPLICAS_AUTO
	               : r->replicas.v     ? PL_REPLICAS_ALL
	                                   : PL_REPLICAS_NONE;
	if (!given) {
		o->jo = (pl_job_opts){.stages = 1,
		                      .micro_batches = 1,
		                      .virtual_stages = 1,
		                      .micro_batch_size = PL_AUTO,
		                      .max_tp = max_tp,
		                      .replicas = replicas,
		                      .fastest = r->fastest};
		return PL_OK;
	}
	/* in the search: a value fixes a dimension, PL_AUTO searches it (and a
	 * degree not given is free, 0) */
	o->jo = (pl_job_opts){
	    .stages = pl_dim_or(r->stages, PL_AUTO),
	    .micro_batches = pl_dim_or(r->micro_batches, PL_AUTO),
	    .zero = (int)pl_dim_or(r->zero, PL_AUTO),
	    .recompute = (int)pl_dim_or(r->recompute, PL_AUTO),
	    .fastest = r->fastest,
	    .degrees = {.dp = pl_dim_or(r->dp, 0),
	                .tp = pl_dim_or(r->tp, 0),
	                .cp = pl_dim_or(r->cp, 0),
	                .ep = pl_dim_or(r->ep, 0),
	                .seq_parallel = !VALUE(r->seq_parallel) ? PL_SEQ_PAR_AUTO
	                                : r->seq_parallel.v     ? PL_SEQ_PAR_ON
	                                                        : PL_SEQ_PAR_OFF},
	    .micro_batch_size = pl_dim_or(r->micro_batch_size, PL_AUTO),
	    .virtual_stages = pl_dim_or(r->virtual_stages, PL_AUTO),
	    .overlap = (pl_dim_or(r->overlap, 0) > 0 ? PL_OVERLAP_GRAD : 0) |
	               (pl_dim_or(r->tp_overlap, 0) > 0 ? PL_OVERLAP_TP : 0) |
	               (pl_dim_or(r->param_overlap, 0) > 0 ? PL_OVERLAP_PARAM : 0),
	    .max_tp = max_tp,
	    .replicas = replicas,
	    .layer_cuts = (int)pl_dim_or(r->layer_cuts, 0),
	};
	return PL_OK;
#undef VALUE
#undef GIVEN
#undef NAME
}

/* Ties go to less memory: of the plans as fast as the optimum r, dp under
 * a memory price too small to trade any time (the whole plan's memory is
 * worth 1e-9 of its step) finds one that needs the least memory; it replaces
 * r when it is as fast (to 1e-12) and needs less. */
static void prefer_less_memory(pl_problem *p, const pl_search_opts *so, pl_search_result *r)
{
	if (!(r->step_s > 0 && r->mem_bytes > 0))
		return;
	pl_search_opts o = *so;
	o.memory_limit = 0;
	o.progress = NULL;
	o.dp.mem_price = 1e-9 * r->step_s / r->mem_bytes;
	pl_search_result t = {0};
	pl_err err = {{0}};
	if (pl_search_dp(p, &o, &t, &err) || t.step_s > r->step_s * (1 + 1e-12) ||
	    !(t.mem_bytes < r->mem_bytes)) {
		pl_search_result_free(&t);
		return;
	}
	t.optimal = 1;
	t.bound_s = r->bound_s;
	t.seconds = r->seconds + t.seconds;
	memcpy(t.why, r->why, sizeof t.why);
	t.repeated_runs = r->repeated_runs;
	t.repeated_layers = r->repeated_layers;
	pl_search_result_free(r);
	*r = t;
}

static pl_status keep_strategies(void *ud, pl_graph *gm, pl_err *err)
{
	const pl_plan_opts *o = ud;
	return pl_plan_annotate(gm, o->keep, o->keep_where, err);
}

/* A per-op search whose plan fits with its transient bytes. The searches
 * plan a plan's tensors (a sum over ops); its transient bytes are a maximum
 * over the backward. The first round searches under the limit less the
 * least transient bytes any plan needs (pl_job_transient_floor): a
 * relaxation, so its plan, when it fits, is the answer and keeps the
 * searcher's proof. A plan that does not fit beside its own transient bytes
 * is searched again under the limit less those, or halfway to a limit
 * known to leave no plan (a few rounds); such a plan fits but is not
 * proven. */
static pl_status search_with_transient(pl_problem *p, const pl_searcher *s,
                                       const pl_search_opts *so, pl_search_result *r, pl_err *err)
{
	double M = so->memory_limit, floor = M > 0 ? pl_job_transient_floor(p) : 0, t = floor;
	if (floor < 0)
		return pl_err_set(err, PL_ENOMEM, "out of memory");
	pl_search_opts o = *so;
	o.memory_limit = M - floor;
	double over = o.memory_limit, none = 0; /* a limit whose plan did not fit; none did */
	double t0 = pl_now(), spent = 0;
	for (int round = 0; round < 8; round++) {
		/* the rounds share --time-limit */
		if (so->time_limit_s > 0 && round > 0 &&
		    (o.time_limit_s = so->time_limit_s - (spent = pl_now() - t0)) < 0.01)
			return pl_err_set(
			    err, PL_ETIMEOUT,
			    "the time limit of %.3g s ran out (%.3g s) before a plan fit "
			    "the memory limit of %.0f bytes per device beside its "
			    "transient bytes (gradients and scratch in the backward, or the "
			    "forward's tensors no backward keeps)",
			    so->time_limit_s, spent, M);
		pl_status st =
		    M > 0 && o.memory_limit <= 0 ? PL_EINFEASIBLE : s->run(p, &o, r, err);
		if (st == PL_EINFEASIBLE && round > 0) {
			none = o.memory_limit;
			o.memory_limit = 0.5 * (none + over);
			continue;
		}
		int none_fits = M > 0 && o.memory_limit <= 0; /* not even searched */
		if (st == PL_EINFEASIBLE &&
		    (none_fits || strstr(err->msg, "no plan fits the memory limit"))) {
			/* the least any plan needs, in the user's terms */
			double least = floor;
			for (int op = 0; op < p->nops; op++)
				least += pl_problem_least_memory(p, op);
			pl_search_err_no_fit(err, M, least);
			size_t n = strlen(err->msg);
			snprintf(err->msg + n, sizeof err->msg - n,
			         " (at least %.0f of them gradients and scratch in the backward)",
			         floor);
			return st;
		}
		if (st == PL_EINFEASIBLE) { /* a heuristic's plan over it: what it was given */
			size_t n = strlen(err->msg);
			snprintf(err->msg + n, sizeof err->msg - n,
			         " (searched under the limit less the %.0f bytes of gradients and "
			         "scratch every plan needs in the backward)",
			         floor);
			return st;
		}
		if (st)
			return st;
		if (r->optimal && !r->nconflicts)
			prefer_less_memory(p, &o, r);
		if ((t = pl_search_result_transient(p, r)) < 0)
			return pl_err_set(err, PL_ENOMEM, "out of memory");
		if (M <= 0 || r->mem_bytes + t <= M) {
			r->optimal &= round == 0;
			return PL_OK;
		}
		pl_search_result_free(r);
		memset(r, 0, sizeof *r);
		over = o.memory_limit;
		o.memory_limit = M - t > none && M - t < over ? M - t : 0.5 * (none + over);
	}
	return pl_err_set(err, PL_EINFEASIBLE,
	                  "no plan fits the memory limit of %.0f bytes per device beside its "
	                  "transient bytes (gradients and scratch in the backward, or the "
	                  "forward's tensors no backward keeps: every plan needs at least "
	                  "%.0f bytes of them; the last plan tried %.0f)",
	                  M, floor, t);
}

/* The most of a device a plan's tensors may take (as the search's limit
 * counts them: the runtime's reserve aside) for its peak to leave room for
 * the prediction's error, peak x band within the limit (PL_MEM_BAND_HI, then
 * PL_MEM_BAND_MID); 0 with no limit, or with --fastest (the fastest plan
 * within the limit) */
static double headroom_limit(const pl_cluster *cl, const pl_plan_opts *o, double band)
{
	if (o->jo.fastest || !(o->so.memory_limit > 0))
		return 0;
	double h = o->so.memory_limit / band - cl->memory_reserve;
	return h > 0 ? h : 0;
}

static pl_status space_add(cJSON *ck, const char *sep, const char *text, const char *option,
                           pl_err *err);

/* A plan within the headroom (headroom_limit) kept over one of over_s
 * seconds without it: search.space and space_widen say so; mid: within the
 * median's (PL_MEM_BAND_MID), none within PL_MEM_BAND_HI's being within the
 * margin */
static pl_status note_headroom(cJSON *ck, double limit, double over_s, int mid, pl_err *err)
{
	char text[480];
	const double G = 1073741824.0;
	if (mid)
		snprintf(text, sizeof text,
		         "plans with room for the memory prediction's median error (a peak of at "
		         "most %.4g GiB, the %.4g GiB limit / %.2f: none with room for its 90th "
		         "percentile, the limit / %.2f, is within the %g %%; one without room may "
		         "run in %.6g s: within the %g %% the search gives plans with room)",
		         limit / PL_MEM_BAND_MID / G, limit / G, PL_MEM_BAND_MID, PL_MEM_BAND_HI,
		         100 * PL_JOB_HEADROOM, over_s, 100 * PL_JOB_HEADROOM);
	else
		snprintf(text, sizeof text,
		         "plans with room for the memory prediction's error (a peak of at most %.4g "
		         "GiB, the %.4g GiB limit / %.2f; one without it may run in %.6g s: within "
		         "the %g %% the search gives plans with room)",
		         limit / PL_MEM_BAND_HI / G, limit / G, PL_MEM_BAND_HI, over_s,
		         100 * PL_JOB_HEADROOM);
	return space_add(ck, ", ", text, "--fastest", err);
}

/* search.space: what the "optimal" of a plan whose degrees were free is
 * over, where its candidates were trimmed: only the cuts of all of a mesh's
 * devices (--replicate off, or auto on a large cluster), or tensor-parallel
 * cuts within one node (the default across nodes, or --max-tp N); and
 * search.space_widen, the options that lift the trims. Nothing when neither
 * trims (every candidate: no fixed-degree plan is faster). simpler_s > 0: the
 * whole-job search kept a plan without pipeline stages, ZeRO or recompute
 * over one with them that runs in simpler_s (within PL_JOB_SIMPLER), so its
 * optimum is over plans without them; --fastest lifts that. */
static pl_status note_trims(cJSON *ck, const pl_cluster *cl, const pl_plan_opts *o, int replicas,
                            double simpler_s, pl_err *err)
{
	if (o->job && pl_degrees_any(&o->jo.degrees) && !(simpler_s > 0))
		return PL_OK; /* the fixed degrees are the space, as the plan says */
	int64_t D = pl_cluster_devices_total(cl);
	int64_t node = cl->devices_per_node > 0 ? cl->devices_per_node : D;
	int64_t span = o->jo.max_tp != PL_MAX_TP_NODE ? o->jo.max_tp : node; /* > 0, or any */
	int tp = span > 0 && span < D, all = replicas == PL_REPLICAS_NONE;
	if (o->job && pl_degrees_any(&o->jo.degrees))
		tp = all = 0; /* only the preference below */
	int simpler = simpler_s > 0;
	if (!tp && !all && !simpler)
		return PL_OK;
	char text[320] = "", widen[64] = "";
	int n = 0;
	if (all)
		n = o->job ? snprintf(text, sizeof text, "cuts of all of a stage's devices")
		           : snprintf(text, sizeof text, "cuts of all %lld devices", (long long)D);
	if (tp)
		n += snprintf(text + n, sizeof text - (size_t)n,
		              "%stensor-parallel cuts of at most %lld devices", n ? ", " : "",
		              (long long)span);
	if (simpler)
		snprintf(text + n, sizeof text - (size_t)n,
		         "%splans without pipeline stages, ZeRO or recompute (one with them may "
		         "run in %.6g s: within the %g %% the search gives simpler plans)",
		         n ? ", " : "", simpler_s, 100 * PL_JOB_SIMPLER);
	snprintf(widen, sizeof widen, "%s%s%s%s%s", all ? "--replicate on" : "",
	         all && tp ? " " : "", tp ? "--max-tp 0" : "", (all || tp) && simpler ? " " : "",
	         simpler ? "--fastest" : "");
	cJSON *s = cJSON_GetObjectItemCaseSensitive(ck, "search");
	if (!s || !cJSON_AddStringToObject(s, "space", text) ||
	    !cJSON_AddStringToObject(s, "space_widen", widen))
		return pl_err_set(err, PL_ENOMEM, "out of memory");
	return PL_OK;
}

/* note_trims, then the headroom's note where a plan within it (mid: the
 * median's) was kept over one of over_s seconds (> 0) */
static pl_status note_space(cJSON *ck, const pl_cluster *cl, const pl_plan_opts *o, int replicas,
                            double simpler_s, double over_s, int mid, pl_err *err)
{
	pl_status st = note_trims(ck, cl, o, replicas, simpler_s, err);
	return st || !(over_s > 0) ? st : note_headroom(ck, o->so.memory_limit, over_s, mid, err);
}

static pl_status plan_search(pl_graph *g, const pl_cluster *cl, const pl_plan_opts *o, cJSON **ck,
                             double *seconds, pl_err *err);

/* A graph exact dp cannot eliminate is no failure of the system (the
 * searcher says so, as a solver error): no plan of that method, exit 3, the
 * methods that plan it named in the message. */
pl_status pl_plan_search(pl_graph *g, const pl_cluster *cl, const pl_plan_opts *o, cJSON **ck,
                         double *seconds, pl_err *err)
{
	pl_status st = plan_search(g, cl, o, ck, seconds, err);
	return st == PL_ESOLVER && strstr(err->msg, "too entangled") ? PL_EINFEASIBLE : st;
}

/* the reason dp failed, for fallback_run (search_with_transient's rounds run it) */
static _Thread_local char fallback_reason[sizeof(((pl_err *)0)->msg)];

static pl_status fallback_run(pl_problem *p, const pl_search_opts *o, pl_search_result *r,
                              pl_err *err)
{
	return pl_search_auto_fallback(p, o, fallback_reason, r, err);
}

static const pl_searcher fallback_searcher = {"auto", fallback_run};

static pl_status plan_search(pl_graph *g, const pl_cluster *cl, const pl_plan_opts *o, cJSON **ck,
                             double *seconds, pl_err *err)
{
	double t_start = pl_now();
	const char *mode = o->mode ? o->mode : "dp";
	const pl_searcher *s = pl_searcher_get(mode);
	*ck = NULL;
	char names[128];
	if (!s)
		return pl_err_set(err, PL_EINVAL, "search mode '%s': expected one of %s", mode,
		                  pl_searcher_names(names, sizeof names));
	if (o->job && (o->so.ilp.dump_lp || !strcmp(mode, "propagate") || !strcmp(mode, "brute")))
		return pl_err_set(err, PL_EINVAL,
		                  "a whole-job search (pipeline stages, micro-batches, ZeRO, "
		                  "recompute) plans with dp, ilp, rec or auto, without an LP dump; "
		                  "got mode '%s'",
		                  mode);
	/* the limit is the device's; the plan's tensors get it less the reserve */
	pl_search_opts so = o->so;
	double reserve = cl->memory_reserve;
	if (so.memory_limit > 0) {
		so.memory_limit -= reserve;
		if (so.memory_limit <= 0)
			return pl_err_set(err, PL_EINVAL,
			                  "the memory limit %.0f bytes is not above the runtime "
			                  "reserve of %.0f bytes (CUDA context, NCCL buffers, "
			                  "allocator); lower the reserve with --memory-reserve "
			                  "(API: memory_reserve) or raise the limit",
			                  o->so.memory_limit, reserve);
	}
	pl_status st;
	const char *kw = o->keep_where ? o->keep_where : "the checkpoint to keep";
	if (o->keep && (st = pl_plan_check_model(g, o->keep, kw, err)))
		return st;
	/* auto: cuts over fewer than all devices where the whole cluster is small
	 * enough for their tables, decided once for every stage mesh */
	int replicas = o->jo.replicas != PL_REPLICAS_AUTO ? o->jo.replicas
	               : pl_cluster_devices_total(cl) <= PL_REPLICAS_AUTO_DEVICES
	                   ? PL_REPLICAS_ALL
	                   : PL_REPLICAS_NONE;
	if (o->job) {
		pl_job_opts jo = o->jo;
		jo.replicas = replicas;
		jo.inner = s;
		jo.top = o->top;
		jo.headroom = headroom_limit(cl, o, PL_MEM_BAND_HI);
		jo.headroom_mid = headroom_limit(cl, o, PL_MEM_BAND_MID);
		if (o->keep) {
			jo.annotate = keep_strategies;
			jo.annotate_ud = (void *)o;
		}
		pl_job_plan jp;
		if ((st = pl_search_job(g, cl, &so, &jo, &jp, err)))
			return reserve_note(st, o->so.memory_limit, reserve, err);
		/* the searcher that planned the points: rec where dp found the
		 * graph too entangled (jo.rec_fallback) */
		st = job_plan_checkpoint(&jp, cl, jp.fell_back ? "rec" : mode, o->so.memory_limit, ck,
		                         err);
		if (!st && jp.nalts && (st = add_alternatives(*ck, &jp, err)))
			cJSON_Delete(*ck), *ck = NULL;
		if (!st && (st = note_space(*ck, cl, o, replicas, jp.simpler_than_s,
		                            jp.headroom_over_s, jp.headroom_mid, err)))
			cJSON_Delete(*ck), *ck = NULL;
		if (seconds)
			*seconds = jp.seconds;
		pl_job_plan_free(&jp);
		return st;
	}
	pl_problem *p = NULL;
	pl_search_result r = {0};
	int64_t **splits = NULL;
	pl_job limits = {.max_tp = o->jo.max_tp, .replicas = replicas};
	if ((o->keep && (st = pl_plan_annotate(g, o->keep, kw, err))) ||
	    (st = pl_problem_new_job(&p, g, cl, &limits, err)))
		goto done;
	st = search_with_transient(p, s, &so, &r, err);
	int entangled = st == PL_ESOLVER && strstr(err->msg, "too entangled");
	if (o->fallback && (st == PL_ETIMEOUT || entangled)) {
		/* the default search: auto's fall-back on the same problem (not
		 * built again) in the time left */
		snprintf(fallback_reason, sizeof fallback_reason, "%s", err->msg);
		so.time_limit_s = pl_time_left(t_start, o->fallback_s);
		pl_search_result_free(&r);
		if (!(st = search_with_transient(p, &fallback_searcher, &so, &r, err))) {
			mode = "auto";
			if (o->fell_back)
				*o->fell_back = entangled ? 2 : 1;
		}
	}
	if (st) {
		reserve_note(st, o->so.memory_limit, reserve, err);
		if (st == PL_EINFEASIBLE && so.memory_limit > 0) {
			size_t n = strlen(err->msg);
			snprintf(err->msg + n, sizeof err->msg - n,
			         "; a per-op plan holds the whole batch's activations and every "
			         "weight's optimizer state: plan the whole job (--job; API: job "
			         "true) to add pipeline stages, micro-batches, ZeRO and recompute, "
			         "or state a configuration (--dp, --tp, --pp, ...)");
		}
		goto done;
	}
	/* a plan whose peak is within the prediction's error of the limit: the
	 * fastest plan with that room, where it is within PL_JOB_HEADROOM (the
	 * searcher that planned, in the time left); else, where the plan needs
	 * more than the median error's room too, the fastest with that */
	double over = 0, t = headroom_limit(cl, o, PL_MEM_BAND_HI) > 0
	                         ? pl_search_result_transient(p, &r)
	                         : 0;
	int mid = 0;
	if (t < 0) {
		st = pl_err_set(err, PL_ENOMEM, "out of memory");
		goto done;
	}
	for (int level = 0; level < 2 && !(over > 0); level++) {
		double room = headroom_limit(cl, o, level ? PL_MEM_BAND_MID : PL_MEM_BAND_HI);
		if (!(room > 0 && r.mem_bytes + t > room) ||
		    (o->so.time_limit_s > 0 && pl_now() - t_start >= o->so.time_limit_s))
			break;
		pl_search_opts so2 = so;
		so2.memory_limit = room;
		so2.time_limit_s = pl_time_left(t_start, o->so.time_limit_s);
		pl_search_result r2 = {0};
		pl_err e2 = {{0}};
		pl_status s2 = search_with_transient(
		    p, strcmp(mode, "auto") ? s : &fallback_searcher, &so2, &r2, &e2);
		if (s2 == PL_ENOMEM) {
			*err = e2;
			st = s2;
			goto done;
		}
		if (!s2 && r2.step_s <= r.step_s * (1 + PL_JOB_HEADROOM)) {
			over = r.step_s;
			mid = level;
			r2.seconds += r.seconds;
			pl_search_result_free(&r);
			r = r2;
		} else {
			r.seconds += r2.seconds;
			pl_search_result_free(&r2);
		}
	}
	if (!(splits = pl_splits_alloc(g))) {
		st = pl_err_set(err, PL_ENOMEM, "out of memory");
		goto done;
	}
	for (int k = 0; k < g->nops; k++)
		memcpy(splits[k], pl_search_result_split(p, &r, k),
		       sizeof(int64_t) * (size_t)g->ops[k].spec.nloops);
	if (!(*ck = op_plan_checkpoint(p, splits, cl, mode, &r, o->so.memory_limit))) {
		st = pl_err_set(err, PL_ENOMEM, "out of memory");
		goto done;
	}
	if (r.nconflicts)
		add_conflicts(*ck, p, &r);
	if ((st = note_space(*ck, cl, o, replicas, 0, over, mid, err))) {
		cJSON_Delete(*ck);
		*ck = NULL;
		goto done;
	}
	if (seconds)
		*seconds = r.seconds;
done:
	pl_splits_free(g, splits);
	pl_search_result_free(&r);
	pl_problem_free(p);
	return st;
}

/* search.space where the default search kept a per-op plan without
 * searching the whole job (pl_plan_whole_job) */
#define PL_PLAN_NOT_JOB                                                                            \
	"plans of one stage and micro-batch without ZeRO or recompute (exact dp could not plan "   \
	"this graph, so the whole job's points were not searched)"

/* The default search's preference for the layout everyone runs: where a
 * plan of plain data parallelism (every op's batch cut over all devices, as
 * DDP runs it; the same micro-batches, ZeRO and recompute space as the
 * search's) is within PL_JOB_SIMPLER of the plan found, it is the answer, and
 * search.space says so with the faster plan's step (--fastest keeps that
 * one). Any failure of the second search leaves the plan as it is. */
double pl_time_left(double t0, double limit_s)
{
	if (!(limit_s > 0))
		return 0;
	double left = limit_s - (pl_now() - t0);
	return left > PL_TIME_LEFT_MIN ? left : PL_TIME_LEFT_MIN;
}

void pl_plan_prefer_dp(pl_graph *g, const pl_cluster *cl, const pl_plan_opts *po,
                       const pl_job_request *jr, cJSON **ck, double *secs)
{
	/* with a time limit (what is left of it): no second search once it ran
	 * out, and the second search's second part gets what the first left */
	double t0 = pl_now(), limit = po->so.time_limit_s;
	if (limit > 0 && limit <= PL_TIME_LEFT_MIN)
		return;
	/* nothing of the layout given: a per-op search, or --job alone */
	if (po->job && !(jr->all && !pl_degrees_any(&po->jo.degrees) && po->jo.stages == PL_AUTO &&
	                 po->jo.micro_batches == PL_AUTO && po->jo.zero == PL_AUTO &&
	                 po->jo.recompute == PL_AUTO))
		return;
	int64_t D = pl_cluster_devices_total(cl);
	pl_ckpt_view v;
	pl_ckpt_view_read(*ck, &v);
	double best = pl_ckpt_or(v.step_s, 0);
	if (D < 2 || !(best > 0))
		return;
	pl_job_request r = *jr;
	r.dp = pl_dim_value(D);
	if (!po->job) { /* a per-op plan: one micro-batch, no ZeRO or recompute */
		r.micro_batches = pl_dim_value(1);
		r.zero = pl_dim_value(0);
		r.recompute = pl_dim_value(PL_RECOMPUTE_NONE);
	}
	pl_plan_opts o = *po;
	pl_err e = {{0}};
	cJSON *dp = NULL;
	double s2 = 0;
	if (pl_plan_opts_job(&o, &r, 0, &e) || pl_plan_search(g, cl, &o, &dp, &s2, &e))
		return;
	pl_ckpt_view dv;
	pl_ckpt_view_read(dp, &dv);
	double step = pl_ckpt_or(dv.step_s, 0);
	cJSON *s = cJSON_GetObjectItemCaseSensitive(dp, "search"); /* written to */
	char text[256];
	snprintf(text, sizeof text,
	         "data-parallel plans (every op's batch cut over all %lld devices; one with other "
	         "cuts may run in %.6g s: within the %g %% the search gives simpler plans)",
	         (long long)D, best, 100 * PL_JOB_SIMPLER);
	/* nor one that may run out of memory where the plan found has room */
	int risk =
	    pl_memory_at_risk(pl_ckpt_or(dv.peak_mem_bytes, 0), pl_ckpt_or(dv.memory_limit, 0)) &&
	    !pl_memory_at_risk(pl_ckpt_or(v.peak_mem_bytes, 0), pl_ckpt_or(v.memory_limit, 0));
	if (!(step > 0) || step > best * (1 + PL_JOB_SIMPLER) || step <= best || !s || risk) {
		cJSON_Delete(dp);
		return;
	}
	if (!po->job) {
		/* a per-op plan stays one: the data-parallel strategies kept, priced
		 * as planner cost prices a per-op plan (the job path's sums may
		 * differ in the last digit) */
		pl_plan_opts o2 = *po;
		o2.keep = dp;
		o2.keep_where = "the data-parallel plan";
		o2.so.time_limit_s = pl_time_left(t0, limit);
		cJSON *per = NULL;
		double s3 = 0;
		if (pl_plan_search(g, cl, &o2, &per, &s3, &e)) {
			cJSON_Delete(dp);
			return;
		}
		cJSON_Delete(dp);
		dp = per;
		s2 += s3;
		if (!(s = cJSON_GetObjectItemCaseSensitive(dp, "search"))) {
			cJSON_Delete(dp);
			return;
		}
	}
	/* the per-op plan's note that the whole job was not searched stays */
	const char *ow = v.space_widen, *ot = v.space;
	const char *jn = ot ? strstr(ot, PL_PLAN_NOT_JOB) : NULL;
	char full[1536];
	snprintf(full, sizeof full, "%s%s%s", text, jn ? "; " : "", jn ? jn : "");
	cJSON_DeleteItemFromObject(s, "space");
	cJSON_DeleteItemFromObject(s, "space_widen");
	if (!cJSON_AddStringToObject(s, "space", full) ||
	    !cJSON_AddStringToObject(s, "space_widen",
	                             jn && ow && strstr(ow, "--job") ? "--fastest --job"
	                                                             : "--fastest")) {
		cJSON_Delete(dp);
		return;
	}
	cJSON_Delete(*ck);
	*ck = dp;
	if (secs)
		*secs += s2;
}

/* Adds to ck's search.space a trim of the space it is proven over (after
 * sep where there is one already) and to search.space_widen the option
 * that lifts it. */
static pl_status space_add(cJSON *ck, const char *sep, const char *text, const char *option,
                           pl_err *err)
{
	cJSON *s = cJSON_GetObjectItemCaseSensitive(ck, "search"); /* written to */
	pl_ckpt_view v;
	pl_ckpt_view_read(ck, &v);
	const char *old = v.space, *oldw = v.space_widen;
	char space[1024], widen[128];
	snprintf(space, sizeof space, "%s%s%s", old ? old : "", old ? sep : "", text);
	if (oldw && strstr(oldw, option)) /* already there */
		option = "";
	snprintf(widen, sizeof widen, "%s%s%s", oldw ? oldw : "", oldw && *option ? " " : "",
	         option);
	cJSON_DeleteItemFromObject(s, "space");
	cJSON_DeleteItemFromObject(s, "space_widen");
	if (!s || !cJSON_AddStringToObject(s, "space", space) ||
	    !cJSON_AddStringToObject(s, "space_widen", widen))
		return pl_err_set(err, PL_ENOMEM, "out of memory");
	return PL_OK;
}

/* The per-op plan kept over a whole-job plan with pipeline stages, ZeRO or
 * recompute that runs in step_s (within PL_JOB_SIMPLER): search.space and
 * space_widen say so, as the whole-job search's own note (note_space). */
static pl_status note_simpler(cJSON *ck, double step_s, pl_err *err)
{
	char text[256];
	snprintf(text, sizeof text,
	         "plans without pipeline stages, ZeRO or recompute (one with them may run in "
	         "%.6g s: within the %g %% the search gives simpler plans)",
	         step_s, 100 * PL_JOB_SIMPLER);
	return space_add(ck, ", ", text, "--fastest", err);
}

pl_status pl_plan_whole_job(pl_graph *g, const pl_cluster *cl, pl_plan_opts *po, pl_job_request *jr,
                            int api, pl_status st, cJSON **ck, double *secs, pl_err *err)
{
	if (po->job || (st && st != PL_EINFEASIBLE) || (!st && !*ck) || po->keep ||
	    po->so.ilp.dump_lp)
		return st;
	double limit = po->so.time_limit_s;
	if (limit > 0 && limit <= PL_TIME_LEFT_MIN)
		return st; /* the time limit has run out */
	pl_ckpt_view v = {0};
	if (!st)
		pl_ckpt_view_read(*ck, &v);
	double per_op = 0;
	if (!st && !((per_op = pl_ckpt_or(v.step_s, 0)) > 0))
		return st;
	const char *mode = v.mode;
	if (mode && !strcmp(mode, "auto"))
		/* the default search fell back: exact dp could not plan the graph
		 * (too entangled, or out of time), and the whole job's points would
		 * each fall back too */
		return space_add(*ck, "; ", PL_PLAN_NOT_JOB, "--job", err);
	pl_job_request r = *jr;
	r.all = 1; /* as --job plans it: every dimension not given searched */
	pl_plan_opts o = *po;
	pl_err e = {{0}};
	cJSON *job = NULL;
	double s2 = 0;
	pl_status js = pl_plan_opts_job(&o, &r, api, &e);
	/* only a faster plan is wanted: points that cannot beat the per-op
	 * plan are bounded out (the point of one stage and micro-batch without
	 * ZeRO or recompute among them: the per-op plan is its optimum) */
	o.jo.beat_s = st ? 0 : per_op;
	if (!js)
		js = pl_plan_search(g, cl, &o, &job, &s2, &e);
	o.jo.beat_s = 0;
	if (js) {
		if (st == PL_EINFEASIBLE && js != PL_ETIMEOUT) {
			*err = e; /* the whole job's reason, which names every option */
			return js;
		}
		return st;
	}
	if (secs)
		*secs += s2;
	pl_ckpt_view jv;
	pl_ckpt_view_read(job, &jv);
	double step = pl_ckpt_or(jv.step_s, 0);
	cJSON *s = cJSON_GetObjectItemCaseSensitive(job, "search"); /* written to */
	/* the per-op plan where the whole job's is no faster: the same plan,
	 * priced per op (the job path's sums may differ in the last digit) */
	if (!st && (!(step > 0) || step >= per_op * (1 - 1e-9) || !s)) {
		cJSON_Delete(job);
		return st;
	}
	/* the whole job's preference: a plan with pipeline stages, ZeRO or
	 * recompute only where it beats the per-op plan (which has none) by more
	 * than PL_JOB_SIMPLER; else the per-op plan, saying so (--fastest) */
	const char *rc = jv.recompute;
	int plain = pl_ckpt_or(jv.pp_stages, 1) == 1 && pl_ckpt_or(jv.optimizer_shard, 0) == 0 &&
	            (!rc || !strcmp(rc, "none"));
	if (!st && !plain && !r.fastest && step * (1 + PL_JOB_SIMPLER) >= per_op) {
		cJSON_Delete(job);
		return note_simpler(*ck, step, err) ? PL_ENOMEM : st;
	}
	if (!(st ? cJSON_AddNullToObject(s, "per_op_step_seconds")
	         : cJSON_AddNumberToObject(s, "per_op_step_seconds", per_op))) {
		cJSON_Delete(job);
		return st ? st : pl_err_set(err, PL_ENOMEM, "out of memory");
	}
	cJSON_Delete(*ck);
	*ck = job;
	*po = o;
	*jr = r;
	return PL_OK;
}

pl_status pl_plan_check_model(const pl_graph *g, const cJSON *ck, const char *where, pl_err *err)
{
	pl_ckpt_view v;
	pl_ckpt_view_read(ck, &v);
	const char *sha = v.model_sha256;
	if (!sha || !strcmp(sha, g->sha256))
		return PL_OK;
	return pl_err_set(err, PL_EINVAL,
	                  "%s: the plan was made for another model: model.sha256 is %s, but %s "
	                  "has sha256 %s",
	                  where, sha, g->path, g->sha256);
}

pl_status pl_plan_annotate(pl_graph *g, const cJSON *ck, const char *where, pl_err *err)
{
	pl_status st = pl_plan_check_model(g, ck, where, err);
	if (st)
		return st;
	int64_t **splits = pl_splits_alloc(g);
	int *has = pl_calloc((size_t)g->nops + 1, sizeof *has);
	if (!splits || !has)
		st = pl_err_set(err, PL_ENOMEM, "out of memory");
	else if (!(st = pl_ckpt_parse_splits(g, ck, where, 1, splits, has, err)))
		for (int o = 0; o < g->nops && !st; o++) {
			pl_op *op = &g->ops[o];
			if (!has[o])
				continue;
			if (!op->strategy && !(op->strategy = pl_arena_alloc(
			                           g->arena, sizeof(int64_t) * PL_MAX_LOOPS)))
				st = pl_err_set(err, PL_ENOMEM, "out of memory");
			else
				memcpy(op->strategy, splits[o], sizeof(int64_t) * PL_MAX_LOOPS);
			op->has_strategy = !st;
		}
	free(has);
	pl_splits_free(g, splits);
	return st;
}

pl_status pl_plan_cluster(const cJSON *ck, const char *where, pl_cluster *cl, pl_err *err)
{
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(ck, "cluster");
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(c, "name");
	const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(c, "nodes");
	const cJSON *dpn = cJSON_GetObjectItemCaseSensitive(c, "devices_per_node");
	const cJSON *dev = cJSON_GetObjectItemCaseSensitive(c, "devices");
	const cJSON *desc = cJSON_GetObjectItemCaseSensitive(c, "description");
	pl_status cst = pl_ckpt_check_cluster(ck, where, err);
	if (cst)
		return cst;
	if (desc) {
		char w[512];
		snprintf(w, sizeof w, "%s: cluster.description", where);
		return pl_cluster_from_json(cl, desc, w, err);
	}
	/* a preset's name gives the GPU and links; the plan's own counts, where
	 * it has them, the nodes (a name and counts that disagree: the counts,
	 * which the plan was made for) */
	int named = cJSON_IsString(name) && pl_cluster_preset(cl, name->valuestring, NULL) == PL_OK;
	/* counts past the bound are refused before they become integers */
	if (cJSON_IsNumber(dpn) && cJSON_IsNumber(nodes) && dpn->valuedouble >= 1 &&
	    nodes->valuedouble >= 1) {
		if (!(dpn->valuedouble * nodes->valuedouble <= PL_MAX_DEVICES))
			return pl_err_set(err, PL_EINVAL,
			                  "%s: cluster: nodes %g x devices_per_node %g: at most %d "
			                  "devices",
			                  where, nodes->valuedouble, dpn->valuedouble,
			                  PL_MAX_DEVICES);
		pl_status st =
		    named ? PL_OK : pl_cluster_devices(cl, (int64_t)dpn->valuedouble, err);
		cl->devices_per_node = (int64_t)dpn->valuedouble;
		cl->nodes = (int64_t)nodes->valuedouble;
		if (cJSON_IsString(name))
			snprintf(cl->name, sizeof cl->name, "%s", name->valuestring);
		return st;
	}
	if (named)
		return PL_OK;
	if (cJSON_IsNumber(dev) && !(dev->valuedouble >= 1 && dev->valuedouble <= PL_MAX_DEVICES &&
	                             dev->valuedouble == floor(dev->valuedouble)))
		return pl_err_set(err, PL_EINVAL,
		                  "%s: cluster.devices: %g: expected an integer from 1 to %d",
		                  where, dev->valuedouble, PL_MAX_DEVICES);
	if (cJSON_IsNumber(dev))
		return pl_cluster_devices(cl, (int64_t)dev->valuedouble, err);
	return pl_err_set(err, PL_EINVAL,
	                  "%s: the plan has no cluster block (a MindSpore strategy file has "
	                  "none); give --devices N or --cluster",
	                  where);
}

/* An interleaved plan as the executor runs it: each stage's ops cut into v
 * model chunks at its clean cuts, the i-th cut the clean one nearest to i/v
 * of the stage's ops (at least one segment a chunk), the model's chunk j
 * (stage j / v's chunk j % v) on stage j mod pp: into out[op], j. The cost
 * model prices a stage's v chunks as v-ths of it, which chunks of as many
 * repeated layers each are (Megatron's, the embedding with the first and the
 * head with the last). */
static pl_status model_chunks(const pl_graph *g, const int *stage, int64_t pp, int64_t v,
                              const char *where, int *out, pl_err *err)
{
	int *cuts = pl_malloc(sizeof *cuts * ((size_t)g->nops + 2));
	int nc = cuts ? pl_clean_cuts(g, cuts) : -1;
	if (nc < 0) {
		free(cuts);
		return pl_err_set(err, PL_ENOMEM, "out of memory");
	}
	for (int s = 0, a = 0; s < pp; s++) {
		int b = a;
		while (b < g->nops && stage[b] == s)
			b++;
		int lo = 0, n = 0;
		while (lo < nc && cuts[lo] < a)
			lo++;
		while (lo + n < nc && cuts[lo + n] < b)
			n++;
		if (n < v || lo >= nc || cuts[lo] != a) {
			free(cuts);
			return pl_err_set(err, PL_EINVAL,
			                  "%s: pipeline.virtual_stages %lld: stage %d has %d clean "
			                  "segments (a cut with one activation and no param "
			                  "crossing), fewer than its model chunks",
			                  where, (long long)v, s, n);
		}
		/* chunk i starts at segment first[i]: the nearest to its share of
		 * the ops, after chunk i-1's and leaving one for each chunk after */
		int first = 0, o = a;
		for (int i = 0; i < v; i++) {
			int next = n; /* chunk i+1's first segment */
			if (i + 1 < v) {
				double want = a + (double)(b - a) * (double)(i + 1) / (double)v;
				next = first + 1;
				for (int c = next + 1; c <= n - (int)(v - i - 1); c++)
					if (fabs(cuts[lo + c] - want) <
					    fabs(cuts[lo + next] - want))
						next = c;
			}
			int end = next < n ? cuts[lo + next] : b;
			for (; o < end; o++)
				out[o] = (int)(s * v + i);
			first = next;
		}
		a = b;
	}
	free(cuts);
	return PL_OK;
}

/* The plan's parallel_strategy of each op of g (*splits, *has: the caller
 * frees them, on failure too), each checked as a cut over D devices (a
 * stage's, of one micro-batch, when stage) */
static pl_status checked_splits(const pl_graph *g, const cJSON *plan, const char *where, int64_t D,
                                int stage, int64_t ***splits, int **has, pl_err *err)
{
	pl_status st;
	if (!(*splits = pl_splits_alloc(g)) ||
	    !(*has = pl_calloc((size_t)g->nops + 1, sizeof **has)))
		return pl_err_set(err, PL_ENOMEM, "out of memory");
	if ((st = pl_ckpt_parse_splits(g, plan, where, 0, *splits, *has, err)))
		return st;
	for (int o = 0; o < g->nops; o++)
		if ((st = pl_op_check_split(&g->ops[o], (*splits)[o], D, err))) {
			if (stage)
				pl_err_prefix(
				    err,
				    "%s: op '%s': parallel_strategy (one micro-batch, %lld "
				    "devices a stage)",
				    where, g->ops[o].name, (long long)D);
			else
				pl_err_prefix(err, "%s: op '%s': parallel_strategy", where,
				              g->ops[o].name);
			return st;
		}
	return PL_OK;
}

/* Prices a whole-job plan (pipeline, optimizer_shard, recompute). Its
 * strategies are read on the micro-batch graph: the loops of an op can
 * differ between the whole batch and one micro-batch (a Reshape skips
 * dimensions of size 1), so they are parsed on the graph that is priced. */
static pl_status price_job(const pl_graph *g, const cJSON *plan, const char *where,
                           const pl_cluster *cl, int64_t pp, int64_t m, int64_t vs, int overlap,
                           int zero, const int *stage, const uint8_t *rc, pl_jobcost *out,
                           pl_plan_detail *detail, pl_run_plan *run, pl_err *err)
{
	int64_t D = pl_cluster_devices_total(cl);
	pl_cluster mesh;
	pl_graph *gm = NULL;
	pl_problem *p = NULL;
	int64_t **splits = NULL;
	int *has = NULL, *chunk = NULL;
	pl_status st = PL_OK;
	if (D % pp || pl_stage_mesh(cl, D / pp, &mesh))
		return pl_err_set(err, PL_EINVAL,
		                  "%s: pipeline.stages %lld: %lld devices do not split into stages "
		                  "that tile the nodes",
		                  where, (long long)pp, (long long)D);
	if ((st = pl_graph_microbatch(g, m, &gm, err))) {
		pl_err_prefix(err, "%s: pipeline.micro_batches %lld", where, (long long)m);
		return st;
	}
	if ((st = checked_splits(gm, plan, where, D / pp, 1, &splits, &has, err)))
		goto done;
	/* interleaved: each op's model chunk as the executor runs it; a plan
	 * whose stages cannot be cut into its chunks is refused by cost and run
	 * alike */
	if (vs > 1 && !(chunk = pl_malloc(sizeof *chunk * ((size_t)gm->nops + 1)))) {
		st = pl_err_set(err, PL_ENOMEM, "out of memory");
		goto done;
	}
	if (vs > 1 && (st = model_chunks(gm, stage, pp, vs, where, chunk, err)))
		goto done;
	pl_job job = {.micro_batches = m,
	              .stages = pp,
	              .virtual_stages = vs,
	              .overlap = overlap,
	              .zero = zero,
	              .recompute = (uint8_t *)rc};
	if ((st = pl_problem_new_job(&p, gm, &mesh, &job, err)))
		goto done;
	if (pl_job_price(p, splits, stage, cl->devices_per_node, NULL, out) ||
	    (detail &&
	     pl_plan_detail_of(p, splits, stage, cl->devices_per_node, out->bottleneck, detail)))
		st = pl_err_set(err, PL_ENOMEM, "out of memory");
	if (!st && run) { /* handed to the executor */
		uint8_t *flags = pl_malloc((size_t)gm->nops + 1);
		int *stages = pl_malloc(sizeof *stages * ((size_t)gm->nops + 1));
		if (!flags || !stages) {
			free(flags);
			free(stages);
			st = pl_err_set(err, PL_ENOMEM, "out of memory");
			goto done;
		}
		memcpy(flags, rc, (size_t)gm->nops);
		memcpy(stages, chunk ? chunk : stage, sizeof *stages * (size_t)gm->nops);
		*run = (pl_run_plan){.g = gm,
		                     .splits = splits,
		                     .devices = D,
		                     .job = {.micro_batches = m,
		                             .zero = zero,
		                             .recompute = flags,
		                             .stages = pp,
		                             .stage = stages,
		                             .virtual_stages = vs}};
		gm = NULL;
		splits = NULL;
	}
done:
	pl_problem_free(p);
	free(has);
	free(chunk);
	pl_splits_free(gm, splits);
	pl_graph_free(gm);
	return st;
}

const pl_graph *pl_run_plan_graph(const pl_run_plan *r, const pl_graph *model)
{
	return r->g ? r->g : model;
}

void pl_run_plan_free(pl_run_plan *r, const pl_graph *model)
{
	pl_splits_free(pl_run_plan_graph(r, model), r->splits);
	pl_graph_free(r->g);
	free((void *)r->job.recompute);
	free((void *)r->job.stage);
	memset(r, 0, sizeof *r);
}

pl_status pl_plan_price(const pl_graph *g, const cJSON *plan, const char *where,
                        const pl_cluster *cl, pl_plancost *pc, double *bubble,
                        pl_plan_detail *detail, pl_run_plan *run, pl_err *err)
{
	*bubble = -1;
	int64_t **splits = NULL;
	int *has = NULL;
	int *stage = pl_calloc((size_t)g->nops + 1, sizeof *stage);
	uint8_t *rc = pl_calloc((size_t)g->nops + 1, 1);
	pl_problem *p = NULL;
	pl_status st = PL_OK;
	if (!stage || !rc) {
		st = pl_err_set(err, PL_ENOMEM, "out of memory");
		goto cleanup;
	}
	if (!cJSON_IsObject(plan)) {
		st = pl_err_set(err, PL_EINVAL, "%s: expected a JSON object", where);
		goto cleanup;
	}
	if ((st = pl_plan_check_model(g, plan, where, err)))
		goto cleanup;
	int64_t pp, m, vs;
	int zero, overlap, is_job = 0;
	if ((st = pl_ckpt_parse_job(g, plan, where, &pp, &m, &vs, &overlap, &zero, stage, rc,
	                            &is_job, err)))
		goto cleanup;
	if (vs > 1 && (pp == 1 || m % pp)) {
		st = pl_err_set(
		    err, PL_EINVAL,
		    "%s: pipeline.virtual_stages %lld: the interleaved schedule needs "
		    "pipeline stages and micro-batches a multiple of them (%lld over %lld)",
		    where, (long long)vs, (long long)m, (long long)pp);
		goto cleanup;
	}
	if (is_job && !pl_zero_pipeline_ok(zero, pp)) {
		st = pl_err_set(err, PL_EINVAL,
		                "%s: optimizer_shard %d with %lld pipeline stages: %s", where, zero,
		                (long long)pp, PL_ZERO_PIPELINE_WHY);
		goto cleanup;
	}
	if (is_job) {
		pl_jobcost jc;
		if ((st = price_job(g, plan, where, cl, pp, m, vs, overlap, zero, stage, rc, &jc,
		                    detail, run, err)))
			goto cleanup;
		*pc = (pl_plancost){.step_s = jc.step_s,
		                    .compute_s = jc.compute_s,
		                    .optimizer_s = jc.optimizer_s,
		                    .comm_s = jc.comm_s,
		                    .mem_bytes = jc.mem_bytes + cl->memory_reserve};
		*bubble = jc.bubble_s;
		goto cleanup;
	}
	int64_t D = pl_cluster_devices_total(cl);
	if ((st = checked_splits(g, plan, where, D, 0, &splits, &has, err)))
		goto cleanup;
	/* the plan's own strategies are priced; annotations are not enforced here */
	if ((st = pl_problem_new(&p, g, cl, err)))
		goto cleanup;
	pl_cost_plan(p, splits, pc, NULL);
	pl_membreak mb;
	if (pl_job_memory(p, splits, NULL, &mb, NULL)) {
		st = pl_err_set(err, PL_ENOMEM, "out of memory");
		goto cleanup;
	}
	pc->mem_bytes += mb.transient + cl->memory_reserve;
	if (detail && pl_plan_detail_of(p, splits, NULL, cl->devices_per_node, 0, detail)) {
		st = pl_err_set(err, PL_ENOMEM, "out of memory");
		goto cleanup;
	}
	if (run) {
		*run = (pl_run_plan){.splits = splits, .devices = D, .job = {.micro_batches = 1}};
		splits = NULL;
	}
cleanup:
	pl_problem_free(p);
	free(has);
	free(stage);
	free(rc);
	pl_splits_free(g, splits);
	return st;
}

cJSON *pl_plan_cost_json(const pl_graph *g, const pl_cluster *cl, const pl_plancost *pc,
                         double bubble, const pl_plan_detail *d, double limit)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "step_seconds", pc->step_s);
	cJSON_AddNumberToObject(o, "compute_seconds", pc->compute_s);
	cJSON_AddNumberToObject(o, "optimizer_seconds", pc->optimizer_s);
	cJSON_AddNumberToObject(o, "communication_seconds", pc->comm_s);
	cJSON_AddNumberToObject(o, "peak_memory_bytes", pc->mem_bytes);
	if (bubble >= 0)
		cJSON_AddNumberToObject(o, "bubble_seconds", bubble);
	cJSON *mb = cJSON_AddObjectToObject(o, "memory_breakdown_bytes");
	for (int k = 0; k < PL_CKPT_MEM; k++)
		cJSON_AddNumberToObject(mb, pl_ckpt_mem_names[k], d->mem[k]);
	if (d->stages > 1)
		pl_json_add(o, "stage_memory_bytes", pl_ckpt_stage_memory(d->stage_mem, d->stages));
	pl_ckpt_add_comm(o, &d->comm);
	pl_ckpt_add_attention_beyond(o, cl, d->attn_seq, d->attn_longest);
	cJSON_AddNumberToObject(o, "memory_limit_bytes", limit);
	cJSON_AddBoolToObject(o, "fits", pc->mem_bytes <= limit);
	cJSON_AddBoolToObject(o, "fits_with_headroom",
	                      pc->mem_bytes <= limit && !pl_memory_at_risk(pc->mem_bytes, limit));
	pl_ckpt_add_utilisation(o, g, cl, pc->step_s);
	return o;
}
