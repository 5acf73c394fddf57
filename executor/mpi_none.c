/* Stand-ins when this build has no MPI (executor/backend.h). */
#include "executor/backend.h"

pl_status pl_backend_mpi(pl_backend **out, double timeout_s, pl_err *err)
{
	(void)timeout_s;
	*out = NULL;
	return pl_err_set(err, PL_EDEVICE,
	                  "this build has no MPI (install libopenmpi-dev and rebuild) to run ranks "
	                  "as processes");
}

pl_status pl_backend_cuda_mpi(pl_backend **out, double timeout_s, pl_err *err)
{
	return pl_backend_mpi(out, timeout_s, err);
}

pl_status pl_backend_mpi_join(pl_backend **out, const pl_mpi_join *join, pl_err *err)
{
	(void)join;
	return pl_backend_mpi(out, 0, err);
}

pl_status pl_mpi_name_server(char *uri, size_t n, long *pid, pl_err *err)
{
	(void)n;
	*uri = 0;
	*pid = -1;
	return pl_err_set(err, PL_EDEVICE,
	                  "this build has no MPI (install libopenmpi-dev and rebuild) to run ranks "
	                  "as processes");
}
