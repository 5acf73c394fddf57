/* Strategy checkpoints (docs/formats.md, "Strategy checkpoint"): MindSpore's field names, written
 * deterministically and atomically; read back into split counts per op. */
#ifndef PL_CHECKPOINT_H
#define PL_CHECKPOINT_H

#include <cjson/cJSON.h>

#include "costmodel/pipeline.h"
#include "graph/graph.h"

typedef struct pl_ckpt_info {
	const pl_cluster *cl; /* the cluster priced on (utilisation) */
	const char *cluster_name;
	int64_t devices, nodes, devices_per_node;
	const cJSON *cluster; /* the planner.cluster/1 description it was priced on (copied) */
	const char *mode;
	double seconds;
	int optimal;
	const char *why;
	int repeated_layers;
	double memory_limit;
	/* totals and per-op numbers, priced by the cost model */
	double step_s, compute_s, comm_s, mem_bytes;
	double optimizer_s; /* of compute_s */
	const double *op_compute_s, *op_comm_s, *op_mem_bytes;
	/* a whole-job plan (stages >= 1): the plan's layouts are on a mesh of
	 * mesh_devices = devices / stages; per-op stage and recompute flags */
	int64_t stages, micro_batches, mesh_devices;
	int64_t virtual_stages; /* model chunks per device (interleaved 1F1B); 0, 1: plain */
	int overlap;            /* PL_OVERLAP_* bits the plan is priced with */
	int seq_parallel;       /* the search's sequence parallelism (PL_SEQ_PAR_*) */
	int zero;
	const int *op_stage;
	const uint8_t *op_recompute;
	double bubble_s;
	const double *stage_s; /* per stage: one micro-batch's time */
	/* the peak device's memory by category, PL_CKPT_MEM entries in the order
	 * of pl_ckpt_mem_names (NULL: none written) */
	const double *mem_breakdown;
	int mem_stage;
	const pl_membreak *stage_mem; /* a whole-job plan's every stage (NULL: none) */
	const pl_commbook *comm;      /* the bottleneck stage's communication (NULL: none) */
	/* a fused attention priced beyond its kernel's measurements
	 * (pl_cost_attention_beyond; 0: none) */
	double attn_seq, attn_longest;
} pl_ckpt_info;

/* What a step does per device, beside its time (cost.model_flops_per_step,
 * mfu, model_tflops_per_device, samples_per_second and, for a model whose
 * input holds token ids, tokens_per_second_per_device): the model's FLOPs
 * are its matrix products' forward and backward (attention's under a causal
 * mask halved, as FlashAttention counts them; recompute not counted), at
 * full size, times the micro-batches the graph is one of; MFU divides them by
 * the step, the devices and the peak FLOP/s of the dtype of the model's
 * largest parameter. Adds the keys to cost (nothing when step_s is not
 * positive). */
void pl_ckpt_add_utilisation(cJSON *cost, const pl_graph *g, const pl_cluster *c, double step_s);

#define PL_CKPT_MEM 6
extern const char *const pl_ckpt_mem_names[PL_CKPT_MEM];

/* cost.communication_by_collective: one entry per collective and link class
 * that runs (seconds of a step, bus bytes per device), and the local slices;
 * their seconds less cost.communication_hidden_seconds are
 * communication_seconds. Adds both to cost. */
void pl_ckpt_add_comm(cJSON *cost, const pl_commbook *bk);
/* cost.attention_beyond_measured, where seq > 0: the cluster's fused
 * attention kernel runs at seq tokens a sequence (local, per kernel call),
 * beyond the longest (longest) its published measurements on the GPU cover,
 * and is priced at that length's rate (pl_cost_attention_beyond). */
void pl_ckpt_add_attention_beyond(cJSON *cost, const pl_cluster *c, double seq, double longest);
/* pipeline.stage_memory_bytes: per stage, its device's weights, gradients,
 * optimizer states and activations */
cJSON *pl_ckpt_stage_memory(const pl_membreak *per, int64_t stages);

/* Builds the checkpoint object. Caller owns the result (cJSON_Delete). */
cJSON *pl_ckpt_build(const pl_graph *g, int64_t *const *splits, const pl_ckpt_info *info);

/* A strategy file MindSpore wrote for its own graph: no "format", and none of
 * its op names is one of g's (its ops are matched through their params'
 * layouts, by name, where --load or cost reads it) */
int pl_ckpt_is_mindspore(const pl_graph *g, const cJSON *root);

/* Reads parallel_strategy_item from a parsed checkpoint into splits[op]
 * (nloops each, caller-allocated). Every op of the model must appear unless
 * partial is set; then missing ops get has[op] = 0. where names the source in
 * messages. */
/* A checkpoint read for what it says (explain, report, diff) rather than
 * priced against a model: every number it holds is one it can mean. Per op,
 * parallel_strategy lists of integer slice counts from 1 to PL_MAX_DEVICES,
 * stage a non-negative integer, the op's seconds and bytes finite and not
 * negative; cluster.devices, nodes and devices_per_node integers from 1 to
 * PL_MAX_DEVICES that agree with each other and with the description; every
 * cost number finite and not negative; pipeline counts positive integers.
 * PL_EINVAL naming the field and what was expected. */
pl_status pl_ckpt_check(const cJSON *root, const char *where, pl_err *err);
/* The cluster block's part of pl_ckpt_check (also what cost and run read). */
pl_status pl_ckpt_check_cluster(const cJSON *root, const char *where, pl_err *err);

pl_status pl_ckpt_parse_splits(const pl_graph *g, const cJSON *root, const char *where, int partial,
                               int64_t **splits, int *has, pl_err *err);
/* The whole-job fields of a checkpoint: pipeline.stages and micro_batches
 * (1 when absent), optimizer_shard (0), and per op its stage (0) and
 * recompute flag (0). stage and recompute have g->nops entries. Returns
 * PL_EINVAL naming the field when one is malformed; *is_job is set when any
 * of them is present. */
pl_status pl_ckpt_parse_job(const pl_graph *g, const cJSON *root, const char *where,
                            int64_t *stages, int64_t *micro_batches, int64_t *virtual_stages,
                            int *overlap, int *zero, int *stage, uint8_t *recompute, int *is_job,
                            pl_err *err);

/* A checkpoint read back, typed: what its readers (explain, search's and
 * cost's printers, report, the API) need, read once by pl_ckpt_view_read /
 * pl_ckpt_doc_read rather than by string keys at each use (keys matched
 * case-sensitively, as the format spells them). Strings point into the
 * parsed checkpoint (valid while it lives). A number the checkpoint lacks (or
 * holds as another type) reads as NAN and a string as NULL unless a default
 * is given; pl_ckpt_or applies a reader's own default. has_* say which
 * optional blocks exist. tests/planner/test_plan.c owns the schema: every key
 * the writer emits is read here or listed with the reader that reads it. */
static inline double pl_ckpt_or(double v, double dflt)
{
	return v == v ? v : dflt; /* NAN: absent */
}

/* The plan summary (fixed size; no allocation). */
typedef struct pl_ckpt_view {
	/* model */
	const char *model_name, *model_sha256; /* NULL when absent */
	/* cost: seconds of a step and its parts, peak bytes per device */
	double step_s, compute_s, comm_s, optimizer_s, bubble_s; /* NAN when absent */
	double peak_mem_bytes, model_flops;                      /* NAN when absent */
	double mfu, model_tflops, tokens_per_s;                  /* NAN when absent */
	double samples_per_s, global_batch, tokens_per_step;     /* NAN when absent */
	double band_lo, band_hi; /* cost.step_band_seconds (NAN when absent) */
	const char *band_basis;  /* NULL when absent */
	double comm_hidden_s;    /* cost.communication_hidden_seconds (NAN) */
	/* cost.attention_beyond_measured: kernel (NULL when absent), sequence
	 * and longest_measured (NAN when absent) */
	const char *attn_kernel;
	double attn_seq, attn_longest;
	/* cost.tflops_above_measured: gpu_family and gemm (NULL when absent),
	 * most_measured (NAN when absent) */
	const char *seen_family, *seen_gemm;
	double seen_tflops;
	double peak_mem_stage;   /* cost.peak_memory_stage (NAN) */
	/* cluster */
	const char *cluster_name;             /* NULL when absent */
	int devices, nodes, devices_per_node; /* 0, 1, 0 when absent */
	const cJSON *cluster_desc; /* cluster.description (planner.cluster/1, its own
	                            * reader: topology's), NULL when absent */
	/* cluster.description.device.cp_exchange: how context parallelism
	 * exchanges keys and values (NULL when absent: a ring) */
	const char *cp_exchange;
	/* pipeline (has_pipeline: the block exists; pp_is_object: it is an object) */
	int has_pipeline, pp_is_object;
	int stages, micro_batches; /* 1 when absent */
	const char *schedule;      /* "1F1B" */
	/* the pipeline block as written: NAN when absent */
	double pp_stages, pp_micro_batches, pp_virtual_stages, pp_stage_devices;
	int sequence_parallel; /* pipeline.sequence_parallel: 1 true, 0 false, -1 absent */
	int overlap_grad_reduce, tp_comm_overlap, overlap_param_gather; /* true: 1 */
	int zero;                  /* optimizer_shard 0..3, else 0 */
	double optimizer_shard;    /* as written (NAN when absent) */
	const char *recompute;     /* NULL when absent */
	/* search */
	const char *mode; /* NULL when absent */
	int optimal;
	const char *why;                 /* NULL when absent */
	const char *space, *space_widen; /* NULL when absent */
	const char *framework;           /* NULL when absent */
	double repeated_layers;          /* NAN when absent */
	double search_seconds, memory_limit; /* search.seconds, memory_limit_bytes (NAN) */
	double per_op_step_s;            /* search.per_op_step_seconds (NAN) */
	/* groups_param: the weight the groups are read off (NULL when absent) */
	const char *groups_param;
	int has_groups_exceptions; /* groups_exceptions: layers' weights cut otherwise */
} pl_ckpt_view;

/* Whether v says a fused attention is priced past its kernel's measurements
 * (cost.attention_beyond_measured, whole and consistent): the note the
 * summary and the report print. */
int pl_ckpt_attention_beyond(const pl_ckpt_view *v);
/* Whether v says its model TFLOP/s per device are more than any published
 * run of the validation set measured on that GPU family and GEMM precision
 * (cost.tflops_above_measured, whole and consistent with
 * model_tflops_per_device) */
int pl_ckpt_above_measured(const pl_ckpt_view *v);
/* What the step band does not cover, the summary's and the report's notes:
 * caveat k (0: pl_ckpt_above_measured, 1: pl_ckpt_attention_beyond) as a
 * sentence into buf of n bytes, 1; 0 (buf untouched) where it does not apply */
#define PL_CKPT_CAVEATS 2
int pl_ckpt_caveat(const pl_ckpt_view *v, int k, char *buf, size_t n);

/* Fills v from a parsed checkpoint (never fails: pl_ckpt_check is what
 * rejects a malformed one, naming the file and field). */
void pl_ckpt_view_read(const cJSON *root, pl_ckpt_view *v);

/* Bytes of one category of memory (pl_ckpt_mem_names), as the checkpoint
 * lists them (NAN: not a number). */
typedef struct pl_ckpt_amount {
	const char *name;
	double bytes;
} pl_ckpt_amount;

/* A device's memory by category: the entries in the checkpoint's order. */
typedef struct pl_ckpt_memory {
	int n;
	pl_ckpt_amount *e;
} pl_ckpt_memory;

/* The bytes of category name in m (NAN when it has none) */
double pl_ckpt_memory_of(const pl_ckpt_memory *m, const char *name);

/* One op of parallel_strategy_item (in the checkpoint's order). */
typedef struct pl_ckpt_op {
	const char *name;       /* its key */
	const char *type, *part; /* NULL when absent */
	double stage, recompute; /* NAN when absent */
	/* parallel_strategy: per input (at most PL_MAX_OP_INPUTS) its slice
	 * counts (at most PL_MAX_RANK; cJSON's valueint); has_strategy: the
	 * op has parallel_strategy */
	int has_strategy, ninputs;
	int rank[PL_MAX_OP_INPUTS];
	int split[PL_MAX_OP_INPUTS][PL_MAX_RANK];
	double compute_s, comm_s, mem_bytes, flops_fwd, flops_bwd; /* NAN when absent */
} pl_ckpt_op;

/* One kind of rank group (groups.KIND, in the checkpoint's order). */
typedef struct pl_ckpt_groups {
	const char *kind;   /* dp, tp, pp, ep, sp, cp */
	int is_array;       /* groups.KIND is an array */
	int n;              /* its groups */
	int first_is_array; /* its first group is an array */
	int *start;         /* group k's ranks: ranks[start[k] .. start[k + 1]) */
	double *ranks;      /* NAN for a member that is not a number */
} pl_ckpt_groups;

/* One part of the model (parts.NAME): its ops and figures, NAN when absent. */
typedef struct pl_ckpt_part {
	const char *name;
	double ops, weight_cut, batch_cut, sequence_cut, norms_sequence_cut;
	double experts_cut, replicated;
	int has_experts_cut;            /* experts_cut exists (of any type) */
	double stage_first, stage_last; /* stages [first, last] */
} pl_ckpt_part;

/* cost.communication_by_collective: one entry (seconds, bus_bytes NAN when absent). */
typedef struct pl_ckpt_comm {
	const char *collective, *link; /* NULL when absent */
	double seconds, bus_bytes;
} pl_ckpt_comm;

/* search.framework_defaults: option -> value (value NULL: not a string). */
typedef struct pl_ckpt_setting {
	const char *key, *value;
} pl_ckpt_setting;

/* search.conflicts (propagate): where fronts met, and what it costs. */
typedef struct pl_ckpt_conflict {
	const char *from, *to, *tensor; /* NULL when absent */
	double seconds;
} pl_ckpt_conflict;

/* search.alternatives (a top-K job search's points): NAN / NULL when absent. */
typedef struct pl_ckpt_alt {
	double stages, micro_batches, virtual_stages, zero, step_s, mem_bytes;
	const char *recompute;
} pl_ckpt_alt;

/* The whole checkpoint, typed: the summary and its lists (allocated). */
typedef struct pl_ckpt_doc {
	pl_ckpt_view v;
	int has_items; /* parallel_strategy_item exists */
	int nops;
	pl_ckpt_op *ops;
	int has_groups, ngroups;
	pl_ckpt_groups *groups;
	int has_parts; /* parts is an object (nparts: its members, whatever it is) */
	int nparts;
	pl_ckpt_part *parts;
	int has_comm; /* cost.communication_by_collective is an array */
	int ncomm;
	pl_ckpt_comm *comm;
	int has_mem_breakdown;       /* cost.memory_breakdown_bytes exists */
	pl_ckpt_memory mem_breakdown; /* the peak device's */
	/* pipeline.stage_memory_bytes (has_stage_mem: it is an array; nstage_mem
	 * its entries, whatever it is): per stage its device's weights,
	 * gradients, optimizer states, activations, transient */
	int has_stage_mem, nstage_mem;
	pl_ckpt_memory *stage_mem;
	int nstage_s;
	double *stage_s; /* pipeline.stage_microbatch_seconds (NAN: not a number) */
	int nsettings;
	pl_ckpt_setting *settings; /* search.framework_defaults */
	int nconflicts;
	pl_ckpt_conflict *conflicts;
	int nalts;
	pl_ckpt_alt *alts;
} pl_ckpt_doc;

/* Reads the whole checkpoint into d (PL_ENOMEM only; pl_ckpt_check is what
 * rejects a malformed one). pl_ckpt_doc_free frees it (also after a failure). */
pl_status pl_ckpt_doc_read(const cJSON *root, pl_ckpt_doc *d, pl_err *err);
void pl_ckpt_doc_free(pl_ckpt_doc *d);
/* A kind's groups (NULL when the checkpoint has none of it). */
const pl_ckpt_groups *pl_ckpt_doc_groups(const pl_ckpt_doc *d, const char *kind);
/* The number of ranks in group k of gs (0 when there is no such group). */
int pl_ckpt_group_size(const pl_ckpt_groups *gs, int k);

#endif
