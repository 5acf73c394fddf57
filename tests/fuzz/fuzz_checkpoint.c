/* The checkpoint reader as `planner cost` and `run` use it: the model check,
 * the cluster it records, the plan priced (per-op or whole-job) and the
 * splits handed to the executor; the input is read as one document and, when
 * it has several lines, as JSON lines too (`planner cost MODEL --strategy -`). */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "planner/checkpoint.h"
#include "graph/graph.h"
#include "graph/model.h"
#include "graph/json.h"
#include "planner/plan.h"
#include "tests/fuzz/fuzz.h"

static void price(const char *text, size_t len)
{
	pl_err err;
	cJSON *ck;
	if (pl_json_parse(text, len, "fuzz.json", &ck, &err))
		return;
	pl_graph *g = NULL;
	pl_cluster cl;
	if (pl_graph_load_file(&g, FUZZ_MODEL, &err)) {
		cJSON_Delete(ck);
		abort(); /* the fixed model must load */
	}
	if (!pl_plan_check_model(g, ck, "fuzz.json", &err) &&
	    !pl_plan_cluster(ck, "fuzz.json", &cl, &err)) {
		pl_plancost pc;
		double bubble;
		pl_plan_detail detail;
		pl_run_plan run = {0};
		if (!pl_plan_price(g, ck, "fuzz.json", &cl, &pc, &bubble, &detail, NULL, &err))
			pl_plan_detail_free(&detail);
		if (!pl_plan_price(g, ck, "fuzz.json", &cl, &pc, &bubble, NULL, &run, &err))
			pl_run_plan_free(&run, g);
		pl_plan_annotate(g, ck, "fuzz.json", &err);
	}
	pl_graph_free(g);
	cJSON_Delete(ck);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	price(text, size);
	const char *nl = memchr(text, '\n', size);
	if (!nl || (size_t)(nl - text) + 1 == size)
		return 0;
	for (size_t at = 0; at < size;) {
		const char *end = memchr(text + at, '\n', size - at);
		size_t n = end ? (size_t)(end - (text + at)) : size - at;
		price(text + at, n);
		at += n + 1;
	}
	return 0;
}
