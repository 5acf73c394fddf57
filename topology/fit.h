/* Fitting the cost model's parameters to measurements: alpha-beta lines for
 * collectives (from `planner calibrate` or nccl-tests logs) and the GEMM
 * efficiency curve. Fits are least squares on relative error, so a line is
 * as faithful at 8 bytes as at 1 GiB. */
#ifndef PL_FIT_H
#define PL_FIT_H

#include "costmodel/cluster.h"

/* Fits seconds = alpha + busbytes * beta to n points (busbytes = bytes times
 * the collective's bus factor), minimising the sum of squared relative
 * errors; alpha and beta are kept >= 0. Returns 0, or -1 when fewer than two
 * distinct sizes are given. */
int pl_fit_ab(const double *busbytes, const double *seconds, int n, pl_ab *out);

/* Fits the achieved rate of a kernel to rate(f) = peak * f / (f + half), the
 * curve the cost model uses for GEMMs (f = FLOPs of one call). Returns 0, or
 * -1 when the points do not determine a positive peak. */
int pl_fit_rate_curve(const double *flops, const double *rate, int n, double *peak, double *half);

#endif
