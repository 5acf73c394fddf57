/* CUDA bus ids and GPU calibration through topology's table in the cuda
 * module (topology/gpu_module.h): what topology/cuda_busid.c and
 * topology/calibrate_gpu.c do, inside libplanner-cuda.so. */
#include "topology/gpu_module.h"

#include "topology/discover.h"

static const pl_topo_gpu_table *gpu_table(char *why, size_t n)
{
	static const size_t sizes[4] = PL_TOPO_GPU_SIZES;
	return pl_cuda_module_table(PL_TOPO_GPU_TABLE, sizes, why, n);
}

int pl_topo_cuda_busids(char (*busids)[16], int max)
{
	const pl_topo_gpu_table *m = gpu_table(NULL, 0);
	return m ? m->busids(busids, max) : -1;
}

int pl_calibrate_gpu_built(void)
{
	return gpu_table(NULL, 0) != NULL;
}

pl_status pl_calibrate_gpu(const pl_calib_opts *o, pl_cluster *out, struct cJSON **raw, pl_err *err)
{
	char why[4096];
	const pl_topo_gpu_table *m = gpu_table(why, sizeof why);
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
	const pl_topo_gpu_table *m = gpu_table(NULL, 0);
	if (!m)
		return pl_calibrate_gpu(o, out, raw, err);
	return m->calibrate_ranks(o, rdv, out, raw, err);
}
