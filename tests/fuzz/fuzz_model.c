/* The model reader: planner.model/1 JSON, shape inference of every op. */
#include "graph/graph.h"
#include "graph/model.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	pl_graph *g = NULL;
	pl_err err;
	if (pl_graph_load_json(&g, (const char *)data, size, "fuzz.json", &err) == PL_OK)
		pl_graph_free(g);
	return 0;
}
