/* A build without CUDA/NCCL cannot measure GPUs. */
#include "topology/calibrate_gpu.h"

int pl_calibrate_gpu_built(void)
{
	return 0;
}

pl_status pl_calibrate_gpu(const pl_calib_opts *o, pl_cluster *out, struct cJSON **raw, pl_err *err)
{
	(void)o;
	(void)out;
	if (raw)
		*raw = NULL;
	return pl_err_set(err, PL_EDEVICE,
	                  "calibrate: this planner was built without CUDA and NCCL, so it cannot "
	                  "measure GPUs; '--backend cpu' calibrates the cpu backend, "
	                  "--from-nccl-tests reads nccl-tests logs");
}

pl_status pl_calibrate_gpu_ranks(const pl_calib_opts *o, pl_rdv *rdv, pl_cluster *out,
                                 struct cJSON **raw, pl_err *err)
{
	(void)rdv;
	return pl_calibrate_gpu(o, out, raw, err);
}
