/* planner::import -- the model importer: every file of the bad-input corpus
 * (tests/fixtures/bad_models, expectations in EXPECT) fails with PL_EINVAL and
 * a message naming the file and the op or field; truncations and byte flips
 * of a real model never crash (the suite runs under ASan/UBSan); the zoo
 * models load with the shapes a person computes by hand. */
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "planner/checkpoint.h"
#include "graph/graph.h"
#include "graph/model.h"
#include "graph/json.h"
#include "graph/onnx.h"

static const char *env(const char *k)
{
	const char *v = getenv(k);
	if (!v)
		fail_msg("%s is not set (run through ctest)", k);
	return v;
}

static void bad_corpus(void **state)
{
	(void)state;
	char path[1200], line[1024];
	snprintf(path, sizeof path, "%s/bad_models/EXPECT", env("PL_FIXTURES"));
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	int n = 0;
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = 0;
		char *tab = strchr(line, '\t');
		assert_non_null(tab);
		*tab = 0;
		char file[2200];
		snprintf(file, sizeof file, "%s/bad_models/%s", env("PL_FIXTURES"), line);
		pl_graph *g = NULL;
		pl_err err = {{0}};
		pl_status st = pl_graph_load_file(&g, file, &err);
		if (st != PL_EINVAL)
			fail_msg("%s: expected PL_EINVAL, got %d (%s)", line, st, err.msg);
		assert_null(g);
		if (!strstr(err.msg, file))
			fail_msg("%s: the message does not name the file: %s", line, err.msg);
		if (!strstr(err.msg, tab + 1))
			fail_msg("%s: expected \"%s\" in: %s", line, tab + 1, err.msg);
		n++;
	}
	fclose(f);
	assert_true(n >= 30);
}

static char *slurp(const char *rel, size_t *len)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/%s", env("PL_SOURCE_DIR"), rel);
	char *text;
	pl_err err;
	assert_int_equal(pl_read_file(path, &text, len, &err), PL_OK);
	return text;
}

/* Every prefix and many byte flips of a real model: an error or a graph, never a crash. */
static void truncations_and_flips(void **state)
{
	(void)state;
	size_t len;
	char *text = slurp("examples/tiny-mlp.json", &len);
	int ok = 0;
	for (size_t k = 0; k <= len; k++) {
		pl_graph *g = NULL;
		pl_err err;
		pl_status st = pl_graph_load_json(&g, text, k, "cut.json", &err);
		if (st == PL_OK) {
			ok++;
			pl_graph_free(g);
		} else {
			assert_int_equal(st, PL_EINVAL);
			assert_non_null(strstr(err.msg, "cut.json"));
		}
	}
	assert_true(ok >= 1); /* the whole file (and prefixes ending in whitespace) */
	static const char flips[] = "{}[]\",:0-9ax \n";
	srand(3);
	char *copy = malloc(len);
	for (int i = 0; i < 3000; i++) {
		memcpy(copy, text, len);
		for (int j = 0; j < 3; j++)
			copy[rand() % len] = flips[rand() % (sizeof flips - 1)];
		pl_graph *g = NULL;
		pl_err err;
		if (pl_graph_load_json(&g, copy, len, "flip.json", &err) == PL_OK)
			pl_graph_free(g);
	}
	free(copy);
	free(text);
}

static const pl_tensor *T(const pl_graph *g, const char *name)
{
	int t = pl_graph_find_tensor(g, name);
	if (t < 0)
		fail_msg("no tensor %s", name);
	return &g->tensors[t];
}

static void gpt_shapes(void **state)
{
	(void)state;
	size_t len;
	char *text = slurp("examples/gpt-small.json", &len);
	pl_graph *g;
	pl_err err;
	assert_int_equal(pl_graph_load_json(&g, text, len, "gpt-small.json", &err), PL_OK);
	free(text);
	/* gpt-small: batch 16, seq 128, hidden 256, 4 heads of 64, vocab 1024 */
	const pl_tensor *s = T(g, "l0.scores.out");
	assert_int_equal(s->rank, 4);
	assert_int_equal(s->shape[0], 16);
	assert_int_equal(s->shape[1], 4);
	assert_int_equal(s->shape[2], 128);
	assert_int_equal(s->shape[3], 128);
	const pl_tensor *kt = T(g, "l0.kt.out");
	assert_int_equal(kt->shape[2], 64);
	assert_int_equal(kt->shape[3], 128);
	const pl_tensor *lg = T(g, "logits.out");
	assert_int_equal(lg->shape[2], 1024);
	const pl_tensor *loss = T(g, "loss.out");
	assert_int_equal(loss->rank, 0);
	assert_true(loss->requires_grad);
	assert_false(T(g, "tokens")->requires_grad);
	assert_int_equal(g->nops, 2 + 4 * 24 + 3);
	assert_int_equal(strlen(g->sha256), 64);
	pl_graph_free(g);
}

static void topological_order(void **state)
{
	(void)state;
	/* ops listed consumer first are reordered; names keep their tensors */
	const char *json =
	    "{\"format\":\"planner.model/1\",\"tensors\":{\"x\":{\"shape\":[4,4],"
	    "\"role\":\"input\"}},\"ops\":["
	    "{\"name\":\"b\",\"type\":\"Relu\",\"inputs\":[\"y\"],\"outputs\":[\"z\"]},"
	    "{\"name\":\"a\",\"type\":\"Tanh\",\"inputs\":[\"x\"],\"outputs\":[\"y\"]}]}";
	pl_graph *g;
	pl_err err;
	assert_int_equal(pl_graph_load_json(&g, json, strlen(json), "order.json", &err), PL_OK);
	assert_string_equal(g->ops[0].name, "a");
	assert_string_equal(g->ops[1].name, "b");
	assert_int_equal(g->tensors[g->ops[1].in[0]].producer, 0);
	pl_graph_free(g);
}

/* a const's values (issue 47): an infinity as the string "inf" or "-inf"
 * (JSON has no literal for it: a mask's -inf), NaN and other strings refused
 * naming the element */
static void const_values_take_infinities(void **state)
{
	(void)state;
	static const char *const vals[] = {"[0, \"-inf\", \"inf\"]", "[0, \"nan\", 1]",
	                                   "[0, \"-Infinity\", 1]"};
	for (int k = 0; k < 3; k++) {
		char json[512];
		snprintf(json, sizeof json,
		         "{\"format\":\"planner.model/1\",\"tensors\":{\"x\":{\"shape\":[2,3],"
		         "\"role\":\"input\"},\"c\":{\"shape\":[3],\"role\":\"const\","
		         "\"values\":%s}},\"ops\":[{\"name\":\"o\",\"type\":\"Add\","
		         "\"inputs\":[\"x\",\"c\"],\"outputs\":[\"y\"]}]}",
		         vals[k]);
		pl_graph *g = NULL;
		pl_err err;
		pl_status st = pl_graph_load_json(&g, json, strlen(json), "inf.json", &err);
		if (k == 0) {
			assert_int_equal(st, PL_OK);
			const pl_tensor *c = T(g, "c");
			assert_true(c->values[0] == 0 && isinf(c->values[1]) && c->values[1] < 0 &&
			            isinf(c->values[2]) && c->values[2] > 0);
			pl_graph_free(g);
		} else {
			assert_int_equal(st, PL_EINVAL);
			assert_non_null(strstr(err.msg, "inf.json: tensors.c.values[1]: expected a "
			                                "finite float, \"inf\" or \"-inf\""));
		}
	}
}

/* A const of many values is read by json.c's scanner, not a cJSON node a
 * number: the same floats as strtod's (cast to float) and the infinities;
 * an array the scanner leaves (a number the reader refuses) gives cJSON's
 * messages, element named; a wrong count, a non-const's values and a syntax
 * error after such an array say what pl_json_parse's tree would. */
static void long_const_values_read_alike(void **state)
{
	(void)state;
	static const char *const toks[] = {"0", "-0", "1", "-2.5", "1e-3", "2.9e38", "1E-45",
	                                   "-7.25e+2", "0.1", "\"inf\"", "\"-inf\"",
	                                   "123456789.123456789",
	                                   /* float32's largest (nan_to_num's), as JSON writes it */
	                                   "-3.4028234663852886e+38"};
	enum { N = 300, NT = sizeof toks / sizeof *toks };
	char *vals = malloc(N * 24), *json = malloc(N * 24 + 1024);
	assert_non_null(vals);
	assert_non_null(json);
	for (int bad = 0; bad < 7; bad++) {
		size_t k = 0;
		vals[k++] = '[';
		for (int i = 0; i < N; i++)
			k += (size_t)sprintf(vals + k, "%s%s", i ? ",\n " : "",
			                     bad == 1 && i == 150 ? "1e39" : toks[i % NT]);
		if (bad == 5) /* a trailing comma: cJSON's error */
			vals[k++] = ',';
		vals[k++] = ']';
		vals[k] = 0;
		snprintf(json, N * 24 + 1024,
		         "{\"format\":\"planner.model/1\",\"tensors\":{\"x\":{\"shape\":[2,%d],"
		         "\"role\":\"input\"},\"c\":{\"shape\":[%d],\"role\":\"%s\","
		         "\"values\":%s}},\"ops\":[{\"name\":\"o\",\"type\":\"Add\","
		         "\"inputs\":[\"x\",\"c\"],\"outputs\":[\"y\"]}]%s}",
		         N, bad == 2 ? N - 1 : N, bad == 3 ? "param" : "const", vals,
		         bad == 4 ? "\n ,," : "");
		pl_graph *g = NULL;
		pl_err err;
		size_t len = strlen(json);
		if (bad == 6) /* the text ends inside the array */
			len = (size_t)(strstr(json, "\"values\":") - json) + 9 + k - 1;
		pl_status st = pl_graph_load_json(&g, json, len, "long.json", &err);
		if (bad == 0) {
			assert_int_equal(st, PL_OK);
			const pl_tensor *c = T(g, "c");
			for (int i = 0; i < N; i++) {
				const char *t = toks[i % NT];
				float want = !strcmp(t, "\"inf\"")    ? INFINITY
				             : !strcmp(t, "\"-inf\"") ? -INFINITY
				                                      : (float)strtod(t, NULL);
				assert_memory_equal(&c->values[i], &want, sizeof want);
			}
			pl_graph_free(g);
			continue;
		}
		assert_int_equal(st, PL_EINVAL);
		const char *want[] = {
		    NULL,
		    "long.json: tensors.c.values[150]: expected a finite float",
		    "long.json: tensors.c.values: expected an array of its 299 elements",
		    "long.json: tensors.c.values: only a const's values are given",
		    NULL,
		    NULL,
		    NULL};
		if (want[bad]) {
			assert_non_null(strstr(err.msg, want[bad]));
		} else { /* the line and column of the text, as the plain parser says */
			cJSON *doc = NULL;
			pl_err e2;
			assert_int_equal(pl_json_parse(json, len, "long.json", &doc, &e2),
			                 PL_EINVAL);
			assert_string_equal(err.msg, e2.msg);
			assert_non_null(
			    strstr(err.msg, bad == 4 ? "long.json:301:" : "long.json:300:"));
		}
	}
	free(vals);
	free(json);
}

/* The value of a key the reader does not read (at the top, in a tensor, in
 * an op) is checked without being built (json.c's walk): whatever
 * pl_json_parse refuses in it the loader refuses with the same message,
 * line and column; what it takes, the loader takes with the key's one
 * warning, and pl_json_parse_shaped's tree is pl_json_parse's with that
 * value the number 0 (or, for a value it leaves to cJSON, the value). */
static void unread_values_checked_alike(void **state)
{
	(void)state;
	static const char *const junk[] = {
	    /* taken and never built */
	    "1", "-0.5e+3", "\"text \\\" \\\\ \\/ \\b\\f\\n\\r\\t\"",
	    "\"h\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"", "true", "false", "null", "[]", "{}",
	    "[1, [2, [3, {\"a\": [\"b\"]}]], {}]",
	    "{\"a\": 1, \"b\": {\"a\": 2}, \"c\": [{\"a\": 3}, {\"a\": 4}]}",
	    "{\"values\": [1, 2], \"name\": \"x\", \"ops\": []}", "1e38",
	    "123456789012345678901234567890", "[\n1,\n\"a\"\n]",
	    /* anything else: pl_json_parse's verdict, whatever it is */
	    "\"\\u0041\"", "{\"\\u0061\": 1, \"b\": 2}", "1e999", "-1e400",
	    "{\"a\": 1, \"b\": 2, \"a\": 3}", "[{\"k\": 1, \"k\": 1}]", "{\"\\u0061\": 1, \"a\": 2}",
	    "\"\xc3\x28\"", "\"\xed\xa0\x80\"", "{\"\xff\": 1}", "\"\\u0000\"", "[1,\n 2,, 3]",
	    "[1, 2", "{\"a\" 1}", "{\"a\": 1,}", "[1,]", "01", "+1", ".5", "1.", "tru", "nul",
	    "\"\\x\"", "\"\t\"", "[1 2]", "{1: 2}", "\"\\ud800\"", "\"unclosed", "[[[[[[[[[["};
	enum { NJ = sizeof junk / sizeof *junk, NBLANK = 15 };
	static const char *const at[] = {"top", "tensor", "op"};
	static const char *const tmpl[] = {
	    "{\"format\": \"planner.model/1\", \"junk\": %s,\n"
	    " \"tensors\": {\"x\": {\"shape\": [2, 4], \"role\": \"input\"}},\n"
	    " \"ops\": [{\"name\": \"r\", \"type\": \"Relu\", \"inputs\": [\"x\"], \"outputs\": "
	    "[\"y\"]}]}\n",
	    "{\"format\": \"planner.model/1\",\n"
	    " \"tensors\": {\"x\": {\"shape\": [2, 4], \"junk\": %s, \"role\": \"input\"}},\n"
	    " \"ops\": [{\"name\": \"r\", \"type\": \"Relu\", \"inputs\": [\"x\"], \"outputs\": "
	    "[\"y\"]}]}\n",
	    "{\"format\": \"planner.model/1\",\n"
	    " \"tensors\": {\"x\": {\"shape\": [2, 4], \"role\": \"input\"}},\n"
	    " \"ops\": [{\"name\": \"r\", \"type\": \"Relu\", \"junk\": %s, \"inputs\": [\"x\"], "
	    "\"outputs\": [\"y\"]}]}\n"};
	static const char *const top_keys[] = {"format", "name",    "dtype",
	                                       "tensors", "ops",    "outputs"};
	static const char *const tensor_keys[] = {"shape", "role", "dtype", "values"};
	static const char *const op_keys[] = {"name",  "type",     "inputs", "outputs",
	                                      "attrs", "strategy", "shape"};
	static const pl_json_shape ts = {.keys = tensor_keys, .nkeys = 4};
	static const pl_json_shape os = {.keys = op_keys, .nkeys = 7};
	static const pl_json_shape tss = {.each = &ts}, oss = {.each = &os};
	static const struct pl_json_field mf[] = {{"tensors", &tss}, {"ops", &oss}};
	static const pl_json_shape ms = {
	    .keys = top_keys, .nkeys = 6, .fields = mf, .nfields = 2};
	char json[4096];
	int taken = 0, refused = 0;
	for (int j = 0; j < NJ; j++)
		for (int l = 0; l < 3; l++) {
			snprintf(json, sizeof json, tmpl[l], junk[j]);
			size_t len = strlen(json);
			cJSON *plain = NULL, *shaped = NULL;
			pl_err e1 = {{0}}, e2 = {{0}};
			pl_status s1 = pl_json_parse(json, len, "junk.json", &plain, &e1);
			pl_graph *g = NULL;
			pl_status s2 = pl_graph_load_json(&g, json, len, "junk.json", &e2);
			if (s1) {
				if (s2 != PL_EINVAL || strcmp(e1.msg, e2.msg))
					fail_msg("junk %s at %s: pl_json_parse says \"%s\", the loader "
					         "(%d) \"%s\"",
					         junk[j], at[l], e1.msg, s2, e2.msg);
				refused++;
				continue;
			}
			if (s2 || !g || g->nwarnings != 1 || !strstr(g->warnings, "junk: unknown key"))
				fail_msg("junk %s at %s: taken by pl_json_parse, the loader: %d %s", junk[j],
				         at[l], s2, e2.msg);
			pl_graph_free(g);
			assert_int_equal(pl_json_parse_shaped(json, len, "junk.json", &ms, NULL, &shaped,
			                                      NULL, &e2),
			                 PL_OK);
			cJSON *want = cJSON_Duplicate(plain, 1);
			cJSON *wholder = l == 0   ? want
			                 : l == 1 ? cJSON_GetObjectItem(
			                                cJSON_GetObjectItem(want, "tensors"), "x")
			                          : cJSON_GetArrayItem(cJSON_GetObjectItem(want, "ops"), 0);
			cJSON_ReplaceItemInObjectCaseSensitive(wholder, "junk", cJSON_CreateNumber(0));
			if (!cJSON_Compare(shaped, want, 1) &&
			    (j < NBLANK || !cJSON_Compare(shaped, plain, 1)))
				fail_msg("junk %s at %s: the shaped tree is not the plain one with junk "
				         "0%s",
				         junk[j], at[l], j < NBLANK ? "" : " nor the plain one");
			cJSON_Delete(want);
			cJSON_Delete(plain);
			cJSON_Delete(shaped);
			taken++;
		}
	/* both kinds were tried, each at the three places */
	assert_true(taken >= NBLANK * 3);
	assert_true(refused >= 20 * 3);
}

/* Every ONNX fixture imports with every constant's values (issue 50): none
 * reaches the executor without them. Before, the importer kept the values of
 * constants of at most 64 elements: nine fixtures hold larger ones (consts'
 * masks and position table, seq2seq's and t5's attention masks, swin's
 * relative position indices, the group norms' scales of groupnorm, timestep,
 * unet, opset20 and opset21). The fixtures the importer refuses on purpose
 * are refused with the reason their checks in test_cli.sh name: big_const
 * (a constant past the bound) and control_flow (an If). With --batch 2, and
 * no appended loss for consts.onnx (its output has no shape), as test_cli
 * imports it, nor for another whose output has none (retried with --loss
 * none, as test_every_model does). */
static void onnx_fixtures_keep_constant_values(void **state)
{
	(void)state;
	char dir[1024];
	snprintf(dir, sizeof dir, "%s/tests/fixtures/onnx", env("PL_SOURCE_DIR"));
	DIR *dp = opendir(dir);
	if (!dp)
		fail_msg("cannot open %s", dir);
	int models = 0, consts = 0;
	struct dirent *e;
	while ((e = readdir(dp))) {
		size_t n = strlen(e->d_name);
		if (n < 6 || strcmp(e->d_name + n - 5, ".onnx"))
			continue;
		char path[2048];
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		pl_onnx_opts oo = {.batch = 2,
		                   .loss = strcmp(e->d_name, "consts.onnx") ? NULL : "none"};
		pl_graph *g = NULL;
		pl_err err = {{0}};
		pl_status st = pl_graph_load_file_opts(&g, path, &oo, &err);
		if (st && strstr(err.msg, "--loss cross-entropy needs one")) {
			/* a graph that ends in its own loss (more_ops.onnx): as
			 * test_every_model retries it */
			oo.loss = "none";
			err = (pl_err){{0}};
			st = pl_graph_load_file_opts(&g, path, &oo, &err);
		}
		if (st && strstr(err.msg, "without ONNX support")) {
			closedir(dp);
			skip();
		}
		const char *refused =
		    !strcmp(e->d_name, "big_const.onnx")      ? "more than the importer keeps"
		    : !strcmp(e->d_name, "control_flow.onnx") ? "control flow (If)"
		                                              : NULL;
		if (refused) {
			if (st != PL_EINVAL || !strstr(err.msg, refused))
				fail_msg("%s: expected a refusal naming \"%s\", got status %d: %s",
				         e->d_name, refused, st, err.msg);
			continue;
		}
		if (st)
			fail_msg("%s does not import: %s", e->d_name, err.msg);
		for (int t = 0; t < g->ntensors; t++)
			if (g->tensors[t].role == PL_ROLE_CONST) {
				if (!g->tensors[t].values)
					fail_msg("%s: constant '%s' has no values", e->d_name,
					         g->tensors[t].name);
				consts++;
			}
		models++;
		pl_graph_free(g);
	}
	closedir(dp);
	print_message("%d ONNX fixtures imported, %d constants, each with its values\n", models,
	              consts);
	assert_true(models >= 45);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(bad_corpus),
	    cmocka_unit_test(truncations_and_flips),
	    cmocka_unit_test(gpt_shapes),
	    cmocka_unit_test(topological_order),
	    cmocka_unit_test(const_values_take_infinities),
	    cmocka_unit_test(long_const_values_read_alike),
	    cmocka_unit_test(unread_values_checked_alike),
	    cmocka_unit_test(onnx_fixtures_keep_constant_values),
	};
	return cmocka_run_group_tests_name("planner::import", tests, NULL, NULL);
}
