/* costmodel::attention -- fused attention priced by its kernel's measured
 * rate: the compiled table is the published one (every fp16 row of
 * costmodel/attention_measured.csv read back at its own shape), lengths
 * between measured ones fall between their rates, a backward without its
 * own measurement is derived as attention.h says, and an op of a benchmark's
 * shape is priced at its FLOPs over the measured rate, within the launch
 * overheads. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "costmodel/attention.h"
#include "costmodel/cost.h"
#include "graph/graph.h"
#include "graph/model.h"

static FILE *csv(void)
{
	const char *dir = getenv("PL_SOURCE_DIR");
	assert_non_null(dir);
	char path[4096];
	snprintf(path, sizeof path, "%s/costmodel/attention_measured.csv", dir);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	return f;
}

/* every fp16 row of a fused kernel, read at its own shape, is its printed
 * rate (the one direction it was measured in) */
static void table_is_the_csv(void **state)
{
	(void)state;
	FILE *f = csv();
	char line[4096];
	int n = 0;
	while (fgets(line, sizeof line, f)) {
		if (line[0] == '#' || !strncmp(line, "gpu,", 4))
			continue;
		char gpu[64], kernel[32], dtype[16], dir[16];
		int causal, hd, seq, batch, heads;
		double tflops;
		assert_int_equal(sscanf(line, "%63[^,],%31[^,],%15[^,],%15[^,],%d,%d,%d,%d,%d,%lf",
		                        gpu, kernel, dtype, dir, &causal, &hd, &seq, &batch, &heads,
		                        &tflops),
		                 10);
		if (strcmp(dtype, "fp16") || !strcmp(kernel, "pytorch"))
			continue;
		int k;
		for (k = 0; k < pl_attn_nrows; k++) {
			const pl_attn_row *r = &pl_attn_rows[k];
			if (!strcmp(r->gpu, gpu) && !strcmp(r->kernel, kernel) &&
			    !strcmp(r->direction, dir) && r->causal == causal &&
			    r->head_dim == hd && r->seqlen == seq)
				break;
		}
		if (k == pl_attn_nrows)
			fail_msg("not in the table: %s", line);
		assert_true(fabs(pl_attn_rows[k].flops - tflops * 1e12) <= 1e-6 * tflops * 1e12);
		if (strcmp(dir, "fwd_bwd")) { /* the look-up answers it where it was measured */
			double r =
			    pl_attention_rate(gpu, kernel, !strcmp(dir, "bwd"), causal, hd, seq);
			if (fabs(r - tflops * 1e12) > 1e-6 * tflops * 1e12)
				fail_msg("%s %s %s causal %d d %d s %d: %g, measured %g", gpu,
				         kernel, dir, causal, hd, seq, r, tflops * 1e12);
		}
		n++;
	}
	fclose(f);
	assert_int_equal(n, pl_attn_nrows);
}

/* between two measured lengths the rate lies between theirs; past the ends
 * it is the end's; H200 reads H100's measurements */
static void interpolation(void **state)
{
	(void)state;
	double a = pl_attention_rate("H100-SXM", "flash2", 0, 1, 128, 2048),
	       b = pl_attention_rate("H100-SXM", "flash2", 0, 1, 128, 4096),
	       m = pl_attention_rate("H100-SXM", "flash2", 0, 1, 128, 3000);
	assert_true(a > 0 && b > a && m > a && m < b);
	assert_true(pl_attention_rate("H100-SXM", "flash2", 0, 1, 128, 131072) ==
	            pl_attention_rate("H100-SXM", "flash2", 0, 1, 128, 16384));
	assert_true(pl_attention_rate("H200", "flash3", 0, 0, 128, 8192) ==
	            pl_attention_rate("H100-SXM", "flash3", 0, 0, 128, 8192));
	/* a head dimension between measured ones: between their rates */
	double d64 = pl_attention_rate("H100-SXM", "flash3", 0, 0, 64, 8192),
	       d128 = pl_attention_rate("H100-SXM", "flash3", 0, 0, 128, 8192),
	       d96 = pl_attention_rate("H100-SXM", "flash3", 0, 0, 96, 8192);
	assert_true(fabs(d96 - (d64 + d128) / 2) <= 1e-9 * d96);
	/* nothing measured for this GPU or kernel: 0 (the GEMM curve prices it) */
	assert_true(pl_attention_rate("Tesla V100-SXM3-32GB", "flash2", 0, 0, 128, 4096) == 0);
	assert_true(pl_attention_rate("H100-SXM", "nosuch", 0, 0, 128, 4096) == 0);
	assert_false(pl_attention_kernel_known("nosuch"));
	assert_true(pl_attention_kernel_known("cudnn"));
}

/* H100 flash2 has no causal backward: t_fb = t_f + t_b with the
 * forward+backward and forward measurements (FLOPs 3.5 and 1) */
static void derived_backward(void **state)
{
	(void)state;
	double fb = 0, f = pl_attention_rate("H100-SXM", "flash2", 0, 1, 128, 4096);
	for (int k = 0; k < pl_attn_nrows; k++) {
		const pl_attn_row *r = &pl_attn_rows[k];
		if (!strcmp(r->gpu, "H100-SXM5-80GB") && !strcmp(r->kernel, "flash2") &&
		    !strcmp(r->direction, "fwd_bwd") && r->causal && r->head_dim == 128 &&
		    r->seqlen == 4096)
			fb = r->flops;
	}
	assert_true(fb > 0 && f > 0);
	double b = pl_attention_rate("H100-SXM", "flash2", 1, 1, 128, 4096);
	assert_true(fabs(3.5 / fb - (1 / f + 2.5 / b)) <= 1e-9 * (3.5 / fb));
	/* A100 has forward+backward only: both directions at that rate */
	assert_true(pl_attention_rate("A100-SXM4-80GB", "flash2", 0, 1, 128, 4096) ==
	            pl_attention_rate("A100-SXM4-80GB", "flash2", 1, 1, 128, 4096));
}

/* an Attention op of the FlashAttention benchmark's shape (16k tokens,
 * hidden 2048, head dimension 128, causal) on one H100: forward and backward
 * take their FLOPs over the measured rate, plus one launch and two */
/* the CSV's fwd_bwd TFLOP/s of (gpu prefix, kernel, causal, d, s); 0: none */
/* one data row of the CSV */
typedef struct csv_row {
	char gpu[64], kernel[32], dtype[16], dir[16];
	int causal, hd, seq;
	double tflops;
} csv_row;

/* the CSV's next data row into r: 1, or 0 at its end */
static int next_row(FILE *f, csv_row *r)
{
	char line[4096];
	int batch, heads;
	while (fgets(line, sizeof line, f))
		if (line[0] != '#' &&
		    sscanf(line, "%63[^,],%31[^,],%15[^,],%15[^,],%d,%d,%d,%d,%d,%lf", r->gpu,
		           r->kernel, r->dtype, r->dir, &r->causal, &r->hd, &r->seq, &batch, &heads,
		           &r->tflops) == 10)
			return 1;
	return 0;
}

static double csv_rate(const char *gpu, const char *kernel, int causal, int d, int s)
{
	FILE *f = csv();
	csv_row r;
	double v = 0;
	while (next_row(f, &r))
		if (!strncmp(r.gpu, gpu, strlen(gpu)) && !strcmp(r.kernel, kernel) &&
		    !strcmp(r.dir, "fwd_bwd") && r.causal == causal && r.hd == d && r.seq == s)
			v = r.tflops * 1e12;
	fclose(f);
	return v;
}

/* The Triton FlashAttention and xformers are measured on A100 only: on H100
 * they run at FlashAttention-1's H100 rate times their A100 ratio to it, at
 * the measured shapes; a kernel of Hopper's own (flash3) is not carried to
 * A100 that way. */
static void ampere_kernels_carried(void **state)
{
	(void)state;
	static const char *const k[] = {"flash_triton", "xformers"};
	int checked = 0;
	for (int i = 0; i < 2; i++)
		for (int c = 0; c < 2; c++)
			for (int s = 512; s <= 16384; s *= 2) {
				double a = csv_rate("A100", k[i], c, 128, s),
				       a1 = csv_rate("A100", "flash1", c, 128, s),
				       h1 = csv_rate("H100", "flash1", c, 128, s);
				if (!(a > 0 && a1 > 0 && h1 > 0))
					continue;
				double want = h1 * a / a1,
				       got = pl_attention_rate("H100-SXM", k[i], 0, c, 128, s);
				if (fabs(got - want) > 1e-9 * want)
					fail_msg("%s causal %d s %d: %g, expected %g", k[i], c, s,
					         got, want);
				checked++;
			}
	assert_true(checked >= 20);
	assert_true(pl_attention_rate("A100-SXM4-80GB", "flash3", 0, 1, 128, 4096) == 0);
}

/* the longest fp16 length the CSV measures kernel at on a GPU of fam */
static int csv_longest(const char *fam, const char *kernel)
{
	FILE *f = csv();
	csv_row r;
	int v = 0;
	while (next_row(f, &r))
		if (!strncmp(r.gpu, fam, strlen(fam)) && !strcmp(r.kernel, kernel) &&
		    !strcmp(r.dtype, "fp16") && r.seq > v)
			v = r.seq;
	fclose(f);
	return v;
}

/* The longest length a kernel is priced from is the CSV's longest for it on
 * the GPU's family; an Ampere-style kernel off A100 is measured as far as
 * both its A100 rows and FlashAttention-1's rows there go (the two its rate
 * is carried by); no measurement: 0. */
static void longest_measured_length(void **state)
{
	(void)state;
	static const char *const k[] = {"flash1", "flash2",       "flash3",  "cudnn",
	                                "triton", "flash_triton", "xformers"};
	static const char *const fam[][2] = {{"A100", "A100-SXM4-80GB"}, {"H100", "H100-SXM"}};
	int some = 0;
	for (size_t i = 0; i < sizeof k / sizeof *k; i++)
		for (int j = 0; j < 2; j++) {
			int want = csv_longest(fam[j][0], k[i]);
			if (!want && j == 1 && (!strcmp(k[i], "flash_triton") || !strcmp(k[i], "xformers"))) {
				int a = csv_longest("A100", k[i]), f = csv_longest("H100", "flash1");
				want = a < f ? a : f;
			}
			int got = pl_attention_longest(fam[j][1], k[i]);
			if (got != want)
				fail_msg("%s on %s: %d, the CSV says %d", k[i], fam[j][0], got, want);
			some += want > 0;
		}
	assert_true(some >= 8);
	assert_int_equal(pl_attention_longest("H200-SXM", "flash2"), csv_longest("H100", "flash2"));
	assert_int_equal(pl_attention_longest("Tesla V100-SXM2-32GB", "flash2"), 0);
	assert_int_equal(pl_attention_longest("H100-SXM", "none"), 0);
	assert_int_equal(pl_attention_longest("A100-SXM4-80GB", "flash3"), 0);
}

/* a causal attention op of b x h heads of s x d, as the benchmarks run it */
static pl_graph *attention_graph(int b, int h, int s, int d)
{
	char text[2048];
	snprintf(text, sizeof text,
	         "{\"format\": \"planner.model/1\", \"name\": \"attn\", \"dtype\": \"bfloat16\","
	         " \"tensors\": {\"q\": {\"shape\": [%d, %d, %d, %d], \"role\": \"input\"},"
	         " \"k\": {\"shape\": [%d, %d, %d, %d], \"role\": \"input\"},"
	         " \"v\": {\"shape\": [%d, %d, %d, %d], \"role\": \"input\"},"
	         " \"w\": {\"shape\": [%d], \"role\": \"param\"}},"
	         " \"ops\": [{\"name\": \"scale\", \"type\": \"Mul\", \"inputs\": [\"q\", \"w\"],"
	         " \"outputs\": [\"qs\"]}, {\"name\": \"attn\", \"type\": \"Attention\","
	         " \"inputs\": [\"qs\", \"k\", \"v\"], \"outputs\": [\"y\"], \"attrs\": "
	         "{\"is_causal\": 1}}],"
	         " \"outputs\": [\"y\"]}",
	         b, h, s, d, b, h, s, d, b, h, s, d, d);
	pl_graph *g;
	pl_err err;
	if (pl_graph_load_json(&g, text, strlen(text), "attn.json", &err))
		fail_msg("%s", err.msg);
	return g;
}

/* A plan whose attention runs past the longest measured length says so
 * (pl_cost_attention_beyond), with that length and the table's; one at the
 * longest does not. */
static void attention_past_the_measurements(void **state)
{
	(void)state;
	pl_err err;
	pl_cluster c;
	assert_int_equal(pl_cluster_preset(&c, "h100x8", &err), PL_OK);
	assert_int_equal(pl_cluster_devices(&c, 1, &err), PL_OK);
	int longest = csv_longest("H100", c.attention_kernel);
	assert_true(longest > 0);
	for (int s = longest; s <= 4 * longest; s *= 4) {
		pl_graph *g = attention_graph(1, 16, s, 128);
		pl_problem *p;
		assert_int_equal(pl_problem_new(&p, g, &c, &err), PL_OK);
		int64_t one[PL_MAX_LOOPS], *splits[2] = {one, one};
		for (int l = 0; l < PL_MAX_LOOPS; l++)
			one[l] = 1;
		double seq = -1, lm = -1;
		int past = pl_cost_attention_beyond(p, splits, &seq, &lm);
		assert_int_equal(past, s > longest);
		assert_true(seq == (s > longest ? s : 0) && lm == (s > longest ? longest : 0));
		pl_problem_free(p);
		pl_graph_free(g);
	}
}

static void op_priced_at_the_measured_rate(void **state)
{
	(void)state;
	const int s = 4096, b = 16384 / 4096, h = 16, d = 128;
	pl_graph *g = attention_graph(b, h, s, d);
	pl_err err;
	pl_cluster c;
	assert_int_equal(pl_cluster_preset(&c, "h100x8", &err), PL_OK);
	assert_int_equal(pl_cluster_devices(&c, 1, &err), PL_OK);
	assert_string_equal(c.attention_kernel, "flash2");
	pl_problem *p;
	assert_int_equal(pl_problem_new(&p, g, &c, &err), PL_OK);
	int op = 1;
	assert_string_equal(g->ops[op].name, "attn");
	int64_t split[PL_MAX_LOOPS];
	for (int l = 0; l < PL_MAX_LOOPS; l++)
		split[l] = 1;
	pl_nodeparts np;
	pl_cost_node_parts(p, op, split, &np);
	double fwd_flops = 4.0 * s * s * d * h * b / 2; /* causal: half */
	double rf = pl_attention_rate(c.device_name, "flash2", 0, 1, d, s),
	       rb = pl_attention_rate(c.device_name, "flash2", 1, 1, d, s);
	if (!(fabs(np.fwd_s - (fwd_flops / rf + c.kernel_overhead_s)) <= 1e-9 * np.fwd_s))
		fail_msg("fwd %.6g s, expected %.6g (rate %.4g)", np.fwd_s,
		         fwd_flops / rf + c.kernel_overhead_s, rf);
	assert_true(fabs(np.bwd_s - (2.5 * fwd_flops / rb + 2 * c.kernel_overhead_s)) <=
	            1e-9 * np.bwd_s);
	pl_problem_free(p);
	/* a part of the family at another 16-bit peak (a cluster file's
	 * power-limited H100, 912.25 of 989 TFLOP/s): the measured rates at its
	 * peak's ratio to the measured part's; the preset's peak is that part's */
	assert_true(c.peak_flops[PL_DT_BFLOAT16] == pl_attention_part_peak(c.device_name));
	assert_true(pl_attention_part_peak("A100-SXM4-40GB") == 3.12e14);
	assert_true(pl_attention_part_peak("Tesla V100-SXM3-32GB") == 0);
	c.peak_flops[PL_DT_BFLOAT16] = 912.25e12;
	double k = 912.25e12 / 9.89e14;
	assert_int_equal(pl_problem_new(&p, g, &c, &err), PL_OK);
	pl_cost_node_parts(p, op, split, &np);
	if (!(fabs(np.fwd_s - (fwd_flops / (rf * k) + c.kernel_overhead_s)) <= 1e-9 * np.fwd_s))
		fail_msg("fwd at the lower peak %.6g s, expected %.6g", np.fwd_s,
		         fwd_flops / (rf * k) + c.kernel_overhead_s);
	assert_true(fabs(np.bwd_s - (2.5 * fwd_flops / (rb * k) + 2 * c.kernel_overhead_s)) <=
	            1e-9 * np.bwd_s);
	pl_problem_free(p);
	pl_graph_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(table_is_the_csv),
	    cmocka_unit_test(interpolation),
	    cmocka_unit_test(derived_backward),
	    cmocka_unit_test(ampere_kernels_carried),
	    cmocka_unit_test(op_priced_at_the_measured_rate),
	    cmocka_unit_test(longest_measured_length),
	    cmocka_unit_test(attention_past_the_measurements),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
