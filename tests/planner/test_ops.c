/* planner::ops -- operator rules: shape inference for every supported type;
 * candidate strategies are exactly the splits a brute enumeration of all
 * tuples admits (product D, or the largest usable one; divisibility;
 * unsplittable axes whole), for D = 1..12, 16, 24, 96; MindSpore tuples round
 * trip; local work summed over the shards equals the unsharded work. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "planner/checkpoint.h"
#include "graph/layout.h"
#include "graph/model.h"
#include "graph/ops.h"

static pl_graph *load(const char *json)
{
	pl_graph *g;
	pl_err err;
	if (pl_graph_load_json(&g, json, strlen(json), "t.json", &err))
		fail_msg("%s", err.msg);
	return g;
}

static void assert_shape(const pl_graph *g, const char *name, int rank, const int64_t *s)
{
	const pl_tensor *t = &g->tensors[pl_graph_find_tensor(g, name)];
	assert_int_equal(t->rank, rank);
	for (int d = 0; d < rank; d++)
		if (t->shape[d] != s[d])
			fail_msg("%s dim %d: %lld, want %lld", name, d, (long long)t->shape[d],
			         (long long)s[d]);
}

#define SHAPE(g, n, ...)                                                                           \
	do {                                                                                       \
		int64_t s_[] = {__VA_ARGS__};                                                      \
		assert_shape(g, n, (int)(sizeof s_ / sizeof *s_), s_);                             \
	} while (0)

static const char *every_op =
    "{\"format\":\"planner.model/1\",\"tensors\":{"
    "\"x\":{\"shape\":[2,6,12],\"role\":\"input\"},"
    "\"w\":{\"shape\":[12,24],\"role\":\"param\"},"
    "\"bw\":{\"shape\":[1,12,4],\"role\":\"param\"},"
    "\"bias\":{\"shape\":[24],\"role\":\"param\"},"
    "\"g\":{\"shape\":[24],\"role\":\"param\"},\"b\":{\"shape\":[24],\"role\":\"param\"},"
    "\"emb\":{\"shape\":[100,12],\"role\":\"param\"},"
    "\"ids\":{\"shape\":[2,6],\"role\":\"input\",\"dtype\":\"int64\"},"
    "\"labels\":{\"shape\":[2,6],\"role\":\"input\",\"dtype\":\"int32\"},"
    "\"aq\":{\"shape\":[2,4,6,8],\"role\":\"input\"},"
    "\"ak\":{\"shape\":[2,2,6,8],\"role\":\"param\"},"
    "\"av\":{\"shape\":[2,2,6,4],\"role\":\"param\"}},"
    "\"ops\":["
    "{\"name\":\"att\",\"type\":\"Attention\",\"inputs\":[\"aq\",\"ak\",\"av\"],"
    "\"outputs\":[\"ay\"],\"attrs\":{\"is_causal\":1}},"
    "{\"name\":\"mm\",\"type\":\"MatMul\",\"inputs\":[\"x\",\"w\"],\"outputs\":[\"a\"]},"
    "{\"name\":\"bmm\",\"type\":\"MatMul\",\"inputs\":[\"x\",\"bw\"],\"outputs\":[\"bm\"]},"
    "{\"name\":\"add\",\"type\":\"Add\",\"inputs\":[\"a\",\"bias\"],\"outputs\":[\"c\"]},"
    "{\"name\":\"sub\",\"type\":\"Sub\",\"inputs\":[\"c\",\"a\"],\"outputs\":[\"c2\"]},"
    "{\"name\":\"mul\",\"type\":\"Mul\",\"inputs\":[\"c2\",\"a\"],\"outputs\":[\"c3\"]},"
    "{\"name\":\"div\",\"type\":\"Div\",\"inputs\":[\"c3\",\"a\"],\"outputs\":[\"c4\"]},"
    "{\"name\":\"relu\",\"type\":\"Relu\",\"inputs\":[\"c4\"],\"outputs\":[\"d1\"]},"
    "{\"name\":\"gelu\",\"type\":\"Gelu\",\"inputs\":[\"d1\"],\"outputs\":[\"d2\"]},"
    "{\"name\":\"silu\",\"type\":\"Silu\",\"inputs\":[\"d2\"],\"outputs\":[\"d3\"]},"
    "{\"name\":\"tanh\",\"type\":\"Tanh\",\"inputs\":[\"d3\"],\"outputs\":[\"d4\"]},"
    "{\"name\":\"sig\",\"type\":\"Sigmoid\",\"inputs\":[\"d4\"],\"outputs\":[\"d5\"]},"
    "{\"name\":\"sm\",\"type\":\"Softmax\",\"inputs\":[\"d5\"],\"outputs\":[\"e\"],\"attrs\":{"
    "\"axis\":-1}},"
    "{\"name\":\"ln\",\"type\":\"LayerNormalization\",\"inputs\":[\"e\",\"g\",\"b\"],\"outputs\":["
    "\"f\"]},"
    "{\"name\":\"rms\",\"type\":\"RMSNormalization\",\"inputs\":[\"f\",\"g\"],\"outputs\":[\"f2\"]}"
    ","
    "{\"name\":\"drop\",\"type\":\"Dropout\",\"inputs\":[\"f2\"],\"outputs\":[\"f3\"],\"attrs\":{"
    "\"ratio\":0.1}},"
    "{\"name\":\"id\",\"type\":\"Identity\",\"inputs\":[\"f3\"],\"outputs\":[\"f4\"]},"
    "{\"name\":\"cast\",\"type\":\"Cast\",\"inputs\":[\"f4\"],\"outputs\":[\"f5\"],\"attrs\":{"
    "\"to\":\"bfloat16\"}},"
    "{\"name\":\"rs\",\"type\":\"Reshape\",\"inputs\":[\"f\"],\"outputs\":[\"h\"],\"attrs\":{"
    "\"shape\":[0,6,4,-1]}},"
    "{\"name\":\"tr\",\"type\":\"Transpose\",\"inputs\":[\"h\"],\"outputs\":[\"i\"],\"attrs\":{"
    "\"perm\":[0,2,1,3]}},"
    "{\"name\":\"rsum\",\"type\":\"ReduceSum\",\"inputs\":[\"i\"],\"outputs\":[\"j\"],\"attrs\":{"
    "\"axes\":[1],\"keepdims\":0}},"
    "{\"name\":\"rmean\",\"type\":\"ReduceMean\",\"inputs\":[\"i\"],\"outputs\":[\"j2\"],\"attrs\":"
    "{\"axes\":[-1]}},"
    "{\"name\":\"gather\",\"type\":\"Gather\",\"inputs\":[\"emb\",\"ids\"],\"outputs\":[\"k\"]},"
    "{\"name\":\"merge\",\"type\":\"Reshape\",\"inputs\":[\"i\"],\"outputs\":[\"m\"],\"attrs\":{"
    "\"shape\":[2,24,6]}},"
    "{\"name\":\"loss\",\"type\":\"SoftmaxCrossEntropy\",\"inputs\":[\"c\",\"labels\"],\"outputs\":"
    "[\"l\"]}"
    "]}";

static void shapes(void **state)
{
	(void)state;
	pl_graph *g = load(every_op);
	SHAPE(g, "a", 2, 6, 24);
	SHAPE(g, "bm", 2, 6, 4); /* [2,6,12] x [1,12,4]: batch broadcast */
	SHAPE(g, "c", 2, 6, 24);
	SHAPE(g, "c4", 2, 6, 24);
	SHAPE(g, "e", 2, 6, 24);
	SHAPE(g, "f5", 2, 6, 24);
	assert_int_equal(g->tensors[pl_graph_find_tensor(g, "f5")].dtype, PL_DT_BFLOAT16);
	SHAPE(g, "h", 2, 6, 4, 6); /* 0 copies, -1 inferred */
	SHAPE(g, "i", 2, 4, 6, 6);
	SHAPE(g, "j", 2, 6, 6);
	SHAPE(g, "j2", 2, 4, 6, 1);
	SHAPE(g, "k", 2, 6, 12);
	SHAPE(g, "m", 2, 24, 6);
	assert_int_equal(g->tensors[pl_graph_find_tensor(g, "l")].rank, 0);
	pl_graph_free(g);
}

static void broadcast_batch_matmul_rejected(void **state)
{
	(void)state;
	const char *j =
	    "{\"format\":\"planner.model/1\",\"tensors\":{"
	    "\"x\":{\"shape\":[2,6,12],\"role\":\"input\"},"
	    "\"w\":{\"shape\":[3,12,4],\"role\":\"param\"}},\"ops\":["
	    "{\"name\":\"m\",\"type\":\"MatMul\",\"inputs\":[\"x\",\"w\"],\"outputs\":[\"y\"]}]}";
	pl_graph *g;
	pl_err err;
	assert_int_equal(pl_graph_load_json(&g, j, strlen(j), "b.json", &err), PL_EINVAL);
	assert_non_null(strstr(err.msg, "batch dimension 0 does not broadcast"));
}

/* constant indices of Gather and GatherElements address the read axis as ONNX allows,
 * -n to n - 1: one past either end is refused, naming the element and the range */
static void constant_indices_bounded(void **state)
{
	(void)state;
	static const struct {
		const char *type, *shape, *values, *want;
	} cases[] = {
	    {"Gather", "[3]", "[0, -5, 4]", NULL},
	    {"Gather", "[3]", "[0, 5, 1]",
	     "constant indices 'ix'[1] = 5: outside axis 0 of 'x' (size 5): expected -5 to 4"},
	    {"GatherElements", "[2, 3]", "[0, 4, -5, 1, 2, 3]", NULL},
	    {"GatherElements", "[2, 3]", "[0, 4, -6, 1, 2, 3]",
	     "constant indices 'ix'[2] = -6: outside axis 0 of 'x' (size 5): expected -5 to 4"},
	};
	for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
		char j[1024];
		snprintf(j, sizeof j,
		         "{\"format\":\"planner.model/1\",\"tensors\":{"
		         "\"x\":{\"shape\":[5,3],\"role\":\"param\"},"
		         "\"ix\":{\"shape\":%s,\"dtype\":\"int64\",\"role\":\"const\","
		         "\"values\":%s}},\"ops\":[{\"name\":\"g\",\"type\":\"%s\","
		         "\"inputs\":[\"x\",\"ix\"],\"outputs\":[\"y\"]}],"
		         "\"outputs\":[\"y\"]}",
		         cases[c].shape, cases[c].values, cases[c].type);
		pl_graph *g = NULL;
		pl_err err;
		pl_status st = pl_graph_load_json(&g, j, strlen(j), "ix.json", &err);
		if (!cases[c].want) {
			if (st)
				fail_msg("%s %s: %s", cases[c].type, cases[c].values, err.msg);
			pl_graph_free(g);
			continue;
		}
		assert_int_equal(st, PL_EINVAL);
		if (!strstr(err.msg, cases[c].want))
			fail_msg("%s %s: %s", cases[c].type, cases[c].values, err.msg);
	}
}

/* Independent count: every tuple of per-loop splits <= D, filtered by the
 * rules docs/formats.md states ("Strategies, loops and device matrices"):
 * divides the loop, splittable, product divides D;
 * then product D if any such exists, else the largest product. */
static int brute_count(const pl_op *op, int64_t D, int64_t *best_out)
{
	int n = op->spec.nloops;
	int64_t s[PL_MAX_LOOPS];
	for (int l = 0; l < n; l++)
		s[l] = 1;
	int64_t best = 0;
	int cnt[2] = {0, 0};
	for (int pass = 0; pass < 2; pass++) {
		for (int l = 0; l < n; l++)
			s[l] = 1;
		for (;;) {
			int64_t p = 1;
			int ok = 1;
			for (int l = 0; l < n; l++) {
				p *= s[l];
				ok &= op->spec.loop[l].size % s[l] == 0;
				ok &= s[l] == 1 || op->spec.loop[l].splittable;
			}
			ok &= D % p == 0;
			if (ok && pass == 0 && p > best)
				best = p;
			if (ok && pass == 1 && p == best)
				cnt[1]++;
			int l = 0;
			while (l < n && ++s[l] > D)
				s[l++] = 1;
			if (l == n)
				break;
		}
	}
	*best_out = best;
	return cnt[1];
}

static void candidates(void **state)
{
	(void)state;
	pl_graph *g = load(every_op);
	static const int64_t Ds[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 16, 24, 96};
	for (size_t di = 0; di < sizeof Ds / sizeof *Ds; di++) {
		int64_t D = Ds[di];
		for (int o = 0; o < g->nops; o++) {
			const pl_op *op = &g->ops[o];
			double space = 1;
			for (int l = 0; l < op->spec.nloops; l++)
				space *= (double)D;
			if (space > 3e5)
				continue; /* the brute count grows as D^loops */
			int64_t best;
			int want = brute_count(op, D, &best);
			int n = pl_op_enumerate(op, D, NULL, 0);
			if (n != want)
				fail_msg("op %s D=%lld: %d candidates, brute count %d", op->name,
				         (long long)D, n, want);
			int64_t *c = malloc(sizeof *c * (size_t)(n * op->spec.nloops + 1));
			pl_op_enumerate(op, D, c, n);
			for (int k = 0; k < n; k++) {
				const int64_t *s = c + (size_t)k * op->spec.nloops;
				pl_err err;
				assert_int_equal(pl_op_check_split(op, s, D, &err), PL_OK);
				assert_int_equal(pl_split_product(op, s), best);
				/* MindSpore tuples round trip */
				int64_t tuples[PL_MAX_OP_INPUTS][PL_MAX_RANK], back[PL_MAX_LOOPS];
				int ranks[PL_MAX_OP_INPUTS];
				pl_op_split_to_tuples(g, op, s, tuples);
				for (int i = 0; i < op->ninputs; i++)
					ranks[i] = g->tensors[op->in[i]].rank;
				assert_int_equal(pl_op_tuples_to_split(g, op, tuples, ranks,
				                                       op->ninputs, back, &err),
				                 PL_OK);
				for (int l = 0; l < op->spec.nloops; l++)
					if (op->spec.loop[l].size > 1 || s[l] > 1)
						assert_int_equal(back[l], s[l]);
			}
			free(c);
		}
	}
	pl_graph_free(g);
}

static void unsplittable_axes(void **state)
{
	(void)state;
	pl_graph *g = load(every_op);
	const pl_op *sm = &g->ops[pl_graph_find_op(g, "sm")];
	const pl_op *ln = &g->ops[pl_graph_find_op(g, "ln")];
	int64_t c[4096];
	int n = pl_op_enumerate(sm, 8, c, 1024);
	for (int k = 0; k < n; k++)
		assert_int_equal(c[k * sm->spec.nloops + 2], 1); /* softmax axis -1 */
	n = pl_op_enumerate(ln, 8, c, 1024);
	for (int k = 0; k < n; k++)
		assert_int_equal(c[k * ln->spec.nloops + 2], 1); /* normalized axis */
	/* the reshape [2,6,24] -> [2,6,4,6] splits 24 only through its major part (4) */
	const pl_op *rs = &g->ops[pl_graph_find_op(g, "rs")];
	n = pl_op_enumerate(rs, 8, c, 1024);
	for (int k = 0; k < n; k++)
		assert_int_equal(c[k * rs->spec.nloops + 3], 1);
	pl_graph_free(g);
}

/* Work of the local shard times the shards = the work of the whole op. */
static void work_is_conserved(void **state)
{
	(void)state;
	pl_graph *g = load(every_op);
	const pl_op *mm = &g->ops[pl_graph_find_op(g, "mm")];
	int64_t one[PL_MAX_LOOPS], c[4096];
	for (int l = 0; l < PL_MAX_LOOPS; l++)
		one[l] = 1;
	pl_opwork whole = {0};
	pl_op_rule_get(mm->type)->work(g, mm, one, &whole);
	assert_true(whole.gemm_flops_fwd == 2.0 * 2 * 6 * 12 * 24);
	int n = pl_op_enumerate(mm, 8, c, 1024);
	for (int k = 0; k < n; k++) {
		pl_opwork w = {0};
		pl_op_rule_get(mm->type)->work(g, mm, c + k * mm->spec.nloops, &w);
		assert_true(w.gemm_flops_fwd * 8 == whole.gemm_flops_fwd);
		assert_true(w.gemm_flops_bwd * 8 == whole.gemm_flops_bwd);
	}
	/* the contraction split leaves partial sums in the output layout */
	int64_t split[PL_MAX_LOOPS] = {1, 1, 1, 4};
	pl_layout out;
	pl_op_output_layout(g, mm, split, 8, 0, &out);
	assert_int_equal(out.dm.n, 2); /* replica axis 2, k axis 4 */
	assert_int_equal(out.partial, 1u << 1);
	pl_graph_free(g);
}

/* Attention: FLOPs as FlashAttention-2's benchmark counts them (Dao 2023,
 * benchmarks/benchmark_flash_attention.py: 4 * batch * seqlen^2 * nheads *
 * headdim forward, halved under a causal mask; the backward 2.5 times the
 * forward); only batch, key/value heads and queries are cut; what it keeps
 * is Q, the output and a log-sum-exp per query row (K and V are params
 * here), never the scores; shapes that do not agree are refused. */
static void attention_rule(void **state)
{
	(void)state;
	const char *fmt = "{\"format\":\"planner.model/1\",\"tensors\":{"
	                  "\"q\":{\"shape\":[2,8,16,32],\"role\":\"input\"},"
	                  "\"k\":{\"shape\":[2,%d,16,32],\"role\":\"param\"},"
	                  "\"v\":{\"shape\":[2,2,16,32],\"role\":\"param\"}},\"ops\":["
	                  "{\"name\":\"a\",\"type\":\"Attention\",\"inputs\":[\"q\",\"k\",\"v\"],"
	                  "\"outputs\":[\"y\"],\"attrs\":{\"is_causal\":%d}}]}";
	char j[1024];
	for (int causal = 0; causal < 2; causal++) {
		snprintf(j, sizeof j, fmt, 2, causal);
		pl_graph *g = load(j);
		const pl_op *a = &g->ops[0];
		SHAPE(g, "y", 2, 8, 16, 32);
		int64_t one[PL_MAX_LOOPS], c[4096];
		for (int l = 0; l < PL_MAX_LOOPS; l++)
			one[l] = 1;
		pl_opwork w = {0};
		pl_op_rule_get(a->type)->work(g, a, one, &w);
		double fwd = 4.0 * 2 * 16 * 16 * 8 * 32 / (causal ? 2 : 1);
		assert_true(w.gemm_flops_fwd == fwd);
		assert_true(w.gemm_flops_bwd == 2.5 * fwd);
		double q = 2.0 * 8 * 16 * 32 * 4, lse = 2.0 * 8 * 16 * 4;
		assert_true(w.saved_bytes == q + q + lse); /* Q, Y and the log-sum-exps */
		assert_int_equal(w.saves_in, 1);
		assert_int_equal(w.saves_out, 1);
		int n = pl_op_enumerate(a, 16, c, 1024);
		assert_true(n > 0);
		for (int k = 0; k < n; k++) {
			const int64_t *s = c + (size_t)k * a->spec.nloops;
			/* the group's query heads, the keys and the head sizes whole */
			assert_true(s[2] == 1 && s[4] == 1 && s[5] == 1 && s[6] == 1);
			assert_true(s[1] <= 2); /* heads cut by key/value heads only */
		}
		pl_graph_free(g);
	}
	/* the 3-D form: the same work, its heads dimension cut by key/value heads */
	const char *flat =
	    "{\"format\":\"planner.model/1\",\"tensors\":{"
	    "\"q\":{\"shape\":[2,16,256],\"role\":\"input\"},"
	    "\"k\":{\"shape\":[2,16,64],\"role\":\"param\"},"
	    "\"v\":{\"shape\":[2,16,64],\"role\":\"param\"}},\"ops\":["
	    "{\"name\":\"a\",\"type\":\"Attention\",\"inputs\":[\"q\",\"k\",\"v\"],"
	    "\"outputs\":[\"y\"],\"attrs\":{\"q_num_heads\":8,\"kv_num_heads\":2}}]}";
	pl_graph *f = load(flat);
	SHAPE(f, "y", 2, 16, 256);
	int64_t ones[PL_MAX_LOOPS];
	for (int l = 0; l < PL_MAX_LOOPS; l++)
		ones[l] = 1;
	pl_opwork fw = {0};
	pl_op_rule_get(f->ops[0].type)->work(f, &f->ops[0], ones, &fw);
	assert_true(fw.gemm_flops_fwd == 4.0 * 2 * 16 * 16 * 8 * 32);
	/* its loops in the order of its tensors' dimensions: b, s, key/value
	 * heads, group, keys, head sizes */
	int64_t cut[PL_MAX_LOOPS] = {1, 1, 2, 1, 1, 1, 1};
	pl_layout lk;
	pl_op_input_layout(f, &f->ops[0], cut, 2, 1, &lk);
	assert_int_equal(pl_layout_local_bytes(&lk), 2.0 * 16 * 32 * 4); /* one key head of two */
	/* sequence and heads both cut: the sequence takes the more significant
	 * device axis and the heads the faster one, as in the [b, s, hidden]
	 * projections around it (heads on neighbouring ranks, as tensor
	 * parallelism puts them; the sequence across, as context parallelism) */
	int64_t both[PL_MAX_LOOPS] = {1, 2, 2, 1, 1, 1, 1};
	pl_layout lq;
	pl_op_input_layout(f, &f->ops[0], both, 4, 0, &lq);
	assert_int_equal(lq.nmap[1], 1);
	assert_int_equal(lq.nmap[2], 1);
	assert_true(lq.map[1][0] < lq.map[2][0]);
	assert_int_equal(pl_layout_local_bytes(&lq), 2.0 * 8 * 128 * 4);
	pl_graph_free(f);
	snprintf(j, sizeof j, fmt, 3, 0); /* 8 query heads over 3 key heads */
	pl_graph *g;
	pl_err err;
	assert_int_equal(pl_graph_load_json(&g, j, strlen(j), "a.json", &err), PL_EINVAL);
	assert_non_null(strstr(err.msg, "do not agree"));
}

/* PyTorch's ring attention (torch/distributed/tensor/experimental/
 * _attention.py, the context_parallel torchtitan runs), its eager kernels
 * counted by hand from the source for bfloat16 Q, K, V [1, 4, 16, 8] (K and
 * V params, so there is a backward) with the queries cut over n = 2 ranks:
 * the rank's output y = 4 heads x 8 rows x 8 = 256 elements, its queries
 * 256, its log-sum-exps 32 (fp32), one rank's chunk of keys and values
 * kv = 2 x 4 x 8 x 8 = 512 elements. The slowest rank (the last) keeps all
 * its queries at every block. */
static void ring_attention_merges_by_hand(void **state)
{
	(void)state;
	const char *j = "{\"format\":\"planner.model/1\",\"dtype\":\"bfloat16\",\"tensors\":{"
	                "\"q\":{\"shape\":[1,4,16,8],\"role\":\"input\"},"
	                "\"k\":{\"shape\":[1,4,16,8],\"role\":\"param\"},"
	                "\"v\":{\"shape\":[1,4,16,8],\"role\":\"param\"}},\"ops\":["
	                "{\"name\":\"a\",\"type\":\"Attention\",\"inputs\":[\"q\",\"k\",\"v\"],"
	                "\"outputs\":[\"y\"],\"attrs\":{\"is_causal\":1}}]}";
	pl_graph *g = load(j);
	const pl_op *a = &g->ops[0];
	/* loops b, key/value heads, group, queries, keys, head sizes */
	int64_t one[PL_MAX_LOOPS] = {1, 1, 1, 1, 1, 1, 1},
	        cp2[PL_MAX_LOOPS] = {1, 1, 1, 2, 1, 1, 1};
	pl_opwork w = {.cp_merge = 1};
	pl_op_rule_get(a->type)->work(g, a, cp2, &w);
	/* forward: the first block's output cast to fp32 (2 read, 4 written an
	 * element) and the merged one cast back (4 + 2); the second block's cast
	 * (6), out - out_b (4 + 4 read, 4 written), the product with the fp32
	 * sigmoid (4 + 4 and 4 read an lse each), out - that (12); the lse's
	 * lse_b - lse (12 an lse), sigmoid (8), lse - lse_b (12), logsigmoid
	 * (8), the subtraction (12); the keys and values joined into the buffer
	 * passed on before the second block (2 + 2) */
	double fwd = 256 * 6 + 256 * 6 + 256 * 6 + 256 * 12 + (256 * 8 + 32 * 4) + 256 * 12 +
	             32 * (12 + 8 + 12 + 8 + 12) + 512 * 4;
	assert_true(w.side_bytes_fwd == fwd);
	assert_int_equal(w.side_kernels_fwd, 2 + 9 + 1);
	/* backward: the fp32 accumulators zeroed (4 an element of dQ, dK, dV);
	 * the first block's dQ, dK, dV added (4 + 2 read, 4 written); the second
	 * block's dQ added (10), its dK and dV (half the keys: 128 + 128
	 * elements) added into the first half (10) and the halves joined (4 + 4
	 * of the whole); the keys and values joined before the second block
	 * (2 + 2); dK and dV joined into the fp32 buffer passed on at each block
	 * (4 + 4, twice); all three cast back (4 + 2) */
	double bwd = (256 + 512) * 4 + (256 + 512) * 10 + 256 * 10 + 256 * 10 + 512 * 8 + 512 * 4 +
	             2 * 512 * 8 + (256 + 512) * 6;
	assert_true(w.side_bytes_bwd == bwd);
	assert_int_equal(w.side_kernels_bwd, 3 + 3 + 5 + 1 + 2 + 2);
	/* held: four fp32 copies of the output forward; dQ and four fp32 dK/dV
	 * buffers backward */
	assert_true(w.scratch_fwd == 4.0 * 256 * 4);
	assert_true(w.scratch_bwd == 256.0 * 4 + 4.0 * 512 * 4);
	/* nothing without the switch, or with the queries whole */
	pl_opwork off = {0}, whole = {.cp_merge = 1};
	pl_op_rule_get(a->type)->work(g, a, cp2, &off);
	pl_op_rule_get(a->type)->work(g, a, one, &whole);
	assert_true(off.side_bytes_fwd == 0 && off.side_bytes_bwd == 0 &&
	            off.side_kernels_fwd == 0);
	assert_true(whole.side_bytes_fwd == 0 && whole.side_kernels_bwd == 0 &&
	            whole.scratch_fwd == 0);
	assert_true(off.gemm_flops_fwd == w.gemm_flops_fwd && off.bytes_fwd == w.bytes_fwd);
	/* four ranks: three merges and three buffers passed on forward */
	int64_t cp4[PL_MAX_LOOPS] = {1, 1, 1, 4, 1, 1, 1};
	pl_opwork w4 = {.cp_merge = 1};
	pl_op_rule_get(a->type)->work(g, a, cp4, &w4);
	assert_int_equal(w4.side_kernels_fwd, 2 + 3 * 10);
	pl_graph_free(g);
}

/* a MatMul's [4, 8, 100] logits into a SoftmaxCrossEntropy, in the dtype %s */
static const char loss_model[] =
    "{\"format\":\"planner.model/1\",\"dtype\":\"%s\",\"tensors\":{"
    "\"x\":{\"shape\":[4,8,100],\"role\":\"input\"},"
    "\"w\":{\"shape\":[100,100],\"role\":\"param\"},"
    "\"labels\":{\"shape\":[4,8],\"dtype\":\"int64\",\"role\":\"input\"}},"
    "\"ops\":[{\"name\":\"mm\",\"type\":\"MatMul\",\"inputs\":[\"x\",\"w\"],"
    "\"outputs\":[\"y\"]},{\"name\":\"loss\",\"type\":"
    "\"SoftmaxCrossEntropy\",\"inputs\":[\"y\",\"labels\"],\"outputs\":[\"l\"]}]}";

/* The cross-entropy loss as the runtime computes it, counted by hand. Logits
 * [4, 8, 100] in bfloat16: n = 3200 elements of 2 bytes, 32 positions.
 * Unfused (PyTorch's cross_entropy under autocast, Megatron-LM's default): a
 * cast writes an fp32 copy (2n read, 4n written), the log-softmax reads it
 * and writes fp32 probabilities (4n + 4n), which are kept; the backward reads
 * them and writes an fp32 gradient (4n + 4n), which a cast reads and turns
 * back into bf16 (4n + 2n); the fp32 copy and the fp32 gradient are workspace.
 * Fused (flash-attn's kernel): the logits read once forward, read and the
 * gradient written backward, the logits and an fp32 log-sum-exp per
 * position kept. In float32 both keep the fp32 counts of one kernel pair. */
static void loss_kernels(void **state)
{
	(void)state;
	char j[1024];
	int64_t one[PL_MAX_LOOPS];
	for (int l = 0; l < PL_MAX_LOOPS; l++)
		one[l] = 1;
	const double n = 3200, labels = 32 * 8;
	snprintf(j, sizeof j, loss_model, "bfloat16");
	pl_graph *g = load(j);
	const pl_op *op = &g->ops[1];
	pl_opwork w = {0};
	pl_op_rule_get(op->type)->work(g, op, one, &w);
	assert_true(w.bytes_fwd == 2 * n + 4 * n + 4 * n + 4 * n + labels);
	/* backward, by PyTorch's kernels: nll_loss's dense gradient zero-filled
	 * (4n written, Loss.cu's grad_input.zero_()) and its targets written;
	 * log_softmax's backward reads it and the probabilities and writes the
	 * fp32 gradient (4n + 4n + 4n); the cast back (4n + 2n) */
	assert_true(w.bytes_bwd == 4 * n + (4 * n + 4 * n + 4 * n) + (4 * n + 2 * n));
	assert_true(w.saved_bytes == 4 * n);
	/* most live in the backward: the probabilities, the dense gradient and
	 * log_softmax's gradient, 12n; the sweep adds the 16-bit gradient (2n)
	 * at the op, so the workspace is 12n - 4n kept - 2n */
	assert_true(w.scratch_fwd == 4 * n && w.scratch_bwd == 6 * n);
	assert_true(w.saved_bytes + w.scratch_bwd + 2 * n == 12 * n);
	assert_int_equal(w.kernels_fwd, 3);
	assert_int_equal(w.kernels_bwd, 4); /* fill, scatter, log_softmax's, cast */
	assert_int_equal(w.saves_in, 0);
	/* the classes cut (a vocab-parallel loss: the framework's own function,
	 * Megatron's writes its gradient into the kept softmax): no dense
	 * nll_loss gradient; each rank's piece is half */
	int64_t cut[PL_MAX_LOOPS];
	for (int l = 0; l < PL_MAX_LOOPS; l++)
		cut[l] = 1;
	cut[op->spec.in[0][2].first] = 2;
	pl_opwork v = {0};
	pl_op_rule_get(op->type)->work(g, op, cut, &v);
	assert_true(v.bytes_bwd == (4 * n + 4 * n + 4 * n + 2 * n) / 2);
	assert_true(v.scratch_bwd == 4 * n / 2);
	assert_int_equal(v.kernels_bwd, 2);
	pl_opwork f = {.fused_loss = 1};
	pl_op_rule_get(op->type)->work(g, op, one, &f);
	assert_true(f.bytes_fwd == 2 * n + labels);
	assert_true(f.bytes_bwd == 2 * n + 2 * n);
	assert_true(f.saved_bytes == 2 * n + 4 * 32);
	assert_true(f.scratch_fwd == 0 && f.scratch_bwd == 0);
	assert_int_equal(f.kernels_fwd, 1);
	assert_int_equal(f.saves_in, 1); /* the logits themselves */
	assert_true(f.vec_flops_fwd == w.vec_flops_fwd && f.vec_flops_bwd == w.vec_flops_bwd);
	pl_graph_free(g);
	snprintf(j, sizeof j, loss_model, "float32");
	g = load(j);
	op = &g->ops[1];
	pl_opwork u = {0};
	pl_op_rule_get(op->type)->work(g, op, one, &u);
	assert_true(u.bytes_fwd == 4 * n + 4 * n + labels); /* no cast */
	/* fp32 logits: the gradient straight from the kept probabilities, as
	 * the planner's executor computes it (no dense nll_loss gradient) */
	assert_true(u.bytes_bwd == 4 * n + 4 * n);
	assert_true(u.saved_bytes == 4 * n);
	assert_true(u.scratch_fwd == 0 && u.scratch_bwd == 0);
	assert_int_equal(u.kernels_bwd, 1);
	pl_graph_free(g);
}

/* Training metrics (--loss-metrics N): each a cross_entropy forward on the
 * logits without gradients, as Composer's train metrics run after every
 * micro-batch's backward: bf16 logits cast to fp32 (2n read, 4n written),
 * the softmax (4n read, 4n written), the picked entries with the labels,
 * 3 kernels and 6 FLOPs an element each; the backward, what is kept and the
 * workspace are the loss's own, fused or not */
static void loss_metrics_by_hand(void **state)
{
	(void)state;
	char j[1024];
	snprintf(j, sizeof j, loss_model, "bfloat16");
	int64_t one[PL_MAX_LOOPS];
	for (int l = 0; l < PL_MAX_LOOPS; l++)
		one[l] = 1;
	const double n = 3200, labels = 32 * 8, metric = 2 * n + 4 * n + 4 * n + 4 * n + labels;
	pl_graph *g = load(j);
	const pl_op *op = &g->ops[1];
	for (int fused = 0; fused < 2; fused++) {
		pl_opwork a = {.fused_loss = fused}, m = {.fused_loss = fused, .loss_metrics = 2};
		pl_op_rule_get(op->type)->work(g, op, one, &a);
		pl_op_rule_get(op->type)->work(g, op, one, &m);
		assert_true(m.bytes_fwd == a.bytes_fwd + 2 * metric);
		assert_int_equal(m.kernels_fwd, a.kernels_fwd + 2 * 3);
		assert_true(m.vec_flops_fwd == a.vec_flops_fwd + 2 * 6 * n);
		assert_true(m.bytes_bwd == a.bytes_bwd && m.kernels_bwd == a.kernels_bwd &&
		            m.vec_flops_bwd == a.vec_flops_bwd);
		assert_true(m.saved_bytes == a.saved_bytes && m.scratch_fwd == a.scratch_fwd &&
		            m.scratch_bwd == a.scratch_bwd && m.saves_in == a.saves_in);
	}
	pl_graph_free(g);
}

/* Norms as eager PyTorch runs them (--norm-kernel unfused) against one fused
 * kernel, counted op by op from the reference RMSNorm, y = (x.float() *
 * rsqrt(mean(x.float()^2) + eps)).type_as(x) * scale (torchtitan's RMSNorm,
 * Meta's Llama reference), bytes an element of n, e the input's bytes:
 * forward .float() e + 4, pow 4 + 4, mean 4, x * r 4 + 4, .type_as 4 + e,
 * the scale e + e, 8 kernels with the add and rsqrt per row; backward the
 * scale's gradient to y e + e and its reduced one to the scale 3e, .type_as
 * e + 4, the product's gradient to x 4 + 4 and its reduced one to r 3 * 4,
 * rsqrt per row, mean 4, pow 3 * 4, the two fp32 gradients of x added
 * 3 * 4, .float() 4 + e, 10 kernels. Kept: the fp32 copy of x and the
 * normalized x in e bytes, rsqrt's result per row (not x: an fp32 input
 * is its own copy, no cast runs, and then it is x that is kept). The
 * scale's bytes once forward and twice backward in both. */
static void norm_kernels(void **state)
{
	(void)state;
	for (int fp32 = 0; fp32 < 2; fp32++) {
		char j[512];
		snprintf(j, sizeof j,
		         "{\"format\":\"planner.model/1\",\"dtype\":\"%s\",\"tensors\":{"
		         "\"x\":{\"shape\":[4,8,64],\"role\":\"input\"},"
		         "\"s\":{\"shape\":[64],\"role\":\"param\"}},"
		         "\"ops\":[{\"name\":\"n\",\"type\":\"RMSNormalization\",\"inputs\":"
		         "[\"x\",\"s\"],\"outputs\":[\"y\"],\"attrs\":{\"axis\":-1}}]}",
		         fp32 ? "float32" : "bfloat16");
		int64_t one[PL_MAX_LOOPS];
		for (int l = 0; l < PL_MAX_LOOPS; l++)
			one[l] = 1;
		pl_graph *g = load(j);
		const pl_op *op = &g->ops[0];
		const double n = 4 * 8 * 64, e = fp32 ? 4 : 2, sb = 64 * e, rows = 32;
		pl_opwork f = {0}, u = {.unfused_norm = 1};
		pl_op_rule_get(op->type)->work(g, op, one, &f);
		pl_op_rule_get(op->type)->work(g, op, one, &u);
		assert_true(f.bytes_fwd == 2 * e * n + sb && f.kernels_fwd == 1);
		assert_true(f.saved_bytes == e * n + rows * 8);
		/* an fp32 x is not cast: .float() and .type_as return it */
		const double cast = fp32 ? 0 : e + 4;
		double fwd = cast + (4 + 4) + 4 + (4 + 4) + cast + (e + e);
		double bwd = (e + e) + 3 * e + cast + (4 + 4) + 3 * 4 + 4 + 3 * 4 + 3 * 4 + cast;
		assert_true(u.bytes_fwd == fwd * n + sb);
		assert_true(u.bytes_bwd == bwd * n + 2 * sb);
		assert_int_equal(u.kernels_fwd, fp32 ? 6 : 8);
		assert_int_equal(u.kernels_bwd, fp32 ? 8 : 10);
		if (fp32) { /* x is the fp32 copy: x, counted at its producer */
			assert_true(u.saved_bytes == 4 * n + 4 * n + rows * 4);
			assert_int_equal(u.saves_in, 1);
		} else {
			assert_true(u.saved_bytes == 4 * n + e * n + rows * 4);
			assert_int_equal(u.saves_in, 0);
		}
		/* the product's backward: its fp32 incoming gradient, x's and the
		 * product feeding r's reduction */
		assert_true(u.scratch_bwd == 3 * 4 * n && f.scratch_bwd == 0);
		assert_true(u.vec_flops_fwd == f.vec_flops_fwd && u.vec_flops_bwd == f.vec_flops_bwd);
		pl_graph_free(g);
	}
}

/* A mask before a softmax (masked_fill as a Where on a constant mask, the
 * scores its only input that needs a gradient) counted by hand: fused into
 * the softmax kernel (--mask-kernel fused) it reads the mask and nothing
 * else, no kernel of its own; eager (unfused, PyTorch's masked_fill) it
 * reads the scores, the mask and the fill and writes the filled scores
 * (e + mask + fill + e bytes), and its backward reads the output's gradient
 * and writes the scores' (e + e): one kernel each way, nothing kept (the
 * mask is a constant). */
static void mask_kernels(void **state)
{
	(void)state;
	const char *j = "{\"format\":\"planner.model/1\",\"dtype\":\"bfloat16\",\"tensors\":{"
	                "\"x\":{\"shape\":[2,4,16,16],\"role\":\"input\"},"
	                "\"w\":{\"shape\":[16,16],\"role\":\"param\"},"
	                "\"m\":{\"shape\":[1,1,16,16],\"role\":\"const\"},"
	                "\"f\":{\"shape\":[1],\"role\":\"const\"}},"
	                "\"ops\":[{\"name\":\"s\",\"type\":\"MatMul\",\"inputs\":[\"x\",\"w\"],"
	                "\"outputs\":[\"sc\"]},"
	                "{\"name\":\"fill\",\"type\":\"Where\",\"inputs\":[\"m\",\"f\",\"sc\"],"
	                "\"outputs\":[\"ms\"]},"
	                "{\"name\":\"p\",\"type\":\"Softmax\",\"inputs\":[\"ms\"],"
	                "\"outputs\":[\"y\"],\"attrs\":{\"axis\":-1}}]}";
	int64_t one[PL_MAX_LOOPS];
	for (int l = 0; l < PL_MAX_LOOPS; l++)
		one[l] = 1;
	pl_graph *g = load(j);
	const pl_op *op = &g->ops[1];
	const double n = 2 * 4 * 16 * 16, e = 2, mask = 16 * 16 * e, fill = e;
	pl_opwork f = {0}, u = {.unfused_mask = 1};
	pl_op_rule_get(op->type)->work(g, op, one, &f);
	pl_op_rule_get(op->type)->work(g, op, one, &u);
	assert_true(f.bytes_fwd == mask && f.bytes_bwd == 0);
	assert_int_equal(f.kernels_fwd, 0);
	assert_int_equal(f.kernels_bwd, 0);
	assert_true(u.bytes_fwd == e * n + mask + fill + e * n);
	assert_true(u.bytes_bwd == e * n + e * n);
	assert_int_equal(u.kernels_fwd, 1);
	assert_int_equal(u.kernels_bwd, 1);
	assert_true(u.saved_bytes == 0 && f.saved_bytes == 0);
	pl_graph_free(g);
	/* the scores cloned first (an Identity with "copy": 1, PyTorch's
	 * clone): read and written once forward (2e + 2e), one kernel, and no
	 * backward kernel (clone's gradient is handed back); without it the
	 * Identity is a view, no kernel at all */
	for (int c = 0; c < 2; c++) {
		char jc[1024];
		snprintf(jc, sizeof jc,
		         "{\"format\":\"planner.model/1\",\"dtype\":\"bfloat16\",\"tensors\":{"
		         "\"x\":{\"shape\":[2,4,16,16],\"role\":\"input\"},"
		         "\"w\":{\"shape\":[16,16],\"role\":\"param\"}},"
		         "\"ops\":[{\"name\":\"s\",\"type\":\"MatMul\",\"inputs\":[\"x\",\"w\"],"
		         "\"outputs\":[\"sc\"]},"
		         "{\"name\":\"c\",\"type\":\"Identity\",\"inputs\":[\"sc\"],"
		         "\"outputs\":[\"cl\"],\"copy\":%d}]}",
		         c);
		g = load(jc);
		op = &g->ops[1];
		pl_opwork k = {0};
		pl_op_rule_get(op->type)->work(g, op, one, &k);
		assert_true(k.bytes_fwd == (c ? 2 * e * n : 0));
		assert_int_equal(k.kernels_fwd, c);
		assert_true(k.bytes_bwd == 0);
		assert_int_equal(k.kernels_bwd, 0);
		pl_graph_free(g);
	}
}

/* Every op type has a whole rule whose name parses back to the type; the
 * integer inputs' ranges are the gathered axis and the classes. */
static void rules_complete(void **state)
{
	(void)state;
	for (int t = 0; t < PL_OP_COUNT; t++) {
		const pl_op_rule *r = pl_op_rule_get((pl_optype)t);
		assert_non_null(r);
		assert_non_null(r->name);
		assert_non_null(r->infer);
		assert_non_null(r->work);
		assert_true(r->min_inputs >= 1 && r->min_inputs <= r->max_inputs);
		pl_optype back;
		assert_int_equal(pl_optype_parse(r->name, &back), 0);
		/* Pow by a tensor is the model's Pow with two inputs (the reader
		 * tells them apart) */
		assert_int_equal(back, t == PL_OP_POW_TENSOR ? PL_OP_POW : t);
	}
	pl_graph *g = load(
	    "{\"format\": \"planner.model/1\", \"name\": \"r\", \"tensors\": {"
	    "\"ids\": {\"shape\": [4, 8], \"dtype\": \"int32\", \"role\": \"input\"},"
	    "\"labels\": {\"shape\": [4, 8], \"dtype\": \"int32\", \"role\": \"input\"},"
	    "\"emb\": {\"shape\": [1000, 16], \"role\": \"param\"},"
	    "\"w\": {\"shape\": [16, 37], \"role\": \"param\"}},"
	    "\"ops\": [{\"name\": \"g\", \"type\": \"Gather\", \"inputs\": [\"emb\", \"ids\"],"
	    " \"outputs\": [\"x\"]},"
	    "{\"name\": \"m\", \"type\": \"MatMul\", \"inputs\": [\"x\", \"w\"], \"outputs\": "
	    "[\"y\"]},"
	    "{\"name\": \"l\", \"type\": \"SoftmaxCrossEntropy\", \"inputs\": [\"y\", \"labels\"],"
	    " \"outputs\": [\"loss\"]}], \"outputs\": [\"loss\"]}");
	const pl_op *ga = &g->ops[0], *mm = &g->ops[1], *ce = &g->ops[2];
	assert_int_equal(pl_op_rule_get(ga->type)->index_range(g, ga, 1), 1000);
	assert_int_equal(pl_op_rule_get(ga->type)->index_range(g, ga, 0), 0);
	assert_int_equal(pl_op_rule_get(ce->type)->index_range(g, ce, 1), 37);
	assert_null(pl_op_rule_get(mm->type)->index_range);
	pl_graph_free(g);
}

/* the collectives' names as messages list them: every pl_coll_name in the
 * enum's order, "or" before the last (cluster files' and calibrate's
 * errors print this list) */
static void collective_names_listed(void **state)
{
	(void)state;
	char buf[256], want[256] = "";
	for (int c = 0; c < PL_COLL_COUNT; c++)
		snprintf(want + strlen(want), sizeof want - strlen(want), "%s%s",
		         !c                       ? ""
		         : c == PL_COLL_COUNT - 1 ? " or "
		                                  : ", ",
		         pl_coll_name((pl_coll)c));
	assert_string_equal(pl_coll_names(buf, sizeof buf), want);
	assert_string_equal(pl_coll_names(buf, sizeof buf),
	                    "all_reduce, all_gather, reduce_scatter, all_to_all or send_recv");
	assert_string_equal(pl_coll_names(buf, 4), "all"); /* cut, terminated */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(shapes),
	    cmocka_unit_test(collective_names_listed),
	    cmocka_unit_test(broadcast_batch_matmul_rejected),
	    cmocka_unit_test(constant_indices_bounded),
	    cmocka_unit_test(candidates),
	    cmocka_unit_test(unsplittable_axes),
	    cmocka_unit_test(work_is_conserved),
	    cmocka_unit_test(rules_complete),
	    cmocka_unit_test(attention_rule),
	    cmocka_unit_test(ring_attention_merges_by_hand),
	    cmocka_unit_test(loss_kernels),
	    cmocka_unit_test(loss_metrics_by_hand),
	    cmocka_unit_test(norm_kernels),
	    cmocka_unit_test(mask_kernels),
	};
	return cmocka_run_group_tests_name("planner::ops", tests, NULL, NULL);
}
