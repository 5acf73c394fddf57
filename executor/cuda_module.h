/* The GPU parts live in a module of their own, libplanner-cuda.so, loaded
 * when first asked for (the cuda backend, GPU calibration, CUDA bus ids):
 * `planner` and libplanner do not link the CUDA runtime, cuBLAS or NCCL, so
 * they start in milliseconds and run on machines without them; the module
 * links them. Each layer with parts in it exports a table of its own from
 * it, declared, defined and reached in that layer's folder: the executor's
 * (here; defined in cuda_module.c) and topology's (topology/gpu_module.h).
 * This file also loads the module, once, and checks each table's head. */
#ifndef PL_CUDA_MODULE_H
#define PL_CUDA_MODULE_H

#include "executor/backend.h"

/* Bumped when a table, its head or a structure a table passes changes. */
#define PL_CUDA_MODULE_ABI 3

/* Every table starts with this: the loader refuses a table whose abi,
 * version or sizes (of the structures it passes, as the module was built)
 * are not this build's. */
typedef struct pl_cuda_table_head {
	int abi;             /* PL_CUDA_MODULE_ABI of the module */
	const char *version; /* the project version it was built from */
	size_t sizes[4];     /* the table's own choice of sizeof's, unused ones 0 */
} pl_cuda_table_head;

/* The module's table `symbol` (the module loaded once, thread-safe) when its
 * head has this build's abi and version and the sizes `sizes`; NULL with
 * why[] saying why not: this build has no module, it was not found
 * (PL_CUDA_MODULE names its path; by default it is looked for beside the
 * program or library that loads it, then where it was installed), it could
 * not be loaded (a library it needs is missing, such as the CUDA runtime),
 * or it is another build's. */
const void *pl_cuda_module_table(const char *symbol, const size_t sizes[4], char *why,
                                 size_t n);

/* The executor's table: the cuda backend. */
#define PL_CUDA_EXEC_TABLE "pl_cuda_exec_v1"
typedef struct pl_cuda_exec_table {
	pl_cuda_table_head head; /* sizes: pl_err, pl_procs */
	pl_status (*backend)(pl_backend **out, int64_t nranks, double timeout_s, pl_err *err);
	pl_status (*backend_procs)(pl_backend **out, const pl_procs *pr, double timeout_s,
	                           pl_err *err);
	int (*devices)(void);
} pl_cuda_exec_table;

#define PL_CUDA_EXEC_SIZES {sizeof(pl_err), sizeof(pl_procs), 0, 0}

#endif
