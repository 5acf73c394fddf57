/* The table libplanner-cuda.so exports (executor/cuda_module.h): the only
 * symbol it shows; everything else in it is hidden. */
#include "executor/cuda_module.h"

#include "topology/calibrate_gpu.h"
#include "topology/discover.h"

__attribute__((visibility("default"))) const pl_cuda_module pl_cuda_module_v1 = {
    .abi = PL_CUDA_MODULE_ABI,
    .sizes = {sizeof(pl_calib_opts), sizeof(pl_cluster), sizeof(pl_err)},
    .version = PL_PROJECT_VERSION,
    .backend = pl_backend_cuda,
    .backend_procs = pl_backend_cuda_procs,
    .devices = pl_cuda_devices,
    .busids = pl_topo_cuda_busids,
    .calibrate = pl_calibrate_gpu,
    .calibrate_ranks = pl_calibrate_gpu_ranks,
};
