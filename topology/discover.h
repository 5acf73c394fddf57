/* Topology discovery with hwloc: the GPUs of a machine (NVIDIA PCI devices,
 * with the nvml / cuda OS devices hwloc may hang under them), their NUMA node,
 * CPU set and PCIe link, the NVLinks between them and to NVSwitches (counted
 * from hwloc's NVLinkBandwidth distances), and the network cards; and the
 * cluster description that follows from it. Works on the local machine or on
 * an XML file written by lstopo elsewhere. */
#ifndef PL_DISCOVER_H
#define PL_DISCOVER_H

#include "costmodel/cluster.h"
#include "graph/status.h"

#define PL_TOPO_MAX_GPUS 64
#define PL_TOPO_MAX_NICS 32

typedef struct pl_topo_gpu {
	char model[64]; /* "Tesla V100-SXM3-32GB-H"; "NVIDIA [10de:1db8]" if unnamed */
	char osdev[16]; /* "nvml3", "cuda3" or "" */
	char busid[16]; /* "0000:34:00.0" */
	int numa;       /* OS index of its NUMA node, -1 if not one */
	char cpus[128]; /* CPU list near it ("0-23,48-71") */
	double pcie_bw; /* PCIe link bytes/s, 0 if unknown */
	int nvlinks;    /* NVLinks in all, to GPUs and switches */
	int to_switch;  /* of them, to NVSwitches */
	int cuda;       /* CUDA ordinal matched by bus id, -1 if none */
} pl_topo_gpu;

typedef struct pl_topo_nic {
	char name[32]; /* OS device name: "mlx5_0", "ib0", "eth0" */
	char busid[16];
	double pcie_bw; /* bytes/s, 0 if unknown */
	int numa;
} pl_topo_nic;

typedef struct pl_topo {
	char source[256]; /* the XML file, or "this machine" */
	int packages, numa_nodes, cores, pus;
	double host_memory; /* bytes */
	int ngpus;
	pl_topo_gpu gpu[PL_TOPO_MAX_GPUS];                        /* in PCI bus order */
	unsigned char nvlink[PL_TOPO_MAX_GPUS][PL_TOPO_MAX_GPUS]; /* direct GPU-GPU links */
	int nvswitches; /* switches in the NVLink matrix */
	int nnics;
	pl_topo_nic nic[PL_TOPO_MAX_NICS];
} pl_topo;

/* Loads the topology of this machine (xml NULL) or of an lstopo XML file.
 * An unreadable or invalid file is PL_EINVAL naming it. */
pl_status pl_topo_load(pl_topo *t, const char *xml, pl_err *err);
/* The same from an XML document in memory (buf NULL: this machine); name is
 * used in messages. hwloc reads it first in a child process, so an XML that
 * crashes hwloc is PL_EINVAL here rather than the end of the caller. */
pl_status pl_topo_load_xml(pl_topo *t, const char *buf, size_t len, const char *name,
                           pl_err *err);

/* Records CUDA ordinals: busids[i] is the PCI bus id CUDA gives device i
 * ("0000:34:00.0", any case, domain optional). Returns how many matched. */
int pl_topo_match_cuda(pl_topo *t, const char *const *busids, int n);

/* CUDA's bus ids of the local devices (cudaDeviceGetPCIBusId); the count, or
 * -1 when CUDA is not built in or finds no device. */
int pl_topo_cuda_busids(char (*busids)[16], int max);

/* The cluster one node of this topology makes: the device of the preset
 * matching the GPU model (h100x8, a100x8, dgx2-v100; else h100x8, *guessed
 * set), devices_per_node = GPUs, intra-node bandwidth from the NVLinks per
 * GPU (or PCIe). No GPUs: the h100x8 preset, *guessed set. */
void pl_topo_cluster(const pl_topo *t, pl_cluster *c, int *guessed);

struct cJSON;
/* The topology as JSON (the "topology" block of a cluster file). */
struct cJSON *pl_topo_to_json(const pl_topo *t);

#endif
