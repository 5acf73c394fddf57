/* The GPU parts live in a module of their own, libplanner-cuda.so, loaded
 * when first asked for (the cuda backend, GPU calibration, CUDA bus ids):
 * `planner` and libplanner do not link the CUDA runtime, cuBLAS or NCCL, so
 * they start in milliseconds and run on machines without them; the module
 * links them. This is the table the module exports and the loader reads. */
#ifndef PL_CUDA_MODULE_H
#define PL_CUDA_MODULE_H

#include "executor/backend.h"
#include "executor/calibrate.h"

struct cJSON;
struct pl_rdv;

/* Bumped when the table or a structure it passes changes. */
#define PL_CUDA_MODULE_ABI 2

typedef struct pl_cuda_module {
	int abi;             /* PL_CUDA_MODULE_ABI of the module */
	size_t sizes[3];     /* sizeof pl_calib_opts, pl_cluster, pl_err as it was built */
	const char *version; /* the project version it was built from */
	pl_status (*backend)(pl_backend **out, int64_t nranks, double timeout_s, pl_err *err);
	pl_status (*backend_procs)(pl_backend **out, const pl_procs *pr, double timeout_s,
	                           pl_err *err);
	int (*devices)(void);
	int (*busids)(char (*busids)[16], int max);
	pl_status (*calibrate)(const pl_calib_opts *o, pl_cluster *out, struct cJSON **raw,
	                       pl_err *err);
	pl_status (*calibrate_ranks)(const pl_calib_opts *o, struct pl_rdv *rdv, pl_cluster *out,
	                             struct cJSON **raw, pl_err *err);
} pl_cuda_module;

/* The module's table, loaded once (thread-safe); NULL with why[] saying
 * why not: this build has none, it was not found (PL_CUDA_MODULE names its
 * path; by default it is looked for beside the program or library that
 * loads it, then where it was installed), or it could not be loaded (a
 * library it needs is missing, such as the CUDA runtime). */
const pl_cuda_module *pl_cuda_module_get(char *why, size_t n);

#endif
