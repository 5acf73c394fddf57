/* The C API from a model to training steps (planner/planner.h): a context
 * set from the input's first two bytes (devices, search mode, whole-job
 * options, optimizer), the rest a planner.model/1 file loaded, saved,
 * planned, read back through every plan reader, priced back and exported for
 * every framework, and, when the plan is small
 * (at most 64 MiB a device and 10^8 FLOPs a step), trained for two steps. A
 * failure must be a status with a message; a finite loss or an error. */
#define _GNU_SOURCE /* memfd_create */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "planner/planner.h"
#include "tests/fuzz/fuzz.h"

static int model_fd = -1;
static char model_path[64], save_dir[32], save_path[64];

/* FUZZ_API_VERBOSE=1: how far each input got, on stderr (to check that the
 * corpus reaches training) */
static int verbose;

static void say(planner_ctx *ctx, const char *stage, int rc)
{
	if (verbose)
		fprintf(stderr, "fuzz_api: %s: %d %s\n", stage, rc, rc ? planner_errmsg(ctx) : "");
}

static void remove_save(void)
{
	unlink(save_path);
	rmdir(save_dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	/* the model the library opens by name, in memory; the saved model a
	 * regular file (replaced atomically) in a directory of its own */
	model_fd = memfd_create("fuzz-api-model", 0);
	snprintf(save_dir, sizeof save_dir, "/tmp/pl-fuzz-api-XXXXXX");
	if (model_fd < 0 || !mkdtemp(save_dir)) {
		perror("fuzz_api");
		abort();
	}
	snprintf(model_path, sizeof model_path, "/proc/self/fd/%d", model_fd);
	snprintf(save_path, sizeof save_path, "%s/model.json", save_dir);
	atexit(remove_save);
	verbose = getenv("FUZZ_API_VERBOSE") != NULL;
	return 0;
}

/* a status is 0, 2, 3 or 4; a failure names itself */
static void check(planner_ctx *ctx, int rc)
{
	if (rc != PLANNER_OK && rc != PLANNER_EINVAL && rc != PLANNER_EINFEASIBLE &&
	    rc != PLANNER_ESYSTEM)
		abort();
	if (rc && (!planner_errmsg(ctx) || !planner_errmsg(ctx)[0]))
		abort();
}

static void read_plan(const planner_plan *p)
{
	const char *json = planner_plan_json(p);
	if (!json || json[0] != '{')
		abort();
	(void)planner_plan_step_seconds(p);
	(void)planner_plan_memory_bytes(p);
	(void)planner_plan_mfu(p);
	(void)planner_plan_flops_per_step(p);
	(void)planner_plan_tflops_per_device(p);
	(void)planner_plan_tokens_per_second_per_device(p);
	double lo, hi;
	(void)planner_plan_step_band(p, &lo, &hi);
	static const char *const kinds[] = {"dp", "tp", "pp", "ep", "sp", "x"};
	for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
		(void)planner_plan_degree(p, kinds[k]);
		int64_t ranks[8];
		int64_t n = planner_plan_group(p, kinds[k], 0, ranks, 8);
		if (n > 8 && planner_plan_group(p, kinds[k], 0, NULL, 0) != n)
			abort();
	}
}

/* the plan priced back by planner_plan_cost (its own step, as planner cost
 * prices a searched plan) and written for each framework: a text of the
 * length asked for, or a refusal with a message */
static void price_and_export(planner_ctx *ctx, planner_graph *g, const planner_plan *p)
{
	planner_plan *c = NULL;
	int rc = planner_plan_cost(ctx, g, planner_plan_json(p), &c);
	check(ctx, rc);
	if (rc == PLANNER_OK) {
		double a = planner_plan_step_seconds(p), b = planner_plan_step_seconds(c);
		if (!(fabs(a - b) <= 1e-9 * fabs(a)))
			abort();
		planner_plan_free(c);
	} else if (c) {
		abort();
	}
	static const char *const fws[] = {
	    "megatron", "nemo", "torchtitan", "deepspeed", "megatron-deepspeed", "mindformers"};
	for (size_t f = 0; f < sizeof fws / sizeof *fws; f++) {
		size_t n = 0, m = 0;
		rc = planner_export(ctx, planner_plan_json(p), fws[f], PLANNER_EXPORT_JSON, NULL, 0,
		                    &n);
		check(ctx, rc);
		if (rc)
			continue;
		char *text = malloc(n + 1);
		if (!text)
			continue;
		rc = planner_export(ctx, planner_plan_json(p), fws[f], PLANNER_EXPORT_JSON, text,
		                    n + 1, &m);
		if (rc || m != n || strlen(text) != n)
			abort();
		free(text);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	const uint8_t a = data[0], b = data[1];
	data += 2;
	size -= 2;
	if (ftruncate(model_fd, 0) || pwrite(model_fd, data, size, 0) != (ssize_t)size)
		abort();
	planner_ctx *ctx = planner_ctx_new();
	if (!ctx)
		return 0;
	static const char *const modes[] = {"dp", "rec", "propagate", "auto"};
	char devices[4];
	snprintf(devices, sizeof devices, "%d", 1 + (a & 3));
	check(ctx, planner_set_auto_parallel_context(ctx, "device_num", devices));
	check(ctx, planner_set_auto_parallel_context(ctx, "search_mode", modes[(a >> 2) & 3]));
	check(ctx, planner_set_auto_parallel_context(ctx, "time_limit", "5"));
	/* memory as the model needs it, so that small plans are trained */
	check(ctx, planner_set_auto_parallel_context(ctx, "memory_reserve", "0"));
	if (a & 0x10)
		check(ctx, planner_set_auto_parallel_context(ctx, "pipeline_stages", "2"));
	if (a & 0x20)
		check(ctx, planner_set_auto_parallel_context(ctx, "micro_batch_num", "2"));
	if (a & 0x40)
		check(ctx,
		      planner_set_auto_parallel_context(ctx, "enable_parallel_optimizer", "true"));
	if (a & 0x80)
		check(ctx, planner_set_auto_parallel_context(ctx, "recompute", "auto"));
	if (b & 1)
		check(ctx, planner_set_auto_parallel_context(ctx, "optimizer", "sgd"));
	if (b & 2)
		check(ctx, planner_set_auto_parallel_context(ctx, "gradients_mean", "true"));
	if (b & 4)
		check(ctx, planner_set_auto_parallel_context(ctx, "memory_limit", "4M"));

	planner_graph *g = NULL;
	planner_plan *plan = NULL;
	planner_trainer *tr = NULL;
	int rc = planner_graph_load(ctx, model_path, &g);
	check(ctx, rc);
	say(ctx, "load", rc);
	if (rc) {
		if (g)
			abort();
		goto done;
	}
	if (b & 8)
		check(ctx, planner_graph_save(g, save_path));
	rc = planner_plan_new(ctx, g, &plan);
	check(ctx, rc);
	say(ctx, "plan", rc);
	if (rc)
		goto done;
	read_plan(plan);
	price_and_export(ctx, g, plan);
	/* train only what is small: the harness's bound, not the library's */
	const double bytes = planner_plan_memory_bytes(plan),
	             flops = planner_plan_flops_per_step(plan);
	if (!(bytes <= 64.0 * 1024 * 1024) || !(flops <= 1e8)) {
		if (verbose)
			fprintf(stderr, "fuzz_api: not trained: %g bytes, %g flops\n", bytes,
			        flops);
		goto done;
	}
	rc = planner_trainer_new(ctx, g, plan, &tr);
	check(ctx, rc);
	say(ctx, "trainer", rc);
	if (rc)
		goto done;
	if (b & 16) {
		/* the graph is not needed by a trainer */
		planner_graph_free(g);
		g = NULL;
	}
	for (int step = 0; step < 2; step++) {
		double loss = NAN;
		rc = planner_train_step(tr, &loss);
		check(ctx, rc);
		say(ctx, "step", rc);
		if (rc == PLANNER_OK && !isfinite(loss))
			abort(); /* a non-finite loss is an error */
		if (rc)
			break;
	}
done:
	planner_trainer_free(tr);
	planner_plan_free(plan);
	planner_graph_free(g);
	planner_ctx_free(ctx);
	return 0;
}
