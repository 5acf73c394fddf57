/* nccl-tests output (all_reduce_perf, all_gather_perf, reduce_scatter_perf,
 * alltoall_perf, sendrecv_perf) as printed: the "# Using devices" block and
 * the result table, of which the out-of-place columns are read. */
#ifndef PL_NCCLTESTS_H
#define PL_NCCLTESTS_H

#include <stddef.h>
#include <stdint.h>

#include "costmodel/cluster.h"
#include "graph/ops.h"
#include "graph/status.h"

typedef struct pl_nccl_point {
	double bytes;   /* S, the size column */
	double seconds; /* out-of-place time */
	double algbw;   /* bytes/s */
	double busbw;   /* bytes/s */
} pl_nccl_point;

typedef struct pl_nccl_log {
	pl_coll coll;    /* PL_COLL_COUNT when the log does not name its test */
	int64_t ranks;   /* "# Using devices" lines; 0 when not printed */
	int64_t hosts;   /* distinct hosts among them; 0 when not printed */
	char device[64]; /* rank 0's device name; "" when not printed */
	int n;
	pl_nccl_point *pt; /* rows with S > 0, in file order (ascending S) */
} pl_nccl_log;

/* Parses the text of one log; `file` names it in errors. The rows must have
 * sizes that do not decrease and out-of-place algbw = S / time. */
pl_status pl_nccl_log_parse(pl_nccl_log *log, const char *text, size_t len, const char *file,
                            pl_err *err);
void pl_nccl_log_free(pl_nccl_log *log);

/* The collective a name stands for: nccl-tests' binary names (all_reduce_perf,
 * alltoall_perf, ...) and planner's (all_reduce, all_to_all, ...), with or
 * without '_'. PL_COLL_COUNT if none. */
pl_coll pl_nccl_coll_parse(const char *name);

/* The collective a file name mentions ("h100-allreduce.txt",
 * "all_gather_perf.log"); PL_COLL_COUNT if none or several. */
pl_coll pl_nccl_coll_in_name(const char *path);

/* The rank count that the log's busbw/algbw ratio implies for its collective
 * (nccl-tests' bus factor inverted at the largest message); 0 when it does
 * not determine one (send_recv, or too little bandwidth to read). */
int64_t pl_nccl_log_ranks_from_busbw(const pl_nccl_log *log, pl_coll coll);

struct cJSON;
/* Fits the cluster's collectives to logs whose coll, ranks and hosts are
 * known (the caller fills what a log does not print): for each collective,
 * link class (intra_node when a log ran on one host) and rank count, up to
 * four alpha-beta lines over ranges of message sizes (costmodel/fit.h),
 * points of logs with the same key fitted together. The link defaults
 * become the all-reduce fit of the largest group (alpha of the smallest
 * messages, beta of the largest); nodes and devices_per_node grow to hold
 * the largest log. Other fields of c (the device) are kept. Appends each
 * log's points to the array `raw` when it is non-NULL. */
pl_status pl_nccl_fit_cluster(pl_cluster *c, const pl_nccl_log *logs, const char *const *files,
                              int nlogs, struct cJSON *raw, pl_err *err);

#endif
