/* The ONNX importer: protobuf-c's reading of a ModelProto, then the import
 * and the model reader on what it makes. */
#include "graph/graph.h"
#include "graph/model.h"
#include "graph/onnx.h"
#include "tests/fuzz/fuzz.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cJSON *doc = NULL;
	pl_err err;
	pl_onnx_opts o = {.batch = 4};
	if (pl_onnx_to_model(data, size, "fuzz.onnx", &o, &doc, &err) != PL_OK)
		return 0;
	char *txt = cJSON_PrintUnformatted(doc);
	pl_graph *g = NULL;
	if (txt && pl_graph_load_json(&g, txt, strlen(txt), "fuzz.onnx", &err) == PL_OK)
		pl_graph_free(g);
	free(txt);
	cJSON_Delete(doc);
	return 0;
}
