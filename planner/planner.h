/* planner.h -- the auto-parallel API for training jobs.
 *
 * A training program sets up a context the way MindSpore's
 * set_auto_parallel_context does (device_num, global_rank, search_mode,
 * strategy checkpoint files, memory limit, pipeline stages, micro-batches,
 * optimizer sharding, gradients_mean), builds its model in code or loads a
 * planner.model/1 file, asks for a plan, and trains under it on the
 * executor:
 *
 *     planner_ctx *ctx = planner_ctx_new();
 *     planner_set_auto_parallel_context(ctx, "device_num", "8");
 *     planner_set_auto_parallel_context(ctx, "strategy_ckpt_save_file", "plan.json");
 *     planner_graph *g;
 *     planner_graph_load(ctx, "model.json", &g);
 *     planner_plan *plan;
 *     if (planner_plan_new(ctx, g, &plan))
 *             fprintf(stderr, "%s\n", planner_errmsg(ctx));
 *     planner_trainer *tr;
 *     planner_trainer_new(ctx, g, plan, &tr);
 *     for (int step = 0; step < 100; step++)
 *             planner_train_step(tr, &loss);
 *
 * Errors. Every function that can fail returns 0 on success or the status
 * the command line would exit with: PLANNER_EINVAL (2) invalid input, with
 * the key, op or field named in planner_errmsg(); PLANNER_EINFEASIBLE (3) no
 * plan satisfies the constraints; PLANNER_ESYSTEM (4) out of memory, a
 * solver, a device or a file write failed. Failed calls leave their out
 * parameters NULL and write no file.
 *
 * Arguments. Every function checks its arguments before it touches
 * anything and never crashes on a NULL one: a NULL (or not live, see below)
 * handle, a NULL required pointer, a count out of its range fail with
 * PLANNER_EINVAL, or with NULL, NaN or -1 where a function returns a
 * pointer, a double or an int64_t (said at each); void functions do nothing;
 * *_free(NULL) is a no-op. Where the call has a live context (its ctx
 * argument, or the graph's or trainer's), planner_errmsg() names the function
 * and the argument ("planner_graph_op: name: expected an op name, got NULL").
 * The planner_plan_* readers have none: their result says it. Arrays come
 * with their counts, which are checked; an array must hold as many elements
 * as its count says (that the library cannot check).
 *
 * Ownership and lifetimes. Each *_new and planner_graph_load gives the
 * caller a handle that it releases with the matching *_free, once.
 *   - A context may be freed before its graphs and trainers: they hold a
 *     reference to it (it is reference-counted) and go on working; it goes
 *     with the last of them. Their messages then have nowhere to be read
 *     (return codes still say what failed). The caller's ctx pointer is dead
 *     after planner_ctx_free, whoever still holds the context.
 *   - A graph may be freed once its plans and trainers are made: they copy
 *     what they need. It may be planned under another context than its own
 *     (the messages go to the context of the call).
 *   - A plan refers to nothing: it outlives its context and graph; a trainer
 *     does not keep it either.
 *   - Strings returned belong to the library: planner_errmsg()'s until the
 *     next failure in that context or its planner_ctx_free, planner_get_auto_parallel_context()'s
 * until the key is set again or the context reset or freed, planner_plan_json()'s until the plan is
 * freed, planner_version()'s always. Handles carry a tag of their kind, set when made and changed
 * when freed: a call given a handle of another kind, a context its owner has freed while graphs or
 * trainers still hold it, or a freed handle whose memory has not been reused, fails as a NULL
 * handle does (and a second *_free is ignored). That is best effort, a help in finding bugs: using
 * a freed handle remains undefined behaviour, and one whose memory went to a new handle of the same
 * kind is not caught.
 *
 * Threads. A context, its graphs and its trainers are used from one thread
 * at a time (freeing included: they share the context's count and message);
 * plans and separate contexts are independent.
 *
 * Build with pkg-config (`pkg-config --cflags --libs planner`) or CMake
 * (`find_package(planner)` and `target_link_libraries(app PRIVATE
 * planner::planner)`). */
#ifndef PLANNER_H
#define PLANNER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PLANNER_VERSION_MAJOR 0
#define PLANNER_VERSION_MINOR 1
#define PLANNER_VERSION_PATCH 0

enum {
	PLANNER_OK = 0,
	PLANNER_EINVAL = 2,
	PLANNER_EINFEASIBLE = 3,
	PLANNER_ESYSTEM = 4,
};

typedef struct planner_ctx planner_ctx;
typedef struct planner_graph planner_graph;
typedef struct planner_plan planner_plan;
typedef struct planner_trainer planner_trainer;

/* "0.1.0" */
const char *planner_version(void);

/* ---- context ---- */

/* NULL when out of memory. */
planner_ctx *planner_ctx_new(void);
/* Releases the caller's context; graphs and trainers that hold it keep it
 * until they are freed (see lifetimes above). */
void planner_ctx_free(planner_ctx *ctx);
/* The message of the last failure in this context ("" if none); for a NULL
 * or not live ctx, a fixed string that says so ("planner_errmsg: ctx: the
 * context is NULL"). Never NULL. */
const char *planner_errmsg(const planner_ctx *ctx);

/* Sets one key of the context; values are strings, checked here (an unknown
 * key or a bad value is PLANNER_EINVAL, naming both). Keys and defaults:
 *
 *   device_num                N >= 1: devices of the job (default 8); with
 *                             `cluster` unset, one node of N H100 SXM GPUs
 *   cluster                   a preset (h100x8, h200x8, a100x8, a100-80gx8,
 *                             dgx2-v100, cpu; with :NODES; an x8
 *                             preset with another count of GPUs a
 *                             node, as h100x4) or a
 *                             planner.cluster/1 file; its
 *                             device count must equal device_num if both set
 *   global_rank               0 <= R < device_num: this process's rank, the
 *                             default of planner_plan_group (default 0)
 *   search_mode               dp | rec | ilp | propagate | auto | brute, or
 *                             MindSpore's dynamic_programming,
 *                             recursive_programming, sharding_propagation
 *                             (default dp)
 *   memory_limit              bytes per device ("80G", "75GiB", "none");
 *                             default: the cluster's device memory
 *   memory_reserve            bytes of the limit the runtime keeps (CUDA
 *                             context, NCCL buffers, allocator); default:
 *                             the cluster's (GPU presets 1.5 GiB + 5 %)
 *   strategy_ckpt_load_file   a checkpoint whose ops keep their strategies
 *                             (annotations the search builds around)
 *   strategy_ckpt_save_file   planner_plan_new writes the plan here,
 *                             atomically
 *   pipeline_stages           N | auto (default 1)
 *   micro_batch_num           N | auto (default 1)
 *   enable_parallel_optimizer true | false (default false): shard the
 *                             optimizer state (ZeRO) at optimizer_shard_level
 *   optimizer_shard_level     1 | 2 | 3 | auto (default 1): 1 states,
 *                             2 + gradients, 3 + weights
 *   recompute                 none | full | selective | selective-op | auto (default none)
 *   gradients_mean            true | false (default false): divide the
 *                             reduced gradients by device_num before the
 *                             update. The executor already computes the
 *                             gradient of the whole batch's loss, so false
 *                             trains exactly as one device does.
 *   time_limit                seconds a search may take (default none)
 *   backend                   cpu (default) | cuda: device_num ranks in
 *                             this process; cuda puts rank r on GPU r
 *                             (trainer_new fails with PLANNER_ESYSTEM
 *                             when there are fewer GPUs than ranks).
 *   optimizer                 adam | sgd (default adam)
 *   learning_rate             > 0 (default 1e-3 for Adam, 1e-2 for SGD)
 *   seed                      integer >= 0 (default 1): synthetic data and
 *                             initial weights
 *   job                       true | false (default false): plan the whole
 *                             job, every dimension below not set searched
 *   data_parallel, model_parallel, context_parallel, expert_parallel
 *                             N >= 1: the data, tensor, context (sequence)
 *                             and expert parallel degrees (planner search's
 *                             --dp, --tp, --cp, --ep); not set: searched
 *   micro_batch_size          N >= 1: sequences per micro-batch per
 *                             data-parallel rank (not with micro_batch_num)
 *   virtual_pipeline_stages   N >= 1: model chunks per device, interleaved
 *                             1F1B (1: plain 1F1B)
 *   use_seq_parallel          true | false (default: searched per op):
 *                             Megatron's sequence parallelism
 *   overlap_grad_reduce       true | false (default false): the gradient
 *                             reduction overlapped with the last backward
 *   tp_comm_overlap           true | false (default false): a linear
 *                             layer's tensor-parallel all-gathers and
 *                             reduce-scatters overlapped with its GEMMs
 *                             (search --tp-comm-overlap)
 *   overlap_param_gather      true | false (default false): parameter
 *                             all-gathers run ahead of use beside the
 *                             compute (search --overlap-param-gather)
 *   max_tensor_parallel       N >= 0: the most devices one op's tensor cut
 *                             spans (0: any; default one node's devices
 *                             where the mesh spans nodes)
 *   framework                 megatron | nemo | torchtitan | deepspeed |
 *                             megatron-deepspeed | mindformers: only plans
 *                             that framework can state and run
 *   gemm_dtype                param | fp8 | fp8-tensorwise | fp8-rowwise
 *                             (default: the cluster's, param in every
 *                             preset): the linear layers' GEMMs in FP8 as
 *                             Transformer Engine (fp8) or torchao's Float8
 *                             (its tensorwise and rowwise recipes) runs
 *                             them (search --gemm-dtype); FP8 on a GPU
 *                             without FP8 tensor cores (A100, V100) is
 *                             PLANNER_EINVAL
 *   cp_exchange               ring | allgather | allgather-sync (default:
 *                             the cluster's, ring in every preset; a
 *                             framework's own with framework): how context
 *                             parallelism exchanges keys and values
 *                             (search --cp-exchange)
 *   fastest                   true | false (default false): the fastest
 *                             plan within the limit (search --fastest): no
 *                             preference for simpler plans or for one
 *                             whose peak leaves room for the memory
 *                             prediction's error
 *
 * Any of pipeline_stages, micro_batch_num, enable_parallel_optimizer or
 * recompute set away from its default makes planner_plan_new search the
 * whole job (stages, micro-batches, ZeRO, recompute) instead of one per-op
 * plan; such plans are priced, saved and run by planner_trainer_new (pipeline
 * stages with 1F1B or the interleaved schedule, micro-batches, ZeRO,
 * recompute: the executor that planner run uses). */
int planner_set_auto_parallel_context(planner_ctx *ctx, const char *key, const char *value);
/* The current value of a key as a string (its default if never set; "" for
 * cluster, memory_limit, the checkpoint files, time_limit, learning_rate, gemm_dtype
 * and cp_exchange when unset), or NULL for an unknown or NULL key (with a message) or a NULL
 * ctx. Valid until the key is set again or the context reset or freed. */
const char *planner_get_auto_parallel_context(const planner_ctx *ctx, const char *key);
/* Every key back to its default (nothing for a NULL ctx). */
void planner_reset_auto_parallel_context(planner_ctx *ctx);

/* ---- models ---- */

/* A model built in code: tensors, ops and outputs added in any order that
 * names existing tensors; it is checked (shapes inferred, op rules applied)
 * when planned or saved. dtype: float32, float16, bfloat16 (default float32
 * when NULL). NULL when out of memory, a NULL ctx or a bad name (see
 * planner_errmsg). The graph holds a reference to ctx. */
planner_graph *planner_graph_new(planner_ctx *ctx, const char *name, const char *dtype);
/* role: "input", "param" or "const"; dtype NULL: the model's. rank 0 to 8;
 * shape: rank dimensions, each from 1 to 9e15 (may be NULL when rank is 0). */
int planner_graph_tensor(planner_graph *g, const char *name, const char *role, const char *dtype,
                         int rank, const int64_t *shape);
/* One op with a single output tensor named `output`. type as in the model
 * format (MatMul, Add, Gelu, LayerNormalization, SoftmaxCrossEntropy, ...);
 * inputs: ninputs (1 to 5) tensor names, none NULL or empty; attrs_json: its
 * attributes as a JSON object ("{\"axis\": -1}") or NULL. */
int planner_graph_op(planner_graph *g, const char *type, const char *name,
                     const char *const *inputs, int ninputs, const char *output,
                     const char *attrs_json);
/* Annotates an op with a strategy (MindSpore convention: one tuple of split
 * counts per input): ninputs (1 to 5) tuples, dims[i] (0 to 8, the input's
 * rank) entries of splits for input i, concatenated; every entry is a split
 * count >= 1 (how many slices that dimension is cut into). Whether they fit
 * the op and the devices is checked when planned. */
int planner_graph_strategy(planner_graph *g, const char *op, int ninputs, const int *dims,
                           const int64_t *splits);
/* Marks a tensor as a model output (the loss is the sum of the outputs). */
int planner_graph_output(planner_graph *g, const char *tensor);
/* Loads a planner.model/1 file. The graph holds a reference to ctx. Keys
 * the format does not have (at the top, in a tensor, in an op) are warned of
 * by the loader and not kept: planner_graph_save writes the format's keys. */
int planner_graph_load(planner_ctx *ctx, const char *path, planner_graph **out);
/* Writes the model as planner.model/1 JSON (atomically; "-" is stdout). */
int planner_graph_save(planner_graph *g, const char *path);
void planner_graph_free(planner_graph *g);

/* ---- plans ---- */

/* Plans g under the context: loads strategy_ckpt_load_file, searches,
 * writes strategy_ckpt_save_file. The plan keeps no reference to ctx or g. */
int planner_plan_new(planner_ctx *ctx, planner_graph *g, planner_plan **out);
/* The plan's strategy checkpoint (the format of `planner search -o`); NULL
 * for a NULL plan. */
const char *planner_plan_json(const planner_plan *p);
/* Predicted step time (seconds) and peak memory per device (bytes); NaN for
 * a NULL plan. */
double planner_plan_step_seconds(const planner_plan *p);
double planner_plan_memory_bytes(const planner_plan *p);
/* What the predicted step does per device: model FLOPs utilisation (the
 * model's matrix-product FLOPs forward and backward, recompute not counted,
 * over step x devices x the dtype's peak), model TFLOP/s per device, and
 * tokens/s per device for a model whose input holds token ids (NaN when it
 * has none); NaN for a NULL plan. The checkpoint's cost object has the same
 * numbers (mfu, model_tflops_per_device, tokens_per_second_per_device). */
double planner_plan_mfu(const planner_plan *p);
/* The model's matrix-product FLOPs of a step, forward and backward (the
 * checkpoint's cost.model_flops_per_step; per op: parallel_strategy_item's
 * flops_forward and flops_backward); NaN for a NULL plan. */
double planner_plan_flops_per_step(const planner_plan *p);
double planner_plan_tflops_per_device(const planner_plan *p);
double planner_plan_tokens_per_second_per_device(const planner_plan *p);
/* The band a measured step is expected in (seconds; the checkpoint's
 * cost.step_band_seconds): from the cluster's fit to the user's runs when it
 * has one (calibrate --from-runs), else from the spread of the validation
 * set's published runs (docs/cost-model.md, "How far to trust a step").
 * PLANNER_OK, or PLANNER_EINVAL for a NULL plan or pointer (lo and hi NaN). */
int planner_plan_step_band(const planner_plan *p, double *lo, double *hi);
/* Degrees of the plan: kind "dp", "tp", "pp", "ep" (expert parallel, in
 * models with MoE ops), "sp" (sequence parallel: tp ranks that also split
 * the tokens of the norm regions) or "cp" (context parallel: ranks holding
 * different pieces of the layers' sequence; with it "dp" spans dp x cp, the
 * gradients' group); 1 when absent; -1 for a NULL plan or a NULL or unknown
 * kind. */
int64_t planner_plan_degree(const planner_plan *p, const char *kind);
/* The ranks of `rank`'s group of a kind ("dp", "tp", "pp", "ep", "sp", "cp"; rank < 0: the
 * context's global_rank at planning time), ascending, into ranks (room for
 * max; never more are written, and ranks may be NULL when max is 0, to ask
 * the size); returns the group's size (which may exceed max), or -1 for an
 * unknown kind or rank, a NULL plan or kind, or NULL ranks with max > 0. */
int64_t planner_plan_group(const planner_plan *p, const char *kind, int64_t rank, int64_t *ranks,
                           size_t max);
void planner_plan_free(planner_plan *p);
/* Prices a given plan for g, as `planner cost MODEL --strategy CKPT` does:
 * ckpt_json is a strategy checkpoint's text (the format of `planner search
 * -o`; only parallel_strategy_item and the whole-job fields are read; a
 * model.sha256 other than g's is PLANNER_EINVAL). It is priced on the context's cluster when
 * `cluster` or `device_num` is set, else on the cluster the checkpoint records (which must then
 * record one). The plan made is the checkpoint with g's name and digest, that cluster and the new
 * cost object: the one `planner cost` prints, with memory_limit_bytes (the context's memory_limit,
 * else the device's memory; null for "none") and fits. A plan that does not fit is priced all the
 * same (fits false); an invalid strategy fails naming the op. The plan keeps no reference to ctx or
 * g. */
int planner_plan_cost(planner_ctx *ctx, planner_graph *g, const char *ckpt_json,
                      planner_plan **out);

/* ---- export ---- */

/* planner_export flags */
enum {
	PLANNER_EXPORT_JSON = 1, /* {"framework", "version", "source", "keys", "text"} */
	PLANNER_EXPORT_FP16 = 2, /* a 16-bit plan as float16 (default: bfloat16) */
};

/* A plan as a training framework's launch arguments or configuration file,
 * as `planner export CKPT --to FRAMEWORK` writes it: ckpt_json is a strategy
 * checkpoint's text (planner_plan_json, or a file's); framework one of
 * "megatron" (Megatron-LM arguments), "nemo" (Megatron-Bridge YAML),
 * "torchtitan" (TOML), "deepspeed" (JSON), "megatron-deepspeed" or
 * "mindformers" (YAML); flags PLANNER_EXPORT_*, or 0. As snprintf does, at
 * most size bytes of the text, its NUL included, go into text (which may be
 * NULL when size is 0, to ask the length first), and *len (may be NULL) gets
 * the whole length without the NUL. A plan the framework cannot state (ops
 * cut otherwise than its uniform degrees, a stage that ends inside a layer,
 * ...) or an unknown framework fails with PLANNER_EINVAL saying what and why;
 * text is then left alone. */
int planner_export(planner_ctx *ctx, const char *ckpt_json, const char *framework, int flags,
                   char *text, size_t size, size_t *len);

/* ---- training ---- */

/* An executor running g under plan on the context's backend (device_num
 * ranks), with the context's optimizer, learning rate, seed and
 * gradients_mean. g must be the graph the plan was made for. A whole-job
 * plan runs as planned (pipeline stages with 1F1B, micro-batches, ZeRO 0-3,
 * recompute); the interleaved schedule fails with PLANNER_EINVAL. The
 * trainer holds a reference to ctx and none to g or plan. */
int planner_trainer_new(planner_ctx *ctx, planner_graph *g, const planner_plan *plan,
                        planner_trainer **out);
/* One step: forward, backward, optimizer update; *loss (may be NULL) gets
 * the loss before the update. A loss that is not finite (NaN or inf: the
 * training diverged, or a param holds such values) fails with PLANNER_EINVAL
 * and a message naming the step (counted from 1 for this trainer) and the
 * value; the step has run and *loss still gets the value, but the update
 * was applied, so the params are likely no longer finite either: write them
 * again (planner_trainer_write) or start over. Other failures leave *loss
 * alone. */
int planner_train_step(planner_trainer *tr, double *loss);
/* Reads the whole value of a param (n: its element count, which must match)
 * assembled from the ranks' pieces, or writes it to every rank (any float
 * values, including non-finite ones). */
int planner_trainer_read(planner_trainer *tr, const char *param, float *values, size_t n);
int planner_trainer_write(planner_trainer *tr, const char *param, const float *values, size_t n);
void planner_trainer_free(planner_trainer *tr);

#ifdef __cplusplus
}
#endif

#endif
