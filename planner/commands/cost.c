/* planner cost: a given plan priced (a checkpoint, or JSON lines on stdin). */
#include "planner/commands/commands.h"

static const char *const cost_help =
    "usage: planner cost MODEL --strategy CKPT|- [--devices N | --cluster FILE|PRESET]\n"
    "\n"
    "Prices a given plan under the cost model and prints the cost object as one JSON line:\n"
    "{\"step_seconds\", \"compute_seconds\", \"communication_seconds\", \"peak_memory_bytes\"}.\n"
    "The plan needs only parallel_strategy_item. With --strategy -, stdin holds one plan (a\n"
    "JSON object) per line and stdout gets one result per line; a bad line gets\n"
    "{\"error\": \"...\"} and the exit status is 2 at the end.\n"
    "Without --devices or --cluster, the checkpoint's cluster block is used (a preset name,\n"
    "else H100 nodes of its shape).\n" PL_HELP_ONNX_MODEL PL_HELP_PRICING
    "--memory-limit BYTES: what a device has for the plan (default: the cluster's memory);\n"
    "a plan that does not fit exits 3.\n"
    "'planner cost MODEL --from FRAMEWORK FILE|ARGS' prices a framework's configuration\n"
    "(megatron, nemo, torchtitan, deepspeed, megatron-deepspeed or mindformers):\n"
    "'planner cost --from x --help'.\n";

static cJSON *cost_object(const pl_cli_cost_result *r, const pl_graph *g, const pl_cluster *cl)
{
	return pl_plan_cost_json(g, cl, &r->pc, r->bubble, &r->detail, r->limit);
}

/* The cluster a plan is priced on: --devices/--cluster (saying so on stderr
 * when the plan records another), else the one the plan records; then
 * --memory-reserve. */
static pl_status cost_cluster(const cJSON *plan, const char *where, const pl_cli_common *co,
                              pl_cluster *cl, pl_err *err)
{
	pl_status st;
	if (!co->cluster && !co->devices) {
		if ((st = pl_plan_cluster(plan, where, cl, err)))
			return st;
		return pl_cli_apply_reserve(co, cl, err);
	}
	if ((st = pl_cli_resolve_cluster(co, cl, err)))
		return st;
	pl_cluster rec;
	pl_err e2;
	if (pl_plan_cluster(plan, where, &rec, &e2) == PL_OK) {
		cJSON *a = pl_cluster_to_json(cl), *b = pl_cluster_to_json(&rec);
		if (a && b && !cJSON_Compare(a, b, 1))
			fprintf(stderr,
			        "planner: note: %s was priced on cluster '%s' (%lld devices); "
			        "pricing it on '%s' (%lld devices) as given\n",
			        where, rec.name, (long long)pl_cluster_devices_total(&rec),
			        cl->name, (long long)pl_cluster_devices_total(cl));
		cJSON_Delete(a);
		cJSON_Delete(b);
	}
	return PL_OK;
}

/* Prices one plan object on the cluster of --devices/--cluster, else of its
 * cluster block; on failure err names the op. When keep is set, the plan is
 * lowered for the executor into it (pl_run_plan_free). limit: the
 * device memory to fit in (<= 0: the cluster's). */
pl_status pl_cli_cost_one(const pl_graph *g, const cJSON *plan, const char *where,
                          const pl_cli_common *co, double limit, pl_cli_cost_result *r,
                          pl_cluster *cl_out, pl_run_plan *keep, pl_err *err)
{
	pl_cluster cl;
	memset(r, 0, sizeof *r);
	pl_status st = cost_cluster(plan, where, co, &cl, err);
	cJSON *made = NULL;
	if (!st && pl_ckpt_is_mindspore(g, plan)) {
		/* MindSpore's own strategy file: its op names are its graph's; the
		 * params' layouts, matched by name, are kept and the rest of the plan
		 * propagated from them, as search --mode propagate --load does */
		pl_plan_opts po = {.mode = "propagate", .keep = plan, .keep_where = where};
		double secs;
		fprintf(
		    stderr,
		    "planner: note: %s is a MindSpore strategy file (no \"format\", none of the "
		    "model's op names): its params' layouts are matched by name, the rest of the "
		    "plan propagated from them\n",
		    where);
		if (!(st = pl_plan_search((pl_graph *)g, &cl, &po, &made, &secs, err)))
			plan = made;
	}
	if (!st)
		st = pl_plan_price(g, plan, where, &cl, &r->pc, &r->bubble, &r->detail, keep, err);
	cJSON_Delete(made);
	if (st) {
		pl_plan_detail_free(&r->detail);
		return st;
	}
	r->limit = limit > 0 ? limit : cl.memory_bytes;
	if (cl_out)
		*cl_out = cl;
	return PL_OK;
}

/* Long as a command is: options, load, price, print. */
int pl_cmd_cost(int argc, char **argv)
{
	if (pl_cost_has_from(argc, argv)) /* a framework's configuration (export.c) */
		return pl_cmd_cost_from(argc, argv, pl_cmd_search, pl_cmd_cost);
	pl_cli_common co = {0};
	const char *strategy = NULL;
	double limit = 0;
	pl_cli_args a;
	pl_cli_args_init(&a, PL_CMD_COST, "cost", cost_help, &co);
	int ch;
	while ((ch = pl_cli_next(&a, argc, argv)) != -1) {
		switch (ch) {
		case PL_CLI_STOP: return a.rc;
		case 'M':
			if (pl_parse_bytes(optarg, &limit) || !(limit > 0))
				return pl_cli_usage(
				    "cost",
				    "--memory-limit %s: expected bytes such as 80e9, "
				    "80G or 75GiB",
				    optarg);
			break;
		case 's': strategy = optarg; break;
		}
	}
	if (optind != argc - 1)
		return pl_cli_usage("cost", "expected one MODEL file%s", "");
	if (!strategy)
		return pl_cli_usage("cost", "--strategy CKPT or --strategy - is required%s", "");
	pl_err err = {{0}};
	pl_graph *g = NULL;
	pl_status st;
	int rc = 0, over = 0;
	if ((st = pl_cli_load_model(&g, argv[optind], &co.onnx, &err)))
		return pl_cli_fail(st, &err);
	int from_stdin = !strcmp(strategy, "-");
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	long lineno = 0;
	for (;;) {
		char where[64];
		cJSON *plan = NULL;
		if (from_stdin) {
			if ((n = getline(&line, &cap, stdin)) < 0)
				break;
			lineno++;
			if (n == 0 || strspn(line, " \t\r\n") == (size_t)n)
				continue;
			snprintf(where, sizeof where, "stdin:%ld", lineno);
			st = pl_json_parse(line, (size_t)n, where, &plan, &err);
		} else {
			char *text;
			size_t len;
			snprintf(where, sizeof where, "%s", strategy);
			if (!(st = pl_read_file(strategy, &text, &len, &err))) {
				st = pl_json_parse(text, len, strategy, &plan, &err);
				free(text);
			}
		}
		pl_cli_cost_result r;
		pl_cluster pcl;
		if (plan)
			st = pl_cli_cost_one(g, plan, from_stdin ? where : strategy, &co, limit, &r,
			                     &pcl, NULL, &err);
		cJSON_Delete(plan);
		if (st) {
			if (!from_stdin) {
				rc = pl_cli_fail(st, &err);
				break;
			}
			cJSON *o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "error", err.msg);
			char *txt = cJSON_PrintUnformatted(o);
			puts(txt ? txt : "{\"error\": \"out of memory\"}");
			fflush(stdout);
			free(txt);
			cJSON_Delete(o);
			fprintf(stderr, "planner: %s\n", err.msg);
			if (!rc)
				rc = pl_status_exit_code(st);
			continue;
		}
		cJSON *o = cost_object(&r, g, &pcl);
		pl_plan_detail_free(&r.detail);
		char *txt = o ? cJSON_PrintUnformatted(o) : NULL;
		cJSON_Delete(o);
		if (!txt) {
			fprintf(stderr, "planner: out of memory\n");
			rc = pl_status_exit_code(PL_ENOMEM);
			break;
		}
		puts(txt);
		fflush(stdout);
		free(txt);
		if (r.pc.mem_bytes > r.limit) {
			over = 1;
			char a[32], b[32];
			pl_cli_fmt_bytes(r.pc.mem_bytes, a, sizeof a);
			pl_cli_fmt_bytes(r.limit, b, sizeof b);
			fprintf(stderr, "planner: %s: the plan does not fit: %s per device of %s\n",
			        where, a, b);
		}
		if (!from_stdin)
			break;
	}
	free(line);
	pl_graph_free(g);
	/* an error outranks a plan that does not fit */
	return rc ? rc : over ? pl_status_exit_code(PL_EINFEASIBLE) : 0;
}
