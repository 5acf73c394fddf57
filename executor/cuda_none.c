/* Builds without CUDA and NCCL: the cuda backend says it is not there. */
#include "executor/backend.h"

pl_status pl_backend_cuda(pl_backend **out, int64_t nranks, double timeout_s, pl_err *err)
{
	(void)nranks, (void)timeout_s;
	*out = NULL;
	return pl_err_set(err, PL_EDEVICE,
	                  "this build has no cuda backend: the CUDA toolkit, its compiler (nvcc) "
	                  "or NCCL was not found when planner was built");
}

int pl_cuda_devices(void)
{
	return 0;
}
