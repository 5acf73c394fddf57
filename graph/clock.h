/* The monotonic clock every layer times itself with (search time limits, the
 * executor's timeouts, calibration). */
#ifndef PL_CLOCK_H
#define PL_CLOCK_H

/* Seconds on a monotonic clock (an arbitrary origin). */
double pl_now(void);

#endif
