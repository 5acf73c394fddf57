/* The step of a whole training job: pipeline stages run 1F1B over m
 * micro-batches, each stage a mesh of D/pp devices with its own per-op plan.
 *
 *   step = sum_s t_s + (m - 1) max_s t_s + max_s u_s
 *
 * (pl_job_combine has the interleaved schedule's form.)
 * t_s: one micro-batch's forward and backward on stage s (kernels, the ops'
 * collectives, redistributions, and the sends that bring its input from
 * stage s-1 and return the gradient); u_s: the once-a-step gradient sync and
 * optimizer of its params. Memory of stage s: its state (by ZeRO level) plus
 * min(m, pp - s) micro-batches of kept activations (1F1B's in-flight count).
 * With pp = 1 this is pl_cost_plan's step. */
#ifndef PL_PIPELINE_H
#define PL_PIPELINE_H

#include "costmodel/cost.h"

typedef struct pl_stagecost {
	double mb_compute_s, mb_comm_s;     /* one micro-batch */
	double step_compute_s, step_comm_s; /* once a step */
	double mem_bytes;                   /* per device */
	double p2p_s;                       /* sends into this stage (in mb_comm_s) */
	double mb_bwd_s;                    /* of mb_compute_s: the backward */
	double step_reduce_s;               /* of step_comm_s: the gradient reduction */
	double grad_bytes;                  /* the gradients it reduces */
	/* of mb_comm_s, ZeRO-3's parameter gathers of a micro-batch; of them the
	 * forward's first (its first op's with params) and the backward's first
	 * (its last op's), which nothing runs beside */
	double mb_gather_s, gather_first_s, gather_last_s;
	/* of step_comm_s, ZeRO-1/2's all-gather of the updated weights; of it
	 * the first op's, which the next forward needs before anything runs */
	double step_gather_s, step_gather_first_s;
} pl_stagecost;

typedef struct pl_jobcost {
	double step_s;
	/* the bottleneck stage's own work, and its idle time: they add up to step */
	double compute_s, comm_s, bubble_s;
	double optimizer_s; /* of compute_s: the bottleneck stage's optimizer update */
	double mem_bytes;   /* the largest stage's, per device */
	int bottleneck;
} pl_jobcost;

/* Time of the sends across the boundary into a stage: an activation of
 * `bytes` per rank forward and, if it needs one, its gradient back; inter-node
 * unless both stages sit in one node (stages of `stage_devices` consecutive
 * ranks, `devices_per_node` to a node of the whole cluster). */
double pl_p2p_time(const pl_cluster *c, double bytes, int requires_grad, int64_t stage_devices,
                   int64_t devices_per_node, int to_stage);
/* The link class between stage to_stage - 1 and to_stage, and the send time
 * on a given link class. */
int pl_stage_link(int64_t stage_devices, int64_t devices_per_node, int to_stage);
double pl_p2p_link_time(const pl_cluster *c, double bytes, int requires_grad, int link);

/* Prices a plan: splits per op on the problem's mesh (one stage's devices),
 * stage[op] non-decreasing from 0 to the job's stages - 1, whole-cluster
 * devices_per_node for the sends. per_stage (job.stages entries) may be NULL.
 * Returns 0, or -1 if stage[] is not a valid assignment. */
int pl_job_price(const pl_problem *p, int64_t *const *splits, const int *stage,
                 int64_t devices_per_node, pl_stagecost *per_stage, pl_jobcost *out);
/* The same plan under each schedule of v0..v1 chunks per device (the
 * problem's own virtual_stages ignored): the fastest whose largest stage fits
 * in limit (0: any), the first of equals, into out and per_stage. Returns
 * its chunks per device, 0 when none fits, -1 when stage[] is not valid or
 * out of memory. *cramped (may be NULL): 1 where a schedule faster than the
 * one returned was over the limit (0 otherwise). What does not depend on the
 * schedule is priced once. */
int64_t pl_job_price_schedules(const pl_problem *p, int64_t *const *splits, const int *stage,
                               int64_t devices_per_node, int64_t v0, int64_t v1, double limit,
                               pl_stagecost *per_stage, pl_jobcost *out, int *cramped);

/* Stage s's communication in a step (the bottleneck stage's is the plan's
 * comm_s; a plan without stages: stage NULL, s 0) by collective and link
 * class: the ops' own collectives, gradient sync and ZeRO gathers, the
 * redistributions and sends into it, and the part of the gradient reduction
 * the backward hides. pl_commbook_total(out) is pl_job_combine's comm_s of
 * that stage. */
void pl_job_comm(const pl_problem *p, int64_t *const *splits, const int *stage,
                 int64_t devices_per_node, int s, pl_commbook *out);

/* Micro-batches of its activations stage s of pp holds at once: under 1F1B
 * min(m, pp - s); interleaved over v chunks per device, Megatron's warm-up
 * of (pp - s - 1) * 2 + (v - 1) * pp chunk micro-batches plus the one in
 * progress, each a v-th of the stage's (pp + (pp - 1) / v on the first
 * stage, Korthikanti et al. 2022 §4.2.3), at most m. */
static inline double pl_job_inflight(int64_t stages, int64_t micro_batches, int64_t v, int64_t s)
{
	double n = v > 1 ? (double)((stages - s - 1) * 2 + (v - 1) * stages + 1) / (double)v
	                 : (double)(stages - s);
	return n < (double)micro_batches ? n : (double)micro_batches;
}

/* One stage's mesh of k consecutive ranks: whole nodes of c, or a part of one
 * node. Returns -1 when k does not tile the nodes. */
int pl_stage_mesh(const pl_cluster *c, int64_t k, pl_cluster *out);

/* Adds op o's share (its kernels, collectives, sync, optimizer and state; not
 * its edges) to acc, and its kept activations of one micro-batch to *act. */
void pl_job_op_cost(const pl_problem *p, int o, const int64_t *split, pl_stagecost *acc,
                    double *act);

/* The most bytes of gradients and scratch one device of stage s (stage
 * NULL: one stage) holds at once beside its state and its act bytes of
 * in-flight activations: at most, a micro-batch's backward as an autograd
 * engine runs it (reverse op order):
 * every activation's gradient from its first contribution until its
 * producer's backward; during op o's backward, the gradients of its inputs
 * (a first contribution in the tensor's own layout is written in place; a
 * later one, or one in another layout, is a temporary, and one in another
 * layout is redistributed into a buffer of the tensor's layout); the
 * gradients the next stage sends back, from the backward's start; ZeRO 2
 * and 3's whole gradients until reduce-scattered, at most DeepSpeed's
 * reduce_bucket_size of them, and ZeRO 3's gathered weights, at most its
 * stage3_max_live_parameters; and, for ZeRO 0 with data parallel, one
 * gradient bucket at the step's end (PL_GRAD_BUCKET_BYTES), when the
 * activations are given back (what it needs beyond them counts). Returns -1
 * out of memory. */
double pl_job_transient(const pl_problem *p, int64_t *const *splits, const int *stage, int s,
                        double act);
/* A floor under pl_job_transient of every plan of one stage p can make:
 * the same sweep with each tensor at its producer's smallest output piece,
 * each param's gradient at its reader's smallest and each op giving back
 * the most activations any of its candidates keeps (which tensors are live
 * where does not depend on the plan). A plan fits in M only if its tensors
 * fit in M less this, so a search of their sum under that limit is a
 * relaxation of the search with the transient bytes. -1 out of memory. */
double pl_job_transient_floor(const pl_problem *p);
/* DeepSpeed's defaults (docs: DeepSpeed configuration JSON): elements of a
 * reduce-scatter bucket, and the most gathered params live at once */
#define PL_ZERO_REDUCE_BUCKET 5e8
#define PL_ZERO3_MAX_LIVE     1e9

/* The memory of one device of the peak stage (the stage pl_job_price's
 * mem_bytes comes from) by what it holds. The categories add up to that
 * mem_bytes; `reserved` (the runtime's) is left to the caller. */
typedef struct pl_membreak {
	double weights, gradients, optimizer_states, activations, transient, reserved;
	int stage;
} pl_membreak;
/* per_stage (NULL, or the job's stages entries) receives every stage's */
int pl_job_memory(const pl_problem *p, int64_t *const *splits, const int *stage, pl_membreak *out,
                  pl_membreak *per_stage);

/* step from per-stage costs (the formula above); with v > 1 chunks per device
 * (interleaved 1F1B, Narayanan et al. 2021 §2.2.2) every micro-batch crosses
 * v times as many stage boundaries and the fill and drain shrink v times:
 *   step = m max_s t_s + (sum_s t_s - max_s t_s) / v + max_s u_s,
 * t_s with v times its sends */
void pl_job_combine(const pl_stagecost *st, int64_t stages, int64_t micro_batches, int64_t v,
                    int overlap, pl_jobcost *out);
/* The part of a stage's gradient reduction left exposed: all of it, or with
 * overlap what the last micro-batch's backward cannot hide, and never less
 * than its last bucket (PL_GRAD_BUCKET_BYTES of grad_bytes). */
double pl_job_exposed_reduce(const pl_stagecost *s, int overlap);
/* What a stage's once-a-step communication (step_comm_s) and one
 * micro-batch's (mb_comm_s) leave exposed under overlap: the gradient
 * reduction as above; with PL_OVERLAP_PARAM, ZeRO-1/2's all-gather of the
 * updated weights beside the next step's first forward and ZeRO-3's
 * gathers beside the forward and the backward (pl_overlap_exposed at
 * PL_OVERLAP_SLOWDOWN, each pass's first op's gather exposed). */
double pl_job_exposed_step(const pl_stagecost *s, int overlap);
double pl_job_exposed_mb(const pl_stagecost *s, int overlap);

#endif
