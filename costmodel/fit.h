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

#define PL_FIT_MAX_RANGES 4
/* Fits up to maxseg (at most PL_FIT_MAX_RANGES) lines to n points sorted by size, each line
 * for one range of sizes: ab[k] holds for sizes up to max_busbytes[k] (the
 * last line, with max_busbytes 0, for every larger size). A line is added
 * only where it cuts the squared relative error by a quarter and the fit is
 * worse than 1% rms. *nseg receives the number of lines. Returns 0, or -1
 * for unsorted, non-positive or degenerate points. */
int pl_fit_ab_ranges(const double *busbytes, const double *seconds, int n, int maxseg, pl_ab *ab,
                     double *max_busbytes, int *nseg);

/* Fits the achieved rate of a kernel to rate(f) = peak * f / (f + half), the
 * curve the cost model uses for GEMMs (f = FLOPs of one call). Returns 0, or
 * -1 when the points do not determine a positive peak. */
int pl_fit_rate_curve(const double *flops, const double *rate, int n, double *peak, double *half);

#endif
