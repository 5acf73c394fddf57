/* topology::nccltests -- the recorded nccl-tests logs of tests/fixtures/nccl
 * parse to the rows and devices they hold (counts and peaks read off the
 * files by hand), their busbw columns agree with the bus factors the cost
 * model uses, and the fitted cluster meets the calibration bar on each: the
 * large-message bus bandwidth within 5% of the log's peak, alpha within a
 * factor 2 of the smallest message's time. Size-range fits recover known
 * piecewise lines; broken and mutated logs are refused, never crash. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>
#include <cmocka.h>

#include "costmodel/cluster.h"
#include "planner/checkpoint.h"
#include "costmodel/fit.h"
#include "topology/nccltests.h"

static double rel(double a, double b)
{
	return fabs(a - b) / fabs(b);
}

/* What each recorded log holds, read off the file: the collective its header
 * names (PL_COLL_COUNT: only the file name does), "# Using devices" ranks and
 * hosts (0: not printed), rows with a size > 0, the first row's size and
 * out-of-place time, and the largest out-of-place busbw. */
static const struct logcase {
	const char *file;
	pl_coll header_coll, coll;
	int64_t ranks, hosts;
	const char *device;
	int rows;
	double first_bytes, first_us, peak_busbw;
} cases[] = {
    {"a100x8-single-node-allgather.txt", PL_COLL_COUNT, PL_COLL_ALL_GATHER, 8, 1, "A100-SXM4-40GB",
     29, 32, 35.03, 223.39},
    {"a100x8-single-node-alltoall.txt", PL_COLL_COUNT, PL_COLL_ALL_TO_ALL, 8, 1, "A100-SXM4-40GB",
     29, 32, 89.00, 224.31},
    {"a100x8x2-multinode-ib-allreduce.txt", PL_COLL_ALL_REDUCE, PL_COLL_ALL_REDUCE, 0, 0, "", 30, 8,
     38.63, 188.53},
    {"h100x8-single-node-allreduce.txt", PL_COLL_ALL_REDUCE, PL_COLL_ALL_REDUCE, 8, 1,
     "NVIDIA H100 80GB HBM3", 31, 8, 34.98, 368.09},
    {"rtx5090x4-pcie-single-node-allreduce.txt", PL_COLL_ALL_REDUCE, PL_COLL_ALL_REDUCE, 4, 1,
     "NVIDIA GeForce RTX 5090", 25, 8, 15.60, 27.26},
};
#define NCASES (int)(sizeof cases / sizeof *cases)

static char *fixture(const char *name)
{
	const char *dir = getenv("PL_FIXTURES");
	assert_non_null(dir);
	char *p = malloc(strlen(dir) + strlen(name) + 8);
	sprintf(p, "%s/nccl/%s", dir, name);
	return p;
}

static void load(const struct logcase *c, pl_nccl_log *log, char **path)
{
	char *text;
	size_t len;
	pl_err err;
	*path = fixture(c->file);
	assert_int_equal(pl_read_file(*path, &text, &len, &err), PL_OK);
	pl_status st = pl_nccl_log_parse(log, text, len, *path, &err);
	if (st)
		fail_msg("%s", err.msg);
	free(text);
}

static void parses_every_recorded_log(void **state)
{
	(void)state;
	for (int i = 0; i < NCASES; i++) {
		const struct logcase *c = &cases[i];
		pl_nccl_log log;
		char *path;
		load(c, &log, &path);
		assert_int_equal(log.coll, c->header_coll);
		assert_int_equal(pl_nccl_coll_in_name(path), c->coll);
		assert_int_equal(log.ranks, c->ranks);
		assert_int_equal(log.hosts, c->hosts);
		assert_string_equal(log.device, c->device);
		assert_int_equal(log.n, c->rows);
		assert_true(log.pt[0].bytes == c->first_bytes);
		assert_true(rel(log.pt[0].seconds, c->first_us * 1e-6) < 1e-12);
		double peak = 0;
		for (int k = 0; k < log.n; k++) {
			peak = fmax(peak, log.pt[k].busbw);
			if (k)
				assert_true(log.pt[k].bytes >= log.pt[k - 1].bytes);
		}
		assert_true(rel(peak, c->peak_busbw * 1e9) < 1e-12);
		/* the recorded busbw is algbw times the bus factor of the cost
		 * model, for the rank count the log prints or the ratio implies */
		int64_t n = pl_nccl_log_ranks_from_busbw(&log, c->coll);
		if (c->ranks)
			assert_int_equal(n, c->ranks);
		else
			assert_int_equal(n, 16); /* the provenance note: 2 nodes x 8 */
		for (int k = 0; k < log.n; k++)
			if (log.pt[k].algbw >= 10e9)
				assert_true(rel(log.pt[k].busbw,
				                log.pt[k].algbw * pl_bus_factor(c->coll, n)) <
				            0.01);
		pl_nccl_log_free(&log);
		free(path);
	}
}

static void fit_meets_the_log_peak_and_latency(void **state)
{
	(void)state;
	for (int i = 0; i < NCASES; i++) {
		const struct logcase *c = &cases[i];
		pl_nccl_log log;
		char *path;
		load(c, &log, &path);
		log.coll = c->coll;
		if (!log.ranks) { /* the multi-node log: 16 ranks on 2 hosts */
			log.ranks = 16;
			log.hosts = 2;
		}
		int link = log.hosts > 1 ? PL_LINK_INTER : PL_LINK_INTRA;
		pl_cluster cl;
		pl_err err;
		assert_int_equal(pl_cluster_preset(&cl, "h100x8", &err), PL_OK);
		memset(cl.coll, 0, sizeof cl.coll);
		cJSON *raw = cJSON_CreateArray();
		const char *files[1] = {path};
		assert_int_equal(pl_nccl_fit_cluster(&cl, &log, files, 1, raw, &err), PL_OK);
		assert_int_equal(cJSON_GetArraySize(raw), 1);
		assert_true(cl.nodes == log.hosts && cl.devices_per_node == log.ranks / log.hosts);
		const pl_nccl_point *small = &log.pt[0], *big = &log.pt[log.n - 1];
		pl_ab lo = pl_cluster_ab(&cl, c->coll, link, log.ranks, small->bytes);
		pl_ab hi = pl_cluster_ab(&cl, c->coll, link, log.ranks, big->bytes);
		double peak = c->peak_busbw * 1e9;
		if (rel(1 / hi.beta, peak) > 0.05 || lo.alpha > 2 * small->seconds ||
		    lo.alpha < small->seconds / 2)
			fail_msg("%s: fitted busbw %.4g GB/s (log peak %.4g), alpha %.3g us "
			         "(smallest message %.3g us)",
			         c->file, 1e-9 / hi.beta, peak / 1e9, lo.alpha * 1e6,
			         small->seconds * 1e6);
		/* and the fitted curve follows the log: no point off by a quarter, and
		 * the largest message within 5% */
		for (int k = 0; k < log.n; k++) {
			double t =
			    pl_cluster_coll_time(&cl, c->coll, link, log.ranks, log.pt[k].bytes);
			if (rel(t, log.pt[k].seconds) > 0.25)
				fail_msg("%s: %.0f B: fit %.3g s, log %.3g s", c->file,
				         log.pt[k].bytes, t, log.pt[k].seconds);
		}
		assert_true(rel(pl_cluster_coll_time(&cl, c->coll, link, log.ranks, big->bytes),
		                big->seconds) < 0.05);
		cJSON_Delete(raw);
		pl_nccl_log_free(&log);
		free(path);
	}
}

/* two lines meeting at 1 MB, sampled 8 B..1 GB: the fit finds both */
static void fit_ranges_recover_piecewise_lines(void **state)
{
	(void)state;
	const pl_ab lo = {2e-5, 1.0 / 2e10}, hi = {8e-5, 1.0 / 3e11};
	double x[28], y[28], lim[PL_FIT_MAX_RANGES];
	int n = 0, nseg;
	for (double s = 8; s <= 1.1e9; s *= 2, n++) {
		x[n] = s;
		const pl_ab *l = s <= 1048576 ? &lo : &hi;
		y[n] = l->alpha + s * l->beta;
	}
	pl_ab ab[PL_FIT_MAX_RANGES];
	assert_int_equal(pl_fit_ab_ranges(x, y, n, PL_FIT_MAX_RANGES, ab, lim, &nseg), 0);
	assert_int_equal(nseg, 2);
	assert_true(lim[0] == 1048576 && lim[1] == 0);
	assert_true(rel(ab[0].alpha, lo.alpha) < 1e-6 && rel(ab[0].beta, lo.beta) < 1e-6);
	assert_true(rel(ab[1].alpha, hi.alpha) < 1e-6 && rel(ab[1].beta, hi.beta) < 1e-6);
	/* one exact line needs one range */
	for (int i = 0; i < n; i++)
		y[i] = lo.alpha + x[i] * lo.beta;
	assert_int_equal(pl_fit_ab_ranges(x, y, n, PL_FIT_MAX_RANGES, ab, lim, &nseg), 0);
	assert_int_equal(nseg, 1);
	assert_true(rel(ab[0].beta, lo.beta) < 1e-9);
	/* unsorted sizes are refused for ranges */
	double t = x[3];
	x[3] = x[4];
	x[4] = t;
	assert_int_equal(pl_fit_ab_ranges(x, y, n, 2, ab, lim, &nseg), -1);
}

/* a cluster's lines: the nearest group size, then the range holding S */
static void cluster_picks_line_by_ranks_and_bytes(void **state)
{
	(void)state;
	pl_cluster c;
	pl_err err;
	assert_int_equal(pl_cluster_preset(&c, "h100x8", &err), PL_OK);
	c.coll[PL_COLL_ALL_REDUCE][PL_LINK_INTRA] =
	    (pl_ab_list){.n = 4,
	                 .ranks = {8, 8, 8, 2},
	                 .ab = {{1, 0}, {3, 0}, {2, 0}, {4, 0}},
	                 .max_bytes = {1e3, 0, 1e6, 0}};
	static const struct {
		int64_t n;
		double bytes, alpha;
	} want[] = {{8, 10, 1},  {8, 1e3, 1}, {8, 1001, 2}, {8, 1e6, 2},
	            {8, 1e9, 3}, {6, 10, 1},  {3, 1e9, 4},  {2, 10, 4}};
	for (size_t i = 0; i < sizeof want / sizeof *want; i++)
		assert_true(
		    pl_cluster_ab(&c, PL_COLL_ALL_REDUCE, PL_LINK_INTRA, want[i].n, want[i].bytes)
		        .alpha == want[i].alpha);
}

static pl_status parse_text(const char *text, pl_nccl_log *log, pl_err *err)
{
	return pl_nccl_log_parse(log, text, strlen(text), "bad.txt", err);
}

#define ROW(size, us, alg, bus)                                                                    \
	"  " #size "  2  float  sum  -1  " #us "  " #alg "  " #bus "  0  " #us "  " #alg "  " #bus \
	"  0\n"

static void rejects_broken_logs(void **state)
{
	(void)state;
	static const struct {
		const char *text, *want;
	} bad[] = {
	    {"", "0 result rows"},
	    {"# nThread 1 nGpus 8\n#\n", "0 result rows"},
	    {"hello world\nthis is not nccl-tests\n", "0 result rows"},
	    {ROW(1024, 10.0, 0.10, 0.18) "  2048  512  float  sum  -1  11.0  0.19\n",
	     "bad.txt:2: expected a result row"},
	    {ROW(2048, 10.0, 0.20, 0.36) ROW(1024, 10.0, 0.10, 0.18),
	     "bad.txt:2: size 1024 after 2048"},
	    {ROW(1048576, 10.0, 104.86, 183.5) ROW(2097152, 20.0, 50.0, 87.5),
	     "bad.txt:2: algbw 50.0 GB/s but size/time"},
	    {ROW(1024, 0, 0, 0) ROW(2048, 10.0, 0.20, 0.36), "bad.txt:1: out-of-place time 0"},
	    {ROW(1024, 10.0, 0.10, 0.18) ROW(2048, nan, 0.20, 0.36),
	     "bad.txt:2: expected a result"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		pl_nccl_log log;
		pl_err err;
		assert_int_equal(parse_text(bad[i].text, &log, &err), PL_EINVAL);
		if (!strstr(err.msg, bad[i].want))
			fail_msg("case %zu: '%s' lacks '%s'", i, err.msg, bad[i].want);
		assert_null(log.pt);
	}
	pl_nccl_log log;
	pl_err err;
	const char nul[] = ROW(1024, 10.0, 0.10, 0.18) "\0" ROW(2048, 10.0, 0.20, 0.36);
	assert_int_equal(pl_nccl_log_parse(&log, nul, sizeof nul - 1, "bad.txt", &err), PL_EINVAL);
	assert_non_null(strstr(err.msg, "binary"));
	/* a fit needs a collective and whole hosts */
	assert_int_equal(
	    parse_text(ROW(1024, 10.0, 0.10, 0.18) ROW(2048, 10.0, 0.20, 0.36), &log, &err), PL_OK);
	pl_cluster c;
	assert_int_equal(pl_cluster_preset(&c, "h100x8", &err), PL_OK);
	const char *files[1] = {"bad.txt"};
	assert_int_equal(pl_nccl_fit_cluster(&c, &log, files, 1, NULL, &err), PL_EINVAL);
	assert_non_null(strstr(err.msg, "bad.txt"));
	log.coll = PL_COLL_ALL_REDUCE;
	log.ranks = 6;
	log.hosts = 4;
	assert_int_equal(pl_nccl_fit_cluster(&c, &log, files, 1, NULL, &err), PL_EINVAL);
	pl_nccl_log_free(&log);
}

static void names_of_collectives(void **state)
{
	(void)state;
	assert_int_equal(pl_nccl_coll_parse("all_reduce_perf"), PL_COLL_ALL_REDUCE);
	assert_int_equal(pl_nccl_coll_parse("alltoall"), PL_COLL_ALL_TO_ALL);
	assert_int_equal(pl_nccl_coll_parse("all_to_all"), PL_COLL_ALL_TO_ALL);
	assert_int_equal(pl_nccl_coll_parse("sendrecv_perf"), PL_COLL_SEND_RECV);
	assert_int_equal(pl_nccl_coll_parse("broadcast_perf"), PL_COLL_COUNT);
	assert_int_equal(pl_nccl_coll_in_name("/x/run-3/Reduce-Scatter.log"),
	                 PL_COLL_REDUCE_SCATTER);
	assert_int_equal(pl_nccl_coll_in_name("allreduce/results.txt"), PL_COLL_COUNT);
	assert_int_equal(pl_nccl_coll_in_name("allreduce-vs-allgather.txt"), PL_COLL_COUNT);
}

/* every truncation and many byte flips of a real log: parsed or refused */
static void mutated_logs_never_crash(void **state)
{
	(void)state;
	char *path = fixture(cases[3].file), *text;
	size_t len;
	pl_err err;
	assert_int_equal(pl_read_file(path, &text, &len, &err), PL_OK);
	char *buf = malloc(len);
	unsigned seed = 12345;
	int ok = 0, refused = 0;
	for (int iter = 0; iter < 3000; iter++) {
		memcpy(buf, text, len);
		size_t n = iter < 1000 ? (size_t)iter * len / 1000 : len;
		for (int f = 0; iter >= 1000 && f < 1 + iter % 8; f++) {
			seed = seed * 1103515245u + 12345u;
			size_t at = (seed >> 4) % len;
			static const char pool[] = "0123456789.-+e #\n\t\0xN/A";
			buf[at] = pool[(seed >> 20) % (sizeof pool - 1)];
		}
		pl_nccl_log log;
		pl_status st = pl_nccl_log_parse(&log, buf, n, "m.txt", &err);
		assert_true(st == PL_OK || st == PL_EINVAL);
		if (st) {
			refused++;
			continue;
		}
		ok++;
		log.coll = PL_COLL_ALL_REDUCE;
		log.ranks = 8;
		log.hosts = 1;
		pl_cluster c;
		assert_int_equal(pl_cluster_preset(&c, "h100x8", &err), PL_OK);
		const char *files[1] = {"m.txt"};
		st = pl_nccl_fit_cluster(&c, &log, files, 1, NULL, &err);
		assert_true(st == PL_OK || st == PL_EINVAL);
		pl_nccl_log_free(&log);
	}
	assert_true(ok > 0 && refused > 0);
	free(buf);
	free(text);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(parses_every_recorded_log),
	    cmocka_unit_test(fit_meets_the_log_peak_and_latency),
	    cmocka_unit_test(fit_ranges_recover_piecewise_lines),
	    cmocka_unit_test(cluster_picks_line_by_ranks_and_bytes),
	    cmocka_unit_test(rejects_broken_logs),
	    cmocka_unit_test(names_of_collectives),
	    cmocka_unit_test(mutated_logs_never_crash),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
