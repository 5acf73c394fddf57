/* planner calibrate: measure a backend and write the cluster description the
 * cost model reads (docs/formats.md, "Cluster"), with the raw measurements beside the fit. */
#include <cjson/cJSON.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "executor/calibrate.h"
#include "planner/checkpoint.h"
#include "graph/output.h"
#include "planner/commands/cli.h"
#include "topology/calibrate_gpu.h"
#include "topology/nccltests.h"
#include "graph/alloc.h"
#include "graph/json.h"

/* how long a rank waits for another in a multi-process calibration (the
 * largest collectives of the slowest group, and rank 0's GEMM curve) */
#define RDV_TIMEOUT_S 900.0

static const char *const help =
    "usage: planner calibrate --backend cpu [--ranks N] [--max-bytes BYTES] [-o cluster.json]\n"
    "       planner calibrate --from-nccl-tests LOG... [--ranks N] [--nodes N]\n"
    "                         [--collective NAME] [--cluster BASE] [-o cluster.json]\n"
    "       planner calibrate [-o cluster.json]   (GPUs with CUDA and NCCL)\n"
    "       planner calibrate --from-runs RUNS.jsonl [-o cluster.json]\n"
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
    "  --backend cpu       the cpu backend (threads, OpenBLAS, shared-memory collectives);\n"
    "                      started by an MPI launcher (mpirun -np N), one rank per process\n"
    "                      and MPI's collectives, as `planner run` runs them there; rank 0\n"
    "                      writes the cluster (named cpu-mpi-xN)\n"
    "  --ranks N           ranks to calibrate for (default: the online CPUs; under MPI, the\n"
    "                      processes)\n"
    "  --max-bytes BYTES   largest collective message (e.g. 256MiB; cpu default 64MiB)\n"
    "  -o, --output FILE   write the cluster file (atomically)\n"
    "\n"
    "With --from-nccl-tests, reads the tables that nccl-tests printed (all_reduce_perf,\n"
    "all_gather_perf, reduce_scatter_perf, alltoall_perf, sendrecv_perf; the out-of-place\n"
    "columns) and fits, per collective, link class and rank count, up to four alpha/beta\n"
    "lines over ranges of message sizes (NCCL changes protocol with the size). A log names\n"
    "its collective (\"all_reduce_perf\" in its header) or its file name does (allreduce,\n"
    "all_gather, alltoall, ...); its rank count and hosts come from the \"# Using devices\"\n"
    "lines. The device (memory, FLOP/s) comes from --cluster, or from the preset whose GPU\n"
    "the log names (H100, A100, V100). Logs of one collective and rank count are fitted\n"
    "together.\n"
    "\n"
    "  --from-nccl-tests   the arguments are nccl-tests logs\n"
    "  --ranks N           (logs) rank count of logs without \"Using devices\" lines; without\n"
    "                      it, the count busbw/algbw implies\n"
    "  --nodes N           (logs) hosts of logs without \"Using devices\" lines (default 1)\n"
    "  --collective NAME   (logs) the collective of logs that do not name theirs\n"
    "  --cluster BASE      (logs) preset or cluster file for the device and the rest\n"
    "  --from-runs RUNS    fit the cost model to measured training steps: RUNS has one JSON\n"
    "                      object a line, {\"model\": PATH, \"plan\": PATH, \"step_seconds\": S,\n"
    "                      \"peak_memory_bytes\": B (optional), \"name\": ...} (paths relative\n"
    "                      to RUNS; the plan is the strategy checkpoint of the layout that ran,\n"
    "                      e.g. from 'planner search MODEL --tp .. --pp .. -o PLAN'); instead\n"
    "                      of step_seconds, \"log\": PATH (\"warmup\": N) reads the step and\n"
    "                      peak from a Megatron-LM, NeMo, torchtitan or DeepSpeed log as\n"
    "                      'planner check' does ('check --run-line' writes a line). Fits four\n"
    "                      bounded factors (kernels' rate 0.25-4, collectives' rate 0.25-4,\n"
    "                      that of those across nodes again 0.25-4, kept activations' bytes\n"
    "                      1-2; docs/cost-model.md), prints every run\n"
    "                      before and after and the leave-one-out error, and writes the plans'\n"
    "                      cluster with the factors (\"fitted\") to -o\n"
    "\n"
    "Without --backend (or with --backend cuda) and without logs, calibrate measures the GPUs of\n"
    "this process: cuBLAS bf16 GEMMs of 256^3..8192^3 (the efficiency curve) and NCCL\n"
    "all_reduce, all_gather, reduce_scatter, all_to_all and send/recv over the first 2..n GPUs\n"
    "(ncclCommInitAll), 8 B to --max-bytes (default 1GiB) in steps of 2, 5 warm-up calls, CUDA\n"
    "events; one GPU gives the GEMM curve and one-rank NCCL times. No GPU, or a build without\n"
    "CUDA and NCCL: exit 4.\n"
    "\n"
    "Launched as several processes (torchrun --no-python, or srun/mpirun exporting RANK,\n"
    "WORLD_SIZE, MASTER_ADDR and MASTER_PORT per task), each process measures one GPU and\n"
    "the ranks meet over TCP at MASTER_ADDR, port MASTER_PORT + 1 (PLANNER_PORT to choose):\n"
    "groups inside the first node (intra-node link), of one rank per node and of all ranks\n"
    "(inter-node link), each with its own NCCL communicator; rank 0 fits and writes the\n"
    "cluster of N nodes. Every node must run as many ranks.\n"
    "\n"
    "examples:\n"
    "  planner calibrate --backend cpu --ranks 2 -o cpu2.json\n"
    "  mpirun -np 4 planner calibrate --backend cpu -o cpu-mpi4.json\n"
    "  planner calibrate --from-nccl-tests all_reduce.txt all_gather.txt -o h100.json\n"
    "  planner calibrate --from-nccl-tests ib-allreduce.txt --ranks 16 --nodes 2 \\\n"
    "      --cluster a100x8:2 -o a100x2.json\n"
    "  torchrun --nnodes 2 --nproc-per-node 8 --node-rank R --master-addr HOST \\\n"
    "      --master-port 29500 --no-python planner calibrate -o h100x8x2.json\n"
    "  planner search examples/gpt-small.json --cluster cpu2.json -o plan.json\n"
    "  planner run examples/gpt-small.json --strategy plan.json\n";

static void on_progress(void *ud, const char *what)
{
	(void)ud;
	fprintf(stderr, "calibrate: %s\n", what);
}

static void summary_collectives(const pl_cluster *c, FILE *f)
{
	static const char *const link_name[PL_LINK_COUNT] = {"in a node", "across nodes"};
	for (int k = 0; k < PL_COLL_COUNT; k++)
		for (int li = 0; li < PL_LINK_COUNT; li++) {
			const pl_ab_list *l = &c->coll[k][li];
			for (int i = 0; i < l->n; i++) {
				char range[48] = "";
				if (l->max_bytes[i] > 0)
					snprintf(range, sizeof range, " up to %.4g B",
					         l->max_bytes[i]);
				fprintf(f,
				        "  %-15s %3lld ranks %s%s: alpha %8.3g us, bus bandwidth "
				        "%8.3g GB/s\n",
				        pl_coll_name((pl_coll)k), (long long)l->ranks[i],
				        link_name[li], range, l->ab[i].alpha * 1e6,
				        1e-9 / l->ab[i].beta);
			}
		}
}

static void summary(const pl_cluster *c, FILE *f)
{
	fprintf(f, "%s: %lld ranks of %s\n", c->name, (long long)c->devices_per_node,
	        c->device_name);
	/* the GEMM calibrated is the device's fastest type (bf16 on GPUs) */
	pl_dtype g = c->peak_flops[PL_DT_BFLOAT16] > c->peak_flops[PL_DT_FLOAT32] ? PL_DT_BFLOAT16
	                                                                          : PL_DT_FLOAT32;
	fprintf(f, "  GEMM (%s) %.3g GFLOP/s peak per rank, half of it at %.3g MFLOP per call\n",
	        pl_dtype_name(g), c->peak_flops[g] * c->gemm_eff_max / 1e9,
	        c->gemm_half_flops / 1e6);
	fprintf(f, "  memory        %.3g GB/s per rank\n", c->memory_bandwidth * c->bw_eff / 1e9);
	fprintf(f, "  vector        %.3g GFLOP/s per rank\n",
	        c->peak_flops[PL_DT_FLOAT32] * c->vector_eff / 1e9);
	fprintf(f, "  kernel call   %.3g us\n", c->kernel_overhead_s * 1e6);
	const char *sep = "  kernel scale  ";
	for (int k = 0; k < PL_OP_COUNT; k++)
		if (c->kernel_scale[k] > 0 && pl_optype_owns_name((pl_optype)k)) {
			fprintf(f, "%s%s %.3g", sep, pl_optype_name((pl_optype)k),
			        c->kernel_scale[k]);
			sep = ", ";
		}
	if (sep[0] == ',')
		fputc('\n', f);
	summary_collectives(c, f);
}

pl_status pl_cli_write_cluster(const pl_cluster *c, const char *key, cJSON *extra, const char *out,
                               int to_stdout, pl_err *err)
{
	cJSON *root = pl_cluster_to_json(c);
	if (root)
		pl_json_add(root, key, extra);
	else
		cJSON_Delete(extra);
	extra = NULL;
	char *body = root ? cJSON_Print(root) : NULL, *text = NULL;
	if (body && (text = pl_malloc(strlen(body) + 2)))
		sprintf(text, "%s\n", body);
	free(body);
	cJSON_Delete(extra);
	cJSON_Delete(root);
	if (!text)
		return pl_err_set(err, PL_ENOMEM, "out of memory writing the cluster file");
	pl_status st = PL_OK;
	if (out)
		st = pl_output_write(out, text, err);
	if (!st && to_stdout)
		fputs(text, stdout);
	free(text);
	return st;
}

typedef struct log_opts {
	long long ranks, nodes; /* 0: not given */
	const char *coll, *base;
} log_opts;

/* Long on purpose: `calibrate --from-nccl-tests` read top to
 * bottom: the logs, the preset they refine, the fit, the report, the cluster
 * file written atomically. */
static int from_logs(char **files, int nfiles, const log_opts *o, const char *out)
{
	pl_err err;
	pl_status st = PL_OK;
	pl_nccl_log *logs = pl_calloc((size_t)nfiles, sizeof *logs);
	cJSON *raw = NULL;
	if (!logs)
		return pl_cli_fail(pl_err_set(&err, PL_ENOMEM, "calibrate: out of memory"), &err);
	pl_coll forced = PL_COLL_COUNT;
	if (o->coll && (forced = pl_nccl_coll_parse(o->coll)) == PL_COLL_COUNT) {
		free(logs);
		char names[128];
		return pl_cli_usage("calibrate", "--collective: expected %s, got '%s'",
		                    pl_coll_names(names, sizeof names), o->coll);
	}
	const char *device = "";
	for (int i = 0; i < nfiles; i++) {
		char *text = NULL;
		size_t len = 0;
		pl_nccl_log *l = &logs[i];
		if ((st = pl_read_file(files[i], &text, &len, &err)) ||
		    (st = pl_nccl_log_parse(l, text, len, files[i], &err))) {
			free(text);
			goto done;
		}
		free(text);
		if (l->coll == PL_COLL_COUNT)
			l->coll = pl_nccl_coll_in_name(files[i]);
		if (forced != PL_COLL_COUNT)
			l->coll = forced;
		if (l->coll == PL_COLL_COUNT) {
			st = pl_err_set(
			    &err, PL_EINVAL,
			    "%s: the log does not say which collective it measured; name "
			    "it with --collective",
			    files[i]);
			goto done;
		}
		if (!l->ranks) {
			l->ranks = o->ranks ? o->ranks : pl_nccl_log_ranks_from_busbw(l, l->coll);
			if (!l->ranks) {
				st = pl_err_set(
				    &err, PL_EINVAL,
				    "%s: the log has no \"# Using devices\" lines and its "
				    "busbw/algbw does not fix the rank count; give --ranks",
				    files[i]);
				goto done;
			}
			if (!o->ranks)
				fprintf(
				    stderr,
				    "planner: %s: no \"# Using devices\" lines; %lld ranks from "
				    "busbw/algbw (--ranks to say otherwise)\n",
				    files[i], (long long)l->ranks);
		}
		if (!l->hosts) /* not printed, or ranks lines without "on HOST" */
			l->hosts = o->nodes ? o->nodes : 1;
		if (l->ranks < 2 || l->ranks % l->hosts) {
			st = pl_err_set(
			    &err, PL_EINVAL,
			    "%s: %lld ranks on %lld hosts: expected at least 2 ranks, the "
			    "same number on each host",
			    files[i], (long long)l->ranks, (long long)l->hosts);
			goto done;
		}
		if (!*device && *l->device)
			device = l->device;
	}
	pl_cluster c;
	const char *base = o->base ? o->base : pl_cluster_preset_for_gpu(device);
	if (!base) {
		base = "h100x8";
		fprintf(
		    stderr,
		    "planner: calibrate: no preset for the GPU \"%s\"; the device is taken from "
		    "h100x8 (--cluster to choose)\n",
		    device);
	}
	if ((st = pl_cluster_resolve(&c, base, &err)))
		goto done;
	memset(c.coll, 0, sizeof c.coll);
	raw = cJSON_CreateArray();
	const char **names = (const char **)files;
	if ((st = pl_nccl_fit_cluster(&c, logs, names, nfiles, raw, &err)))
		goto done;
	time_t now = time(NULL);
	char day[32];
	strftime(day, sizeof day, "%Y-%m-%d", gmtime(&now));
	snprintf(c.source, sizeof c.source, "planner calibrate --from-nccl-tests, %d log%s, %s",
	         nfiles, nfiles > 1 ? "s" : "", day);
	snprintf(c.name, sizeof c.name, "%.40s-nccl-tests", base);
	FILE *sf = out ? stdout : stderr;
	fprintf(sf, "%s: %lld node%s x %lld devices (%s)\n", c.name, (long long)c.nodes,
	        c.nodes > 1 ? "s" : "", (long long)c.devices_per_node, c.device_name);
	for (int i = 0; i < nfiles; i++) {
		const pl_nccl_log *l = &logs[i];
		double peak = 0;
		for (int k = 0; k < l->n; k++)
			if (l->pt[k].busbw > peak)
				peak = l->pt[k].busbw;
		const pl_nccl_point *big = &l->pt[l->n - 1];
		int link = l->hosts > 1 ? PL_LINK_INTER : PL_LINK_INTRA;
		double t = pl_cluster_coll_time(&c, l->coll, link, l->ranks, big->bytes);
		fprintf(sf,
		        "  %s: %s, %lld ranks on %lld host%s; peak busbw %.4g GB/s; at %.4g B "
		        "measured %.4g s, fit %.4g s\n",
		        files[i], pl_coll_name(l->coll), (long long)l->ranks, (long long)l->hosts,
		        l->hosts > 1 ? "s" : "", peak / 1e9, big->bytes, big->seconds, t);
	}
	summary_collectives(&c, sf);
	cJSON *r = cJSON_CreateObject();
	cJSON_AddStringToObject(r, "from", "nccl-tests");
	pl_json_add(r, "logs", raw);
	raw = NULL;
	st = pl_cli_write_cluster(&c, "calibration", r, out, !out, &err);
done:
	cJSON_Delete(raw);
	for (int i = 0; i < nfiles; i++)
		pl_nccl_log_free(&logs[i]);
	free(logs);
	return st ? pl_cli_fail(st, &err) : 0;
}

int pl_cmd_calibrate(int argc, char **argv)
{
	const char *backend = NULL, *out = NULL;
	long long ranks = 0;
	double max_bytes = 0;
	int from_nccl = 0;
	const char *from_runs = NULL;
	log_opts lo = {0};
	pl_cli_args a;
	pl_cli_args_init(&a, PL_CMD_CALIBRATE, "calibrate", help, NULL);
	int ch;
	while ((ch = pl_cli_next(&a, argc, argv)) != -1) {
		switch (ch) {
		case PL_CLI_STOP: return a.rc;
		case 'b': backend = optarg; break;
		case 'r':
			if (pl_parse_ll(optarg, &ranks) || ranks < 1 || ranks > 4096)
				return pl_cli_usage(
				    "calibrate",
				    "--ranks: expected a count from 1 to 4096, got '%s'", optarg);
			break;
		case 'N':
			if (pl_parse_ll(optarg, &lo.nodes) || lo.nodes < 1 || lo.nodes > 4096)
				return pl_cli_usage(
				    "calibrate",
				    "--nodes: expected a count from 1 to 4096, got '%s'", optarg);
			break;
		case 'm':
			if (pl_parse_bytes(optarg, &max_bytes) || max_bytes < 8)
				return pl_cli_usage(
				    "calibrate",
				    "--max-bytes: expected a size of at least 8 bytes, "
				    "got '%s'",
				    optarg);
			break;
		case 'o': out = optarg; break;
		case 'n': from_nccl = 1; break;
		case 'R': from_runs = optarg; break;
		case 'C': lo.coll = optarg; break;
		case 'c': lo.base = optarg; break;
		}
	}
	if (from_runs) {
		if (backend || from_nccl || ranks || lo.nodes || lo.coll || lo.base ||
		    optind != argc)
			return pl_cli_usage(
			    "calibrate", "%s",
			    "--from-runs FILE takes only -o (the runs' plans record "
			    "their cluster)");
		return pl_cmd_calibrate_runs(from_runs, out);
	}
	if (from_nccl) {
		if (backend)
			return pl_cli_usage("calibrate", "%s",
			                    "--backend and --from-nccl-tests exclude each other");
		if (optind == argc)
			return pl_cli_usage("calibrate", "%s",
			                    "--from-nccl-tests: expected one or more log files");
		lo.ranks = ranks;
		return from_logs(argv + optind, argc - optind, &lo, out);
	}
	if (lo.nodes || lo.coll || lo.base)
		return pl_cli_usage(
		    "calibrate", "%s",
		    "--nodes, --collective and --cluster go with --from-nccl-tests");
	if (optind != argc)
		return pl_cli_usage("calibrate", "unexpected argument '%s'", argv[optind]);
	int ranks_given = ranks > 0;
	if (!ranks)
		ranks = sysconf(_SC_NPROCESSORS_ONLN);
	pl_err err;
	pl_status st;
	pl_cluster c;
	cJSON *raw = NULL;
	pl_calib_opts o = {.max_bytes = max_bytes, .progress = on_progress};
	if (!backend || !strcmp(backend, "cuda")) {
		/* launched as several processes: one GPU each, rank 0 writes */
		pl_rdv rdv;
		int joined;
		if ((st = pl_rdv_from_env(&rdv, RDV_TIMEOUT_S, &joined, &err)))
			return pl_cli_fail(st, &err);
		st = joined ? pl_calibrate_gpu_ranks(&o, &rdv, &c, &raw, &err)
		            : pl_calibrate_gpu(&o, &c, &raw, &err);
		int rank = rdv.rank;
		pl_rdv_close(&rdv);
		if (st)
			return pl_cli_fail(st, &err);
		if (rank != 0)
			return 0;
		summary(&c, out ? stdout : stderr);
		st = pl_cli_write_cluster(&c, "calibration", raw, out, !out, &err);
		return st ? pl_cli_fail(st, &err) : 0;
	}
	if (strcmp(backend, "cpu"))
		return pl_cli_usage("calibrate", "--backend: expected cpu or cuda, got '%s'",
		                    backend);
	/* started by an MPI launcher with several processes: one rank each,
	 * MPI's collectives measured; rank 0 writes */
	int64_t procs = pl_mpi_launched();
	if (procs > 1 && ranks_given && ranks != procs)
		return pl_cli_usage("calibrate",
		                    "--ranks %lld: the MPI launcher started %lld processes, one "
		                    "rank each",
		                    ranks, (long long)procs);
	pl_backend *be = NULL;
	if ((st = procs > 1 ? pl_backend_mpi(&be, 0, &err) : pl_backend_cpu(&be, ranks, 0, &err)))
		return pl_cli_fail(st, &err);
	if (!(st = pl_calibrate(be, &o, &c, &raw, &err)) && pl_backend_self(be) <= 0) {
		summary(&c, out ? stdout : stderr);
		st = pl_cli_write_cluster(&c, "calibration", raw, out, !out, &err);
		raw = NULL; /* written, or freed */
	}
	cJSON_Delete(raw);
	pl_backend_free(be);
	return st ? pl_cli_fail(st, &err) : 0;
}
