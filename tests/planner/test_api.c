/* The auto-parallel API (planner/planner.h), through the shared library and
 * its public header only. A model built in code plans like the same model
 * loaded from a file; the strategy checkpoint files are written and read
 * back as annotations; every rank is in one group of each kind; training
 * under a sharded plan gives the single-device losses, and gradients_mean
 * divides the update by device_num; bad keys, values, models and plans fail
 * with status 2 and a message that names them. */
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
	assert_true(cJSON_IsFalse(cJSON_GetObjectItem(cJSON_GetObjectItem(ck, "pipeline"),
	                                              "sequence_parallel")));
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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_context_keys),     cmocka_unit_test(test_built_equals_loaded),
	    cmocka_unit_test(test_checkpoint_files), cmocka_unit_test(test_annotation_in_code),
	    cmocka_unit_test(test_groups),           cmocka_unit_test(test_mindformers_keys),
	    cmocka_unit_test(test_training),         cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
