/* Planning a model end to end, shared by the command line and the
 * auto-parallel API (planner/planner.h): search a plan and build its strategy
 * checkpoint; read a checkpoint back into split counts and price it. */
#ifndef PL_PLAN_H
#define PL_PLAN_H

#include <cjson/cJSON.h>

#include "costmodel/cost.h"
#include "costmodel/pipeline.h"
#include "executor/exec.h"
#include "search/job.h"
#include "planner/checkpoint.h"
#include "search/search.h"

/* Split counts, g->nops rows of PL_MAX_LOOPS; NULL out of memory. */
int64_t **pl_splits_alloc(const pl_graph *g);
void pl_splits_free(const pl_graph *g, int64_t **s);

typedef struct pl_plan_opts {
	const char *mode;  /* searcher (search/registry.c); NULL: dp */
	pl_search_opts so; /* memory limit (bytes; 0 none), time limit, progress, ... */
	int job;           /* 1: whole-job search (pipeline, micro-batches, ZeRO, recompute) */
	pl_job_opts jo;    /* its dimensions; jo.inner is set from mode */
	const cJSON *keep; /* a checkpoint whose ops' strategies the plan keeps (--load), or NULL */
	const char *keep_where; /* its name, for messages */
	int top; /* > 1 (whole job): list the points' best plans in search.alternatives */
	/* the default search (a per-op plan): where the searcher fails on the
	 * time limit or a graph too entangled for exact dp, auto's fall-back
	 * (pl_search_auto_fallback) plans the same problem in what is left of
	 * fallback_s seconds from the search's start (0: no limit); the plan's
	 * mode is then auto, and *fell_back (when not NULL) says why: 1 the time
	 * limit, 2 the graph */
	int fallback;
	double fallback_s;
	int *fell_back;
} pl_plan_opts;

/* How a user gave one whole-job dimension: not at all (the default), 'auto'
 * (the search chooses it), or a value. */
typedef enum pl_given { PL_GIVEN_NOT = 0, PL_GIVEN_AUTO, PL_GIVEN_VALUE } pl_given;
typedef struct pl_dim {
	pl_given how;
	long long v; /* with PL_GIVEN_VALUE */
} pl_dim;
static inline pl_dim pl_dim_value(long long v)
{
	return (pl_dim){PL_GIVEN_VALUE, v};
}
static inline pl_dim pl_dim_auto(void)
{
	return (pl_dim){PL_GIVEN_AUTO, 0};
}
/* its value, or `otherwise` when none was given */
static inline long long pl_dim_or(pl_dim d, long long otherwise)
{
	return d.how == PL_GIVEN_VALUE ? d.v : otherwise;
}
/* "auto" or an integer in [lo, hi] into *out: 0, or -1 (out untouched) */
int pl_dim_parse(const char *s, long long lo, long long hi, pl_dim *out);

/* The whole-job dimensions as a user states them, the one options model of
 * the command line (--job, --pp, --dp, ...) and the API (pipeline_stage,
 * data_parallel, ...): each not given, 'auto' or a value. */
typedef struct pl_job_request {
	int all; /* search every dimension not given (--job) */
	/* a value or auto: pp >= 1, m >= 1, ZeRO 0..3, recompute (PL_RECOMPUTE_*),
	 * chunks per device >= 1 */
	pl_dim stages, micro_batches, zero, recompute, virtual_stages;
	/* values: sequences per micro-batch per data-parallel rank, the degrees */
	pl_dim micro_batch_size, dp, tp, cp, ep;
	pl_dim overlap; /* gradient reduction overlapped with the backward: 0 or 1 */
	/* a linear layer's tensor-parallel collectives overlapped with its
	 * GEMMs (--tp-comm-overlap): 0 or 1 */
	pl_dim tp_overlap;
	/* parameter all-gathers overlapped with the compute
	 * (--overlap-param-gather): 0 or 1 */
	pl_dim param_overlap;
	/* sequence parallelism: 1 on, 0 off (norms and dropouts replicated over
	 * the tensor-parallel ranks), not given or auto: the search chooses
	 * (pl_degrees.seq_parallel) */
	pl_dim seq_parallel;
	/* the most devices one op's tensor-parallel cut spans (0: any; not given:
	 * one node's where the mesh spans nodes); any search, not a job dimension */
	pl_dim max_tp;
	/* with degrees free, ops' cuts over fewer than all devices as candidates
	 * too: 1 on, 0 off, not given or auto: on up to PL_REPLICAS_AUTO_DEVICES
	 * (pl_job.replicas); any search, not a job dimension */
	pl_dim replicas;
	/* 1: pipeline stages split the model only between whole layers; 2: the
	 * same number of layers on every stage; 3: uniform over the layer specs
	 * (pl_job_opts.layer_cuts); not given or 0: at any clean cut */
	pl_dim layer_cuts;
	int fastest; /* no preference for plans without pp, ZeRO, recompute */
} pl_job_request;
/* A request with nothing given. */
#define PL_JOB_REQUEST_INIT                                                                        \
	{                                                                                          \
		0                                                                                  \
	}

/* Sets o->job and o->jo from r: any dimension given (or r->all) makes a
 * whole-job search in which every dimension not given is searched; nothing
 * given, a per-op plan. PL_EINVAL saying why when r contradicts itself,
 * naming the options as the command line (api 0) or the API's keys (api 1)
 * state them. */
pl_status pl_plan_opts_job(pl_plan_opts *o, const pl_job_request *r, int api, pl_err *err);
/* The default search's preference (search and the API without a search
 * mode, nothing of the layout given in r, no --fastest/--framework/--load):
 * where plain data parallelism (every op's batch cut over all devices, in
 * the same micro-batch, ZeRO and recompute space) is within PL_JOB_SIMPLER
 * of the plan *ck, *ck becomes that plan, search.space saying so with the
 * faster plan's step; *secs (may be NULL) adds its search time. A failure
 * of that search leaves *ck as it is. */
void pl_plan_prefer_dp(pl_graph *g, const pl_cluster *cl, const pl_plan_opts *po,
                       const pl_job_request *jr, cJSON **ck, double *secs);

/* What is left at pl_now() of a time limit of limit_s seconds that began at
 * t0 (pl_now()): at least PL_TIME_LEFT_MIN, so that it stays a limit; 0
 * (none) when limit_s is not > 0. Each phase of a command (the search, the
 * default search's fall-back, its preference for data parallelism) gets what
 * is left, so that the command keeps to the limit. */
#define PL_TIME_LEFT_MIN 1e-9
double pl_time_left(double t0, double limit_s);

/* The free search's whole space (issue 50): a per-op plan (no --job, nothing
 * of the layout given) is the whole-job search's point of one stage, one
 * micro-batch, no ZeRO and no recompute; a fixed degree makes a whole-job
 * search that chooses them. So the default search runs the whole-job search
 * with every dimension free (as --job plans it, in what is left of
 * po->so.time_limit_s) after the per-op one, whose status is st: where the
 * per-op plan *ck is slower (by more than rounding), or none fits (st
 * PL_EINFEASIBLE), the whole-job plan becomes *ck, *po and *jr are set as
 * --job sets them (so that pl_plan_prefer_dp compares in the whole job's space) and
 * search.per_op_step_seconds records the per-op plan's step (null: none
 * fits). Returns the status to carry on with: st where nothing changed
 * (a failure of the whole-job search changes nothing, but for a per-op
 * search that found no plan fitting, which gets the whole job's reason);
 * *secs (may be NULL) adds that search's time. api as pl_plan_opts_job. */
pl_status pl_plan_whole_job(pl_graph *g, const pl_cluster *cl, pl_plan_opts *po, pl_job_request *jr,
                            int api, pl_status st, cJSON **ck, double *secs, pl_err *err);

/* Searches a plan for g on cl and builds its checkpoint (*ck, caller
 * cJSON_Deletes). A propagate search's conflicts are in the checkpoint's
 * search.conflicts; *seconds (may be NULL) the search time. Errors: PL_EINVAL for an unknown mode
 * or options that do not go together, and the searchers' own. */
pl_status pl_plan_search(pl_graph *g, const pl_cluster *cl, const pl_plan_opts *o, cJSON **ck,
                         double *seconds, pl_err *err);

/* PL_EINVAL naming both digests when checkpoint ck records a model.sha256
 * other than g's; a plan without one (written by hand) passes. */
pl_status pl_plan_check_model(const pl_graph *g, const cJSON *ck, const char *where, pl_err *err);

/* Makes the strategies of the ops a checkpoint names annotations of g (kept
 * by every searcher); ops it does not name stay free. */
pl_status pl_plan_annotate(pl_graph *g, const cJSON *ck, const char *where, pl_err *err);

/* The cluster a checkpoint was priced on: the description its cluster block
 * records, else (older checkpoints) the preset it names, else H100 nodes of
 * its shape, else its device count. where names the checkpoint in errors. */
pl_status pl_plan_cluster(const cJSON *ck, const char *where, pl_cluster *cl, pl_err *err);

/* A plan lowered for the executor: the graph its strategies are for (a
 * whole-job plan's micro-batch graph, with the model's op and tensor
 * indices; NULL: the model itself), the split counts per op of it, the ranks
 * and the whole-job settings. */
typedef struct pl_run_plan {
	pl_graph *g;
	int64_t **splits;
	int64_t devices;
	pl_exec_job job; /* its recompute flags owned */
} pl_run_plan;
/* the graph to run: r->g, else the model */
const pl_graph *pl_run_plan_graph(const pl_run_plan *r, const pl_graph *model);
void pl_run_plan_free(pl_run_plan *r, const pl_graph *model);

/* What a checkpoint says about a plan beyond its totals, computed where the
 * plan is priced: the peak device's memory by category (with the runtime
 * reserve), every stage's, and the bottleneck stage's communication by
 * collective and link class. */
typedef struct pl_plan_detail {
	double mem[PL_CKPT_MEM];
	int mem_stage;
	int64_t stages;
	pl_membreak *stage_mem; /* stages entries, owned */
	pl_commbook comm;
	/* a fused attention priced beyond its kernel's measurements
	 * (pl_cost_attention_beyond): its sequence and the longest measured;
	 * 0 and 0 where none is */
	double attn_seq, attn_longest;
} pl_plan_detail;
/* Fills d for a plan of p (stage NULL: one stage; bottleneck: the stage
 * whose communication the plan's comm_s is); -1 when out of memory. */
int pl_plan_detail_of(const pl_problem *p, int64_t *const *splits, const int *stage,
                      int64_t devices_per_node, int bottleneck, pl_plan_detail *d);
void pl_plan_detail_free(pl_plan_detail *d);

/* The cost object `planner cost` prints for a plan priced by pl_plan_price
 * (pc, bubble, d) on cl: step, compute, optimizer and communication
 * seconds, peak memory, the pipeline bubble (bubble >= 0), the memory
 * breakdown, every stage's memory, communication by collective,
 * memory_limit_bytes (limit) and fits, and the utilisation keys
 * (pl_ckpt_add_utilisation). Caller owns it (cJSON_Delete); NULL when out of
 * memory. */
cJSON *pl_plan_cost_json(const pl_graph *g, const pl_cluster *cl, const pl_plancost *pc,
                         double bubble, const pl_plan_detail *d, double limit);

/* Prices plan (a checkpoint object; only parallel_strategy_item and the
 * whole-job fields are read) for g on cl. *bubble is -1 for a per-op plan;
 * pc->mem_bytes includes the cluster's runtime reserve, and detail (NULL, or
 * freed with pl_plan_detail_free) receives the rest of what a checkpoint says.
 * With run, the plan is to be run and is lowered into it (pl_run_plan_free):
 * pipeline stages (1F1B and interleaved), micro-batches, ZeRO and recompute
 * run. Errors
 * name `where` and the op. */
pl_status pl_plan_price(const pl_graph *g, const cJSON *plan, const char *where,
                        const pl_cluster *cl, pl_plancost *pc, double *bubble,
                        pl_plan_detail *detail, pl_run_plan *run, pl_err *err);

#endif
