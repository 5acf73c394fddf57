/* The cluster model: devices, link classes and the alpha-beta parameters of
 * each collective (docs/formats.md, "Cluster"). Built-in presets carry numbers from vendor
 * datasheets and recorded nccl-tests logs (docs/cost-model.md lists each
 * source); a cluster.json overrides them with measurements. */
#ifndef PL_CLUSTER_H
#define PL_CLUSTER_H

#include <stdint.h>

#include "graph/graph.h"
#include "graph/ops.h"

enum { PL_LINK_INTRA = 0, PL_LINK_INTER = 1, PL_LINK_COUNT = 2 };

/* "intra_node" or "inter_node": the link class's key in cluster files */
const char *pl_link_name(int link);

typedef struct pl_ab {
	double alpha; /* s */
	double beta;  /* s per byte of bus traffic */
} pl_ab;

#define PL_MAX_AB_SIZES 64
/* The most devices a cluster has (nodes x devices per node): 2^20, five
 * times the largest GPU clusters built (about 200k). A plan lists every rank
 * in its groups, so the checkpoint of a 2^20-device plan is already ~25 MB;
 * beyond it writing the plan alone would outlast any --time-limit. */
#define PL_MAX_DEVICES (1 << 20)
/* Measured alpha-beta lines of one collective on one link class. A line
 * holds for groups of `ranks` ranks (0: any size; otherwise the nearest
 * measured size is used) and for messages of at most max_bytes (0: no
 * limit). Several lines for one group size cut the message sizes into ranges:
 * NCCL switches protocol and channel count with the size, and one straight
 * line cannot follow it from 8 B to 8 GiB. */
typedef struct pl_ab_list {
	int n; /* 0: use the link default */
	int64_t ranks[PL_MAX_AB_SIZES];
	pl_ab ab[PL_MAX_AB_SIZES];
	double max_bytes[PL_MAX_AB_SIZES];
} pl_ab_list;

/* How a training program keeps and reduces the gradients of 16-bit params
 * (docs/cost-model.md, "Where the loss runs, and the gradients' dtype") */
typedef enum pl_grad_dtype {
	/* "fp32": accumulated and reduced in fp32 main gradients (Megatron-LM
	 * for bf16, in the weight-gradient GEMM) */
	PL_GRAD_FP32,
	/* "param": kept and reduced in the params' own dtype, cast to fp32 only
	 * for the rank's optimizer share at the step (Aleph Alpha's scaling
	 * library; DeepSpeed with grad_accum_dtype bf16) */
	PL_GRAD_PARAM,
	/* "param+fp32": written in the params' dtype every micro-batch, kept,
	 * and added into a whole fp32 gradient that is reduced (DeepSpeed's
	 * BF16_Optimizer, which its engine runs for bf16 under ZeRO 0 and 1) */
	PL_GRAD_PARAM_FP32,
	PL_GRAD_DTYPES
} pl_grad_dtype;

/* How context parallelism exchanges an attention's keys and values among
 * the ranks that cut its queries' sequence (docs/cost-model.md, "Context
 * parallelism's key/value exchange") */
typedef enum pl_cp_exchange {
	/* "ring": each rank passes the K/V chunk it holds on to the next while
	 * it computes that chunk's block, and the dK/dV chunks travel the same
	 * way in the backward (Transformer Engine's cp_comm_type "p2p", the
	 * default of Megatron-LM and NeMo; PyTorch's context_parallel with
	 * rotate method "alltoall") */
	PL_CP_RING,
	/* "allgather": the K/V chunks all-gathered asynchronously while the
	 * rank computes its own block, the dK/dV chunks passed round the ring
	 * in the backward (PyTorch's context_parallel rotate method
	 * "allgather", torchtitan's default) */
	PL_CP_ALLGATHER,
	/* "allgather-sync": K/V all-gathered before the attention and their
	 * gradients reduce-scattered after it, beside no compute (Transformer
	 * Engine's cp_comm_type "all_gather": "not async, and cannot be
	 * overlapped") */
	PL_CP_ALLGATHER_SYNC,
	PL_CP_EXCHANGES
} pl_cp_exchange;

/* The linear layers' GEMMs (pl_cluster.gemm_fp8; docs/cost-model.md, "FP8
 * GEMMs") */
typedef enum pl_gemm_dtype {
	PL_GEMM_PARAM, /* "param": in the params' own dtype */
	/* "fp8": Transformer Engine's delayed scaling (hybrid: E4M3 forward,
	 * E5M2 gradients), one cast-transpose per operand, the weight's FP8
	 * copies cached over a step, the input kept in FP8 */
	PL_GEMM_FP8,
	/* "fp8-tensorwise": torchao's Float8 with dynamic tensorwise scaling
	 * (recipe "tensorwise", torchtitan's default): each operand's amax read,
	 * then its cast, every micro-batch, the weight's too */
	PL_GEMM_FP8_TENSORWISE,
	/* "fp8-rowwise": torchao's Float8 with dynamic rowwise scaling (recipe
	 * "rowwise"): a cast along each axis of every operand, the backward's
	 * GEMMs rescaled after cuBLAS */
	PL_GEMM_FP8_ROWWISE,
	PL_GEMM_DTYPES
} pl_gemm_dtype;

typedef struct pl_cluster {
	char name[64];
	int64_t nodes, devices_per_node;
	char device_name[64];
	double memory_bytes;
	double memory_reserve; /* bytes of it the runtime keeps (CUDA context, NCCL, allocator) */
	double peak_flops[PL_DT_COUNT]; /* dense, FLOP/s */
	double memory_bandwidth;        /* bytes/s */
	pl_ab link[PL_LINK_COUNT];      /* defaults: latency, 1/busbw */
	pl_ab_list coll[PL_COLL_COUNT][PL_LINK_COUNT];
	/* compute efficiency: a GEMM of f FLOPs writing `outs` output elements
	 * takes (max(f / gemm_eff_max, (f + 2 gemm_out_k outs) / gemm_k_max)
	 * + gemm_half_flops / gemm_eff_max) / peak: at most gemm_eff_max of
	 * peak, each output element costing as much as gemm_out_k more steps of
	 * its reduction at gemm_k_max of peak (the tiles' prologue and epilogue,
	 * amortised over the reduction's length k), and a latency of
	 * gemm_half_flops at the ceiling. gemm_out_k 0: a curve of FLOPs alone */
	double gemm_eff_max, gemm_half_flops, gemm_out_k, gemm_k_max;
	/* FP8 tensor cores (Hopper and newer; 0: none): dense peak, FLOP/s, and
	 * the FP8 GEMM curve's asymptote (its half-rate point keeps the bf16
	 * curve's latency, GEMM_HALF_SECONDS); docs/cost-model.md, "FP8 GEMMs" */
	double fp8_peak_flops, fp8_gemm_eff_max;
	/* the GEMMs of linear layers (pl_gemm_dtype): 0 "param", in the
	 * params' own dtype; otherwise in FP8 with the casts of the recipe
	 * (pl_cost_fp8_op) */
	int gemm_fp8;
	double vector_eff, bw_eff, kernel_overhead_s;
	/* per op type: its kernels' measured time over the roofline's (0: 1).
	 * Calibration measures it where one rate per class (vector FLOPs,
	 * memory bytes) does not describe every kernel: a cpu's Gelu (erf) costs
	 * more per FLOP than its LayerNorm, its Dropout draws a random number
	 * per element. Multiplies the op's forward and backward compute. */
	double kernel_scale[PL_OP_COUNT];
	/* the fused attention kernel the runtime uses ("flash2", "flash3",
	 * "cudnn", ...: costmodel/attention.h), priced by its measured rate at
	 * the op's shape; "" (or a GPU the table lacks): by the GEMM curve and
	 * kernel_scale */
	char attention_kernel[24];
	/* how the runtime computes a SoftmaxCrossEntropy: 0 "unfused", as
	 * PyTorch's cross_entropy (16-bit logits cast to an fp32 copy; fp32
	 * probabilities kept); 1 "fused", one kernel that reads the logits in
	 * their dtype and keeps them with an fp32 log-sum-exp per row
	 * (flash-attn's and Liger's cross entropy, llm-foundry's default) */
	int loss_fused;
	/* where the loss runs under tensor parallelism: 0 "vocab", on each
	 * rank's slice of the vocabulary with two all-reduces per row
	 * (Megatron-LM's vocab-parallel cross entropy, torchtitan's loss
	 * parallel); 1 "gathered", the logits all-gathered over the tensor-
	 * parallel ranks and the whole loss computed on each (a column-parallel
	 * head that gathers its output, as Aleph Alpha's scaling library and
	 * Hugging Face models under tensor parallelism do). The search then
	 * never cuts a SoftmaxCrossEntropy's classes. */
	int loss_gathered;
	/* the gradients of 16-bit params (pl_grad_dtype) */
	pl_grad_dtype grad_dtype;
	/* how context parallelism exchanges keys and values (pl_cp_exchange) */
	pl_cp_exchange cp_exchange;
	/* how the once-a-step gradient reduction of ZeRO 0 and 1 runs: 0
	 * "as-grad", in the gradients' dtype, all-reduced without ZeRO and
	 * reduce-scattered under ZeRO 1 (Megatron's DDP and distributed
	 * optimizer, PyTorch's DDP); 1 "fp32-all-reduce", 16-bit gradients
	 * flattened into buckets, cast to fp32, all-reduced whole (under ZeRO 1
	 * too, each rank then updating its share) and cast and copied back
	 * (Aleph Alpha's scaling: core/optimizer/allreduce.py) */
	int grad_fp32_allreduce;
	/* how the backward of each micro-batch but the first adds its weight
	 * gradients into the kept ones: 0 "fused", in the weight-gradient GEMM
	 * (Megatron-LM's gradient_accumulation_fusion, on by default) or, under
	 * ZeRO 2 and 3, into the shard each micro-batch reduce-scatters; 1
	 * "autograd", a kernel of its own a param, as PyTorch's AccumulateGrad
	 * adds a fresh gradient into .grad (Aleph Alpha's scaling, DDP under
	 * no_sync, Megatron-LM with --no-gradient-accumulation-fusion) */
	int grad_acc_autograd;
	/* what ZeRO 3 keeps of a 16-bit param on its rank: 0 "param", its shard
	 * in the param's dtype beside the fp32 master's shard (DeepSpeed's stage
	 * 3, Megatron FSDP's optim_grads_params: 2 + 4 bytes a param over the
	 * ranks); 1 "fp32", the fp32 master's shard alone, cast to the param's
	 * dtype when gathered (PyTorch FSDP's mixed precision: torchtitan,
	 * llm-foundry; 4 bytes a param over the ranks) */
	int param_shard_fp32;
	/* how norms run: 0 "fused", one kernel each way (apex's, Transformer
	 * Engine's, PyTorch's native layer_norm, flash-attn's RMSNorm); 1
	 * "unfused", as eager PyTorch's composite ops (graph/ops/norm.c) */
	int norm_unfused;
	/* how a mask before a softmax runs (an Add of a constant mask, or a
	 * Where filling the scores where a constant mask says, that only the
	 * softmax reads): 0 "fused", in the softmax kernel (Megatron's
	 * FusedScaleMaskSoftmax, PyTorch's scaled_dot_product_attention with
	 * attn_mask); 1 "unfused", its own kernel each way, as eager PyTorch
	 * runs masked_fill_ or the add (graph/ops/elementwise.c) */
	int mask_unfused;
	/* cross-entropies over the logits that the training loop computes
	 * beside the loss, every micro-batch, without gradients (training
	 * metrics: Composer evaluates each of a model's train metrics on every
	 * micro-batch's outputs after its backward, and llm-foundry's MPT has
	 * two, LanguageCrossEntropy and LanguagePerplexity, each PyTorch's
	 * cross_entropy under autocast); 0 (the default): none, the loss alone.
	 * Each is priced as the unfused loss's forward (graph/ops/norm.c) */
	int loss_metrics;
	/* batch norm's statistics in training when the batch is cut: 0 "sync",
	 * all-reduced over the ranks that cut it (SyncBatchNorm: what one device
	 * computes), 1 "local", each rank's own (DDP's BatchNorm: no collective,
	 * each rank normalizes its piece of the batch) */
	int bn_local;
	/* what the runtime does with the model's output (the loss's input, the
	 * logits) after the loss's forward: 0 "freed" (the loss is computed in
	 * the model's forward and nothing else refers to its input: Megatron-LM,
	 * NeMo, torchtitan); 1 "buffered", a pipeline engine keeps each
	 * micro-batch's output in a buffer that is read, not taken, by the loss
	 * and overwritten by the forward two micro-batches later, so the last
	 * stage holds two micro-batches' outputs beside the loss (Aleph Alpha's
	 * scaling: Buffers.get of PIPELINE_STAGE_OUTPUT in _execute_loss_fn,
	 * required_buffer_count max(2, ...); DeepSpeed's PipelineEngine, which
	 * never clears the last stage's pipe_buffers['outputs'];
	 * docs/cost-model.md) */
	int output_buffered;
	/* fitted by `planner calibrate --from-runs` to a user's measured runs
	 * (0 or 1: none): kernels run at fit_compute times the modelled rate,
	 * collectives at fit_comm times theirs, and those across nodes at
	 * fit_comm_inter times that again (a cluster with fewer or slower NICs
	 * than its preset's), kept activations take fit_memory times their bytes
	 * (the allocator's fragmentation). Bounds: compute and both
	 * communication factors 0.25 to 4, memory 1 to 2 (docs/cost-model.md) */
	double fit_compute, fit_comm, fit_comm_inter, fit_memory;
	/* the leave-one-out mean relative error of that fit (0: none), the
	 * width of the step's band (pl_cluster_step_band) */
	double fit_loo;
	char source[256];
} pl_cluster;

/* The band a measured step is expected in, for a predicted step: with a
 * fit from the user's runs (fit_loo > 0), the step less and more that fit's
 * leave-one-out mean error; otherwise the spread of the validation set
 * (benchmarks/validation, docs/benchmarks.md "Validation set"): its
 * published runs' measured steps between PL_BAND_LO and PL_BAND_HI times
 * the prediction for the central 80 % of them. *basis says which, in words,
 * into a buffer of n bytes. */
#define PL_BAND_LO   0.89
#define PL_BAND_HI   1.18
#define PL_BAND_RUNS 279
/* The peak memory a plan is expected to measure: the published runs of the
 * validation set with a measured peak measured at most PL_MEM_BAND_HI times
 * the predicted peak (the 90th percentile over PL_MEM_BAND_RUNS of them,
 * docs/cost-model.md). A plan whose peak times it is over the memory limit
 * may run out of memory; the search keeps a plan with that room where one
 * is nearly as fast (PL_JOB_HEADROOM). */
#define PL_MEM_BAND_HI   1.23
#define PL_MEM_BAND_TEXT "1.23" /* the same, for help texts */
#define PL_MEM_BAND_RUNS 20
/* The median of the same ratios (widened up to two decimals): where no plan
 * with room for PL_MEM_BAND_HI is nearly as fast, the search keeps one with
 * room for this, the error half of those runs reached, on the same terms. */
#define PL_MEM_BAND_MID      1.07
#define PL_MEM_BAND_MID_TEXT "1.07" /* the same, for help texts */
/* Whether a plan of peak_bytes per device may run out of memory under
 * limit_bytes (> 0): its peak times PL_MEM_BAND_HI over the limit */
int pl_memory_at_risk(double peak_bytes, double limit_bytes);
/* Why: "90 % of N published runs measured at most Hx the predicted peak",
 * into a buffer of n bytes (the summary's and the report's warning) */
void pl_memory_band_basis(char *basis, size_t n);
void pl_cluster_step_band(const pl_cluster *c, double step, double *lo, double *hi, char *basis,
                          size_t n);
/* The most model TFLOP/s per device that any run of the validation set
 * measured, by the planner's FLOP count, per GPU family and GEMM precision
 * (benchmarks/bench_validation.py, seen_tflops; ctest test_band holds them
 * to benchmarks/results/validation.jsonl); 0: none of that kind measured.
 * A plan priced above it claims what no published run has shown. */
#define PL_SEEN_TFLOPS_A100_16  196.0
#define PL_SEEN_TFLOPS_H100_16  469.6
#define PL_SEEN_TFLOPS_H100_FP8 878.0
#define PL_SEEN_TFLOPS_H200_16  0
#define PL_SEEN_TFLOPS_H200_FP8 574.7
/* For c's device (its family by name: A100, H100, H200) and GEMM precision:
 * that most, with *family and *gemm ("16-bit", "FP8") naming what it is of;
 * 0 (nothing set) where the set measured nothing of the kind. */
double pl_cluster_seen_tflops(const pl_cluster *c, const char **family, const char **gemm);

/* "fused" or "unfused" (what): the loss kernel; PL_EINVAL otherwise */
pl_status pl_cluster_set_loss(pl_cluster *c, const char *kernel, const char *what, pl_err *err);
const char *pl_cluster_loss_name(const pl_cluster *c);
/* "vocab" or "gathered" (what): where the loss runs under tensor
 * parallelism (pl_cluster.loss_gathered); PL_EINVAL otherwise */
pl_status pl_cluster_set_loss_parallel(pl_cluster *c, const char *where, const char *what,
                                       pl_err *err);
const char *pl_cluster_loss_parallel_name(const pl_cluster *c);
/* "fp32", "param" or "param+fp32" (what): the gradients' dtype
 * (pl_cluster.grad_dtype) */
pl_status pl_cluster_set_grad_dtype(pl_cluster *c, const char *dtype, const char *what,
                                    pl_err *err);
const char *pl_cluster_grad_dtype_name(const pl_cluster *c);
/* "as-grad" or "fp32-all-reduce" (what): how ZeRO 0 and 1 reduce the
 * gradients once a step (pl_cluster.grad_fp32_allreduce) */
pl_status pl_cluster_set_grad_reduce(pl_cluster *c, const char *how, const char *what, pl_err *err);
const char *pl_cluster_grad_reduce_name(const pl_cluster *c);
/* "param", "fp8", "fp8-tensorwise" or "fp8-rowwise" (what): the linear
 * layers' GEMMs (pl_cluster.gemm_fp8, pl_gemm_dtype); whether the device has
 * FP8 tensor cores is checked by pl_cluster_check */
pl_status pl_cluster_set_gemm_dtype(pl_cluster *c, const char *dtype, const char *what,
                                    pl_err *err);
const char *pl_cluster_gemm_dtype_name(const pl_cluster *c);
/* pl_gemm_dtype by name ("param", "fp8", ...): its value, or -1; and back */
int pl_gemm_dtype_parse(const char *name);
const char *pl_gemm_dtype_name(int dtype);
/* "ring", "allgather" or "allgather-sync" (what): how context parallelism
 * exchanges keys and values (pl_cluster.cp_exchange) */
pl_status pl_cluster_set_cp_exchange(pl_cluster *c, const char *how, const char *what, pl_err *err);
const char *pl_cluster_cp_exchange_name(const pl_cluster *c);
/* What the cluster's settings ask of its device: FP8 GEMMs need FP8 tensor
 * cores (PL_EINVAL naming the device and `what`, the option or key that
 * asked for them, otherwise). */
pl_status pl_cluster_check(const pl_cluster *c, const char *what, pl_err *err);
/* "fused" or "autograd" (what): how each micro-batch's weight gradients
 * are added into the kept ones (pl_cluster.grad_acc_autograd) */
pl_status pl_cluster_set_grad_accumulation(pl_cluster *c, const char *how, const char *what,
                                           pl_err *err);
const char *pl_cluster_grad_accumulation_name(const pl_cluster *c);
/* "param" or "fp32" (what): what ZeRO 3 keeps of a 16-bit param
 * (pl_cluster.param_shard_fp32) */
pl_status pl_cluster_set_param_shard(pl_cluster *c, const char *how, const char *what, pl_err *err);
const char *pl_cluster_param_shard_name(const pl_cluster *c);
/* "fused" or "unfused" (what): how norms run (pl_cluster.norm_unfused) */
pl_status pl_cluster_set_norm(pl_cluster *c, const char *kernel, const char *what, pl_err *err);
const char *pl_cluster_norm_name(const pl_cluster *c);
/* "fused" or "unfused" (what): how a softmax's mask runs
 * (pl_cluster.mask_unfused) */
pl_status pl_cluster_set_mask(pl_cluster *c, const char *kernel, const char *what, pl_err *err);
const char *pl_cluster_mask_name(const pl_cluster *c);
/* The most training-metric cross-entropies a cluster states */
#define PL_LOSS_METRICS_MAX 16
/* "0" to "16" (what): the training metrics' cross-entropies a micro-batch
 * (pl_cluster.loss_metrics) */
pl_status pl_cluster_set_loss_metrics(pl_cluster *c, const char *count, const char *what,
                                      pl_err *err);
/* "freed" or "buffered" (what): the model's output after the loss's forward
 * (pl_cluster.output_buffered) */
pl_status pl_cluster_set_stage_output(pl_cluster *c, const char *how, const char *what,
                                      pl_err *err);
const char *pl_cluster_stage_output_name(const pl_cluster *c);
/* The micro-batches' model outputs a buffered runtime holds at once on the
 * last stage (pl_cluster.output_buffered): two pipeline buffers */
#define PL_OUTPUT_BUFFERS 2
/* "sync" or "local" (what): batch norm's statistics (pl_cluster.bn_local) */
pl_status pl_cluster_set_batch_norm(pl_cluster *c, const char *how, const char *what,
                                    pl_err *err);
const char *pl_cluster_batch_norm_name(const pl_cluster *c);

/* the bounds of the fitted factors */
#define PL_FIT_MIN     0.25
#define PL_FIT_MAX     4.0
#define PL_FIT_MEM_MAX 2.0
/* a factor as used: 1 when unset */
static inline double pl_fit(double f)
{
	return f > 0 ? f : 1;
}

/* Sets the attention kernel ("" for none); PL_EINVAL naming what is known
 * otherwise. what names the setting in the message. */
pl_status pl_cluster_set_attention(pl_cluster *c, const char *kernel, const char *what,
                                   pl_err *err);

/* Fills c from a preset name (pl_cluster_preset_name: "h100x8", ..., "cpu",
 * the cpu backend calibrated on the development machine, 2 ranks per node),
 * optionally followed by ":N" for N nodes. */
pl_status pl_cluster_preset(pl_cluster *c, const char *name, pl_err *err);
/* The presets, the one list of their names: i from 0 to
 * pl_cluster_npresets() - 1 (NULL outside). */
int pl_cluster_npresets(void);
const char *pl_cluster_preset_name(int i);
/* The preset for a GPU named `device` ("NVIDIA H100 80GB HBM3", "Tesla
 * V100-SXM3-32GB"): "h100x8" (H100, H800), "h200x8", "a100-80gx8" (A100
 * 80GB), "a100x8" (A100 40GB, A800), "dgx2-v100" (V100); NULL for any other. */
const char *pl_cluster_preset_for_gpu(const char *device);
/* One node of `devices` devices of the default preset (H100 SXM). */
pl_status pl_cluster_devices(pl_cluster *c, int64_t devices, pl_err *err);
/* Reads a planner.cluster/1 file; starts from the H100 defaults for fields
 * the file leaves out. */
pl_status pl_cluster_load_file(pl_cluster *c, const char *path, pl_err *err);
/* The same from a document in memory; name is used in messages. */
pl_status pl_cluster_load_json(pl_cluster *c, const char *text, size_t len, const char *name,
                               pl_err *err);
/* A preset name, or a path to a cluster file if it names an existing file. */
pl_status pl_cluster_resolve(pl_cluster *c, const char *arg, pl_err *err);

int64_t pl_cluster_devices_total(const pl_cluster *c);
/* The default runtime reserve of a GPU with memory_bytes of memory: 1.5 GiB
 * (CUDA context and workspaces, NCCL buffers) + 5 % (allocator
 * fragmentation); docs/cost-model.md. */
double pl_cluster_gpu_reserve(double memory_bytes);
/* Sets the runtime reserve; PL_EINVAL naming `what` (the option or key that
 * gave it) when it is negative or leaves no memory. */
pl_status pl_cluster_set_reserve(pl_cluster *c, double reserve, const char *what, pl_err *err);

struct cJSON;
/* The cluster as a planner.cluster/1 object (every field, so that loading it
 * gives back the same cluster); NULL when out of memory. */
struct cJSON *pl_cluster_to_json(const pl_cluster *c);
/* The cluster of a planner.cluster/1 object (a file's, or the description a
 * checkpoint records); where names it in messages. */
pl_status pl_cluster_from_json(pl_cluster *c, const struct cJSON *root, const char *where,
                               pl_err *err);
/* alpha-beta for a collective of S bytes over n ranks on a link class. */
pl_ab pl_cluster_ab(const pl_cluster *c, pl_coll coll, int link, int64_t n, double bytes);
/* nccl-tests bus factor: 2(n-1)/n for all_reduce, (n-1)/n for all_gather,
 * reduce_scatter, all_to_all, 1 for send_recv. */
double pl_bus_factor(pl_coll coll, int64_t n);
/* Time of a collective on S bytes (as nccl-tests counts them). */
double pl_cluster_coll_time(const pl_cluster *c, pl_coll coll, int link, int64_t n, double bytes);
/* Time of a ring collective (all-reduce, all-gather, reduce-scatter) on S
 * bytes over n ranks, k > 1 of them in each of n / k > 1 nodes, as NCCL runs
 * it: one ring a NIC of the group's k (its channels), every ring through
 * every rank, the data in chunks through all the hops at once, so the
 * busiest link sets the bandwidth term: each rank's NIC carries 1/k of the
 * ring's traffic S x bus factor(n), its NVLink the rest (each link class's
 * beta); the latency is NCCL's tuning model's for the ring's steps
 * (pl_cluster_ring_latency). */
double pl_cluster_ring_time(const pl_cluster *c, pl_coll coll, int64_t n, int64_t k, double bytes);
/* NCCL's tuning-model latency (seconds) of a ring collective over n ranks in
 * m nodes with the Simple protocol: base + one hop a step, a network hop's
 * for the steps that cross nodes (src/graph/tuning.cc). */
double pl_cluster_ring_latency(pl_coll coll, int64_t n, int64_t m);
/* Whether the cluster holds a measured line of coll on link for groups of
 * exactly n ranks (an nccl-tests fit at that size: it already says how the
 * collective ran over those ranks' links, so it is not split into links). */
int pl_cluster_measured_at(const pl_cluster *c, pl_coll coll, int link, int64_t n);
/* Time of an all-to-all of S bytes (each rank's buffer) over n ranks, k > 1
 * of them in each of n / k > 1 nodes: every rank sends S/n to each peer at
 * once, (n - k)/n of its buffer through its own NIC (all-to-all cannot
 * spread one rank's traffic over other NICs) and (k - 1)/n over NVLink, the
 * slower of the two, plus the inter-node alpha. */
double pl_cluster_alltoall_time(const pl_cluster *c, int64_t n, int64_t k, double bytes);

#endif
