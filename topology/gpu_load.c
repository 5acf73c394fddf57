/* CUDA bus ids and GPU calibration through the cuda module
 * (executor/cuda_module.h): what topology/cuda_busid.c and
 * topology/calibrate_gpu.c do, inside libplanner-cuda.so. */
#include "executor/cuda_module.h"
#include "topology/calibrate_gpu.h"
#include "topology/discover.h"

int pl_topo_cuda_busids(char (*busids)[16], int max)
{
	const pl_cuda_module *m = pl_cuda_module_get(NULL, 0);
	return m ? m->busids(busids, max) : -1;
}

int pl_calibrate_gpu_built(void)
{
	return pl_cuda_module_get(NULL, 0) != NULL;
}

pl_status pl_calibrate_gpu(const pl_calib_opts *o, pl_cluster *out, struct cJSON **raw, pl_err *err)
{
	char why[4096];
	const pl_cuda_module *m = pl_cuda_module_get(why, sizeof why);
	if (raw)
		*raw = NULL;
	if (!m)
		return pl_err_set(
		    err, PL_EDEVICE,
		    "calibrate: cannot measure GPUs: %s; '--backend cpu' calibrates the "
		    "cpu backend, --from-nccl-tests reads nccl-tests logs",
		    why);
	return m->calibrate(o, out, raw, err);
}

pl_status pl_calibrate_gpu_ranks(const pl_calib_opts *o, pl_rdv *rdv, pl_cluster *out,
                                 struct cJSON **raw, pl_err *err)
{
	const pl_cuda_module *m = pl_cuda_module_get(NULL, 0);
	if (!m)
		return pl_calibrate_gpu(o, out, raw, err);
	return m->calibrate_ranks(o, rdv, out, raw, err);
}
