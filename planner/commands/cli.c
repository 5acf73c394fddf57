/* The command line's shared helpers (planner/commands/cli.h): failure and usage
 * messages, a model's warnings, a checkpoint read for the commands that
 * print it. In the application's library, so that every command's file
 * uses them from below and main.c is only the dispatcher's caller. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "graph/graph.h"
#include "graph/json.h"
#include "planner/checkpoint.h"
#include "planner/commands/cli.h"

int pl_cli_fail(pl_status st, const pl_err *err)
{
	fprintf(stderr, "planner: %s\n", err->msg);
	return pl_status_exit_code(st);
}

void pl_cli_model_warnings(const pl_graph *g)
{
	if (!g || !g->warnings)
		return;
	for (const char *l = g->warnings, *nl; *l; l = nl + 1) {
		nl = strchr(l, '\n');
		fprintf(stderr, "planner: warning: %.*s\n", (int)(nl - l), l);
	}
	if (g->nwarnings > PL_GRAPH_WARNINGS)
		fprintf(stderr, "planner: warning: %s: %d more keys ignored\n", g->path,
		        g->nwarnings - PL_GRAPH_WARNINGS);
}

int pl_cli_usage(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "planner %s: ", cmd);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'planner %s --help'.\n", cmd);
	return 2;
}

pl_status pl_cli_read_ckpt(const char *path, cJSON **out, pl_err *err)
{
	char *text;
	size_t len;
	*out = NULL;
	pl_status st = pl_read_file(path, &text, &len, err);
	if (st)
		return st;
	cJSON *ck = NULL;
	st = pl_json_parse(text, len, path, &ck, err);
	free(text);
	if (st)
		return st;
	const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(ck, "format");
	if (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, "planner.strategy/1"))
		st =
		    pl_err_set(err, PL_EINVAL, "%s: format: expected \"planner.strategy/1\"", path);
	else if (!cJSON_GetObjectItemCaseSensitive(ck, "parallel_strategy_item"))
		st = pl_err_set(err, PL_EINVAL, "%s: parallel_strategy_item: missing", path);
	else
		st = pl_ckpt_check(ck, path, err);
	if (st)
		cJSON_Delete(ck);
	else
		*out = ck;
	return st;
}
