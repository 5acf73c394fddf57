/* planner calibrate: measure a backend and write the cluster description the
 * cost model reads (DESIGN 4.2), with the raw measurements beside the fit. */
#include <cjson/cJSON.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "executor/calibrate.h"
#include "planner/checkpoint.h"
#include "planner/cli.h"

static const char *const help =
    "usage: planner calibrate --backend cpu [--ranks N] [--max-bytes BYTES] [-o cluster.json]\n"
    "       planner calibrate [-o cluster.json]   (GPUs with CUDA and NCCL)\n"
    "\n"
    "Measures a backend and fits the cost model to it: the GEMM rate curve (peak and the\n"
    "size at which half of it is reached), memory bandwidth (the Add kernel), the rate of\n"
    "vector kernels (Gelu, Softmax, LayerNorm; forward and backward), the cost of one kernel\n"
    "call, and alpha/beta of all_reduce, all_gather, reduce_scatter and all_to_all over\n"
    "group sizes 2..N (messages of 8 B up to --max-bytes, default 64MiB), each fitted by\n"
    "least squares on relative error. Each point is the median of 5 timing windows. All ranks run "
    "at once, so ranks that share cores or memory are measured sharing\n"
    "them. Writes a planner.cluster/1 file (one node of N devices) with the fit and, under\n"
    "\"calibration\", every measurement; without -o the JSON goes to stdout. A summary and\n"
    "progress go to stderr.\n"
    "\n"
    "  --backend cpu       the cpu backend (threads, OpenBLAS, shared-memory collectives)\n"
    "  --ranks N           ranks to calibrate for (default: the online CPUs)\n"
    "  --max-bytes BYTES   largest collective message (e.g. 256MiB)\n"
    "  -o, --output FILE   write the cluster file (atomically)\n"
    "\n"
    "Without --backend, calibrate measures NCCL and cuBLAS on the GPUs; this version has no\n"
    "cuda backend, so it exits with status 4.\n"
    "\n"
    "example:\n"
    "  planner calibrate --backend cpu --ranks 2 -o cpu2.json\n"
    "  planner search examples/gpt-small.json --cluster cpu2.json -o plan.json\n"
    "  planner run examples/gpt-small.json --strategy plan.json\n";

static void on_progress(void *ud, const char *what)
{
	(void)ud;
	fprintf(stderr, "calibrate: %s\n", what);
}

static void summary(const pl_cluster *c, FILE *f)
{
	fprintf(f, "%s: %lld ranks of %s\n", c->name, (long long)c->devices_per_node,
	        c->device_name);
	fprintf(f,
	        "  GEMM          %.3g GFLOP/s peak per rank, half of it at %.3g MFLOP per call\n",
	        c->peak_flops[PL_DT_FLOAT32] * c->gemm_eff_max / 1e9, c->gemm_half_flops / 1e6);
	fprintf(f, "  memory        %.3g GB/s per rank\n", c->memory_bandwidth * c->bw_eff / 1e9);
	fprintf(f, "  vector        %.3g GFLOP/s per rank\n",
	        c->peak_flops[PL_DT_FLOAT32] * c->vector_eff / 1e9);
	fprintf(f, "  kernel call   %.3g us\n", c->kernel_overhead_s * 1e6);
	for (int k = 0; k < PL_COLL_COUNT; k++) {
		const pl_ab_list *l = &c->coll[k][PL_LINK_INTRA];
		for (int i = 0; i < l->n; i++)
			fprintf(f,
			        "  %-15s %3lld ranks: alpha %8.3g us, bus bandwidth %8.3g GB/s\n",
			        pl_coll_name((pl_coll)k), (long long)l->ranks[i],
			        l->ab[i].alpha * 1e6, 1e-9 / l->ab[i].beta);
	}
}

int pl_cmd_calibrate(int argc, char **argv)
{
	const char *backend = NULL, *out = NULL;
	long long ranks = sysconf(_SC_NPROCESSORS_ONLN);
	double max_bytes = 0;
	static const struct option opts[] = {{"backend", required_argument, 0, 'b'},
	                                     {"ranks", required_argument, 0, 'r'},
	                                     {"max-bytes", required_argument, 0, 'm'},
	                                     {"output", required_argument, 0, 'o'},
	                                     {"from-nccl-tests", no_argument, 0, 'n'},
	                                     {"help", no_argument, 0, 'h'},
	                                     {0, 0, 0, 0}};
	int ch;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
		switch (ch) {
		case 'b': backend = optarg; break;
		case 'r':
			if (pl_cli_parse_ll(optarg, &ranks) || ranks < 1 || ranks > 4096)
				return pl_cli_usage(
				    "calibrate",
				    "--ranks: expected a count from 1 to 4096, got '%s'", optarg);
			break;
		case 'm':
			if (pl_cli_parse_bytes(optarg, &max_bytes) || max_bytes < 8)
				return pl_cli_usage(
				    "calibrate",
				    "--max-bytes: expected a size of at least 8 bytes, "
				    "got '%s'",
				    optarg);
			break;
		case 'o': out = optarg; break;
		case 'n':
			fprintf(stderr,
			        "planner: calibrate: --from-nccl-tests is not in this version\n");
			return 2;
		case 'h': fputs(help, stdout); return 0;
		default:
			return pl_cli_usage("calibrate", "unknown or incomplete option '%s'",
			                    argv[optind - 1]);
		}
	}
	if (optind != argc)
		return pl_cli_usage("calibrate", "unexpected argument '%s'", argv[optind]);
	if (!backend || !strcmp(backend, "cuda")) {
		fprintf(stderr,
		        "planner: calibrate: measuring NCCL and cuBLAS needs the cuda backend, "
		        "which this version does not have; '--backend cpu' calibrates the cpu "
		        "backend\n");
		return 4;
	}
	if (strcmp(backend, "cpu"))
		return pl_cli_usage("calibrate", "--backend: expected cpu or cuda, got '%s'",
		                    backend);
	pl_err err;
	pl_backend *be = NULL;
	pl_status st = pl_backend_cpu(&be, ranks, 0, &err);
	if (st)
		return pl_cli_fail(st, &err);
	pl_cluster c;
	cJSON *raw = NULL, *root = NULL;
	char *text = NULL;
	pl_calib_opts o = {.max_bytes = max_bytes, .progress = on_progress};
	if ((st = pl_calibrate(be, &o, &c, &raw, &err)))
		goto done;
	root = pl_cluster_to_json(&c);
	if (root && cJSON_AddItemToObject(root, "calibration", raw))
		raw = NULL;
	else
		cJSON_Delete(root), root = NULL;
	char *body = root ? cJSON_Print(root) : NULL;
	if (body && (text = malloc(strlen(body) + 2)))
		sprintf(text, "%s\n", body);
	free(body);
	if (!text) {
		st = pl_err_set(&err, PL_ENOMEM, "calibrate: out of memory");
		goto done;
	}
	summary(&c, out ? stdout : stderr);
	if (out)
		st = pl_write_atomic(out, text, &err);
	else
		fputs(text, stdout);
done:
	cJSON_Delete(raw);
	cJSON_Delete(root);
	free(text);
	be->destroy(be);
	return st ? pl_cli_fail(st, &err) : 0;
}
