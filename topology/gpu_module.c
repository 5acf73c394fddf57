/* Topology's table in libplanner-cuda.so (topology/gpu_module.h): one of the
 * module's two exported symbols; everything else in it is hidden. */
#include "topology/gpu_module.h"

#include "topology/discover.h"

__attribute__((visibility("default"))) const pl_topo_gpu_table pl_topo_gpu_v1 = {
    .head = {.abi = PL_CUDA_MODULE_ABI, .version = PL_PROJECT_VERSION, .sizes = PL_TOPO_GPU_SIZES},
    .busids = pl_topo_cuda_busids,
    .calibrate = pl_calibrate_gpu,
    .calibrate_ranks = pl_calibrate_gpu_ranks,
};
