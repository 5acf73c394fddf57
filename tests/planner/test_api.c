/* The auto-parallel API (planner/planner.h), through the shared library and
 * its public header only. A model built in code plans like the same model
 * loaded from a file; the strategy checkpoint files are written and read
 * back as annotations; every rank is in one group of each kind; training
 * under a sharded plan gives the single-device losses, and gradients_mean
 * divides the update by device_num; bad keys, values, models and plans fail
 * with status 2 and a message that names them. Every function survives a
 * NULL for each pointer argument and counts out of range (status 2, NULL,
 * NaN or -1, and a message naming the function and the argument); a
 * non-finite loss is an error; a context may be freed before its graphs and
 * trainers, and handles of another kind are refused. A given plan is priced
 * as planner cost prices it, and written as a framework's arguments as
 * planner export writes them. */
#include <ctype.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <cjson/cJSON.h>

#include "planner/planner.h"

static void set(planner_ctx *ctx, const char *k, const char *v)
{
	if (planner_set_auto_parallel_context(ctx, k, v))
		fail_msg("%s=%s: %s", k, v, planner_errmsg(ctx));
}

static void ok(planner_ctx *ctx, int rc)
{
	if (rc)
		fail_msg("status %d: %s", rc, planner_errmsg(ctx));
}

static void has_msg(planner_ctx *ctx, const char *part)
{
	if (!strstr(planner_errmsg(ctx), part))
		fail_msg("message '%s' does not name '%s'", planner_errmsg(ctx), part);
}

/* examples/tiny-mlp.json, built in code; batch rows of input */
static planner_graph *tiny_mlp(planner_ctx *ctx, int64_t batch)
{
	planner_graph *g = planner_graph_new(ctx, "mlp", "float32");
	assert_non_null(g);
	const int64_t x[2] = {batch, 64}, lab[1] = {batch}, w0[2] = {64, 64}, b0[1] = {64},
	              wo[2] = {64, 8};
	ok(ctx, planner_graph_tensor(g, "x", "input", NULL, 2, x));
	ok(ctx, planner_graph_tensor(g, "labels", "input", "int32", 1, lab));
	ok(ctx, planner_graph_tensor(g, "w0", "param", NULL, 2, w0));
	ok(ctx, planner_graph_tensor(g, "b0", "param", NULL, 1, b0));
	ok(ctx, planner_graph_tensor(g, "wout", "param", NULL, 2, wo));
	const char *fc0[] = {"x", "w0"}, *bias0[] = {"fc0.out", "b0"}, *relu0[] = {"bias0.out"},
	           *out[] = {"relu0.out", "wout"}, *loss[] = {"logits", "labels"};
	ok(ctx, planner_graph_op(g, "MatMul", "fc0", fc0, 2, "fc0.out", NULL));
	ok(ctx, planner_graph_op(g, "Add", "bias0", bias0, 2, "bias0.out", NULL));
	ok(ctx, planner_graph_op(g, "Relu", "relu0", relu0, 1, "relu0.out", NULL));
	ok(ctx, planner_graph_op(g, "MatMul", "out", out, 2, "logits", NULL));
	ok(ctx, planner_graph_op(g, "SoftmaxCrossEntropy", "loss", loss, 2, "loss.out", NULL));
	ok(ctx, planner_graph_output(g, "loss.out"));
	return g;
}

static char *source_path(const char *rel)
{
	const char *src = getenv("PL_SOURCE_DIR");
	char *p = malloc(4096);
	snprintf(p, 4096, "%s/%s", src ? src : ".", rel);
	return p;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	rewind(f);
	char *s = malloc((size_t)n + 1);
	assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
	s[n] = 0;
	fclose(f);
	return s;
}

/* the word w in s, not inside a longer identifier */
static int has_word(const char *s, const char *w)
{
	size_t n = strlen(w);
	for (const char *p = strstr(s, w); p; p = strstr(p + 1, w)) {
		int before = p > s && (isalnum((unsigned char)p[-1]) || p[-1] == '_');
		int after = isalnum((unsigned char)p[n]) || p[n] == '_';
		if (!before && !after)
			return 1;
	}
	return 0;
}

/* One list of context keys: the ones the refusal of an unknown key names (the
 * API's own table) are each documented in planner.h and in docs/api.md. */
static void test_context_keys_documented(void **state)
{
	(void)state;
	planner_ctx *ctx = planner_ctx_new();
	assert_int_equal(planner_set_auto_parallel_context(ctx, "no_such_key", "1"), PLANNER_EINVAL);
	const char *msg = planner_errmsg(ctx);
	const char *list = strstr(msg, "the keys are ");
	assert_non_null(list);
	char *hpath = source_path("planner/planner.h"), *dpath = source_path("docs/api.md");
	char *h = slurp(hpath), *d = slurp(dpath);
	int nkeys = 0;
	char key[64];
	for (const char *p = list + strlen("the keys are "); *p;) {
		size_t n = strcspn(p, ", ");
		assert_true(n > 0 && n < sizeof key);
		memcpy(key, p, n);
		key[n] = 0;
		nkeys++;
		if (!has_word(h, key))
			fail_msg("context key '%s' is not documented in planner/planner.h", key);
		char quoted[80];
		snprintf(quoted, sizeof quoted, "`%s`", key);
		if (!strstr(d, quoted))
			fail_msg("context key '%s' is not documented in docs/api.md", key);
		p += n;
		p += strspn(p, ", ");
	}
	assert_true(nkeys >= 28);
	free(h);
	free(d);
	free(hpath);
	free(dpath);
	planner_ctx_free(ctx);
}

static cJSON *strategies(const planner_plan *p)
{
	cJSON *ck = cJSON_Parse(planner_plan_json(p));
	assert_non_null(ck);
	cJSON *items = cJSON_DetachItemFromObject(ck, "parallel_strategy_item");
	cJSON_Delete(ck);
	assert_non_null(items);
	return items;
}

static void test_context_keys(void **state)
{
	(void)state;
	planner_ctx *ctx = planner_ctx_new();
	assert_string_equal(planner_get_auto_parallel_context(ctx, "device_num"), "8");
	assert_string_equal(planner_get_auto_parallel_context(ctx, "search_mode"), "dp");
	assert_null(planner_get_auto_parallel_context(ctx, "no_such_key"));
	set(ctx, "device_num", "16");
	set(ctx, "search_mode", "recursive_programming");
	assert_string_equal(planner_get_auto_parallel_context(ctx, "device_num"), "16");
	static const char *const bad[][2] = {{"device_num", "0"},
	                                     {"device_num", "eight"},
	                                     {"global_rank", "-1"},
	                                     {"search_mode", "greedy"},
	                                     {"memory_limit", "80Q"},
	                                     {"pipeline_stages", "0"},
	                                     {"micro_batch_num", "x"},
	                                     {"recompute", "some"},
	                                     {"gradients_mean", "yes"},
	                                     {"optimizer_shard_level", "4"},
	                                     {"backend", "tpu"},
	                                     {"learning_rate", "-1"},
	                                     {"enable_parallel_optimizer", "1"},
	                                     {"optimizer", "lamb"},
	                                     {"time_limit", "0"},
	                                     {"max_tensor_parallel", "-1"}};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		assert_int_equal(planner_set_auto_parallel_context(ctx, bad[i][0], bad[i][1]),
		                 PLANNER_EINVAL);
		has_msg(ctx, bad[i][0]);
		has_msg(ctx, bad[i][1]);
	}
	/* a rejected value leaves the old one */
	assert_string_equal(planner_get_auto_parallel_context(ctx, "device_num"), "16");
	assert_int_equal(planner_set_auto_parallel_context(ctx, "device_count", "8"),
	                 PLANNER_EINVAL);
	has_msg(ctx, "unknown key 'device_count'");
	has_msg(ctx, "device_num");
	planner_reset_auto_parallel_context(ctx);
	assert_string_equal(planner_get_auto_parallel_context(ctx, "device_num"), "8");
	char v[32];
	snprintf(v, sizeof v, "%d.%d.%d", PLANNER_VERSION_MAJOR, PLANNER_VERSION_MINOR,
	         PLANNER_VERSION_PATCH);
	assert_string_equal(planner_version(), v);
	planner_ctx_free(ctx);
}

/* the same model from code and from examples/tiny-mlp.json: same plan */
static void test_built_equals_loaded(void **state)
{
	(void)state;
	planner_ctx *ctx = planner_ctx_new();
	set(ctx, "device_num", "4");
	set(ctx, "memory_limit", "56K");
	set(ctx, "memory_reserve", "0"); /* a tiny model on a tiny device */
	planner_graph *built = tiny_mlp(ctx, 64), *loaded;
	char *path = source_path("examples/tiny-mlp.json");
	ok(ctx, planner_graph_load(ctx, path, &loaded));
	planner_plan *a, *b;
	ok(ctx, planner_plan_new(ctx, built, &a));
	ok(ctx, planner_plan_new(ctx, loaded, &b));
	cJSON *sa = strategies(a), *sb = strategies(b);
	assert_true(cJSON_Compare(sa, sb, 1));
	assert_true(planner_plan_step_seconds(a) == planner_plan_step_seconds(b));
	assert_true(planner_plan_memory_bytes(a) <= 56e3);
	/* utilisation: the checkpoint's numbers; an MLP of floats has no token ids */
	cJSON *ck = cJSON_Parse(planner_plan_json(a));
	const cJSON *cost = cJSON_GetObjectItem(ck, "cost");
	assert_true(planner_plan_mfu(a) > 0 && planner_plan_mfu(a) < 1);
	assert_true(planner_plan_mfu(a) == cJSON_GetNumberValue(cJSON_GetObjectItem(cost, "mfu")));
	assert_true(planner_plan_tflops_per_device(a) ==
	            cJSON_GetNumberValue(cJSON_GetObjectItem(cost, "model_tflops_per_device")));
	assert_true(isnan(planner_plan_tokens_per_second_per_device(a)));
	/* the band a measured step is expected in: the checkpoint's, around the step */
	double lo = 0, hi = 0, step = planner_plan_step_seconds(a);
	assert_int_equal(planner_plan_step_band(a, &lo, &hi), PLANNER_OK);
	const cJSON *band = cJSON_GetObjectItem(cost, "step_band_seconds");
	assert_true(lo == cJSON_GetNumberValue(cJSON_GetArrayItem(band, 0)) &&
	            hi == cJSON_GetNumberValue(cJSON_GetArrayItem(band, 1)));
	assert_true(lo > 0 && lo < step && step < hi);
	/* the checkpoint's number (test_cli checks per-op FLOPs against hand counts) */
	assert_true(planner_plan_flops_per_step(a) > 0 &&
	            planner_plan_flops_per_step(a) ==
	                cJSON_GetNumberValue(cJSON_GetObjectItem(cost, "model_flops_per_step")));
	cJSON_Delete(ck);
	/* the limit binds: the plan is not the unconstrained one */
	set(ctx, "memory_limit", "none");
	planner_plan *c;
	ok(ctx, planner_plan_new(ctx, built, &c));
	assert_true(planner_plan_memory_bytes(c) > 56e3);
	cJSON_Delete(sa);
	cJSON_Delete(sb);
	planner_plan_free(a);
	planner_plan_free(b);
	planner_plan_free(c);
	planner_graph_free(built);
	planner_graph_free(loaded);
	free(path);
	planner_ctx_free(ctx);
}

/* strategy_ckpt_save_file holds the plan; strategy_ckpt_load_file's ops keep
 * their strategies, the others are searched */
/* Keys the format does not have (a framework's metadata, a typo) are warned
 * of by the loader and not kept in the graph's document: planner_graph_save
 * writes the model without them, and the graph plans as the file does. */
static void test_unknown_keys_not_kept(void **state)
{
	(void)state;
	char dir[] = "/tmp/planner-api-XXXXXX", in[64], out[64];
	assert_non_null(mkdtemp(dir));
	snprintf(in, sizeof in, "%s/in.json", dir);
	snprintf(out, sizeof out, "%s/out.json", dir);
	FILE *f = fopen(in, "w");
	assert_non_null(f);
	fputs("{\"format\": \"planner.model/1\", \"producer\": {\"name\": \"torch\"},\n"
	      " \"tensors\": {\"x\": {\"shape\": [8, 64], \"role\": \"input\", \"note\": [1, 2]},\n"
	      "             \"w\": {\"shape\": [64, 64], \"role\": \"param\"}},\n"
	      " \"ops\": [{\"name\": \"mm\", \"type\": \"MatMul\", \"inputs\": [\"x\", \"w\"],\n"
	      "          \"outputs\": [\"y\"], \"comment\": \"first\"}]}\n",
	      f);
	fclose(f);
	planner_ctx *ctx = planner_ctx_new();
	set(ctx, "device_num", "2");
	planner_graph *g;
	ok(ctx, planner_graph_load(ctx, in, &g));
	ok(ctx, planner_graph_save(g, out));
	char *text = slurp(out);
	cJSON *doc = cJSON_Parse(text);
	assert_non_null(doc);
	assert_null(cJSON_GetObjectItem(doc, "producer"));
	assert_null(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "tensors"), "x"),
	                                "note"));
	assert_null(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "ops"), 0),
	                                "comment"));
	/* what the format has is all there */
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "ops")), 1);
	assert_non_null(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "tensors"), "w"));
	planner_plan *p;
	ok(ctx, planner_plan_new(ctx, g, &p));
	planner_plan_free(p);
	cJSON_Delete(doc);
	free(text);
	planner_graph_free(g);
	planner_ctx_free(ctx);
	unlink(in);
	unlink(out);
	rmdir(dir);
}

static void test_checkpoint_files(void **state)
{
	(void)state;
	char dir[] = "/tmp/planner-api-XXXXXX", save[64], load[64];
	assert_non_null(mkdtemp(dir));
	snprintf(save, sizeof save, "%s/plan.json", dir);
	snprintf(load, sizeof load, "%s/load.json", dir);
	planner_ctx *ctx = planner_ctx_new();
	set(ctx, "device_num", "4");
	set(ctx, "strategy_ckpt_save_file", save);
	planner_graph *g = tiny_mlp(ctx, 64);
	planner_plan *p;
	ok(ctx, planner_plan_new(ctx, g, &p));
	FILE *f = fopen(save, "r");
	assert_non_null(f);
	static char text[1 << 20];
	size_t n = fread(text, 1, sizeof text - 1, f);
	fclose(f);
	text[n] = 0;
	assert_string_equal(text, planner_plan_json(p));
	/* fc0 pinned to its weight's columns cut 4 ways ((1,1),(1,4)), unlike the
	 * free plan (data parallel) */
	cJSON *items = strategies(p);
	cJSON *want = cJSON_Parse("[[1, 1], [1, 4]]");
	assert_false(cJSON_Compare(
	    cJSON_GetObjectItem(cJSON_GetObjectItem(items, "fc0"), "parallel_strategy"), want, 1));
	f = fopen(load, "w");
	fputs("{\"parallel_strategy_item\": {\"fc0\": {\"parallel_strategy\": [[1, 1], [1, 4]]}}}",
	      f);
	fclose(f);
	set(ctx, "strategy_ckpt_load_file", load);
	planner_plan *q;
	ok(ctx, planner_plan_new(ctx, g, &q));
	cJSON *qi = strategies(q);
	assert_true(cJSON_Compare(
	    cJSON_GetObjectItem(cJSON_GetObjectItem(qi, "fc0"), "parallel_strategy"), want, 1));
	/* a load file that does not parse: 2, naming it */
	f = fopen(load, "w");
	fputs("{", f);
	fclose(f);
	planner_plan *r = NULL;
	assert_int_equal(planner_plan_new(ctx, g, &r), PLANNER_EINVAL);
	assert_null(r);
	has_msg(ctx, load);
	cJSON_Delete(want);
	cJSON_Delete(qi);
	cJSON_Delete(items);
	planner_plan_free(p);
	planner_plan_free(q);
	planner_graph_free(g);
	planner_ctx_free(ctx);
	unlink(save);
	unlink(load);
	rmdir(dir);
}

/* a strategy annotated in code is kept; search_mode propagate spreads it */
static void test_annotation_in_code(void **state)
{
	(void)state;
	planner_ctx *ctx = planner_ctx_new();
	set(ctx, "device_num", "4");
	set(ctx, "search_mode", "sharding_propagation");
	planner_graph *g = tiny_mlp(ctx, 64);
	const int dims[2] = {2, 2};
	const int64_t dp4[4] = {4, 1, 1, 1};
	ok(ctx, planner_graph_strategy(g, "fc0", 2, dims, dp4));
	planner_plan *p;
	ok(ctx, planner_plan_new(ctx, g, &p));
	cJSON *items = strategies(p);
	cJSON *want = cJSON_Parse("[[4, 1], [1, 1]]"), *relu = cJSON_Parse("[[4, 1]]");
	assert_true(cJSON_Compare(
	    cJSON_GetObjectItem(cJSON_GetObjectItem(items, "fc0"), "parallel_strategy"), want, 1));
	/* the element-wise op after it follows without communication */
	assert_true(cJSON_Compare(
	    cJSON_GetObjectItem(cJSON_GetObjectItem(items, "relu0"), "parallel_strategy"), relu,
	    1));
	assert_int_equal(planner_graph_strategy(g, "nope", 2, dims, dp4), PLANNER_EINVAL);
	has_msg(ctx, "'nope'");
	cJSON_Delete(want);
	cJSON_Delete(relu);
	cJSON_Delete(items);
	planner_plan_free(p);
	planner_graph_free(g);
	planner_ctx_free(ctx);
}

/* on 2 nodes x 8, every rank is in exactly one dp, tp and pp group, its
 * groups contain it, and the degrees multiply to 16 */
static void test_groups(void **state)
{
	(void)state;
	planner_ctx *ctx = planner_ctx_new();
	set(ctx, "cluster", "h100x8:2");
	set(ctx, "device_num", "16");
	set(ctx, "global_rank", "5");
	planner_graph *g = tiny_mlp(ctx, 64);
	planner_plan *p;
	ok(ctx, planner_plan_new(ctx, g, &p));
	const char *kinds[] = {"dp", "tp", "pp"};
	int64_t prod = 1;
	for (int k = 0; k < 3; k++) {
		int64_t deg = planner_plan_degree(p, kinds[k]);
		prod *= deg;
		int64_t seen[16] = {0}, ranks[16];
		for (int64_t r = 0; r < 16; r++) {
			int64_t n = planner_plan_group(p, kinds[k], r, ranks, 16);
			assert_int_equal(n, deg);
			int in = 0;
			for (int64_t i = 0; i < n; i++) {
				assert_true(ranks[i] >= 0 && ranks[i] < 16);
				in |= ranks[i] == r;
				if (ranks[i] == r)
					seen[r]++;
			}
			assert_true(in);
		}
		for (int64_t r = 0; r < 16; r++)
			assert_int_equal(seen[r], 1);
	}
	assert_int_equal(prod, 16);
	int64_t mine[16], five[16];
	int64_t n = planner_plan_group(p, "dp", -1, mine, 16);
	assert_int_equal(planner_plan_group(p, "dp", 5, five, 16), n);
	assert_memory_equal(mine, five, sizeof(int64_t) * (size_t)n);
	/* a dense model has no expert groups: each rank alone; unknown kinds fail */
	assert_int_equal(planner_plan_group(p, "ep", 3, mine, 16), 1);
	assert_int_equal(mine[0], 3);
	assert_int_equal(planner_plan_group(p, "sp?", 0, mine, 16), -1);
	assert_int_equal(planner_plan_group(p, "dp", 16, mine, 16), -1);
	planner_plan_free(p);
	/* global_rank beyond the devices, device_num against the cluster */
	set(ctx, "global_rank", "16");
	assert_int_equal(planner_plan_new(ctx, g, &p), PLANNER_EINVAL);
	has_msg(ctx, "global_rank 16");
	set(ctx, "global_rank", "0");
	set(ctx, "device_num", "8");
	assert_int_equal(planner_plan_new(ctx, g, &p), PLANNER_EINVAL);
	has_msg(ctx, "device_num 8");
	/* an x8 preset with another count of GPUs a node: 2 nodes of 4 A100s */
	set(ctx, "cluster", "a100x4:2");
	ok(ctx, planner_plan_new(ctx, g, &p));
	planner_plan_free(p);
	set(ctx, "device_num", "16");
	assert_int_equal(planner_plan_new(ctx, g, &p), PLANNER_EINVAL);
	has_msg(ctx, "device_num 16");
	planner_graph_free(g);
	planner_ctx_free(ctx);
}

/* MindFormers' keys state a fixed configuration: data_parallel 2,
 * model_parallel 2, pipeline_stage 4 on 2 nodes x 8 (batch 64: 2 ranks x 8
 * micro-batches x 4) is what the command line's --dp 2 --tp 2 --pp 4 gives,
 * in Megatron's rank order (tp fastest, then dp, then pp). */
static void test_mindformers_keys(void **state)
{
	(void)state;
	planner_ctx *ctx = planner_ctx_new();
	set(ctx, "cluster", "h100x8:2");
	set(ctx, "data_parallel", "2");
	set(ctx, "model_parallel", "2");
	set(ctx, "pipeline_stage", "2");
	set(ctx, "micro_batch_num", "8");
	assert_string_equal(planner_get_auto_parallel_context(ctx, "pipeline_stages"), "2");
	set(ctx, "pipeline_stage", "4");
	planner_graph *g = tiny_mlp(ctx, 64);
	planner_plan *p;
	ok(ctx, planner_plan_new(ctx, g, &p));
	assert_int_equal(planner_plan_degree(p, "dp"), 2);
	assert_int_equal(planner_plan_degree(p, "tp"), 2);
	assert_int_equal(planner_plan_degree(p, "pp"), 4);
	int64_t grp[16];
	assert_int_equal(planner_plan_group(p, "tp", 5, grp, 16), 2);
	assert_true(grp[0] == 4 && grp[1] == 5);
	assert_int_equal(planner_plan_group(p, "dp", 5, grp, 16), 2);
	assert_true(grp[0] == 5 && grp[1] == 7);
	assert_int_equal(planner_plan_group(p, "pp", 5, grp, 16), 4);
	assert_true(grp[0] == 1 && grp[1] == 5 && grp[2] == 9 && grp[3] == 13);
	cJSON *ck = cJSON_Parse(planner_plan_json(p));
	assert_int_equal(cJSON_GetNumberValue(cJSON_GetObjectItem(
	                     cJSON_GetObjectItem(ck, "pipeline"), "micro_batches")),
	                 8);
	cJSON_Delete(ck);
	planner_plan_free(p);
	/* recompute selective on a model without attention: refused, saying why */
	set(ctx, "recompute", "selective");
	assert_int_equal(planner_plan_new(ctx, g, &p), PLANNER_EINVAL);
	has_msg(ctx, "no attention core");
	set(ctx, "recompute", "none");
	/* what the options model refuses, the API refuses in its own words */
	set(ctx, "micro_batch_size", "4");
	assert_int_equal(planner_plan_new(ctx, g, &p), PLANNER_EINVAL);
	has_msg(ctx, "micro_batch_size and micro_batch_num both fix the micro-batches");
	planner_reset_auto_parallel_context(ctx);
	set(ctx, "device_num", "8");
	/* use_seq_parallel false: the whole-job search without sequence
	 * parallelism, as the checkpoint says */
	set(ctx, "use_seq_parallel", "false");
	ok(ctx, planner_plan_new(ctx, g, &p));
	ck = cJSON_Parse(planner_plan_json(p));
	assert_true(cJSON_IsFalse(
	    cJSON_GetObjectItem(cJSON_GetObjectItem(ck, "pipeline"), "sequence_parallel")));
	cJSON_Delete(ck);
	planner_plan_free(p);
	assert_int_equal(planner_set_auto_parallel_context(ctx, "use_seq_parallel", "maybe"),
	                 PLANNER_EINVAL);
	has_msg(ctx, "use_seq_parallel 'maybe': expected true or false");
	set(ctx, "use_seq_parallel", "true");
	set(ctx, "expert_parallel", "2");
	assert_int_equal(planner_plan_new(ctx, g, &p), PLANNER_EINVAL);
	has_msg(ctx, "no experts");
	planner_graph_free(g);
	planner_ctx_free(ctx);
}

static void train(planner_ctx *ctx, planner_graph *g, int steps, double *loss, float *w0)
{
	planner_plan *p;
	planner_trainer *tr;
	ok(ctx, planner_plan_new(ctx, g, &p));
	ok(ctx, planner_trainer_new(ctx, g, p, &tr));
	for (int s = 0; s < steps; s++)
		ok(ctx, planner_train_step(tr, &loss[s]));
	if (w0)
		ok(ctx, planner_trainer_read(tr, "w0", w0, 64 * 64));
	planner_trainer_free(tr);
	planner_plan_free(p);
}

/* a tensor-parallel plan (forced by the memory limit) trains as one device;
 * gradients_mean on 4 ranks with SGD equals one device at a quarter of the
 * learning rate */
static void test_training(void **state)
{
	(void)state;
	enum { STEPS = 4 };
	planner_ctx *ctx = planner_ctx_new();
	planner_graph *g = tiny_mlp(ctx, 64);
	double l4[STEPS], l1[STEPS];
	float *w4 = malloc(sizeof(float) * 64 * 64), *w1 = malloc(sizeof(float) * 64 * 64);
	set(ctx, "device_num", "4");
	set(ctx, "memory_limit", "56K");
	set(ctx, "memory_reserve", "0"); /* a tiny model on a tiny device */
	train(ctx, g, STEPS, l4, w4);
	planner_reset_auto_parallel_context(ctx);
	set(ctx, "device_num", "1");
	train(ctx, g, STEPS, l1, w1);
	for (int s = 0; s < STEPS; s++)
		assert_true(fabs(l4[s] - l1[s]) <= 1e-5 * fabs(l1[s]));
	assert_true(l1[STEPS - 1] < l1[0]); /* it learns */

	planner_reset_auto_parallel_context(ctx);
	set(ctx, "device_num", "4");
	set(ctx, "optimizer", "sgd");
	set(ctx, "learning_rate", "0.4");
	set(ctx, "gradients_mean", "true");
	train(ctx, g, STEPS, l4, w4);
	planner_reset_auto_parallel_context(ctx);
	set(ctx, "device_num", "1");
	set(ctx, "optimizer", "sgd");
	set(ctx, "learning_rate", "0.1");
	train(ctx, g, STEPS, l1, w1);
	double worst = 0;
	for (int i = 0; i < 64 * 64; i++)
		worst = fmax(worst, fabs(w4[i] - w1[i]));
	assert_true(worst <= 1e-5);
	for (int s = 0; s < STEPS; s++)
		assert_true(fabs(l4[s] - l1[s]) <= 1e-5 * fabs(l1[s]));
	/* and without it, the same learning rate is not the same training */
	set(ctx, "learning_rate", "0.4");
	train(ctx, g, STEPS, l1, w1);
	worst = 0;
	for (int i = 0; i < 64 * 64; i++)
		worst = fmax(worst, fabs(w4[i] - w1[i]));
	assert_true(worst > 1e-4);

	/* reading: a name that is not a param, a wrong count */
	planner_plan *p;
	planner_trainer *tr;
	ok(ctx, planner_plan_new(ctx, g, &p));
	ok(ctx, planner_trainer_new(ctx, g, p, &tr));
	assert_int_equal(planner_trainer_read(tr, "x", w1, 64 * 64), PLANNER_EINVAL);
	has_msg(ctx, "'x' is not a param");
	assert_int_equal(planner_trainer_read(tr, "w0", w1, 10), PLANNER_EINVAL);
	has_msg(ctx, "4096");
	/* writing a param is what the next step trains from */
	for (int i = 0; i < 64 * 64; i++)
		w1[i] = 0;
	ok(ctx, planner_trainer_write(tr, "w0", w1, 64 * 64));
	ok(ctx, planner_trainer_read(tr, "w0", w4, 64 * 64));
	assert_memory_equal(w1, w4, sizeof(float) * 64 * 64);
	planner_trainer_free(tr);
	planner_plan_free(p);
	free(w4);
	free(w1);
	planner_graph_free(g);
	planner_ctx_free(ctx);
}

static void test_errors(void **state)
{
	(void)state;
	planner_ctx *ctx = planner_ctx_new();
	set(ctx, "device_num", "4");
	planner_graph *g = tiny_mlp(ctx, 64), *other = tiny_mlp(ctx, 32);
	const int64_t s2[2] = {4, 4};
	/* building: a tensor twice, a bad role, attrs that are not an object */
	assert_int_equal(planner_graph_tensor(g, "w0", "param", NULL, 2, s2), PLANNER_EINVAL);
	has_msg(ctx, "'w0'");
	assert_int_equal(planner_graph_tensor(g, "w9", "weight", NULL, 2, s2), PLANNER_EINVAL);
	has_msg(ctx, "'weight'");
	const char *in[] = {"x"};
	assert_int_equal(planner_graph_op(g, "Relu", "r", in, 1, "r.out", "[1]"), PLANNER_EINVAL);
	has_msg(ctx, "attrs");
	/* a model whose op names a missing tensor: planning says which op */
	planner_graph *bad = planner_graph_new(ctx, "bad", NULL);
	const int64_t xs[2] = {8, 8};
	ok(ctx, planner_graph_tensor(bad, "x", "input", NULL, 2, xs));
	const char *mm[] = {"x", "nowhere"};
	ok(ctx, planner_graph_op(bad, "MatMul", "mm", mm, 2, "y", NULL));
	ok(ctx, planner_graph_output(bad, "y"));
	planner_plan *p = NULL;
	assert_int_equal(planner_plan_new(ctx, bad, &p), PLANNER_EINVAL);
	has_msg(ctx, "mm");
	has_msg(ctx, "nowhere");
	has_msg(ctx, "model 'bad' (built in code)");
	assert_int_equal(planner_graph_save(bad, "/tmp/never-written.json"), PLANNER_EINVAL);
	assert_int_equal(access("/tmp/never-written.json", F_OK), -1);
	/* a plan for another model */
	planner_plan *q;
	planner_trainer *tr = NULL;
	ok(ctx, planner_plan_new(ctx, other, &q));
	assert_int_equal(planner_trainer_new(ctx, g, q, &tr), PLANNER_EINVAL);
	assert_null(tr);
	has_msg(ctx, "another model");
	planner_plan_free(q);
	/* a pipelined plan runs (1F1B over its stages), and one of micro-batches and ZeRO */
	set(ctx, "memory_limit", "none");
	static const char *const jobs[][3] = {{"2", "auto", "false"}, {"1", "2", "true"}};
	for (int k = 0; k < 2; k++) {
		set(ctx, "pipeline_stages", jobs[k][0]);
		set(ctx, "micro_batch_num", jobs[k][1]);
		set(ctx, "enable_parallel_optimizer", jobs[k][2]);
		ok(ctx, planner_plan_new(ctx, g, &q));
		assert_int_equal(planner_plan_degree(q, "pp"), k ? 1 : 2);
		ok(ctx, planner_trainer_new(ctx, g, q, &tr));
		double l;
		ok(ctx, planner_train_step(tr, &l));
		assert_true(isfinite(l));
		planner_trainer_free(tr);
		tr = NULL;
		planner_plan_free(q);
	}
	set(ctx, "micro_batch_num", "auto");
	set(ctx, "enable_parallel_optimizer", "false");
	/* whole-job search with propagate */
	set(ctx, "search_mode", "sharding_propagation");
	assert_int_equal(planner_plan_new(ctx, g, &q), PLANNER_EINVAL);
	has_msg(ctx, "propagate");
	/* no plan fits: 3 */
	planner_reset_auto_parallel_context(ctx);
	set(ctx, "device_num", "4");
	set(ctx, "memory_limit", "1K");
	set(ctx, "memory_reserve", "0");
	assert_int_equal(planner_plan_new(ctx, g, &q), PLANNER_EINFEASIBLE);
	has_msg(ctx, "memory");
	planner_graph_free(bad);
	planner_graph_free(other);
	planner_graph_free(g);
	planner_ctx_free(ctx);
}

/* call fails with PLANNER_EINVAL and ctx's message has part */
#define EINVAL_MSG(ctx, call, part)                                                                \
	do {                                                                                       \
		assert_int_equal((call), PLANNER_EINVAL);                                          \
		has_msg((ctx), (part));                                                            \
	} while (0)

/* every public function, NULL in each pointer argument in turn */
static void test_null_arguments(void **state)
{
	(void)state;
	/* no context: fixed answers, no crash */
	assert_string_equal(planner_errmsg(NULL), "planner_errmsg: ctx: the context is NULL");
	planner_ctx_free(NULL);
	planner_graph_free(NULL);
	planner_plan_free(NULL);
	planner_trainer_free(NULL);
	planner_reset_auto_parallel_context(NULL);
	assert_int_equal(planner_set_auto_parallel_context(NULL, "device_num", "4"),
	                 PLANNER_EINVAL);
	assert_null(planner_get_auto_parallel_context(NULL, "device_num"));
	assert_null(planner_graph_new(NULL, "m", NULL));
	planner_graph *g = (planner_graph *)1;
	char *path = source_path("examples/tiny-mlp.json");
	assert_int_equal(planner_graph_load(NULL, path, &g), PLANNER_EINVAL);
	assert_null(g);

	planner_ctx *ctx = planner_ctx_new();
	set(ctx, "device_num", "4");
	EINVAL_MSG(ctx, planner_set_auto_parallel_context(ctx, NULL, "4"),
	           "planner_set_auto_parallel_context: key: expected a key name, got NULL");
	EINVAL_MSG(ctx, planner_set_auto_parallel_context(ctx, "device_num", NULL),
	           "planner_set_auto_parallel_context: value: expected a string, got NULL");
	assert_string_equal(planner_get_auto_parallel_context(ctx, "device_num"), "4");
	assert_null(planner_get_auto_parallel_context(ctx, NULL));
	has_msg(ctx, "planner_get_auto_parallel_context: key: expected a key name, got NULL");
	assert_null(planner_graph_new(ctx, NULL, NULL));
	has_msg(ctx, "planner_graph_new: name: expected a model name, got NULL");

	/* models */
	g = tiny_mlp(ctx, 64);
	const int64_t s2[2] = {4, 4};
	assert_int_equal(planner_graph_tensor(NULL, "t", "param", NULL, 2, s2), PLANNER_EINVAL);
	EINVAL_MSG(ctx, planner_graph_tensor(g, NULL, "param", NULL, 2, s2),
	           "planner_graph_tensor: name: expected a tensor name, got NULL");
	EINVAL_MSG(ctx, planner_graph_tensor(g, "t", NULL, NULL, 2, s2),
	           "planner_graph_tensor: role: expected input, param or const, got NULL");
	EINVAL_MSG(ctx, planner_graph_tensor(g, "t", "param", NULL, 2, NULL),
	           "planner_graph_tensor: shape: expected an array of rank dimensions, got NULL");
	ok(ctx, planner_graph_tensor(g, "scalar", "const", NULL, 0, NULL)); /* rank 0: no shape */
	const char *in2[] = {"x", "w0"}, *in_null[] = {"x", NULL};
	assert_int_equal(planner_graph_op(NULL, "MatMul", "m", in2, 2, "m.out", NULL),
	                 PLANNER_EINVAL);
	EINVAL_MSG(ctx, planner_graph_op(g, NULL, "m", in2, 2, "m.out", NULL),
	           "planner_graph_op: type: expected an op type, got NULL");
	EINVAL_MSG(ctx, planner_graph_op(g, "MatMul", NULL, in2, 2, "m.out", NULL),
	           "planner_graph_op: name: expected an op name, got NULL");
	EINVAL_MSG(ctx, planner_graph_op(g, "MatMul", "m", NULL, 2, "m.out", NULL),
	           "planner_graph_op: inputs: expected an array of ninputs tensor names, got NULL");
	EINVAL_MSG(ctx, planner_graph_op(g, "MatMul", "m", in_null, 2, "m.out", NULL),
	           "planner_graph_op: model 'mlp' (built in code): op 'm': inputs[1]: expected a "
	           "tensor name, got NULL");
	EINVAL_MSG(ctx, planner_graph_op(g, "MatMul", "m", in2, 2, NULL, NULL),
	           "planner_graph_op: output: expected a tensor name, got NULL");
	const int dims[2] = {2, 2};
	const int64_t dp4[4] = {4, 1, 1, 1};
	assert_int_equal(planner_graph_strategy(NULL, "fc0", 2, dims, dp4), PLANNER_EINVAL);
	EINVAL_MSG(ctx, planner_graph_strategy(g, NULL, 2, dims, dp4),
	           "planner_graph_strategy: op: expected an op name, got NULL");
	EINVAL_MSG(ctx, planner_graph_strategy(g, "fc0", 2, NULL, dp4),
	           "planner_graph_strategy: dims: expected an array of ninputs tuple lengths, "
	           "got NULL");
	EINVAL_MSG(ctx, planner_graph_strategy(g, "fc0", 2, dims, NULL),
	           "planner_graph_strategy: splits: expected an array of split counts, got NULL");
	assert_int_equal(planner_graph_output(NULL, "loss.out"), PLANNER_EINVAL);
	EINVAL_MSG(ctx, planner_graph_output(g, NULL),
	           "planner_graph_output: tensor: expected a tensor name, got NULL");
	planner_graph *loaded = (planner_graph *)1;
	EINVAL_MSG(ctx, planner_graph_load(ctx, NULL, &loaded),
	           "planner_graph_load: path: expected a file name, got NULL");
	assert_null(loaded);
	EINVAL_MSG(ctx, planner_graph_load(ctx, path, NULL),
	           "planner_graph_load: out: expected where to put the graph, got NULL");
	assert_int_equal(planner_graph_save(NULL, "-"), PLANNER_EINVAL);
	EINVAL_MSG(ctx, planner_graph_save(g, NULL),
	           "planner_graph_save: path: expected a file name or \"-\", got NULL");

	/* plans */
	planner_plan *p = (planner_plan *)1;
	assert_int_equal(planner_plan_new(NULL, g, &p), PLANNER_EINVAL);
	assert_null(p);
	EINVAL_MSG(ctx, planner_plan_new(ctx, NULL, &p),
	           "planner_plan_new: g: expected a graph, got NULL");
	EINVAL_MSG(ctx, planner_plan_new(ctx, g, NULL),
	           "planner_plan_new: out: expected where to put the plan, got NULL");
	ok(ctx, planner_plan_new(ctx, g, &p));
	assert_null(planner_plan_json(NULL));
	assert_true(isnan(planner_plan_step_seconds(NULL)));
	assert_true(isnan(planner_plan_memory_bytes(NULL)));
	assert_true(isnan(planner_plan_mfu(NULL)));
	assert_true(isnan(planner_plan_flops_per_step(NULL)));
	assert_true(isnan(planner_plan_tflops_per_device(NULL)));
	assert_true(isnan(planner_plan_tokens_per_second_per_device(NULL)));
	double blo = 0, bhi = 0;
	assert_int_equal(planner_plan_step_band(NULL, &blo, &bhi), PLANNER_EINVAL);
	assert_true(isnan(blo) && isnan(bhi));
	assert_int_equal(planner_plan_step_band(p, NULL, &bhi), PLANNER_EINVAL);
	assert_int_equal(planner_plan_degree(NULL, "dp"), -1);
	assert_int_equal(planner_plan_degree(p, NULL), -1);
	int64_t ranks[4];
	assert_int_equal(planner_plan_group(NULL, "dp", 0, ranks, 4), -1);
	assert_int_equal(planner_plan_group(p, NULL, 0, ranks, 4), -1);
	assert_int_equal(planner_plan_group(p, "dp", 0, NULL, 4), -1);
	/* no room asked for: the size alone */
	assert_int_equal(planner_plan_group(p, "dp", 0, NULL, 0), planner_plan_degree(p, "dp"));

	/* training */
	planner_trainer *tr = (planner_trainer *)1;
	assert_int_equal(planner_trainer_new(NULL, g, p, &tr), PLANNER_EINVAL);
	assert_null(tr);
	EINVAL_MSG(ctx, planner_trainer_new(ctx, NULL, p, &tr),
	           "planner_trainer_new: g: expected a graph, got NULL");
	EINVAL_MSG(ctx, planner_trainer_new(ctx, g, NULL, &tr),
	           "planner_trainer_new: plan: expected a plan, got NULL");
	EINVAL_MSG(ctx, planner_trainer_new(ctx, g, p, NULL),
	           "planner_trainer_new: out: expected where to put the trainer, got NULL");
	ok(ctx, planner_trainer_new(ctx, g, p, &tr));
	double l = 0;
	assert_int_equal(planner_train_step(NULL, &l), PLANNER_EINVAL);
	ok(ctx, planner_train_step(tr, NULL)); /* the loss is optional */
	float *w = calloc(64 * 64, sizeof(float));
	assert_int_equal(planner_trainer_read(NULL, "w0", w, 64 * 64), PLANNER_EINVAL);
	EINVAL_MSG(ctx, planner_trainer_read(tr, NULL, w, 64 * 64),
	           "planner_trainer_read: param: expected a param name, got NULL");
	EINVAL_MSG(ctx, planner_trainer_read(tr, "w0", NULL, 64 * 64),
	           "planner_trainer_read: values: expected an array of the param's elements, got "
	           "NULL");
	assert_int_equal(planner_trainer_write(NULL, "w0", w, 64 * 64), PLANNER_EINVAL);
	EINVAL_MSG(ctx, planner_trainer_write(tr, NULL, w, 64 * 64),
	           "planner_trainer_write: param: expected a param name, got NULL");
	EINVAL_MSG(ctx, planner_trainer_write(tr, "w0", NULL, 64 * 64),
	           "planner_trainer_write: values: expected an array of the param's elements, "
	           "got NULL");
	free(w);
	free(path);
	planner_trainer_free(tr);
	planner_plan_free(p);
	planner_graph_free(g);
	planner_ctx_free(ctx);
}

/* planner_plan_cost prices a given checkpoint as planner cost does (the
 * searched plan at its own step; strategies alone on the context's cluster;
 * a plan that does not fit priced with fits false; a bad strategy or another
 * model's plan refused), and the priced plan trains; planner_export writes a
 * plan as Megatron-LM's arguments, snprintf-style, and refuses what the
 * framework cannot state */
/* framework: the search plans only what that framework states; every plan it
 * returns exports to it (planner_export is the check), records the space it
 * is optimal over, and an unknown framework is refused by the setter */
static void test_framework(void **state)
{
	(void)state;
	const char *fws[] = {"megatron", "nemo", "torchtitan", "deepspeed"};
	char *path = source_path("tests/fixtures/models/gpt-tiny.json");
	for (size_t i = 0; i < sizeof fws / sizeof *fws; i++) {
		planner_ctx *ctx = planner_ctx_new();
		set(ctx, "device_num", "4");
		set(ctx, "framework", fws[i]);
		planner_graph *g = NULL;
		planner_plan *p = NULL;
		ok(ctx, planner_graph_load(ctx, path, &g));
		ok(ctx, planner_plan_new(ctx, g, &p));
		size_t len = 0;
		ok(ctx, planner_export(ctx, planner_plan_json(p), fws[i], 0, NULL, 0, &len));
		assert_true(len > 0);
		cJSON *ck = cJSON_Parse(planner_plan_json(p));
		const cJSON *s = cJSON_GetObjectItem(ck, "search");
		assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(s, "framework")), fws[i]);
		assert_non_null(strstr(cJSON_GetStringValue(cJSON_GetObjectItem(s, "space")),
		                       "can state"));
		cJSON_Delete(ck);
		planner_plan_free(p);
		planner_graph_free(g);
		planner_ctx_free(ctx);
	}
	planner_ctx *ctx = planner_ctx_new();
	assert_int_equal(planner_set_auto_parallel_context(ctx, "framework", "megatrn"),
	                 PLANNER_EINVAL);
	assert_non_null(strstr(planner_errmsg(ctx), "megatron-deepspeed or mindformers (only"));
	planner_ctx_free(ctx);
	free(path);
}

/* gemm_dtype fp8: the plan is priced with FP8 GEMMs and its checkpoint's
 * cluster says so (what planner cost reprices); on an A100, which has no
 * FP8 tensor cores, planning fails naming the GPU */
static planner_graph *bf16_mlp(planner_ctx *ctx)
{
	planner_graph *g = planner_graph_new(ctx, "mlp", "bfloat16");
	assert_non_null(g);
	const int64_t x[2] = {16384, 2048}, lab[1] = {16384}, w0[2] = {2048, 8192},
	              w1[2] = {8192, 2048}, wo[2] = {2048, 8};
	ok(ctx, planner_graph_tensor(g, "x", "input", NULL, 2, x));
	ok(ctx, planner_graph_tensor(g, "labels", "input", "int32", 1, lab));
	ok(ctx, planner_graph_tensor(g, "w0", "param", NULL, 2, w0));
	ok(ctx, planner_graph_tensor(g, "w1", "param", NULL, 2, w1));
	ok(ctx, planner_graph_tensor(g, "wout", "param", NULL, 2, wo));
	const char *fc0[] = {"x", "w0"}, *relu0[] = {"fc0.out"}, *fc1[] = {"relu0.out", "w1"},
	           *out[] = {"fc1.out", "wout"}, *loss[] = {"logits", "labels"};
	ok(ctx, planner_graph_op(g, "MatMul", "fc0", fc0, 2, "fc0.out", NULL));
	ok(ctx, planner_graph_op(g, "Relu", "relu0", relu0, 1, "relu0.out", NULL));
	ok(ctx, planner_graph_op(g, "MatMul", "fc1", fc1, 2, "fc1.out", NULL));
	ok(ctx, planner_graph_op(g, "MatMul", "out", out, 2, "logits", NULL));
	ok(ctx, planner_graph_op(g, "SoftmaxCrossEntropy", "loss", loss, 2, "loss.out", NULL));
	ok(ctx, planner_graph_output(g, "loss.out"));
	return g;
}

/* The plan of ctx for the bf16 MLP as its checkpoint (the caller's,
 * cJSON_Delete); ctx freed */
static cJSON *mlp_plan_ckpt(planner_ctx *ctx)
{
	planner_graph *g = bf16_mlp(ctx);
	planner_plan *p = NULL;
	ok(ctx, planner_plan_new(ctx, g, &p));
	cJSON *ck = cJSON_Parse(planner_plan_json(p));
	assert_non_null(ck);
	planner_plan_free(p);
	planner_graph_free(g);
	planner_ctx_free(ctx);
	return ck;
}

/* The checkpoint's cluster.description.device.key */
static const char *ckpt_device(const cJSON *ck, const char *key)
{
	const cJSON *dev = cJSON_GetObjectItem(
	    cJSON_GetObjectItem(cJSON_GetObjectItem(ck, "cluster"), "description"), "device");
	return cJSON_GetStringValue(cJSON_GetObjectItem(dev, key));
}

static void test_gemm_dtype(void **state)
{
	(void)state;
	double step[2];
	for (int f8 = 0; f8 <= 1; f8++) {
		planner_ctx *ctx = planner_ctx_new();
		set(ctx, "device_num", "4");
		set(ctx, "search_mode", "rec");
		if (f8)
			set(ctx, "gemm_dtype", "fp8");
		assert_string_equal(planner_get_auto_parallel_context(ctx, "gemm_dtype"),
		                    f8 ? "fp8" : "");
		cJSON *ck = mlp_plan_ckpt(ctx);
		assert_string_equal(ckpt_device(ck, "gemm_dtype"), f8 ? "fp8" : "param");
		step[f8] = cJSON_GetNumberValue(
		    cJSON_GetObjectItem(cJSON_GetObjectItem(ck, "cost"), "step_seconds"));
		cJSON_Delete(ck);
	}
	assert_true(step[1] < step[0]); /* 16384 x 2048 x 8192 GEMMs on 4 devices: faster in FP8 */
	/* torchao's recipes: recorded in the checkpoint by name and priced with
	 * their own casts, every micro-batch: above Transformer Engine's one
	 * cast-transpose an operand, rowwise (a cast along each axis) above
	 * tensorwise */
	static const char *const recipes[] = {"fp8-tensorwise", "fp8-rowwise"};
	double prev = step[1];
	for (int r = 0; r < 2; r++) {
		planner_ctx *ctx = planner_ctx_new();
		set(ctx, "device_num", "4");
		set(ctx, "search_mode", "rec");
		set(ctx, "gemm_dtype", recipes[r]);
		cJSON *ck = mlp_plan_ckpt(ctx);
		assert_string_equal(ckpt_device(ck, "gemm_dtype"), recipes[r]);
		double s = cJSON_GetNumberValue(
		    cJSON_GetObjectItem(cJSON_GetObjectItem(ck, "cost"), "step_seconds"));
		assert_true(s > prev);
		prev = s;
		cJSON_Delete(ck);
	}
	planner_ctx *ctx = planner_ctx_new();
	set(ctx, "cluster", "a100x8");
	set(ctx, "gemm_dtype", "fp8");
	planner_graph *g = bf16_mlp(ctx);
	planner_plan *p = NULL;
	assert_int_equal(planner_plan_new(ctx, g, &p), PLANNER_EINVAL);
	has_msg(ctx, "gemm_dtype");
	has_msg(ctx, "A100-SXM4-40GB has no FP8 tensor cores");
	assert_null(p);
	assert_int_equal(planner_set_auto_parallel_context(ctx, "gemm_dtype", "fp16"),
	                 PLANNER_EINVAL);
	has_msg(ctx, "gemm_dtype");
	planner_graph_free(g);
	planner_ctx_free(ctx);
}

/* cp_exchange: set, read back, recorded in the plan's cluster (what
 * planner cost reprices with); a framework's own exchange where unset
 * (torchtitan: PyTorch's all-gather), the one set kept; a name that is none
 * of them refused naming the key */
static void test_cp_exchange(void **state)
{
	(void)state;
	static const char *const set_to[] = {NULL, "allgather-sync", NULL},
	                         *fw[] = {NULL, NULL, "torchtitan"},
	                         *want[] = {"ring", "allgather-sync", "allgather"};
	for (int i = 0; i < 3; i++) {
		planner_ctx *ctx = planner_ctx_new();
		set(ctx, "device_num", "4");
		if (set_to[i])
			set(ctx, "cp_exchange", set_to[i]);
		if (fw[i])
			set(ctx, "framework", fw[i]);
		assert_string_equal(planner_get_auto_parallel_context(ctx, "cp_exchange"),
		                    set_to[i] ? set_to[i] : "");
		cJSON *ck = mlp_plan_ckpt(ctx);
		assert_string_equal(ckpt_device(ck, "cp_exchange"), want[i]);
		cJSON_Delete(ck);
	}
	planner_ctx *ctx = planner_ctx_new();
	assert_int_equal(planner_set_auto_parallel_context(ctx, "cp_exchange", "p2p"),
	                 PLANNER_EINVAL);
	has_msg(ctx, "cp_exchange");
	planner_ctx_free(ctx);
}

/* An overlap key of the context (tp_comm_overlap, overlap_param_gather), set
 * off and on beside the n settings given: the plan is ranked without the
 * overlap, so the same plan comes back, its step shorter and its checkpoint
 * saying so (pipeline.<key>, what planner cost reprices); not set it reads
 * false, and a bad value is refused naming the key */
static void overlap_key_prices_the_same_plan(const char *key, const char *const (*settings)[2],
                                             int n)
{
	double step[2];
	char *strategy[2];
	for (int on = 0; on <= 1; on++) {
		planner_ctx *ctx = planner_ctx_new();
		for (int k = 0; k < n; k++)
			set(ctx, settings[k][0], settings[k][1]);
		set(ctx, key, on ? "true" : "false");
		assert_string_equal(planner_get_auto_parallel_context(ctx, key),
		                    on ? "true" : "false");
		planner_graph *g = bf16_mlp(ctx);
		planner_plan *p = NULL;
		ok(ctx, planner_plan_new(ctx, g, &p));
		cJSON *ck = cJSON_Parse(planner_plan_json(p));
		const cJSON *ov = cJSON_GetObjectItem(cJSON_GetObjectItem(ck, "pipeline"), key);
		assert_true(on ? cJSON_IsTrue(ov) : !cJSON_IsTrue(ov));
		step[on] = cJSON_GetNumberValue(
		    cJSON_GetObjectItem(cJSON_GetObjectItem(ck, "cost"), "step_seconds"));
		strategy[on] =
		    cJSON_PrintUnformatted(cJSON_GetObjectItem(ck, "parallel_strategy_item"));
		assert_non_null(strategy[on]);
		cJSON_Delete(ck);
		planner_plan_free(p);
		planner_graph_free(g);
		planner_ctx_free(ctx);
	}
	assert_string_equal(strategy[0], strategy[1]);
	assert_true(step[1] < step[0]);
	free(strategy[0]);
	free(strategy[1]);
	planner_ctx *ctx = planner_ctx_new();
	assert_string_equal(planner_get_auto_parallel_context(ctx, key), "false");
	assert_int_equal(planner_set_auto_parallel_context(ctx, key, "maybe"), PLANNER_EINVAL);
	has_msg(ctx, key);
	planner_ctx_free(ctx);
}

/* tp_comm_overlap (search --tp-comm-overlap): the MLP's tensor-parallel
 * all-gathers and reduce-scatters hidden behind its GEMMs on 4 ranks, a
 * framework's defaults keeping the value set */
static void test_tp_comm_overlap(void **state)
{
	(void)state;
	static const char *const s[][2] = {{"device_num", "4"},
	                                    {"model_parallel", "4"},
	                                    {"use_seq_parallel", "true"},
	                                    {"framework", "megatron"}};
	overlap_key_prices_the_same_plan("tp_comm_overlap", s, 4);
}

/* overlap_param_gather (search --overlap-param-gather): on 4 data-parallel
 * ranks at ZeRO 3, the weights' per-micro-batch all-gathers beside the
 * compute */
static void test_overlap_param_gather(void **state)
{
	(void)state;
	static const char *const s[][2] = {{"device_num", "4"},
	                                    {"data_parallel", "4"},
	                                    {"enable_parallel_optimizer", "true"},
	                                    {"optimizer_shard_level", "3"}};
	overlap_key_prices_the_same_plan("overlap_param_gather", s, 4);
}

/* one search: the API plans what `planner search` plans with the same
 * settings, the default search's preference for data parallelism included
 * (gpt-small on 8 devices: data parallel within 2 % of the fastest), and a
 * search mode set gives that searcher's own plan */
static void test_same_plan_as_search(void **state)
{
	(void)state;
	char *path = source_path("examples/gpt-small.json"), cmd[2048];
	const char *cli = getenv("PL_PLANNER_CLI");
	if (!cli) {
		free(path);
		skip();
	}
	char *tmp = strdup("/tmp/pl-api-cli-XXXXXX");
	int fd = mkstemp(tmp);
	assert_true(fd >= 0);
	close(fd);
	snprintf(cmd, sizeof cmd, "%s search %s --devices 8 -o %s > /dev/null 2>&1", cli, path, tmp);
	assert_int_equal(system(cmd), 0);
	FILE *f = fopen(tmp, "r");
	assert_non_null(f);
	static char text[1 << 22];
	size_t n = fread(text, 1, sizeof text - 1, f);
	fclose(f);
	text[n] = 0;
	cJSON *want = cJSON_Parse(text);
	assert_non_null(want);
	planner_ctx *ctx = planner_ctx_new();
	set(ctx, "device_num", "8");
	planner_graph *g = NULL;
	planner_plan *p = NULL, *q = NULL;
	ok(ctx, planner_graph_load(ctx, path, &g));
	ok(ctx, planner_plan_new(ctx, g, &p));
	cJSON *got = cJSON_Parse(planner_plan_json(p));
	assert_true(cJSON_Compare(cJSON_GetObjectItem(got, "parallel_strategy_item"),
	                          cJSON_GetObjectItem(want, "parallel_strategy_item"), 1));
	assert_true(planner_plan_step_seconds(p) ==
	            cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetObjectItem(want, "cost"),
	                                                     "step_seconds")));
	set(ctx, "search_mode", "dp");
	ok(ctx, planner_plan_new(ctx, g, &q));
	assert_true(planner_plan_step_seconds(q) <= planner_plan_step_seconds(p));
	cJSON_Delete(got);
	cJSON_Delete(want);
	planner_plan_free(q);
	planner_plan_free(p);
	/* under a limit the fastest plan's peak is within the memory prediction's
	 * error of: the default keeps a slower plan with room, "fastest" the
	 * fastest, each the plan search writes with and without --fastest */
	planner_ctx_free(ctx);
	ctx = planner_ctx_new();
	set(ctx, "device_num", "8");
	set(ctx, "memory_limit", "66000000");
	set(ctx, "memory_reserve", "0");
	double step[2];
	for (int fastest = 0; fastest < 2; fastest++) {
		snprintf(
		    cmd, sizeof cmd,
		    "%s search %s --devices 8 --memory-limit 66000000 --memory-reserve 0%s -o %s "
		    "> /dev/null 2>&1",
		    cli, path, fastest ? " --fastest" : "", tmp);
		assert_int_equal(system(cmd), 0);
		f = fopen(tmp, "r");
		assert_non_null(f);
		n = fread(text, 1, sizeof text - 1, f);
		fclose(f);
		text[n] = 0;
		want = cJSON_Parse(text);
		assert_non_null(want);
		set(ctx, "fastest", fastest ? "true" : "false");
		ok(ctx, planner_plan_new(ctx, g, &p));
		got = cJSON_Parse(planner_plan_json(p));
		assert_true(cJSON_Compare(cJSON_GetObjectItem(got, "parallel_strategy_item"),
		                          cJSON_GetObjectItem(want, "parallel_strategy_item"), 1));
		step[fastest] = planner_plan_step_seconds(p);
		assert_true(step[fastest] ==
		            cJSON_GetNumberValue(cJSON_GetObjectItem(
		                cJSON_GetObjectItem(want, "cost"), "step_seconds")));
		cJSON_Delete(got);
		cJSON_Delete(want);
		planner_plan_free(p);
	}
	assert_true(step[1] < step[0]); /* the headroom bound */
	planner_graph_free(g);
	planner_ctx_free(ctx);
	unlink(tmp);
	free(tmp);
	free(path);
}

static void test_cost_and_export(void **state)
{
	(void)state;
	planner_ctx *ctx = planner_ctx_new();
	set(ctx, "device_num", "4");
	set(ctx, "model_parallel", "2");
	set(ctx, "use_seq_parallel", "true");
	char *path = source_path("tests/fixtures/models/gpt-tiny.json");
	planner_graph *g = NULL;
	planner_plan *p = NULL, *c = NULL;
	ok(ctx, planner_graph_load(ctx, path, &g));
	ok(ctx, planner_plan_new(ctx, g, &p));

	/* the searched plan, priced: its own step and memory, in the limit */
	ok(ctx, planner_plan_cost(ctx, g, planner_plan_json(p), &c));
	assert_true(planner_plan_step_seconds(c) == planner_plan_step_seconds(p));
	assert_true(planner_plan_memory_bytes(c) == planner_plan_memory_bytes(p));
	cJSON *ck = cJSON_Parse(planner_plan_json(c)), *pk = cJSON_Parse(planner_plan_json(p));
	const cJSON *cost = cJSON_GetObjectItem(ck, "cost");
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(cost, "fits")));
	assert_non_null(cJSON_GetObjectItem(cost, "memory_breakdown_bytes"));
	assert_true(cJSON_Compare(cJSON_GetObjectItem(ck, "parallel_strategy_item"),
	                          cJSON_GetObjectItem(pk, "parallel_strategy_item"), 1));
	/* the file's digest, as the command line's plans record it */
	assert_string_equal(
	    cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(ck, "model"), "sha256")),
	    cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(pk, "model"), "sha256")));
	cJSON_Delete(ck);
	/* it trains */
	planner_trainer *tr = NULL;
	double loss = NAN;
	ok(ctx, planner_trainer_new(ctx, g, c, &tr));
	ok(ctx, planner_train_step(tr, &loss));
	assert_true(isfinite(loss));
	planner_trainer_free(tr);
	planner_plan_free(c);

	/* without its cluster and cost: priced on the context's cluster */
	cJSON *bare = cJSON_Duplicate(pk, 1);
	cJSON_DeleteItemFromObject(bare, "cluster");
	cJSON_DeleteItemFromObject(bare, "cost");
	cJSON_DeleteItemFromObject(bare, "model");
	char *text = cJSON_PrintUnformatted(bare);
	ok(ctx, planner_plan_cost(ctx, g, text, &c));
	assert_true(planner_plan_step_seconds(c) == planner_plan_step_seconds(p));
	assert_int_equal(planner_plan_degree(c, "tp"), 2);
	planner_plan_free(c);
	/* a limit it does not fit in: priced, fits false */
	set(ctx, "memory_reserve", "0");
	set(ctx, "memory_limit", "1K");
	ok(ctx, planner_plan_cost(ctx, g, text, &c));
	ck = cJSON_Parse(planner_plan_json(c));
	cost = cJSON_GetObjectItem(ck, "cost");
	assert_true(cJSON_IsFalse(cJSON_GetObjectItem(cost, "fits")));
	assert_true(cJSON_GetNumberValue(cJSON_GetObjectItem(cost, "memory_limit_bytes")) == 1000);
	cJSON_Delete(ck);
	planner_plan_free(c);
	free(text);
	/* a strategy the op cannot take names the op */
	cJSON *items = cJSON_GetObjectItem(bare, "parallel_strategy_item");
	cJSON *first = items->child;
	cJSON_ReplaceItemInObject(first, "parallel_strategy", cJSON_Parse("[[3, 1, 1]]"));
	text = cJSON_PrintUnformatted(bare);
	c = (planner_plan *)1;
	EINVAL_MSG(ctx, planner_plan_cost(ctx, g, text, &c), first->string);
	assert_null(c);
	free(text);
	/* another model's plan */
	cJSON_DeleteItemFromObject(bare, "model");
	cJSON_AddItemToObject(bare, "model", cJSON_Parse("{\"name\": \"x\", \"sha256\": \"00\"}"));
	cJSON_ReplaceItemInObject(
	    bare, "parallel_strategy_item",
	    cJSON_Duplicate(cJSON_GetObjectItem(pk, "parallel_strategy_item"), 1));
	text = cJSON_PrintUnformatted(bare);
	EINVAL_MSG(ctx, planner_plan_cost(ctx, g, text, &c), "another model");
	free(text);
	EINVAL_MSG(ctx, planner_plan_cost(ctx, g, "{", &c), "planner_plan_cost: ckpt_json");
	EINVAL_MSG(ctx, planner_plan_cost(ctx, g, "[]", &c), "expected a JSON object");
	EINVAL_MSG(ctx, planner_plan_cost(ctx, g, NULL, &c),
	           "planner_plan_cost: ckpt_json: expected a strategy checkpoint's text, got NULL");
	EINVAL_MSG(ctx, planner_plan_cost(ctx, NULL, "{}", &c),
	           "planner_plan_cost: g: expected a graph, got NULL");
	EINVAL_MSG(ctx, planner_plan_cost(ctx, g, "{}", NULL),
	           "planner_plan_cost: out: expected where to put the plan, got NULL");
	assert_int_equal(planner_plan_cost(NULL, g, "{}", &c), PLANNER_EINVAL);
	cJSON_Delete(bare);
	cJSON_Delete(pk);

	/* export: the length first, then the text; a short buffer is cut and
	 * terminated; the JSON form names the keys */
	const char *ckpt = planner_plan_json(p);
	size_t len = 0, len2 = 0;
	ok(ctx, planner_export(ctx, ckpt, "megatron", 0, NULL, 0, &len));
	char *args = malloc(len + 1);
	ok(ctx, planner_export(ctx, ckpt, "megatron", 0, args, len + 1, &len2));
	assert_int_equal(len2, len);
	assert_int_equal(strlen(args), len);
	assert_non_null(strstr(args, "--tensor-model-parallel-size 2"));
	assert_non_null(strstr(args, "--sequence-parallel"));
	char small[8];
	ok(ctx, planner_export(ctx, ckpt, "megatron", 0, small, sizeof small, NULL));
	assert_int_equal(strlen(small), sizeof small - 1);
	assert_memory_equal(small, args, sizeof small - 1);
	free(args);
	ok(ctx, planner_export(ctx, ckpt, "torchtitan", PLANNER_EXPORT_JSON, NULL, 0, &len));
	args = malloc(len + 1);
	ok(ctx, planner_export(ctx, ckpt, "torchtitan", PLANNER_EXPORT_JSON, args, len + 1, NULL));
	cJSON *ex = cJSON_Parse(args);
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(ex, "framework")),
	                    "torchtitan");
	assert_non_null(cJSON_GetObjectItem(cJSON_GetObjectItem(ex, "keys"),
	                                    "parallelism.tensor_parallel_degree"));
	cJSON_Delete(ex);
	free(args);
	/* what the framework cannot state, and bad arguments: nothing written */
	memcpy(small, "unset", 6);
	len = 7;
	EINVAL_MSG(ctx, planner_export(ctx, ckpt, "deepspeed", 0, small, sizeof small, &len),
	           "planner_export: ckpt_json: DeepSpeed");
	assert_string_equal(small, "unset");
	assert_int_equal(len, 0);
	EINVAL_MSG(ctx, planner_export(ctx, ckpt, "caffe", 0, NULL, 0, NULL),
	           "planner_export: unknown framework 'caffe'");
	EINVAL_MSG(ctx, planner_export(ctx, ckpt, "megatron", 4, NULL, 0, NULL),
	           "planner_export: flags 4");
	EINVAL_MSG(ctx, planner_export(ctx, NULL, "megatron", 0, NULL, 0, NULL),
	           "planner_export: ckpt_json: expected a strategy checkpoint's text, got NULL");
	EINVAL_MSG(ctx, planner_export(ctx, ckpt, NULL, 0, NULL, 0, NULL),
	           "planner_export: framework: expected a framework name, got NULL");
	EINVAL_MSG(ctx, planner_export(ctx, ckpt, "megatron", 0, NULL, 4, NULL),
	           "planner_export: text: expected room for size bytes, got NULL");
	EINVAL_MSG(ctx, planner_export(ctx, "{", "megatron", 0, NULL, 0, NULL), "ckpt_json");
	assert_int_equal(planner_export(NULL, ckpt, "megatron", 0, NULL, 0, NULL), PLANNER_EINVAL);

	free(path);
	planner_plan_free(p);
	planner_graph_free(g);
	planner_ctx_free(ctx);
}

/* counts out of range and dimensions < 1 fail before anything is read past
 * them or added; the group buffer's capacity and the params' element counts
 * are honoured */
static void test_bounds(void **state)
{
	(void)state;
	planner_ctx *ctx = planner_ctx_new();
	set(ctx, "device_num", "4");
	planner_graph *g = tiny_mlp(ctx, 64);
	const int64_t zero[2] = {4, 0}, neg[2] = {-3, 4}, s9[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
	EINVAL_MSG(ctx, planner_graph_tensor(g, "t", "param", NULL, -1, s9), "rank -1");
	EINVAL_MSG(ctx, planner_graph_tensor(g, "t", "param", NULL, 9, s9), "rank 9");
	EINVAL_MSG(ctx, planner_graph_tensor(g, "t", "param", NULL, 2, zero), "shape[1] 0");
	EINVAL_MSG(ctx, planner_graph_tensor(g, "t", "param", NULL, 2, neg), "shape[0] -3");
	const char *in[] = {"x", "w0", "b0", "wout", "labels", "x", "x"}, *empty[] = {"x", ""};
	EINVAL_MSG(ctx, planner_graph_op(g, "MatMul", "m", in, 0, "m.out", NULL), "ninputs 0");
	EINVAL_MSG(ctx, planner_graph_op(g, "MatMul", "m", in, -1, "m.out", NULL), "ninputs -1");
	EINVAL_MSG(ctx, planner_graph_op(g, "MatMul", "m", in, 7, "m.out", NULL), "ninputs 7");
	EINVAL_MSG(ctx, planner_graph_op(g, "MatMul", "m", empty, 2, "m.out", NULL),
	           "inputs[1]: expected a tensor name, got ''");
	/* strategies: the counts (the tester's case: a negative dims, which the
	 * old code read past), then each entry is how many slices: >= 1 */
	const int64_t sp[4] = {4, 1, 1, 1}, sp0[4] = {4, 0, 1, 1}, spn[4] = {4, 1, -2, 1};
	const int dneg[2] = {-1, 2}, dbig[2] = {2, 9}, d22[2] = {2, 2};
	EINVAL_MSG(ctx, planner_graph_strategy(g, "fc0", 0, d22, sp), "ninputs 0");
	EINVAL_MSG(ctx, planner_graph_strategy(g, "fc0", -2, d22, sp), "ninputs -2");
	EINVAL_MSG(ctx, planner_graph_strategy(g, "fc0", 7, d22, sp), "ninputs 7");
	EINVAL_MSG(ctx, planner_graph_strategy(g, "fc0", 2, dneg, sp), "dims[0] -1");
	EINVAL_MSG(ctx, planner_graph_strategy(g, "fc0", 2, dbig, sp), "dims[1] 9");
	EINVAL_MSG(ctx, planner_graph_strategy(g, "fc0", 2, d22, sp0),
	           "splits[1] 0 (input 0, dimension 1): expected a split count from 1 to 9e15");
	EINVAL_MSG(ctx, planner_graph_strategy(g, "fc0", 2, d22, spn), "splits[2] -2");
	/* nothing of the refused calls was added: propagate finds no annotation */
	planner_plan *p;
	set(ctx, "search_mode", "sharding_propagation");
	EINVAL_MSG(ctx, planner_plan_new(ctx, g, &p), "propagate needs at least one annotated op");
	planner_reset_auto_parallel_context(ctx);
	set(ctx, "device_num", "4");
	ok(ctx, planner_plan_new(ctx, g, &p));
	/* an unknown kind has no degree (it had 1); a kind the plan lacks is 1 */
	assert_int_equal(planner_plan_degree(p, "xp"), -1);
	assert_int_equal(planner_plan_degree(p, "cp"), 1);
	/* the group's ranks: never more than max written */
	int64_t dp = planner_plan_degree(p, "dp");
	assert_true(dp == 4);
	int64_t ranks[4] = {-7, -7, -7, -7};
	assert_int_equal(planner_plan_group(p, "dp", 1, ranks, 2), 4);
	assert_true(ranks[0] == 0 && ranks[1] == 1 && ranks[2] == -7 && ranks[3] == -7);
	assert_int_equal(planner_plan_group(p, "dp", 4, ranks, 4), -1); /* no rank 4 */
	/* params: the element count must match */
	planner_trainer *tr;
	ok(ctx, planner_trainer_new(ctx, g, p, &tr));
	float *w = calloc(64 * 64 + 1, sizeof(float));
	EINVAL_MSG(ctx, planner_trainer_read(tr, "w0", w, 0), "has 4096 elements, not 0");
	EINVAL_MSG(ctx, planner_trainer_read(tr, "w0", w, 64 * 64 + 1), "not 4097");
	EINVAL_MSG(ctx, planner_trainer_write(tr, "w0", w, 4095), "not 4095");
	EINVAL_MSG(ctx, planner_trainer_write(tr, "labels", w, 64), "'labels' is not a param");
	free(w);
	planner_trainer_free(tr);
	planner_plan_free(p);
	planner_graph_free(g);
	planner_ctx_free(ctx);
}

/* a loss that is not finite is an error naming the step, and *loss has it:
 * from NaN weights written in, and from training that diverges */
static void test_nonfinite_loss(void **state)
{
	(void)state;
	planner_ctx *ctx = planner_ctx_new();
	set(ctx, "device_num", "4");
	planner_graph *g = tiny_mlp(ctx, 64);
	planner_plan *p;
	planner_trainer *tr;
	ok(ctx, planner_plan_new(ctx, g, &p));
	ok(ctx, planner_trainer_new(ctx, g, p, &tr));
	double l = 0;
	ok(ctx, planner_train_step(tr, &l));
	assert_true(isfinite(l));
	/* the output layer's weights (a NaN before the Relu would not reach the
	 * loss: the executor's Relu maps NaN to 0) */
	float *w = malloc(sizeof(float) * 64 * 8);
	for (int i = 0; i < 64 * 8; i++)
		w[i] = NAN;
	ok(ctx, planner_trainer_write(tr, "wout", w, 64 * 8)); /* any values may be written */
	EINVAL_MSG(ctx, planner_train_step(tr, &l), "planner_train_step: step 2: the loss is NaN");
	assert_true(isnan(l));
	planner_trainer_free(tr);
	/* SGD at a learning rate of 1e30: the first step is fine, the weights
	 * then overflow */
	set(ctx, "optimizer", "sgd");
	set(ctx, "learning_rate", "1e30");
	ok(ctx, planner_trainer_new(ctx, g, p, &tr));
	int rc = 0, step;
	for (step = 1; step <= 4 && !rc; step++)
		rc = planner_train_step(tr, &l);
	assert_int_equal(rc, PLANNER_EINVAL);
	assert_false(isfinite(l));
	char want[64];
	snprintf(want, sizeof want, "step %d: the loss is %s", step - 1,
	         isnan(l) ? "NaN"
	         : l > 0  ? "+inf"
	                  : "-inf");
	has_msg(ctx, want);
	free(w);
	planner_trainer_free(tr);
	planner_plan_free(p);
	planner_graph_free(g);
	planner_ctx_free(ctx);
}

/* a context freed before its graphs and trainers stays theirs; plans and
 * trainers outlive the graph and plan they came from; a graph planned under
 * another context reports there; handles of another kind and a freed
 * context still held are refused */
static void test_lifetimes(void **state)
{
	(void)state;
	planner_ctx *ctx = planner_ctx_new();
	set(ctx, "device_num", "4");
	planner_graph *g = tiny_mlp(ctx, 64);
	planner_plan *p, *none;
	planner_trainer *tr;
	ok(ctx, planner_plan_new(ctx, g, &p));
	/* the handle of another kind (each opens with its own tag) */
	EINVAL_MSG(ctx, planner_plan_new(ctx, (planner_graph *)p, &none),
	           "planner_plan_new: g: not a live graph (freed, or a handle of another kind)");
	assert_null(none);
	EINVAL_MSG(ctx, planner_trainer_new(ctx, g, (const planner_plan *)g, &tr),
	           "planner_trainer_new: plan: not a live plan");
	assert_null(tr);
	ok(ctx, planner_trainer_new(ctx, g, p, &tr));
	assert_int_equal(planner_graph_output((planner_graph *)tr, "loss.out"), PLANNER_EINVAL);
	assert_int_equal(planner_train_step((planner_trainer *)g, NULL), PLANNER_EINVAL);
	assert_null(planner_plan_json((const planner_plan *)tr));
	assert_int_equal(planner_plan_degree((const planner_plan *)g, "dp"), -1);
	planner_plan_free((planner_plan *)g); /* ignored: not a plan */
	planner_graph_free((planner_graph *)p);
	assert_string_equal(planner_errmsg((const planner_ctx *)g),
	                    "planner_errmsg: ctx: not a live context (freed, or a handle of "
	                    "another kind)");

	/* plan and graph freed: the trainer copied what it needs; the plan
	 * needs neither its context nor its graph */
	char *json = strdup(planner_plan_json(p));
	planner_plan *q;
	ok(ctx, planner_plan_new(ctx, g, &q));
	planner_plan_free(p);
	/* the context freed by its owner: the graph and trainer still hold it */
	planner_ctx_free(ctx);
	double l0, l1;
	ok(NULL, planner_train_step(tr, &l0));
	ok(NULL, planner_graph_output(g, "loss.out"));
	assert_int_equal(planner_graph_tensor(g, "x", "input", NULL, 0, NULL), PLANNER_EINVAL);
	/* ... and the caller's pointer is refused while they hold it */
	assert_int_equal(planner_set_auto_parallel_context(ctx, "device_num", "2"), PLANNER_EINVAL);
	assert_null(planner_graph_new(ctx, "m", NULL));
	assert_string_equal(planner_errmsg(ctx),
	                    "planner_errmsg: ctx: the context was freed (planner_ctx_free)");
	planner_ctx_free(ctx); /* a second free is ignored */
	planner_graph_free(g);
	ok(NULL, planner_train_step(tr, &l1));
	assert_true(isfinite(l0) && isfinite(l1) && l1 < l0);
	float *w = malloc(sizeof(float) * 64 * 64);
	ok(NULL, planner_trainer_read(tr, "w0", w, 64 * 64));
	assert_int_equal(planner_trainer_read(tr, "nope", w, 64 * 64), PLANNER_EINVAL);
	free(w);
	planner_trainer_free(tr); /* the last holder: the context goes */
	assert_string_equal(planner_plan_json(q), json);
	assert_true(planner_plan_step_seconds(q) > 0);
	planner_plan_free(q);
	free(json);

	/* a graph planned under another context: the messages go there */
	planner_ctx *a = planner_ctx_new(), *b = planner_ctx_new();
	planner_graph *bad = planner_graph_new(a, "bad", NULL);
	const int64_t xs[2] = {8, 8};
	ok(a, planner_graph_tensor(bad, "x", "input", NULL, 2, xs));
	const char *mm[] = {"x", "nowhere"};
	ok(a, planner_graph_op(bad, "MatMul", "mm", mm, 2, "y", NULL));
	ok(a, planner_graph_output(bad, "y"));
	planner_plan *r = NULL;
	assert_int_equal(planner_plan_new(b, bad, &r), PLANNER_EINVAL);
	has_msg(b, "nowhere");
	assert_string_equal(planner_errmsg(a), "");
	planner_graph_free(bad);
	planner_ctx_free(b);
	planner_ctx_free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_context_keys),
	    cmocka_unit_test(test_context_keys_documented),
	    cmocka_unit_test(test_built_equals_loaded),
	    cmocka_unit_test(test_unknown_keys_not_kept),
	    cmocka_unit_test(test_checkpoint_files),
	    cmocka_unit_test(test_annotation_in_code),
	    cmocka_unit_test(test_groups),
	    cmocka_unit_test(test_mindformers_keys),
	    cmocka_unit_test(test_training),
	    cmocka_unit_test(test_errors),
	    cmocka_unit_test(test_null_arguments),
	    cmocka_unit_test(test_bounds),
	    cmocka_unit_test(test_nonfinite_loss),
	    cmocka_unit_test(test_lifetimes),
	    cmocka_unit_test(test_cost_and_export),
	    cmocka_unit_test(test_framework),
	    cmocka_unit_test(test_gemm_dtype),
	    cmocka_unit_test(test_cp_exchange),
	    cmocka_unit_test(test_same_plan_as_search),
	    cmocka_unit_test(test_tp_comm_overlap),
	    cmocka_unit_test(test_overlap_param_gather),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
