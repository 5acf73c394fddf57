/* Stand-ins when this build has no MPI (executor/backend.h). */
#include "executor/backend.h"

pl_status pl_backend_mpi(pl_backend **out, pl_err *err)
{
	*out = NULL;
	return pl_err_set(err, PL_EDEVICE,
	                  "this build has no MPI (install libopenmpi-dev and rebuild) to run ranks "
	                  "as processes");
}

pl_status pl_backend_cuda_mpi(pl_backend **out, pl_err *err)
{
	return pl_backend_mpi(out, err);
}
