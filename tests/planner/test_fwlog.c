/* planner::fwlog -- the training-log readers on published excerpts of each
 * framework's log (tests/fixtures/logs, SOURCE.md there): every number
 * asserted below was read off the excerpt's lines by eye, not produced by
 * the reader. Then what the excerpts do not show: ANSI colours, launchers'
 * rank prefixes, CR line ends, over-long lines, a step marker without its
 * number, DeepSpeed's printed train_batch_size, the warm-up rule and the
 * conversions of rates into steps; mutated excerpts never crash. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "planner/fwlog.h"
#include "graph/graph.h"

static const double MiB = 1048576.0, GiB = 1073741824.0;

static void near(double got, double want)
{
	if (!(fabs(got - want) <= 1e-9 * fabs(want) + 1e-12)) {
		fprintf(stderr, "got %.12g, want %.12g\n", got, want);
		fail();
	}
}

/* the fixture logs/NAME read into *l (its text kept in *text when asked) */
static void load(const char *name, pl_fwlog *l)
{
	const char *dir = getenv("PL_FIXTURES");
	assert_non_null(dir);
	char path[4096];
	snprintf(path, sizeof path, "%s/logs/%s", dir, name);
	char *text;
	size_t len;
	pl_err err;
	assert_int_equal(pl_read_file(path, &text, &len, &err), PL_OK);
	memset(l, 0, sizeof *l);
	assert_int_equal(pl_fwlog_read(text, len, name, l, &err), PL_OK);
	free(text);
}

static void read_text(const char *text, pl_fwlog *l)
{
	pl_err err;
	memset(l, 0, sizeof *l);
	assert_int_equal(pl_fwlog_read(text, strlen(text), "t.log", l, &err), PL_OK);
}

static void megatron_2024(void **state)
{
	(void)state;
	pl_fwlog l;
	load("megatron-lm-2024-mixtral.log", &l);
	assert_int_equal(l.nsteps, 3);
	assert_int_equal(l.nmems, 0);
	const int64_t step[] = {43, 44, 45};
	const double ms[] = {5444.9, 5533.8, 5718.6}, tf[] = {239.8, 236.0, 228.4};
	for (int i = 0; i < 3; i++) {
		assert_int_equal(l.steps[i].kind, PL_FWLOG_MEGATRON);
		assert_int_equal(l.steps[i].line, i + 1);
		assert_int_equal(l.steps[i].step, step[i]);
		near(l.steps[i].step_s, ms[i] / 1e3);
		near(l.steps[i].tflops, tf[i]);
		assert_int_equal(l.steps[i].rank, -1);
	}
	pl_fwlog_summary s;
	pl_err err;
	assert_int_equal(pl_fwlog_summarise(&l, 1, NULL, "m.log", &s, &err), PL_OK);
	assert_int_equal(s.kind, PL_FWLOG_MEGATRON);
	assert_int_equal(s.reports, 3);
	assert_int_equal(s.used, 2);
	assert_int_equal(s.warmup_steps, 1);
	assert_int_equal(s.first_step, 44);
	assert_int_equal(s.last_step, 45);
	near(s.step_s, (5.5338 + 5.7186) / 2);
	assert_true(isnan(s.max_allocated) && isnan(s.max_reserved));
	pl_fwlog_free(&l);
}

static void megatron_2026_memory(void **state)
{
	(void)state;
	pl_fwlog l;
	load("megatron-lm-2026-memory.log", &l);
	assert_int_equal(l.nsteps, 1);
	assert_int_equal(l.steps[0].step, 20);
	near(l.steps[0].step_s, 0.744);
	assert_true(isnan(l.steps[0].tflops));
	assert_int_equal(l.nmems, 1);
	const pl_fwlog_mem *m = &l.mems[0];
	assert_int_equal(m->line, 2);
	assert_int_equal(m->rank, 0);
	near(m->allocated, 3270.16 * MiB);
	near(m->max_allocated, 5670.39 * MiB);
	near(m->reserved, 6406.00 * MiB);
	near(m->max_reserved, 6406.00 * MiB);
	pl_fwlog_summary s;
	pl_err err;
	/* one report: all warm-up under the default rule, kept with 0 */
	assert_int_equal(pl_fwlog_summarise(&l, 1, NULL, "m.log", &s, &err), PL_EINVAL);
	assert_non_null(strstr(err.msg, "m.log: 1 step report of Megatron-LM"));
	assert_non_null(strstr(err.msg, "--warmup 0"));
	assert_int_equal(pl_fwlog_summarise(&l, 0, NULL, "m.log", &s, &err), PL_OK);
	near(s.step_s, 0.744);
	near(s.max_allocated, 5670.39 * MiB);
	near(s.max_reserved, 6406.00 * MiB);
	assert_int_equal(s.mem_line, 2);
	pl_fwlog_free(&l);
}

static void megatron_2020(void **state)
{
	(void)state;
	pl_fwlog l;
	load("megatron-lm-2020.log", &l);
	assert_int_equal(l.nsteps, 3);
	const int lines[] = {2, 5, 7};
	const int64_t step[] = {5, 10, 15};
	const double ms[] = {16491.5, 1993.9, 1978.1};
	for (int i = 0; i < 3; i++) {
		assert_int_equal(l.steps[i].line, lines[i]);
		assert_int_equal(l.steps[i].step, step[i]);
		near(l.steps[i].step_s, ms[i] / 1e3);
	}
	/* "time (ms) | ... | optimizer: 0.06 | ..." lines are not steps */
	assert_int_equal(l.nmems, 1);
	assert_int_equal(l.mems[0].line, 3);
	assert_int_equal(l.mems[0].rank, -1);
	near(l.mems[0].allocated, 10250.5693359375 * MiB);
	near(l.mems[0].max_allocated, 12606.06201171875 * MiB);
	near(l.mems[0].max_reserved, 17482.0 * MiB);
	pl_fwlog_summary s;
	pl_err err;
	assert_int_equal(pl_fwlog_summarise(&l, 1, NULL, "m.log", &s, &err), PL_OK);
	near(s.step_s, (1.9939 + 1.9781) / 2); /* iteration 5's 16.5 s is the warm-up */
	near(s.step_min_s, 1.9781);
	near(s.step_max_s, 1.9939);
	pl_fwlog_free(&l);
}

static void nemo2(void **state)
{
	(void)state;
	pl_fwlog l;
	load("nemo2.log", &l);
	assert_int_equal(l.nsteps, 5);
	const double t[] = {0.03146, 0.03163, 0.03215, 0.03157, 0.0317};
	for (int i = 0; i < 5; i++) {
		assert_int_equal(l.steps[i].kind, PL_FWLOG_NEMO);
		assert_int_equal(l.steps[i].step, 120 + i);
		near(l.steps[i].step_s, t[i]);
	}
	pl_fwlog_summary s;
	pl_err err;
	assert_int_equal(pl_fwlog_summarise(&l, 1, NULL, "n.log", &s, &err), PL_OK);
	assert_int_equal(s.used, 4);
	near(s.step_s, (0.03163 + 0.0317) / 2); /* of .03157 .03163 .0317 .03215 */
	pl_fwlog_free(&l);
}

/* NeMo 2 without its timing callback prints no step time: nothing to read */
static void nemo2_without_timing(void **state)
{
	(void)state;
	pl_fwlog l;
	load("nemo2-no-timing.log", &l);
	assert_int_equal(l.lines, 3);
	assert_int_equal(l.nsteps, 0);
	assert_int_equal(l.unread, 0);
	pl_fwlog_summary s;
	pl_err err;
	assert_int_equal(pl_fwlog_summarise(&l, 0, NULL, "n.log", &s, &err), PL_EINVAL);
	assert_non_null(strstr(err.msg, "train_step_timing in s: T"));
	pl_fwlog_free(&l);
}

static void torchtitan_2025(void **state)
{
	(void)state;
	pl_fwlog l;
	load("torchtitan-2025.log", &l);
	assert_int_equal(l.nsteps, 6);
	const int lines[] = {2, 5, 6, 7, 8, 10};
	const double tps[] = {5856, 5593, 5868, 5869, 5864, 5862},
	             tf[] = {339.16, 323.92, 339.82, 339.88, 339.59, 339.48};
	for (int i = 0; i < 6; i++) {
		assert_int_equal(l.steps[i].kind, PL_FWLOG_TORCHTITAN);
		assert_int_equal(l.steps[i].line, lines[i]);
		assert_int_equal(l.steps[i].step, 200 + 10 * i);
		assert_int_equal(l.steps[i].rank, 0); /* "[rank0]:" */
		near(l.steps[i].tokens_per_s, tps[i]);
		near(l.steps[i].tflops, tf[i]);
		assert_true(isnan(l.steps[i].step_s));
	}
	assert_int_equal(l.nmems, 6);
	near(l.mems[0].max_reserved, 49.66 * GiB);
	assert_true(isnan(l.mems[0].max_allocated));
	pl_fwlog_summary s;
	pl_err err;
	/* tps is per device: without the plan's tokens and devices, no step */
	assert_int_equal(pl_fwlog_summarise(&l, 1, NULL, "t.log", &s, &err), PL_EINVAL);
	assert_non_null(strstr(err.msg, "t.log:5: torchtitan prints tokens a second"));
	pl_fwlog_scale sc = {.tokens_per_step = 1e6, .devices = 8};
	assert_int_equal(pl_fwlog_summarise(&l, 1, &sc, "t.log", &s, &err), PL_OK);
	assert_int_equal(s.used, 5);
	assert_int_equal(s.ranks, 1);
	near(s.step_s, 1e6 / (5864.0 * 8)); /* median tps of 5593 5862 5864 5868 5869 */
	near(s.max_reserved, 49.66 * GiB);
	pl_fwlog_free(&l);
}

static void torchtitan_2026_ranks(void **state)
{
	(void)state;
	pl_fwlog l;
	load("torchtitan-2026.log", &l);
	assert_int_equal(l.nsteps, 4);
	const double tps[] = {10050, 10050, 10049, 10007};
	for (int i = 0; i < 4; i++) {
		assert_int_equal(l.steps[i].step, i < 3 ? 4 : 5);
		near(l.steps[i].tokens_per_s, tps[i]);
	}
	near(l.mems[3].max_reserved, 66.91 * GiB);
	pl_fwlog_summary s;
	pl_err err;
	pl_fwlog_scale sc = {.tokens_per_step = 1e6, .devices = 8};
	/* the warm-up is a step number: all three ranks' step 4 go */
	assert_int_equal(pl_fwlog_summarise(&l, 1, &sc, "t.log", &s, &err), PL_OK);
	assert_int_equal(s.used, 1);
	assert_int_equal(s.first_step, 5);
	near(s.step_s, 1e6 / (10007.0 * 8));
	pl_fwlog_free(&l);
}

static void deepspeed_05(void **state)
{
	(void)state;
	pl_fwlog l;
	load("deepspeed-0.5.log", &l);
	/* "[Rank 0] step=40, skipped=2, ..." is not a throughput report */
	assert_int_equal(l.nsteps, 2);
	assert_int_equal(l.steps[0].line, 2);
	assert_int_equal(l.steps[0].step, 40);
	near(l.steps[0].samples_per_s, 83.48609168106144);
	assert_int_equal(l.steps[1].line, 5);
	assert_int_equal(l.steps[1].step, 50);
	near(l.steps[1].samples_per_s, 83.73838805358588);
	assert_int_equal(l.nmems, 2);
	near(l.mems[0].allocated, 0.26 * GiB); /* not MaxMemAllocated's 9.02 */
	near(l.mems[0].max_allocated, 9.02 * GiB);
	pl_fwlog_summary s;
	pl_err err;
	assert_int_equal(pl_fwlog_summarise(&l, 1, NULL, "d.log", &s, &err), PL_EINVAL);
	assert_non_null(strstr(err.msg, "d.log:5: DeepSpeed prints samples a second"));
	pl_fwlog_scale sc = {.samples_per_step = 64};
	assert_int_equal(pl_fwlog_summarise(&l, 1, &sc, "d.log", &s, &err), PL_OK);
	near(s.step_s, 64 / 83.73838805358588);
	near(s.max_allocated, 9.02 * GiB);
	pl_fwlog_free(&l);
}

static void deepspeed_07(void **state)
{
	(void)state;
	pl_fwlog l;
	load("deepspeed-0.7.log", &l);
	assert_int_equal(l.nsteps, 5);
	const double curr[] = {159.628891629629, 145.0889530760849, 157.80592669930536,
	                       155.10475468488542, 155.01088859630886};
	for (int i = 0; i < 5; i++) {
		assert_int_equal(l.steps[i].step, 17 + i);
		assert_int_equal(l.steps[i].rank, -1);   /* "stdout: " names none */
		near(l.steps[i].samples_per_s, curr[i]); /* Curr, not RunningAvg */
	}
	near(l.mems[4].max_allocated, 2.62 * GiB);
	pl_fwlog_summary s;
	pl_err err;
	pl_fwlog_scale sc = {.samples_per_step = 32};
	assert_int_equal(pl_fwlog_summarise(&l, 1, &sc, "d.log", &s, &err), PL_OK);
	/* of 145.09 155.01 155.10 157.81: the median of the steps */
	near(s.step_s, (32 / 155.01088859630886 + 32 / 155.10475468488542) / 2);
	near(s.max_allocated, 2.62 * GiB);
	pl_fwlog_free(&l);
}

static void deepspeed_2024(void **state)
{
	(void)state;
	pl_fwlog l;
	load("deepspeed-2024.log", &l);
	assert_int_equal(l.nsteps, 1);
	assert_int_equal(l.steps[0].step, 4500); /* global_step=, not epoch= or micro_step= */
	near(l.steps[0].samples_per_s, 16.807402094161112);
	near(l.mems[0].allocated, 0.02 * GiB);
	near(l.mems[0].max_allocated, 0.97 * GiB);
	pl_fwlog_free(&l);
}

static void megatron_deepspeed(void **state)
{
	(void)state;
	pl_fwlog l;
	load("megatron-deepspeed-2023.log", &l);
	/* DeepSpeed's timer (line 1) and Megatron-DeepSpeed's iteration (line
	 * 4); "time (ms) | ... | step: 1172.13" is neither */
	assert_int_equal(l.nsteps, 2);
	assert_int_equal(l.steps[0].kind, PL_FWLOG_DEEPSPEED);
	assert_int_equal(l.steps[0].step, 34);
	near(l.steps[0].samples_per_s, 8.00912418308922);
	assert_int_equal(l.steps[1].kind, PL_FWLOG_MEGATRON);
	assert_int_equal(l.steps[1].line, 4);
	assert_int_equal(l.steps[1].step, 34);
	near(l.steps[1].step_s, 4.1031);
	near(l.mems[0].max_allocated, 63.31 * GiB);
	pl_fwlog_summary s;
	pl_err err;
	/* the printed step is preferred to a rate */
	assert_int_equal(pl_fwlog_summarise(&l, 0, NULL, "md.log", &s, &err), PL_OK);
	assert_int_equal(s.kind, PL_FWLOG_MEGATRON);
	near(s.step_s, 4.1031);
	pl_fwlog_free(&l);
}

static void deepspeed_memory_no_steps(void **state)
{
	(void)state;
	pl_fwlog l;
	load("deepspeed-memory.log", &l);
	assert_int_equal(l.nsteps, 0);
	assert_int_equal(l.nmems, 2);
	near(l.mems[0].allocated, 4.96 * GiB);
	near(l.mems[0].max_allocated, 5.09 * GiB);
	near(l.mems[0].reserved, 6.39 * GiB);
	near(l.mems[0].max_reserved, 6 * GiB);
	assert_int_equal(l.mems[1].line, 4);
	near(l.mems[1].max_allocated, 5.55 * GiB);
	pl_fwlog_summary s;
	pl_err err;
	assert_int_equal(pl_fwlog_summarise(&l, 1, NULL, "dm.log", &s, &err), PL_EINVAL);
	assert_non_null(strstr(err.msg, "dm.log: no training step report in 5 lines"));
	assert_non_null(strstr(err.msg, "elapsed time per iteration (ms)"));
	pl_fwlog_free(&l);
}

/* what the excerpts do not show */
static void colours_prefixes_line_ends(void **state)
{
	(void)state;
	pl_fwlog l;
	read_text("[rank3]:[titan] 2025-01-01 00:00:00,000 - root - INFO - \x1b[31mstep:  1  "
	          "\x1b[32mloss:  8.1234  \x1b[33mmemory: 10.50GiB(13.27%)  \x1b[34mtps: 1,234  "
	          "\x1b[36mtflops: 50.00  \x1b[35mmfu: 5.00%\x1b[39m\r\n"
	          "[default1]: iteration       10/     100 | elapsed time per iteration (ms): "
	          "100.0 |\r"
	          "2:  iteration 20/ 100 | elapsed time per iteration (ms): 200.0 |\n"
	          "  train_batch_size ............. 32\n"
	          " iteration 30/ 100 | elapsed time per iteration (ms): nan |\n",
	          &l);
	assert_int_equal(l.lines, 5);
	assert_int_equal(l.nsteps, 3);
	assert_int_equal(l.steps[0].kind, PL_FWLOG_TORCHTITAN);
	assert_int_equal(l.steps[0].rank, 3);
	near(l.steps[0].tokens_per_s, 1234);
	near(l.mems[0].max_reserved, 10.5 * GiB);
	assert_int_equal(l.steps[1].rank, 1);
	assert_int_equal(l.steps[1].line, 2);
	near(l.steps[1].step_s, 0.1);
	assert_int_equal(l.steps[2].rank, 2);
	assert_int_equal(l.steps[2].step, 20);
	near(l.train_batch, 32);
	assert_int_equal(l.unread, 1);
	assert_int_equal(l.first_unread, 5);
	pl_fwlog_free(&l);

	/* DeepSpeed's printed batch converts its rate, before the plan's */
	read_text("  train_batch_size ............. 32\n"
	          "[INFO] [timer.py:197:stop] 0/1, RunningAvgSamplesPerSec=10, "
	          "CurrSamplesPerSec=16, MemAllocated=1GB, MaxMemAllocated=2GB\n",
	          &l);
	pl_fwlog_summary s;
	pl_err err;
	pl_fwlog_scale sc = {.samples_per_step = 1000};
	assert_int_equal(pl_fwlog_summarise(&l, 0, &sc, "t.log", &s, &err), PL_OK);
	near(s.step_s, 2);
	pl_fwlog_free(&l);

	/* a line past the limit is counted, not read */
	size_t n = PL_FWLOG_MAX_LINE + 200;
	char *big = malloc(n + 1);
	memset(big, 'x', n);
	const char *head = " iteration 1/ 2 | elapsed time per iteration (ms): 5.0 |";
	memcpy(big, head, strlen(head));
	big[n] = 0;
	read_text(big, &l);
	assert_int_equal(l.nsteps, 0);
	assert_int_equal(l.long_lines, 1);
	assert_int_equal(pl_fwlog_summarise(&l, 0, NULL, "big.log", &s, &err), PL_EINVAL);
	assert_non_null(strstr(err.msg, "longer than"));
	pl_fwlog_free(&l);
	free(big);

	read_text("", &l);
	assert_int_equal(pl_fwlog_summarise(&l, 0, NULL, "empty.log", &s, &err), PL_EINVAL);
	assert_non_null(strstr(err.msg, "empty.log: no training step report in 0 lines"));
	pl_fwlog_free(&l);
}

/* every excerpt with bytes flipped, cut and repeated: no crash, every
 * report's numbers finite or NAN as documented */
static void mutated_excerpts_never_crash(void **state)
{
	(void)state;
	const char *files[] = {
	    "megatron-lm-2024-mixtral.log", "megatron-lm-2020.log", "nemo2.log",
	    "torchtitan-2025.log",          "deepspeed-0.7.log",    "deepspeed-memory.log",
	    "megatron-deepspeed-2023.log"};
	uint32_t seed = 12345;
	for (size_t f = 0; f < sizeof files / sizeof *files; f++) {
		char path[4096];
		snprintf(path, sizeof path, "%s/logs/%s", getenv("PL_FIXTURES"), files[f]);
		char *text;
		size_t len;
		pl_err err;
		assert_int_equal(pl_read_file(path, &text, &len, &err), PL_OK);
		for (int k = 0; k < 300; k++) {
			char *t = malloc(len + 1);
			memcpy(t, text, len);
			for (int j = 0; j < 1 + k % 8; j++) {
				seed = seed * 1103515245u + 12345u;
				size_t at = (seed >> 8) % len;
				const char bytes[] = {0,   '\n', '\r', 0x1b, '[',
				                      '|', ':',  '/',  '9',  '.',
				                      ',', 'e',  '-',  ' ',  (char)0xff};
				t[at] = bytes[(seed >> 20) % sizeof bytes];
			}
			seed = seed * 1103515245u + 12345u;
			size_t cut = k % 3 ? len : (seed >> 8) % len;
			pl_fwlog l = {0};
			assert_int_equal(pl_fwlog_read(t, cut, "m.log", &l, &err), PL_OK);
			for (int i = 0; i < l.nsteps; i++)
				assert_true(isfinite(l.steps[i].step_s) ||
				            isfinite(l.steps[i].tokens_per_s) ||
				            isfinite(l.steps[i].samples_per_s));
			pl_fwlog_summary s;
			pl_fwlog_scale sc = {1e6, 64, 8};
			if (pl_fwlog_summarise(&l, k % 3, &sc, "m.log", &s, &err) == PL_OK)
				assert_true(s.step_s > 0 && isfinite(s.step_s));
			pl_fwlog_free(&l);
			free(t);
		}
		free(text);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(megatron_2024),
	    cmocka_unit_test(megatron_2026_memory),
	    cmocka_unit_test(megatron_2020),
	    cmocka_unit_test(nemo2),
	    cmocka_unit_test(nemo2_without_timing),
	    cmocka_unit_test(torchtitan_2025),
	    cmocka_unit_test(torchtitan_2026_ranks),
	    cmocka_unit_test(deepspeed_05),
	    cmocka_unit_test(deepspeed_07),
	    cmocka_unit_test(deepspeed_2024),
	    cmocka_unit_test(megatron_deepspeed),
	    cmocka_unit_test(deepspeed_memory_no_steps),
	    cmocka_unit_test(colours_prefixes_line_ends),
	    cmocka_unit_test(mutated_excerpts_never_crash),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
