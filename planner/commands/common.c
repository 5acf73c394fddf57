/* What several commands share: the table of every command's options
 * (pl_cli_options) and the reading of them, the parser of the options of
 * every command that reads a model or a cluster, and the printers of a
 * checkpoint's summary that search and explain both print. */
#include "planner/commands/commands.h"
#include "graph/model.h"

/* A model file as the commands read it: pl_graph_load_file_opts, then its
 * warnings on stderr. */
pl_status pl_cli_load_model(pl_graph **out, const char *path, const pl_onnx_opts *o, pl_err *err)
{
	pl_status st = pl_graph_load_file_opts(out, path, o, err);
	if (st == PL_OK)
		pl_cli_model_warnings(*out);
	return st;
}

/* the commands that read a MODEL (an ONNX file's import options), that take
 * a cluster, and that price a plan on it (the choices above) */
#define MODEL_CMDS                                                                                 \
	(PL_CMD_SEARCH | PL_CMD_COST | PL_CMD_STRATEGIES | PL_CMD_RUN | PL_CMD_BENCH |             \
	 PL_CMD_IMPORT)
#define CLUSTER_CMDS (PL_CMD_SEARCH | PL_CMD_COST | PL_CMD_STRATEGIES | PL_CMD_RUN | PL_CMD_BENCH)
#define PRICE_CMDS   (PL_CMD_SEARCH | PL_CMD_COST | PL_CMD_RUN | PL_CMD_BENCH)
#define ALL_CMDS     ((unsigned)PL_CMD_REPORT * 2 - 1)

/* short names for the table's rows */
#define VAL(n, c, w)                                                                               \
	{                                                                                          \
		.name = n, .arg = required_argument, .code = c, .cmds = w                          \
	}
#define FLAG(n, c, w)                                                                              \
	{                                                                                          \
		.name = n, .arg = no_argument, .code = c, .cmds = w                                \
	}
#define SHARED(n, c, w)                                                                            \
	{                                                                                          \
		.name = n, .arg = required_argument, .code = c, .cmds = w, .shared = w             \
	}

/* what the training program runs, a choice of the cluster's that the
 * option overrides (pl_cli_apply_reserve, in the table's order) */
#define CHOICE(n, c, setter, f)                                                                    \
	{                                                                                          \
		.name = n, .arg = required_argument, .code = c, .cmds = PRICE_CMDS,                \
		.shared = PRICE_CMDS, .set = setter, .field = offsetof(pl_cli_common, f)           \
	}

/* Every option of the commands, in the order of their getopt tables. */
const pl_cli_option pl_cli_options[] = {
    SHARED("batch", OPT_BATCH, MODEL_CMDS),
    SHARED("loss", OPT_LOSS, MODEL_CMDS),
    SHARED("const", OPT_CONST, MODEL_CMDS),
    SHARED("loss-axis", OPT_LOSS_AXIS, MODEL_CMDS),
    SHARED("dropout", OPT_DROPOUT, MODEL_CMDS),
    VAL("weights", OPT_WEIGHTS, PL_CMD_RUN),
    VAL("batch-file", OPT_BATCH_FILE, PL_CMD_RUN),
    SHARED("devices", 'd', CLUSTER_CMDS),
    FLAG("job", 'J', PL_CMD_SEARCH | PL_CMD_BENCH),
    FLAG("fastest", 'F', PL_CMD_SEARCH),
    VAL("pipeline-stages", 'S', PL_CMD_SEARCH),
    VAL("pp", 'S', PL_CMD_SEARCH),
    VAL("dp", OPT_DP, PL_CMD_SEARCH),
    VAL("tp", OPT_TP, PL_CMD_SEARCH),
    VAL("cp", OPT_CP, PL_CMD_SEARCH),
    VAL("ep", OPT_EP, PL_CMD_SEARCH),
    VAL("micro-batch-size", OPT_MBS, PL_CMD_SEARCH),
    VAL("virtual-stages", OPT_VS, PL_CMD_SEARCH),
    VAL("overlap-grad-reduce", OPT_OVERLAP, PL_CMD_SEARCH),
    VAL("tp-comm-overlap", OPT_TP_OVERLAP, PL_CMD_SEARCH),
    VAL("overlap-param-gather", OPT_PARAM_OVERLAP, PL_CMD_SEARCH),
    VAL("sequence-parallel", OPT_SP, PL_CMD_SEARCH),
    VAL("max-tp", OPT_MAX_TP, PL_CMD_SEARCH | PL_CMD_STRATEGIES),
    VAL("replicate", OPT_REPLICATE, PL_CMD_SEARCH),
    VAL("stage-cuts", OPT_STAGE_CUTS, PL_CMD_SEARCH),
    VAL("framework", OPT_FRAMEWORK, PL_CMD_SEARCH),
    VAL("micro-batches", 'B', PL_CMD_SEARCH),
    VAL("zero", 'Z', PL_CMD_SEARCH),
    VAL("recompute", 'R', PL_CMD_SEARCH),
    {.name = "cluster",
     .arg = required_argument,
     .code = 'c',
     .cmds = CLUSTER_CMDS | PL_CMD_CALIBRATE, /* calibrate's: the cluster file it adds to */
     .shared = CLUSTER_CMDS},
    SHARED("memory-reserve", OPT_RESERVE, PRICE_CMDS),
    SHARED("attention-kernel", OPT_ATTN, PRICE_CMDS),
    CHOICE("loss-kernel", OPT_LOSS_KERN, pl_cluster_set_loss, loss),
    CHOICE("loss-parallel", OPT_LOSS_PAR, pl_cluster_set_loss_parallel, loss_par),
    CHOICE("grad-dtype", OPT_GRAD_DT, pl_cluster_set_grad_dtype, grad_dt),
    CHOICE("grad-reduce", OPT_GRAD_RED, pl_cluster_set_grad_reduce, grad_red),
    CHOICE("grad-accumulation", OPT_GRAD_ACC, pl_cluster_set_grad_accumulation, grad_acc),
    CHOICE("param-shard", OPT_PARAM_SHARD, pl_cluster_set_param_shard, param_shard),
    CHOICE("norm-kernel", OPT_NORM_KERN, pl_cluster_set_norm, norm_k),
    CHOICE("mask-kernel", OPT_MASK_KERN, pl_cluster_set_mask, mask_k),
    CHOICE("loss-metrics", OPT_LOSS_METRICS, pl_cluster_set_loss_metrics, loss_metrics),
    CHOICE("batch-norm", OPT_BN, pl_cluster_set_batch_norm, bn),
    CHOICE("stage-output", OPT_STAGE_OUT, pl_cluster_set_stage_output, stage_out),
    CHOICE("gemm-dtype", OPT_GEMM_DT, pl_cluster_set_gemm_dtype, gemm_dt),
    CHOICE("cp-exchange", OPT_CP_EXCHANGE, pl_cluster_set_cp_exchange, cp_ex),
    VAL("mode", 'm', PL_CMD_SEARCH),
    VAL("modes", 'm', PL_CMD_BENCH),
    {.name = "memory-limit",
     .arg = required_argument,
     .code = 'M',
     .cmds = PL_CMD_SEARCH | PL_CMD_BENCH | PL_CMD_COST, /* cost's: no 'none' */
     .shared = PL_CMD_SEARCH | PL_CMD_BENCH},
    VAL("load", 'l', PL_CMD_SEARCH),
    SHARED("time-limit", 't', PL_CMD_SEARCH | PL_CMD_BENCH),
    {.name = "output",
     .arg = required_argument,
     .code = 'o',
     .cmds = PL_CMD_SEARCH | PL_CMD_IMPORT | PL_CMD_CALIBRATE | PL_CMD_TOPOLOGY | PL_CMD_EXPORT |
             PL_CMD_REPORT,
     .letter = 1},
    FLAG("json", 'j',
         PL_CMD_SEARCH | PL_CMD_RUN | PL_CMD_TOPOLOGY | PL_CMD_CHECK | PL_CMD_EXPORT |
             PL_CMD_EXPLAIN),
    FLAG("progress", 'p', PL_CMD_SEARCH),
    VAL("pareto-cap", 'P', PL_CMD_SEARCH),
    VAL("dump-lp", 'L', PL_CMD_SEARCH),
    VAL("ilp-edges", 'E', PL_CMD_SEARCH),
    VAL("why-not", OPT_WHY_NOT, PL_CMD_SEARCH),
    VAL("top", OPT_TOP, PL_CMD_SEARCH),
    VAL("strategy", 's', PL_CMD_COST | PL_CMD_RUN),
    VAL("op", 'o', PL_CMD_STRATEGIES),
    VAL("backend", 'b', PL_CMD_RUN | PL_CMD_CALIBRATE),
    VAL("steps", 'n', PL_CMD_RUN),
    VAL("seed", 'S', PL_CMD_RUN),
    VAL("optimizer", 'O', PL_CMD_RUN),
    VAL("lr", 'l', PL_CMD_RUN),
    FLAG("profile", 'P', PL_CMD_RUN),
    VAL("timeout", 'T', PL_CMD_RUN),
    FLAG("csv", 'C', PL_CMD_BENCH),
    VAL("plot", 'P', PL_CMD_BENCH),
    VAL("ranks", 'r', PL_CMD_CALIBRATE),
    VAL("max-bytes", 'm', PL_CMD_CALIBRATE),
    FLAG("from-nccl-tests", 'n', PL_CMD_CALIBRATE),
    VAL("from-runs", 'R', PL_CMD_CALIBRATE),
    VAL("nodes", 'N', PL_CMD_CALIBRATE),
    VAL("collective", 'C', PL_CMD_CALIBRATE),
    VAL("xml", 'x', PL_CMD_TOPOLOGY),
    VAL("preset", 'P', PL_CMD_TOPOLOGY),
    VAL("log", 'l', PL_CMD_CHECK),
    VAL("warmup", 'w', PL_CMD_CHECK),
    FLAG("run-line", 'r', PL_CMD_CHECK),
    VAL("model", 'm', PL_CMD_CHECK),
    VAL("name", 'n', PL_CMD_CHECK),
    VAL("to", 't', PL_CMD_EXPORT),
    FLAG("fp16", 'F', PL_CMD_EXPORT),
    FLAG("diff", 'D', PL_CMD_EXPLAIN),
    {.name = "help", .arg = no_argument, .code = 'h', .cmds = ALL_CMDS, .letter = 1},
    {0}};

#undef VAL
#undef FLAG
#undef SHARED
#undef CHOICE

void pl_cli_args_init(pl_cli_args *a, unsigned cmd, const char *name, const char *help,
                      pl_cli_common *co)
{
	memset(a, 0, sizeof *a);
	a->cmd = cmd;
	a->name = name;
	a->help = help;
	a->co = co;
	int n = 0, k = 0;
	for (const pl_cli_option *o = pl_cli_options; o->name; o++) {
		if (!(o->cmds & cmd))
			continue;
		/* the table's own faults, the same on every run: said, never
		 * an option silently lost or taken for another */
		int dup = 0;
		for (int j = 0; j < n; j++)
			dup |= !strcmp(a->longs[j].name, o->name);
		if (dup || n == PL_CLI_MAX_OPTIONS ||
		    (o->letter && k + 2 >= (int)sizeof a->shorts)) {
			fprintf(stderr, "planner: %s: the options table gives --%s %s\n", name,
			        o->name, dup ? "twice" : "past the most a command takes");
			abort();
		}
		a->longs[n++] = (struct option){o->name, o->arg, 0, o->code};
		if (o->letter) {
			a->shorts[k++] = (char)o->code;
			if (o->arg == required_argument)
				a->shorts[k++] = ':';
		}
	}
	opterr = 0;
	optind = 0; /* from argv[1], getopt's state reset */
}

int pl_cli_next(pl_cli_args *a, int argc, char **argv)
{
	for (;;) {
		int ch = getopt_long(argc, argv, a->shorts, a->longs, &a->li);
		if (ch == -1)
			return -1;
		const pl_cli_option *o = pl_cli_options;
		while (o->name && !((o->cmds & a->cmd) && o->code == ch))
			o++;
		if (!o->name) {
			a->rc = pl_cli_usage(a->name, "unknown or incomplete option '%s'",
			                     argv[optind - 1]);
			return PL_CLI_STOP;
		}
		if (ch == 'h') {
			fputs(a->help, stdout);
			a->rc = 0;
			return PL_CLI_STOP;
		}
		if (!(o->shared & a->cmd))
			return ch;
		if ((a->rc = pl_cli_common_opt(o, optarg, a->co, a->name)))
			return PL_CLI_STOP;
	}
}

int pl_cli_takes_value(unsigned cmd, const char *a, int *inline_value)
{
	if (strncmp(a, "--", 2))
		return 0;
	a += 2;
	for (const pl_cli_option *o = pl_cli_options; o->name; o++) {
		size_t n = strlen(o->name);
		if ((o->cmds & cmd) && o->arg == required_argument && !strncmp(a, o->name, n) &&
		    (a[n] == 0 || a[n] == '=')) {
			*inline_value = a[n] == '=';
			return 1;
		}
	}
	return 0;
}

/* The options several commands share (the rows of pl_cli_options with
 * .shared): a model's import, --devices and --cluster, the cluster's
 * choices, the limits. Returns -1 if o is not one of them, 0 if taken, else
 * an exit status. */
int pl_cli_common_opt(const pl_cli_option *o, const char *arg, pl_cli_common *co, const char *cmd)
{
	int ch = o->code;
	if (ch == 'd') {
		if (pl_parse_ll(arg, &co->devices) || co->devices < 1)
			return pl_cli_usage(cmd, "--devices %s: expected a positive integer", arg);
		return 0;
	}
	if (ch == 'c') {
		co->cluster = arg;
		return 0;
	}
	if (ch == OPT_BATCH) {
		long long v;
		if (pl_parse_ll(arg, &v) || v < 1 || v > (1LL << 40))
			return pl_cli_usage(cmd, "--batch %s: expected a positive integer", arg);
		co->onnx.batch = v;
		return 0;
	}
	if (ch == OPT_DROPOUT) {
		if (strcmp(arg, "keep") && strcmp(arg, "drop") && strcmp(arg, "auto"))
			return pl_cli_usage(cmd, "--dropout %s: expected keep, drop or auto", arg);
		co->onnx.dropout = arg;
		return 0;
	}
	if (ch == OPT_CONST) {
		if (co->onnx.nconsts >= PL_MAX_CONSTS)
			return pl_cli_usage(cmd, "--const %s: at most 32 patterns", arg);
		co->consts[co->onnx.nconsts++] = arg;
		co->onnx.consts = co->consts;
		return 0;
	}
	if (ch == OPT_LOSS_AXIS) {
		if (strcmp(arg, "1") && strcmp(arg, "last") && strcmp(arg, "auto"))
			return pl_cli_usage(cmd, "--loss-axis %s: expected 1, last or auto", arg);
		co->onnx.loss_axis = !strcmp(arg, "1") ? 1 : !strcmp(arg, "last") ? -1 : 0;
		return 0;
	}
	if (ch == OPT_LOSS) {
		if (strcmp(arg, "cross-entropy") && strcmp(arg, "none"))
			return pl_cli_usage(cmd, "--loss %s: expected cross-entropy or none", arg);
		co->onnx.loss = arg;
		return 0;
	}
	if (ch == OPT_ATTN) {
		pl_cluster probe;
		pl_err e;
		memset(&probe, 0, sizeof probe);
		if (pl_cluster_set_attention(&probe, strcmp(arg, "none") ? arg : "",
		                             "--attention-kernel", &e))
			return pl_cli_usage(cmd, "%s", e.msg);
		co->attention = strcmp(arg, "none") ? arg : "";
		return 0;
	}
	if (o->set) {
		pl_cluster probe;
		pl_err e;
		char flag[64];
		snprintf(flag, sizeof flag, "--%s", o->name);
		memset(&probe, 0, sizeof probe);
		if (o->set(&probe, arg, flag, &e))
			return pl_cli_usage(cmd, "%s", e.msg);
		*(const char **)((char *)co + o->field) = arg;
		return 0;
	}
	if (ch == OPT_RESERVE) {
		if (pl_parse_bytes(arg, &co->reserve) || !(co->reserve >= 0))
			return pl_cli_usage(
			    cmd,
			    "--memory-reserve %s: expected bytes such as 2G, 5.5GiB "
			    "or 0",
			    arg);
		co->has_reserve = 1;
		return 0;
	}
	if (ch == 'M') {
		if (pl_parse_limit(arg, &co->limit))
			return pl_cli_usage(
			    cmd,
			    "--memory-limit %s: expected bytes > 0 such as 80e9, 80G, "
			    "75GiB, or 'none'",
			    arg);
		co->has_limit = 1;
		return 0;
	}
	if (ch == 't') {
		char *end;
		co->tlimit = strtod(arg, &end);
		if (*end || end == arg || !(co->tlimit > 0) || !isfinite(co->tlimit))
			return pl_cli_usage(cmd, "--time-limit %s: expected seconds > 0", arg);
		return 0;
	}
	return -1;
}

/* The search options --memory-limit and --time-limit give (the limit: the
 * device's memory unless given). */
pl_search_opts pl_cli_common_search_opts(const pl_cli_common *co, const pl_cluster *cl)
{
	return (pl_search_opts){.memory_limit = co->has_limit ? co->limit : cl->memory_bytes,
	                        .time_limit_s = co->tlimit};
}

/* --memory-reserve, --attention-kernel and the cluster's other choices
 * (pl_cli_options' rows with a setter) over the cluster's own; PL_EINVAL
 * when the reserve leaves no memory. */
pl_status pl_cli_apply_reserve(const pl_cli_common *c, pl_cluster *cl, pl_err *err)
{
	pl_status st = c->has_reserve
	                   ? pl_cluster_set_reserve(cl, c->reserve, "--memory-reserve", err)
	                   : PL_OK;
	if (!st && c->attention)
		st = pl_cluster_set_attention(cl, c->attention, "--attention-kernel", err);
	for (const pl_cli_option *o = pl_cli_options; !st && o->name; o++) {
		const char *v = o->set ? *(const char *const *)((const char *)c + o->field) : NULL;
		char flag[64];
		snprintf(flag, sizeof flag, "--%s", o->name);
		if (v)
			st = o->set(cl, v, flag, err);
	}
	if (!st)
		st = pl_cluster_check(cl, c->gemm_dt ? "--gemm-dtype" : cl->name, err);
	return st;
}

pl_status pl_cli_resolve_cluster(const pl_cli_common *c, pl_cluster *out, pl_err *err)
{
	if (c->cluster && c->devices)
		return pl_err_set(err, PL_EINVAL, "give --devices or --cluster, not both");
	pl_status st = c->cluster ? pl_cluster_resolve(out, c->cluster, err)
	                          : pl_cluster_devices(out, c->devices ? c->devices : 8, err);
	return st ? st : pl_cli_apply_reserve(c, out, err);
}

void pl_cli_fmt_bytes(double b, char *buf, size_t n)
{
	if (b >= 1073741824.0)
		snprintf(buf, n, "%.2f GiB", b / 1073741824.0);
	else if (b >= 1048576.0)
		snprintf(buf, n, "%.2f MiB", b / 1048576.0);
	else
		snprintf(buf, n, "%.0f B", b);
}

void pl_cli_fmt_strategy(const pl_ckpt_op *op, char *buf, size_t n)
{
	size_t k = 0;
	buf[0] = 0;
	k += (size_t)snprintf(buf + k, n - k, "(");
	for (int i = 0; i < op->ninputs; i++) {
		if (k >= n)
			break;
		k += (size_t)snprintf(buf + k, n - k, "%s(", i ? "," : "");
		for (int d = 0; d < op->rank[i]; d++) {
			if (k >= n)
				break;
			k += (size_t)snprintf(buf + k, n - k, "%s%d", d ? "," : "", op->split[i][d]);
		}
		if (k < n)
			k += (size_t)snprintf(buf + k, n - k, ")");
	}
	if (k < n)
		snprintf(buf + k, n - k, ")");
}

/* Per-op table from a checkpoint. */
void pl_cli_print_table(const pl_ckpt_doc *d, FILE *out, int max_rows)
{
	int n = d->nops;
	if (max_rows > 0 && n > max_rows) {
		fprintf(out, "(%d ops; 'planner explain' on the checkpoint prints all of them)\n",
		        n);
		return;
	}
	fprintf(out, "%-28s %-20s %-28s %11s %11s %12s %12s\n", "op", "type", "strategy",
	        "compute ms", "comm ms", "memory", "GFLOP f+b");
	for (int o = 0; o < n; o++) {
		const pl_ckpt_op *op = &d->ops[o];
		char st[256], mem[32];
		pl_cli_fmt_strategy(op, st, sizeof st);
		/* numbers a hand-written plan lacks print as '-' */
		char cms[32] = "-", cmm[32] = "-";
		snprintf(mem, sizeof mem, "-");
		if (!isnan(op->mem_bytes))
			pl_cli_fmt_bytes(op->mem_bytes, mem, sizeof mem);
		if (!isnan(op->compute_s))
			snprintf(cms, sizeof cms, "%.4f", 1e3 * op->compute_s);
		if (!isnan(op->comm_s))
			snprintf(cmm, sizeof cmm, "%.4f", 1e3 * op->comm_s);
		char gf[32] = "-";
		if (!isnan(op->flops_fwd) && !isnan(op->flops_bwd))
			snprintf(gf, sizeof gf, "%.4g", (op->flops_fwd + op->flops_bwd) / 1e9);
		fprintf(out, "%-28s %-20s %-28s %11s %11s %12s %12s\n", op->name,
		        op->type ? op->type : "?", st, cms, cmm, mem, gf);
	}
}

/* Prints o as one JSON line (strings escaped by cJSON) and frees it;
 * PL_ENOMEM when it cannot. */
pl_status pl_cli_json_line(cJSON *o, pl_err *err)
{
	char *txt = o ? cJSON_PrintUnformatted(o) : NULL;
	cJSON_Delete(o);
	if (!txt)
		return pl_err_set(err, PL_ENOMEM, "out of memory");
	puts(txt);
	free(txt);
	return PL_OK;
}

/* The parts of the model as the checkpoint's "parts" describes them: how
 * each part's weights and tokens are cut, where it sits. */
static void print_parts(const pl_ckpt_doc *d, FILE *out)
{
	if (!d->has_parts)
		return;
	fputs("parts:\n", out);
	for (int k = 0; k < d->nparts; k++) {
		const pl_ckpt_part *p = &d->parts[k];
		double s0 = p->stage_first, s1 = p->stage_last;
		fprintf(out, "  %-10s", p->name);
		double w = pl_ckpt_or(p->weight_cut, 0), e = pl_ckpt_or(p->experts_cut, 1),
		       r = pl_ckpt_or(p->replicated, 1), sq = pl_ckpt_or(p->sequence_cut, 1);
		if (w > 0)
			fprintf(out, " weights cut %g way%s,", w, w == 1 ? "" : "s");
		fprintf(out, " tokens cut batch %g x sequence %g", pl_ckpt_or(p->batch_cut, 1), sq);
		double ns = pl_ckpt_or(p->norms_sequence_cut, 1);
		if (ns > sq)
			fprintf(out, " (norms: sequence %g)", ns);
		if (e > 1)
			fprintf(out, ", experts over %g ranks", e);
		if (r > 1)
			fprintf(out, ", replicated %g times", r);
		if (d->v.has_pipeline) {
			if (s0 == s1)
				fprintf(out, "; stage %g", s0);
			else
				fprintf(out, "; stages %g-%g", s0, s1);
		}
		fputc('\n', out);
	}
}

/* "layers a stage: 6 6 6 6": each stage's share of the repeated layers, from
 * its attention ops (the checkpoint's per-op stage and part, and
 * search.repeated_layers); a share that is not whole (a stage cut inside a
 * layer) prints as a fraction. Nothing without repeated attention layers. */
static void print_stage_layers(const pl_ckpt_doc *d, int stages, FILE *out)
{
	double layers = pl_ckpt_or(d->v.repeated_layers, 0);
	if (!(layers >= 1) || stages < 2 || stages > 1 << 20)
		return;
	double *att = pl_calloc((size_t)stages, sizeof *att), total = 0;
	if (!att)
		return;
	for (int o = 0; o < d->nops; o++) {
		const char *part = d->ops[o].part;
		double st = pl_ckpt_or(d->ops[o].stage, -1);
		if (part && !strcmp(part, "attention") && st >= 0 && st < stages) {
			att[(int)st]++;
			total++;
		}
	}
	if (total > 0) {
		fputs("  layers a stage:", out);
		for (int s = 0; s < stages && s < 64; s++)
			fprintf(out, " %.4g", att[s] * layers / total);
		if (stages > 64)
			fprintf(out, " ... (%d stages)", stages);
		fputc('\n', out);
	}
	free(att);
}

/* The whole-job line of 'explain': stages, micro-batches, schedule, ZeRO,
 * recompute (per-op plans have no "pipeline"). */
static void print_pipeline(const pl_ckpt_doc *d, FILE *out)
{
	const pl_ckpt_view *v = &d->v;
	if (!v->pp_is_object)
		return;
	double stages = v->pp_stages, vs = pl_ckpt_or(v->pp_virtual_stages, 1),
	       m = v->pp_micro_batches, sdev = v->pp_stage_devices;
	char sched[64];
	snprintf(sched, sizeof sched, "%s",
	         stages > 1 ? " (1F1B)"
	         : m > 1    ? " (gradient accumulation)"
	                    : "");
	if (vs > 1)
		snprintf(sched, sizeof sched, " (interleaved 1F1B, %g chunks a device)", vs);
	fprintf(out,
	        "pipeline: %g stage%s of %g device%s, %g micro-batch%s%s; "
	        "ZeRO %g; recompute %s%s\n",
	        stages, stages == 1 ? "" : "s", sdev, sdev == 1 ? "" : "s", m, m == 1 ? "" : "es",
	        sched, v->optimizer_shard, v->recompute,
	        v->sequence_parallel == 0 ? "; no sequence parallelism" : "");
	if (stages > 1)
		print_stage_layers(d, (int)stages, out);
}

/* "KIND degree D (N groups)" of a checkpoint's groups.KIND, after lead */
static void print_degree(FILE *out, const char *lead, const char *kind, const pl_ckpt_groups *gs)
{
	int n = gs->n;
	fprintf(out, "%s%s degree %d (%d group%s)", lead, kind, pl_ckpt_group_size(gs, 0), n,
	        n == 1 ? "" : "s");
}

static int is_array(const pl_ckpt_groups *gs)
{
	return gs && gs->is_array;
}

/* The layers' parallel groups: degrees and counts, then rank 0's groups. */
static void print_groups(const pl_ckpt_doc *d, FILE *out)
{
	const char *kinds[] = {"dp", "tp", "pp", "ep", "sp", "cp"};
	const pl_ckpt_groups *arrs[6];
	for (int k = 0; k < 6; k++)
		arrs[k] = pl_ckpt_doc_groups(d, kinds[k]);
	if (!is_array(arrs[0]) || !is_array(arrs[1]))
		return;
	const char *gp = d->v.groups_param;
	fprintf(out, "layers (%s): ", gp ? gp : "largest param");
	int dpcp = pl_ckpt_group_size(arrs[0], 0), cp = pl_ckpt_group_size(arrs[5], 0);
	if (is_array(arrs[5]) && cp > 1 && dpcp % cp == 0) {
		/* the weight's replicas are data x context parallel (Megatron
		 * reduces the gradients over both) */
		int n = arrs[5]->n;
		fprintf(out,
		        "dp degree %d, cp degree %d (%d group%s; gradients reduced over dp x cp, "
		        "%d ranks; --cp-exchange %s)",
		        dpcp / cp, cp, n, n == 1 ? "" : "s", dpcp,
		        d->v.cp_exchange ? d->v.cp_exchange : "ring");
	} else {
		print_degree(out, "", "dp", arrs[0]);
	}
	print_degree(out, ", ", "tp", arrs[1]);
	if (is_array(arrs[2]))
		print_degree(out, ", ", "pp", arrs[2]);
	if (is_array(arrs[3]))
		print_degree(out, "; experts: ", "ep", arrs[3]);
	fputc('\n', out);
	/* the groups of rank 0, the way launchers print them */
	for (int k = 0; k < 6; k++) {
		const pl_ckpt_groups *gs = arrs[k];
		if (!gs || !gs->first_is_array)
			continue;
		/* ranks as integers; a long group shows its first 16 */
		int size = pl_ckpt_group_size(gs, 0);
		fprintf(out, "  rank 0 %s group: [", k == 0 && is_array(arrs[5]) ? "dp x cp" : kinds[k]);
		for (int i = 0; i < size; i++) {
			if (i == 16) {
				fprintf(out, ", ... (%d ranks)", size);
				break;
			}
			double r = gs->ranks[gs->start[0] + i];
			fprintf(out, "%s%.0f", i ? ", " : "", isnan(r) ? 0 : r);
		}
		fputs("]\n", out);
	}
}

/* MFU, model TFLOP/s, tokens and samples a second, when the cost has them
 * (pl_ckpt_add_utilisation), each checked before it is printed */
static void print_utilisation(const pl_ckpt_view *v, FILE *out)
{
	double mfu = v->mfu, tf = v->model_tflops, tok = v->tokens_per_s, smp = v->samples_per_s;
	if (!(isfinite(mfu) && mfu >= 0 && isfinite(tf) && tf >= 0))
		return;
	fprintf(out, "utilisation: MFU %.1f %%, %.1f model TFLOP/s per device", 100 * mfu, tf);
	if (isfinite(tok) && tok > 0)
		fprintf(out, ", %.0f tokens/s per device", tok);
	if (isfinite(smp) && smp > 0)
		fprintf(out, ", %.4g samples/s", smp);
	double gb = v->global_batch, tps = v->tokens_per_step;
	if (isfinite(gb) && gb > 0)
		fprintf(out, "; global batch %.0f", gb);
	if (isfinite(tps) && tps > 0)
		fprintf(out, " (%.0f tokens) a step", tps);
	fputc('\n', out);
	double lo = v->band_lo, hi = v->band_hi;
	if (isfinite(lo) && isfinite(hi) && lo > 0 && hi >= lo && v->band_basis)
		fprintf(out, "expected measured step: %.4g-%.4g s (%s)\n", lo, hi, v->band_basis);
}

/* The summary's head: model, cluster, search, the framework's defaults */
static void print_head(const pl_ckpt_doc *d, FILE *out)
{
	const pl_ckpt_view *v = &d->v;
	fprintf(out, "model %s on %s", v->model_name ? v->model_name : "(not named)",
	        v->cluster_name ? v->cluster_name : "(no cluster recorded)");
	if (v->devices > 0)
		fprintf(out, " (%g devices)", (double)v->devices);
	/* over what, where the search trimmed its candidates (search.space), and
	 * the options that lift the trims; else over every candidate */
	const char *space = v->space, *widen = v->space_widen;
	if (v->mode)
		fprintf(out, ", mode %s%s%s%s", v->mode,
		        v->optimal ? ", proven optimal" : ", not proven optimal",
		        space ? " over " : "", space ? space : "");
	fputc('\n', out);
	/* search --framework F: the pricing defaults of F it applied */
	if (d->nsettings > 0) {
		fprintf(out, "  %s defaults:", v->framework ? v->framework : "framework");
		for (int k = 0; k < d->nsettings; k++) {
			const char *o = pl_export_price_option(d->settings[k].key);
			if (o && d->settings[k].value)
				fprintf(out, " %s %s", o, d->settings[k].value);
		}
		fputc('\n', out);
	}
	if (space && widen)
		fprintf(out,
		        "  note: a plan outside that space may be faster: --why-not \"%s\" "
		        "compares\n",
		        widen);
}

void pl_cli_print_totals(const pl_ckpt_doc *d, FILE *out)
{
	const pl_ckpt_view *v = &d->v;
	char mb[32];
	pl_cli_fmt_bytes(v->peak_mem_bytes, mb, sizeof mb);
	/* a plan written by hand may lack any of these: say what is missing */
	print_head(d, out);
	if (isnan(v->step_s)) {
		fputs(
		    "not priced: the checkpoint has no cost; 'planner cost MODEL --strategy CKPT' "
		    "prices it\n",
		    out);
		return;
	}
	if (v->why)
		fprintf(out, "  note: %s\n", v->why);
	double opt = pl_ckpt_or(v->optimizer_s, 0);
	/* the parts add up to the step: the optimizer is printed apart from the
	 * forward and backward kernels it is counted with in compute_seconds */
	fprintf(out, "step %.6f s = compute %.6f s + optimizer %.6f s + communication %.6f s",
	        v->step_s, v->compute_s - opt, opt, v->comm_s);
	if (!isnan(v->bubble_s))
		fprintf(out, " + bubble %.6f s", v->bubble_s);
	fprintf(out, "; peak memory %s per device\n", mb);
	print_utilisation(v, out);
	char note[640];
	for (int k = 0; k < PL_CKPT_CAVEATS; k++)
		if (pl_ckpt_caveat(v, k, note, sizeof note))
			fprintf(out, "  note: %s\n", note);
	double limit = pl_ckpt_or(v->memory_limit, 0);
	if (pl_memory_at_risk(v->peak_mem_bytes, limit)) {
		char hi[32], lim[32], why[128];
		pl_cli_fmt_bytes(v->peak_mem_bytes * PL_MEM_BAND_HI, hi, sizeof hi);
		pl_cli_fmt_bytes(limit, lim, sizeof lim);
		pl_memory_band_basis(why, sizeof why);
		fprintf(out,
		        "expected measured peak: up to %s, over the %s limit (%s): the plan may run "
		        "out of memory\n",
		        hi, lim, why);
	}
	print_pipeline(d, out);
	print_groups(d, out);
	print_parts(d, out);
}
