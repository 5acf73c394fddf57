/* Without CUDA there are no CUDA ordinals to match. */
#include "topology/discover.h"

int pl_topo_cuda_busids(char (*busids)[16], int max)
{
	(void)busids;
	(void)max;
	return -1;
}
