/* topology::fit and executor::calibrate -- the least-squares fits recover
 * known lines and curves (exact and with noise), refuse degenerate input; a
 * cluster written as JSON loads back to the same cluster; calibrating the
 * cpu backend gives a cluster the cost model can price with, with one fitted
 * line per collective and group size, and lines that reproduce the raw
 * measurements they were fitted to. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cjson/cJSON.h>
#include <cmocka.h>

#include "costmodel/cluster.h"
#include "executor/calibrate.h"
#include "planner/checkpoint.h"
#include "graph/output.h"
#include "costmodel/fit.h"

static double rel(double a, double b)
{
	return fabs(a - b) / fabs(b);
}

/* deterministic noise in [-amp, amp] */
static double noise(unsigned *s, double amp)
{
	*s = *s * 1103515245u + 12345u;
	return amp * (2.0 * (double)((*s >> 8) & 0xffff) / 65535.0 - 1.0);
}

static void fit_ab_exact_and_noisy(void **state)
{
	(void)state;
	const double alpha = 1.7e-5, beta = 1.0 / 3.2e11;
	double x[24], y[24];
	int n = 0;
	for (double b = 8; b <= 1 << 30; b *= 4, n++) {
		x[n] = b;
		y[n] = alpha + b * beta;
	}
	pl_ab ab;
	assert_int_equal(pl_fit_ab(x, y, n, &ab), 0);
	assert_true(rel(ab.alpha, alpha) < 1e-9);
	assert_true(rel(ab.beta, beta) < 1e-9);
	unsigned s = 7;
	for (int i = 0; i < n; i++)
		y[i] *= 1 + noise(&s, 0.03);
	assert_int_equal(pl_fit_ab(x, y, n, &ab), 0);
	assert_true(rel(ab.alpha, alpha) < 0.05);
	assert_true(rel(ab.beta, beta) < 0.05);
	/* pure latency: beta is kept at 0, alpha is the mean level */
	for (int i = 0; i < n; i++)
		y[i] = alpha * (i % 2 ? 1.01 : 0.99);
	assert_int_equal(pl_fit_ab(x, y, n, &ab), 0);
	assert_true(ab.beta >= 0 && ab.alpha > 0 && rel(ab.alpha, alpha) < 0.02);
	/* one size only, a non-positive time: no line */
	double one[3] = {64, 64, 64}, t[3] = {1e-5, 2e-5, 3e-5};
	assert_int_equal(pl_fit_ab(one, t, 3, &ab), -1);
	t[1] = 0;
	assert_int_equal(pl_fit_ab(x, t, 3, &ab), -1);
	assert_int_equal(pl_fit_ab(x, y, 1, &ab), -1);
}

static void fit_rate_curve(void **state)
{
	(void)state;
	const double peak = 6.5e13, half = 3e9;
	double f[8], r[8];
	for (int i = 0; i < 8; i++) {
		f[i] = 1e7 * pow(8, i);
		r[i] = peak * f[i] / (f[i] + half);
	}
	double p, h;
	assert_int_equal(pl_fit_rate_curve(f, r, 8, &p, &h), 0);
	assert_true(rel(p, peak) < 1e-9 && rel(h, half) < 1e-9);
	r[3] = -1;
	assert_int_equal(pl_fit_rate_curve(f, r, 8, &p, &h), -1);
}

/* Every field of two clusters equal, bit for bit. */
static void same_cluster(const pl_cluster *a, const pl_cluster *b)
{
	assert_string_equal(a->name, b->name);
	assert_string_equal(a->device_name, b->device_name);
	assert_string_equal(a->source, b->source);
	assert_true(a->nodes == b->nodes && a->devices_per_node == b->devices_per_node);
	assert_true(a->memory_bytes == b->memory_bytes &&
	            a->memory_bandwidth == b->memory_bandwidth);
	assert_true(a->memory_reserve == b->memory_reserve);
	for (int d = 0; d < PL_DT_COUNT; d++)
		assert_true(a->peak_flops[d] == b->peak_flops[d]);
	assert_true(a->gemm_eff_max == b->gemm_eff_max && a->gemm_half_flops == b->gemm_half_flops);
	assert_true(a->gemm_out_k == b->gemm_out_k && a->gemm_k_max == b->gemm_k_max);
	assert_true(a->vector_eff == b->vector_eff && a->bw_eff == b->bw_eff);
	assert_true(a->kernel_overhead_s == b->kernel_overhead_s);
	for (int k = 0; k < PL_OP_COUNT; k++)
		assert_true(a->kernel_scale[k] == b->kernel_scale[k]);
	for (int k = 0; k < PL_LINK_COUNT; k++) {
		assert_true(a->link[k].alpha == b->link[k].alpha);
		assert_true(rel(b->link[k].beta, a->link[k].beta) < 1e-14); /* stored as 1/beta */
		assert_true(a->link[k].beta == b->link[k].beta); /* and read back exactly */
	}
	for (int c = 0; c < PL_COLL_COUNT; c++)
		for (int k = 0; k < PL_LINK_COUNT; k++) {
			const pl_ab_list *x = &a->coll[c][k], *y = &b->coll[c][k];
			assert_int_equal(x->n, y->n);
			for (int i = 0; i < x->n; i++)
				assert_true(x->ranks[i] == y->ranks[i] &&
				            x->ab[i].alpha == y->ab[i].alpha &&
				            x->ab[i].beta == y->ab[i].beta &&
				            x->max_bytes[i] == y->max_bytes[i]);
		}
}

/* A cluster written as planner.cluster/1 reads back as the very same
 * cluster: through a file (what calibrate writes), and as the description a
 * checkpoint records for every preset and the calibrated fixture, so that
 * 'planner cost' reprices on exactly the cluster a plan was searched on. */
static void cluster_json_round_trip(void **state)
{
	(void)state;
	pl_cluster a, b;
	pl_err err;
	assert_int_equal(pl_cluster_preset(&a, "a100x8:2", &err), PL_OK);
	a.coll[PL_COLL_ALL_GATHER][PL_LINK_INTRA] =
	    (pl_ab_list){.n = 3,
	                 .ranks = {2, 8, 8},
	                 .ab = {{1e-5, 1e-11}, {2e-5, 3e-12}, {9e-5, 2.5e-12}},
	                 .max_bytes = {0, 1048576, 0}};
	a.coll[PL_COLL_ALL_REDUCE][PL_LINK_INTER] = (pl_ab_list){.n = 1, .ab = {{4e-5, 5e-11}}};
	a.gemm_half_flops = 1.25e9;
	a.vector_eff = 0.3;
	a.kernel_scale[PL_OP_GELU] = 1.884602999600264;
	a.kernel_scale[PL_OP_DROPOUT] = 4.5;
	cJSON *j = pl_cluster_to_json(&a);
	char *text = cJSON_Print(j);
	char path[] = "/tmp/pl-cluster-rt-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(pl_output_write(path, text, &err), PL_OK);
	assert_int_equal(pl_cluster_load_file(&b, path, &err), PL_OK);
	unlink(path);
	free(text);
	cJSON_Delete(j);
	same_cluster(&a, &b);

	static const char *const names[] = {"h100x8", "h100x8:4",  "a100x8", "a100-80gx8:2",
	                                    "h200x8", "dgx2-v100", "cpu"};
	size_t np = sizeof names / sizeof *names;
	for (size_t k = 0; k <= np; k++) {
		if (k < np) {
			assert_int_equal(pl_cluster_preset(&a, names[k], &err), PL_OK);
		} else {
			char fx[1024];
			snprintf(fx, sizeof fx, "%s/cluster/cpu-x2-calibrated.json",
			         getenv("PL_FIXTURES"));
			assert_int_equal(pl_cluster_load_file(&a, fx, &err), PL_OK);
		}
		j = pl_cluster_to_json(&a);
		text = cJSON_Print(j);
		cJSON *back = cJSON_Parse(text);
		assert_int_equal(pl_cluster_from_json(&b, back, "description", &err), PL_OK);
		same_cluster(&a, &b);
		cJSON_Delete(back);
		free(text);
		cJSON_Delete(j);
	}
}

static void calibrate_cpu_backend(void **state)
{
	(void)state;
	const int64_t R = 3;
	pl_backend *be;
	pl_err err;
	assert_int_equal(pl_backend_cpu(&be, R, 0, &err), PL_OK);
	pl_calib_opts o = {.max_bytes = 1 << 16, .min_seconds = 0.002};
	pl_cluster c;
	cJSON *raw;
	assert_int_equal(pl_calibrate(be, &o, &c, &raw, &err), PL_OK);
	pl_backend_free(be);
	assert_true(c.nodes == 1 && c.devices_per_node == R);
	assert_true(c.peak_flops[PL_DT_FLOAT32] > 1e8 && c.memory_bandwidth > 1e7);
	assert_true(c.vector_eff > 0 && c.memory_bytes > 0 && c.kernel_overhead_s >= 0);
	/* each scaled kernel: its measured time over what the fit prices it at */
	static const pl_optype scaled[] = {PL_OP_ADD,       PL_OP_GELU,    PL_OP_SOFTMAX,
	                                   PL_OP_LAYERNORM, PL_OP_DROPOUT, PL_OP_TRANSPOSE};
	const cJSON *ks = cJSON_GetObjectItem(raw, "kernel_scale");
	for (size_t i = 0; i < sizeof scaled / sizeof *scaled; i++) {
		const cJSON *e = cJSON_GetObjectItem(ks, pl_optype_name(scaled[i]));
		assert_non_null(e);
		double s = cJSON_GetObjectItem(e, "seconds")->valuedouble,
		       m = cJSON_GetObjectItem(e, "model_seconds")->valuedouble;
		assert_true(s > 0 && m > 0);
		assert_true(rel(c.kernel_scale[scaled[i]], s / m) < 1e-12);
	}
	/* one line per collective and group size 2..R, each near its points */
	static const char *names[] = {"all_reduce", "all_gather", "reduce_scatter", "all_to_all"};
	const cJSON *colls = cJSON_GetObjectItem(raw, "collectives");
	for (int k = 0; k < 4; k++) {
		const pl_ab_list *l = &c.coll[k][PL_LINK_INTRA];
		assert_int_equal(l->n, R - 1);
		const cJSON *arr = cJSON_GetObjectItem(colls, names[k]), *g;
		assert_int_equal(cJSON_GetArraySize(arr), R - 1);
		int gi = 0;
		cJSON_ArrayForEach (g, arr) {
			int64_t n = (int64_t)cJSON_GetObjectItem(g, "ranks")->valuedouble;
			assert_true(n == l->ranks[gi] && n == gi + 2);
			assert_true(l->ab[gi].alpha >= 0 && l->ab[gi].beta > 0);
			/* the fit minimises relative error: its typical error is small */
			double err2 = 0;
			int np = 0;
			const cJSON *pt;
			cJSON_ArrayForEach (pt, cJSON_GetObjectItem(g, "points")) {
				double b = cJSON_GetObjectItem(pt, "bytes")->valuedouble;
				double s = cJSON_GetObjectItem(pt, "seconds")->valuedouble;
				double t =
				    pl_cluster_coll_time(&c, (pl_coll)k, PL_LINK_INTRA, n, b);
				assert_true(s > 0 && b >= 4);
				err2 += (t - s) * (t - s) / (s * s);
				np++;
			}
			assert_true(np >= 4 && sqrt(err2 / np) < 1.0);
			gi++;
		}
	}
	cJSON_Delete(raw);
}

/* the built-in cpu preset is the recorded calibration, rounded to 3 digits */
static void cpu_preset_is_the_recorded_calibration(void **state)
{
	(void)state;
	char path[4096];
	const char *fx = getenv("PL_FIXTURES");
	snprintf(path, sizeof path, "%s/cluster/cpu-x2-calibrated.json",
	         fx ? fx : "tests/fixtures");
	pl_cluster rec, pre;
	pl_err err;
	assert_int_equal(pl_cluster_load_file(&rec, path, &err), PL_OK);
	assert_int_equal(pl_cluster_preset(&pre, "cpu", &err), PL_OK);
	const double tol = 5e-3;
	assert_true(pre.devices_per_node == rec.devices_per_node && pre.nodes == 1);
	for (int d = 0; d < PL_DT_COUNT; d++)
		assert_true(rel(pre.peak_flops[d], rec.peak_flops[d]) < tol);
	assert_true(rel(pre.gemm_half_flops, rec.gemm_half_flops) < tol);
	assert_true(rel(pre.gemm_eff_max, rec.gemm_eff_max) < tol);
	assert_true(rel(pre.vector_eff, rec.vector_eff) < tol);
	assert_true(rel(pre.memory_bandwidth, rec.memory_bandwidth) < tol);
	assert_true(rel(pre.bw_eff, rec.bw_eff) < tol);
	assert_true(rel(pre.kernel_overhead_s, rec.kernel_overhead_s) < tol);
	assert_true(rel(pre.memory_bytes, rec.memory_bytes) < tol);
	for (int k = 0; k < PL_COLL_COUNT; k++) {
		pl_ab a = pl_cluster_ab(&pre, (pl_coll)k, PL_LINK_INTRA, 2, 1e6);
		pl_ab b = pl_cluster_ab(&rec, (pl_coll)k, PL_LINK_INTRA, 2, 1e6);
		assert_true(rel(a.alpha, b.alpha) < tol && rel(a.beta, b.beta) < tol);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(fit_ab_exact_and_noisy),
	    cmocka_unit_test(fit_rate_curve),
	    cmocka_unit_test(cluster_json_round_trip),
	    cmocka_unit_test(calibrate_cpu_backend),
	    cmocka_unit_test(cpu_preset_is_the_recorded_calibration),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
