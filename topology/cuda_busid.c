/* CUDA's PCI bus ids, to match CUDA ordinals to hwloc's PCI devices (Debian's
 * hwloc has no CUDA or NVML backend). Built into the cuda module
 * (topology/gpu_module.h, its table there); gpu_load.c calls it. */
#include <cuda_runtime_api.h>
#include <stdio.h>

#include "topology/discover.h"

int pl_topo_cuda_busids(char (*busids)[16], int max)
{
	int n = 0;
	if (cudaGetDeviceCount(&n) != cudaSuccess || n < 1)
		return -1;
	if (n > max)
		n = max;
	for (int i = 0; i < n; i++)
		if (cudaDeviceGetPCIBusId(busids[i], 16, i) != cudaSuccess)
			return -1;
	return n;
}
