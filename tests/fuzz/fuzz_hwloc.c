/* hwloc XML as `planner topology --xml` reads it: through the child-process
 * probe, so that what crashes hwloc itself is an error, not a crash here. */
#include "topology/discover.h"
#include "tests/fuzz/fuzz.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	pl_topo *t = malloc(sizeof *t);
	pl_err err;
	if (!t)
		return 0;
	if (!pl_topo_load_xml(t, (const char *)data, size, "fuzz.xml", &err)) {
		pl_cluster c;
		int guessed;
		pl_topo_cluster(t, &c, &guessed);
	}
	free(t);
	return 0;
}
