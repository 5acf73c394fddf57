/* topology::discover -- hwloc discovery on the recorded DGX-2H topology
 * (tests/fixtures/topology, from hwloc's own test suite): 16 V100 GPUs, 8 per
 * NUMA node, each with 6 NVLinks to the NVSwitch fabric and none direct; the
 * cluster it makes is a 16-GPU node with the V100 device and NVLink
 * bandwidth near the DGX-2 preset's measured figure; CUDA ordinals match by
 * bus id in the forms CUDA and NVML print; broken XML is refused, never
 * crashes; the local machine loads. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#define LSAN_OFF() __lsan_disable()
#define LSAN_ON()  __lsan_enable()
#else
#define LSAN_OFF()
#define LSAN_ON()
#endif

#include "planner/checkpoint.h"
#include "topology/discover.h"

static char *fixture(void)
{
	const char *dir = getenv("PL_FIXTURES");
	assert_non_null(dir);
	char *p = malloc(strlen(dir) + 64);
	sprintf(p, "%s/topology/nvidia-dgx2-16xV100-nvswitch.xml", dir);
	return p;
}

static void dgx2_gpus_numa_and_nvlinks(void **state)
{
	(void)state;
	char *path = fixture();
	pl_topo *t = malloc(sizeof *t);
	pl_err err;
	assert_int_equal(pl_topo_load(t, path, &err), PL_OK);
	assert_int_equal(t->packages, 2);
	assert_int_equal(t->numa_nodes, 2);
	assert_int_equal(t->ngpus, 16);
	int per_numa[2] = {0, 0};
	for (int i = 0; i < t->ngpus; i++) {
		const pl_topo_gpu *g = &t->gpu[i];
		assert_non_null(strstr(g->model, "V100-SXM3-32GB"));
		assert_true(g->numa == 0 || g->numa == 1);
		per_numa[g->numa]++;
		assert_int_equal(g->nvlinks, 6);
		assert_int_equal(g->to_switch, 6);
		for (int j = 0; j < t->ngpus; j++)
			assert_int_equal(t->nvlink[i][j], 0);
		assert_true(g->cpus[0] != 0);
		assert_true(g->pcie_bw > 1e9);
		assert_int_equal(g->cuda, -1);
		assert_int_equal(strncmp(g->osdev, "nvml", 4), 0);
		if (i)
			assert_true(strcmp(t->gpu[i - 1].busid, g->busid) < 0);
	}
	assert_int_equal(per_numa[0], 8);
	assert_int_equal(per_numa[1], 8);
	/* GPUs of one NUMA node share its CPUs; the two nodes' differ */
	for (int i = 1; i < t->ngpus; i++)
		if (t->gpu[i].numa == t->gpu[0].numa)
			assert_string_equal(t->gpu[i].cpus, t->gpu[0].cpus);
		else
			assert_string_not_equal(t->gpu[i].cpus, t->gpu[0].cpus);
	/* the fabric: the switches the GPUs' 96 links land on */
	assert_true(t->nvswitches >= 6 && t->nvswitches <= 12);

	pl_cluster c, v100;
	int guessed;
	pl_topo_cluster(t, &c, &guessed);
	assert_false(guessed);
	assert_int_equal(pl_cluster_devices_total(&c), 16);
	assert_int_equal(pl_cluster_preset(&v100, "dgx2-v100", &err), PL_OK);
	assert_true(c.memory_bytes == v100.memory_bytes);
	assert_true(c.peak_flops[PL_DT_FLOAT16] == v100.peak_flops[PL_DT_FLOAT16]);
	double bw = 1 / c.link[PL_LINK_INTRA].beta, want = 1 / v100.link[PL_LINK_INTRA].beta;
	assert_true(fabs(bw - want) < 0.05 * want);
	free(t);
	free(path);
}

static void cuda_ordinals_by_bus_id(void **state)
{
	(void)state;
	char *path = fixture();
	pl_topo *t = malloc(sizeof *t);
	pl_err err;
	assert_int_equal(pl_topo_load(t, path, &err), PL_OK);
	/* CUDA numbers them in reverse; ids as CUDA (upper case) and NVML
	 * (8-digit domain) print them, and one id of no GPU */
	char ids[17][32];
	const char *p[17];
	for (int i = 0; i < 16; i++) {
		unsigned dom, bus, dev, fn;
		assert_int_equal(sscanf(t->gpu[15 - i].busid, "%x:%x:%x.%x", &dom, &bus, &dev, &fn),
		                 4);
		if (i % 2)
			snprintf(ids[i], sizeof ids[i], "%04X:%02X:%02X.%X", dom, bus, dev, fn);
		else
			snprintf(ids[i], sizeof ids[i], "%08x:%02x:%02x.%x", dom, bus, dev, fn);
		p[i] = ids[i];
	}
	snprintf(ids[16], sizeof ids[16], "0000:01:00.0");
	p[16] = ids[16];
	assert_int_equal(pl_topo_match_cuda(t, p, 17), 16);
	for (int i = 0; i < 16; i++)
		assert_int_equal(t->gpu[i].cuda, 15 - i);
	free(t);
	free(path);
}

static void broken_xml_is_refused(void **state)
{
	(void)state;
	char *path = fixture(), *text;
	size_t len;
	pl_err err;
	assert_int_equal(pl_read_file(path, &text, &len, &err), PL_OK);
	char tmp[] = "/tmp/pl-topo-XXXXXX";
	int fd = mkstemp(tmp);
	assert_true(fd >= 0);
	close(fd);
	pl_topo *t = malloc(sizeof *t);
	assert_int_equal(pl_topo_load(t, "/nonexistent/topo.xml", &err), PL_EIO); /* exit 2 */
	assert_non_null(strstr(err.msg, "/nonexistent/topo.xml"));
	int refused = 0;
	for (int k = 0; k < 40; k++) {
		FILE *f = fopen(tmp, "wb");
		size_t n = (size_t)k * len / 40;
		fwrite(text, 1, n, f);
		if (k % 3 == 1)
			fputs("<object type=\"PCIDev\" pci_busid=\"zz\"", f);
		fclose(f);
		pl_status st = pl_topo_load(t, tmp, &err);
		assert_true(st == PL_OK || st == PL_EINVAL);
		if (st) {
			refused++;
			assert_non_null(strstr(err.msg, tmp));
		}
	}
	assert_true(refused > 30);
	unlink(tmp);
	free(t);
	free(text);
	free(path);
}

static void local_machine_loads(void **state)
{
	(void)state;
	pl_topo *t = malloc(sizeof *t);
	pl_err err;
	/* hwloc's pci plugin (libpciaccess) leaks ~1 KB per load of a live
	 * machine; it is unloaded before LeakSanitizer could name it */
	LSAN_OFF();
	pl_status st = pl_topo_load(t, NULL, &err);
	LSAN_ON();
	assert_int_equal(st, PL_OK);
	assert_true(t->pus >= 1 && t->cores >= 1 && t->cores <= t->pus);
	pl_cluster c;
	int guessed;
	pl_topo_cluster(t, &c, &guessed);
	if (t->ngpus == 0) { /* falls back to the default preset */
		assert_true(guessed);
		assert_int_equal(pl_cluster_devices_total(&c), 8);
	} else {
		assert_int_equal(pl_cluster_devices_total(&c), t->ngpus);
	}
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(dgx2_gpus_numa_and_nvlinks),
	    cmocka_unit_test(cuda_ordinals_by_bus_id),
	    cmocka_unit_test(broken_xml_is_refused),
	    cmocka_unit_test(local_machine_loads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
