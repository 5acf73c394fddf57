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

/* The plan summary of a checkpoint, typed: what report's summary (and any
 * other reader of the summary) needs, read once by pl_ckpt_view_read rather
 * than by string keys at each use (keys matched case-sensitively, as the
 * format spells them). Strings point into the parsed checkpoint
 * (valid while it lives). A field the checkpoint lacks, or holds out of its
 * range, takes the default given; has_* say which optional blocks exist. */
typedef struct pl_ckpt_view {
	/* cost: seconds of a step and its parts, peak bytes per device */
	double step_s, compute_s, comm_s, optimizer_s, bubble_s; /* NAN when absent */
	double peak_mem_bytes, model_flops;                      /* NAN when absent */
	double mfu, model_tflops, tokens_per_s;                  /* NAN when absent */
	double samples_per_s, global_batch, tokens_per_step;     /* NAN when absent */
	double band_lo, band_hi; /* cost.step_band_seconds (NAN when absent) */
	const char *band_basis;  /* NULL when absent */
	/* cluster */
	const char *cluster_name;             /* "?" */
	int devices, nodes, devices_per_node; /* 0, 1, 0 when absent */
	/* pipeline (has_pipeline: the block exists) */
	int has_pipeline;
	int stages, micro_batches; /* 1 when absent */
	const char *schedule;      /* "1F1B" */
	int zero;                  /* optimizer_shard 0..3, else 0 */
	const char *recompute;     /* "none" */
	/* search */
	const char *mode; /* "?" */
	int optimal;
	const char *why; /* NULL when absent */
} pl_ckpt_view;

/* Fills v from a parsed checkpoint (never fails: pl_ckpt_check is what
 * rejects a malformed one, naming the file and field). */
void pl_ckpt_view_read(const cJSON *root, pl_ckpt_view *v);

#endif
