/* The cluster reader (planner.cluster/1), and the numbers priced from what
 * it accepted: collectives over its largest group. */
#include "costmodel/cluster.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	pl_cluster c;
	pl_err err;
	if (pl_cluster_load_json(&c, (const char *)data, size, "fuzz.json", &err) == PL_OK) {
		int64_t n = pl_cluster_devices_total(&c);
		for (int k = 0; k < PL_COLL_COUNT; k++)
			for (int l = 0; l < PL_LINK_COUNT; l++)
				(void)pl_cluster_coll_time(&c, (pl_coll)k, l, n, 1e6);
	}
	return 0;
}
