/* The nccl-tests log reader and the fit of a cluster to what it read (as
 * `planner calibrate --from-nccl-tests` runs it), filling in what a log does
 * not print the way the command does. */
#include "topology/nccltests.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	pl_nccl_log log;
	pl_err err;
	if (pl_nccl_log_parse(&log, (const char *)data, size, "fuzz.txt", &err))
		return 0;
	if (log.coll == PL_COLL_COUNT)
		log.coll = PL_COLL_ALL_REDUCE;
	if (log.ranks == 0 && !(log.ranks = pl_nccl_log_ranks_from_busbw(&log, log.coll)))
		log.ranks = 8;
	if (log.hosts == 0)
		log.hosts = 1;
	pl_cluster c;
	const char *file = "fuzz.txt";
	if (!pl_cluster_preset(&c, "h100x8", &err))
		pl_nccl_fit_cluster(&c, &log, &file, 1, NULL, &err);
	pl_nccl_log_free(&log);
	return 0;
}
