/* planner check CKPT --log LOG: a plan's prediction (the checkpoint's cost)
 * against what a training framework measured running it (its log, read by
 * planner/fwlog.c): the step time with its ratio and whether it falls in
 * the prediction's band (cost.step_band_seconds), the peak memory with its
 * ratio; or the measurement as one line of `calibrate --from-runs`'s RUNS
 * file (--run-line), so that a user's own runs fit the model. */
#include <cjson/cJSON.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "costmodel/cluster.h"
#include "planner/checkpoint.h"
#include "planner/commands/cli.h"
#include "planner/fwlog.h"
#include "graph/graph.h"
#include "graph/json.h"
#include "graph/parse.h"

static const char *const help =
    "usage: planner check CKPT --log LOG [--warmup N] [--json]\n"
    "       planner check CKPT --log LOG --run-line --model MODEL [--name NAME] [--warmup N]\n"
    "\n"
    "Compares the prediction of a strategy checkpoint (its cost: step time, peak memory) with\n"
    "what a training framework measured running that plan, read from its log:\n"
    "  Megatron-LM, Megatron-DeepSpeed  ' iteration N/ M | ... | elapsed time per iteration\n"
    "                      (ms): T | ...' and '[Rank R] (after N iterations) memory (MB) |\n"
    "                      allocated: .. | max allocated: .. | reserved: .. | max reserved: ..'\n"
    "  NeMo 2              'Training epoch E, iteration I/N | ... | train_step_timing in s: T'\n"
    "  torchtitan          'step: N  loss: ..  memory: X GiB(P%)  tps: R  tflops: ..  mfu: ..%'\n"
    "                      (tps is tokens a second per device: the step is the plan's tokens a\n"
    "                      step / (R x its devices); memory is the max reserved)\n"
    "  DeepSpeed           the throughput timer's '..., SamplesPerSec=R, MemAllocated=xGB,\n"
    "                      MaxMemAllocated=yGB' (Curr..., else RunningAvg...; the step is\n"
    "                      train_batch_size from the log's config print, else the plan's global\n"
    "                      batch, / R) and see_memory_usage's 'MA x GB Max_MA y GB CA ..'\n"
    "Lines are found among anything else the job prints: ANSI colours, per-rank prefixes\n"
    "('[rank0]:', '[default0]:', '0: ', 'stdout: ') and time stamps are passed over. Where a\n"
    "log holds several frameworks' step reports (Megatron-DeepSpeed), the first above is used.\n"
    "\n"
    "The measured step is the median over the step reports after the warm-up: the reports of\n"
    "the first N distinct step numbers are dropped (default 1: the first report holds\n"
    "compilation, the allocator's growth and the first communicators; Megatron-LM and\n"
    "torchtitan average over their log interval). The measured memory is the most any report\n"
    "names (the peak device). Prints predicted, measured, their ratio (measured/predicted,\n"
    "as the band is stated), the band the step is expected in (the checkpoint's\n"
    "step_band_seconds) and the verdict: inside, below or above the band. Memory has no\n"
    "band; its rows compare max allocated with the plan's peak less its reserve (what the\n"
    "framework's allocator counts) and max reserved with the whole peak.\n"
    "\n"
    "  --log LOG        the framework's log (stdout/stderr of the job, any rank's or all)\n"
    "  --warmup N       step numbers taken as warm-up (default 1; 0 keeps every report)\n"
    "  --json           one JSON object instead of the table\n"
    "  --run-line       print the measurement as one line of 'planner calibrate --from-runs'\n"
    "                   RUNS ({\"name\", \"model\", \"plan\", \"step_seconds\",\n"
    "                   \"peak_memory_bytes\" (max allocated, else max reserved)}; paths as\n"
    "                   given: RUNS resolves them from its own folder)\n"
    "  --model MODEL    (--run-line) the model file the plan is of\n"
    "  --name NAME      (--run-line) the run's name (default: the log's file name)\n"
    "\n"
    "Exit status 0 when compared (whatever the verdict); 2 for a checkpoint without a cost, a\n"
    "log without step reports (the message names the file and the lines expected), or only\n"
    "warm-up reports.\n";

static cJSON *pair(double predicted, double measured)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "predicted", predicted);
	cJSON_AddNumberToObject(o, "measured", measured);
	cJSON_AddNumberToObject(o, "ratio", measured / predicted);
	return o;
}

static void mem_row(const char *what, double predicted, double measured)
{
	printf("%-28s %12.4g %12.4g %9.3f  %-19s %s\n", what, predicted / 1073741824.0,
	       measured / 1073741824.0, measured / predicted, "-", "(no band)");
}

/* What the command compares: the checkpoint's prediction and band, the
 * log's measurement. */
typedef struct check_run {
	const char *ckpt, *log, *model, *name;
	double step, peak, resv; /* predicted step, peak and reserve */
	double lo, hi;           /* the band the measured step is expected in */
	const char *basis;       /* where the band comes from */
	pl_fwlog_summary sm;     /* the log's measurement */
	double meas_peak;        /* measured peak: max allocated, else max reserved */
	const char *verdict;     /* the measured step "below", "inside" or "above" the band */
} check_run;

/* --run-line: one line of calibrate --from-runs's input. */
static pl_status print_run_line(const check_run *c, pl_err *err)
{
	const char *base = strrchr(c->log, '/');
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "name", c->name ? c->name : base ? base + 1 : c->log);
	cJSON_AddStringToObject(o, "model", c->model);
	cJSON_AddStringToObject(o, "plan", c->ckpt);
	cJSON_AddNumberToObject(o, "step_seconds", c->sm.step_s);
	if (isfinite(c->meas_peak) && c->meas_peak > 0)
		cJSON_AddNumberToObject(o, "peak_memory_bytes", c->meas_peak);
	cJSON_AddStringToObject(o, "log", c->log);
	cJSON_AddStringToObject(o, "framework", pl_fwlog_kind_names[c->sm.kind]);
	char *s = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	if (!s)
		return pl_err_set(err, PL_ENOMEM, "out of memory");
	puts(s);
	cJSON_free(s);
	return PL_OK;
}

/* --json: the comparison as one object. */
static pl_status print_json(const check_run *c, pl_err *err)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "checkpoint", c->ckpt);
	cJSON_AddStringToObject(o, "log", c->log);
	cJSON_AddStringToObject(o, "framework", pl_fwlog_kind_names[c->sm.kind]);
	cJSON_AddNumberToObject(o, "step_reports", c->sm.reports);
	cJSON_AddNumberToObject(o, "steps_used", c->sm.used);
	cJSON_AddNumberToObject(o, "warmup_steps", c->sm.warmup_steps);
	cJSON_AddNumberToObject(o, "first_step", (double)c->sm.first_step);
	cJSON_AddNumberToObject(o, "last_step", (double)c->sm.last_step);
	cJSON_AddNumberToObject(o, "ranks", c->sm.ranks);
	cJSON_AddStringToObject(o, "step_from", c->sm.step_from);
	cJSON *s = pair(c->step, c->sm.step_s);
	cJSON_AddNumberToObject(s, "measured_min", c->sm.step_min_s);
	cJSON_AddNumberToObject(s, "measured_max", c->sm.step_max_s);
	double b[2] = {c->lo, c->hi};
	pl_json_add(s, "band", cJSON_CreateDoubleArray(b, 2));
	cJSON_AddStringToObject(s, "band_basis", c->basis);
	cJSON_AddStringToObject(s, "verdict", c->verdict);
	cJSON_AddBoolToObject(s, "inside_band", !strcmp(c->verdict, "inside"));
	pl_json_add(o, "step_seconds", s);
	cJSON *m = cJSON_AddObjectToObject(o, "peak_memory_bytes");
	if (isfinite(c->peak) && c->peak > 0 && isfinite(c->sm.max_allocated))
		pl_json_add(m, "max_allocated", pair(c->peak - c->resv, c->sm.max_allocated));
	if (isfinite(c->peak) && c->peak > 0 && isfinite(c->sm.max_reserved))
		pl_json_add(m, "max_reserved", pair(c->peak, c->sm.max_reserved));
	char *txt = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	if (!txt)
		return pl_err_set(err, PL_ENOMEM, "out of memory");
	puts(txt);
	cJSON_free(txt);
	return PL_OK;
}

/* The comparison as a table. */
static void print_table(const check_run *c)
{
	printf("%s against %s (%s, %d step report%s", c->ckpt, c->log,
	       pl_fwlog_kind_names[c->sm.kind], c->sm.reports, c->sm.reports == 1 ? "" : "s");
	if (c->sm.ranks > 1)
		printf(" from %d ranks", c->sm.ranks);
	char steps[64];
	if (c->sm.first_step == c->sm.last_step)
		snprintf(steps, sizeof steps, "step %lld", (long long)c->sm.first_step);
	else
		snprintf(steps, sizeof steps, "steps %lld-%lld", (long long)c->sm.first_step,
		         (long long)c->sm.last_step);
	printf(")\nmeasured step: the median of %d report%s of %s (%s), after %d warm-up "
	       "step%s\n",
	       c->sm.used, c->sm.used == 1 ? "" : "s", steps, c->sm.step_from, c->sm.warmup_steps,
	       c->sm.warmup_steps == 1 ? "" : "s");
	printf("%-28s %12s %12s %9s  %-19s %s\n", "", "predicted", "measured", "meas/pred",
	       "expected band", "verdict");
	char bs[64];
	snprintf(bs, sizeof bs, "%.4g-%.4g", c->lo, c->hi);
	printf("%-28s %12.6g %12.6g %9.3f  %-19s %s the band\n", "step (s)", c->step, c->sm.step_s,
	       c->sm.step_s / c->step, bs, c->verdict);
	if (isfinite(c->peak) && c->peak > 0 && isfinite(c->sm.max_allocated))
		mem_row("memory, max allocated (GiB)", c->peak - c->resv, c->sm.max_allocated);
	if (isfinite(c->peak) && c->peak > 0 && isfinite(c->sm.max_reserved))
		mem_row("memory, max reserved (GiB)", c->peak, c->sm.max_reserved);
	if (!isfinite(c->sm.max_allocated) && !isfinite(c->sm.max_reserved))
		printf("memory: the log has no memory report\n");
	printf("band: %s\n", c->basis);
}

/* The command's steps in order: options, the checkpoint's prediction, the
 * log's measurement, then one of three outputs (run line, JSON, table). */
int pl_cmd_check(int argc, char **argv)
{
	const char *log = NULL, *model = NULL, *name = NULL;
	long long warmup = 1;
	int json = 0, run_line = 0;
	pl_cli_args a;
	pl_cli_args_init(&a, PL_CMD_CHECK, "check", help, NULL);
	int ch;
	while ((ch = pl_cli_next(&a, argc, argv)) != -1) {
		switch (ch) {
		case PL_CLI_STOP: return a.rc;
		case 'l': log = optarg; break;
		case 'w':
			if (pl_parse_ll(optarg, &warmup) || warmup < 0 || warmup > 1000000)
				return pl_cli_usage("check",
				                    "--warmup: expected a count of steps from 0 to "
				                    "1000000, got '%s'",
				                    optarg);
			break;
		case 'j': json = 1; break;
		case 'r': run_line = 1; break;
		case 'm': model = optarg; break;
		case 'n': name = optarg; break;
		}
	}
	if (optind != argc - 1)
		return pl_cli_usage("check", "expected one CKPT file%s", "");
	if (!log)
		return pl_cli_usage("check", "%s",
		                    "expected --log LOG (the training framework's log of the run)");
	if (run_line && !model)
		return pl_cli_usage(
		    "check", "%s",
		    "--run-line: expected --model MODEL (the model file the plan is "
		    "of: calibrate --from-runs prices the plan again)");
	if (!run_line && (model || name))
		return pl_cli_usage("check", "%s", "--model and --name go with --run-line");
	if (run_line && json)
		return pl_cli_usage("check", "%s", "--run-line and --json: choose one");
	const char *ckpt = argv[optind];
	pl_err err = {{0}};
	cJSON *ck = NULL;
	char *text = NULL;
	size_t len;
	pl_fwlog fl = {0};
	pl_fwlog_summary sm;
	pl_ckpt_doc d = {0};
	pl_status st = pl_cli_read_ckpt(ckpt, &ck, &err);
	if (!st)
		st = pl_ckpt_doc_read(ck, &d, &err);
	const pl_ckpt_view *v = &d.v;
	double step = v->step_s, peak = v->peak_mem_bytes,
	       resv = pl_ckpt_memory_of(&d.mem_breakdown, "reserved");
	if (!isfinite(resv))
		resv = 0;
	if (!st && !(step > 0 && isfinite(step)))
		st = pl_err_set(&err, PL_EINVAL,
		                "%s: cost.step_seconds: expected the plan's predicted step (> 0); "
		                "'planner cost MODEL --strategy %s' prices it",
		                ckpt, ckpt);
	if (st)
		goto done;
	/* the band the checkpoint states; an older one without it: the validation set's */
	double lo = v->band_lo, hi = v->band_hi;
	const char *basis = v->band_basis;
	char basis_buf[200];
	if (!(isfinite(lo) && isfinite(hi) && lo > 0 && hi >= lo)) {
		lo = PL_BAND_LO * step;
		hi = PL_BAND_HI * step;
		snprintf(basis_buf, sizeof basis_buf,
		         "the validation set's central 80 %%, %.2f-%.2f x the prediction (the "
		         "checkpoint states no band)",
		         PL_BAND_LO, PL_BAND_HI);
		basis = basis_buf;
	}
	if (!basis)
		basis = "(not stated)";
	pl_fwlog_scale sc = {.tokens_per_step =
	                         isfinite(v->tokens_per_step) ? v->tokens_per_step : 0,
	                     .samples_per_step = isfinite(v->global_batch) ? v->global_batch : 0,
	                     .devices = v->devices};
	if ((st = pl_read_file(log, &text, &len, &err)) ||
	    (st = pl_fwlog_read(text, len, log, &fl, &err)) ||
	    (st = pl_fwlog_summarise(&fl, (int)warmup, &sc, log, &sm, &err)))
		goto done;
	if (fl.unread)
		fprintf(stderr,
		        "planner: note: %s:%d: a step line without %s (not read; %d such line%s)\n",
		        log, fl.first_unread, fl.unread_why, fl.unread, fl.unread == 1 ? "" : "s");
	double meas_peak = isfinite(sm.max_allocated) ? sm.max_allocated : sm.max_reserved;
	const char *verdict = sm.step_s < lo ? "below" : sm.step_s > hi ? "above" : "inside";
	check_run c = {.ckpt = ckpt,
	               .log = log,
	               .model = model,
	               .name = name,
	               .step = step,
	               .peak = peak,
	               .resv = resv,
	               .lo = lo,
	               .hi = hi,
	               .basis = basis,
	               .sm = sm,
	               .meas_peak = meas_peak,
	               .verdict = verdict};
	if (run_line)
		st = print_run_line(&c, &err);
	else if (json)
		st = print_json(&c, &err);
	else
		print_table(&c);
done:
	pl_fwlog_free(&fl);
	free(text);
	pl_ckpt_doc_free(&d);
	cJSON_Delete(ck);
	return st ? pl_cli_fail(st, &err) : 0;
}
