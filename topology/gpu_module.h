/* Topology's table in the cuda module, libplanner-cuda.so
 * (executor/cuda_module.h loads the module and checks the table's head):
 * CUDA bus ids (cuda_busid.c) and GPU calibration (calibrate_gpu.c), defined
 * in gpu_module.c, which is built into the module; gpu_load.c reaches them
 * through it from planner and libplanner, and says why not when there is
 * none. */
#ifndef PL_TOPO_GPU_MODULE_H
#define PL_TOPO_GPU_MODULE_H

#include "executor/cuda_module.h"
#include "topology/calibrate_gpu.h"

#define PL_TOPO_GPU_TABLE "pl_topo_gpu_v1"
typedef struct pl_topo_gpu_table {
	pl_cuda_table_head head; /* sizes: pl_calib_opts, pl_cluster, pl_err */
	int (*busids)(char (*busids)[16], int max);
	pl_status (*calibrate)(const pl_calib_opts *o, pl_cluster *out, struct cJSON **raw,
	                       pl_err *err);
	pl_status (*calibrate_ranks)(const pl_calib_opts *o, struct pl_rdv *rdv, pl_cluster *out,
	                             struct cJSON **raw, pl_err *err);
} pl_topo_gpu_table;

#define PL_TOPO_GPU_SIZES {sizeof(pl_calib_opts), sizeof(pl_cluster), sizeof(pl_err), 0}

#endif
