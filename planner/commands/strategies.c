/* planner strategies: one op's candidate strategies, as JSON. */
#include "planner/commands/commands.h"

static const char *const strategies_help =
    "usage: planner strategies MODEL --op NAME [--devices N | --cluster FILE|PRESET]\n"
    "                          [--max-tp N]\n"
    "\n"
    "Prints the candidate strategies of one op as JSON: for each, the MindSpore-style\n"
    "per-input split tuples, its compute and communication seconds and its memory per device.\n"
    "They are the candidates 'planner search' chooses from: on a cluster of several nodes\n"
    "a tensor-parallel cut stays inside one unless --max-tp N says otherwise (0: "
    "any).\n" PL_HELP_ONNX_MODEL;

int pl_cmd_strategies(int argc, char **argv)
{
	pl_cli_common co = {0};
	const char *opname = NULL;
	pl_job limits = {0};
	pl_cli_args a;
	pl_cli_args_init(&a, PL_CMD_STRATEGIES, "strategies", strategies_help, &co);
	int ch;
	while ((ch = pl_cli_next(&a, argc, argv)) != -1) {
		switch (ch) {
		case PL_CLI_STOP: return a.rc;
		case 'o': opname = optarg; break;
		case OPT_MAX_TP: {
			long long v;
			if (pl_cli_parse_max_tp(optarg, &v))
				return pl_cli_usage("strategies", MAX_TP_EXPECTED, optarg);
			limits.max_tp = pl_max_tp_of_user(v);
			break;
		}
		}
	}
	if (optind != argc - 1 || !opname)
		return pl_cli_usage("strategies", "expected MODEL and --op NAME%s", "");
	pl_err err = {{0}};
	pl_graph *g = NULL;
	pl_problem *p = NULL;
	pl_cluster cl;
	pl_status st;
	int rc = 0;
	if ((st = pl_cli_load_model(&g, argv[optind], &co.onnx, &err)) ||
	    (st = pl_cli_resolve_cluster(&co, &cl, &err))) {
		rc = pl_cli_fail(st, &err);
		goto done;
	}
	int o = pl_graph_find_op(g, opname);
	if (o < 0) {
		rc = pl_cli_fail(pl_err_set(&err, PL_EINVAL,
		                            "%s: --op %s: the model has no op of that name",
		                            argv[optind], opname),
		                 &err);
		goto done;
	}
	if ((st = pl_problem_new_job(&p, g, &cl, &limits, &err))) {
		rc = pl_cli_fail(st, &err);
		goto done;
	}
	const pl_op *op = &g->ops[o];
	const pl_nodecost *nc = pl_problem_node(p, o);
	cJSON *root = cJSON_CreateObject();
	cJSON_AddStringToObject(root, "op", op->name);
	cJSON_AddStringToObject(root, "type", pl_optype_name(op->type));
	cJSON_AddNumberToObject(root, "devices", (double)p->devices);
	cJSON_AddBoolToObject(root, "annotated", op->has_strategy);
	cJSON *arr = cJSON_AddArrayToObject(root, "strategies");
	for (int s = 0; nc && s < p->nstrat[o]; s++) {
		int64_t tuples[PL_MAX_OP_INPUTS][PL_MAX_RANK];
		pl_op_split_to_tuples(g, op, p->strat[o] + (size_t)s * op->spec.nloops, tuples);
		cJSON *e = cJSON_CreateObject();
		cJSON *ps = cJSON_AddArrayToObject(e, "parallel_strategy");
		for (int i = 0; i < op->ninputs; i++) {
			cJSON *t = cJSON_CreateArray();
			for (int d = 0; d < g->tensors[op->in[i]].rank; d++)
				pl_json_push(t, cJSON_CreateNumber((double)tuples[i][d]));
			pl_json_push(ps, t);
		}
		cJSON_AddNumberToObject(e, "compute_seconds", nc[s].compute_s);
		cJSON_AddNumberToObject(e, "communication_seconds", nc[s].comm_s);
		cJSON_AddNumberToObject(e, "memory_bytes", nc[s].mem_bytes);
		pl_json_push(arr, e);
	}
	char *txt = cJSON_Print(root);
	if (txt)
		puts(txt);
	else
		rc = pl_cli_fail(pl_err_set(&err, PL_ENOMEM, "out of memory"), &err);
	free(txt);
	cJSON_Delete(root);
done:
	pl_problem_free(p);
	pl_graph_free(g);
	return rc;
}
