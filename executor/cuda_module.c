/* The executor's table in libplanner-cuda.so (executor/cuda_module.h): the
 * cuda backend. One of the module's two exported symbols; everything else in
 * it is hidden. */
#include "executor/cuda_module.h"

__attribute__((visibility("default"))) const pl_cuda_exec_table pl_cuda_exec_v1 = {
    .head = {.abi = PL_CUDA_MODULE_ABI, .version = PL_PROJECT_VERSION, .sizes = PL_CUDA_EXEC_SIZES},
    .backend = pl_backend_cuda,
    .backend_procs = pl_backend_cuda_procs,
    .devices = pl_cuda_devices,
};
