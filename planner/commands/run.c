/* planner run: a plan trained on CPU ranks (threads, MPI or torchrun processes)
 * or GPUs, its measured step beside the prediction. */
#include "planner/commands/commands.h"

static const char *const run_help =
    "usage: planner run MODEL --strategy CKPT [--backend cpu|cuda] [--steps N] [--seed S]\n"
    "                  [--optimizer adam|sgd] [--lr RATE] [--devices N | --cluster FILE|PRESET]\n"
    "                  [--json] [--profile] [--timeout SECONDS]\n"
    "                  [--weights MODEL.onnx] [--batch-file [NAME=]FILE]...\n"
    "\n"
    "Runs N training steps (default 3) of MODEL under the plan in CKPT on as many ranks as\n"
    "the plan has devices: parameters and a fixed synthetic batch are drawn from the seed\n"
    "(default 1), so every plan of a model starts from the same numbers and an exact plan\n"
    "gives the single-device losses; or they are given, to compare the first loss with a\n"
    "framework's on the same numbers:\n"
    "  --weights MODEL.onnx  the params (and constants without values) start from the\n"
    "                        initializers of this ONNX file, by name (the file MODEL was\n"
    "                        imported from, exported with its weights); a param it does\n"
    "                        not hold, or holds with another shape, exits 2\n"
    "  --batch-file [NAME=]FILE  input NAME (the appended loss's is 'labels') holds the\n"
    "                        values of FILE at every step: a .npy file (numpy.save; of\n"
    "                        the input's shape, the whole batch; a float descr for a\n"
    "                        float input, an integer one for integer inputs) or raw\n"
    "                        little-endian float32 (int64 or int32 for integer inputs);\n"
    "                        NAME may be left out when the model has one input;\n"
    "                        repeatable; inputs not given are drawn\n"
    "Prints the loss and the wall time of each step, then\n"
    "the measured step time (mean and median of steps 2..N) against the cost model's\n"
    "prediction for the cluster (the checkpoint's unless --devices/--cluster is given).\n"
    "Backends (both fp32):\n"
    "  cpu   one thread per rank, OpenBLAS, shared-memory collectives; started by an MPI\n"
    "        launcher with several processes (mpirun -np N, srun), one rank per process and\n"
    "        MPI's collectives, so a run spans hosts (N must be the plan's device count;\n"
    "        rank 0 prints); under torchrun the same, the processes making their MPI world\n"
    "        themselves (rank 0 starts Open MPI's ompi-server, its address handed over the\n"
    "        store at MASTER_PORT + 1)\n"
    "  cuda  one GPU per rank (rank r on CUDA device r, so the plan needs at most as many\n"
    "        devices as this machine has GPUs), cuBLAS, CUDA kernels, NCCL collectives;\n"
    "        MoEDispatch/MoECombine run on the host; under an MPI launcher one rank per\n"
    "        process, each on the GPU of its place among the job's processes on its node,\n"
    "        NCCL's unique ids carried by MPI; under torchrun (--nproc-per-node N) one rank\n"
    "        per process on GPU LOCAL_RANK, the ids carried by a store rank 0 serves at\n"
    "        MASTER_PORT + 1 (PLANNER_PORT to choose)\n"
    "Whole-job plans run as planned: pipeline stages with 1F1B or interleaved 1F1B (rank\n"
    "R is rank R mod M of stage R div M, M = devices / stages), micro-batches, ZeRO 0-3,\n"
    "full, selective or selective-op recompute.\n"
    "--json prints one JSON object per step and a summary object. --profile adds, per op,\n"
    "the time rank 0 spent in compute and in communication (mean of steps 2..N) beside the\n"
    "cost model's per-op prediction (on cuda, compute counts the time to queue the kernels),\n"
    "and rank 0's memory by category: the most bytes live at once, as a framework's\n"
    "allocator counts its tensors, the bytes allocated, and the plan's prediction.\n"
    "Exit status 4 when a rank fails (the message names the rank; under MPI every process\n"
    "stops, MPI_Abort) or when the cuda backend has no GPU for a rank; 2 on every process\n"
    "when the plan does not match the model or the number of processes, or when the\n"
    "processes were started with different arguments (compared before the first step:\n"
    "the model's and the plan's contents, every option).\n"
    "--timeout SECONDS (default 60): a collective that waits longer than this for the\n"
    "rest of its group ends the run with exit 4, naming the ranks that do not answer\n"
    "(stopped, stuck outside a collective, dead); a rank process stopped (SIGSTOP) this\n"
    "long is killed and named; a rank that dies is named at once.\n"
    "Example: planner search gpt.json --devices 4 -o plan.json &&\n"
    "         mpirun -np 4 planner run gpt.json --strategy plan.json\n"
    "         torchrun --no-python --nproc-per-node 4 planner run gpt.json \\\n"
    "             --strategy plan.json [--backend cuda]\n" PL_HELP_ONNX_MODEL PL_HELP_PRICING;

/* run --profile: per op, measured (rank 0, mean of the profiled steps)
 * against predicted compute and communication */

static pl_status print_profile(const pl_graph *g, const pl_cluster *cl, const pl_run_plan *run,
                               const double *prof, double steps, int json, pl_err *err)
{
	pl_problem *p = NULL;
	int64_t **splits = run->splits, m = run->job.micro_batches;
	pl_job job = {.micro_batches = m,
	              .stages = 1,
	              .zero = run->job.zero,
	              .recompute = (uint8_t *)run->job.recompute};
	pl_cluster mesh = *cl; /* per op, as one stage's mesh prices it */
	if (run->job.stages > 1 && pl_stage_mesh(cl, run->devices / run->job.stages, &mesh))
		return pl_err_set(err, PL_EINVAL, "run: the pipeline stages do not tile the nodes");
	pl_status st =
	    run->g ? pl_problem_new_job(&p, g, &mesh, &job, err) : pl_problem_new(&p, g, cl, err);
	if (st)
		return st;
	pl_nodecost *per = pl_calloc((size_t)g->nops + 1, sizeof *per);
	if (!per) {
		pl_problem_free(p);
		return pl_err_set(err, PL_ENOMEM, "run: out of memory");
	}
	pl_plancost pc;
	pl_cost_plan(p, splits, &pc, per);
	for (int o = 0; o < g->nops; o++) { /* per op, the step's m micro-batches */
		per[o].compute_s *= (double)m;
		per[o].comm_s *= (double)m;
	}
	if (!json)
		printf("%-28s %-20s %12s %12s %12s %12s\n", "op", "type", "compute ms", "predicted",
		       "comm ms", "predicted");
	for (int o = 0; o < g->nops; o++) {
		double mc = prof[o] / steps, mm = prof[g->nops + o] / steps;
		if (json) {
			cJSON *l = cJSON_CreateObject();
			cJSON_AddStringToObject(l, "op", g->ops[o].name);
			cJSON_AddStringToObject(l, "type", pl_optype_name(g->ops[o].type));
			cJSON_AddNumberToObject(l, "compute_seconds", mc);
			cJSON_AddNumberToObject(l, "predicted_compute_seconds", per[o].compute_s);
			cJSON_AddNumberToObject(l, "communication_seconds", mm);
			cJSON_AddNumberToObject(l, "predicted_communication_seconds",
			                        per[o].comm_s);
			if ((st = pl_cli_json_line(l, err)))
				break;
		} else
			printf("%-28s %-20s %12.4f %12.4f %12.4f %12.4f\n", g->ops[o].name,
			       pl_optype_name(g->ops[o].type), mc * 1e3, per[o].compute_s * 1e3,
			       mm * 1e3, per[o].comm_s * 1e3);
	}
	free(per);
	pl_problem_free(p);
	return st;
}

static int cmp_seconds(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Under torchrun (its RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and
 * MASTER_PORT): the processes meet over TCP (topology/rendezvous.h, at
 * MASTER_PORT + 1 or PLANNER_PORT) and rank 0 serves a store
 * (topology/store.h), open for the whole run: a rank that loses rank 0, or
 * rank 0 that loses a rank, ends with exit 4. */
static pl_status torchrun_store(pl_rdv *rdv, pl_store **store, pl_err *err)
{
	int joined;
	pl_status st = pl_rdv_from_env(rdv, 120, &joined, err);
	if (!st && !joined)
		st = pl_err_set(err, PL_EINVAL, "run: torchrun's WORLD_SIZE says one process");
	if (!st)
		st = pl_store_open(store, rdv, err);
	if (st)
		pl_err_prefix(err, "run (rank %s of torchrun's)",
		              getenv("RANK") ? getenv("RANK") : "?");
	return st;
}

/* The cuda backend under torchrun: one rank on GPU LOCAL_RANK, NCCL's
 * unique ids carried by the store. */
static pl_status backend_cuda_torchrun(pl_rdv *rdv, pl_store **store, double timeout_s,
                                       pl_backend **be, pl_err *err)
{
	pl_status st = torchrun_store(rdv, store, err);
	if (st)
		return st;
	pl_procs pr;
	pl_store_procs(*store, rdv->local_rank, &pr);
	return pl_backend_cuda_procs(be, &pr, timeout_s, err);
}

/* The cpu backend under torchrun: MPI's collectives, as under mpirun, in a
 * world the processes make themselves (pl_backend_mpi_join). Rank 0 starts
 * Open MPI's name server (*server: its process) and hands its URI to the
 * others through the store. */
static pl_status backend_cpu_torchrun(pl_rdv *rdv, pl_store **store, long *server, double timeout_s,
                                      pl_backend **be, pl_err *err)
{
	char uri[1024] = "";
	pl_status st = torchrun_store(rdv, store, err);
	if (st)
		return st;
	if (rdv->rank == 0) { /* an empty URI tells the others it failed */
		st = pl_mpi_name_server(uri, sizeof uri, server, err);
		pl_err e2;
		pl_status st2 = pl_store_set(*store, "ompi-server", uri, sizeof uri,
		                             (int)(rdv->world - 1), st ? &e2 : err);
		st = st ? st : st2;
	} else if (!(st = pl_store_get(*store, "ompi-server", uri, sizeof uri, err)) && !uri[0]) {
		st = pl_err_set(err, PL_EDEVICE,
		                "rank 0 could not start Open MPI's name server (its message says "
		                "why)");
	}
	if (!st)
		pl_store_guard(*store);
	if (!st && setenv("OMPI_MCA_pmix_server_uri", uri, 1))
		st = pl_err_set(err, PL_EDEVICE, "run: cannot set OMPI_MCA_pmix_server_uri");
	if (!st)
		st = pl_backend_mpi_join(be,
		                         &(pl_mpi_join){.rank = rdv->rank,
		                                        .size = rdv->world,
		                                        .timeout_s = 120,
		                                        .collective_timeout_s = timeout_s},
		                         err);
	if (st)
		pl_err_prefix(err, "run (rank %lld of torchrun's %lld)", (long long)rdv->rank,
		              (long long)rdv->world);
	return st;
}

/* 48 bits of FNV-1a over n bytes: exact as a double */
static double fingerprint(const void *p, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ ((const unsigned char *)p)[i]) * 1099511628211ull;
	return (double)(h >> 16);
}

/* The job's processes compare their arguments before the first step (the
 * model's and the plan's contents for their paths, every other argument as
 * written): a process started with another --steps, --seed or plan would
 * hang the job at its end or train silently wrong. PL_EINVAL naming the
 * argument that differs; every process reaches the same answer. */
static pl_status same_arguments(pl_backend *be, int argc, char **argv, const char *model,
                                const pl_graph *g, const char *strategy, const char *plan_text,
                                pl_err *err)
{
	enum { MAX_ARGS = 64 };
	double v[MAX_ARGS + 1] = {(double)argc};
	for (int i = 1; i < argc && i <= MAX_ARGS; i++)
		v[i] = argv[i] == model      ? fingerprint(g->sha256, sizeof g->sha256)
		       : argv[i] == strategy ? fingerprint(plan_text, strlen(plan_text))
		                             : fingerprint(argv[i], strlen(argv[i]));
	int at;
	int64_t who, how_many;
	pl_backend_agree(be, v, MAX_ARGS + 1, &at, &who, &how_many);
	if (at < 0)
		return PL_OK;
	char rank[64];
	if (who >= 0)
		snprintf(rank, sizeof rank, "rank %lld", (long long)who);
	else
		snprintf(rank, sizeof rank, "%lld ranks", (long long)how_many);
	if (at == 0)
		return pl_err_set(err, PL_EINVAL,
		                  "run: %s %s started with another number of arguments than rank 0 "
		                  "(%d here): start every process with the same arguments",
		                  rank, who >= 0 ? "was" : "were", argc - 1);
	/* the option the argument belongs to, when it is a value */
	const char *opt =
	    at > 1 && at < argc && argv[at - 1][0] == '-' && argv[at][0] != '-' ? argv[at - 1] : "";
	return pl_err_set(
	    err, PL_EINVAL,
	    "run: %s %s argument %d different from rank 0's (here '%s%s%s'%s): start every "
	    "process with the same model, plan and options",
	    rank, who >= 0 ? "has" : "have", at, opt, *opt ? " " : "", at < argc ? argv[at] : "",
	    at < argc && (argv[at] == model || argv[at] == strategy) ? ", by content" : "");
}

/* tests: PL_STALL_RANK=R (or R:K) makes rank R stop doing anything before
 * its first (K-th) step, a rank stuck outside the collectives, so that the
 * others' timeout is seen to name it: before step 1 they wait to make a
 * communicator, later in a collective */
static void stall_if_asked(const pl_backend *be, long long step)
{
	const char *v = getenv("PL_STALL_RANK");
	long long r, k = 1;
	if (v && sscanf(v, "%lld:%lld", &r, &k) >= 1 && r == pl_backend_self(be) && k == step)
		for (;;)
			pause();
}

/* Standard output to /dev/null, below the stream (which may be the escaping
 * one of pl_output_escape_controls): 0, or -1. */
static int quiet_stdout(void)
{
	fflush(stdout);
	int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	int bad = fd < 0 || dup2(fd, STDOUT_FILENO) < 0;
	if (fd >= 0)
		close(fd);
	return bad ? -1 : 0;
}

/* run --weights, --batch-file: which params and inputs start given, which
 * drawn from the seed */
static void print_start_values(const pl_graph *g, const pl_start_values *sv, const char *weights,
                               long long seed)
{
	int params = 0, drawn = 0, consts = 0;
	for (int t = 0; t < g->ntensors; t++)
		params += g->tensors[t].role == PL_ROLE_PARAM;
	for (int k = 0; k < sv->nweights; k++) { /* --weights' come first */
		int t = pl_graph_find_tensor(g, sv->v[k].name);
		consts += t >= 0 && g->tensors[t].role == PL_ROLE_CONST;
	}
	if (weights)
		printf("weights: %d of %d params", sv->nweights - consts, params);
	if (weights && consts)
		printf(" and %d const%s without values", consts, consts == 1 ? "" : "s");
	if (weights)
		printf(" from %s\n", weights);
	printf("inputs:");
	for (int t = 0; t < g->ntensors; t++) {
		const pl_tensor *pt = &g->tensors[t];
		int k = 0;
		if (pt->role != PL_ROLE_INPUT || pt->producer >= 0)
			continue;
		while (k < sv->n && strcmp(sv->v[k].name, pt->name))
			k++;
		printf(" %s (%s)", pt->name, k < sv->n ? "given" : "drawn");
		drawn += k == sv->n;
	}
	if (drawn)
		printf("; drawn from seed %lld", seed);
	printf("\n");
}

/* the most --batch-file */
#define MAX_BATCH_FILES 16

/* run's options as given */
typedef struct run_args {
	pl_cli_common co;
	const char *strategy, *backend;
	long long steps, seed;
	double lr, timeout_s;
	int json, profile;
	pl_optimizer opt;
	const char *weights, *batch_files[MAX_BATCH_FILES];
	int nbatch_files;
} run_args;

/* --timeout, --lr: a positive number; nonzero when arg is not one (or is
 * above most) */
static int positive(const char *arg, double most, double *v)
{
	char *end;
	errno = 0;
	*v = strtod(arg, &end);
	return errno || *end || end == arg || !(*v > 0) || !(*v <= most);
}

/* One of run's own options: 0 when taken, or an exit status */
static int run_option(int ch, const char *arg, run_args *r)
{
	switch (ch) {
	case 'P': r->profile = 1; break;
	case OPT_WEIGHTS: r->weights = arg; break;
	case OPT_BATCH_FILE:
		if (r->nbatch_files == MAX_BATCH_FILES)
			return pl_cli_usage("run", "--batch-file: at most %d", MAX_BATCH_FILES);
		r->batch_files[r->nbatch_files++] = arg;
		break;
	case 'T':
		if (positive(arg, 1e6, &r->timeout_s))
			return pl_cli_usage(
			    "run", "--timeout: expected seconds from 0 to 1e6, got '%s'", arg);
		break;
	case 's': r->strategy = arg; break;
	case 'b': r->backend = arg; break;
	case 'n':
		if (pl_parse_ll(arg, &r->steps) || r->steps < 1 || r->steps > 1000000)
			return pl_cli_usage(
			    "run", "--steps: expected a count from 1 to 1000000, got '%s'", arg);
		break;
	case 'S':
		if (pl_parse_ll(arg, &r->seed) || r->seed < 0)
			return pl_cli_usage(
			    "run", "--seed: expected a non-negative integer, got '%s'", arg);
		break;
	case 'O':
		if (!strcmp(arg, "adam"))
			r->opt = PL_OPT_ADAM;
		else if (!strcmp(arg, "sgd"))
			r->opt = PL_OPT_SGD;
		else
			return pl_cli_usage("run", "--optimizer: expected adam or sgd, got '%s'",
			                    arg);
		break;
	case 'l':
		if (positive(arg, HUGE_VAL, &r->lr) || !isfinite(r->lr))
			return pl_cli_usage("run", "--lr: expected a positive number, got '%s'",
			                    arg);
		break;
	case 'j': r->json = 1; break;
	}
	return 0;
}

/* run's options read into r and checked: -1 when the run goes on, else the
 * exit status (--help, a bad option) */
static int run_parse(int argc, char **argv, run_args *r)
{
	*r = (run_args){
	    .backend = "cpu", .steps = 3, .seed = 1, .timeout_s = 60, .opt = PL_OPT_ADAM};
	pl_cli_args a;
	pl_cli_args_init(&a, PL_CMD_RUN, "run", run_help, &r->co);
	int ch, rc;
	while ((ch = pl_cli_next(&a, argc, argv)) != -1) {
		if (ch == PL_CLI_STOP)
			return a.rc;
		if ((rc = run_option(ch, optarg, r)))
			return rc;
	}
	if (optind != argc - 1)
		return pl_cli_usage("run", "expected one MODEL file%s", "");
	if (!r->strategy)
		return pl_cli_usage("run", "--strategy CKPT is required%s", "");
	if (strcmp(r->backend, "cpu") && strcmp(r->backend, "cuda"))
		return pl_cli_usage("run", "--backend: expected cpu or cuda, got '%s'", r->backend);
	return -1;
}

/* A run: what it reads, what it starts, what it measures (run_free) */
typedef struct run_ctx {
	run_args a;
	pl_graph *g;
	const pl_graph *rg; /* the graph the ranks run (the plan's, g's by default) */
	char *text;         /* the strategy file's */
	cJSON *ck;
	pl_run_plan run;
	pl_cli_cost_result cr;
	pl_plancost pc; /* the prediction the measurement is compared with */
	pl_cluster cl;  /* its cluster */
	int64_t D;
	int builtin_cpu; /* predicted for the built-in cpu preset */
	pl_backend *be;
	pl_exec *ex;
	pl_rdv rdv; /* under torchrun: the processes met */
	pl_store *store;
	long server;        /* under torchrun with cpu: Open MPI's name server, on rank 0 */
	pl_start_values sv; /* --weights, --batch-file: read before any collective */
	double *times, *prof;
	long long n; /* the steps measured */
} run_ctx;

/* The start values, the plan and its price, the prediction compared with */
static pl_status run_load(run_ctx *c, pl_err *err)
{
	const run_args *a = &c->a;
	pl_status st = PL_OK;
	if (a->weights && (st = pl_values_weights(&c->sv, a->weights, c->g, err)))
		return st;
	for (int k = 0; k < a->nbatch_files && !st; k++)
		st = pl_values_batch(&c->sv, a->batch_files[k], c->g, err);
	size_t len = 0;
	if (st || (st = pl_read_file(a->strategy, &c->text, &len, err)) ||
	    (st = pl_json_parse(c->text, len, a->strategy, &c->ck, err)) ||
	    (st = pl_cli_cost_one(c->g, c->ck, a->strategy, &a->co, 0, &c->cr, &c->cl, &c->run,
	                          err)))
		return st;
	c->rg = pl_run_plan_graph(&c->run, c->g);
	c->pc = c->cr.pc;
	c->D = pl_cluster_devices_total(&c->cl);
	/* time compared with like: on the cpu backend without --cluster or
	 * --devices, the prediction is for CPU ranks (the built-in cpu preset,
	 * D ranks in one node), not for the GPUs the plan was made for */
	c->builtin_cpu = !a->co.cluster && !a->co.devices && strcmp(a->backend, "cuda");
	if (c->builtin_cpu && c->D <= PL_MAX_DEVICES) {
		pl_cluster cpu;
		double bubble;
		if ((st = pl_cluster_preset(&cpu, "cpu", err)))
			return st;
		cpu.bn_local = c->cl.bn_local; /* the plan's batch norm, run as priced */
		cpu.devices_per_node = c->D;
		cpu.nodes = 1;
		snprintf(cpu.name, sizeof cpu.name, "cpu-x%lld", (long long)c->D);
		if ((st = pl_plan_price(c->g, c->ck, a->strategy, &cpu, &c->pc, &bubble, NULL, NULL,
		                        err)))
			return st;
		c->cl = cpu;
	}
	return PL_OK;
}

/* The backend's ranks (one process, or one each as an MPI launcher or
 * torchrun started them) and the executor on them */
static pl_status run_start(run_ctx *c, int argc, char **argv, pl_err *err)
{
	const run_args *a = &c->a;
	double timeout_s = a->timeout_s;
	int64_t D = c->D;
	pl_status st;
	/* started by an MPI launcher (or, with cuda, torchrun) with several
	 * processes: one rank each */
	int cuda = !strcmp(a->backend, "cuda");
	int64_t procs = pl_mpi_launched(), torch = pl_torchrun_launched();
	if (torch > 1)
		procs = torch;
	if (procs > 1 && procs != D)
		return pl_err_set(err, PL_EINVAL,
		                  "run: %s is a plan for %lld devices, and %lld processes were "
		                  "started: start one per device",
		                  a->strategy, (long long)D, (long long)procs);
	if (procs > 1) { /* a rank that is killed or crashes ends the job with exit 4 */
		int guard = pl_rank_guard(timeout_s);
		if (guard >= 0)
			_exit(guard); /* the guard: the rank ran in its child */
	}
	pl_backend **be = &c->be;
	if ((st = torch > 1 ? (cuda ? backend_cuda_torchrun(&c->rdv, &c->store, timeout_s, be, err)
	                            : backend_cpu_torchrun(&c->rdv, &c->store, &c->server,
	                                                   timeout_s, be, err))
	          : procs > 1 ? (cuda ? pl_backend_cuda_mpi(be, timeout_s, err)
	                              : pl_backend_mpi(be, timeout_s, err))
	          : cuda      ? pl_backend_cuda(be, D, timeout_s, err)
	                      : pl_backend_cpu(be, D, timeout_s, err)))
		return st;
	if (pl_backend_ranks(*be) != D) /* the launcher's variables and MPI disagree */
		return pl_err_set(err, PL_EINVAL,
		                  "run: MPI has %lld processes, the plan %lld devices",
		                  (long long)pl_backend_ranks(*be), (long long)D);
	if (pl_backend_self(*be) > 0 && quiet_stdout()) /* rank 0 reports */
		return pl_err_set(err, PL_EDEVICE, "run: cannot quiet rank %lld's output",
		                  (long long)pl_backend_self(*be));
	if ((st = same_arguments(*be, argc, argv, argv[optind], c->g, a->strategy, c->text, err)))
		return st;
	pl_exec_opts eo = {.seed = (uint64_t)a->seed,
	                   .optimizer = a->opt,
	                   .lr = a->lr,
	                   .fail_rank = -1,
	                   .fail_op = -1,
	                   .profile = a->profile,
	                   .values = c->sv.v,
	                   .nvalues = c->sv.n,
	                   .local_batchnorm = c->cl.bn_local};
	/* tests: PL_FAIL_RANK=R makes rank R fail at its first op's forward */
	const char *fr = getenv("PL_FAIL_RANK");
	long long frank;
	if (fr && !pl_parse_ll(fr, &frank) && frank >= 0) {
		eo.fail_rank = frank;
		eo.fail_op = 0;
	}
	if ((st = pl_exec_new_job(&c->ex, c->rg, D, c->run.splits, &c->run.job, *be, &eo, err)))
		pl_err_prefix(err, "%s: %s", argv[optind], a->strategy);
	return st;
}

/* One step's loss: an error where it is not finite (k: the step from 0) */
static pl_status check_loss(const run_args *a, long long k, double loss, pl_err *err)
{
	if (!isfinite(loss) && k == 0) /* before any update: not the learning rate */
		return pl_err_set(err, PL_EINVAL,
		                  "run: step 1: the loss is %g before any update: the model's "
		                  "forward computes it from the synthetic data and parameters "
		                  "(an op given values outside its domain)",
		                  loss);
	if (!isfinite(loss)) /* a diverged run is not a result */
		return pl_err_set(err, PL_EINVAL,
		                  "run: step %lld: the loss is %g; training diverged (learning "
		                  "rate %g: try a smaller --lr)",
		                  k + 1, loss,
		                  a->lr > 0 ? a->lr : (a->opt == PL_OPT_ADAM ? 1e-3 : 1e-2));
	return PL_OK;
}

/* The measured step (the mean, and the median and least: robust to a noisy
 * machine) against the prediction */
static pl_status print_measured(run_ctx *c, long long first, pl_err *err)
{
	long long n = c->n, steps = c->a.steps;
	double *times = c->times, measured = 0;
	for (long long k = first; k < steps; k++)
		measured += times[k] / (double)n;
	qsort(times + first, (size_t)n, sizeof *times, cmp_seconds);
	double median =
	    n % 2 ? times[first + n / 2] : 0.5 * (times[first + n / 2 - 1] + times[first + n / 2]);
	if (c->a.json) {
		cJSON *l = cJSON_CreateObject();
		cJSON_AddNumberToObject(l, "measured_step_seconds", measured);
		cJSON_AddNumberToObject(l, "median_step_seconds", median);
		cJSON_AddNumberToObject(l, "min_step_seconds", times[first]);
		cJSON_AddNumberToObject(l, "predicted_step_seconds", c->pc.step_s);
		cJSON_AddStringToObject(l, "cluster", c->cl.name);
		cJSON_AddNumberToObject(l, "ranks", (double)c->D);
		cJSON_AddStringToObject(l, "backend", pl_backend_name(c->be));
		return pl_cli_json_line(l, err);
	}
	printf("measured step %.6f s (mean of steps %s; median %.6f s); predicted %.6f s on "
	       "%s%s\n",
	       measured, steps > 1 ? "2..N" : "1", median, c->pc.step_s, c->cl.name,
	       c->builtin_cpu ? " (the built-in cpu preset, a 2-core VM's calibration: "
	                        "'planner calibrate --backend cpu --ranks N' and --cluster for "
	                        "this machine's)"
	                      : "");
	return PL_OK;
}

/* The steps, each one's loss and time printed, then the measured step */
static pl_status run_steps(run_ctx *c, const char *model, pl_err *err)
{
	const run_args *a = &c->a;
	const pl_graph *g = c->g;
	pl_status st;
	if (!a->json)
		printf("model %s, plan %s: %lld ranks on the %s backend, %s\n", g->name,
		       a->strategy, (long long)c->D, pl_backend_name(c->be),
		       a->opt == PL_OPT_ADAM ? "Adam" : "SGD");
	if (!a->json && (a->weights || a->nbatch_files)) /* what starts given, what drawn */
		print_start_values(g, &c->sv, a->weights, a->seed);
	if (pl_backend_self(c->be) <= 0)
		pl_cli_import_notes(g, model, &a->co.onnx);
	/* steps 2..N are measured (the first one warms up), or step 1 if alone */
	long long steps = a->steps, first = steps > 1;
	c->n = steps - first;
	if (!(c->times = pl_malloc(sizeof(double) * (size_t)steps)) ||
	    !(c->prof = pl_calloc(4 * (size_t)g->nops + 1, sizeof *c->prof)))
		return pl_err_set(err, PL_ENOMEM, "run: out of memory");
	double *pm = c->prof + 2 * g->nops;
	for (long long k = 0; k < steps; k++) {
		stall_if_asked(c->be, k + 1);
		double loss, t0 = pl_now();
		if ((st = pl_exec_step(c->ex, 1, &loss, err)) || (st = check_loss(a, k, loss, err)))
			return st;
		c->times[k] = pl_now() - t0;
		if (a->profile && k >= first) {
			pl_exec_profile(c->ex, pm, pm + g->nops);
			for (int o = 0; o < 2 * g->nops; o++)
				c->prof[o] += pm[o];
		}
		if (a->json) {
			cJSON *l = cJSON_CreateObject();
			cJSON_AddNumberToObject(l, "step", (double)(k + 1));
			cJSON_AddNumberToObject(l, "loss", loss);
			cJSON_AddNumberToObject(l, "seconds", c->times[k]);
			if ((st = pl_cli_json_line(l, err)))
				return st;
		} else
			printf("step %lld  loss %.9g  %.6f s\n", k + 1, loss, c->times[k]);
		fflush(stdout);
	}
	return print_measured(c, first, err);
}

/* --profile's memory: the executor's peak against the plan's breakdown */
static pl_status print_memory(const run_ctx *c, pl_err *err)
{
	const double *want = c->cr.detail.mem;
	double mem[PL_EXEC_MEM], peak[PL_EXEC_MEM], predicted_peak = 0;
	for (int k = 0; k < PL_EXEC_MEM; k++) /* the plan's peak less the reserve */
		predicted_peak += want[k];
	pl_exec_memory(c->ex, mem);
	pl_exec_memory_peak(c->ex, peak);
	long long rank = pl_backend_self(c->be) < 0 ? 0 : pl_backend_self(c->be);
	if (!c->a.json) {
		printf("\nmemory of rank %lld: the most live at once (as a framework's "
		       "allocator "
		       "counts its tensors; fp32), the buffers allocated, and the plan's "
		       "peak-stage prediction:\n",
		       rank);
		for (int k = 0; k < PL_EXEC_MEM; k++)
			printf("  %-17s %12.0f B   allocated %12.0f B   predicted %12.0f B\n",
			       pl_ckpt_mem_names[k], peak[k], mem[k], want[k]);
		printf("  %-17s %12.0f B   (all at once)            predicted %12.0f B\n", "peak",
		       pl_exec_memory_peak_total(c->ex, NULL), predicted_peak);
		return PL_OK;
	}
	cJSON *l = cJSON_CreateObject(), *m = cJSON_AddObjectToObject(l, "memory_bytes");
	cJSON_AddNumberToObject(l, "rank", (double)rank);
	cJSON *a = cJSON_AddObjectToObject(m, "measured"),
	      *al = cJSON_AddObjectToObject(m, "allocated"),
	      *p = cJSON_AddObjectToObject(m, "predicted");
	for (int k = 0; k < PL_EXEC_MEM; k++) {
		cJSON_AddNumberToObject(a, pl_ckpt_mem_names[k], peak[k]);
		cJSON_AddNumberToObject(al, pl_ckpt_mem_names[k], mem[k]);
		cJSON_AddNumberToObject(p, pl_ckpt_mem_names[k], want[k]);
	}
	/* all at once: the total, and the categories then */
	double at[PL_EXEC_MEM];
	cJSON *t = cJSON_AddObjectToObject(m, "peak");
	cJSON_AddNumberToObject(t, "measured", pl_exec_memory_peak_total(c->ex, at));
	cJSON_AddNumberToObject(t, "predicted", predicted_peak);
	cJSON *tb = cJSON_AddObjectToObject(t, "measured_by_category");
	for (int k = 0; k < PL_EXEC_MEM; k++)
		cJSON_AddNumberToObject(tb, pl_ckpt_mem_names[k], at[k]);
	return pl_cli_json_line(l, err);
}

static void run_free(run_ctx *c)
{
	free(c->times);
	free(c->prof);
	pl_exec_free(c->ex);
	if (c->be)
		pl_backend_free(c->be);
	if (c->server > 0) {
		kill((pid_t)c->server, SIGTERM);
		waitpid((pid_t)c->server, NULL, 0);
	}
	pl_store_close(c->store);
	pl_rdv_close(&c->rdv);
	pl_run_plan_free(&c->run, c->g);
	pl_plan_detail_free(&c->cr.detail);
	cJSON_Delete(c->ck);
	free(c->text);
	pl_values_free(&c->sv);
	pl_graph_free(c->g);
}

/* planner run: options, the model, the plan priced, the ranks started, the
 * steps run and measured, --profile's tables */
int pl_cmd_run(int argc, char **argv)
{
	run_ctx c = {.rdv = {.listen_fd = -1, .fd = -1}, .server = -1};
	int rc = run_parse(argc, argv, &c.a);
	if (rc >= 0)
		return rc;
	pl_err err;
	pl_status st = pl_cli_load_model(&c.g, argv[optind], &c.a.co.onnx, &err);
	if (st)
		return pl_cli_fail(st, &err);
	c.rg = c.g;
	if (!(st = run_load(&c, &err)) && !(st = run_start(&c, argc, argv, &err)) &&
	    !(st = run_steps(&c, argv[optind], &err)) && c.a.profile &&
	    !(st = print_profile(c.rg, &c.cl, &c.run, c.prof, (double)c.n, c.a.json, &err)))
		st = print_memory(&c, &err);
	run_free(&c);
	return st ? pl_cli_fail(st, &err) : 0;
}
