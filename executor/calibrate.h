/* Calibration of a backend: measures what the cost model needs -- the GEMM
 * rate curve, memory bandwidth, the rate of vector kernels, the cost of one
 * kernel call, and alpha-beta of every collective over every group size --
 * on the backend's own kernels and collectives, with all ranks busy at once
 * (so ranks that share cores or memory bandwidth are measured sharing them),
 * and fits a cluster description to it. */
#ifndef PL_CALIBRATE_H
#define PL_CALIBRATE_H

#include "costmodel/cluster.h"
#include "executor/backend.h"

struct cJSON;

typedef struct pl_calib_opts {
	double max_bytes;   /* largest collective message (0: 64 MiB) */
	double min_seconds; /* timing window of one point (0: 0.02 s) */
	/* called before each phase with a short description (may be NULL) */
	void (*progress)(void *ud, const char *what);
	void *ud;
} pl_calib_opts;

/* Fills *out with one node of be->nranks devices fitted to the measurements;
 * *raw (if raw is non-NULL) receives them as a JSON object (caller frees
 * with cJSON_Delete). Needs host buffers: the cpu backend, as threads or as
 * MPI processes (pl_backend_mpi; every process calls it, and only rank 0's
 * *out and *raw are filled: the others get PL_OK and nothing). */
pl_status pl_calibrate(pl_backend *be, const pl_calib_opts *o, pl_cluster *out, struct cJSON **raw,
                       pl_err *err);

#endif
