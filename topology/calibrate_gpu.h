/* Calibration on GPUs: cuBLAS GEMM throughput at several sizes (the compute
 * efficiency curve) and NCCL all_reduce, all_gather, reduce_scatter,
 * all_to_all and send/recv over group sizes 2..n of this process's GPUs
 * (ncclCommInitAll), 8 B up to max_bytes, timed with CUDA events after a
 * warm-up, fitted per collective and group size with the size-range alpha/
 * beta fit of topology/fit.h. With one GPU: the GEMM curve and one-rank NCCL
 * times (no bus traffic to fit). Built when CUDA and NCCL are found;
 * otherwise it reports that and fails. */
#ifndef PL_CALIBRATE_GPU_H
#define PL_CALIBRATE_GPU_H

#include "costmodel/cluster.h"
#include "executor/calibrate.h"

struct cJSON;

/* 1 when this build can calibrate GPUs (CUDA, cuBLAS and NCCL found). */
int pl_calibrate_gpu_built(void);

/* No GPU (or no CUDA in this build): PL_EDEVICE with a message saying so. */
pl_status pl_calibrate_gpu(const pl_calib_opts *o, pl_cluster *out, struct cJSON **raw,
                           pl_err *err);

#endif
