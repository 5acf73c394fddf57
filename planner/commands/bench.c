/* planner bench: the search modes compared on one model. */
#include "planner/commands/commands.h"

static const char *const bench_help =
    "usage: planner bench MODEL [options]\n"
    "\n"
    "Runs several search modes on one model and cluster and prints them side by side:\n"
    "search time, step time, peak memory per device, the step against the fastest mode's,\n"
    "and whether the plan is proven optimal. A mode that fails says why in its row.\n"
    "\n"
    "options:\n"
    "  --modes LIST          comma-separated: dp, rec, ilp, auto, propagate, brute\n"
    "                        (default dp,rec,ilp,auto)\n"
    "  --devices N | --cluster FILE|PRESET   as for search; default 8 H100s\n"
    "  --memory-limit BYTES|none  --memory-reserve BYTES   as for search\n"
    "  --attention-kernel K  --loss-kernel K  --loss-parallel P  --grad-dtype D\n"
    "  --grad-reduce R, --grad-accumulation A, --param-shard S,\n"
    "  --norm-kernel K, --mask-kernel K, --loss-metrics N, --batch-norm sync|local,\n"
    "  --stage-output freed|buffered,\n"
    "  --gemm-dtype D, --cp-exchange E\n"
    "                        as for search\n"
    "  --time-limit SECONDS  for each mode\n"
    "  --job                 whole-job plans, each mode as the inner searcher\n"
    "  --csv                 CSV on stdout instead of the table\n"
    "  --plot FILE.svg       also a bar chart of step and search time (needs gnuplot;\n"
    "                        without it the table alone, and a note on stderr)\n"
    /* an ONNX MODEL's import options, and -h */
    PL_HELP_ONNX_OPTIONS "\n"
    "exit status: 0 when some mode planned (rows of the others say why), else the\n"
    "first mode's failure (2, 3 or 4).\n"
    "\n"
    "example:\n"
    "  planner bench examples/gpt-small.json --devices 8 --modes dp,rec,ilp --csv\n";

typedef struct bench_row {
	char mode[32];
	int ok, proven;
	double search_s, step_s, mem;
	char why[sizeof(pl_err)];
} bench_row;

/* whether an executable named prog is on the PATH */
static int on_path(const char *prog)
{
	const char *path = getenv("PATH");
	char dir[4096];
	while (path && *path) {
		size_t n = strcspn(path, ":");
		if (n > 0 && n + strlen(prog) + 2 < sizeof dir) {
			snprintf(dir, sizeof dir, "%.*s/%s", (int)n, path, prog);
			if (access(dir, X_OK) == 0)
				return 1;
		}
		path += n + (path[n] == ':');
	}
	return 0;
}

static void bench_plot(const char *file, const bench_row *rows, int n)
{
	if (!on_path("gnuplot")) {
		fprintf(stderr, "planner bench: gnuplot not found; no plot written\n");
		return;
	}
	/* a gnuplot that exits early must not take this process down */
	void (*old)(int) = signal(SIGPIPE, SIG_IGN);
	FILE *gp = popen("gnuplot 2>/dev/null", "w");
	if (!gp) {
		signal(SIGPIPE, old);
		fprintf(stderr, "planner bench: gnuplot could not be started; no plot written\n");
		return;
	}
	fprintf(gp, "set terminal svg size 720,360\nset output '%s'\n", file);
	fprintf(gp, "set style data histograms\nset style fill solid 0.8\nset boxwidth 0.8\n"
	            "set ylabel 'seconds'\nset y2label 'search seconds'\nset ytics nomirror\n"
	            "set y2tics\nset key top left\n$d << EOD\n");
	for (int k = 0; k < n; k++)
		if (rows[k].ok)
			fprintf(gp, "%s %.9g %.9g\n", rows[k].mode, rows[k].step_s,
			        rows[k].search_s);
	fprintf(gp, "EOD\nplot $d using 2:xtic(1) title 'step', '' using 3 axes x1y2 title "
	            "'search'\n");
	if (pclose(gp) != 0)
		fprintf(stderr, "planner bench: gnuplot failed; no plot written\n");
	signal(SIGPIPE, old);
}

/* Long as a command is: options, one search per mode, the table. */
int pl_cmd_bench(int argc, char **argv)
{
	pl_cli_common co = {0};
	const char *modes = "dp,rec,ilp,auto", *plot = NULL;
	int csv = 0;
	pl_job_request jr = PL_JOB_REQUEST_INIT;
	pl_cli_args a;
	pl_cli_args_init(&a, PL_CMD_BENCH, "bench", bench_help, &co);
	int ch;
	while ((ch = pl_cli_next(&a, argc, argv)) != -1) {
		switch (ch) {
		case PL_CLI_STOP: return a.rc;
		case 'm': modes = optarg; break;
		case 'J': jr.all = 1; break;
		case 'C': csv = 1; break;
		case 'P': plot = optarg; break;
		}
	}
	if (optind != argc - 1)
		return pl_cli_usage("bench", "expected one MODEL file%s",
		                    optind < argc - 1 ? ", got more" : "");
	/* the modes, checked before anything runs */
	char list[256];
	snprintf(list, sizeof list, "%s", modes);
	bench_row rows[16];
	int n = 0;
	for (char *save = NULL, *m = strtok_r(list, ",", &save); m;
	     m = strtok_r(NULL, ",", &save)) {
		char modes[128];
		if (!pl_searcher_get(m))
			return pl_cli_usage("bench", "--modes: '%s' is not a mode (%s)", m,
			                    pl_searcher_names(modes, sizeof modes));
		if (n == 16)
			return pl_cli_usage("bench", "--modes: at most %d modes", 16);
		memset(&rows[n], 0, sizeof rows[n]);
		snprintf(rows[n++].mode, sizeof rows[0].mode, "%s", m);
	}
	if (!n)
		return pl_cli_usage("bench", "--modes: expected at least one mode%s", "");
	pl_err err = {{0}};
	pl_graph *g = NULL;
	pl_cluster cl;
	pl_status st, first = PL_OK;
	if ((st = pl_cli_load_model(&g, argv[optind], &co.onnx, &err)) ||
	    (st = pl_cli_resolve_cluster(&co, &cl, &err))) {
		pl_graph_free(g);
		return pl_cli_fail(st, &err);
	}
	int planned = 0;
	double best = INFINITY;
	for (int k = 0; k < n; k++) {
		pl_plan_opts po = {.mode = rows[k].mode, .so = pl_cli_common_search_opts(&co, &cl)};
		cJSON *ck = NULL;
		pl_err e = {{0}};
		double secs = 0;
		st = pl_plan_opts_job(&po, &jr, 0, &e);
		if (!st)
			st = pl_plan_search(g, &cl, &po, &ck, &secs, &e);
		if (st) {
			if (!first) {
				first = st;
				err = e;
			}
			snprintf(rows[k].why, sizeof rows[k].why, "%s", e.msg);
			continue;
		}
		pl_ckpt_view v;
		pl_ckpt_view_read(ck, &v);
		rows[k].ok = 1;
		rows[k].search_s = secs;
		rows[k].step_s = v.step_s;
		rows[k].mem = v.peak_mem_bytes;
		rows[k].proven = v.optimal;
		best = fmin(best, rows[k].step_s);
		planned++;
		cJSON_Delete(ck);
	}
	if (csv)
		puts(
		    "mode,search_seconds,step_seconds,peak_memory_bytes,step_vs_best,proven,error");
	else
		printf("model %s on %s (%lld devices)%s\n%-10s %12s %14s %12s %9s %7s\n", g->name,
		       cl.name, (long long)pl_cluster_devices_total(&cl),
		       jr.all ? ", whole job" : "", "mode", "search s", "step s", "memory",
		       "vs best", "proven");
	for (int k = 0; k < n; k++) {
		const bench_row *r = &rows[k];
		if (csv) {
			/* the error text quoted as CSV does ("" for a quote) */
			char q[2 * sizeof(pl_err)];
			size_t j = 0;
			for (const char *c = r->why; *c && j + 3 < sizeof q; c++) {
				if (*c == '"')
					q[j++] = '"';
				q[j++] = *c;
			}
			q[j] = 0;
			if (r->ok)
				printf("%s,%.6g,%.9g,%.0f,%.6f,%s,\n", r->mode, r->search_s,
				       r->step_s, r->mem, r->step_s / best,
				       r->proven ? "true" : "false");
			else
				printf("%s,,,,,,\"%s\"\n", r->mode, q);
		} else if (r->ok) {
			char mb[32];
			pl_cli_fmt_bytes(r->mem, mb, sizeof mb);
			printf("%-10s %12.3f %14.6f %12s %9.4f %7s\n", r->mode, r->search_s,
			       r->step_s, mb, r->step_s / best, r->proven ? "yes" : "no");
		} else {
			printf("%-10s %s\n", r->mode, r->why);
		}
	}
	if (plot && planned)
		bench_plot(plot, rows, n);
	pl_graph_free(g);
	if (!planned)
		return pl_cli_fail(first, &err);
	return 0;
}
