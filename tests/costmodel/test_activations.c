/* Activation memory of a Megatron-style transformer layer against the
 * closed form of Korthikanti et al. 2022, "Reducing Activation Recomputation
 * in Large Transformer Models", section 4: with 16-bit activations and
 * dropout on the attention probabilities and on both residual branches, a
 * layer keeps
 *
 *   s b h (34 + 5 a s / h)  bytes          (one device),
 *   s b h (34 + 5 a s / h) / t             (tensor and sequence parallel over t),
 *
 * for sequence s, micro-batch b, hidden h and a heads: 11 sbh + 5 as^2 b in
 * attention, 19 sbh in the MLP, 4 sbh in the two LayerNorms. The planner's
 * accounting (what each op rule saves, a tensor saved by several ops counted
 * once at its producer's layout) must give the same within 2 %.
 *
 * With selective recomputation (section 5: the attention core -- Q K^T,
 * softmax, dropout, x V -- re-runs in the backward) the 5 a s^2 b term goes:
 * the layer keeps 34 s b h bytes, / t with tensor and sequence parallelism;
 * the recomputed ops found in the layer must be exactly those four. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "costmodel/cost.h"
#include "graph/model.h"
#include "search/job.h"
#include "search/search.h"

/* One pre-LN GPT layer, as Megatron builds it: x -> LN -> q, k, v ->
 * softmax(q k^T) -> dropout -> x V -> projection -> dropout -> + x -> LN ->
 * fc1 -> bias -> GeLU -> fc2 -> bias -> dropout -> + */
static char *layer_json(long b, long s, long h, long a)
{
	long d = h / a;
	char *j = malloc(16384);
	snprintf(
	    j, 16384,
	    "{\"format\": \"planner.model/1\", \"name\": \"layer\", \"dtype\": \"float16\","
	    "\"tensors\": {\"x\": {\"shape\": [%ld, %ld, %ld], \"role\": \"input\"},"
	    "\"g1\": {\"shape\": [%ld], \"role\": \"param\"}, \"b1\": {\"shape\": [%ld], \"role\": "
	    "\"param\"},"
	    "\"wq\": {\"shape\": [%ld, %ld], \"role\": \"param\"}, \"wk\": {\"shape\": [%ld, %ld], "
	    "\"role\": \"param\"},"
	    "\"wv\": {\"shape\": [%ld, %ld], \"role\": \"param\"}, \"wo\": {\"shape\": [%ld, %ld], "
	    "\"role\": \"param\"},"
	    "\"g2\": {\"shape\": [%ld], \"role\": \"param\"}, \"b2\": {\"shape\": [%ld], \"role\": "
	    "\"param\"},"
	    "\"w1\": {\"shape\": [%ld, %ld], \"role\": \"param\"}, \"c1\": {\"shape\": [%ld], "
	    "\"role\": \"param\"},"
	    "\"w2\": {\"shape\": [%ld, %ld], \"role\": \"param\"}, \"c2\": {\"shape\": [%ld], "
	    "\"role\": \"param\"}},"
	    "\"ops\": ["
	    "{\"name\": \"ln1\", \"type\": \"LayerNormalization\", \"inputs\": [\"x\", \"g1\", "
	    "\"b1\"], \"outputs\": [\"n1\"], \"attrs\": {\"axis\": -1}},"
	    "{\"name\": \"q\", \"type\": \"MatMul\", \"inputs\": [\"n1\", \"wq\"], \"outputs\": "
	    "[\"q\"]},"
	    "{\"name\": \"k\", \"type\": \"MatMul\", \"inputs\": [\"n1\", \"wk\"], \"outputs\": "
	    "[\"k\"]},"
	    "{\"name\": \"v\", \"type\": \"MatMul\", \"inputs\": [\"n1\", \"wv\"], \"outputs\": "
	    "[\"v\"]},"
	    "{\"name\": \"q4\", \"type\": \"Reshape\", \"inputs\": [\"q\"], \"outputs\": [\"q4\"], "
	    "\"attrs\": {\"shape\": [%ld, %ld, %ld, %ld]}},"
	    "{\"name\": \"k4\", \"type\": \"Reshape\", \"inputs\": [\"k\"], \"outputs\": [\"k4\"], "
	    "\"attrs\": {\"shape\": [%ld, %ld, %ld, %ld]}},"
	    "{\"name\": \"v4\", \"type\": \"Reshape\", \"inputs\": [\"v\"], \"outputs\": [\"v4\"], "
	    "\"attrs\": {\"shape\": [%ld, %ld, %ld, %ld]}},"
	    "{\"name\": \"qt\", \"type\": \"Transpose\", \"inputs\": [\"q4\"], \"outputs\": "
	    "[\"qt\"], \"attrs\": {\"perm\": [0, 2, 1, 3]}},"
	    "{\"name\": \"kt\", \"type\": \"Transpose\", \"inputs\": [\"k4\"], \"outputs\": "
	    "[\"kt\"], \"attrs\": {\"perm\": [0, 2, 3, 1]}},"
	    "{\"name\": \"vt\", \"type\": \"Transpose\", \"inputs\": [\"v4\"], \"outputs\": "
	    "[\"vt\"], \"attrs\": {\"perm\": [0, 2, 1, 3]}},"
	    "{\"name\": \"scores\", \"type\": \"MatMul\", \"inputs\": [\"qt\", \"kt\"], "
	    "\"outputs\": [\"sc\"]},"
	    "{\"name\": \"probs\", \"type\": \"Softmax\", \"inputs\": [\"sc\"], \"outputs\": "
	    "[\"p\"], \"attrs\": {\"axis\": -1}},"
	    "{\"name\": \"attn_drop\", \"type\": \"Dropout\", \"inputs\": [\"p\"], \"outputs\": "
	    "[\"pd\"], \"attrs\": {\"ratio\": 0.1}},"
	    "{\"name\": \"ctx\", \"type\": \"MatMul\", \"inputs\": [\"pd\", \"vt\"], \"outputs\": "
	    "[\"c\"]},"
	    "{\"name\": \"ctxt\", \"type\": \"Transpose\", \"inputs\": [\"c\"], \"outputs\": "
	    "[\"ct\"], \"attrs\": {\"perm\": [0, 2, 1, 3]}},"
	    "{\"name\": \"ctx2\", \"type\": \"Reshape\", \"inputs\": [\"ct\"], \"outputs\": "
	    "[\"cx\"], \"attrs\": {\"shape\": [%ld, %ld, %ld]}},"
	    "{\"name\": \"proj\", \"type\": \"MatMul\", \"inputs\": [\"cx\", \"wo\"], \"outputs\": "
	    "[\"ao\"]},"
	    "{\"name\": \"attn_out_drop\", \"type\": \"Dropout\", \"inputs\": [\"ao\"], "
	    "\"outputs\": [\"aod\"], \"attrs\": {\"ratio\": 0.1}},"
	    "{\"name\": \"add1\", \"type\": \"Add\", \"inputs\": [\"x\", \"aod\"], \"outputs\": "
	    "[\"r1\"]},"
	    "{\"name\": \"ln2\", \"type\": \"LayerNormalization\", \"inputs\": [\"r1\", \"g2\", "
	    "\"b2\"], \"outputs\": [\"n2\"], \"attrs\": {\"axis\": -1}},"
	    "{\"name\": \"fc1\", \"type\": \"MatMul\", \"inputs\": [\"n2\", \"w1\"], \"outputs\": "
	    "[\"f1\"]},"
	    "{\"name\": \"bias1\", \"type\": \"Add\", \"inputs\": [\"f1\", \"c1\"], \"outputs\": "
	    "[\"f1b\"]},"
	    "{\"name\": \"gelu\", \"type\": \"Gelu\", \"inputs\": [\"f1b\"], \"outputs\": "
	    "[\"ge\"]},"
	    "{\"name\": \"fc2\", \"type\": \"MatMul\", \"inputs\": [\"ge\", \"w2\"], \"outputs\": "
	    "[\"f2\"]},"
	    "{\"name\": \"bias2\", \"type\": \"Add\", \"inputs\": [\"f2\", \"c2\"], \"outputs\": "
	    "[\"f2b\"]},"
	    "{\"name\": \"mlp_drop\", \"type\": \"Dropout\", \"inputs\": [\"f2b\"], \"outputs\": "
	    "[\"md\"], \"attrs\": {\"ratio\": 0.1}},"
	    "{\"name\": \"add2\", \"type\": \"Add\", \"inputs\": [\"r1\", \"md\"], \"outputs\": "
	    "[\"y\"]}],"
	    "\"outputs\": [\"y\"]}",
	    b, s, h,                            /* x */
	    h, h,                               /* g1, b1 */
	    h, h, h, h, h, h, h, h,             /* wq, wk, wv, wo */
	    h, h,                               /* g2, b2 */
	    h, 4 * h, 4 * h, 4 * h, h, h,       /* w1, c1, w2, c2 */
	    b, s, a, d, b, s, a, d, b, s, a, d, /* q4, k4, v4 */
	    b, s, h);                           /* ctx2 */
	return j;
}

/* The activations the layer keeps per device under the plan of a search on
 * t devices with tensor parallel t (t = 1: one device), recomputing as mode
 * says (PL_RECOMPUTE_NONE or _SELECTIVE), with sequence parallelism or
 * without (sp 0). */
static double layer_activations_sp(long b, long s, long h, long a, int64_t t, int mode, int sp)
{
	char *json = layer_json(b, s, h, a);
	pl_graph *g;
	pl_err err;
	if (pl_graph_load_json(&g, json, strlen(json), "layer.json", &err))
		fail_msg("%s", err.msg);
	free(json);
	pl_cluster c;
	assert_int_equal(pl_cluster_devices(&c, t, &err), PL_OK);
	uint8_t flags[64];
	assert_true(g->nops <= 64);
	int cores = pl_job_recompute_flags(g, mode, flags);
	if (mode == PL_RECOMPUTE_SELECTIVE) {
		assert_int_equal(cores, 1);
		static const char *const core[] = {"scores", "probs", "attn_drop", "ctx"};
		int n = 0;
		for (int op = 0; op < g->nops; op++) {
			if (!flags[op])
				continue;
			assert_int_equal(flags[op], 1);
			assert_true(n < 4);
			assert_string_equal(g->ops[op].name, core[n++]);
		}
		assert_int_equal(n, 4);
	}
	pl_job job = {
	    .micro_batches = 1,
	    .stages = 1,
	    .degrees = {.dp = 1, .tp = t, .seq_parallel = sp ? PL_SEQ_PAR_ON : PL_SEQ_PAR_OFF},
	    .recompute = mode ? flags : NULL};
	pl_problem *p;
	assert_int_equal(pl_problem_new_job(&p, g, &c, &job, &err), PL_OK);
	pl_search_opts o = {0};
	pl_search_result r;
	assert_int_equal(pl_search_dp(p, &o, &r, &err), PL_OK);
	double act = 0;
	for (int op = 0; op < g->nops; op++) {
		pl_nodeparts pt;
		pl_jobshare js;
		pl_cost_node_parts(p, op, pl_search_result_split(p, &r, op), &pt);
		pl_parts_split(p, op, &pt, &js);
		act += js.act_bytes;
	}
	pl_search_result_free(&r);
	pl_problem_free(p);
	pl_graph_free(g);
	return act;
}

static double layer_activations(long b, long s, long h, long a, int64_t t, int mode)
{
	return layer_activations_sp(b, s, h, a, t, mode, 1);
}

static void korthikanti(long b, long s, long h, long a, int64_t t)
{
	double want = (double)s * b * h * (34 + 5.0 * a * s / h) / (double)t;
	double got = layer_activations(b, s, h, a, t, PL_RECOMPUTE_NONE);
	print_message("s %ld b %ld h %ld a %ld t %lld: %.0f bytes, Korthikanti %.0f (%+.3f %%)\n",
	              s, b, h, a, (long long)t, got, want, 100 * (got / want - 1));
	if (fabs(got / want - 1) > 0.02)
		fail_msg("activations %.0f bytes, Korthikanti et al.'s sbh(34 + 5as/h)/t %.0f", got,
		         want);
}

/* GPT-3 1.3B's and 175B's layer shapes (Brown et al. 2020), one device */
static void one_device(void **state)
{
	(void)state;
	korthikanti(1, 2048, 2048, 16, 1);
	korthikanti(4, 2048, 12288, 96, 1);
	korthikanti(2, 1024, 1024, 16, 1);
}

/* tensor and sequence parallel over 2, 4 and 8 ranks: the plan the search
 * finds with --tp t keeps the norms' and dropouts' tokens cut over the ranks
 * and each saved tensor at its producer's shard */
static void tensor_and_sequence_parallel(void **state)
{
	(void)state;
	korthikanti(1, 2048, 2048, 16, 2);
	korthikanti(1, 2048, 2048, 16, 4);
	korthikanti(1, 2048, 12288, 96, 8);
}

/* tensor parallel without sequence parallelism over 2, 4 and 8 ranks: the
 * norms' and dropouts' inputs and the dropout masks outside the attention
 * and MLP blocks kept whole on every rank, Korthikanti et al.'s
 * sbh(10 + 24/t + 5as/(ht)) */
static void tensor_parallel_only(void **state)
{
	(void)state;
	static const long shapes[][5] = {{1, 2048, 2048, 16, 2},
	                                 {1, 2048, 2048, 16, 4},
	                                 {1, 2048, 12288, 96, 8},
	                                 {4, 1024, 4096, 32, 8}};
	for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
		long b = shapes[i][0], s = shapes[i][1], h = shapes[i][2], a = shapes[i][3];
		int64_t t = shapes[i][4];
		double want =
		    (double)s * b * h * (10 + 24.0 / (double)t + 5.0 * a * s / (h * (double)t));
		double got = layer_activations_sp(b, s, h, a, t, PL_RECOMPUTE_NONE, 0);
		print_message("no sequence parallel: s %ld b %ld h %ld a %ld t %lld: %.0f bytes, "
		              "Korthikanti %.0f (%+.3f %%)\n",
		              s, b, h, a, (long long)t, got, want, 100 * (got / want - 1));
		if (fabs(got / want - 1) > 0.02)
			fail_msg(
			    "activations %.0f bytes, Korthikanti et al.'s sbh(10 + 24/t + 5as/ht) "
			    "%.0f",
			    got, want);
	}
}

/* selective recomputation: 34 sbh / t, on one device and with tp 2, 4, 8 */
static void selective(long b, long s, long h, long a, int64_t t)
{
	double want = 34.0 * s * b * h / (double)t;
	double got = layer_activations(b, s, h, a, t, PL_RECOMPUTE_SELECTIVE);
	print_message("selective s %ld b %ld h %ld a %ld t %lld: %.0f bytes, Korthikanti %.0f "
	              "(%+.3f %%)\n",
	              s, b, h, a, (long long)t, got, want, 100 * (got / want - 1));
	if (fabs(got / want - 1) > 0.02)
		fail_msg("selective: activations %.0f bytes, Korthikanti et al.'s 34 sbh/t %.0f",
		         got, want);
}

static void selective_recompute(void **state)
{
	(void)state;
	selective(1, 2048, 2048, 16, 1);
	selective(4, 2048, 12288, 96, 1);
	selective(1, 2048, 2048, 16, 4);
	selective(1, 2048, 12288, 96, 8);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(one_device),
	    cmocka_unit_test(tensor_and_sequence_parallel),
	    cmocka_unit_test(tensor_parallel_only),
	    cmocka_unit_test(selective_recompute),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
