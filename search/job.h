/* The outer search of a whole training job: over pipeline stages
 * (pp, stage boundaries at clean cuts), micro-batches (m), optimizer-state
 * sharding (ZeRO 0-3) and recompute, each point's per-op plan on one stage's
 * mesh from an inner searcher (dp by default). Objective: the step of
 * costmodel/pipeline.h under the per-device memory limit. */
#ifndef PL_JOB_H
#define PL_JOB_H

#include "costmodel/pipeline.h"
#include "search/search.h"

/* A dimension of the whole job the search chooses; any other value fixes it.
 * Every count of pl_job_opts below reads it the same way (the cost model's
 * pl_job holds what was chosen: values only). */
#define PL_AUTO (-1)

typedef struct pl_job_opts {
	int64_t stages;           /* PL_AUTO: the divisors of the device count; else >= 1 */
	int64_t micro_batches;    /* PL_AUTO: the divisors of the batch; else >= 1 */
	int zero;                 /* PL_AUTO: 0..3; else the level */
	int zero_mask;            /* with zero PL_AUTO: bit z set, level z searched; 0: all */
	int zero_mask_pp;         /* the same for pipelined points; 0: zero_mask's */
	int recompute;            /* PL_AUTO or PL_RECOMPUTE_* */
	/* with recompute PL_AUTO: bit r set, mode r searched; 0: the first
	 * PL_RECOMPUTE_SEARCHED (none, full, selective) */
	int recompute_mask;
	int fastest;              /* 1: the fastest plan, without the PL_JOB_SIMPLER preference */
	const pl_searcher *inner; /* NULL: dp */
	/* 1 (the default search): where dp finds the graph too entangled for
	 * exact tables, rec plans this and every later point, unproven
	 * (pl_job_plan.fell_back); 0: the job fails with dp's reason */
	int rec_fallback;
	/* fixed degrees (0: free). Any of dp, tp fixed: cp is 1 unless fixed, and
	 * dp x tp x cp is each stage's device count (the one not given is what is
	 * left); ep divides dp x cp. */
	pl_degrees degrees;
	/* PL_OVERLAP_GRAD: gradient reduction overlapped with the backward;
	 * PL_OVERLAP_TP: tensor-parallel collectives with the GEMMs;
	 * PL_OVERLAP_PARAM: parameter all-gathers ahead of use beside the compute */
	int overlap;
	/* the most devices one op's model-parallel cut spans (pl_job.max_tp): a
	 * count, PL_MAX_TP_NODE one node's where a stage's mesh spans nodes,
	 * PL_MAX_TP_ANY any */
	int64_t max_tp;
	int replicas; /* pl_job.replicas: PL_REPLICAS_AUTO (0), _ALL, _NONE */
	/* 1: stage boundaries only between whole repeated layers
	 * (pl_layer_cuts), as frameworks split a model; 2: also the same number
	 * of layers on every stage, 3: a uniform split of the layer specs
	 * (pl_even_stages, items 0 and 1); 0: at any clean cut */
	int layer_cuts;
	int64_t virtual_stages;   /* model chunks per device (interleaved 1F1B): PL_AUTO
	                           * chosen per plan, 1 plain 1F1B, v > 1 fixed */
	int64_t micro_batch_size; /* per data-parallel rank, as Megatron's (PL_AUTO:
	                           * free); micro_batches = batch / (size x dp) */
	/* called on every micro-batch graph before it is planned (keeps ops'
	 * strategies: --load); an error skips the micro-batch count, or is the
	 * answer when no count is left */
	pl_status (*annotate)(void *ud, pl_graph *gm, pl_err *err);
	void *annotate_ud;
	/* > 1: the best plans of this many points are kept apart (a point is
	 * bounded out only when it cannot be among them) and listed in
	 * pl_job_plan.alts; 0 or 1: the best plan alone, as always */
	int top;
	/* > 0: the caller holds a plan without pipeline stages, ZeRO or
	 * recompute that takes this long (the default search's per-op plan):
	 * only faster plans are wanted, points that cannot beat it are out, and
	 * where none does the search fails as when none fits */
	double beat_s;
	/* > 0 (bytes, below the memory limit): where the plan found needs more
	 * than this of a device (a plan's tensors, as the limit counts them),
	 * the fastest plan within it is the answer if its step is within
	 * PL_JOB_HEADROOM of that plan's (pl_job_plan.headroom_over_s says so);
	 * 0: the fastest plan within the limit, as always */
	double headroom;
	/* > headroom (bytes, below the memory limit): where no plan within
	 * headroom is within PL_JOB_HEADROOM, the fastest plan within this is the
	 * answer on the same terms (pl_job_plan.headroom_mid says so); 0: none */
	double headroom_mid;
} pl_job_opts;
/* Every dimension searched, nothing fixed. */
#define PL_JOB_OPTS_AUTO                                                                           \
	(pl_job_opts)                                                                              \
	{                                                                                          \
		.stages = PL_AUTO, .micro_batches = PL_AUTO, .zero = PL_AUTO,                      \
		.recompute = PL_AUTO, .virtual_stages = PL_AUTO, .micro_batch_size = PL_AUTO       \
	}

/* A point of the search (pipeline stages x micro-batches x ZeRO x recompute)
 * and the best plan found on it that fits: its step and memory, and the
 * interleaving it chose. */
typedef struct pl_job_alt {
	int64_t pp, m, vs;
	int zero, recompute;
	double step_s, mem_bytes;
} pl_job_alt;

typedef struct pl_job_plan {
	pl_graph *g;        /* the micro-batch graph (owned) */
	pl_cluster mesh;    /* one stage's devices */
	pl_problem *p;      /* owned; its job holds m, pp, zero, recompute */
	pl_search_result r; /* per-op plan on the mesh */
	int *stage;         /* per op */
	pl_stagecost *stages;
	pl_jobcost cost;
	int points, pruned; /* outer points planned, and skipped by their lower bound */
	int relaxed;        /* relaxed dps the first pass ran for bounds */
	int optimal;        /* every point was planned exactly or bounded out */
	int fell_back;      /* rec planned the points (pl_job_opts.rec_fallback) */
	/* > 0: a plan with pipeline stages, ZeRO or recompute may be this fast
	 * (the best found, or a lower bound), and this one without them was kept
	 * (within PL_JOB_SIMPLER; pl_job_opts.fastest: never): the plan is
	 * optimal among plans without them */
	double simpler_than_s;
	/* > 0: the plan found first (within the limit, not pl_job_opts.headroom)
	 * took this long, and this one within the headroom was kept (within
	 * PL_JOB_HEADROOM): the plan is optimal among plans within the headroom */
	double headroom_over_s;
	/* with headroom_over_s: the plan kept is within pl_job_opts.headroom_mid,
	 * none within pl_job_opts.headroom being within PL_JOB_HEADROOM */
	int headroom_mid;
	/* a time limit stopped the search: no plan is faster than bound_s, and
	 * the plan's step is within gap (a fraction) of it; 0 otherwise */
	double bound_s, gap;
	char why[512];
	double seconds;
	/* with pl_job_opts.top > 1: every point with a plan that fits, by step
	 * (the chosen plan's point among them); owned */
	pl_job_alt *alts;
	int nalts;
} pl_job_plan;

/* Where the search chooses pipeline stages, ZeRO or recompute, a plan without
 * them is kept if its step is within this fraction of the best with them
 * (they cost memory traffic, buffers and complexity the model prices only in
 * part, and the cost model is not finer than that). */
#define PL_JOB_SIMPLER 0.02

/* Where the plan found needs memory within the prediction's error of the
 * limit (pl_job_opts.headroom), a plan with room left is kept if its step is
 * within this fraction: a launch that runs out of memory costs more than a
 * step this much slower (docs/user-guide.md; --fastest drops it). */
#define PL_JOB_HEADROOM 0.05

pl_status pl_search_job(const pl_graph *g, const pl_cluster *c, const pl_search_opts *o,
                        const pl_job_opts *jo, pl_job_plan *out, pl_err *err);
void pl_job_plan_free(pl_job_plan *jp);

/* The recompute flags of mode (costmodel/cost.h) for g, g->nops of them.
 * PL_RECOMPUTE_FULL: ops of every block of each repeated run get 1, each
 * block's output op 2 (its output is the checkpoint the next layer, or what
 * follows the run, starts from): Megatron's --recompute-granularity full,
 * uniform, one layer at a time, which checkpoints the last layer of every
 * stage too. PL_RECOMPUTE_SELECTIVE (Megatron's selective
 * recompute): the ops of each attention core get 1 -- from the product of
 * two activations that feeds a Softmax (through ops that keep the shape), the
 * Softmax, up to the product of its result with another activation -- so its
 * sequence x sequence tensors are not kept and their forward re-runs; the
 * core's inputs (queries, keys, values) stay kept by their producers. A
 * fused Attention is a core by itself (its output and log-sum-exps not
 * kept, its forward run again, as Megatron's selective recompute of
 * FlashAttention's core attention). PL_RECOMPUTE_SELECTIVE_OP (torchtitan's
 * per-op selective checkpointing, selective_ac_option "op"): the flags of
 * full, but each block's fused attention cores and its 1st, 3rd, 5th, ...
 * product with a weight in op order get 3 (saved: torchtitan's _save_list
 * holds the SDPA kernels and aten.mm, and _custom_policy saves every mm but
 * the 2nd, 4th, ... of each block's forward).
 * Returns the number of recomputed blocks or cores (0: nothing to recompute). */
int pl_job_recompute_flags(const pl_graph *g, int mode, uint8_t *flags);

/* The node bound of whole-job problem p (pl_problem_new_job) at its ZeRO
 * level and recompute flags, before any edge table is priced: per op class
 * (its ops share candidates and node tables) the least over its candidates
 * of the op's node time (pl_problem_node: kernels, its own collectives, its
 * step share of sync and optimizer over the span m + pp - 1), state bytes
 * and kept activation bytes of one micro-batch (pl_parts_split), each
 * summed over the ops into least[0..2]. No plan of p, on any stage split,
 * with plain 1F1B or up to job.max_virtual chunks per device (else
 * job.virtual_stages), has a step (pl_job_price, without overlap) below
 * least[0] * pl_job_step_scale(&p->job); least[1] and least[2] are what
 * any plan holds at the least over its stages. Why the bound holds, with
 * T = sum_s t_s and u_s the once-a-step share of stage s:
 * - every term it omits is >= 0: the edges' redistributions, the sends
 *   between stages, and each op's candidate above its least;
 * - plain 1F1B: step = T + (m - 1) max_s t_s + max_s u_s, and max_s t_s >=
 *   T / pp, max_s u_s >= (sum_s u_s) / pp, so step >= T (m + pp - 1) / pp +
 *   (sum u) / pp, which is the node times' sum (per micro-batch plus
 *   u / (m + pp - 1)) times (m + pp - 1) / pp, the step scale;
 * - v chunks (pl_job_combine): step = m max t_s + (T - max t_s) / v + max
 *   u_s grows with max t_s >= T / pp, so step >= T (m + (pp - 1) / v) / pp
 *   + (sum u) / pp, and the scale (m + (pp - 1) / v) / pp falls with v, so
 *   the most chunks allowed gives the least; its step share, (sum u) / (m +
 *   pp - 1) times that scale, is at most (sum u) / pp.
 * The whole-job search bounds each point with it before planning the point.
 * Returns 0, or -1 out of memory. */
int pl_job_least(pl_problem *p, double least[3]);

/* Stage boundaries (Alpa's inter-operator DP). Segment j costs t[j] per
 * micro-batch, holds state[j] bytes and act[j] bytes of one micro-batch's
 * activations, and a stage starting at segment j > 0 pays p2p[j][0] (its
 * predecessor in the same node) or p2p[j][1] (another node) to receive. Stage
 * s holds min(m, pp - s) micro-batches in flight. Minimizes
 * sum_s t_s + (m - 1) max_s t_s with every stage within mem_limit (0: none);
 * first[s] receives the first segment of stage s (first[pp] = K). Returns the
 * value, or -1 when no split fits; *proven = 0 if its scan stopped early. */
typedef struct pl_segcost {
	double t, state, act, p2p[2];
} pl_segcost;
double pl_pipeline_partition(const pl_segcost *seg, int K, int64_t pp, int64_t m, double mem_limit,
                             int64_t stage_devices, int64_t devices_per_node, int *first,
                             int *proven);

#endif
