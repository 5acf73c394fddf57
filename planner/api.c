/* The auto-parallel API (planner/planner.h) over the library: a context of
 * string keys, models built as planner.model/1 JSON and imported like a
 * file, plans from planner/plan.c, training on the executor. Every entry
 * point checks its handles (a tag of their kind, cleared when freed) and its
 * pointers and counts before it touches anything, and fails with
 * PLANNER_EINVAL, or NULL, NaN or -1, instead of crashing. */
#include <math.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "executor/exec.h"
#include "planner/checkpoint.h"
#include "planner/export.h"
#include "graph/output.h"
#include "graph/model.h"
#include "graph/json.h"
#include "graph/parse.h"
#include "planner/plan.h"
#include "planner/planner.h"
#include "graph/alloc.h"
#include "graph/clock.h"

/* ---- context keys ---- */

typedef int (*check_fn)(const char *v);

static int is_bool(const char *v)
{
	return !strcmp(v, "true") || !strcmp(v, "false");
}

static int is_count(const char *v)
{
	long long x;
	return !pl_parse_ll(v, &x) && x >= 1 && x <= (1LL << 30);
}

static int is_index(const char *v)
{
	long long x;
	return !pl_parse_ll(v, &x) && x >= 0;
}

static int is_count_or_auto(const char *v)
{
	return !strcmp(v, "auto") || is_count(v);
}

static int is_bytes(const char *v)
{
	double b;
	return !pl_parse_bytes(v, &b);
}

static int is_limit(const char *v)
{
	double b;
	return !pl_parse_limit(v, &b);
}

static int is_positive(const char *v)
{
	char *end;
	double x = strtod(v, &end);
	return end != v && !*end && x > 0 && x < 1e300;
}

static int is_any(const char *v)
{
	return *v != 0;
}

static const char *mode_name(const char *v)
{
	static const char *const alias[][2] = {{"dynamic_programming", "dp"},
	                                       {"recursive_programming", "rec"},
	                                       {"sharding_propagation", "propagate"}};
	for (size_t i = 0; i < sizeof alias / sizeof *alias; i++)
		if (!strcmp(v, alias[i][0]))
			return alias[i][1];
	return v;
}

static int is_mode(const char *v)
{
	return pl_searcher_get(mode_name(v)) != NULL;
}

static int is_shard_level(const char *v)
{
	return !strcmp(v, "1") || !strcmp(v, "2") || !strcmp(v, "3") || !strcmp(v, "auto");
}

static int is_recompute(const char *v)
{
	return pl_recompute_parse(v) >= 0 || !strcmp(v, "auto");
}

static int is_gemm_dtype(const char *v)
{
	return pl_gemm_dtype_parse(v) >= 0;
}

static int is_cp_exchange(const char *v)
{
	pl_cluster c = {0};
	return pl_cluster_set_cp_exchange(&c, v, "", NULL) == PL_OK;
}

static int is_backend(const char *v)
{
	return !strcmp(v, "cpu") || !strcmp(v, "cuda");
}

static int is_optimizer(const char *v)
{
	return !strcmp(v, "adam") || !strcmp(v, "sgd");
}

static int is_framework(const char *v)
{
	for (int i = 0; i < pl_export_count(); i++)
		if (!strcmp(v, pl_export_name(i)))
			return 1;
	return 0;
}

enum {
	K_DEVICE_NUM,
	K_CLUSTER,
	K_GLOBAL_RANK,
	K_SEARCH_MODE,
	K_MEMORY_LIMIT,
	K_MEMORY_RESERVE,
	K_LOAD_FILE,
	K_SAVE_FILE,
	K_PIPELINE_STAGES,
	K_MICRO_BATCH_NUM,
	K_PARALLEL_OPTIMIZER,
	K_SHARD_LEVEL,
	K_RECOMPUTE,
	K_GRADIENTS_MEAN,
	K_TIME_LIMIT,
	K_BACKEND,
	K_OPTIMIZER,
	K_LEARNING_RATE,
	K_SEED,
	K_JOB,
	K_DATA_PARALLEL,
	K_MODEL_PARALLEL,
	K_CONTEXT_PARALLEL,
	K_EXPERT_PARALLEL,
	K_MICRO_BATCH_SIZE,
	K_VIRTUAL_STAGES,
	K_SEQ_PARALLEL,
	K_OVERLAP,
	K_TP_OVERLAP,
	K_PARAM_OVERLAP,
	K_MAX_TP,
	K_FRAMEWORK,
	K_GEMM_DTYPE,
	K_CP_EXCHANGE,
	K_FASTEST,
	K_COUNT
};

static const struct key {
	const char *name, *def; /* def NULL: unset */
	check_fn check;
	const char *expect;
	/* what a bad value's message lists before expect, from its table */
	const char *(*names)(char *buf, size_t n);
} keys[K_COUNT] = {
    [K_DEVICE_NUM] = {"device_num", "8", is_count, "an integer >= 1"},
    [K_CLUSTER] = {"cluster", NULL, is_any, "a cluster preset or file"},
    [K_GLOBAL_RANK] = {"global_rank", "0", is_index, "an integer >= 0"},
    [K_SEARCH_MODE] = {"search_mode", "dp", is_mode,
                       "dp, rec, ilp, propagate, auto, brute, dynamic_programming, "
                       "recursive_programming or sharding_propagation"},
    [K_MEMORY_LIMIT] = {"memory_limit", NULL, is_limit,
                        "bytes > 0 such as 80e9, 80G, 75GiB, or 'none'"},
    [K_MEMORY_RESERVE] = {"memory_reserve", NULL, is_bytes, "bytes such as 2G, 5.5GiB or 0"},
    [K_LOAD_FILE] = {"strategy_ckpt_load_file", NULL, is_any, "a file name"},
    [K_SAVE_FILE] = {"strategy_ckpt_save_file", NULL, is_any, "a file name"},
    [K_PIPELINE_STAGES] = {"pipeline_stages", "1", is_count_or_auto, "an integer >= 1 or 'auto'"},
    [K_MICRO_BATCH_NUM] = {"micro_batch_num", "1", is_count_or_auto, "an integer >= 1 or 'auto'"},
    [K_PARALLEL_OPTIMIZER] = {"enable_parallel_optimizer", "false", is_bool, "true or false"},
    [K_SHARD_LEVEL] = {"optimizer_shard_level", "1", is_shard_level, "1, 2, 3 or 'auto'"},
    [K_RECOMPUTE] = {"recompute", "none", is_recompute,
                     "none, full, selective, selective-op or auto"},
    [K_GRADIENTS_MEAN] = {"gradients_mean", "false", is_bool, "true or false"},
    [K_TIME_LIMIT] = {"time_limit", NULL, is_positive, "seconds > 0"},
    [K_BACKEND] = {"backend", "cpu", is_backend, "cpu or cuda"},
    [K_OPTIMIZER] = {"optimizer", "adam", is_optimizer, "adam or sgd"},
    [K_LEARNING_RATE] = {"learning_rate", NULL, is_positive, "a number > 0"},
    [K_SEED] = {"seed", "1", is_index, "an integer >= 0"},
    [K_JOB] = {"job", "false", is_bool, "true or false"},
    [K_DATA_PARALLEL] = {"data_parallel", NULL, is_count, "an integer >= 1"},
    [K_MODEL_PARALLEL] = {"model_parallel", NULL, is_count, "an integer >= 1"},
    [K_CONTEXT_PARALLEL] = {"context_parallel", NULL, is_count, "an integer >= 1"},
    [K_EXPERT_PARALLEL] = {"expert_parallel", NULL, is_count, "an integer >= 1"},
    [K_MICRO_BATCH_SIZE] = {"micro_batch_size", NULL, is_count, "an integer >= 1"},
    [K_VIRTUAL_STAGES] = {"virtual_pipeline_stages", NULL, is_count, "an integer >= 1"},
    [K_SEQ_PARALLEL] = {"use_seq_parallel", NULL, is_bool, "true or false"},
    [K_OVERLAP] = {"overlap_grad_reduce", "false", is_bool, "true or false"},
    [K_TP_OVERLAP] = {"tp_comm_overlap", "false", is_bool, "true or false"},
    [K_PARAM_OVERLAP] = {"overlap_param_gather", "false", is_bool, "true or false"},
    [K_MAX_TP] = {"max_tensor_parallel", NULL, is_index,
                  "an integer >= 0 (the most devices an op's tensor-parallel cut spans; 0: any)"},
    [K_FRAMEWORK] = {"framework", NULL, is_framework,
                     " (only plans it can run, as search --framework)", pl_export_names},
    [K_GEMM_DTYPE] = {"gemm_dtype", NULL, is_gemm_dtype,
                      "param, fp8, fp8-tensorwise or fp8-rowwise (linear layers' GEMMs in "
                      "FP8 as Transformer Engine or torchao's recipes run them, as search "
                      "--gemm-dtype)"},
    [K_CP_EXCHANGE] = {"cp_exchange", NULL, is_cp_exchange,
                       "ring, allgather or allgather-sync (context parallelism's key/value "
                       "exchange, as search --cp-exchange)"},
    [K_FASTEST] = {"fastest", "false", is_bool, "true or false"},
};

/* other names of keys: MindFormers' */
static const char *const key_alias[][2] = {{"pipeline_stage", "pipeline_stages"}};

static const char *key_name(const char *key)
{
	for (size_t i = 0; key && i < sizeof key_alias / sizeof *key_alias; i++)
		if (!strcmp(key, key_alias[i][0]))
			return key_alias[i][1];
	return key;
}

/* Each handle opens with a tag of its kind, set when it is made and changed
 * when it is freed, so that a call given a handle of another kind, or a freed
 * one whose memory still reads as it was left, fails instead of running on
 * it. Best effort: a freed handle is still undefined behaviour (its memory may
 * be reused for a new handle of the same kind). */
enum {
	TAG_CTX = 0x78636c70,       /* "plcx" */
	TAG_CTX_FREED = 0x46636c70, /* "plcF": freed by its owner, held by graphs or trainers */
	TAG_GRAPH = 0x72676c70,     /* "plgr" */
	TAG_PLAN = 0x6c706c70,      /* "plpl" */
	TAG_TRAINER = 0x72746c70,   /* "pltr" */
	TAG_FREED = 0x64656164,     /* "dead" */
};

/* A context is reference-counted: its owner's reference (until
 * planner_ctx_free) and one per graph and trainer, which write their messages
 * into it, so that the context may be freed before them. */
struct planner_ctx {
	uint32_t tag;
	int refs;
	char *val[K_COUNT]; /* NULL: the default */
	pl_err err;
};

/* The status a function of the API returns: the command line's exit code. */
static int code(pl_status st)
{
	return st ? pl_status_exit_code(st) : 0;
}

/* A handle argument that is not a live handle of its kind: fails; the message
 * goes to err when there is one. */
static int bad_handle(pl_err *err, const char *fn, const char *arg, const char *kind, const void *h)
{
	if (!h)
		return code(
		    pl_err_set(err, PL_EINVAL, "%s: %s: expected a %s, got NULL", fn, arg, kind));
	return code(pl_err_set(err, PL_EINVAL,
	                       "%s: %s: not a live %s (freed, or a handle of another kind)", fn,
	                       arg, kind));
}

/* A required pointer argument that is NULL. */
static int null_arg(pl_err *err, const char *fn, const char *arg, const char *what)
{
	return code(pl_err_set(err, PL_EINVAL, "%s: %s: expected %s, got NULL", fn, arg, what));
}

/* Whether ctx is a live context (its owner has not freed it). */
static int ctx_ok(const planner_ctx *ctx)
{
	return ctx && ctx->tag == TAG_CTX;
}

/* Drops one reference; the last frees the context. */
static void ctx_unref(planner_ctx *ctx)
{
	if (--ctx->refs > 0)
		return;
	for (int k = 0; k < K_COUNT; k++)
		free(ctx->val[k]);
	ctx->tag = TAG_FREED;
	free(ctx);
}

static const char *get(const planner_ctx *ctx, int k)
{
	return ctx->val[k] ? ctx->val[k] : keys[k].def;
}

static long long get_ll(const planner_ctx *ctx, int k, long long auto_value)
{
	long long v = auto_value;
	if (get(ctx, k))
		pl_parse_auto(get(ctx, k), 0, 1LL << 62, auto_value, &v);
	return v;
}

const char *planner_version(void)
{
	return PL_VERSION;
}

planner_ctx *planner_ctx_new(void)
{
	planner_ctx *ctx = pl_calloc(1, sizeof(planner_ctx));
	if (ctx) {
		ctx->tag = TAG_CTX;
		ctx->refs = 1;
	}
	return ctx;
}

void planner_reset_auto_parallel_context(planner_ctx *ctx)
{
	if (!ctx_ok(ctx))
		return;
	for (int k = 0; k < K_COUNT; k++) {
		free(ctx->val[k]);
		ctx->val[k] = NULL;
	}
}

void planner_ctx_free(planner_ctx *ctx)
{
	if (!ctx_ok(ctx)) /* NULL, or already freed by its owner */
		return;
	ctx->tag = TAG_CTX_FREED;
	ctx_unref(ctx);
}

const char *planner_errmsg(const planner_ctx *ctx)
{
	if (!ctx)
		return "planner_errmsg: ctx: the context is NULL";
	if (ctx->tag == TAG_CTX_FREED)
		return "planner_errmsg: ctx: the context was freed (planner_ctx_free)";
	if (ctx->tag != TAG_CTX)
		return "planner_errmsg: ctx: not a live context (freed, or a handle of another "
		       "kind)";
	return ctx->err.msg;
}

int planner_set_auto_parallel_context(planner_ctx *ctx, const char *key, const char *value)
{
	static const char fn[] = "planner_set_auto_parallel_context";
	if (!ctx_ok(ctx))
		return PLANNER_EINVAL;
	if (!key)
		return null_arg(&ctx->err, fn, "key", "a key name");
	if (!value)
		return null_arg(&ctx->err, fn, "value", "a string");
	key = key_name(key);
	for (int k = 0; k < K_COUNT; k++) {
		if (strcmp(key, keys[k].name))
			continue;
		if (!keys[k].check(value)) {
			char names[PL_EXPORT_NAMES_MAX] = "";
			if (keys[k].names)
				keys[k].names(names, sizeof names);
			return code(pl_err_set(&ctx->err, PL_EINVAL,
			                       "set_auto_parallel_context: %s '%s': expected %s%s",
			                       key, value, names, keys[k].expect));
		}
		char *v = pl_strdup(value);
		if (!v)
			return code(pl_err_set(&ctx->err, PL_ENOMEM, "out of memory"));
		free(ctx->val[k]);
		ctx->val[k] = v;
		return 0;
	}
	char known[1024] = "";
	for (int k = 0; k < K_COUNT; k++)
		snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", k ? ", " : "",
		         keys[k].name);
	return code(pl_err_set(&ctx->err, PL_EINVAL,
	                       "set_auto_parallel_context: unknown key '%s'; the keys are %s", key,
	                       known));
}

const char *planner_get_auto_parallel_context(const planner_ctx *ctx, const char *key)
{
	static const char fn[] = "planner_get_auto_parallel_context";
	if (!ctx_ok(ctx))
		return NULL;
	/* the message is not part of what const promises: the context is the
	 * library's, made non-const by planner_ctx_new */
	pl_err *err = (pl_err *)&ctx->err;
	if (!key) {
		null_arg(err, fn, "key", "a key name");
		return NULL;
	}
	key = key_name(key);
	for (int k = 0; k < K_COUNT; k++)
		if (!strcmp(key, keys[k].name))
			return get(ctx, k) ? get(ctx, k) : "";
	pl_err_set(err, PL_EINVAL, "%s: unknown key '%s'", fn, key);
	return NULL;
}

/* The context's memory_reserve, when set, applied to cl. */
static pl_status ctx_reserve(planner_ctx *ctx, pl_cluster *cl)
{
	if (!ctx->val[K_MEMORY_RESERVE])
		return PL_OK;
	double r = 0;
	pl_parse_bytes(ctx->val[K_MEMORY_RESERVE], &r);
	return pl_cluster_set_reserve(cl, r, "set_auto_parallel_context: memory_reserve",
	                              &ctx->err);
}

/* The cluster of the context: `cluster`, else device_num H100s in a node;
 * device_num, when set, must agree. */
static pl_status ctx_cluster(planner_ctx *ctx, pl_cluster *cl)
{
	long long d = get_ll(ctx, K_DEVICE_NUM, 0);
	pl_status st = ctx->val[K_CLUSTER] ? pl_cluster_resolve(cl, ctx->val[K_CLUSTER], &ctx->err)
	                                   : pl_cluster_devices(cl, d, &ctx->err);
	if (st)
		return st;
	int64_t D = pl_cluster_devices_total(cl);
	if (ctx->val[K_DEVICE_NUM] && D != d)
		return pl_err_set(&ctx->err, PL_EINVAL,
		                  "set_auto_parallel_context: device_num %lld but cluster '%s' has "
		                  "%lld devices",
		                  d, ctx->val[K_CLUSTER], (long long)D);
	if ((st = ctx_reserve(ctx, cl)))
		return st;
	if (ctx->val[K_GEMM_DTYPE] &&
	    (st = pl_cluster_set_gemm_dtype(cl, ctx->val[K_GEMM_DTYPE],
	                                    "set_auto_parallel_context: gemm_dtype", &ctx->err)))
		return st;
	if ((st = pl_cluster_check(cl, "set_auto_parallel_context: gemm_dtype", &ctx->err)))
		return st;
	if (ctx->val[K_CP_EXCHANGE] &&
	    (st = pl_cluster_set_cp_exchange(cl, ctx->val[K_CP_EXCHANGE],
	                                     "set_auto_parallel_context: cp_exchange", &ctx->err)))
		return st;
	if (get_ll(ctx, K_GLOBAL_RANK, 0) >= D)
		return pl_err_set(&ctx->err, PL_EINVAL,
		                  "set_auto_parallel_context: global_rank %s: expected 0 to %lld",
		                  get(ctx, K_GLOBAL_RANK), (long long)D - 1);
	return PL_OK;
}

/* ---- models ---- */

struct planner_graph {
	uint32_t tag;
	planner_ctx *ctx; /* holds a reference: its messages go there */
	cJSON *doc;
	char *where; /* the file, or "model 'NAME' (built in code)" */
	/* a file's digest, which its plans record (model.sha256) as the command
	 * line's do: "" when built in code or changed since it was loaded */
	char sha256[65];
};

_Static_assert(sizeof((planner_graph *)0)->sha256 == sizeof((pl_graph *)0)->sha256,
               "a file's digest as the graph IR has it");

/* Marks g changed since it was loaded (its plans name no file's digest); 0. */
static int changed(planner_graph *g)
{
	g->sha256[0] = 0;
	return 0;
}

static int graph_ok(const planner_graph *g)
{
	return g && g->tag == TAG_GRAPH;
}

static planner_graph *graph_wrap(planner_ctx *ctx, cJSON *doc, const char *where)
{
	planner_graph *g = pl_calloc(1, sizeof *g);
	if (!g || !(g->where = pl_strdup(where))) {
		free(g);
		cJSON_Delete(doc);
		pl_err_set(&ctx->err, PL_ENOMEM, "out of memory");
		return NULL;
	}
	g->tag = TAG_GRAPH;
	g->ctx = ctx;
	ctx->refs++;
	g->doc = doc;
	return g;
}

planner_graph *planner_graph_new(planner_ctx *ctx, const char *name, const char *dtype)
{
	static const char fn[] = "planner_graph_new";
	pl_dtype dt;
	if (!ctx_ok(ctx))
		return NULL;
	if (!name) {
		null_arg(&ctx->err, fn, "name", "a model name");
		return NULL;
	}
	if (!*name) {
		pl_err_set(&ctx->err, PL_EINVAL, "%s: the model needs a name", fn);
		return NULL;
	}
	if (dtype && pl_dtype_parse(dtype, &dt)) {
		pl_err_set(&ctx->err, PL_EINVAL,
		           "%s: model '%s': dtype '%s': expected float32, float16 or bfloat16", fn,
		           name, dtype);
		return NULL;
	}
	cJSON *doc = cJSON_CreateObject();
	cJSON_AddStringToObject(doc, "format", "planner.model/1");
	cJSON_AddStringToObject(doc, "name", name);
	cJSON_AddStringToObject(doc, "dtype", dtype ? dtype : "float32");
	cJSON_AddObjectToObject(doc, "tensors");
	cJSON_AddArrayToObject(doc, "ops");
	if (!cJSON_AddArrayToObject(doc, "outputs")) {
		cJSON_Delete(doc);
		pl_err_set(&ctx->err, PL_ENOMEM, "out of memory");
		return NULL;
	}
	char where[300];
	snprintf(where, sizeof where, "model '%s' (built in code)", name);
	return graph_wrap(ctx, doc, where);
}

static int graph_fail(planner_graph *g, const char *fn, const char *what, const char *name)
{
	return code(pl_err_set(&g->ctx->err, PL_EINVAL, "%s: %s: expected %s '%s'", fn, g->where,
	                       what, name ? name : "(null)"));
}

/* a graph call ran out of memory: nothing of it was added */
static int graph_oom(planner_graph *g, cJSON *partial)
{
	cJSON_Delete(partial);
	return code(pl_err_set(&g->ctx->err, PL_ENOMEM, "out of memory building %s", g->where));
}

/* The largest dimension or split count a model file may hold: exact in a
 * double, as the loader reads it (graph/model.c's get_int_array). */
#define MAX_DIM 9000000000000000LL

int planner_graph_tensor(planner_graph *g, const char *name, const char *role, const char *dtype,
                         int rank, const int64_t *shape)
{
	static const char fn[] = "planner_graph_tensor";
	if (!graph_ok(g))
		return PLANNER_EINVAL;
	pl_err *err = &g->ctx->err;
	if (!name)
		return null_arg(err, fn, "name", "a tensor name");
	if (!role)
		return null_arg(err, fn, "role", "input, param or const");
	cJSON *ts = cJSON_GetObjectItemCaseSensitive(g->doc, "tensors");
	pl_dtype dt;
	if (!*name || cJSON_GetObjectItemCaseSensitive(ts, name))
		return graph_fail(g, fn, "a new, non-empty tensor name; got", name);
	if (strcmp(role, "input") && strcmp(role, "param") && strcmp(role, "const"))
		return graph_fail(g, fn, "role input, param or const; got", role);
	if (dtype && pl_dtype_parse(dtype, &dt))
		return graph_fail(g, fn, "a dtype (float32, int32, ...); got", dtype);
	if (rank < 0 || rank > PL_MAX_RANK)
		return code(pl_err_set(err, PL_EINVAL,
		                       "%s: %s: tensor '%s': rank %d: expected 0 to %d", fn,
		                       g->where, name, rank, PL_MAX_RANK));
	if (rank && !shape)
		return null_arg(err, fn, "shape", "an array of rank dimensions");
	for (int d = 0; d < rank; d++)
		if (shape[d] < 1 || shape[d] > MAX_DIM)
			return code(pl_err_set(err, PL_EINVAL,
			                       "%s: %s: tensor '%s': shape[%d] %lld: expected a "
			                       "dimension from 1 to 9e15",
			                       fn, g->where, name, d, (long long)shape[d]));
	cJSON *t = cJSON_CreateObject(), *sh = cJSON_AddArrayToObject(t, "shape");
	int ok = sh != NULL;
	for (int d = 0; d < rank; d++)
		ok &= pl_json_push(sh, cJSON_CreateNumber((double)shape[d]));
	ok &= cJSON_AddStringToObject(t, "role", role) != NULL;
	if (dtype)
		ok &= cJSON_AddStringToObject(t, "dtype", dtype) != NULL;
	if (!ok)
		return graph_oom(g, t);
	return pl_json_add(ts, name, t) ? changed(g) : graph_oom(g, NULL);
}

int planner_graph_op(planner_graph *g, const char *type, const char *name,
                     const char *const *inputs, int ninputs, const char *output,
                     const char *attrs_json)
{
	static const char fn[] = "planner_graph_op";
	if (!graph_ok(g))
		return PLANNER_EINVAL;
	pl_err *err = &g->ctx->err;
	if (!type)
		return null_arg(err, fn, "type", "an op type");
	if (!name)
		return null_arg(err, fn, "name", "an op name");
	if (!*name)
		return graph_fail(g, fn, "an op name; got", name);
	if (ninputs < 1 || ninputs > PL_MAX_OP_INPUTS)
		return code(pl_err_set(err, PL_EINVAL,
		                       "%s: %s: op '%s': ninputs %d: expected 1 to %d", fn,
		                       g->where, name, ninputs, PL_MAX_OP_INPUTS));
	if (!inputs)
		return null_arg(err, fn, "inputs", "an array of ninputs tensor names");
	for (int i = 0; i < ninputs; i++)
		if (!inputs[i] || !*inputs[i])
			return code(
			    pl_err_set(err, PL_EINVAL,
			               "%s: %s: op '%s': inputs[%d]: expected a tensor name, "
			               "got %s",
			               fn, g->where, name, i, inputs[i] ? "''" : "NULL"));
	if (!output)
		return null_arg(err, fn, "output", "a tensor name");
	if (!*output)
		return graph_fail(g, fn, "an output tensor name for op", name);
	cJSON *attrs = NULL;
	if (attrs_json && !cJSON_IsObject(attrs = cJSON_Parse(attrs_json))) {
		cJSON_Delete(attrs);
		return graph_fail(g, fn, "attrs as a JSON object for op", name);
	}
	cJSON *op = cJSON_CreateObject();
	int ok =
	    cJSON_AddStringToObject(op, "name", name) && cJSON_AddStringToObject(op, "type", type);
	cJSON *in = cJSON_AddArrayToObject(op, "inputs");
	ok &= in != NULL;
	for (int i = 0; i < ninputs; i++)
		ok &= pl_json_push(in, cJSON_CreateString(inputs[i]));
	ok &= pl_json_push(cJSON_AddArrayToObject(op, "outputs"), cJSON_CreateString(output));
	if (attrs)
		ok &= pl_json_add(op, "attrs", attrs);
	if (!ok)
		return graph_oom(g, op);
	return pl_json_push(cJSON_GetObjectItemCaseSensitive(g->doc, "ops"), op)
	           ? changed(g)
	           : graph_oom(g, NULL);
}

int planner_graph_strategy(planner_graph *g, const char *opname, int ninputs, const int *dims,
                           const int64_t *splits)
{
	static const char fn[] = "planner_graph_strategy";
	if (!graph_ok(g))
		return PLANNER_EINVAL;
	pl_err *err = &g->ctx->err;
	if (!opname)
		return null_arg(err, fn, "op", "an op name");
	if (!dims)
		return null_arg(err, fn, "dims", "an array of ninputs tuple lengths");
	if (!splits)
		return null_arg(err, fn, "splits", "an array of split counts");
	cJSON *op = NULL, *it;
	cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive(g->doc, "ops")) {
		const char *n = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, "name"));
		if (n && !strcmp(n, opname))
			op = it;
	}
	if (!op)
		return graph_fail(g, fn, "an op added before; no op", opname);
	if (ninputs < 1 || ninputs > PL_MAX_OP_INPUTS)
		return code(pl_err_set(err, PL_EINVAL,
		                       "%s: %s: op '%s': ninputs %d: expected one tuple per input, "
		                       "1 to %d",
		                       fn, g->where, opname, ninputs, PL_MAX_OP_INPUTS));
	/* every count and entry checked before splits is read past them */
	for (int i = 0, at = 0; i < ninputs; i++) {
		if (dims[i] < 0 || dims[i] > PL_MAX_RANK)
			return code(
			    pl_err_set(err, PL_EINVAL,
			               "%s: %s: op '%s': dims[%d] %d: expected 0 to %d split "
			               "counts (the input's rank)",
			               fn, g->where, opname, i, dims[i], PL_MAX_RANK));
		for (int d = 0; d < dims[i]; d++, at++)
			if (splits[at] < 1 || splits[at] > MAX_DIM)
				return code(pl_err_set(
				    err, PL_EINVAL,
				    "%s: %s: op '%s': splits[%d] %lld (input %d, dimension %d): "
				    "expected a split count from 1 to 9e15 (how many slices)",
				    fn, g->where, opname, at, (long long)splits[at], i, d));
	}
	cJSON *s = cJSON_CreateArray();
	int ok = s != NULL;
	for (int i = 0, at = 0; i < ninputs; i++) {
		cJSON *tuple = cJSON_CreateArray();
		ok &= tuple != NULL;
		for (int d = 0; d < dims[i]; d++)
			ok &= pl_json_push(tuple, cJSON_CreateNumber((double)splits[at + d]));
		at += dims[i];
		ok &= pl_json_push(s, tuple);
	}
	if (!ok)
		return graph_oom(g, s);
	cJSON_DeleteItemFromObjectCaseSensitive(op, "strategy");
	changed(g);
	return pl_json_add(op, "strategy", s) ? 0 : graph_oom(g, NULL);
}

int planner_graph_output(planner_graph *g, const char *tensor)
{
	if (!graph_ok(g))
		return PLANNER_EINVAL;
	if (!tensor)
		return null_arg(&g->ctx->err, "planner_graph_output", "tensor", "a tensor name");
	if (!*tensor)
		return graph_fail(g, "planner_graph_output", "a tensor name; got", tensor);
	return pl_json_push(cJSON_GetObjectItemCaseSensitive(g->doc, "outputs"),
	                    cJSON_CreateString(tensor))
	           ? changed(g)
	           : graph_oom(g, NULL);
}

/* Imports the model as the file loader does (shapes, op rules, checks); the
 * messages go to err, the context of the call. */
static pl_status graph_import(const planner_graph *pg, pl_err *err, pl_graph **out)
{
	char *text = cJSON_PrintUnformatted(pg->doc);
	if (!text)
		return pl_err_set(err, PL_ENOMEM, "out of memory");
	pl_status st = pl_graph_load_json(out, text, strlen(text), pg->where, err);
	free(text);
	if (!st && pg->sha256[0]) /* the file's, not its reprint's */
		memcpy((*out)->sha256, pg->sha256, sizeof pg->sha256);
	return st;
}

int planner_graph_load(planner_ctx *ctx, const char *path, planner_graph **out)
{
	static const char fn[] = "planner_graph_load";
	pl_graph *g = NULL;
	if (out)
		*out = NULL;
	if (!ctx_ok(ctx))
		return PLANNER_EINVAL;
	if (!path)
		return null_arg(&ctx->err, fn, "path", "a file name");
	if (!out)
		return null_arg(&ctx->err, fn, "out", "where to put the graph");
	/* the loader's checks and messages; the graph keeps the JSON it came from */
	pl_status st = pl_graph_load_file(&g, path, &ctx->err);
	if (st)
		return code(st);
	/* the document without the keys the format does not have (warned of, never
	 * built: memory as the model's, not the file's) */
	cJSON *doc = NULL;
	st = pl_graph_doc(g, &doc, &ctx->err);
	char sha[sizeof g->sha256];
	memcpy(sha, g->sha256, sizeof sha);
	pl_graph_free(g);
	if (st)
		return code(st);
	if (!(*out = graph_wrap(ctx, doc, path)))
		return code(PL_ENOMEM);
	memcpy((*out)->sha256, sha, sizeof sha);
	return 0;
}

int planner_graph_save(planner_graph *g, const char *path)
{
	if (!graph_ok(g))
		return PLANNER_EINVAL;
	if (!path)
		return null_arg(&g->ctx->err, "planner_graph_save", "path", "a file name or \"-\"");
	pl_graph *ig = NULL;
	pl_status st = graph_import(g, &g->ctx->err, &ig);
	pl_graph_free(ig);
	if (st)
		return code(st);
	char *text = cJSON_Print(g->doc);
	if (!text)
		return code(pl_err_set(&g->ctx->err, PL_ENOMEM, "out of memory"));
	st = pl_output_write(path, text, &g->ctx->err);
	free(text);
	return code(st);
}

void planner_graph_free(planner_graph *g)
{
	if (!graph_ok(g))
		return;
	cJSON_Delete(g->doc);
	free(g->where);
	ctx_unref(g->ctx);
	g->tag = TAG_FREED;
	free(g);
}

/* ---- plans ---- */

/* A plan holds no reference to its context or graph. */
struct planner_plan {
	uint32_t tag;
	cJSON *ck;
	pl_ckpt_doc doc; /* ck, typed: what the getters read */
	char *json;
	int64_t rank; /* global_rank at planning time */
};

static pl_status read_json(planner_ctx *ctx, const char *path, cJSON **out)
{
	char *text;
	size_t len;
	pl_status st = pl_read_file(path, &text, &len, &ctx->err);
	if (st)
		return st;
	st = pl_json_parse(text, len, path, out, &ctx->err);
	free(text);
	return st;
}

static int plan_ok(const planner_plan *p)
{
	return p && p->tag == TAG_PLAN;
}

/* *out: a plan of the checkpoint *ck and its text *text (its typed view
 * read), which it then owns (both set to NULL); on failure they stay the
 * caller's. The view is read from the text parsed back, not from *ck:
 * cJSON prints a double with 15 digits when they read back within an ulp,
 * so a number can differ in its last bit between the two, and the plan's
 * numbers are the text's wherever they are read. */
static pl_status plan_wrap(planner_ctx *ctx, cJSON **ck, char **text, planner_plan **out)
{
	cJSON *back = cJSON_Parse(*text);
	if (!back)
		return pl_err_set(&ctx->err, PL_ENOMEM, "out of memory");
	planner_plan *plan = pl_calloc(1, sizeof *plan);
	if (!plan) {
		cJSON_Delete(back);
		return pl_err_set(&ctx->err, PL_ENOMEM, "out of memory");
	}
	pl_status st = pl_ckpt_doc_read(back, &plan->doc, &ctx->err);
	if (st) {
		pl_ckpt_doc_free(&plan->doc);
		free(plan);
		cJSON_Delete(back);
		return st;
	}
	cJSON_Delete(*ck);
	plan->tag = TAG_PLAN;
	plan->ck = back;
	plan->json = *text;
	plan->rank = get_ll(ctx, K_GLOBAL_RANK, 0);
	*out = plan;
	*ck = NULL;
	*text = NULL;
	return PL_OK;
}

int planner_plan_new(planner_ctx *ctx, planner_graph *pg, planner_plan **out)
{
	static const char fn[] = "planner_plan_new";
	pl_cluster cl;
	pl_graph *g = NULL;
	cJSON *loaded = NULL, *ck = NULL, *fw_defaults = NULL;
	char *text = NULL;
	if (out)
		*out = NULL;
	if (!ctx_ok(ctx))
		return PLANNER_EINVAL;
	if (!graph_ok(pg))
		return bad_handle(&ctx->err, fn, "g", "graph", pg);
	if (!out)
		return null_arg(&ctx->err, fn, "out", "where to put the plan");
	pl_status st;
	if ((st = ctx_cluster(ctx, &cl)) || (st = graph_import(pg, &ctx->err, &g)))
		goto done;
	const char *load = ctx->val[K_LOAD_FILE];
	if (load && (st = read_json(ctx, load, &loaded)))
		goto done;
	double limit = cl.memory_bytes;
	if (ctx->val[K_MEMORY_LIMIT])
		pl_parse_bytes(ctx->val[K_MEMORY_LIMIT], &limit);
	/* the whole-job dimensions: those set fix theirs (pl_plan_opts_job) */
	pl_job_request jr = PL_JOB_REQUEST_INIT;
	jr.all = !strcmp(get(ctx, K_JOB), "true");
	/* each key set gives its dimension (checked by the key table already) */
	static const struct {
		int key;
		size_t at;
	} dims[] = {{K_PIPELINE_STAGES, offsetof(pl_job_request, stages)},
	            {K_MICRO_BATCH_NUM, offsetof(pl_job_request, micro_batches)},
	            {K_DATA_PARALLEL, offsetof(pl_job_request, dp)},
	            {K_MODEL_PARALLEL, offsetof(pl_job_request, tp)},
	            {K_CONTEXT_PARALLEL, offsetof(pl_job_request, cp)},
	            {K_EXPERT_PARALLEL, offsetof(pl_job_request, ep)},
	            {K_MICRO_BATCH_SIZE, offsetof(pl_job_request, micro_batch_size)},
	            {K_VIRTUAL_STAGES, offsetof(pl_job_request, virtual_stages)}};
	for (size_t i = 0; i < sizeof dims / sizeof *dims; i++)
		if (ctx->val[dims[i].key])
			pl_dim_parse(ctx->val[dims[i].key], 0, 1LL << 62,
			             (pl_dim *)((char *)&jr + dims[i].at));
	if (ctx->val[K_PARALLEL_OPTIMIZER]) {
		if (strcmp(get(ctx, K_PARALLEL_OPTIMIZER), "true"))
			jr.zero = pl_dim_value(0);
		else
			pl_dim_parse(get(ctx, K_SHARD_LEVEL), 0, 3, &jr.zero);
	}
	if (ctx->val[K_RECOMPUTE]) {
		const char *rc = get(ctx, K_RECOMPUTE);
		jr.recompute =
		    strcmp(rc, "auto") ? pl_dim_value(pl_recompute_parse(rc)) : pl_dim_auto();
	}
	if (ctx->val[K_OVERLAP])
		jr.overlap = pl_dim_value(!strcmp(get(ctx, K_OVERLAP), "true"));
	if (ctx->val[K_TP_OVERLAP])
		jr.tp_overlap = pl_dim_value(!strcmp(get(ctx, K_TP_OVERLAP), "true"));
	if (ctx->val[K_PARAM_OVERLAP])
		jr.param_overlap = pl_dim_value(!strcmp(get(ctx, K_PARAM_OVERLAP), "true"));
	if (ctx->val[K_MAX_TP])
		pl_dim_parse(get(ctx, K_MAX_TP), 0, 1LL << 62, &jr.max_tp);
	if (ctx->val[K_SEQ_PARALLEL])
		jr.seq_parallel = pl_dim_value(!strcmp(get(ctx, K_SEQ_PARALLEL), "true"));
	jr.fastest = !strcmp(get(ctx, K_FASTEST), "true");
	pl_plan_opts po = {.mode = mode_name(get(ctx, K_SEARCH_MODE)),
	                   .so = {.memory_limit = limit},
	                   .keep = loaded,
	                   .keep_where = load};
	double t0 = pl_now(), tlimit = 0;
	if (ctx->val[K_TIME_LIMIT])
		po.so.time_limit_s = tlimit = strtod(ctx->val[K_TIME_LIMIT], NULL);
	if ((st = pl_plan_opts_job(&po, &jr, 1, &ctx->err))) {
		pl_err_prefix(&ctx->err, "set_auto_parallel_context");
		goto done;
	}
	/* a framework's pricing defaults (as search --framework), overlap_grad_reduce,
	 * tp_comm_overlap and overlap_param_gather set kept */
	if (ctx->val[K_FRAMEWORK] &&
	    (st = pl_export_defaults(
	         ctx->val[K_FRAMEWORK],
	         (ctx->val[K_OVERLAP] ? 1u << PL_FW_PRICE_OVERLAP : 0) |
	             (ctx->val[K_TP_OVERLAP] ? 1u << PL_FW_PRICE_TP_OVERLAP : 0) |
	             (ctx->val[K_PARAM_OVERLAP] ? 1u << PL_FW_PRICE_PARAM_OVERLAP : 0) |
	             (ctx->val[K_CP_EXCHANGE] ? 1u << PL_FW_PRICE_CP_EXCHANGE : 0),
	         &cl, &jr, &fw_defaults, &ctx->err)))
		goto done;
	st = ctx->val[K_FRAMEWORK]
	         ? pl_export_search(g, &cl, &po, &jr, ctx->val[K_FRAMEWORK], &ck, NULL, &ctx->err)
	         : pl_plan_search(g, &cl, &po, &ck, NULL, &ctx->err);
	/* as planner search: the default search's space is the whole job's */
	if (!ctx->val[K_FRAMEWORK] && !ctx->val[K_SEARCH_MODE]) {
		po.so.time_limit_s = pl_time_left(t0, tlimit);
		st = pl_plan_whole_job(g, &cl, &po, &jr, 1, st, &ck, NULL, &ctx->err);
	}
	if (st)
		goto done;
	if (fw_defaults) {
		cJSON_AddItemToObject(cJSON_GetObjectItemCaseSensitive(ck, "search"),
		                      "framework_defaults", fw_defaults);
		fw_defaults = NULL;
	}
	/* as planner search: without a search mode set, plain data parallelism
	 * where it is within PL_JOB_SIMPLER of the plan */
	if (!ctx->val[K_FRAMEWORK] && !ctx->val[K_SEARCH_MODE] && !loaded && !jr.fastest) {
		po.so.time_limit_s = pl_time_left(t0, tlimit); /* what is left */
		pl_plan_prefer_dp(g, &cl, &po, &jr, &ck, NULL);
	}
	if (!(text = cJSON_Print(ck))) {
		st = pl_err_set(&ctx->err, PL_ENOMEM, "out of memory");
		goto done;
	}
	const char *save = ctx->val[K_SAVE_FILE];
	if (save && (st = pl_output_write(save, text, &ctx->err)))
		goto done;
	st = plan_wrap(ctx, &ck, &text, out);
done:
	free(text);
	cJSON_Delete(ck);
	cJSON_Delete(fw_defaults);
	cJSON_Delete(loaded);
	pl_graph_free(g);
	return code(st);
}

const char *planner_plan_json(const planner_plan *p)
{
	return plan_ok(p) ? p->json : NULL;
}

/* the plan's summary, typed (NAN for a number it lacks) */
static pl_ckpt_view view_of(const planner_plan *p)
{
	return p->doc.v;
}

double planner_plan_step_seconds(const planner_plan *p)
{
	return plan_ok(p) ? view_of(p).step_s : NAN;
}

double planner_plan_memory_bytes(const planner_plan *p)
{
	return plan_ok(p) ? view_of(p).peak_mem_bytes : NAN;
}

double planner_plan_mfu(const planner_plan *p)
{
	return plan_ok(p) ? view_of(p).mfu : NAN;
}

double planner_plan_flops_per_step(const planner_plan *p)
{
	return plan_ok(p) ? view_of(p).model_flops : NAN;
}

double planner_plan_tflops_per_device(const planner_plan *p)
{
	return plan_ok(p) ? view_of(p).model_tflops : NAN;
}

double planner_plan_tokens_per_second_per_device(const planner_plan *p)
{
	return plan_ok(p) ? view_of(p).tokens_per_s : NAN;
}

int planner_plan_step_band(const planner_plan *p, double *lo, double *hi)
{
	if (lo)
		*lo = NAN;
	if (hi)
		*hi = NAN;
	if (!plan_ok(p) || !lo || !hi)
		return PLANNER_EINVAL;
	pl_ckpt_view v = view_of(p);
	*lo = v.band_lo;
	*hi = v.band_hi;
	return PLANNER_OK;
}

/* Whether kind names a kind of group a plan can have. */
static int group_kind(const char *kind)
{
	static const char *const known[] = {"dp", "tp", "pp", "ep", "sp", "cp"};
	for (size_t i = 0; kind && i < sizeof known / sizeof *known; i++)
		if (!strcmp(kind, known[i]))
			return 1;
	return 0;
}

/* The group of `rank` in groups.<kind>: its index in *gs, or -1. */
static int find_group(const planner_plan *p, const char *kind, int64_t rank,
                      const pl_ckpt_groups **gs)
{
	*gs = pl_ckpt_doc_groups(&p->doc, kind);
	for (int k = 0; *gs && k < (*gs)->n; k++)
		for (int i = (*gs)->start[k]; i < (*gs)->start[k + 1]; i++) {
			double r = (*gs)->ranks[i]; /* NAN: not a number */
			if (!isnan(r) && (int64_t)r == rank)
				return k;
		}
	return -1;
}

int64_t planner_plan_degree(const planner_plan *p, const char *kind)
{
	if (!plan_ok(p) || !group_kind(kind))
		return -1;
	const pl_ckpt_groups *gs;
	int k = find_group(p, kind, 0, &gs);
	return k >= 0 ? pl_ckpt_group_size(gs, k) : 1;
}

int64_t planner_plan_group(const planner_plan *p, const char *kind, int64_t rank, int64_t *ranks,
                           size_t max)
{
	if (!plan_ok(p) || !group_kind(kind) || (max && !ranks))
		return -1;
	if (rank < 0)
		rank = p->rank;
	const pl_ckpt_groups *gs;
	int k = find_group(p, kind, rank, &gs);
	if (k < 0) { /* no pp groups in a one-stage plan: the rank alone */
		if (find_group(p, "dp", rank, &gs) < 0)
			return -1;
		if (max)
			ranks[0] = rank;
		return 1;
	}
	size_t n = 0;
	for (int i = gs->start[k]; i < gs->start[k + 1]; i++) {
		double r = gs->ranks[i];
		if (n < max)
			ranks[n] = isnan(r) ? 0 : (int64_t)r;
		n++;
	}
	return (int64_t)n;
}

/* Sets o.key to v, replacing what is there; v is taken (freed when it cannot
 * be added). 0 when out of memory (v NULL, or not added). */
static int json_put(cJSON *o, const char *key, cJSON *v)
{
	if (!v)
		return 0;
	if (cJSON_GetObjectItemCaseSensitive(o, key))
		return cJSON_ReplaceItemInObjectCaseSensitive(o, key, v) ? 1 : (cJSON_Delete(v), 0);
	return pl_json_add(o, key, v);
}

/* A checkpoint's cluster block for cl, as pl_ckpt_build writes it. */
static cJSON *cluster_block(const pl_cluster *cl)
{
	cJSON *c = cJSON_CreateObject();
	if (!c || !cJSON_AddStringToObject(c, "name", cl->name) ||
	    !cJSON_AddNumberToObject(c, "devices", (double)pl_cluster_devices_total(cl)) ||
	    !cJSON_AddNumberToObject(c, "nodes", (double)cl->nodes) ||
	    !cJSON_AddNumberToObject(c, "devices_per_node", (double)cl->devices_per_node) ||
	    !json_put(c, "description", pl_cluster_to_json(cl))) {
		cJSON_Delete(c);
		return NULL;
	}
	return c;
}

int planner_plan_cost(planner_ctx *ctx, planner_graph *pg, const char *ckpt_json,
                      planner_plan **out)
{
	static const char fn[] = "planner_plan_cost", where[] = "planner_plan_cost: ckpt_json";
	pl_cluster cl;
	pl_graph *g = NULL;
	cJSON *ck = NULL;
	char *text = NULL;
	pl_plancost pc;
	double bubble;
	pl_plan_detail d = {0};
	if (out)
		*out = NULL;
	if (!ctx_ok(ctx))
		return PLANNER_EINVAL;
	if (!graph_ok(pg))
		return bad_handle(&ctx->err, fn, "g", "graph", pg);
	if (!ckpt_json)
		return null_arg(&ctx->err, fn, "ckpt_json", "a strategy checkpoint's text");
	if (!out)
		return null_arg(&ctx->err, fn, "out", "where to put the plan");
	pl_status st;
	if ((st = graph_import(pg, &ctx->err, &g)) ||
	    (st = pl_json_parse(ckpt_json, strlen(ckpt_json), where, &ck, &ctx->err)))
		goto done;
	if (!cJSON_IsObject(ck)) {
		st = pl_err_set(&ctx->err, PL_EINVAL, "%s: expected a JSON object", where);
		goto done;
	}
	/* the context's cluster when it names one (as cost --cluster), else the plan's */
	int own = ctx->val[K_CLUSTER] || ctx->val[K_DEVICE_NUM];
	if ((st = pl_plan_check_model(g, ck, where, &ctx->err)) ||
	    (st = own ? ctx_cluster(ctx, &cl) : pl_plan_cluster(ck, where, &cl, &ctx->err)) ||
	    (!own && (st = ctx_reserve(ctx, &cl))) ||
	    (st = pl_plan_price(g, ck, where, &cl, &pc, &bubble, &d, NULL, &ctx->err)))
		goto done;
	double limit = cl.memory_bytes;
	if (ctx->val[K_MEMORY_LIMIT])
		pl_parse_bytes(ctx->val[K_MEMORY_LIMIT], &limit);
	if (!(limit > 0)) /* "none" */
		limit = INFINITY;
	/* the model it is priced for, which a trainer checks */
	cJSON *model = cJSON_CreateObject();
	if (model && (!cJSON_AddStringToObject(model, "name", g->name) ||
	              !cJSON_AddStringToObject(model, "sha256", g->sha256))) {
		cJSON_Delete(model);
		model = NULL;
	}
	if (!json_put(ck, "model", model) ||
	    !json_put(ck, "cost", pl_plan_cost_json(g, &cl, &pc, bubble, &d, limit)) ||
	    (own && !json_put(ck, "cluster", cluster_block(&cl))) || !(text = cJSON_Print(ck))) {
		st = pl_err_set(&ctx->err, PL_ENOMEM, "out of memory");
		goto done;
	}
	st = plan_wrap(ctx, &ck, &text, out);
done:
	pl_plan_detail_free(&d);
	free(text);
	cJSON_Delete(ck);
	pl_graph_free(g);
	return code(st);
}

void planner_plan_free(planner_plan *p)
{
	if (!plan_ok(p))
		return;
	pl_ckpt_doc_free(&p->doc);
	cJSON_Delete(p->ck);
	free(p->json);
	p->tag = TAG_FREED;
	free(p);
}

/* ---- export ---- */

int planner_export(planner_ctx *ctx, const char *ckpt_json, const char *framework, int flags,
                   char *text, size_t size, size_t *len)
{
	static const char fn[] = "planner_export";
	if (len)
		*len = 0;
	if (!ctx_ok(ctx))
		return PLANNER_EINVAL;
	if (!ckpt_json)
		return null_arg(&ctx->err, fn, "ckpt_json", "a strategy checkpoint's text");
	if (!framework)
		return null_arg(&ctx->err, fn, "framework", "a framework name");
	if (size && !text)
		return null_arg(&ctx->err, fn, "text", "room for size bytes");
	if (flags & ~(PLANNER_EXPORT_JSON | PLANNER_EXPORT_FP16))
		return code(pl_err_set(&ctx->err, PL_EINVAL,
		                       "%s: flags %d: expected PLANNER_EXPORT_JSON, "
		                       "PLANNER_EXPORT_FP16, both or 0",
		                       fn, flags));
	char *made = NULL;
	pl_status st = pl_export_text(ckpt_json, strlen(ckpt_json), "ckpt_json", framework,
	                              ((flags & PLANNER_EXPORT_JSON) ? PL_EXPORT_JSON : 0) |
	                                  ((flags & PLANNER_EXPORT_FP16) ? PL_EXPORT_FP16 : 0),
	                              &made, &ctx->err);
	if (st) {
		pl_err_prefix(&ctx->err, "%s", fn);
		return code(st);
	}
	size_t n = strlen(made);
	if (size) {
		size_t k = n < size ? n : size - 1;
		memcpy(text, made, k);
		text[k] = 0;
	}
	if (len)
		*len = n;
	free(made);
	return 0;
}

/* ---- training ---- */

/* A trainer copies what it needs from its graph and plan; it holds a
 * reference to its context, where its messages go. */
struct planner_trainer {
	uint32_t tag;
	planner_ctx *ctx;
	long long steps; /* steps run, for messages */
	pl_graph *g;
	pl_graph *gm; /* a whole-job plan's micro-batch graph, which the executor runs */
	pl_backend *be;
	pl_exec *ex;
};

static int trainer_ok(const planner_trainer *tr)
{
	return tr && tr->tag == TAG_TRAINER;
}

void planner_trainer_free(planner_trainer *tr)
{
	if (!trainer_ok(tr))
		return;
	pl_exec_free(tr->ex);
	if (tr->be)
		pl_backend_free(tr->be);
	pl_graph_free(tr->g);
	pl_graph_free(tr->gm);
	ctx_unref(tr->ctx);
	tr->tag = TAG_FREED;
	free(tr);
}

int planner_trainer_new(planner_ctx *ctx, planner_graph *pg, const planner_plan *plan,
                        planner_trainer **out)
{
	static const char fn[] = "planner_trainer_new";
	planner_trainer *tr = NULL;
	pl_run_plan run = {0};
	pl_cluster cl;
	pl_plancost pc;
	double bubble;
	pl_status st;
	if (out)
		*out = NULL;
	if (!ctx_ok(ctx))
		return PLANNER_EINVAL;
	if (!graph_ok(pg))
		return bad_handle(&ctx->err, fn, "g", "graph", pg);
	if (!plan_ok(plan))
		return bad_handle(&ctx->err, fn, "plan", "plan", plan);
	if (!out)
		return null_arg(&ctx->err, fn, "out", "where to put the trainer");
	if (!(tr = pl_calloc(1, sizeof *tr)))
		return code(pl_err_set(&ctx->err, PL_ENOMEM, "out of memory"));
	tr->tag = TAG_TRAINER;
	tr->ctx = ctx;
	ctx->refs++;
	if ((st = graph_import(pg, &ctx->err, &tr->g)))
		goto done;
	const char *sha = plan->doc.v.model_sha256;
	if (!sha) { /* a trainer runs only a plan made for its model */
		st = pl_err_set(&ctx->err, PL_EINVAL,
		                "%s: %s: the plan names no model (model.sha256); it may "
		                "have been made for another model",
		                fn, pg->where);
		goto done;
	}
	if ((st = pl_plan_check_model(tr->g, plan->ck, "planner_trainer_new: plan", &ctx->err)))
		goto done;
	if ((st = pl_plan_cluster(plan->ck, pg->where, &cl, &ctx->err)) ||
	    (st = pl_plan_price(tr->g, plan->ck, "plan", &cl, &pc, &bubble, NULL, &run, &ctx->err)))
		goto done;
	int64_t D = pl_cluster_devices_total(&cl);
	if ((st = strcmp(get(ctx, K_BACKEND), "cuda")
	              ? pl_backend_cpu(&tr->be, D, 0, &ctx->err)
	              : pl_backend_cuda(&tr->be, D, 0, &ctx->err))) {
		pl_err_prefix(&ctx->err, "%s", fn);
		goto done;
	}
	pl_exec_opts eo = {
	    .seed = (uint64_t)get_ll(ctx, K_SEED, 1),
	    .optimizer = strcmp(get(ctx, K_OPTIMIZER), "sgd") ? PL_OPT_ADAM : PL_OPT_SGD,
	    .lr = ctx->val[K_LEARNING_RATE] ? strtod(ctx->val[K_LEARNING_RATE], NULL) : 0,
	    .grad_scale = strcmp(get(ctx, K_GRADIENTS_MEAN), "true") ? 1 : 1.0 / (double)D,
	    .fail_rank = -1,
	    .fail_op = -1,
	    .local_batchnorm = cl.bn_local}; /* the plan's batch norm, as priced */
	st = pl_exec_new_job(&tr->ex, pl_run_plan_graph(&run, tr->g), D, run.splits, &run.job,
	                     tr->be, &eo, &ctx->err);
	pl_splits_free(pl_run_plan_graph(&run, tr->g), run.splits);
	run.splits = NULL;
	tr->gm = run.g; /* the executor reads the micro-batch graph: kept with it */
	run.g = NULL;
	if (!st) {
		*out = tr;
		tr = NULL;
	}
done:
	pl_run_plan_free(&run, tr ? tr->g : NULL); /* what was not handed over */
	planner_trainer_free(tr);
	return code(st);
}

int planner_train_step(planner_trainer *tr, double *loss)
{
	if (!trainer_ok(tr))
		return PLANNER_EINVAL;
	double l;
	pl_status st = pl_exec_step(tr->ex, 1, &l, &tr->ctx->err);
	if (st)
		return code(st);
	tr->steps++;
	if (loss)
		*loss = l;
	/* as `planner run` does: a diverged run is not a result. The update
	 * has been applied by now (the loss is read after it). */
	if (!isfinite(l))
		return code(pl_err_set(&tr->ctx->err, PL_EINVAL,
		                       "planner_train_step: step %lld: the loss is %s: training "
		                       "diverged, or a param holds non-finite values (as written "
		                       "by planner_trainer_write); this step's update was applied",
		                       tr->steps,
		                       isnan(l) ? "NaN"
		                       : l > 0  ? "+inf"
		                                : "-inf"));
	return 0;
}

static int param_of(planner_trainer *tr, const char *fn, const char *name, const void *values,
                    size_t n)
{
	if (!name) {
		null_arg(&tr->ctx->err, fn, "param", "a param name");
		return -1;
	}
	if (!values) {
		null_arg(&tr->ctx->err, fn, "values", "an array of the param's elements");
		return -1;
	}
	int t = pl_graph_find_tensor(tr->g, name);
	if (t < 0 || tr->g->tensors[t].role != PL_ROLE_PARAM) {
		pl_err_set(&tr->ctx->err, PL_EINVAL, "%s: '%s' is not a param of the model", fn,
		           name);
		return -1;
	}
	size_t want = (size_t)pl_tensor_elems(&tr->g->tensors[t]);
	if (n != want) {
		pl_err_set(&tr->ctx->err, PL_EINVAL, "%s: param '%s' has %zu elements, not %zu", fn,
		           name, want, n);
		return -1;
	}
	return t;
}

int planner_trainer_read(planner_trainer *tr, const char *param, float *values, size_t n)
{
	if (!trainer_ok(tr))
		return PLANNER_EINVAL;
	int t = param_of(tr, "planner_trainer_read", param, values, n);
	if (t < 0)
		return PLANNER_EINVAL;
	if (pl_exec_read(tr->ex, t, 0, values))
		return code(
		    pl_err_set(&tr->ctx->err, PL_EDEVICE,
		               "planner_trainer_read: '%s': the %s backend failed to copy it",
		               param, pl_backend_name(tr->be)));
	return 0;
}

int planner_trainer_write(planner_trainer *tr, const char *param, const float *values, size_t n)
{
	if (!trainer_ok(tr))
		return PLANNER_EINVAL;
	int t = param_of(tr, "planner_trainer_write", param, values, n);
	if (t < 0)
		return PLANNER_EINVAL;
	if (pl_exec_write(tr->ex, t, values))
		return code(
		    pl_err_set(&tr->ctx->err, PL_EDEVICE,
		               "planner_trainer_write: '%s': the %s backend failed to copy it",
		               param, pl_backend_name(tr->be)));
	return 0;
}
