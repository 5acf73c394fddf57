/* planner topology: what hwloc sees of a machine (here, or an lstopo XML
 * file from elsewhere) and the cluster description that follows. */
#include <cjson/cJSON.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/checkpoint.h"
#include "planner/commands/cli.h"
#include "topology/discover.h"
#include "graph/alloc.h"

static const char *const help =
    "usage: planner topology [--xml FILE | --preset NAME[:NODES]] [-o cluster.json] [--json]\n"
    "\n"
    "Finds the GPUs of this machine with hwloc (or of the machine an XML file describes,\n"
    "written there by 'lstopo FILE.xml'): NVIDIA PCI devices with their NUMA node, CPU set,\n"
    "PCIe link and NVLinks (counted from hwloc's NVLinkBandwidth distances, to other GPUs\n"
    "and to NVSwitches), and the network cards. Prints a summary, and writes one node of\n"
    "the cluster it describes: the device of the preset for that GPU (h100x8, h200x8,\n"
    "a100x8, a100-80gx8, dgx2-v100) and intra-node bandwidth estimated from the NVLinks (or PCIe), with the\n"
    "discovered topology under \"topology\". The link numbers are estimates: 'planner\n"
    "calibrate' measures them. On a machine without GPUs it says so, and the cluster file\n"
    "is the h100x8 preset. With CUDA built in, GPUs get their CUDA ordinal by bus id.\n"
    "\n"
    "  --xml FILE          read an hwloc XML topology instead of this machine\n"
    "  --preset NAME[:NODES]\n"
    "                      no discovery: write that preset (or cluster file) as a cluster\n"
    "                      file to edit, every field the planner reads spelled out (a\n"
    "                      cluster whose NICs or peak differ from the preset's: change\n"
    "                      links.inter_node, device.peak_flops, ...)\n"
    "  -o, --output FILE   write the cluster file (atomically)\n"
    "  --json              print the cluster file (with the topology) to stdout instead of\n"
    "                      the summary\n"
    "\n"
    "examples:\n"
    "  planner topology\n"
    "  planner topology --xml dgx2.xml -o dgx2.json\n"
    "  planner topology --preset a100-80gx8:48 -o a100-48.json\n"
    "  planner search model.json --cluster dgx2.json -o plan.json\n";

/* "cluster NAME: N node x M DEVICE, intra-node bus bandwidth X GB/s", the
 * summaries' last line, which the caller ends */
static void cluster_line(const pl_cluster *c, FILE *f)
{
	fprintf(f, "cluster %s: %lld node x %lld %s, intra-node bus bandwidth %.3g GB/s", c->name,
	        (long long)c->nodes, (long long)c->devices_per_node, c->device_name,
	        1e-9 / c->link[PL_LINK_INTRA].beta);
}

static void summary(const pl_topo *t, const pl_cluster *c, int guessed, FILE *f)
{
	fprintf(f, "%s: %d package%s, %d NUMA node%s, %d cores, %d PUs, %.4g GiB memory\n",
	        t->source, t->packages, t->packages == 1 ? "" : "s", t->numa_nodes,
	        t->numa_nodes == 1 ? "" : "s", t->cores, t->pus, t->host_memory / 1073741824.0);
	if (!t->ngpus) {
		fprintf(f, "no GPUs found; the cluster file is the h100x8 preset (plan with "
		           "--cluster PRESET or a cluster file for the real machine)\n");
	} else {
		fprintf(f, "%d GPU%s (%s)", t->ngpus, t->ngpus == 1 ? "" : "s", t->gpu[0].model);
		if (t->nvswitches)
			fprintf(f, ", %d NVSwitch%s", t->nvswitches,
			        t->nvswitches == 1 ? "" : "es");
		fprintf(f, "\n  %-4s %-13s %4s  %-16s %9s  %-16s %-7s %s\n", "gpu", "bus id",
		        "numa", "cpus", "PCIe GB/s", "NVLinks (switch)", "osdev", "cuda");
		for (int i = 0; i < t->ngpus; i++) {
			const pl_topo_gpu *g = &t->gpu[i];
			char links[32], cuda[16];
			snprintf(links, sizeof links, "%d (%d)", g->nvlinks, g->to_switch);
			snprintf(cuda, sizeof cuda, g->cuda >= 0 ? "%d" : "-", g->cuda);
			fprintf(f, "  %-4d %-13s %4d  %-16.16s %9.3g  %-16s %-7s %s\n", i, g->busid,
			        g->numa, g->cpus, g->pcie_bw / 1e9, links,
			        g->osdev[0] ? g->osdev : "-", cuda);
		}
		for (int i = 0; i < t->ngpus; i++) {
			int first = 1;
			for (int j = 0; j < t->ngpus; j++)
				if (t->nvlink[i][j]) {
					if (first)
						fprintf(f, "  gpu %d NVLinks to gpu:links", i);
					fprintf(f, " %d:%d", j, t->nvlink[i][j]);
					first = 0;
				}
			if (!first)
				fputc('\n', f);
		}
	}
	for (int i = 0; i < t->nnics; i++)
		fprintf(f, "  nic %-10s %s, numa %d, PCIe %.3g GB/s\n", t->nic[i].name,
		        t->nic[i].busid, t->nic[i].numa, t->nic[i].pcie_bw / 1e9);
	cluster_line(c, f);
	fprintf(f, "%s\n", t->ngpus ? " (estimated)" : " (preset)");
	if (guessed && t->ngpus)
		fprintf(f, "  no preset for this GPU: memory and FLOP/s are the H100's; edit the "
		           "file's \"device\"\n");
}

int pl_cmd_topology(int argc, char **argv)
{
	const char *xml = NULL, *out = NULL, *preset = NULL;
	int json = 0;
	pl_cli_args a;
	pl_cli_args_init(&a, PL_CMD_TOPOLOGY, "topology", help, NULL);
	int ch;
	while ((ch = pl_cli_next(&a, argc, argv)) != -1) {
		switch (ch) {
		case PL_CLI_STOP: return a.rc;
		case 'x': xml = optarg; break;
		case 'P': preset = optarg; break;
		case 'o': out = optarg; break;
		case 'j': json = 1; break;
		}
	}
	if (optind != argc)
		return pl_cli_usage("topology",
		                    "unexpected argument '%s' (an XML file goes "
		                    "after --xml)",
		                    argv[optind]);
	pl_err err;
	if (preset && xml)
		return pl_cli_usage("topology", "--preset and --xml: one or the other (a preset "
		                                "is not discovered)");
	if (preset) {
		pl_cluster c;
		pl_status st = pl_cluster_resolve(&c, preset, &err);
		if (st && !strncmp(err.msg, "--cluster ", 10)) { /* the option this one is */
			char m[sizeof err.msg];
			snprintf(m, sizeof m, "--preset %s", err.msg + 10);
			memcpy(err.msg, m, sizeof m);
		}
		if (!st) {
			FILE *f = json ? stderr : stdout;
			cluster_line(&c, f);
			fprintf(f, ", inter-node %.3g GB/s a device (%s)\n",
			        1e-9 / c.link[PL_LINK_INTER].beta, c.source);
			if (out || json)
				st = pl_cli_write_cluster(&c, "topology", NULL, out, json, &err);
		}
		return st ? pl_cli_fail(st, &err) : 0;
	}
	pl_topo *t = pl_malloc(sizeof *t);
	if (!t)
		return pl_cli_fail(pl_err_set(&err, PL_ENOMEM, "topology: out of memory"), &err);
	pl_status st = pl_topo_load(t, xml, &err);
	if (st) {
		free(t);
		return pl_cli_fail(st, &err);
	}
	if (!xml) {
		char ids[PL_TOPO_MAX_GPUS][16];
		const char *p[PL_TOPO_MAX_GPUS];
		int n = pl_topo_cuda_busids(ids, PL_TOPO_MAX_GPUS);
		for (int i = 0; i < n; i++)
			p[i] = ids[i];
		if (n > 0)
			pl_topo_match_cuda(t, p, n);
	}
	pl_cluster c;
	int guessed;
	pl_topo_cluster(t, &c, &guessed);
	summary(t, &c, guessed, json ? stderr : stdout);
	if (out || json)
		st = pl_cli_write_cluster(&c, "topology", pl_topo_to_json(t), out, json, &err);
	free(t);
	return st ? pl_cli_fail(st, &err) : 0;
}
