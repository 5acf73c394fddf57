/* Builds without protobuf-c or onnx.proto: ONNX files are refused, saying why. */
#include "graph/onnx.h"

pl_status pl_onnx_to_model(const unsigned char *data, size_t len, const char *path,
                           const pl_onnx_opts *o, cJSON **out, pl_err *err)
{
	(void)data, (void)len, (void)o;
	*out = NULL;
	return pl_err_set(err, PL_EINVAL,
	                  "%s: this planner was built without ONNX support (protobuf-c-compiler, "
	                  "libprotobuf-c-dev and libonnx-dev were not found when it was built)",
	                  path);
}

pl_status pl_onnx_weights(const unsigned char *data, size_t len, const char *path,
                          const struct pl_graph *g, float ***vals, pl_err *err)
{
	(void)data, (void)len, (void)g;
	*vals = NULL;
	return pl_err_set(err, PL_EINVAL,
	                  "%s: --weights: this planner was built without ONNX support "
	                  "(protobuf-c-compiler, libprotobuf-c-dev and libonnx-dev were not found "
	                  "when it was built)",
	                  path);
}
