/* hwloc discovery. hwloc's per-link NVLink MB/s changed between releases, so
 * links are counted in units of the smallest bandwidth in the matrix (one
 * link), and bandwidth comes from the link count and the NVLink generation. */
#include "topology/discover.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <hwloc.h>
#include <limits.h>
#include <signal.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "graph/graph.h"
#include "graph/alloc.h"
#include "graph/json.h"

static void busid(hwloc_obj_t pci, char *out, size_t n)
{
	snprintf(out, n, "%04x:%02x:%02x.%x", pci->attr->pcidev.domain, pci->attr->pcidev.bus,
	         pci->attr->pcidev.dev, pci->attr->pcidev.func);
}

static int is_gpu(hwloc_obj_t o)
{
	return o->type == HWLOC_OBJ_PCI_DEVICE && o->attr->pcidev.vendor_id == 0x10de &&
	       (o->attr->pcidev.class_id >> 8) == 0x03; /* display controller */
}

/* the NUMA node and CPUs of the nearest non-I/O ancestor */
static void locality(hwloc_topology_t topo, hwloc_obj_t o, int *numa, char *cpus, size_t n)
{
	hwloc_obj_t a = hwloc_get_non_io_ancestor_obj(topo, o);
	*numa = -1;
	if (cpus)
		cpus[0] = 0;
	if (!a)
		return;
	if (a->nodeset && hwloc_bitmap_weight(a->nodeset) == 1)
		*numa = hwloc_bitmap_first(a->nodeset);
	if (cpus && a->cpuset)
		hwloc_bitmap_list_snprintf(cpus, n, a->cpuset);
}

static int by_busid(const void *a, const void *b)
{
	return strcmp(((const pl_topo_gpu *)a)->busid, ((const pl_topo_gpu *)b)->busid);
}

static void gpus(hwloc_topology_t topo, pl_topo *t)
{
	for (hwloc_obj_t o = NULL; (o = hwloc_get_next_pcidev(topo, o));) {
		if (!is_gpu(o) || t->ngpus == PL_TOPO_MAX_GPUS)
			continue;
		pl_topo_gpu *g = &t->gpu[t->ngpus++];
		memset(g, 0, sizeof *g);
		g->cuda = -1;
		busid(o, g->busid, sizeof g->busid);
		locality(topo, o, &g->numa, g->cpus, sizeof g->cpus);
		g->pcie_bw = o->attr->pcidev.linkspeed * 1e9;
		const char *model = hwloc_obj_get_info_by_name(o, "PCIDevice");
		for (hwloc_obj_t c = o->io_first_child; c; c = c->next_sibling) {
			if (c->type != HWLOC_OBJ_OS_DEVICE || !c->name ||
			    (strncmp(c->name, "nvml", 4) && strncmp(c->name, "cuda", 4)))
				continue;
			if (!g->osdev[0] || !strncmp(c->name, "nvml", 4))
				snprintf(g->osdev, sizeof g->osdev, "%s", c->name);
			const char *m = hwloc_obj_get_info_by_name(c, "GPUModel");
			if (m)
				model = m;
		}
		if (model)
			snprintf(g->model, sizeof g->model, "%s", model);
		else
			snprintf(g->model, sizeof g->model, "NVIDIA [10de:%04x]",
			         o->attr->pcidev.device_id);
	}
	qsort(t->gpu, (size_t)t->ngpus, sizeof *t->gpu, by_busid);
}

/* the GPU an object of the NVLink matrix stands for (an nvml/cuda OS device
 * or the PCI device itself), or -1 */
static int gpu_index(const pl_topo *t, hwloc_obj_t o)
{
	if (o->type == HWLOC_OBJ_OS_DEVICE)
		o = o->parent;
	if (!o || !is_gpu(o))
		return -1;
	char id[16];
	busid(o, id, sizeof id);
	for (int i = 0; i < t->ngpus; i++)
		if (!strcmp(t->gpu[i].busid, id))
			return i;
	return -1;
}

static void nvlinks(hwloc_topology_t topo, pl_topo *t)
{
	unsigned nr = 1;
	struct hwloc_distances_s *d = NULL;
	if (hwloc_distances_get_by_name(topo, "NVLinkBandwidth", &nr, &d, 0) || nr < 1)
		return;
	unsigned n = d->nbobjs;
	hwloc_uint64_t unit = 0;
	for (unsigned i = 0; i < n * n; i++)
		if (d->values[i] && (!unit || d->values[i] < unit))
			unit = d->values[i];
	int *idx = pl_malloc(n * sizeof *idx);
	if (unit && idx) {
		for (unsigned i = 0; i < n; i++)
			idx[i] = gpu_index(t, d->objs[i]);
		for (unsigned j = 0; j < n; j++) {
			int used = 0;
			for (unsigned i = 0; i < n; i++)
				used |= d->values[i * n + j] || d->values[j * n + i];
			if (idx[j] < 0 && used)
				t->nvswitches++;
		}
		for (unsigned i = 0; i < n; i++) {
			if (idx[i] < 0)
				continue;
			pl_topo_gpu *g = &t->gpu[idx[i]];
			for (unsigned j = 0; j < n; j++) {
				int links =
				    (int)llround((double)d->values[i * n + j] / (double)unit);
				if (!links || j == i)
					continue;
				g->nvlinks += links;
				if (idx[j] < 0)
					g->to_switch += links;
				else
					t->nvlink[idx[i]][idx[j]] =
					    (unsigned char)(links > 255 ? 255 : links);
			}
		}
	}
	free(idx);
	hwloc_distances_release(topo, d);
}

static void nics(hwloc_topology_t topo, pl_topo *t)
{
	for (hwloc_obj_t o = NULL; (o = hwloc_get_next_osdev(topo, o));) {
		if ((o->attr->osdev.type != HWLOC_OBJ_OSDEV_NETWORK &&
		     o->attr->osdev.type != HWLOC_OBJ_OSDEV_OPENFABRICS) ||
		    !o->name || t->nnics == PL_TOPO_MAX_NICS)
			continue;
		hwloc_obj_t pci = o->parent;
		if (!pci || pci->type != HWLOC_OBJ_PCI_DEVICE)
			continue; /* virtual interfaces: lo, docker0, ... */
		pl_topo_nic *nic = &t->nic[t->nnics++];
		snprintf(nic->name, sizeof nic->name, "%s", o->name);
		busid(pci, nic->busid, sizeof nic->busid);
		nic->pcie_bw = pci->attr->pcidev.linkspeed * 1e9;
		locality(topo, pci, &nic->numa, NULL, 0);
	}
}

/* buf: NUL-terminated, len bytes before the NUL; NULL for this machine */
static int topo_open(hwloc_topology_t *topo, const char *buf, size_t len)
{
	if (hwloc_topology_init(topo))
		return -1;
	hwloc_topology_set_io_types_filter(*topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
	hwloc_topology_set_type_filter(*topo, HWLOC_OBJ_PCI_DEVICE, HWLOC_TYPE_FILTER_KEEP_ALL);
	hwloc_topology_set_type_filter(*topo, HWLOC_OBJ_OS_DEVICE, HWLOC_TYPE_FILTER_KEEP_ALL);
	if ((buf && hwloc_topology_set_xmlbuffer(*topo, buf, (int)len + 1)) ||
	    hwloc_topology_load(*topo)) {
		hwloc_topology_destroy(*topo);
		return -1;
	}
	return 0;
}

/* hwloc's XML reader is not hardened against hostile files (a 468-byte file
 * found by fuzzing makes Debian's hwloc 2.9 dereference NULL), so a user's
 * XML is first loaded in a child process: a crash there is an error here. */
static pl_status probe_xml(const char *buf, size_t len, const char *name, pl_err *err)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return pl_err_set(err, PL_EDEVICE, "%s: cannot start a process to read it: %s",
		                  name, strerror(errno));
	if (pid == 0) {
		/* die of what kills it, quietly: no handler of the parent's (a
		 * sanitizer's, a fuzzer's) runs here, and hwloc's own complaints
		 * give way to the parent's message */
		struct sigaction dfl = {.sa_handler = SIG_DFL};
		int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP};
		for (size_t k = 0; k < sizeof sigs / sizeof sigs[0]; k++)
			sigaction(sigs[k], &dfl, NULL);
		int null = open("/dev/null", O_WRONLY);
		if (null >= 0)
			dup2(null, 2);
		hwloc_topology_t topo;
		int bad = topo_open(&topo, buf, len);
		if (!bad)
			hwloc_topology_destroy(topo);
		_exit(bad ? 3 : 0);
	}
	int ws;
	while (waitpid(pid, &ws, 0) < 0)
		if (errno != EINTR)
			return pl_err_set(err, PL_EINVAL, "%s: lost the process reading it", name);
	if (WIFSIGNALED(ws))
		return pl_err_set(err, PL_EINVAL,
		                  "%s: hwloc crashed reading it (signal %d): not a topology "
		                  "(expected the XML that 'lstopo FILE.xml' writes)",
		                  name, WTERMSIG(ws));
	if (!WIFEXITED(ws) || WEXITSTATUS(ws))
		return pl_err_set(err, PL_EINVAL,
		                  "%s: not a topology hwloc can read (expected the XML that "
		                  "'lstopo FILE.xml' writes)",
		                  name);
	return PL_OK;
}

pl_status pl_topo_load(pl_topo *t, const char *xml, pl_err *err)
{
	if (!xml)
		return pl_topo_load_xml(t, NULL, 0, "this machine", err);
	char *buf;
	size_t len;
	pl_status st = pl_read_file(xml, &buf, &len, err);
	if (st)
		return st;
	st = pl_topo_load_xml(t, buf, len, xml, err);
	free(buf);
	return st;
}

pl_status pl_topo_load_xml(pl_topo *t, const char *buf, size_t len, const char *name, pl_err *err)
{
	memset(t, 0, sizeof *t);
	snprintf(t->source, sizeof t->source, "%s", name);
	pl_status st;
	if (buf && len >= INT_MAX)
		return pl_err_set(err, PL_EINVAL, "%s: too large for a topology (%zu bytes)", name,
		                  len);
	char *xml = NULL; /* hwloc reads a NUL-terminated copy */
	if (buf) {
		if (!(xml = pl_malloc(len + 1)))
			return pl_err_set(err, PL_ENOMEM, "out of memory");
		memcpy(xml, buf, len);
		xml[len] = 0;
		if ((st = probe_xml(xml, len, name, err))) {
			free(xml);
			return st;
		}
	}
	hwloc_topology_t topo;
	int bad = topo_open(&topo, xml, len);
	free(xml);
	if (bad) {
		if (buf)
			return pl_err_set(err, PL_EINVAL,
			                  "%s: not a topology hwloc can read (expected the XML "
			                  "that 'lstopo FILE.xml' writes)",
			                  name);
		return pl_err_set(err, PL_EDEVICE, "topology: hwloc could not load this machine");
	}
	t->packages = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
	t->numa_nodes = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
	t->cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
	t->pus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
	for (hwloc_obj_t o = NULL; (o = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, o));)
		t->host_memory += (double)o->attr->numanode.local_memory;
	gpus(topo, t);
	nvlinks(topo, t);
	nics(topo, t);
	hwloc_topology_destroy(topo);
	return PL_OK;
}

/* "0000:34:00.0", "34:00.0", upper case: the canonical lower-case form */
static void canon_busid(const char *in, char *out, size_t n)
{
	char tmp[32];
	size_t k = 0;
	for (; *in && k + 1 < sizeof tmp; in++)
		tmp[k++] = (char)tolower((unsigned char)*in);
	tmp[k] = 0;
	unsigned dom = 0, bus, dev, fn;
	if (sscanf(tmp, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) == 4 ||
	    (dom = 0, sscanf(tmp, "%x:%x.%x", &bus, &dev, &fn) == 3))
		snprintf(out, n, "%04x:%02x:%02x.%x", dom, bus, dev, fn);
	else
		snprintf(out, n, "%s", tmp);
}

int pl_topo_match_cuda(pl_topo *t, const char *const *busids, int n)
{
	int matched = 0;
	for (int i = 0; i < n; i++) {
		char id[32];
		canon_busid(busids[i], id, sizeof id);
		for (int g = 0; g < t->ngpus; g++)
			if (!strcmp(t->gpu[g].busid, id)) {
				t->gpu[g].cuda = i;
				matched++;
			}
	}
	return matched;
}

void pl_topo_cluster(const pl_topo *t, pl_cluster *c, int *guessed)
{
	const char *preset = t->ngpus ? pl_cluster_preset_for_gpu(t->gpu[0].model) : NULL;
	*guessed = !preset;
	pl_err err;
	pl_cluster_preset(c, preset ? preset : "h100x8", &err);
	if (!t->ngpus) {
		snprintf(c->source, sizeof c->source,
		         "planner topology: no GPU on %.200s; preset h100x8", t->source);
		return;
	}
	snprintf(c->device_name, sizeof c->device_name, "%s", t->gpu[0].model);
	c->devices_per_node = t->ngpus;
	c->nodes = 1;
	/* a ring over the node runs at the slowest GPU's link: NCCL reaches
	 * ~87% of the per-direction NVLink bandwidth (25 GB/s a link for
	 * NVLink 2 to 4; a DGX-2's 6 links give the 130 GB/s nccl-tests
	 * measures), ~80% of PCIe */
	int links = t->gpu[0].nvlinks;
	double pcie = t->gpu[0].pcie_bw;
	for (int g = 1; g < t->ngpus; g++) {
		links = t->gpu[g].nvlinks < links ? t->gpu[g].nvlinks : links;
		pcie = t->gpu[g].pcie_bw < pcie ? t->gpu[g].pcie_bw : pcie;
	}
	double bw = links ? 0.87 * 25e9 * links : 0.8 * pcie;
	if (bw > 0)
		c->link[PL_LINK_INTRA].beta = 1 / bw;
	snprintf(c->name, sizeof c->name, "%s-x%d", preset ? preset : "gpu", t->ngpus);
	snprintf(c->source, sizeof c->source,
	         "planner topology (%.150s): %d GPUs, %s; link numbers estimated, "
	         "calibrate to measure",
	         t->source, t->ngpus, links ? "NVLink" : "PCIe");
}

cJSON *pl_topo_to_json(const pl_topo *t)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "source", t->source);
	cJSON_AddNumberToObject(o, "packages", t->packages);
	cJSON_AddNumberToObject(o, "numa_nodes", t->numa_nodes);
	cJSON_AddNumberToObject(o, "cores", t->cores);
	cJSON_AddNumberToObject(o, "pus", t->pus);
	cJSON_AddNumberToObject(o, "host_memory_bytes", t->host_memory);
	cJSON_AddNumberToObject(o, "nvswitches", t->nvswitches);
	cJSON *ga = cJSON_AddArrayToObject(o, "gpus");
	for (int i = 0; i < t->ngpus; i++) {
		const pl_topo_gpu *g = &t->gpu[i];
		cJSON *e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "model", g->model);
		cJSON_AddStringToObject(e, "busid", g->busid);
		if (g->osdev[0])
			cJSON_AddStringToObject(e, "osdev", g->osdev);
		if (g->cuda >= 0)
			cJSON_AddNumberToObject(e, "cuda", g->cuda);
		cJSON_AddNumberToObject(e, "numa", g->numa);
		cJSON_AddStringToObject(e, "cpus", g->cpus);
		cJSON_AddNumberToObject(e, "pcie_bandwidth", g->pcie_bw);
		cJSON_AddNumberToObject(e, "nvlinks", g->nvlinks);
		cJSON_AddNumberToObject(e, "nvlinks_to_switch", g->to_switch);
		cJSON *peers = cJSON_AddArrayToObject(e, "nvlink_peers");
		for (int j = 0; j < t->ngpus; j++)
			if (t->nvlink[i][j]) {
				cJSON *p = cJSON_CreateObject();
				cJSON_AddNumberToObject(p, "gpu", j);
				cJSON_AddNumberToObject(p, "links", t->nvlink[i][j]);
				pl_json_push(peers, p);
			}
		pl_json_push(ga, e);
	}
	cJSON *na = cJSON_AddArrayToObject(o, "nics");
	for (int i = 0; i < t->nnics; i++) {
		cJSON *e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "name", t->nic[i].name);
		cJSON_AddStringToObject(e, "busid", t->nic[i].busid);
		cJSON_AddNumberToObject(e, "numa", t->nic[i].numa);
		cJSON_AddNumberToObject(e, "pcie_bandwidth", t->nic[i].pcie_bw);
		pl_json_push(na, e);
	}
	return o;
}
