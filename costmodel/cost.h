/* Pricing: what one op costs under one strategy (compute, its own
 * collectives, gradient sync and optimizer for the params it owns, memory),
 * what one edge costs between a producer and a consumer strategy (forward
 * redistribution + backward redistribution of the gradient), and a whole
 * plan. The step time is the sum of node and edge times: forward, backward,
 * gradient synchronization and the optimizer, without overlap. */
#ifndef PL_COST_H
#define PL_COST_H

#include "costmodel/cluster.h"
#include "graph/graph.h"
#include "graph/layout.h"
#include "graph/roles.h"

typedef struct pl_nodecost {
	double compute_s; /* forward + backward kernels + optimizer */
	double comm_s;    /* the op's own collectives + gradient all-reduce */
	double mem_bytes; /* params, grads, optimizer state, kept activations */
} pl_nodecost;

/* The whole-job settings a problem is priced under. The problem's
 * graph is one micro-batch; its mesh is one pipeline stage's devices. */
/* Activation recomputation of a whole-job plan, as its checkpoint's
 * "recompute" names it. Per op the plan holds a flag (PL_RC_*): 0 keeps what
 * its backward reads, 1 re-runs its forward in the backward and keeps
 * nothing, 2 re-runs it and keeps its output (a recomputed layer's output,
 * the next layer's input), 3 runs once inside a recomputed layer and keeps
 * its output and what its kernel saved (an op a selective checkpoint policy
 * saves). full: every repeated layer of each run, the last too, as Megatron
 * checkpoints every layer of every stage (flags 1 and 2); selective: each
 * attention core (flags 1 only; Korthikanti et al. 2022, section 5);
 * selective-op: torchtitan's per-op selective checkpointing, every repeated
 * layer recomputed but for the attention cores and every other weight
 * product, which are saved (flags 1, 2 and 3; torchtitan's _save_list and
 * _custom_policy). The whole-job search chooses among the first three
 * (PL_RECOMPUTE_SEARCHED); selective-op only when asked for. */
enum {
	PL_RECOMPUTE_NONE,
	PL_RECOMPUTE_FULL,
	PL_RECOMPUTE_SELECTIVE,
	PL_RECOMPUTE_SELECTIVE_OP,
	PL_RECOMPUTE_MODES
};
#define PL_RECOMPUTE_SEARCHED (PL_RECOMPUTE_SELECTIVE + 1)
enum { PL_RC_KEEP, PL_RC_RERUN, PL_RC_RERUN_OUT, PL_RC_SAVED, PL_RC_FLAGS };
/* Whether an op of flag f runs its forward again in the backward */
static inline int pl_rc_reruns(int f)
{
	return f == PL_RC_RERUN || f == PL_RC_RERUN_OUT;
}
/* "none", "full", "selective" or "selective-op" (NULL for anything else) */
const char *pl_recompute_name(int mode);
/* The mode of a name (-1: none of them) */
int pl_recompute_parse(const char *name);
/* The mode a plan's per-op flags (n of them, NULL: none) describe */
int pl_recompute_of_flags(const uint8_t *flags, int n);
/* Whether the model states some op recomputed (pl_op.recompute: a
 * framework's fused kernel recomputes it whatever the plan's mode) */
int pl_graph_recomputes(const pl_graph *g);
/* A plan's per-op flags (NULL: none) with the model's stated ones added
 * (an op the plan leaves at 0 takes its pl_op.recompute): g->nops flags,
 * the caller's to free; NULL out of memory. What the cost model and the
 * executor run. */
uint8_t *pl_recompute_with_model(const pl_graph *g, const uint8_t *flags);
/* The mode a plan's flags describe, the model's stated recomputes aside
 * (a plan that recomputes only those is "none") */
int pl_recompute_of_plan(const pl_graph *g, const uint8_t *flags);

#define PL_ZERO_LEVELS 4
/* The most model chunks per device (interleaved 1F1B) a job states (each
 * stage must also have as many clean segments: Megatron's recipes run up to
 * one layer a chunk, 20 on Llama-2 70B), and the most a search that chooses
 * the count tries. */
#define PL_JOB_MAX_VIRTUAL  128
#define PL_JOB_AUTO_VIRTUAL 8
typedef struct pl_job {
	int64_t micro_batches;  /* m >= 1 (0 reads as 1) */
	int64_t stages;         /* pp >= 1 (0 reads as 1) */
	int64_t virtual_stages; /* v: model chunks per device, interleaved 1F1B (0 reads as 1) */
	/* the most chunks per device a plan of the job may be scheduled with (a
	 * whole-job search's point that chooses v; 0 reads as virtual_stages):
	 * what pl_job_step_scale's lower bound allows for */
	int64_t max_virtual;
	int zero; /* optimizer sharding: 0 off, 1 states, 2 + grads, 3 + params */
	/* per op, or NULL: 1 drops its activations and runs its forward again in the
	 * backward; 2 the same but keeps its first output (a layer's checkpoint) */
	const uint8_t *recompute;
	/* fixed degrees of one stage's mesh (0: free); candidates keep to them
	 * (pl_split_keeps_degrees) */
	pl_degrees degrees;
	/* bits: PL_OVERLAP_GRAD, the once-a-step gradient reduction overlaps the
	 * last micro-batch's backward in buckets (PyTorch DDP, Megatron's
	 * --overlap-grad-reduce); PL_OVERLAP_TP, a linear layer's activation
	 * redistributions overlap its GEMMs (Transformer Engine's userbuffers,
	 * Megatron's --tp-comm-overlap, torchtitan's async TP); PL_OVERLAP_PARAM,
	 * the parameter all-gathers run ahead of use beside the compute (ZeRO-3's
	 * per-layer gathers prefetched: FSDP, DeepSpeed's overlap_comm; ZeRO-1/2's
	 * updated weights gathered during the next forward: Megatron's
	 * --overlap-param-gather) */
	int overlap;
	/* the most devices one op's model-parallel cut spans (pl_problem's
	 * max_model): a count > 0, PL_MAX_TP_NODE (0, the default) one node's
	 * when the mesh spans nodes (or degrees.tp if larger), PL_MAX_TP_ANY no
	 * limit. The user's --max-tp / max_tensor_parallel says "any" with 0:
	 * pl_max_tp_of_user converts, once, at the boundary */
	int64_t max_tp;
	/* with degrees free, an op's cuts over fewer than all devices (replicated
	 * over the rest) beside those that fill the mesh: PL_REPLICAS_AUTO (0)
	 * up to PL_REPLICAS_AUTO_DEVICES, PL_REPLICAS_ALL, PL_REPLICAS_NONE */
	int replicas;
} pl_job;

enum { PL_REPLICAS_AUTO = 0, PL_REPLICAS_ALL = 1, PL_REPLICAS_NONE = -1 };

/* pl_job.max_tp's two sentinels (a count > 0 is a limit): one node's devices
 * where the mesh spans nodes (the zero of an initialised pl_job), and none.
 * pl_problem.max_model and pl_job_opts.max_tp use the same: every "no limit"
 * inside the planner is PL_MAX_TP_ANY, never 0. */
enum { PL_MAX_TP_NODE = 0, PL_MAX_TP_ANY = -1 };

/* The user's tensor-parallel limit (--max-tp, the API's max_tensor_parallel:
 * 0 any, else a count) as pl_job.max_tp. */
static inline int64_t pl_max_tp_of_user(long long v)
{
	return v > 0 ? (int64_t)v : PL_MAX_TP_ANY;
}
/* auto's limit on the devices of the cluster: on larger ones the candidates
 * that replicate multiply the search's tables (llama.onnx on 16 devices:
 * dp 0.4 -> 11 s, on 32: 1.4 -> 144 s; docs/architecture.md, "Candidates")
 * and only cuts of all devices are offered */
#define PL_REPLICAS_AUTO_DEVICES 8

enum { PL_OVERLAP_GRAD = 1, PL_OVERLAP_TP = 2, PL_OVERLAP_PARAM = 4 };

/* The compute's slowdown while a collective runs beside it (NCCL's kernels
 * take SMs and memory bandwidth): 18.9 %, the mean that Lee et al. 2025
 * ("Characterizing Compute-Communication Overlap in GPU-Accelerated
 * Distributed Deep Learning", arXiv:2507.03114) measured over GPT and LLaMA
 * training on A100, H100, MI250 and MI210 (docs/cost-model.md, "Parameter
 * all-gathers overlapped with the compute"). */
#define PL_OVERLAP_SLOWDOWN 0.189
/* Of c seconds of a collective run beside `hide` seconds of compute, what
 * the step still waits for: `first` (its part nothing runs beside), the
 * rest's excess over the compute, and at least the rest's slowdown of that
 * compute at `slow` (the compute takes 1 + slow times as long while the
 * collective runs):
 *   first + max(rest - hide, rest * slow / (1 + slow)),  rest = c - first */
double pl_overlap_exposed(double c, double first, double hide, double slow);

/* The gradient bucket of an overlapped reduction: PyTorch DDP's default
 * bucket_cap_mb of 25 MiB. The last bucket cannot overlap anything. */
#define PL_GRAD_BUCKET_BYTES (25.0 * 1048576)

/* One op under one strategy, before the job folds it: per micro-batch parts,
 * once-a-step parts by ZeRO level, and memory. */
typedef struct pl_nodeparts {
	double fwd_s, bwd_s; /* kernels of one micro-batch */
	double coll_s;       /* its own collectives, one micro-batch */
	double coll_fwd_s;   /* the forward ones (a recompute runs them again) */
	double gather_s;     /* ZeRO-3: all-gather of its params, forward and backward */
	double reduce_s;     /* ZeRO-2/3: every micro-batch's gradients reduce-scattered
	                      * into the partitions (DeepSpeed stage_1_and_2.py, stage3.py) */
	/* once a step: gradient all-reduce (0); reduce-scatter + all-gather of the
	 * updated params (1); that all-gather (2) */
	double sync_s[PL_ZERO_LEVELS];
	/* of sync_s, the gradient reduction (the all-reduce, ZeRO-1's
	 * reduce-scatter): what can overlap the last backward */
	double reduce_step_s[PL_ZERO_LEVELS];
	double grad_step_bytes;             /* the gradient it reduces, local bytes */
	double opt_s[PL_ZERO_LEVELS];       /* the optimizer update of its share */
	/* a micro-batch's weight gradients added into the kept ones by a kernel
	 * of their own (pl_cluster.grad_acc_autograd), by every micro-batch but
	 * the first, whose gradient autograd keeps as it is */
	double acc_s[PL_ZERO_LEVELS];
	double state_bytes[PL_ZERO_LEVELS]; /* params + grads + optimizer state */
	double weight_bytes[PL_ZERO_LEVELS], grad_bytes[PL_ZERO_LEVELS]; /* its parts */
	double act_bytes;                /* activations kept for the backward */
	double out_bytes;                /* its first output (what a checkpoint keeps) */
	double saved_bytes;              /* of act_bytes, what is not its outputs */
	double scratch_fwd, scratch_bwd; /* its kernels' workspace (pl_opwork) */
} pl_nodeparts;

/* An edge carries one tensor from the op that fixes its layout (its producer,
 * or for a param the first op that consumes it) to another consumer. */
typedef struct pl_edge {
	int src_op, src_slot, src_is_input;
	int dst_op, dst_slot;
	int tensor;
} pl_edge;

/* pl_problem.fp8's parts */
#define PL_FP8_SLOT   3
#define PL_FP8_SHARED 4

typedef struct pl_problem {
	const pl_graph *g;
	const pl_cluster *c;
	int64_t devices;
	/* the most devices the model loops (pl_loop_roles: weights' dimensions,
	 * hidden sizes, heads, vocabulary) of one op's candidate are cut over,
	 * or PL_MAX_TP_ANY. Tensor parallelism stays inside a node unless asked */
	int64_t max_model;
	/* 1: with degrees free, the candidates include cuts over fewer than all
	 * devices, replicated over the rest (pl_job.replicas); 0: only the cuts
	 * that fill the mesh, so "optimal" is over those */
	int replicas;
	int nops;
	int *nstrat;        /* candidates per op */
	int64_t **strat;    /* per op: nstrat x nloops split counts */
	pl_nodecost **node; /* lazily filled, see pl_problem_node */
	int nedges;
	pl_edge *edges;
	int **op_edges; /* per op: indices of incident edges */
	int *op_nedges;
	int *param_owner;  /* per tensor: owning op of a param, else -1 */
	double **edge_tab; /* lazily filled nstrat[src] x nstrat[dst] */
	/* ops of one class have the same candidates and costs: per op its class
	 * representative (the first such op); per edge the first edge between the
	 * same classes. Tables are computed for representatives and shared. */
	int *op_class;
	int *layout_class; /* per op: the op class, ignoring recompute (for edges) */
	int *edge_class;
	pl_job job;           /* micro_batches, stages >= 1; recompute owned (or NULL) */
	pl_nodeparts **parts; /* per op class, alongside node */
	uint8_t *roles;       /* with fixed degrees: pl_loop_roles (owned), else NULL */
	uint8_t *stream;      /* sequence parallelism off or auto: pl_stream_loops, else NULL */
	/* per tensor: 1 when some op keeps it for the backward (its producer counts
	 * it once, at the producer's layout; Megatron's sequence parallelism keeps
	 * the shard and gathers it again in the backward) */
	uint8_t *kept;
	uint8_t *saves_in; /* per op: the inputs its backward reads (bit per slot) */
	/* with FP8 GEMMs (pl_cluster.gemm_fp8), else NULL: per op, 1 + the slot
	 * of its weight when it is a linear layer run in FP8 (pl_cost_fp8_op;
	 * PL_FP8_SLOT of it), with PL_FP8_SHARED where an earlier such layer
	 * reads the same activation and casts it for both; per tensor, 1 when
	 * such an op keeps an FP8 copy of it for its backward (Transformer
	 * Engine saves its input quantized) */
	uint8_t *fp8, *kept_fp8;
	/* problems of the same graph, mesh and candidates whose edge tables this
	 * one borrows (pl_problem_share): a ring through them, or NULL; per edge,
	 * 1 where its table is a sibling's */
	struct pl_problem *share_next;
	uint8_t *edge_borrowed;
	/* search's pl_problem_runs, kept: its answer (runs_memo_n runs of
	 * search.h's pl_run) for at most runs_memo_max (0: not found yet); the
	 * runs follow from the graph, the recompute flags and kept, all fixed
	 * when the problem is made */
	void *runs_memo;
	int runs_memo_n, runs_memo_max;
	/* pl_problem_memo: prices off the candidate lists kept, or NULL */
	struct pl_cost_memo *memo;
} pl_problem;

/* Builds the problem: edges and candidate strategies (the annotation alone for
 * annotated ops). Caller frees with pl_problem_free. */
pl_status pl_problem_new(pl_problem **out, const pl_graph *g, const pl_cluster *c, pl_err *err);
void pl_problem_free(pl_problem *p);
/* The same under whole-job settings (the job's recompute array is copied). Node
 * costs are then per micro-batch: compute_s and comm_s hold one micro-batch's
 * share plus 1/(m + pp - 1) of the once-a-step parts, mem_bytes the state by
 * ZeRO level and one micro-batch's kept activations. Edge tables are per
 * micro-batch. pl_cost_plan scales back to a step (see there). */
pl_status pl_problem_new_job(pl_problem **out, const pl_graph *g, const pl_cluster *c,
                             const pl_job *job, pl_err *err);
/* Whether ZeRO level zero goes with pp pipeline stages: DeepSpeed's pipeline
 * engine takes ZeRO stage 1 at most (its partitioned gradients and
 * parameters do not go with gradient accumulation over a pipeline), and
 * Megatron's distributed optimizer is stage 1. torchtitan runs FSDP with
 * pipelines keeping a stage's weights gathered from its first forward to its
 * last backward and its gradients whole until the last (reshard_after_forward
 * off; PyTorch's pipeline schedule turns resharding and reduction off but for
 * the last backward): ZeRO 1's state and collectives (planner/export.c). */
#define PL_ZERO_PIPELINE_WHY                                                                       \
	"DeepSpeed's pipeline engine runs ZeRO stage 1 at most (Megatron's distributed "           \
	"optimizer is stage 1; torchtitan's FSDP under pipeline stages gathers a stage's weights " \
	"once a step and reduces its gradients once, which is ZeRO 1 here); use --zero 0 or 1 "    \
	"with pipeline stages"
int pl_zero_pipeline_ok(int zero, int64_t stages);
/* Whether split keeps to the problem's fixed degrees (always, without). */
int pl_problem_admits(const pl_problem *p, int op, const int64_t *split);
/* Whether the search may cut op's loop l (its spec's splittable, less the
 * classes of a loss the cluster runs gathered). */
int pl_problem_cuttable(const pl_problem *p, int op, int l);
/* Changes the ZeRO level of a problem and refolds the node tables already
 * computed (edge tables do not depend on it). */
void pl_problem_set_zero(pl_problem *p, int zero);
/* m + pp - 1: how many micro-batch times a balanced 1F1B step takes. */
double pl_job_span(const pl_job *job);
/* The factor from a problem's per-micro-batch table sums to a step
 * (pl_cost_plan applies it): (m + (pp - 1) / V) / pp, V the most chunks per
 * device the job may use (max_virtual, else virtual_stages). With one stage
 * that is m, the step; with pp stages a lower bound of any schedule's step:
 * interleaved 1F1B over v <= V chunks takes m max_s t_s + (sum_s t_s -
 * max_s t_s) / v, least when the stages are balanced (docs/cost-model.md). */
double pl_job_step_scale(const pl_job *job);
/* The parts of the op's candidate k (computed with the node table). */
const pl_nodeparts *pl_problem_parts(pl_problem *p, int op);

/* Node costs of every candidate of op (computed once, then cached). */
const pl_nodecost *pl_problem_node(pl_problem *p, int op);
/* The least memory per device any candidate of op needs (-1: out of memory).
 * Memory has no edge terms, so the least memory of a whole plan, or of any set
 * of ops, is the sum of these. */
double pl_problem_least_memory(pl_problem *p, int op);

/* The least memory per device any plan needs: the sum over ops of the above
 * (-1: out of memory). */
double pl_problem_least_plan_memory(pl_problem *p);

/* How many times a step runs edge e's forward redistribution per micro-batch:
 * 2 when its consumer is recomputed, or keeps the tensor for its backward
 * while its producer (not recomputed) holds it (the backward redistributes it
 * again, as Megatron's sequence parallelism gathers its kept shard again);
 * else 1. The executor runs it as often. */
int pl_problem_edge_fwd_times(const pl_problem *p, int e);
/* Whether op's input `slot` is redistributed again for its backward: the op
 * keeps it (saves_in, the op rule's bits), the tensor has a producer that
 * holds it at its own layout, and neither op is recomputed (recompute: per
 * op, or NULL); or the op is saved inside a recomputed layer (PL_RC_SAVED),
 * which keeps its output, not its inputs. A kept tensor is held once; the consumer's copy in the
 * layout it reads is made again, as Megatron's sequence parallelism all-gathers its kept shard
 * again in the backward. The executor runs it (executor/exec.c). */
int pl_regathers(const pl_graph *g, const uint8_t *recompute, int op, int slot, uint8_t saves_in);
/* Edge table (computed once, then cached): t[a * nstrat[dst] + b]. */
const double *pl_problem_edge(pl_problem *p, int e);
/* Puts b in a's ring of problems that price an edge once between them: a
 * table one prices, another with the same table (the same candidates at
 * both ends, the forward redistribution run as often: siblings that differ
 * in recompute or ZeRO) takes instead of pricing it. a and b must have the
 * same graph, mesh and candidates (-1 and nothing shared when they do not;
 * 0 shared, -1 out of memory). A ring's problems are freed together, after
 * any that outlives them is taken out with pl_problem_unshare. */
int pl_problem_share(pl_problem *a, pl_problem *b);
/* Takes p out of its ring, with its own copies of the tables it borrowed
 * (the others keep what they borrowed from p until they are freed). 0, or
 * -1 out of memory (p then keeps borrowing). */
int pl_problem_unshare(pl_problem *p);
/* Whether edge e's table is priced, by p or by a problem of its ring. */
int pl_problem_edge_priced(const pl_problem *p, int e);

/* Computes the edge tables of the given edges (and the node tables of their
 * ends) on `threads` threads (0: one per online CPU). Returns 0, or -1 when
 * out of memory. Later pl_problem_edge/pl_problem_node calls are lookups. */
int pl_problem_prepare(pl_problem *p, const int *edges, int nedges, int threads);
/* The same, stopping at deadline (pl_now() seconds; 0: none): 1 when it
 * passed (the tables it was pricing are not published; the problem stays
 * usable), 0, or -1 out of memory. */
int pl_problem_prepare_by(pl_problem *p, const int *edges, int nedges, int threads,
                          double deadline);

void pl_cost_node(const pl_problem *p, int op, const int64_t *split, pl_nodecost *out);
void pl_cost_node_parts(const pl_problem *p, int op, const int64_t *split, pl_nodeparts *out);
/* An op's share of a job step under the problem's job (ZeRO level, its
 * recompute flag): per micro-batch, once a step, and memory. */
typedef struct pl_jobshare {
	double mb_compute_s, mb_comm_s, step_compute_s, step_comm_s;
	double state_bytes, act_bytes; /* act: one micro-batch's */
	double mb_bwd_s;               /* of mb_compute_s: the backward (and a recompute) */
	double step_reduce_s;          /* of step_comm_s: the gradient reduction */
	double grad_bytes;             /* what it reduces once a step */
	double mb_gather_s;            /* of mb_comm_s: ZeRO-3's gathers, forward and backward */
	double step_gather_s; /* of step_comm_s: ZeRO-1/2's all-gather of updated weights */
} pl_jobshare;
void pl_parts_split(const pl_problem *p, int op, const pl_nodeparts *pt, pl_jobshare *out);
/* Folds parts into a node cost under the problem's job for op (its recompute
 * flag). */
void pl_cost_fold(const pl_problem *p, int op, const pl_nodeparts *pt, pl_nodecost *out);
double pl_cost_edge(const pl_problem *p, int e, const int64_t *src_split, const int64_t *dst_split);
/* With on, pl_cost_edge and pl_cost_node_parts (so pl_cost_node and
 * pl_cost_plan) keep what they work out from scratch (splits off the
 * candidate lists, or no table yet), per edge class and pair of splits and
 * per op class and split, and return it when asked again: the same numbers,
 * for a searcher that prices the same splits many times (rec); off drops
 * them. The memo is p's alone: a copy of p with another graph must set its
 * memo to NULL, and threads must not share p while it is on. Returns 0, -1
 * out of memory. */
int pl_problem_memo(pl_problem *p, int on);
double pl_cost_redist(const pl_cluster *c, const pl_redist *r);
/* Edge e's cost from its end layouts: src -> dst forward, and grad -> src
 * (partial sums cleared) backward when the tensor needs a gradient. */
double pl_cost_edge_layouts(const pl_problem *p, int e, const pl_layout *src, const pl_layout *dst,
                            const pl_layout *grad);
double pl_cost_prim(const pl_cluster *c, const pl_prim *p);
/* Seconds one device spends on `kernels` kernels doing gemm tensor-core
 * FLOPs that write outs output elements, and vec other FLOPs, over `bytes`
 * of memory traffic in dtype dt: the roofline of docs/cost-model.md
 * ("Compute"), which every op's forward and backward is priced with. */
double pl_cost_kernel_seconds(const pl_cluster *c, pl_dtype dt, double gemm, double outs,
                              double vec, double bytes, int kernels);
/* Seconds of one FP8 GEMM of `gemm` FLOPs over `bytes` of memory traffic:
 * the roofline on the FP8 curve (docs/cost-model.md, "FP8 GEMMs"), one
 * kernel. */
double pl_cost_fp8_gemm_seconds(const pl_cluster *c, double gemm, double bytes);
/* 1 + the slot of op o's weight when it is a linear layer run in FP8 under
 * the cluster (gemm_fp8): a PL_OPT_LINEAR product of a 16-bit activation
 * and a 16-bit param whose output does not reach the loss through views
 * (the output layer stays 16-bit, as Megatron-LM's and NeMo's is not a
 * Transformer Engine module); 0 otherwise. */
int pl_cost_fp8_op(const pl_cluster *c, const pl_graph *g, int o);
/* An op's forward and backward on one device from its op rule's work (the
 * roofline above; before any calibrated kernel scale). */
void pl_cost_work_seconds(const pl_cluster *c, pl_dtype dt, const pl_opwork *w, double *fwd,
                          double *bwd);

/* Layouts on the two ends of edge e (forward direction). */
void pl_edge_layouts(const pl_problem *p, int e, const int64_t *src_split, const int64_t *dst_split,
                     pl_layout *src, pl_layout *dst);

/* A plan's communication by NCCL collective and link class: the seconds a
 * step spends in each (hierarchical all-reduces booked as their three parts),
 * and the bus bytes one device moves in them (S x nccl-tests' bus factor).
 * slice_s: local slices of redistributions, priced as memory copies;
 * hidden_s: the part of the gradient reduction overlapped with the backward
 * (booked above, not exposed). pl_commbook_total is then the exposed
 * communication a plan's comm_s holds. */
typedef struct pl_commbook {
	double seconds[PL_COLL_COUNT][PL_LINK_COUNT];
	double bus_bytes[PL_COLL_COUNT][PL_LINK_COUNT];
	double slice_s, hidden_s;
} pl_commbook;
/* sum of seconds + slice_s - hidden_s */
double pl_commbook_total(const pl_commbook *bk);
/* books times x a collective of S = bytes over n ranks that takes t seconds */
void pl_commbook_add(pl_commbook *bk, pl_coll coll, int link, int64_t n, double bytes, double t,
                     double times);
/* Books what op o's own collectives, gradient sync and ZeRO gathers run in a
 * step of the problem's job (m micro-batches, its ZeRO level and recompute
 * flag), as pl_parts_split and pl_job_combine count them. */
void pl_cost_node_comm(const pl_problem *p, int op, const int64_t *split, pl_commbook *bk);
/* Of c seconds a micro-batch of edge e's redistributions (pl_cost_edge's),
 * what stays exposed under the problem's overlap: c unless PL_OVERLAP_TP is
 * set and the edge carries a linear layer's activation (the input of a
 * product with one weight, or its output, the head's excepted), then
 * max(c - the product's kernels, c / n), n the largest group of the
 * edge's collectives (docs/cost-model.md, "Tensor-parallel communication
 * overlapped with the GEMMs"). */
double pl_cost_edge_exposed(const pl_problem *p, int e, const int64_t *src_split,
                            const int64_t *dst_split, double c);
/* Books times x edge e's redistributions (pl_cost_edge's). */
void pl_cost_edge_comm(const pl_problem *p, int e, const int64_t *src_split,
                       const int64_t *dst_split, double times, pl_commbook *bk);

typedef struct pl_plancost {
	double step_s, compute_s, comm_s, mem_bytes;
	double optimizer_s; /* of compute_s: the optimizer update */
} pl_plancost;

/* Prices a plan given as split counts per op (splits[op] has nloops entries).
 * If per_op is non-NULL it receives each op's node cost and, in comm_s, the
 * edges that end at it. Under a job the sums are scaled by (m + pp - 1)/pp:
 * with one stage that is the step (m micro-batches and one optimizer step);
 * with pp stages it is a lower bound of the pipelined step (perfectly balanced
 * stages, no sends), and mem_bytes sums all stages (costmodel/pipeline.h
 * prices the pipeline itself). */
void pl_cost_plan(const pl_problem *p, int64_t *const *splits, pl_plancost *out,
                  pl_nodecost *per_op);

/* Whether a fused attention of the plan (splits[op] per op) runs at a
 * sequence length beyond the longest its kernel was measured at on the
 * cluster's GPU (pl_attention_longest), where it is priced at that length's
 * rate: 1 with *seq the longest such op's (local) sequence and *longest the
 * measured one, else 0 with both 0. */
int pl_cost_attention_beyond(const pl_problem *p, int64_t *const *splits, double *seq,
                             double *longest);

#endif
