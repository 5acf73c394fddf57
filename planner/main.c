/* The `planner` command (docs/user-guide.md): search, cost, strategies, explain.
 * Errors go to stderr as "planner: <file>: <where>: <what>"; exit status 0
 * success, 2 invalid input or usage, 3 no plan satisfies the constraints,
 * 4 system failure. Nothing is half-written: files are written atomically. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "costmodel/cost.h"
#include "planner/checkpoint.h"
#include "graph/output.h"
#include "planner/cli.h"
#include "graph/json.h"
#include "graph/graph.h"
#include "graph/onnx.h"
#include "planner/plan.h"
#include "planner/report.h"
#include "planner/export.h"
#include "executor/exec.h"
#include "costmodel/pipeline.h"
#include "search/job.h"
#include "search/search.h"
#include "search/ve.h"
#include "topology/store.h"
#include "graph/alloc.h"
#include "graph/clock.h"
#include "planner/values.h"

/* A model file as the commands read it: pl_graph_load_file_opts, then its
 * warnings on stderr. */
static pl_status load_model(pl_graph **out, const char *path, const pl_onnx_opts *o, pl_err *err)
{
	pl_status st = pl_graph_load_file_opts(out, path, o, err);
	if (st == PL_OK)
		pl_cli_model_warnings(*out);
	return st;
}

static const char *const top_help =
    "usage: planner <command> [options]\n"
    "\n"
    "Automatic sharding-strategy planner for training on many GPUs.\n"
    "\n"
    "commands:\n"
    "  search MODEL       find the fastest plan that fits in memory; write a strategy checkpoint\n"
    "  cost MODEL         price a given plan (--strategy CKPT, or JSON lines on stdin with -)\n"
    "  strategies MODEL   list the candidate strategies of one op (--op NAME), as JSON\n"
    "  explain CKPT       per-op table of a checkpoint: strategy, time, memory, communication\n"
    "  check CKPT         the checkpoint's predicted step and memory against a training log\n"
    "                     (--log LOG: Megatron-LM, NeMo, torchtitan, DeepSpeed)\n"
    "  run MODEL          train a few steps under a plan on CPU ranks (--strategy CKPT)\n"
    "  calibrate          measure a backend, or read nccl-tests logs; write a cluster file\n"
    "  topology           find the GPUs, NVLinks and NICs with hwloc; write a cluster file\n"
    "  bench MODEL        run several search modes side by side (table, --csv, --plot)\n"
    "  report CKPT        a checkpoint as one self-contained HTML page (-o PAGE.html)\n"
    "  import MODEL.onnx  an ONNX model as a planner.model/1 file (-o MODEL.json)\n"
    "  export CKPT        a plan as Megatron-LM/NeMo arguments, torchtitan TOML, DeepSpeed\n"
    "                     JSON or MindFormers YAML (--to FRAMEWORK); cost --from reads them\n"
    "\n"
    "Run 'planner <command> --help' for a command's options.\n"
    "Exit status: 0 success, 2 invalid input or usage, 3 no plan satisfies the constraints,\n"
    "4 system failure.\n";

/* ---- shared option handling ---- */

/* the most --const patterns */
#define PL_MAX_CONSTS 32

typedef struct common {
	const char *cluster;
	long long devices;
	int has_reserve;
	double reserve;        /* --memory-reserve */
	const char *attention; /* --attention-kernel (NULL: the cluster's) */
	const char *loss;      /* --loss-kernel (NULL: the cluster's) */
	const char *loss_par;  /* --loss-parallel (NULL: the cluster's) */
	const char *grad_dt;   /* --grad-dtype (NULL: the cluster's) */
	const char *norm_k;    /* --norm-kernel (NULL: the cluster's) */
	const char *bn;        /* --batch-norm (NULL: the cluster's) */
	const char *stage_out; /* --stage-output (NULL: the cluster's) */
	const char *gemm_dt;   /* --gemm-dtype (NULL: the cluster's) */
	int has_limit;
	double limit;      /* search's and bench's --memory-limit (0: none) */
	double tlimit;     /* --time-limit (0: none) */
	pl_onnx_opts onnx; /* --batch, --loss, --const: how a MODEL.onnx is imported */
	const char *consts[PL_MAX_CONSTS];
} common;

#define OPT_RESERVE   1001 /* getopt code of --memory-reserve */
#define OPT_ATTN      1006 /* --attention-kernel NAME */
#define OPT_LOSS_KERN 1008 /* --loss-kernel fused|unfused */
#define OPT_LOSS_PAR  1009 /* --loss-parallel vocab|gathered */
#define OPT_GRAD_DT   1010 /* --grad-dtype fp32|param */
#define OPT_NORM_KERN 1011 /* --norm-kernel fused|unfused */
#define OPT_BN        1012 /* --batch-norm sync|local */
#define OPT_STAGE_OUT 1040 /* --stage-output freed|buffered */
#define OPT_GEMM_DT   1013 /* --gemm-dtype fp8|param */
#define OPT_BATCH     1002 /* --batch N: an ONNX model's symbolic batch */
#define OPT_LOSS      1003 /* --loss cross-entropy|none: what an ONNX model's import appends */
#define OPT_CONST     1004 /* --const PATTERN: initializers an ONNX model's import keeps constant */
#define OPT_DROPOUT   1005 /* --dropout keep|drop|auto: an ONNX model's Dropout nodes */
#define OPT_LOSS_AXIS 1007 /* --loss-axis 1|last|auto: the appended loss's classes */
/* the options of every command that reads a MODEL, for ONNX files */
#define ONNX_OPTIONS                                                                               \
	{"batch", required_argument, 0, OPT_BATCH}, {"loss", required_argument, 0, OPT_LOSS},      \
	    {"const", required_argument, 0, OPT_CONST},                                            \
	    {"loss-axis", required_argument, 0, OPT_LOSS_AXIS},                                    \
	{                                                                                          \
		"dropout", required_argument, 0, OPT_DROPOUT                                       \
	}
/* getopt codes of search's fixed degrees */
enum {
	OPT_DP = 1100,
	OPT_TP,
	OPT_CP,
	OPT_EP,
	OPT_MBS,
	OPT_VS,
	OPT_OVERLAP,
	OPT_SP,
	OPT_WHY_NOT,
	OPT_TOP,
	OPT_MAX_TP,
	OPT_REPLICATE,
	OPT_STAGE_CUTS,
	OPT_FRAMEWORK
};
/* search --top: the most configurations listed */
#define PL_MAX_TOP 64

/* What the training program runs, each a choice of the cluster's
 * (costmodel/cluster.h) that an option overrides: its getopt code, name,
 * setter and the common field holding the value given. */
static const struct {
	int ch;
	const char *opt;
	pl_status (*set)(pl_cluster *, const char *, const char *, pl_err *);
	size_t off;
} choices[] = {
    {OPT_LOSS_KERN, "--loss-kernel", pl_cluster_set_loss, offsetof(common, loss)},
    {OPT_LOSS_PAR, "--loss-parallel", pl_cluster_set_loss_parallel, offsetof(common, loss_par)},
    {OPT_GRAD_DT, "--grad-dtype", pl_cluster_set_grad_dtype, offsetof(common, grad_dt)},
    {OPT_NORM_KERN, "--norm-kernel", pl_cluster_set_norm, offsetof(common, norm_k)},
    {OPT_BN, "--batch-norm", pl_cluster_set_batch_norm, offsetof(common, bn)},
    {OPT_STAGE_OUT, "--stage-output", pl_cluster_set_stage_output, offsetof(common, stage_out)},
    {OPT_GEMM_DT, "--gemm-dtype", pl_cluster_set_gemm_dtype, offsetof(common, gemm_dt)},
};

/* --devices and --cluster, shared by the commands that take a cluster.
 * Returns -1 if ch is not one of them, 0 if taken, else an exit status. */
static int common_opt(int ch, const char *arg, common *co, const char *cmd)
{
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
	for (size_t i = 0; i < sizeof choices / sizeof *choices; i++) {
		if (ch != choices[i].ch)
			continue;
		pl_cluster probe;
		pl_err e;
		memset(&probe, 0, sizeof probe);
		if (choices[i].set(&probe, arg, choices[i].opt, &e))
			return pl_cli_usage(cmd, "%s", e.msg);
		*(const char **)((char *)co + choices[i].off) = arg;
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
static pl_search_opts common_search_opts(const common *co, const pl_cluster *cl)
{
	return (pl_search_opts){.memory_limit = co->has_limit ? co->limit : cl->memory_bytes,
	                        .time_limit_s = co->tlimit};
}

/* --memory-reserve on a cluster; PL_EINVAL when it leaves no memory. */
/* --memory-reserve, --attention-kernel, --loss-kernel, --loss-parallel,
 * --grad-dtype and --norm-kernel over the cluster's own */
static pl_status apply_reserve(const common *c, pl_cluster *cl, pl_err *err)
{
	pl_status st = c->has_reserve
	                   ? pl_cluster_set_reserve(cl, c->reserve, "--memory-reserve", err)
	                   : PL_OK;
	if (!st && c->attention)
		st = pl_cluster_set_attention(cl, c->attention, "--attention-kernel", err);
	for (size_t i = 0; !st && i < sizeof choices / sizeof *choices; i++) {
		const char *v = *(const char *const *)((const char *)c + choices[i].off);
		if (v)
			st = choices[i].set(cl, v, choices[i].opt, err);
	}
	if (!st)
		st = pl_cluster_check(cl, c->gemm_dt ? "--gemm-dtype" : cl->name, err);
	return st;
}

static pl_status resolve_cluster(const common *c, pl_cluster *out, pl_err *err)
{
	if (c->cluster && c->devices)
		return pl_err_set(err, PL_EINVAL, "give --devices or --cluster, not both");
	pl_status st = c->cluster ? pl_cluster_resolve(out, c->cluster, err)
	                          : pl_cluster_devices(out, c->devices ? c->devices : 8, err);
	return st ? st : apply_reserve(c, out, err);
}

static void fmt_bytes(double b, char *buf, size_t n)
{
	if (b >= 1073741824.0)
		snprintf(buf, n, "%.2f GiB", b / 1073741824.0);
	else if (b >= 1048576.0)
		snprintf(buf, n, "%.2f MiB", b / 1048576.0);
	else
		snprintf(buf, n, "%.0f B", b);
}

static void fmt_strategy(const cJSON *ps, char *buf, size_t n)
{
	size_t k = 0;
	buf[0] = 0;
	const cJSON *tu, *v;
	k += (size_t)snprintf(buf + k, n - k, "(");
	int first = 1;
	cJSON_ArrayForEach (tu, ps) {
		if (k >= n)
			break;
		k += (size_t)snprintf(buf + k, n - k, "%s(", first ? "" : ",");
		int f2 = 1;
		cJSON_ArrayForEach (v, tu) {
			if (k >= n)
				break;
			k += (size_t)snprintf(buf + k, n - k, "%s%d", f2 ? "" : ",", v->valueint);
			f2 = 0;
		}
		if (k < n)
			k += (size_t)snprintf(buf + k, n - k, ")");
		first = 0;
	}
	if (k < n)
		snprintf(buf + k, n - k, ")");
}

/* Per-op table from a checkpoint object. */
static void print_table(const cJSON *ck, FILE *out, int max_rows)
{
	const cJSON *items = cJSON_GetObjectItemCaseSensitive(ck, "parallel_strategy_item");
	int n = cJSON_GetArraySize(items);
	if (max_rows > 0 && n > max_rows) {
		fprintf(out, "(%d ops; 'planner explain' on the checkpoint prints all of them)\n",
		        n);
		return;
	}
	fprintf(out, "%-28s %-20s %-28s %11s %11s %12s %12s\n", "op", "type", "strategy",
	        "compute ms", "comm ms", "memory", "GFLOP f+b");
	const cJSON *it;
	cJSON_ArrayForEach (it, items) {
		char st[256], mem[32];
		fmt_strategy(cJSON_GetObjectItemCaseSensitive(it, "parallel_strategy"), st,
		             sizeof st);
		const cJSON *ty = cJSON_GetObjectItemCaseSensitive(it, "type");
		const cJSON *cs = cJSON_GetObjectItemCaseSensitive(it, "compute_seconds");
		const cJSON *cm = cJSON_GetObjectItemCaseSensitive(it, "communication_seconds");
		const cJSON *mb = cJSON_GetObjectItemCaseSensitive(it, "memory_bytes");
		/* numbers a hand-written plan lacks print as '-' */
		char cms[32] = "-", cmm[32] = "-";
		snprintf(mem, sizeof mem, "-");
		if (cJSON_IsNumber(mb))
			fmt_bytes(mb->valuedouble, mem, sizeof mem);
		if (cJSON_IsNumber(cs))
			snprintf(cms, sizeof cms, "%.4f", 1e3 * cs->valuedouble);
		if (cJSON_IsNumber(cm))
			snprintf(cmm, sizeof cmm, "%.4f", 1e3 * cm->valuedouble);
		const cJSON *ff = cJSON_GetObjectItemCaseSensitive(it, "flops_forward"),
		            *fb = cJSON_GetObjectItemCaseSensitive(it, "flops_backward");
		char gf[32] = "-";
		if (cJSON_IsNumber(ff) && cJSON_IsNumber(fb))
			snprintf(gf, sizeof gf, "%.4g", (ff->valuedouble + fb->valuedouble) / 1e9);
		fprintf(out, "%-28s %-20s %-28s %11s %11s %12s %12s\n", it->string,
		        cJSON_IsString(ty) ? ty->valuestring : "?", st, cms, cmm, mem, gf);
	}
}

/* Prints o as one JSON line (strings escaped by cJSON) and frees it;
 * PL_ENOMEM when it cannot. */
static pl_status json_line(cJSON *o, pl_err *err)
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
static void print_parts(const cJSON *ck, FILE *out)
{
	const cJSON *parts = cJSON_GetObjectItemCaseSensitive(ck, "parts"), *p;
	if (!cJSON_IsObject(parts))
		return;
	fputs("parts:\n", out);
	cJSON_ArrayForEach (p, parts) {
		const cJSON *st = cJSON_GetObjectItemCaseSensitive(p, "stages");
		double s0 = cJSON_GetNumberValue(cJSON_GetArrayItem(st, 0)),
		       s1 = cJSON_GetNumberValue(cJSON_GetArrayItem(st, 1));
		fprintf(out, "  %-10s", p->string);
		double w = pl_json_num(p, "weight_cut", 0), e = pl_json_num(p, "experts_cut", 1),
		       r = pl_json_num(p, "replicated", 1);
		if (w > 0)
			fprintf(out, " weights cut %g way%s,", w, w == 1 ? "" : "s");
		fprintf(out, " tokens cut batch %g x sequence %g", pl_json_num(p, "batch_cut", 1),
		        pl_json_num(p, "sequence_cut", 1));
		double ns = pl_json_num(p, "norms_sequence_cut", 1);
		if (ns > pl_json_num(p, "sequence_cut", 1))
			fprintf(out, " (norms: sequence %g)", ns);
		if (e > 1)
			fprintf(out, ", experts over %g ranks", e);
		if (r > 1)
			fprintf(out, ", replicated %g times", r);
		if (cJSON_GetObjectItemCaseSensitive(ck, "pipeline")) {
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
static void print_stage_layers(const cJSON *ck, int stages, FILE *out)
{
	double layers = pl_json_num(cJSON_GetObjectItemCaseSensitive(ck, "search"),
	                            "repeated_layers", 0);
	if (!(layers >= 1) || stages < 2 || stages > 1 << 20)
		return;
	double *att = pl_calloc((size_t)stages, sizeof *att), total = 0;
	if (!att)
		return;
	const cJSON *it;
	cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive(ck, "parallel_strategy_item")) {
		const char *part = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, "part"));
		double st = pl_json_num(it, "stage", -1);
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
static void print_pipeline(const cJSON *ck, FILE *out)
{
	const cJSON *pipe = cJSON_GetObjectItemCaseSensitive(ck, "pipeline");
	if (cJSON_IsObject(pipe)) {
		double stages =
		    cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(pipe, "stages"));
		double vs = pl_json_num(pipe, "virtual_stages", 1);
		double m =
		    cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(pipe, "micro_batches"));
		double sdev =
		    cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(pipe, "stage_devices"));
		char sched[64];
		snprintf(sched, sizeof sched, "%s",
		         stages > 1 ? " (1F1B)"
		         : m > 1    ? " (gradient accumulation)"
		                    : "");
		if (vs > 1)
			snprintf(sched, sizeof sched, " (interleaved 1F1B, %g chunks a device)",
			         vs);
		fprintf(
		    out,
		    "pipeline: %g stage%s of %g device%s, %g micro-batch%s%s; "
		    "ZeRO %g; recompute %s%s\n",
		    stages, stages == 1 ? "" : "s", sdev, sdev == 1 ? "" : "s",
		    m, m == 1 ? "" : "es", sched,
		    cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(ck, "optimizer_shard")),
		    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ck, "recompute")),
		    cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(pipe, "sequence_parallel"))
		        ? "; no sequence parallelism"
		        : "");
		if (stages > 1)
			print_stage_layers(ck, (int)stages, out);
	}
}

/* "KIND degree D (N groups)" of a checkpoint's groups.KIND, after lead */
static void print_degree(FILE *out, const char *lead, const char *kind, const cJSON *groups)
{
	int n = cJSON_GetArraySize(groups);
	fprintf(out, "%s%s degree %d (%d group%s)", lead, kind,
	        cJSON_GetArraySize(cJSON_GetArrayItem(groups, 0)), n, n == 1 ? "" : "s");
}

/* The layers' parallel groups: degrees and counts, then rank 0's groups. */
static void print_groups(const cJSON *ck, FILE *out)
{
	const cJSON *groups = cJSON_GetObjectItemCaseSensitive(ck, "groups");
	const char *kinds[] = {"dp", "tp", "pp", "ep", "sp", "cp"};
	const cJSON *arrs[6];
	for (int k = 0; k < 6; k++)
		arrs[k] = cJSON_GetObjectItemCaseSensitive(groups, kinds[k]);
	if (!cJSON_IsArray(arrs[0]) || !cJSON_IsArray(arrs[1]))
		return;
	const char *gp = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ck, "groups_param"));
	fprintf(out, "layers (%s): ", gp ? gp : "largest param");
	int dpcp = cJSON_GetArraySize(cJSON_GetArrayItem(arrs[0], 0)),
	    cp = cJSON_GetArraySize(cJSON_GetArrayItem(arrs[5], 0));
	if (cJSON_IsArray(arrs[5]) && cp > 1 && dpcp % cp == 0) {
		/* the weight's replicas are data x context parallel (Megatron
		 * reduces the gradients over both) */
		int n = cJSON_GetArraySize(arrs[5]);
		fprintf(out, "dp degree %d, cp degree %d (%d group%s; gradients reduced over dp x cp, "
		             "%d ranks)",
		        dpcp / cp, cp, n, n == 1 ? "" : "s", dpcp);
	} else {
		print_degree(out, "", "dp", arrs[0]);
	}
	print_degree(out, ", ", "tp", arrs[1]);
	if (cJSON_IsArray(arrs[2]))
		print_degree(out, ", ", "pp", arrs[2]);
	if (cJSON_IsArray(arrs[3]))
		print_degree(out, "; experts: ", "ep", arrs[3]);
	fputc('\n', out);
	/* the groups of rank 0, the way launchers print them */
	for (int k = 0; k < 6; k++) {
		const cJSON *first = cJSON_GetArrayItem(arrs[k], 0);
		if (!cJSON_IsArray(first))
			continue;
		/* ranks as integers; a long group shows its first 16 */
		int size = cJSON_GetArraySize(first), i = 0;
		fprintf(out, "  rank 0 %s group: [",
		        k == 0 && cJSON_IsArray(arrs[5]) ? "dp x cp" : kinds[k]);
		const cJSON *r;
		cJSON_ArrayForEach (r, first) {
			if (i == 16) {
				fprintf(out, ", ... (%d ranks)", size);
				break;
			}
			fprintf(out, "%s%.0f", i++ ? ", " : "", r->valuedouble);
		}
		fputs("]\n", out);
	}
}

/* MFU, model TFLOP/s, tokens and samples a second, when the cost has them
 * (pl_ckpt_add_utilisation), each checked before it is printed */
static void print_utilisation(const cJSON *cost, FILE *out)
{
	double mfu = pl_json_num(cost, "mfu", NAN),
	       tf = pl_json_num(cost, "model_tflops_per_device", NAN),
	       tok = pl_json_num(cost, "tokens_per_second_per_device", NAN),
	       smp = pl_json_num(cost, "samples_per_second", NAN);
	if (!(isfinite(mfu) && mfu >= 0 && isfinite(tf) && tf >= 0))
		return;
	fprintf(out, "utilisation: MFU %.1f %%, %.1f model TFLOP/s per device", 100 * mfu, tf);
	if (isfinite(tok) && tok > 0)
		fprintf(out, ", %.0f tokens/s per device", tok);
	if (isfinite(smp) && smp > 0)
		fprintf(out, ", %.4g samples/s", smp);
	double gb = pl_json_num(cost, "global_batch", NAN),
	       tps = pl_json_num(cost, "tokens_per_step", NAN);
	if (isfinite(gb) && gb > 0)
		fprintf(out, "; global batch %.0f", gb);
	if (isfinite(tps) && tps > 0)
		fprintf(out, " (%.0f tokens) a step", tps);
	fputc('\n', out);
	const cJSON *band = cJSON_GetObjectItemCaseSensitive(cost, "step_band_seconds");
	double lo = cJSON_GetNumberValue(cJSON_GetArrayItem(band, 0)),
	       hi = cJSON_GetNumberValue(cJSON_GetArrayItem(band, 1));
	const char *basis =
	    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(cost, "step_band_basis"));
	if (isfinite(lo) && isfinite(hi) && lo > 0 && hi >= lo && basis)
		fprintf(out, "expected measured step: %.4g-%.4g s (%s)\n", lo, hi, basis);
}

static void print_totals(const cJSON *ck, FILE *out)
{
	const cJSON *cost = cJSON_GetObjectItemCaseSensitive(ck, "cost");
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(ck, "search");
	const cJSON *cl = cJSON_GetObjectItemCaseSensitive(ck, "cluster");
	const cJSON *md = cJSON_GetObjectItemCaseSensitive(ck, "model");
	double step = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(cost, "step_seconds"));
	double comp =
	    cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(cost, "compute_seconds"));
	double comm =
	    cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(cost, "communication_seconds"));
	double mem =
	    cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(cost, "peak_memory_bytes"));
	char mb[32];
	fmt_bytes(mem, mb, sizeof mb);
	/* a plan written by hand may lack any of these: say what is missing */
	const char *mname = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(md, "name"));
	const char *cname = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(cl, "name"));
	const char *mode = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(s, "mode"));
	double devs = pl_json_num(cl, "devices", 0);
	fprintf(out, "model %s on %s", mname ? mname : "(not named)",
	        cname ? cname : "(no cluster recorded)");
	if (devs > 0)
		fprintf(out, " (%g devices)", devs);
	/* over what, where the search trimmed its candidates (search.space), and
	 * the options that lift the trims; else over every candidate */
	const char *space = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(s, "space"));
	const char *widen =
	    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(s, "space_widen"));
	if (mode)
		fprintf(out, ", mode %s%s%s%s", mode,
		        cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s, "optimal"))
		            ? ", proven optimal"
		            : ", not proven optimal",
		        space ? " over " : "", space ? space : "");
	fputc('\n', out);
	/* search --framework F: the pricing defaults of F it applied */
	const cJSON *fd = cJSON_GetObjectItemCaseSensitive(s, "framework_defaults"), *d;
	const char *fwn = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(s, "framework"));
	if (cJSON_GetArraySize(fd) > 0) {
		fprintf(out, "  %s defaults:", fwn ? fwn : "framework");
		cJSON_ArrayForEach (d, fd) {
			const char *o = pl_export_price_option(d->string);
			if (o && cJSON_IsString(d))
				fprintf(out, " %s %s", o, d->valuestring);
		}
		fputc('\n', out);
	}
	if (space && widen)
		fprintf(out,
		        "  note: a plan outside that space may be faster: --why-not \"%s\" "
		        "compares\n",
		        widen);
	if (!cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(cost, "step_seconds"))) {
		fputs(
		    "not priced: the checkpoint has no cost; 'planner cost MODEL --strategy CKPT' "
		    "prices it\n",
		    out);
		return;
	}
	const cJSON *why = cJSON_GetObjectItemCaseSensitive(s, "why");
	if (cJSON_IsString(why))
		fprintf(out, "  note: %s\n", why->valuestring);
	double opt =
	    cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(cost, "optimizer_seconds"));
	const cJSON *bj = cJSON_GetObjectItemCaseSensitive(cost, "bubble_seconds");
	if (isnan(opt))
		opt = 0;
	/* the parts add up to the step: the optimizer is printed apart from the
	 * forward and backward kernels it is counted with in compute_seconds */
	fprintf(out, "step %.6f s = compute %.6f s + optimizer %.6f s + communication %.6f s", step,
	        comp - opt, opt, comm);
	if (cJSON_IsNumber(bj))
		fprintf(out, " + bubble %.6f s", bj->valuedouble);
	fprintf(out, "; peak memory %s per device\n", mb);
	print_utilisation(cost, out);
	print_pipeline(ck, out);
	print_groups(ck, out);
	print_parts(ck, out);
}

/* ---- search ---- */

static void on_progress(void *ud, const char *msg)
{
	(void)ud;
	fprintf(stderr, "planner: %s\n", msg);
}

static const char *const search_help =
    "usage: planner search MODEL [options]\n"
    "\n"
    "Finds, for every op of MODEL (planner.model/1 JSON), how to cut its tensors across the\n"
    "devices so that a training step is fastest under the cost model and fits in memory.\n"
    "\n"
    "options:\n"
    "  --devices N           one node of N devices (H100 SXM preset); default 8\n"
    "  --cluster FILE|PRESET cluster.json, or a preset: h100x8, h200x8, a100x8, a100-80gx8,\n"
    "                        dgx2-v100, cpu [:NODES]\n"
    "  --mode MODE           dp (exact, default) | ilp (GLPK) | rec (fast) |\n"
    "                        propagate (from annotations) | auto | brute (small graphs)\n"
    "  --memory-limit BYTES  per-device limit: a number, with K/M/G/T or KiB/MiB/GiB/TiB,\n"
    "                        or 'none'; default: the device memory of the cluster. A plan\n"
    "                        fits with its weights, gradients, optimizer states, kept\n"
    "                        activations, transient bytes (gradients and scratch at their\n"
    "                        most in the backward) and the reserve\n"
    "  --memory-reserve BYTES  of the limit, what the runtime keeps (CUDA context, NCCL\n"
    "                        buffers, allocator); default: the cluster's (GPU presets:\n"
    "                        1.5 GiB + 5 % of the memory; cpu: 0)\n"
    "  --attention-kernel K  the fused attention kernel the job runs, priced at its\n"
    "                        measured rate for the op's shape: flash2 (the GPU presets'\n"
    "                        default), flash3, cudnn (Transformer Engine), flash1, triton,\n"
    "                        or none (the GEMM curve)\n"
    "  --loss-kernel K       how the job computes its cross-entropy loss: unfused (the\n"
    "                        default: PyTorch's cross_entropy, 16-bit logits in fp32,\n"
    "                        as Megatron-LM, torchtitan and autocast run it) or fused\n"
    "                        (one kernel on the logits' dtype: flash-attn's or Liger's,\n"
    "                        llm-foundry's default)\n"
    "  --loss-parallel P     where the loss runs under tensor parallelism: vocab (the\n"
    "                        default: each rank on its slice of the vocabulary, as\n"
    "                        Megatron-LM and torchtitan) or gathered (the logits\n"
    "                        all-gathered and the whole loss on every rank, as Aleph\n"
    "                        Alpha's scaling and Hugging Face models under TP)\n"
    "  --grad-dtype D        16-bit params' gradients: fp32 (the default: accumulated\n"
    "                        and reduced in fp32 main gradients, as Megatron-LM) or\n"
    "                        param (in the params' dtype, cast to fp32 only for the\n"
    "                        optimizer step, as Aleph Alpha's scaling)\n"
    "  --norm-kernel K       how norms run: fused (the default: one kernel each way, as\n"
    "                        apex, Transformer Engine and PyTorch's LayerNorm) or\n"
    "                        unfused (eager PyTorch's pow, mean, rsqrt and products,\n"
    "                        as a hand-written RMSNorm without a fused kernel)\n"
    "  --batch-norm sync|local  training-mode batch norm where the batch is cut: sync\n"
    "                        (the default: statistics all-reduced over the ranks,\n"
    "                        SyncBatchNorm, what one device computes) or local (each\n"
    "                        rank its own, as DDP's BatchNorm: no collective)\n"
    "  --stage-output freed|buffered  the model's output (the logits) after the loss:\n"
    "                        freed (the default) or buffered (a pipeline engine's\n"
    "                        buffers keep the last two micro-batches' outputs on the\n"
    "                        last stage, as Aleph Alpha's scaling and DeepSpeed's\n"
    "                        pipeline engine)\n"
    "  --gemm-dtype fp8|param  the linear layers' GEMMs: param (the default: in the\n"
    "                        params' dtype) or fp8 (Transformer Engine's FP8, as\n"
    "                        Megatron-LM's --fp8-format and NeMo's fp8: their casts,\n"
    "                        FP8 weight copies and FP8 saved inputs; the output layer\n"
    "                        and attention stay 16-bit; needs an H100 or H200)\n"
    "  --load CKPT           keep the strategies of the ops named in CKPT\n"
    "  --time-limit SECONDS  the whole command (reading the model too) within it and\n"
    "                        about a second: the best plan found by then (not proven,\n"
    "                        its gap to a bound said where known), exit 3 if none; ilp,\n"
    "                        auto and whole-job searches keep theirs, dp and rec have\n"
    "                        none before their end; without --mode, exact dp gets 60 %\n"
    "                        of it and auto's fall-back the rest. Without it and\n"
    "                        without --mode, exact dp gets 60 s, then the search\n"
    "                        plans with auto and prints the gap to a bound\n"
    "  --pareto-cap N        (time, memory) points kept per table entry when the memory\n"
    "                        limit binds (default 256); a cut set makes the plan unproven\n"
    "  --dump-lp FILE        ilp: write the instance in CPLEX LP format\n"
    "  --ilp-edges flow|cost ilp's edge encoding: flow (default) or one cost column\n"
    "                        per edge (slower; for comparison)\n"
    "\n"
    "whole-job plan: any of these makes the search plan the whole job; each fixes its\n"
    "dimension and every dimension not given is searched (pipeline stages,\n"
    "micro-batches, ZeRO, recompute; MODE then plans each stage's mesh):\n"
    "  --job                 fix nothing: search every dimension\n"
    "  --pp, --pipeline-stages N|auto   pipeline stages (1F1B), N dividing the devices\n"
    "  --dp N                data parallel: every op cuts the batch into N pieces\n"
    "  --tp N                tensor parallel: every op that reads a weight cuts it N ways\n"
    "                        (Megatron's column/row pairs, head-split attention, vocab-\n"
    "                        parallel head); dp x tp x cp x pp = the devices, and the\n"
    "                        one of dp, tp not given is what is left\n"
    "  --cp N                context parallel: the sequence cut N ways (1 unless given)\n"
    "  --ep N                expert parallel: the experts cut N ways (N divides dp x cp)\n"
    "  --micro-batches N|auto     micro-batches per step, N dividing the batch\n"
    "  --micro-batch-size N  sequences per micro-batch per data-parallel rank\n"
    "                        (Megatron's; batch = N x dp x micro-batches)\n"
    "  --virtual-stages N|auto   model chunks per device (interleaved 1F1B); 1: plain\n"
    "                        1F1B; default: searched where micro-batches fill the stages\n"
    "  --zero 0|1|2|3|auto   optimizer sharding: 1 states, 2 + gradients, 3 + weights;\n"
    "                        2 and 3 do not go with pipeline stages (as DeepSpeed)\n"
    "  --recompute none|full|selective|auto  full: every repeated layer recomputes\n"
    "                        (Megatron's full); selective: each attention core (QK^T,\n"
    "                        softmax, dropout, xV) recomputes, as Megatron's selective\n"
    "  --overlap-grad-reduce on|off  the once-a-step gradient reduction overlaps the\n"
    "                        last micro-batch's backward in 25 MiB buckets (PyTorch DDP,\n"
    "                        Megatron's --overlap-grad-reduce); default off\n"
    "  --sequence-parallel on|off|auto  with tensor parallelism, the ops that read\n"
    "                        no weight (norms, dropouts, residual adds): on cuts them\n"
    "                        over the tensor-parallel ranks (Megatron's --sequence-\n"
    "                        parallel), off replicates them there, the sequence cut\n"
    "                        only by --cp; default auto: the search chooses per op\n"
    "  --max-tp N            the most devices one op's tensor-parallel cut (its weights',\n"
    "                        heads' or vocabulary's pieces) may span; default: one node's\n"
    "                        where the mesh spans nodes (as Megatron-LM); 0: any. Any mode\n"
    "  --replicate on|off|auto  with degrees free, each op's cuts over fewer than all\n"
    "                        devices (replicated over the rest) are candidates too, as a\n"
    "                        fixed degree gives them; off: only cuts of all devices (the\n"
    "                        plan is proven over those); default auto: on for a cluster\n"
    "                        of up to 8 devices. Any mode\n"
    "  --stage-cuts layers|even|uniform|any  where pipeline stages may split the\n"
    "                        model: layers, only between whole repeated layers (the plan\n"
    "                        can be exported); even, the same number of layers on every\n"
    "                        stage, the embedding on the first and the head on the last\n"
    "                        (Megatron-LM's and NeMo's num_layers / pp); uniform, the\n"
    "                        embedding, each layer, the final norm and the head as\n"
    "                        items, the first stages one item longer where they do not\n"
    "                        divide (DeepSpeed's and Aleph Alpha's scaling's\n"
    "                        partition_uniform). even and uniform do not balance memory:\n"
    "                        the first stage keeps the most micro-batches. any (default):\n"
    "                        at any point one activation crosses, such as between a\n"
    "                        layer's attention and its MLP\n"
    "  --framework F         only plans framework F can state and run: megatron, nemo,\n"
    "                        torchtitan, deepspeed, megatron-deepspeed, mindformers.\n"
    "                        One whole-job search a tensor-parallel degree of F's (1, 2,\n"
    "                        4, ... within a node; the one given), every op cut by the\n"
    "                        degrees, F's ZeRO levels, stage split and interleaving,\n"
    "                        sequence parallelism with tp; the first of each search's\n"
    "                        best configurations that 'planner export --to F' states is\n"
    "                        that degree's plan, the fastest of them the answer\n"
    "                        (search.framework, search.space). Dimensions given stay.\n"
    "                        Priced as F runs by default: its attention, loss and norm\n"
    "                        kernels, loss parallelism, gradient dtype, batch-norm\n"
    "                        statistics and gradient-reduction overlap (printed as\n"
    "                        'F defaults:', search.framework_defaults); an option\n"
    "                        given wins\n"
    "  --fastest             take the fastest plan; by default one without pipeline\n"
    "                        stages, ZeRO and recompute is kept when within 2% of it,\n"
    "                        and the default search (no --mode, no layout given) takes\n"
    "                        plain data parallelism when within 2% of its plan\n"
    "  rank order: tp fastest, then cp, dp, pp (Megatron's)\n"
    "\n"
    "output:\n"
    "  -o, --output CKPT     write the strategy checkpoint (atomically)\n"
    "  --json                print the checkpoint JSON on stdout instead of the table\n"
    "  --progress            report progress on stderr\n"
    "  --why-not \"OPTIONS\"  also solve with OPTIONS added (any of the above, e.g.\n"
    "                        \"--tp 8 --pp 4\") and print, instead of the plan, how that\n"
    "                        plan compares with the chosen one (explain --diff; --json\n"
    "                        for its JSON) and whether it is proven best under them\n"
    "  --batch N, --loss cross-entropy|none, --loss-axis 1|last|auto, --const PATTERN,\n"
    "  --dropout auto|keep|drop\n"
    "                        a MODEL.onnx's batch, appended loss, constant initializers\n"
    "                        and Dropout nodes (planner import --help)\n"
    "  -h, --help            this text\n"
    "\n"
    "examples:\n"
    "  planner search examples/gpt-small.json --cluster h100x8 -o plan.json\n"
    "  planner search examples/gpt-small.json --devices 8 --why-not \"--tp 2 --pp 1\"\n"
    "  planner search examples/gpt-small.json --devices 8 --job --top 5 -o plan.json\n"
    "  planner search gpt3-13b.json --cluster h100x8:2 --job -o plan.json\n"
    "  planner search gpt3-13b.json --cluster h100x8:2 --dp 2 --tp 2 --pp 4 -o plan.json\n";

static int cmd_search(int argc, char **argv);
static int explain_diff(const char *pa, const char *label_a, const char *pb, const char *label_b,
                        int json);

/* A scratch file for a checkpoint (path into buf); 0, or -1. */
static int scratch_file(char *buf, size_t n, const char *text)
{
	const char *dir = getenv("TMPDIR");
	snprintf(buf, n, "%s/planner-why-not-XXXXXX", dir && *dir ? dir : "/tmp");
	int fd = mkstemp(buf);
	if (fd < 0)
		return -1;
	size_t len = text ? strlen(text) : 0;
	int bad = text && write(fd, text, len) != (ssize_t)len;
	return close(fd) || bad ? (unlink(buf), -1) : 0;
}

/* search --why-not OPTS: the same search with OPTS appended to its options
 * (the last of an option wins), its plan compared with the chosen one by
 * explain --diff. chosen is the chosen plan's text, out where it was
 * written (or NULL). */
static pl_status search_why_not(int argc, char **argv, const char *why_not, const char *out,
                                const char *chosen, int json, pl_err *err)
{
	char a[4096] = "", b[4096] = "";
	char *opts = pl_strdup(why_not);
	char **av = pl_calloc((size_t)argc + strlen(why_not) / 2 + 8, sizeof *av);
	pl_status st = PL_OK;
	if (!opts || !av) {
		st = pl_err_set(err, PL_ENOMEM, "out of memory");
		goto done;
	}
	if ((!out && scratch_file(a, sizeof a, chosen)) || scratch_file(b, sizeof b, NULL)) {
		st = pl_err_set(err, PL_EWRITE, "--why-not: cannot write a scratch file: %s",
		                strerror(errno));
		goto done;
	}
	/* the same arguments without --why-not, -o and --json; then OPTS */
	int n = 0;
	for (int i = 0; i < argc; i++) {
		const char *x = argv[i];
		int with_value =
		    !strcmp(x, "--why-not") || !strcmp(x, "-o") || !strcmp(x, "--output");
		if (with_value) {
			i++;
			continue;
		}
		if (!strncmp(x, "--why-not=", 10) || !strncmp(x, "--output=", 9) ||
		    (!strncmp(x, "-o", 2) && x[2]) || !strcmp(x, "--json"))
			continue;
		av[n++] = argv[i];
	}
	for (char *t = strtok(opts, " \t\n"); t; t = strtok(NULL, " \t\n"))
		av[n++] = t;
	av[n++] = "-o";
	av[n++] = b;
	av[n] = NULL;
	/* the second search quietly: its messages stay, its table does not */
	fflush(stdout);
	int saved = dup(1), null = open("/dev/null", O_WRONLY);
	if (saved < 0 || null < 0 || dup2(null, 1) < 0) {
		st = pl_err_set(err, PL_EDEVICE, "--why-not: cannot redirect output");
		goto done;
	}
	close(null);
	int save_optind = optind;
	optind = 0;
	int rc = cmd_search(n, av);
	optind = save_optind;
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	if (rc) {
		st = pl_err_set(err, rc == 3 ? PL_EINFEASIBLE : PL_EINVAL,
		                "--why-not \"%s\": no plan under those options (above)", why_not);
		goto done;
	}
	if (!json)
		printf("why not %s:\n", why_not);
	char label[4200];
	snprintf(label, sizeof label, "the plan with %s", why_not);
	rc = explain_diff(out ? out : a, out ? NULL : "the chosen plan", b, label, json);
	if (rc)
		st = pl_err_set(err, PL_EINVAL, "--why-not: the comparison failed (above)");
done:
	if (a[0])
		unlink(a);
	if (b[0])
		unlink(b);
	free(av);
	free(opts);
	return st;
}

/* A document's text as search and import write it (a newline at the end); NULL when
 * out of memory. */
static char *doc_text(const cJSON *ck)
{
	char *txt = cJSON_Print(ck);
	size_t tl = txt ? strlen(txt) : 0;
	char *txtn = txt ? pl_realloc(txt, tl + 2) : NULL;
	if (!txtn) {
		free(txt);
		return NULL;
	}
	txtn[tl] = '\n';
	txtn[tl + 1] = 0;
	return txtn;
}

/* ---- search --top K ---- */

/* A plan's size of group `name` (1 when it has none). */
static long long group_size(const cJSON *ck, const char *name)
{
	const cJSON *g = cJSON_GetObjectItem(cJSON_GetObjectItem(ck, "groups"), name);
	int n = cJSON_GetArraySize(cJSON_GetArrayItem(g, 0));
	return n > 0 ? n : 1;
}

/* An object's "recompute" (a checkpoint or an alternative): none when absent */
static int recompute_of(const cJSON *o)
{
	int rc = pl_recompute_parse(cJSON_GetStringValue(cJSON_GetObjectItem(o, "recompute")));
	return rc < 0 ? PL_RECOMPUTE_NONE : rc;
}

/* The checkpoint's whole-job configuration, as the alternatives list it. */
static void ck_config(const cJSON *ck, long long *pp, long long *m, int *zero, int *rc)
{
	*pp = (long long)pl_json_num(cJSON_GetObjectItem(ck, "pipeline"), "stages", 1);
	*m = (long long)pl_json_num(cJSON_GetObjectItem(ck, "pipeline"), "micro_batches", 1);
	*zero = (int)pl_json_num(ck, "optimizer_shard", 0);
	*rc = recompute_of(ck);
}

/* What makes two plans' configurations differ: dp, tp, pp, ep, micro-batches,
 * interleaving, recompute and ZeRO where it shards anything (dp > 1). */
static void config_key(const cJSON *ck, long long key[8])
{
	long long pp, m;
	int z, rc;
	ck_config(ck, &pp, &m, &z, &rc);
	key[0] = group_size(ck, "dp");
	key[1] = group_size(ck, "tp");
	key[2] = pp;
	key[3] = group_size(ck, "ep");
	key[4] = m;
	key[5] = (long long)pl_json_num(cJSON_GetObjectItem(ck, "pipeline"), "virtual_stages", 1);
	key[6] = rc;
	key[7] = key[0] > 1 ? z : 0;
}

/* search --top's order: the faster step first; steps within 1e-12 of each
 * other by config_key (dp, tp, pp, ep, micro-batches, chunks, recompute,
 * ZeRO), smaller first, so that ties rank the same on every run */
static int top_before(const cJSON *a, const cJSON *b)
{
	double sa = pl_json_num(cJSON_GetObjectItem(a, "cost"), "step_seconds", 0),
	       sb = pl_json_num(cJSON_GetObjectItem(b, "cost"), "step_seconds", 0);
	if (fabs(sa - sb) > 1e-12 * fmax(fabs(sa), fabs(sb)))
		return sa < sb;
	long long ka[8], kb[8];
	config_key(a, ka);
	config_key(b, kb);
	for (int i = 0; i < 8; i++)
		if (ka[i] != kb[i])
			return ka[i] < kb[i];
	return 0;
}

/* path "plan.json" and rank k: "plan.k.json" (".k" at the end without an extension) */
static void ranked_path(char *buf, size_t n, const char *path, int k)
{
	const char *slash = strrchr(path, '/'), *dot = strrchr(path, '.');
	if (dot && (!slash || dot > slash) && dot != path && dot[-1] != '/')
		snprintf(buf, n, "%.*s.%d%s", (int)(dot - path), path, k, dot);
	else
		snprintf(buf, n, "%s.%d", path, k);
}

/* search --top's table (or {"top": [...]} with json) of the n ranked plans */
static void print_top(cJSON *const *cks, int n, char (*paths)[4200], int files, int json)
{
	cJSON *list = json ? cJSON_CreateArray() : NULL;
	if (!json)
		printf("the %d best configurations (each the best plan with it; 1 is the chosen "
		       "plan)\n"
		       " # %5s %5s %5s %5s %5s %9s %9s %11s %12s %10s  %s\n",
		       n, "dp", "tp", "pp", "ep", "zero", "recomp", "micro", "step s", "memory GiB",
		       "proven", files ? "file" : "");
	for (int i = 0; i < n; i++) {
		const cJSON *c = cks[i];
		long long pp, m;
		int z, rc;
		ck_config(c, &pp, &m, &z, &rc);
		double step = pl_json_num(cJSON_GetObjectItem(c, "cost"), "step_seconds", 0);
		double mem = pl_json_num(cJSON_GetObjectItem(c, "cost"), "peak_memory_bytes", 0);
		int proven =
		    cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(c, "search"), "optimal"));
		if (json) {
			cJSON *e = cJSON_CreateObject();
			cJSON_AddNumberToObject(e, "rank", i + 1);
			cJSON_AddNumberToObject(e, "dp", (double)group_size(c, "dp"));
			cJSON_AddNumberToObject(e, "tp", (double)group_size(c, "tp"));
			cJSON_AddNumberToObject(e, "pp", (double)pp);
			cJSON_AddNumberToObject(e, "ep", (double)group_size(c, "ep"));
			cJSON_AddNumberToObject(e, "zero", z);
			cJSON_AddStringToObject(e, "recompute", pl_recompute_name(rc));
			cJSON_AddNumberToObject(e, "micro_batches", (double)m);
			cJSON_AddNumberToObject(e, "step_seconds", step);
			cJSON_AddNumberToObject(e, "peak_memory_bytes", mem);
			cJSON_AddBoolToObject(e, "optimal", proven);
			if (files)
				cJSON_AddStringToObject(e, "file", paths[i]);
			pl_json_push(list, e);
		} else {
			printf("%2d %5lld %5lld %5lld %5lld %5d %9s %9lld %11.6g %12.2f %10s  %s\n",
			       i + 1, group_size(c, "dp"), group_size(c, "tp"), pp,
			       group_size(c, "ep"), z, pl_recompute_name(rc), m, step,
			       mem / 1073741824.0, proven ? "yes" : "no", paths[i]);
		}
	}
	if (json) {
		cJSON *root = cJSON_CreateObject();
		pl_json_add(root, "top", list);
		char *txt = cJSON_Print(root);
		if (txt)
			puts(txt);
		free(txt);
		cJSON_Delete(root);
	}
}

/* search --top K: ck is the chosen plan (rank 1, the search's plan as without
 * --top); the same search keeping K points apart lists the points it planned
 * (search.alternatives), and the best K - 1 other configurations are solved
 * again with their dimensions fixed (what `search` with those options
 * returns), ranked by step, written beside out, and listed. */
static pl_status search_top(pl_graph *g, const pl_cluster *cl, const pl_plan_opts *po, cJSON *ck,
                            int k, const char *out, int json, pl_err *err)
{
	cJSON *cks[PL_MAX_TOP] = {ck};
	char paths[PL_MAX_TOP][4200] = {{0}};
	int n = 1;
	pl_status st = PL_OK;
	long long pp0, m0;
	int z0, r0;
	ck_config(ck, &pp0, &m0, &z0, &r0);
	/* the points: the same search keeping the best k apart (it may explore
	 * more of them than the search whose plan is rank 1) */
	cJSON *all = NULL;
	if (k > 1) {
		pl_plan_opts o = *po;
		o.top = k;
		o.so.progress = NULL;
		if ((st = pl_plan_search(g, cl, &o, &all, NULL, err)))
			goto done;
	}
	const cJSON *a;
	cJSON_ArrayForEach (
	    a, cJSON_GetObjectItem(cJSON_GetObjectItem(all, "search"), "alternatives")) {
		if (n >= k)
			break;
		long long pp = (long long)pl_json_num(a, "pipeline_stages", 1),
		          m = (long long)pl_json_num(a, "micro_batches", 1);
		int z = (int)pl_json_num(a, "optimizer_shard", 0);
		int rc = recompute_of(a);
		if (pp == pp0 && m == m0 && z == z0 && rc == r0)
			continue; /* the chosen plan's point */
		pl_plan_opts o = *po;
		o.top = 0;
		o.so.progress = NULL;
		o.jo.stages = pp;
		o.jo.micro_batches = m;
		o.jo.micro_batch_size = PL_AUTO;
		o.jo.zero = z;
		o.jo.recompute = rc;
		cJSON *c = NULL;
		pl_err e2 = {{0}};
		pl_status s2 = pl_plan_search(g, cl, &o, &c, NULL, &e2);
		if (s2 == PL_ENOMEM) {
			*err = e2;
			st = s2;
			goto done;
		}
		if (s2) /* no plan at this point after all: the next one */
			continue;
		long long key[8], other[8];
		int same = 0;
		config_key(c, key);
		for (int i = 0; i < n && !same; i++) {
			config_key(cks[i], other);
			same = !memcmp(key, other, sizeof key);
		}
		if (same) { /* ZeRO without data parallelism, say: the same plan */
			cJSON_Delete(c);
			continue;
		}
		cks[n++] = c;
	}
	/* ranks 2..n by step (the re-solved plans' own prices), steps equal to
	 * 1e-12 (the same plan's sums in another order) by configuration */
	for (int i = 2; i < n; i++)
		for (int j = i; j > 1 && top_before(cks[j], cks[j - 1]); j--) {
			cJSON *t = cks[j];
			cks[j] = cks[j - 1];
			cks[j - 1] = t;
		}
	for (int i = 1; out && i < n; i++) {
		ranked_path(paths[i], sizeof paths[i], out, i + 1);
		char *txt = doc_text(cks[i]);
		if (!txt) {
			st = pl_err_set(err, PL_ENOMEM, "out of memory");
			goto done;
		}
		st = pl_output_write(paths[i], txt, err);
		free(txt);
		if (st)
			goto done;
	}
	if (out)
		snprintf(paths[0], sizeof paths[0], "%s", out);
	print_top(cks, n, paths, out != NULL, json);
	if (n < k && !json)
		printf("(%d asked for: the search found plans at %d points)\n", k, n);
done:
	for (int i = 1; i < n; i++)
		cJSON_Delete(cks[i]);
	cJSON_Delete(all);
	return st;
}

/* --max-tp N: a device count, 0 for any; nonzero when it is not one */
#define MAX_TP_EXPECTED "--max-tp %s: expected a device count (0: any)"
static int parse_max_tp(const char *arg, long long *v)
{
	return pl_parse_ll(arg, v) || *v < 0 || *v > PL_MAX_DEVICES;
}

/* Long as a command is: its option table and a switch with one
 * short case per option (about 40 options), then load, search, write, print in
 * order. The work is in plan.c; --why-not and --top have functions of their own. */
/* How long the default search (no --mode, no --time-limit) gives exact dp
 * before it plans with auto: PL_DEFAULT_DP_SECONDS, 60 s; the environment
 * variable of the same name sets another (tests). */
#define PL_DEFAULT_DP_SECONDS 60.0
/* With --time-limit, the default search's share of it for exact dp (the
 * rest: auto's fall-back, should dp not end) */
#define PL_DEFAULT_DP_SHARE 0.6
static double default_dp_seconds(void)
{
	const char *v = getenv("PL_DEFAULT_DP_SECONDS");
	char *end;
	double s = v ? strtod(v, &end) : 0;
	return v && *v && !*end && s > 0 && isfinite(s) ? s : PL_DEFAULT_DP_SECONDS;
}

static int cmd_search(int argc, char **argv)
{
	double t_cmd = pl_now(); /* --time-limit counts from here: reading the model too */
	common co = {0};
	const char *mode = "dp", *load = NULL, *out = NULL;
	int mode_given = 0;
	int json = 0, prog = 0, cap = 0;
	const char *dump_lp = NULL, *why_not = NULL, *framework = NULL;
	int cost_edges = -1; /* --ilp-edges: -1 not given */
	int top = 0;         /* --top K */
	pl_job_request jr = PL_JOB_REQUEST_INIT;
	static const struct option opts[] = {
	    ONNX_OPTIONS,
	    {"devices", required_argument, 0, 'd'},
	    {"job", no_argument, 0, 'J'},
	    {"fastest", no_argument, 0, 'F'},
	    {"pipeline-stages", required_argument, 0, 'S'},
	    {"pp", required_argument, 0, 'S'},
	    {"dp", required_argument, 0, OPT_DP},
	    {"tp", required_argument, 0, OPT_TP},
	    {"cp", required_argument, 0, OPT_CP},
	    {"ep", required_argument, 0, OPT_EP},
	    {"micro-batch-size", required_argument, 0, OPT_MBS},
	    {"virtual-stages", required_argument, 0, OPT_VS},
	    {"overlap-grad-reduce", required_argument, 0, OPT_OVERLAP},
	    {"sequence-parallel", required_argument, 0, OPT_SP},
	    {"max-tp", required_argument, 0, OPT_MAX_TP},
	    {"replicate", required_argument, 0, OPT_REPLICATE},
	    {"stage-cuts", required_argument, 0, OPT_STAGE_CUTS},
	    {"framework", required_argument, 0, OPT_FRAMEWORK},
	    {"micro-batches", required_argument, 0, 'B'},
	    {"zero", required_argument, 0, 'Z'},
	    {"recompute", required_argument, 0, 'R'},
	    {"cluster", required_argument, 0, 'c'},
	    {"memory-reserve", required_argument, 0, OPT_RESERVE},
	    {"attention-kernel", required_argument, 0, OPT_ATTN},
	    {"loss-kernel", required_argument, 0, OPT_LOSS_KERN},
	    {"loss-parallel", required_argument, 0, OPT_LOSS_PAR},
	    {"grad-dtype", required_argument, 0, OPT_GRAD_DT},
	    {"norm-kernel", required_argument, 0, OPT_NORM_KERN},
	    {"batch-norm", required_argument, 0, OPT_BN},
	    {"stage-output", required_argument, 0, OPT_STAGE_OUT},
	    {"gemm-dtype", required_argument, 0, OPT_GEMM_DT},
	    {"mode", required_argument, 0, 'm'},
	    {"memory-limit", required_argument, 0, 'M'},
	    {"load", required_argument, 0, 'l'},
	    {"time-limit", required_argument, 0, 't'},
	    {"output", required_argument, 0, 'o'},
	    {"json", no_argument, 0, 'j'},
	    {"progress", no_argument, 0, 'p'},
	    {"pareto-cap", required_argument, 0, 'P'},
	    {"dump-lp", required_argument, 0, 'L'},
	    {"ilp-edges", required_argument, 0, 'E'},
	    {"why-not", required_argument, 0, OPT_WHY_NOT},
	    {"top", required_argument, 0, OPT_TOP},
	    {"help", no_argument, 0, 'h'},
	    {0, 0, 0, 0}};
	int ch;
	opterr = 0;
	int li = 0;
	while ((ch = getopt_long(argc, argv, "ho:", opts, &li)) != -1) {
		switch (ch) {
		case OPT_BATCH:
		case OPT_LOSS:
		case OPT_CONST:
		case OPT_DROPOUT:
		case OPT_LOSS_AXIS:
		case 'd':
		case 'c':
		case 'M':
		case 't':
		case OPT_ATTN:
		case OPT_LOSS_KERN:
		case OPT_LOSS_PAR:
		case OPT_GRAD_DT:
		case OPT_NORM_KERN:
		case OPT_GEMM_DT:
		case OPT_BN:
		case OPT_STAGE_OUT:
		case OPT_RESERVE: {
			int rc = common_opt(ch, optarg, &co, "search");
			if (rc)
				return rc;
			break;
		}
		case 'm':
			mode = optarg;
			mode_given = 1;
			break;
		case 'l': load = optarg; break;
		case 'o': out = optarg; break;
		case 'P': {
			long long v;
			if (pl_parse_ll(optarg, &v) || v < 2 || v > 1000000)
				return pl_cli_usage(
				    "search", "--pareto-cap %s: expected an integer >= 2", optarg);
			cap = (int)v;
			break;
		}
		case 'j': json = 1; break;
		case OPT_WHY_NOT: why_not = optarg; break;
		case OPT_TOP: {
			long long v;
			if (pl_parse_ll(optarg, &v) || v < 1 || v > PL_MAX_TOP)
				return pl_cli_usage("search",
				                    "--top %s: expected an integer from 1 to %d",
				                    optarg, PL_MAX_TOP);
			top = (int)v;
			break;
		}
		case 'L': dump_lp = optarg; break;
		case 'E':
			if (strcmp(optarg, "flow") && strcmp(optarg, "cost"))
				return pl_cli_usage(
				    "search", "--ilp-edges %s: expected flow or cost", optarg);
			cost_edges = !strcmp(optarg, "cost");
			break;
		case 'p': prog = 1; break;
		case 'J': jr.all = 1; break;
		case 'F': jr.fastest = 1; break;
		case 'S':
			if (pl_dim_parse(optarg, 1, 1 << 20, &jr.stages))
				return pl_cli_usage("search",
				                    "--%s %s: expected 'auto' or an integer >= 1",
				                    opts[li].name, optarg);
			break;
		case 'B':
			if (pl_dim_parse(optarg, 1, 1 << 30, &jr.micro_batches))
				return pl_cli_usage("search",
				                    "--micro-batches %s: expected 'auto' or an "
				                    "integer >= 1",
				                    optarg);
			break;
		case OPT_MAX_TP: {
			long long v;
			if (parse_max_tp(optarg, &v))
				return pl_cli_usage("search", MAX_TP_EXPECTED, optarg);
			jr.max_tp = pl_dim_value(v);
			break;
		}
		case OPT_REPLICATE:
			if (!strcmp(optarg, "auto"))
				jr.replicas = pl_dim_auto();
			else if (!strcmp(optarg, "on") || !strcmp(optarg, "off"))
				jr.replicas = pl_dim_value(!strcmp(optarg, "on"));
			else
				return pl_cli_usage(
				    "search", "--replicate %s: expected on, off or auto", optarg);
			break;
		case OPT_FRAMEWORK:
			framework = optarg;
			break;
		case OPT_STAGE_CUTS: {
			/* indexed as pl_job_opts.layer_cuts */
			static const char *const cuts[] = {"any", "layers", "even", "uniform"};
			int k = 0;
			while (k < 4 && strcmp(optarg, cuts[k]))
				k++;
			if (k == 4)
				return pl_cli_usage(
				    "search", "--stage-cuts %s: expected layers, even, uniform or any",
				    optarg);
			jr.layer_cuts = pl_dim_value(k);
			break;
		}
		case OPT_OVERLAP:
		case OPT_SP: {
			int sp = ch == OPT_SP, auto_ok = sp && !strcmp(optarg, "auto");
			if (strcmp(optarg, "on") && strcmp(optarg, "off") && !auto_ok)
				return pl_cli_usage("search", "--%s %s: expected on or off%s",
				                    sp ? "sequence-parallel"
				                       : "overlap-grad-reduce",
				                    optarg, sp ? " or auto" : "");
			*(sp ? &jr.seq_parallel : &jr.overlap) =
			    auto_ok ? pl_dim_auto() : pl_dim_value(!strcmp(optarg, "on"));
			break;
		}
		case OPT_VS:
			if (pl_dim_parse(optarg, 1, PL_JOB_MAX_VIRTUAL, &jr.virtual_stages))
				return pl_cli_usage(
				    "search",
				    "--virtual-stages %s: expected 'auto' or an integer "
				    "from 1 to %d",
				    optarg, PL_JOB_MAX_VIRTUAL);
			break;
		case OPT_DP:
		case OPT_TP:
		case OPT_CP:
		case OPT_EP:
		case OPT_MBS: {
			long long v;
			if (pl_parse_ll(optarg, &v) || v < 1 || v > (1LL << 30))
				return pl_cli_usage("search", "--%s %s: expected an integer >= 1",
				                    opts[li].name, optarg);
			*(ch == OPT_DP   ? &jr.dp
			  : ch == OPT_TP ? &jr.tp
			  : ch == OPT_CP ? &jr.cp
			  : ch == OPT_EP ? &jr.ep
			                 : &jr.micro_batch_size) = pl_dim_value(v);
			break;
		}
		case 'Z':
			if (pl_dim_parse(optarg, 0, 3, &jr.zero))
				return pl_cli_usage(
				    "search", "--zero %s: expected 0, 1, 2, 3 or 'auto'", optarg);
			break;
		case 'R':
			if (!strcmp(optarg, "auto"))
				jr.recompute = pl_dim_auto();
			else if (pl_recompute_parse(optarg) < 0)
				return pl_cli_usage(
				    "search",
				    "--recompute %s: expected none, full, selective or auto",
				    optarg);
			else
				jr.recompute = pl_dim_value(pl_recompute_parse(optarg));
			break;
		case 'h': fputs(search_help, stdout); return 0;
		default:
			return pl_cli_usage("search", "unknown or incomplete option '%s'",
			                    argv[optind - 1]);
		}
	}
	if (optind != argc - 1)
		return pl_cli_usage("search", "expected one MODEL file%s",
		                    optind < argc - 1 ? ", got more" : "");
	if (dump_lp && strcmp(mode, "ilp"))
		return pl_cli_usage("search", "--dump-lp goes with --mode ilp%s", "");
	if (cost_edges >= 0 && strcmp(mode, "ilp"))
		return pl_cli_usage("search", "--ilp-edges goes with --mode ilp%s", "");
	char modes[128];
	if (!pl_searcher_get(mode))
		return pl_cli_usage("search", "--mode %s: expected one of %s", mode,
		                    pl_searcher_names(modes, sizeof modes));
	pl_err err = {{0}};
	pl_plan_opts po = {.mode = mode};
	if (pl_plan_opts_job(&po, &jr, 0, &err))
		return pl_cli_usage("search", "%s", err.msg);
	if (framework && (top || why_not || load))
		return pl_cli_usage("search", "--framework plans alone: without %s",
		                    top ? "--top" : why_not ? "--why-not" : "--load");
	if (top && !po.job)
		return pl_cli_usage("search",
		                    "--top ranks whole-job configurations: it goes with --job or a "
		                    "fixed dimension (--pp, --dp, --tp, --zero, ...)%s",
		                    "");
	if (top && why_not)
		return pl_cli_usage("search", "--top and --why-not: one at a time%s", "");
	if (framework) {
		int known = 0;
		for (int i = 0; i < pl_export_count(); i++)
			known |= !strcmp(framework, pl_export_name(i));
		if (!known)
			return pl_cli_usage("search",
			                    "--framework %s: expected megatron, nemo, torchtitan, "
			                    "deepspeed, megatron-deepspeed or mindformers",
			                    framework);
	}

	pl_graph *g = NULL;
	cJSON *ck = NULL, *loaded = NULL;
	cJSON *fw_defaults = NULL; /* search.framework_defaults */
	char *text = NULL, *txt = NULL;
	pl_cluster cl;
	pl_status st;
	size_t len;
	double secs = 0;
	if ((st = load_model(&g, argv[optind], &co.onnx, &err)) ||
	    (st = resolve_cluster(&co, &cl, &err)))
		goto cleanup;
	if (framework) {
		/* the framework's pricing defaults, an option given kept */
		unsigned given = (co.attention ? 1u << PL_FW_PRICE_ATTENTION : 0) |
		                 (co.loss ? 1u << PL_FW_PRICE_LOSS : 0) |
		                 (co.loss_par ? 1u << PL_FW_PRICE_LOSS_PARALLEL : 0) |
		                 (co.grad_dt ? 1u << PL_FW_PRICE_GRAD_DTYPE : 0) |
		                 (co.norm_k ? 1u << PL_FW_PRICE_NORM : 0) |
		                 (co.bn ? 1u << PL_FW_PRICE_BATCH_NORM : 0) |
		                 (jr.overlap.how != PL_GIVEN_NOT ? 1u << PL_FW_PRICE_OVERLAP : 0);
		if ((st = pl_export_defaults(framework, given, &cl, &jr, &fw_defaults, &err)))
			goto cleanup;
	}
	if (load) {
		if ((st = pl_read_file(load, &text, &len, &err)))
			goto cleanup;
		if ((st = pl_json_parse(text, len, load, &loaded, &err)))
			goto cleanup;
		po.keep = loaded;
		po.keep_where = load;
	}
	pl_search_opts lim = common_search_opts(&co, &cl);
	po.so = (pl_search_opts){.memory_limit = lim.memory_limit,
	                         .time_limit_s = lim.time_limit_s,
	                         .pareto_cap = cap,
	                         .dump_lp = dump_lp,
	                         .ilp_cost_edges = cost_edges > 0,
	                         .progress = prog || isatty(2) ? on_progress : NULL};
	/* the default search is bounded: exact dp for at most default_dp_seconds
	 * (unless --time-limit says otherwise), then auto's plan */
	double bound = !mode_given && !(lim.time_limit_s > 0) ? default_dp_seconds() : 0;
	double search_t0 = pl_now();
	if (bound > 0)
		po.so.time_limit_s = bound;
	else /* every phase gets what is left of --time-limit */
		po.so.time_limit_s = pl_time_left(t_cmd, lim.time_limit_s);
	/* the default search with --time-limit, a per-op plan: exact dp gets
	 * PL_DEFAULT_DP_SHARE of what is left, auto's fall-back the rest (a
	 * whole-job search keeps its best plan at the limit: all of it) */
	double share = !mode_given && !framework && !po.job && lim.time_limit_s > 0
	                   ? PL_DEFAULT_DP_SHARE * po.so.time_limit_s
	                   : 0;
	if (share > 0)
		po.so.time_limit_s = share;
	/* a per-op plan: auto's fall-back runs on the problem dp failed on, in
	 * what is left of the limit (without one, as below: auto from the start) */
	int fell_back = 0;
	if (share > 0) {
		po.fallback = 1;
		po.fallback_s = pl_time_left(t_cmd, lim.time_limit_s);
		po.fell_back = &fell_back;
	}
	st = framework ? pl_export_search(g, &cl, &po, &jr, framework, &ck, &secs, &err)
	               : pl_plan_search(g, &cl, &po, &ck, &secs, &err);
	po.fallback = 0;
	if (fell_back == 1)
		fprintf(stderr,
		        "planner: note: exact dp did not end within %.3g s (%g %% of the time "
		        "limit); the default search plans it with --mode auto in the rest\n",
		        share, 100 * PL_DEFAULT_DP_SHARE);
	else if (fell_back == 2)
		fprintf(stderr,
		        "planner: note: exact dp: the graph is too entangled; the default search "
		        "plans it with --mode auto\n");
	/* without --time-limit (a per-op plan or a whole job), or a whole job
	 * with one whose dp found the graph too entangled: auto from the start */
	int timed_out = st == PL_ETIMEOUT && bound > 0;
	if (st && !framework && !mode_given && !share &&
	    (timed_out || strstr(err.msg, "too entangled for exact dp"))) {
		/* the default search plans every graph: dp where its tables stay
		 * small and it ends in time, else auto's fall-back (rec and a local
		 * search, the gap to a lower bound said) */
		if (timed_out)
			fprintf(
			    stderr,
			    "planner: note: exact dp did not end within the default search's "
			    "%g s (--time-limit S gives it longer); the default search plans it "
			    "with --mode auto\n",
			    bound);
		else
			fprintf(stderr,
			        "planner: note: %s; the default search plans it with --mode auto\n",
			        err.msg);
		po.mode = "auto";
		po.so.time_limit_s = pl_time_left(t_cmd, lim.time_limit_s);
		st = pl_plan_search(g, &cl, &po, &ck, &secs, &err);
	}
	if (st == PL_ETIMEOUT && lim.time_limit_s > 0 && search_t0 - t_cmd > 0) {
		/* the searcher names the time it was given: what was left */
		size_t n = strlen(err.msg);
		snprintf(err.msg + n, sizeof err.msg - n,
		         " (--time-limit %g s counts from the command's start; the search began "
		         "%.3g s into it, after reading the model)",
		         lim.time_limit_s, search_t0 - t_cmd);
	}
	if (st)
		goto cleanup;
	if (fw_defaults) {
		cJSON_AddItemToObject(cJSON_GetObjectItemCaseSensitive(ck, "search"),
		                      "framework_defaults", fw_defaults);
		fw_defaults = NULL;
	}
	/* the default search, nothing of the layout given: plain data
	 * parallelism where it is within PL_JOB_SIMPLER of the fastest plan */
	if (!framework && !mode_given && !jr.fastest && !load && !dump_lp && !top && !why_not) {
		po.so.time_limit_s = pl_time_left(t_cmd, lim.time_limit_s);
		pl_plan_prefer_dp(g, &cl, &po, &jr, &ck, &secs);
	}
	/* a per-op plan: over what, where a whole-job data-parallel plan is faster */
	if (!framework && !mode_given && !load && !dump_lp && !top && !why_not) {
		po.so.time_limit_s = pl_time_left(t_cmd, lim.time_limit_s);
		pl_plan_note_job(g, &cl, &po, &jr, ck, &secs);
	}
	/* propagate: where fronts met, and what it costs */
	const cJSON *conf;
	cJSON_ArrayForEach (conf,
	                    cJSON_GetObjectItem(cJSON_GetObjectItem(ck, "search"), "conflicts")) {
		fprintf(stderr,
		        "planner: conflict: fronts meet at edge '%s' -> '%s' (tensor '%s'), "
		        "adding %.3g s\n",
		        cJSON_GetStringValue(cJSON_GetObjectItem(conf, "from")),
		        cJSON_GetStringValue(cJSON_GetObjectItem(conf, "to")),
		        cJSON_GetStringValue(cJSON_GetObjectItem(conf, "tensor")),
		        cJSON_GetNumberValue(cJSON_GetObjectItem(conf, "seconds")));
	}
	if (!(txt = doc_text(ck))) {
		st = pl_err_set(&err, PL_ENOMEM, "out of memory");
		goto cleanup;
	}
	if (out && (st = pl_output_write(out, txt, &err)))
		goto cleanup;
	if (why_not) {
		st = search_why_not(argc, argv, why_not, out, txt, json, &err);
		goto cleanup;
	}
	if (top) {
		st = search_top(g, &cl, &po, ck, top, out, json, &err);
		goto cleanup;
	}
	/* with the plan on standard output (-o -, -o /dev/stdout) the summary
	 * goes to standard error, so that the output stays one JSON document */
	FILE *say = out && pl_output_is_stdout(out) ? stderr : stdout;
	if (json) {
		if (say == stdout)
			fputs(txt, stdout);
	} else {
		print_totals(ck, say);
		fprintf(say, "search took %.3f s\n", secs);
		print_table(ck, say, 60);
		if (out)
			fprintf(say, "wrote %s\n", out);
	}
cleanup:
	free(txt);
	cJSON_Delete(fw_defaults);
	cJSON_Delete(ck);
	cJSON_Delete(loaded);
	free(text);
	pl_graph_free(g);
	return st ? pl_cli_fail(st, &err) : 0;
}

/* ---- cost ---- */

static const char *const cost_help =
    "usage: planner cost MODEL --strategy CKPT|- [--devices N | --cluster FILE|PRESET]\n"
    "\n"
    "Prices a given plan under the cost model and prints the cost object as one JSON line:\n"
    "{\"step_seconds\", \"compute_seconds\", \"communication_seconds\", \"peak_memory_bytes\"}.\n"
    "The plan needs only parallel_strategy_item. With --strategy -, stdin holds one plan (a\n"
    "JSON object) per line and stdout gets one result per line; a bad line gets\n"
    "{\"error\": \"...\"} and the exit status is 2 at the end.\n"
    "Without --devices or --cluster, the checkpoint's cluster block is used (a preset name,\n"
    "else H100 nodes of its shape).\n"
    "MODEL may be an ONNX file: --batch N, --loss, --const and --dropout as for\n"
    "'planner import'.\n"
    "'planner cost MODEL --from FRAMEWORK FILE|ARGS' prices a framework's configuration\n"
    "(Megatron-LM, NeMo, torchtitan, DeepSpeed, MindFormers): 'planner cost --from x --help'.\n";

/* One priced plan, as 'cost' reports it. */
typedef struct cost_result {
	pl_plancost pc;
	double bubble;         /* < 0: a per-op plan without pipeline fields */
	pl_plan_detail detail; /* pl_plan_detail_free */
	double limit;          /* the device memory it must fit in */
} cost_result;

static cJSON *cost_object(const cost_result *r, const pl_graph *g, const pl_cluster *cl)
{
	return pl_plan_cost_json(g, cl, &r->pc, r->bubble, &r->detail, r->limit);
}

/* The cluster a plan is priced on: --devices/--cluster (saying so on stderr
 * when the plan records another), else the one the plan records; then
 * --memory-reserve. */
static pl_status cost_cluster(const cJSON *plan, const char *where, const common *co,
                              pl_cluster *cl, pl_err *err)
{
	pl_status st;
	if (!co->cluster && !co->devices) {
		if ((st = pl_plan_cluster(plan, where, cl, err)))
			return st;
		return apply_reserve(co, cl, err);
	}
	if ((st = resolve_cluster(co, cl, err)))
		return st;
	pl_cluster rec;
	pl_err e2;
	if (pl_plan_cluster(plan, where, &rec, &e2) == PL_OK) {
		cJSON *a = pl_cluster_to_json(cl), *b = pl_cluster_to_json(&rec);
		if (a && b && !cJSON_Compare(a, b, 1))
			fprintf(stderr,
			        "planner: note: %s was priced on cluster '%s' (%lld devices); "
			        "pricing it on '%s' (%lld devices) as given\n",
			        where, rec.name, (long long)pl_cluster_devices_total(&rec),
			        cl->name, (long long)pl_cluster_devices_total(cl));
		cJSON_Delete(a);
		cJSON_Delete(b);
	}
	return PL_OK;
}

/* Prices one plan object on the cluster of --devices/--cluster, else of its
 * cluster block; on failure err names the op. When keep is set, the plan is
 * lowered for the executor into it (pl_run_plan_free). limit: the
 * device memory to fit in (<= 0: the cluster's). */
static pl_status cost_one(const pl_graph *g, const cJSON *plan, const char *where, const common *co,
                          double limit, cost_result *r, pl_cluster *cl_out, pl_run_plan *keep,
                          pl_err *err)
{
	pl_cluster cl;
	memset(r, 0, sizeof *r);
	pl_status st = cost_cluster(plan, where, co, &cl, err);
	cJSON *made = NULL;
	if (!st && pl_ckpt_is_mindspore(g, plan)) {
		/* MindSpore's own strategy file: its op names are its graph's; the
		 * params' layouts, matched by name, are kept and the rest of the plan
		 * propagated from them, as search --mode propagate --load does */
		pl_plan_opts po = {.mode = "propagate", .keep = plan, .keep_where = where};
		double secs;
		fprintf(
		    stderr,
		    "planner: note: %s is a MindSpore strategy file (no \"format\", none of the "
		    "model's op names): its params' layouts are matched by name, the rest of the "
		    "plan propagated from them\n",
		    where);
		if (!(st = pl_plan_search((pl_graph *)g, &cl, &po, &made, &secs, err)))
			plan = made;
	}
	if (!st)
		st = pl_plan_price(g, plan, where, &cl, &r->pc, &r->bubble, &r->detail, keep, err);
	cJSON_Delete(made);
	if (st) {
		pl_plan_detail_free(&r->detail);
		return st;
	}
	r->limit = limit > 0 ? limit : cl.memory_bytes;
	if (cl_out)
		*cl_out = cl;
	return PL_OK;
}

/* Long as a command is: options, load, price, print. */
static int cmd_cost(int argc, char **argv)
{
	if (pl_cost_has_from(argc, argv)) /* a framework's configuration (export.c) */
		return pl_cmd_cost_from(argc, argv, cmd_search, cmd_cost);
	common co = {0};
	const char *strategy = NULL;
	double limit = 0;
	static const struct option opts[] = {ONNX_OPTIONS,
	                                     {"devices", required_argument, 0, 'd'},
	                                     {"cluster", required_argument, 0, 'c'},
	                                     {"memory-reserve", required_argument, 0, OPT_RESERVE},
	                                     {"attention-kernel", required_argument, 0, OPT_ATTN},
	                                     {"loss-kernel", required_argument, 0, OPT_LOSS_KERN},
	                                     {"loss-parallel", required_argument, 0, OPT_LOSS_PAR},
	                                     {"grad-dtype", required_argument, 0, OPT_GRAD_DT},
	                                     {"norm-kernel", required_argument, 0, OPT_NORM_KERN},
	                                     {"batch-norm", required_argument, 0, OPT_BN},
	                                     {"stage-output", required_argument, 0, OPT_STAGE_OUT},
	                                     {"gemm-dtype", required_argument, 0, OPT_GEMM_DT},
	                                     {"memory-limit", required_argument, 0, 'M'},
	                                     {"strategy", required_argument, 0, 's'},
	                                     {"help", no_argument, 0, 'h'},
	                                     {0, 0, 0, 0}};
	int ch;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case OPT_BATCH:
		case OPT_LOSS:
		case OPT_CONST:
		case OPT_DROPOUT:
		case OPT_LOSS_AXIS:
		case 'd':
		case 'c':
		case OPT_ATTN:
		case OPT_LOSS_KERN:
		case OPT_LOSS_PAR:
		case OPT_GRAD_DT:
		case OPT_NORM_KERN:
		case OPT_GEMM_DT:
		case OPT_BN:
		case OPT_STAGE_OUT:
		case OPT_RESERVE: {
			int rc = common_opt(ch, optarg, &co, "cost");
			if (rc)
				return rc;
			break;
		}
		case 'M':
			if (pl_parse_bytes(optarg, &limit) || !(limit > 0))
				return pl_cli_usage(
				    "cost",
				    "--memory-limit %s: expected bytes such as 80e9, "
				    "80G or 75GiB",
				    optarg);
			break;
		case 's': strategy = optarg; break;
		case 'h': fputs(cost_help, stdout); return 0;
		default:
			return pl_cli_usage("cost", "unknown or incomplete option '%s'",
			                    argv[optind - 1]);
		}
	}
	if (optind != argc - 1)
		return pl_cli_usage("cost", "expected one MODEL file%s", "");
	if (!strategy)
		return pl_cli_usage("cost", "--strategy CKPT or --strategy - is required%s", "");
	pl_err err = {{0}};
	pl_graph *g = NULL;
	pl_status st;
	int rc = 0, over = 0;
	if ((st = load_model(&g, argv[optind], &co.onnx, &err)))
		return pl_cli_fail(st, &err);
	int from_stdin = !strcmp(strategy, "-");
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	long lineno = 0;
	for (;;) {
		char where[64];
		cJSON *plan = NULL;
		if (from_stdin) {
			if ((n = getline(&line, &cap, stdin)) < 0)
				break;
			lineno++;
			if (n == 0 || strspn(line, " \t\r\n") == (size_t)n)
				continue;
			snprintf(where, sizeof where, "stdin:%ld", lineno);
			st = pl_json_parse(line, (size_t)n, where, &plan, &err);
		} else {
			char *text;
			size_t len;
			snprintf(where, sizeof where, "%s", strategy);
			if (!(st = pl_read_file(strategy, &text, &len, &err))) {
				st = pl_json_parse(text, len, strategy, &plan, &err);
				free(text);
			}
		}
		cost_result r;
		pl_cluster pcl;
		if (plan)
			st = cost_one(g, plan, from_stdin ? where : strategy, &co, limit, &r, &pcl,
			              NULL, &err);
		cJSON_Delete(plan);
		if (st) {
			if (!from_stdin) {
				rc = pl_cli_fail(st, &err);
				break;
			}
			cJSON *o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "error", err.msg);
			char *txt = cJSON_PrintUnformatted(o);
			puts(txt ? txt : "{\"error\": \"out of memory\"}");
			fflush(stdout);
			free(txt);
			cJSON_Delete(o);
			fprintf(stderr, "planner: %s\n", err.msg);
			if (!rc)
				rc = pl_status_exit_code(st);
			continue;
		}
		cJSON *o = cost_object(&r, g, &pcl);
		pl_plan_detail_free(&r.detail);
		char *txt = o ? cJSON_PrintUnformatted(o) : NULL;
		cJSON_Delete(o);
		if (!txt) {
			fprintf(stderr, "planner: out of memory\n");
			rc = pl_status_exit_code(PL_ENOMEM);
			break;
		}
		puts(txt);
		fflush(stdout);
		free(txt);
		if (r.pc.mem_bytes > r.limit) {
			over = 1;
			char a[32], b[32];
			fmt_bytes(r.pc.mem_bytes, a, sizeof a);
			fmt_bytes(r.limit, b, sizeof b);
			fprintf(stderr, "planner: %s: the plan does not fit: %s per device of %s\n",
			        where, a, b);
		}
		if (!from_stdin)
			break;
	}
	free(line);
	pl_graph_free(g);
	/* an error outranks a plan that does not fit */
	return rc ? rc : over ? pl_status_exit_code(PL_EINFEASIBLE) : 0;
}

/* ---- strategies ---- */

static const char *const strategies_help =
    "usage: planner strategies MODEL --op NAME [--devices N | --cluster FILE|PRESET]\n"
    "                          [--max-tp N]\n"
    "\n"
    "Prints the candidate strategies of one op as JSON: for each, the MindSpore-style\n"
    "per-input split tuples, its compute and communication seconds and its memory per device.\n"
    "They are the candidates 'planner search' chooses from: on a cluster of several nodes\n"
    "a tensor-parallel cut stays inside one unless --max-tp N says otherwise (0: any).\n"
    "MODEL may be an ONNX file: --batch N, --loss, --const and --dropout as for\n"
    "'planner import'.\n";

static int cmd_strategies(int argc, char **argv)
{
	common co = {0};
	const char *opname = NULL;
	pl_job limits = {0};
	static const struct option opts[] = {ONNX_OPTIONS,
	                                     {"devices", required_argument, 0, 'd'},
	                                     {"cluster", required_argument, 0, 'c'},
	                                     {"op", required_argument, 0, 'o'},
	                                     {"max-tp", required_argument, 0, OPT_MAX_TP},
	                                     {"help", no_argument, 0, 'h'},
	                                     {0, 0, 0, 0}};
	int ch;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case OPT_BATCH:
		case OPT_LOSS:
		case OPT_CONST:
		case OPT_DROPOUT:
		case OPT_LOSS_AXIS:
		case 'd':
		case 'c': {
			int rc = common_opt(ch, optarg, &co, "strategies");
			if (rc)
				return rc;
			break;
		}
		case 'o': opname = optarg; break;
		case OPT_MAX_TP: {
			long long v;
			if (parse_max_tp(optarg, &v))
				return pl_cli_usage("strategies", MAX_TP_EXPECTED, optarg);
			limits.max_tp = v > 0 ? v : -1;
			break;
		}
		case 'h': fputs(strategies_help, stdout); return 0;
		default:
			return pl_cli_usage("strategies", "unknown or incomplete option '%s'",
			                    argv[optind - 1]);
		}
	}
	if (optind != argc - 1 || !opname)
		return pl_cli_usage("strategies", "expected MODEL and --op NAME%s", "");
	pl_err err = {{0}};
	pl_graph *g = NULL;
	pl_problem *p = NULL;
	pl_cluster cl;
	pl_status st;
	int rc = 0;
	if ((st = load_model(&g, argv[optind], &co.onnx, &err)) ||
	    (st = resolve_cluster(&co, &cl, &err))) {
		rc = pl_cli_fail(st, &err);
		goto done;
	}
	int o = pl_graph_find_op(g, opname);
	if (o < 0) {
		rc = pl_cli_fail(pl_err_set(&err, PL_EINVAL,
		                            "%s: --op %s: the model has no op of that name",
		                            argv[optind], opname),
		                 &err);
		goto done;
	}
	if ((st = pl_problem_new_job(&p, g, &cl, &limits, &err))) {
		rc = pl_cli_fail(st, &err);
		goto done;
	}
	const pl_op *op = &g->ops[o];
	const pl_nodecost *nc = pl_problem_node(p, o);
	cJSON *root = cJSON_CreateObject();
	cJSON_AddStringToObject(root, "op", op->name);
	cJSON_AddStringToObject(root, "type", pl_optype_name(op->type));
	cJSON_AddNumberToObject(root, "devices", (double)p->devices);
	cJSON_AddBoolToObject(root, "annotated", op->has_strategy);
	cJSON *arr = cJSON_AddArrayToObject(root, "strategies");
	for (int s = 0; nc && s < p->nstrat[o]; s++) {
		int64_t tuples[PL_MAX_OP_INPUTS][PL_MAX_RANK];
		pl_op_split_to_tuples(g, op, p->strat[o] + (size_t)s * op->spec.nloops, tuples);
		cJSON *e = cJSON_CreateObject();
		cJSON *ps = cJSON_AddArrayToObject(e, "parallel_strategy");
		for (int i = 0; i < op->ninputs; i++) {
			cJSON *t = cJSON_CreateArray();
			for (int d = 0; d < g->tensors[op->in[i]].rank; d++)
				pl_json_push(t, cJSON_CreateNumber((double)tuples[i][d]));
			pl_json_push(ps, t);
		}
		cJSON_AddNumberToObject(e, "compute_seconds", nc[s].compute_s);
		cJSON_AddNumberToObject(e, "communication_seconds", nc[s].comm_s);
		cJSON_AddNumberToObject(e, "memory_bytes", nc[s].mem_bytes);
		pl_json_push(arr, e);
	}
	char *txt = cJSON_Print(root);
	if (txt)
		puts(txt);
	else
		rc = pl_cli_fail(pl_err_set(&err, PL_ENOMEM, "out of memory"), &err);
	free(txt);
	cJSON_Delete(root);
done:
	pl_problem_free(p);
	pl_graph_free(g);
	return rc;
}

/* ---- bench ---- */

static const char *const bench_help =
    "usage: planner bench MODEL [options]\n"
    "\n"
    "Runs several search modes on one model and cluster and prints them side by side:\n"
    "search time, step time, peak memory per device, the step against the fastest mode's,\n"
    "and whether the plan is proven optimal. A mode that fails says why in its row.\n"
    "\n"
    "options:\n"
    "  --modes LIST          comma-separated: dp, rec, ilp, auto, propagate, brute\n"
    "                        (default dp,rec,ilp,auto)\n"
    "  --devices N | --cluster FILE|PRESET   as for search; default 8 H100s\n"
    "  --memory-limit BYTES|none  --memory-reserve BYTES   as for search\n"
    "  --attention-kernel K  --loss-kernel K  --loss-parallel P  --grad-dtype D\n"
    "  --norm-kernel K, --batch-norm sync|local, --stage-output freed|buffered,\n"
    "  --gemm-dtype fp8|param\n"
    "                        as for search\n"
    "  --time-limit SECONDS  for each mode\n"
    "  --job                 whole-job plans, each mode as the inner searcher\n"
    "  --csv                 CSV on stdout instead of the table\n"
    "  --plot FILE.svg       also a bar chart of step and search time (needs gnuplot;\n"
    "                        without it the table alone, and a note on stderr)\n"
    "  --batch N, --loss cross-entropy|none, --loss-axis 1|last|auto, --const PATTERN,\n"
    "  --dropout auto|keep|drop\n"
    "                        a MODEL.onnx's batch, appended loss, constant initializers\n"
    "                        and Dropout nodes (planner import --help)\n"
    "  -h, --help            this text\n"
    "\n"
    "exit status: 0 when some mode planned (rows of the others say why), else the\n"
    "first mode's failure (2, 3 or 4).\n"
    "\n"
    "example:\n"
    "  planner bench examples/gpt-small.json --devices 8 --modes dp,rec,ilp --csv\n";

typedef struct bench_row {
	char mode[32];
	int ok, proven;
	double search_s, step_s, mem;
	char why[sizeof(pl_err)];
} bench_row;

/* whether an executable named prog is on the PATH */
static int on_path(const char *prog)
{
	const char *path = getenv("PATH");
	char dir[4096];
	while (path && *path) {
		size_t n = strcspn(path, ":");
		if (n > 0 && n + strlen(prog) + 2 < sizeof dir) {
			snprintf(dir, sizeof dir, "%.*s/%s", (int)n, path, prog);
			if (access(dir, X_OK) == 0)
				return 1;
		}
		path += n + (path[n] == ':');
	}
	return 0;
}

static void bench_plot(const char *file, const bench_row *rows, int n)
{
	if (!on_path("gnuplot")) {
		fprintf(stderr, "planner bench: gnuplot not found; no plot written\n");
		return;
	}
	/* a gnuplot that exits early must not take this process down */
	void (*old)(int) = signal(SIGPIPE, SIG_IGN);
	FILE *gp = popen("gnuplot 2>/dev/null", "w");
	if (!gp) {
		signal(SIGPIPE, old);
		fprintf(stderr, "planner bench: gnuplot could not be started; no plot written\n");
		return;
	}
	fprintf(gp, "set terminal svg size 720,360\nset output '%s'\n", file);
	fprintf(gp, "set style data histograms\nset style fill solid 0.8\nset boxwidth 0.8\n"
	            "set ylabel 'seconds'\nset y2label 'search seconds'\nset ytics nomirror\n"
	            "set y2tics\nset key top left\n$d << EOD\n");
	for (int k = 0; k < n; k++)
		if (rows[k].ok)
			fprintf(gp, "%s %.9g %.9g\n", rows[k].mode, rows[k].step_s,
			        rows[k].search_s);
	fprintf(gp, "EOD\nplot $d using 2:xtic(1) title 'step', '' using 3 axes x1y2 title "
	            "'search'\n");
	if (pclose(gp) != 0)
		fprintf(stderr, "planner bench: gnuplot failed; no plot written\n");
	signal(SIGPIPE, old);
}

/* Long as a command is: options, one search per mode, the table. */
static int cmd_bench(int argc, char **argv)
{
	common co = {0};
	const char *modes = "dp,rec,ilp,auto", *plot = NULL;
	int csv = 0;
	pl_job_request jr = PL_JOB_REQUEST_INIT;
	static const struct option opts[] = {ONNX_OPTIONS,
	                                     {"devices", required_argument, 0, 'd'},
	                                     {"cluster", required_argument, 0, 'c'},
	                                     {"memory-reserve", required_argument, 0, OPT_RESERVE},
	                                     {"attention-kernel", required_argument, 0, OPT_ATTN},
	                                     {"loss-kernel", required_argument, 0, OPT_LOSS_KERN},
	                                     {"loss-parallel", required_argument, 0, OPT_LOSS_PAR},
	                                     {"grad-dtype", required_argument, 0, OPT_GRAD_DT},
	                                     {"norm-kernel", required_argument, 0, OPT_NORM_KERN},
	                                     {"batch-norm", required_argument, 0, OPT_BN},
	                                     {"stage-output", required_argument, 0, OPT_STAGE_OUT},
	                                     {"gemm-dtype", required_argument, 0, OPT_GEMM_DT},
	                                     {"modes", required_argument, 0, 'm'},
	                                     {"memory-limit", required_argument, 0, 'M'},
	                                     {"time-limit", required_argument, 0, 't'},
	                                     {"job", no_argument, 0, 'J'},
	                                     {"csv", no_argument, 0, 'C'},
	                                     {"plot", required_argument, 0, 'P'},
	                                     {"help", no_argument, 0, 'h'},
	                                     {0, 0, 0, 0}};
	int ch;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case OPT_BATCH:
		case OPT_LOSS:
		case OPT_CONST:
		case OPT_DROPOUT:
		case OPT_LOSS_AXIS:
		case 'd':
		case 'c':
		case 'M':
		case 't':
		case OPT_ATTN:
		case OPT_LOSS_KERN:
		case OPT_LOSS_PAR:
		case OPT_GRAD_DT:
		case OPT_NORM_KERN:
		case OPT_GEMM_DT:
		case OPT_BN:
		case OPT_STAGE_OUT:
		case OPT_RESERVE: {
			int rc = common_opt(ch, optarg, &co, "bench");
			if (rc)
				return rc;
			break;
		}
		case 'm': modes = optarg; break;
		case 'J': jr.all = 1; break;
		case 'C': csv = 1; break;
		case 'P': plot = optarg; break;
		case 'h': fputs(bench_help, stdout); return 0;
		default:
			return pl_cli_usage("bench", "unknown or incomplete option '%s'",
			                    argv[optind - 1]);
		}
	}
	if (optind != argc - 1)
		return pl_cli_usage("bench", "expected one MODEL file%s",
		                    optind < argc - 1 ? ", got more" : "");
	/* the modes, checked before anything runs */
	char list[256];
	snprintf(list, sizeof list, "%s", modes);
	bench_row rows[16];
	int n = 0;
	for (char *save = NULL, *m = strtok_r(list, ",", &save); m;
	     m = strtok_r(NULL, ",", &save)) {
		char modes[128];
		if (!pl_searcher_get(m))
			return pl_cli_usage("bench", "--modes: '%s' is not a mode (%s)", m,
			                    pl_searcher_names(modes, sizeof modes));
		if (n == 16)
			return pl_cli_usage("bench", "--modes: at most %d modes", 16);
		memset(&rows[n], 0, sizeof rows[n]);
		snprintf(rows[n++].mode, sizeof rows[0].mode, "%s", m);
	}
	if (!n)
		return pl_cli_usage("bench", "--modes: expected at least one mode%s", "");
	pl_err err = {{0}};
	pl_graph *g = NULL;
	pl_cluster cl;
	pl_status st, first = PL_OK;
	if ((st = load_model(&g, argv[optind], &co.onnx, &err)) ||
	    (st = resolve_cluster(&co, &cl, &err))) {
		pl_graph_free(g);
		return pl_cli_fail(st, &err);
	}
	int planned = 0;
	double best = INFINITY;
	for (int k = 0; k < n; k++) {
		pl_plan_opts po = {.mode = rows[k].mode, .so = common_search_opts(&co, &cl)};
		cJSON *ck = NULL;
		pl_err e = {{0}};
		double secs = 0;
		st = pl_plan_opts_job(&po, &jr, 0, &e);
		if (!st)
			st = pl_plan_search(g, &cl, &po, &ck, &secs, &e);
		if (st) {
			if (!first) {
				first = st;
				err = e;
			}
			snprintf(rows[k].why, sizeof rows[k].why, "%s", e.msg);
			continue;
		}
		const cJSON *cost = cJSON_GetObjectItemCaseSensitive(ck, "cost");
		rows[k].ok = 1;
		rows[k].search_s = secs;
		rows[k].step_s = pl_json_num(cost, "step_seconds", NAN);
		rows[k].mem = pl_json_num(cost, "peak_memory_bytes", NAN);
		rows[k].proven = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(
		    cJSON_GetObjectItemCaseSensitive(ck, "search"), "optimal"));
		best = fmin(best, rows[k].step_s);
		planned++;
		cJSON_Delete(ck);
	}
	if (csv)
		puts(
		    "mode,search_seconds,step_seconds,peak_memory_bytes,step_vs_best,proven,error");
	else
		printf("model %s on %s (%lld devices)%s\n%-10s %12s %14s %12s %9s %7s\n", g->name,
		       cl.name, (long long)pl_cluster_devices_total(&cl),
		       jr.all ? ", whole job" : "", "mode", "search s", "step s", "memory",
		       "vs best", "proven");
	for (int k = 0; k < n; k++) {
		const bench_row *r = &rows[k];
		if (csv) {
			/* the error text quoted as CSV does ("" for a quote) */
			char q[2 * sizeof(pl_err)];
			size_t j = 0;
			for (const char *c = r->why; *c && j + 3 < sizeof q; c++) {
				if (*c == '"')
					q[j++] = '"';
				q[j++] = *c;
			}
			q[j] = 0;
			if (r->ok)
				printf("%s,%.6g,%.9g,%.0f,%.6f,%s,\n", r->mode, r->search_s,
				       r->step_s, r->mem, r->step_s / best,
				       r->proven ? "true" : "false");
			else
				printf("%s,,,,,,\"%s\"\n", r->mode, q);
		} else if (r->ok) {
			char mb[32];
			fmt_bytes(r->mem, mb, sizeof mb);
			printf("%-10s %12.3f %14.6f %12s %9.4f %7s\n", r->mode, r->search_s,
			       r->step_s, mb, r->step_s / best, r->proven ? "yes" : "no");
		} else {
			printf("%-10s %s\n", r->mode, r->why);
		}
	}
	if (plot && planned)
		bench_plot(plot, rows, n);
	pl_graph_free(g);
	if (!planned)
		return pl_cli_fail(first, &err);
	return 0;
}

/* ---- explain ---- */

/* A checkpoint's communication by collective and link class (its
 * cost.communication_by_collective) as rows: index k * PL_LINK_COUNT + l for
 * collective k on link l, PL_COMM_ROWS - 1 for the local slices. Unknown
 * entries are skipped. Returns 0 when the checkpoint has none (written
 * before it, or by hand). */
#define PL_COMM_ROWS (PL_COLL_COUNT * PL_LINK_COUNT + 1)

/* row r's collective and link class, as the checkpoint names them */
static void comm_row_keys(int r, const char **coll, const char **link)
{
	int slice = r == PL_COMM_ROWS - 1;
	*coll = slice ? "slice" : pl_coll_name((pl_coll)(r / PL_LINK_COUNT));
	*link = slice ? "local" : pl_link_name(r % PL_LINK_COUNT);
}

static int comm_rows(const cJSON *ck, double *sec, double *bytes, double *hidden)
{
	const cJSON *cost = cJSON_GetObjectItemCaseSensitive(ck, "cost");
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(cost, "communication_by_collective"), *e;
	for (int r = 0; r < PL_COMM_ROWS; r++)
		sec[r] = bytes[r] = 0;
	*hidden = pl_json_num(cost, "communication_hidden_seconds", 0);
	if (!cJSON_IsArray(a))
		return 0;
	cJSON_ArrayForEach (e, a) {
		const char *c = cJSON_GetStringValue(
		               cJSON_GetObjectItemCaseSensitive(e, "collective")),
		           *l = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "link"));
		int r = -1;
		for (int k = 0; c && l && r < 0 && k < PL_COMM_ROWS; k++) {
			const char *kc, *kl;
			comm_row_keys(k, &kc, &kl);
			if (!strcmp(c, kc) && !strcmp(l, kl))
				r = k;
		}
		if (r < 0)
			continue;
		sec[r] += pl_json_num(e, "seconds", 0);
		bytes[r] += pl_json_num(e, "bus_bytes", 0);
	}
	return 1;
}

static void comm_row_name(int r, char *buf, size_t n)
{
	const char *c, *l;
	comm_row_keys(r, &c, &l);
	snprintf(buf, n, "%-15s %-11s", c, l);
}

/* explain: where the communication goes (the bottleneck stage's, per device
 * a step) and, for a pipelined plan, every stage's memory by category */
static void print_comm_memory(const cJSON *ck, FILE *out)
{
	double sec[PL_COMM_ROWS], bytes[PL_COMM_ROWS], hidden;
	const cJSON *cost = cJSON_GetObjectItemCaseSensitive(ck, "cost");
	if (comm_rows(ck, sec, bytes, &hidden)) {
		fprintf(out, "communication by collective and link class (per device a step%s):\n",
		        cJSON_GetObjectItemCaseSensitive(ck, "pipeline") ? ", bottleneck stage"
		                                                         : "");
		fprintf(out, "  %-15s %-11s %12s %12s\n", "collective", "link", "seconds",
		        "bus bytes");
		for (int r = 0; r < PL_COMM_ROWS; r++) {
			if (!(sec[r] > 0))
				continue;
			char name[64], b[32];
			comm_row_name(r, name, sizeof name);
			fmt_bytes(bytes[r], b, sizeof b);
			fprintf(out, "  %s %12.6f %12s\n", name, sec[r],
			        r == PL_COMM_ROWS - 1 ? "-" : b);
		}
		if (hidden > 0)
			fprintf(out, "  %-27s %12.6f\n", "hidden behind the backward", -hidden);
		fprintf(out, "  %-27s %12.6f\n", "= communication",
		        pl_json_num(cost, "communication_seconds", 0));
	}
	const cJSON *sm = cJSON_GetObjectItemCaseSensitive(
	                cJSON_GetObjectItemCaseSensitive(ck, "pipeline"), "stage_memory_bytes"),
	            *e;
	if (!cJSON_IsArray(sm))
		return;
	fprintf(out,
	        "memory per device by stage (the peak stage's, with the reserve, is the peak):\n");
	fprintf(out, "  %-6s %12s %12s %17s %12s %12s\n", "stage", "weights", "gradients",
	        "optimizer_states", "activations", "transient");
	int k = 0;
	cJSON_ArrayForEach (e, sm) {
		char c[5][32];
		for (int j = 0; j < 5; j++)
			fmt_bytes(pl_json_num(e, pl_ckpt_mem_names[j], 0), c[j], sizeof c[j]);
		fprintf(out, "  %-6d %12s %12s %17s %12s %12s\n", k++, c[0], c[1], c[2], c[3],
		        c[4]);
	}
}

/* What differs between plans a and b of one model: the totals and their
 * differences; per op, the strategy and stage and the differences of its
 * time and memory; and the rest of each difference (what the per-op
 * numbers do not add up to: the pipeline's bubble and stage balance, the
 * peak stage, the transient bytes, the reserve), so that the lines add up
 * to the totals'. */
/* label_a, label_b: how to name the plans in the text (NULL: their paths)
 * Long on purpose: each line of the comparison is written to
 * the text and to the JSON in the same place, so that the two cannot
 * disagree; split, the halves would share every total and difference. */
static int explain_diff(const char *pa, const char *label_a, const char *pb, const char *label_b,
                        int json)
{
	pl_err err = {{0}};
	cJSON *a = NULL, *b = NULL;
	pl_status st;
	if ((st = pl_cli_read_ckpt(pa, &a, &err)) || (st = pl_cli_read_ckpt(pb, &b, &err))) {
		cJSON_Delete(a);
		return pl_cli_fail(st, &err);
	}
	const char *sa = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
	               cJSON_GetObjectItemCaseSensitive(a, "model"), "sha256")),
	           *sb = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
	               cJSON_GetObjectItemCaseSensitive(b, "model"), "sha256"));
	if (sa && sb && strcmp(sa, sb)) {
		st = pl_err_set(&err, PL_EINVAL,
		                "%s and %s are plans of different models (model.sha256 %s and %s)",
		                pa, pb, sa, sb);
		cJSON_Delete(a);
		cJSON_Delete(b);
		return pl_cli_fail(st, &err);
	}
	const cJSON *ca = cJSON_GetObjectItemCaseSensitive(a, "cost"),
	            *cb = cJSON_GetObjectItemCaseSensitive(b, "cost");
	const cJSON *ia = cJSON_GetObjectItemCaseSensitive(a, "parallel_strategy_item"),
	            *ib = cJSON_GetObjectItemCaseSensitive(b, "parallel_strategy_item");
	cJSON *out = cJSON_CreateObject(), *ops = cJSON_AddArrayToObject(out, "ops");
	/* per part of the model (the ops' "part"), the ops' sums */
	cJSON *parts = cJSON_CreateObject();
	double dt = 0, dm = 0; /* per-op sums */
	int changed = 0, total = 0;
	const cJSON *x;
	cJSON_ArrayForEach (x, ia) {
		const cJSON *y = cJSON_GetObjectItemCaseSensitive(ib, x->string);
		total++;
		if (!y) {
			st = pl_err_set(&err, PL_EINVAL, "%s: op '%s' is not in %s", pa, x->string,
			                pb);
			cJSON_Delete(a);
			cJSON_Delete(b);
			cJSON_Delete(out);
			return pl_cli_fail(st, &err);
		}
		char s1[256], s2[256];
		fmt_strategy(cJSON_GetObjectItemCaseSensitive(x, "parallel_strategy"), s1,
		             sizeof s1);
		fmt_strategy(cJSON_GetObjectItemCaseSensitive(y, "parallel_strategy"), s2,
		             sizeof s2);
		double t = pl_json_num(y, "compute_seconds", 0) +
		           pl_json_num(y, "communication_seconds", 0) -
		           pl_json_num(x, "compute_seconds", 0) -
		           pl_json_num(x, "communication_seconds", 0);
		double m = pl_json_num(y, "memory_bytes", 0) - pl_json_num(x, "memory_bytes", 0);
		dt += t;
		dm += m;
		int stage_a = (int)pl_json_num(x, "stage", 0),
		    stage_b = (int)pl_json_num(y, "stage", 0);
		int same = !strcmp(s1, s2) && stage_a == stage_b && t == 0 && m == 0;
		const char *pn = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(x, "part"));
		if (pn) {
			cJSON *pe = cJSON_GetObjectItemCaseSensitive(parts, pn);
			if (!pe) {
				pe = cJSON_AddObjectToObject(parts, pn);
				cJSON_AddNumberToObject(pe, "ops", 0);
				cJSON_AddNumberToObject(pe, "ops_changed", 0);
				cJSON_AddNumberToObject(pe, "seconds_delta", 0);
				cJSON_AddNumberToObject(pe, "memory_bytes_delta", 0);
			}
			const char *k[4] = {"ops", "ops_changed", "seconds_delta",
			                    "memory_bytes_delta"};
			double add[4] = {1, !same, t, m};
			for (int j = 0; pe && j < 4; j++) {
				cJSON *v = cJSON_GetObjectItemCaseSensitive(pe, k[j]);
				if (v)
					cJSON_SetNumberValue(v, v->valuedouble + add[j]);
			}
		}
		if (same)
			continue;
		changed++;
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "op", x->string);
		cJSON_AddStringToObject(o, "a", s1);
		cJSON_AddStringToObject(o, "b", s2);
		cJSON_AddNumberToObject(o, "stage_a", stage_a);
		cJSON_AddNumberToObject(o, "stage_b", stage_b);
		cJSON_AddNumberToObject(o, "seconds_delta", t);
		cJSON_AddNumberToObject(o, "memory_bytes_delta", m);
		pl_json_push(ops, o);
	}
	if (cJSON_GetArraySize(parts) > 0)
		pl_json_add(out, "parts", parts);
	else
		cJSON_Delete(parts);
	double step_d = pl_json_num(cb, "step_seconds", NAN) - pl_json_num(ca, "step_seconds", NAN);
	double mem_d =
	    pl_json_num(cb, "peak_memory_bytes", NAN) - pl_json_num(ca, "peak_memory_bytes", NAN);
	/* communication by collective and link class: the rows' deltas less the
	 * hidden part's add up to the communication's */
	double sa_[PL_COMM_ROWS], ba_[PL_COMM_ROWS], ha, sb_[PL_COMM_ROWS], bb_[PL_COMM_ROWS], hb;
	int have_comm = comm_rows(a, sa_, ba_, &ha) && comm_rows(b, sb_, bb_, &hb);
	double comm_d = pl_json_num(cb, "communication_seconds", NAN) -
	                pl_json_num(ca, "communication_seconds", NAN);
	cJSON_AddNumberToObject(out, "communication_seconds_delta", comm_d);
	if (have_comm) {
		cJSON *cl = cJSON_AddArrayToObject(out, "communication");
		for (int r = 0; r < PL_COMM_ROWS; r++) {
			if (!(sa_[r] > 0) && !(sb_[r] > 0))
				continue;
			cJSON *o = cJSON_CreateObject();
			const char *c, *l;
			comm_row_keys(r, &c, &l);
			cJSON_AddStringToObject(o, "collective", c);
			cJSON_AddStringToObject(o, "link", l);
			cJSON_AddNumberToObject(o, "a_seconds", sa_[r]);
			cJSON_AddNumberToObject(o, "b_seconds", sb_[r]);
			cJSON_AddNumberToObject(o, "seconds_delta", sb_[r] - sa_[r]);
			cJSON_AddNumberToObject(o, "bus_bytes_delta", bb_[r] - ba_[r]);
			pl_json_push(cl, o);
		}
		cJSON_AddNumberToObject(out, "communication_hidden_seconds_delta", hb - ha);
	}
	cJSON_AddNumberToObject(out, "step_seconds_delta", step_d);
	cJSON_AddNumberToObject(out, "ops_seconds_delta", dt);
	cJSON_AddNumberToObject(out, "rest_seconds_delta", step_d - dt);
	cJSON_AddNumberToObject(out, "peak_memory_bytes_delta", mem_d);
	cJSON_AddNumberToObject(out, "ops_memory_bytes_delta", dm);
	cJSON_AddNumberToObject(out, "rest_memory_bytes_delta", mem_d - dm);
	int rc = 0;
	if (json) {
		if ((st = json_line(out, &err)))
			rc = pl_cli_fail(st, &err);
		out = NULL;
	} else {
		printf("A: %s\n", label_a ? label_a : pa);
		print_totals(a, stdout);
		printf("B: %s\n", label_b ? label_b : pb);
		print_totals(b, stdout);
		const cJSON *pe;
		if (cJSON_GetObjectItem(out, "parts"))
			printf("\nby part of the model\n%-12s %12s %12s %12s\n", "part",
			       "ops differ", "time ms", "memory");
		cJSON_ArrayForEach (pe, cJSON_GetObjectItem(out, "parts")) {
			char mb[32], n[32];
			double m = pl_json_num(pe, "memory_bytes_delta", 0);
			fmt_bytes(fabs(m), mb, sizeof mb);
			snprintf(n, sizeof n, "%g/%g", pl_json_num(pe, "ops_changed", 0),
			         pl_json_num(pe, "ops", 0));
			printf("%-12s %12s %+12.4f %s%11s\n", pe->string, n,
			       1e3 * pl_json_num(pe, "seconds_delta", 0), m < 0 ? "-" : "+", mb);
		}
		printf("\n%d of %d ops differ\n%-28s %-28s %-28s %8s %12s %12s\n", changed, total,
		       "op", "A", "B", "stage", "time ms", "memory");
		cJSON_ArrayForEach (x, ops) {
			char mb[32], st2[40];
			double m = pl_json_num(x, "memory_bytes_delta", 0);
			fmt_bytes(fabs(m), mb, sizeof mb);
			snprintf(st2, sizeof st2, "%g>%g", pl_json_num(x, "stage_a", 0),
			         pl_json_num(x, "stage_b", 0));
			printf("%-28s %-28s %-28s %8s %+12.4f %s%11s\n",
			       cJSON_GetStringValue(cJSON_GetObjectItem(x, "op")),
			       cJSON_GetStringValue(cJSON_GetObjectItem(x, "a")),
			       cJSON_GetStringValue(cJSON_GetObjectItem(x, "b")), st2,
			       1e3 * pl_json_num(x, "seconds_delta", 0), m < 0 ? "-" : "+", mb);
		}
		if (have_comm) {
			printf("\ncommunication by collective and link class (per device a step)\n"
			       "%-15s %-11s %12s %12s %12s %14s\n",
			       "collective", "link", "A s", "B s", "delta s", "bus bytes");
			cJSON_ArrayForEach (x, cJSON_GetObjectItem(out, "communication")) {
				double d = pl_json_num(x, "bus_bytes_delta", 0);
				char bb[32];
				fmt_bytes(fabs(d), bb, sizeof bb);
				printf("%-15s %-11s %12.6f %12.6f %+12.6f %s%13s\n",
				       cJSON_GetStringValue(cJSON_GetObjectItem(x, "collective")),
				       cJSON_GetStringValue(cJSON_GetObjectItem(x, "link")),
				       pl_json_num(x, "a_seconds", 0),
				       pl_json_num(x, "b_seconds", 0),
				       pl_json_num(x, "seconds_delta", 0), d < 0 ? "-" : "+", bb);
			}
			if (ha > 0 || hb > 0)
				printf("%-27s %12.6f %12.6f %+12.6f\n",
				       "hidden behind the backward", -ha, -hb, ha - hb);
			printf("%-27s %12.6f %12.6f %+12.6f\n", "= communication",
			       pl_json_num(ca, "communication_seconds", 0),
			       pl_json_num(cb, "communication_seconds", 0), comm_d);
		}
		char m1[32], m2[32], m3[32];
		fmt_bytes(fabs(dm), m1, sizeof m1);
		fmt_bytes(fabs(mem_d - dm), m2, sizeof m2);
		fmt_bytes(fabs(mem_d), m3, sizeof m3);
		printf(
		    "\nstep: ops %+.6f s + pipeline and schedule (bubble, stage balance) %+.6f s = "
		    "%+.6f s\n",
		    dt, step_d - dt, step_d);
		printf("peak memory: ops %s%s + the rest (peak stage, in-flight micro-batches, "
		       "transient, reserve) %s%s = %s%s\n",
		       dm < 0 ? "-" : "+", m1, mem_d - dm < 0 ? "-" : "+", m2,
		       mem_d < 0 ? "-" : "+", m3);
	}
	cJSON_Delete(out);
	cJSON_Delete(a);
	cJSON_Delete(b);
	return rc;
}

/* An ONNX model's appended cross-entropy (o: the import's options): which
 * dimension of the first output it takes as the classes, said on stderr
 * where that output has rank 3 or more -- at rank 3 auto's choice (the
 * last: a language model's [B, S, vocabulary]) may be a sequence model's
 * [N, C, L], which PyTorch's CrossEntropyLoss takes on dimension 1 */
static void loss_axis_note(const pl_graph *g, const char *path, const pl_onnx_opts *o)
{
	int l = pl_graph_find_op(g, "loss");
	if (!pl_onnx_path(path) || (o->loss && strcmp(o->loss, "cross-entropy")) || l < 0 ||
	    g->ops[l].type != PL_OP_SCE)
		return;
	const pl_tensor *y = &g->tensors[g->ops[l].in[0]];
	int moved = y->producer >= 0 && !strcmp(g->ops[y->producer].name, "loss.classes_last");
	if (moved)
		y = &g->tensors[g->ops[y->producer].in[0]];
	if (y->rank < 3)
		return;
	char shape[160] = "";
	for (int d = 0; d < y->rank; d++)
		snprintf(shape + strlen(shape), sizeof shape - strlen(shape), "%s%lld",
		         d ? ", " : "", (long long)y->shape[d]);
	fprintf(stderr,
	        "planner: note: %s: the appended cross-entropy takes the classes on %s of "
	        "output '%s' [%s]%s\n",
	        path, moved ? "dimension 1" : "the last dimension", y->name, shape,
	        o->loss_axis ? " (--loss-axis)"
	        : moved      ? " (auto at rank 4 and more, as PyTorch's CrossEntropyLoss takes "
	                       "[N, C, d1, ...]; --loss-axis last for classes last)"
	                     : " (auto at rank 3: a language model's [B, S, vocabulary]; "
	                       "--loss-axis 1 for [N, C, L], as PyTorch's CrossEntropyLoss takes "
	                       "it)");
}

/* ---- import ---- */
static int cmd_import(int argc, char **argv)
{
	static const char *const help =
	    "usage: planner import MODEL.onnx -o MODEL.json [--batch N] [--loss "
	    "cross-entropy|none]\n"
	    "                      [--const PATTERN]... [--dropout auto|keep|drop]\n\n"
	    "Writes an ONNX model as a planner.model/1 file (every command that takes a\n"
	    "MODEL also takes MODEL.onnx directly, with the same options). Initializers\n"
	    "become params (their data are never read: dims are enough), graph inputs\n"
	    "inputs; shape subgraphs are folded, GELU (Erf or tanh form) and decomposed\n"
	    "LayerNorm recognised, Identity dropped, Dropout as --dropout says. The ops of\n"
	    "transformer and torchvision exports (Gemm, MatMul, Conv, BatchNormalization,\n"
	    "pools, element-wise ops, Softmax, Transpose, Reshape, Gather, Concat, Slice,\n"
	    "Expand, ReduceMean, ...) are imported; anything else exits 2 naming the node,\n"
	    "its op type and opset, and the supported ops.\n\n"
	    "options:\n"
	    "  -o, --output MODEL.json  where to write it (atomically)\n"
	    "  --batch N             the batch where an input's dimension 0 is symbolic\n"
	    "  --loss cross-entropy|none  training semantics: SoftmaxCrossEntropy of the\n"
	    "                        first output against an int64 labels input (default),\n"
	    "                        or none when the graph already ends in its loss\n"
	    "  --loss-axis 1|last|auto  the first output's axis of classes for that loss:\n"
	    "                        auto (default) takes dimension 1 of a rank-4+ output\n"
	    "                        (segmentation [N, C, H, W], as PyTorch's\n"
	    "                        CrossEntropyLoss) and the last of others (a language\n"
	    "                        model's [B, S, vocabulary]); at rank 3 and more a\n"
	    "                        note on stderr says which dimension was taken\n"
	    "  --const PATTERN       initializers whose names match (shell pattern: *, ?,\n"
	    "                        [...]; * matches dots too) stay constant: buffers,\n"
	    "                        such as a causal mask, that exporters write like\n"
	    "                        weights (no gradient, no optimizer state);\n"
	    "                        repeatable; one matching nothing exits 2\n"
	    "  --dropout auto|keep|drop  Dropout nodes: kept as the planner's Dropout where\n"
	    "                        the export trains with them (training_mode true and\n"
	    "                        a ratio above 0; auto, the default), always, or never\n"
	    "  -h, --help            this text\n\n"
	    "example:\n"
	    "  planner import mlp.onnx --batch 64 -o mlp.json\n"
	    "  planner search mlp.onnx --batch 64 --devices 8\n"
	    "  planner import gpt2.onnx --batch 8 --const 'h.[0-9].bias' -o gpt2.json\n";
	common co = {0};
	const char *out = NULL;
	static const struct option opts[] = {ONNX_OPTIONS,
	                                     {"output", required_argument, 0, 'o'},
	                                     {"help", no_argument, 0, 'h'},
	                                     {0, 0, 0, 0}};
	int ch;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
		switch (ch) {
		case OPT_BATCH:
		case OPT_LOSS:
		case OPT_CONST:
		case OPT_LOSS_AXIS:
		case OPT_DROPOUT: {
			int rc = common_opt(ch, optarg, &co, "import");
			if (rc)
				return rc;
			break;
		}
		case 'o': out = optarg; break;
		case 'h': fputs(help, stdout); return 0;
		default:
			return pl_cli_usage("import", "unknown or incomplete option '%s'",
			                    argv[optind - 1]);
		}
	}
	if (optind != argc - 1)
		return pl_cli_usage("import", "expected one MODEL.onnx file%s",
		                    optind < argc - 1 ? ", got more" : "");
	if (!out)
		return pl_cli_usage("import", "-o MODEL.json: where to write the model%s", "");
	pl_err err = {{0}};
	char *buf = NULL, *txt = NULL;
	size_t len;
	cJSON *doc = NULL;
	pl_graph *g = NULL;
	pl_status st = pl_read_file(argv[optind], &buf, &len, &err);
	if (!st)
		st = pl_onnx_to_model((const unsigned char *)buf, len, argv[optind], &co.onnx, &doc,
		                      &err);
	if (!st && !(txt = doc_text(doc)))
		st = pl_err_set(&err, PL_ENOMEM, "out of memory");
	/* checked as every model is before it is written */
	if (!st)
		st = pl_graph_load_json(&g, txt, strlen(txt), argv[optind], &err);
	if (!st)
		st = pl_output_write(out, txt, &err);
	if (!st)
		fprintf(pl_output_is_stdout(out) ? stderr : stdout,
		        "wrote %s: %d ops, %d tensors\n", out, g->nops, g->ntensors);
	if (!st)
		loss_axis_note(g, argv[optind], &co.onnx);
	pl_graph_free(g);
	free(txt);
	cJSON_Delete(doc);
	free(buf);
	return st ? pl_cli_fail(st, &err) : 0;
}

/* ---- report ---- */
static int cmd_report(int argc, char **argv)
{
	static const char *const help =
	    "usage: planner report CKPT -o PAGE.html\n\n"
	    "Writes a strategy checkpoint as one self-contained HTML page (inline SVG and\n"
	    "CSS; no script, nothing fetched, so it opens offline and can be mailed): the\n"
	    "step and where it goes, the device mesh coloured by each kind of group over\n"
	    "the nodes, the pipeline schedule (1F1B per stage: forward, backward, bubble,\n"
	    "optimizer), the peak device's memory by category against its capacity and\n"
	    "reserve and every stage's by the same categories, the groups' link classes and\n"
	    "the communication by collective and link class, and the strategies by part of\n"
	    "the model and of the dearest ops. Every number is the checkpoint's.\n\n"
	    "options:\n"
	    "  -o, --output PAGE.html  where to write the page (atomically)\n"
	    "  -h, --help              this text\n\n"
	    "example:\n"
	    "  planner search gpt3-13b.json --cluster h100x8:2 --job -o plan.json\n"
	    "  planner report plan.json -o plan.html\n";
	const char *out = NULL, *in = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(help, stdout);
			return 0;
		}
		if ((!strcmp(argv[i], "-o") || !strcmp(argv[i], "--output")) && i + 1 < argc)
			out = argv[++i];
		else if (!strncmp(argv[i], "--output=", 9))
			out = argv[i] + 9;
		else if (argv[i][0] == '-' && argv[i][1])
			return pl_cli_usage("report", "unknown or incomplete option '%s'", argv[i]);
		else if (in)
			return pl_cli_usage("report", "expected one CKPT file, got more%s", "");
		else
			in = argv[i];
	}
	if (!in)
		return pl_cli_usage("report", "expected one CKPT file%s", "");
	if (!out)
		return pl_cli_usage("report", "-o PAGE.html: where to write the page%s", "");
	pl_err err = {{0}};
	cJSON *ck = NULL;
	char *page = NULL;
	pl_status st = pl_cli_read_ckpt(in, &ck, &err);
	if (!st)
		st = pl_report_html(ck, in, &page, &err);
	if (!st)
		st = pl_output_write(out, page, &err);
	if (!st)
		fprintf(pl_output_is_stdout(out) ? stderr : stdout, "wrote %s\n", out);
	free(page);
	cJSON_Delete(ck);
	return st ? pl_cli_fail(st, &err) : 0;
}

/* Whether each framework export writes can state the plan: per framework
 * (pl_export_name order) runs[i] = 1, or 0 and why[i] (the caller frees)
 * the reason export gives; -1 out of memory. */
static int framework_verdicts(const cJSON *ck, int *runs, char **why)
{
	int n = pl_export_count();
	char *text = cJSON_PrintUnformatted(ck);
	if (!text)
		return -1;
	for (int i = 0; i < n; i++) {
		char *out = NULL;
		pl_err e = {{0}};
		pl_status st =
		    pl_export_text(text, strlen(text), "plan", pl_export_name(i), 0, &out, &e);
		free(out);
		runs[i] = st == PL_OK;
		why[i] = NULL;
		if (st) { /* the reason, without "plan: FRAMEWORK cannot state this plan: " */
			const char *m = strstr(e.msg, "cannot state this plan: ");
			m = m ? m + strlen("cannot state this plan: ")
			      : e.msg + (strncmp(e.msg, "plan: ", 6) ? 0 : 6);
			why[i] = pl_strdup(m);
		}
	}
	free(text);
	return 0;
}

/* explain: "frameworks (planner export --to F):" and a line each */
static void print_frameworks(const cJSON *ck, FILE *out)
{
	int n = pl_export_count(), runs[16];
	char *why[16];
	if (n > 16 || framework_verdicts(ck, runs, why))
		return;
	fputs("frameworks ('planner export CKPT --to F' writes the plan as F runs it):\n", out);
	for (int i = 0; i < n; i++) {
		fprintf(out, "  %-19s %s%s\n", pl_export_name(i), runs[i] ? "can run it" : "cannot: ",
		        runs[i] ? "" : why[i] ? why[i] : "(out of memory)");
		free(why[i]);
	}
}

/* explain --json: the checkpoint's blocks a reader of the table wants, and
 * the table's rows as an array in the model's order; every value copied
 * from the checkpoint (checked by pl_cli_read_ckpt), none computed here */
static pl_status explain_json(const cJSON *ck, const char *path, pl_err *err)
{
	static const char *const blocks[] = {"model", "cluster", "search",   "cost",
	                                     "pipeline", "groups", "parts"};
	static const char *const fields[] = {"type",
	                                     "stage",
	                                     "parallel_strategy",
	                                     "compute_seconds",
	                                     "communication_seconds",
	                                     "memory_bytes",
	                                     "flops_forward",
	                                     "flops_backward"};
	cJSON *o = cJSON_CreateObject(), *ops = NULL;
	int ok = o && cJSON_AddStringToObject(o, "format", "planner.explain/1") &&
	         cJSON_AddStringToObject(o, "checkpoint", path);
	for (size_t b = 0; ok && b < sizeof blocks / sizeof *blocks; b++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(ck, blocks[b]);
		cJSON *c = v ? cJSON_Duplicate(v, 1) : NULL;
		ok = !v || (c && cJSON_AddItemToObject(o, blocks[b], c));
		if (!ok)
			cJSON_Delete(c);
	}
	/* per framework: whether export can state the plan, and why not */
	int nf = pl_export_count(), runs[16];
	char *why[16];
	cJSON *fw = ok && nf <= 16 ? cJSON_AddObjectToObject(o, "frameworks") : NULL;
	if (fw && !framework_verdicts(ck, runs, why)) {
		for (int i = 0; i < nf; i++) {
			cJSON *v = cJSON_AddObjectToObject(fw, pl_export_name(i));
			ok = ok && v && cJSON_AddBoolToObject(v, "runs", runs[i]) &&
			     (runs[i] || (why[i] && cJSON_AddStringToObject(v, "why", why[i])));
			free(why[i]);
		}
	} else {
		ok = 0;
	}
	ok = ok && (ops = cJSON_AddArrayToObject(o, "ops"));
	const cJSON *it;
	cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive(ck, "parallel_strategy_item")) {
		cJSON *r = ok ? cJSON_CreateObject() : NULL;
		ok = r && cJSON_AddItemToArray(ops, r) && cJSON_AddStringToObject(r, "name", it->string);
		for (size_t f = 0; ok && f < sizeof fields / sizeof *fields; f++) {
			const cJSON *v = cJSON_GetObjectItemCaseSensitive(it, fields[f]);
			cJSON *c = v ? cJSON_Duplicate(v, 1) : NULL;
			ok = !v || (c && cJSON_AddItemToObject(r, fields[f], c));
			if (!ok)
				cJSON_Delete(c);
		}
		if (!ok)
			break;
	}
	if (!ok) {
		cJSON_Delete(o);
		return pl_err_set(err, PL_ENOMEM, "out of memory");
	}
	return json_line(o, err);
}

static int cmd_explain(int argc, char **argv)
{
	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		fputs(
		    "usage: planner explain CKPT [--json]\n"
		    "       planner explain --diff A.json B.json [--json]\n\n"
		    "Prints the totals, the communication by collective and link class, every\n"
		    "stage's memory by category, and a per-op table of a strategy checkpoint\n"
		    "written by 'planner search': strategy, compute and communication\n"
		    "milliseconds, memory per device. With --diff, what differs between two\n"
		    "plans of one model: the totals, the differences summed by part of the model\n"
		    "(embedding, attention, mlp or experts, head), every op whose strategy, "
		    "stage,\n"
		    "time or memory differs, the communication's difference by collective and\n"
		    "link class, and the rest of the step's and the peak memory's difference\n"
		    "(pipeline bubble and balance, peak stage, transient, reserve), so that the\n"
		    "lines add up. --json prints either as one JSON object: for one checkpoint\n"
		    "its model, cluster, search, cost (totals, communication by collective and\n"
		    "link class, memory by category, utilisation), pipeline, groups and parts,\n"
		    "and \"ops\": the table's rows in the model's order (name, type, stage,\n"
		    "strategy, compute_seconds, communication_seconds, memory_bytes,\n"
		    "flops_forward, flops_backward), every number the checkpoint's.\n",
		    stdout);
		return 0;
	}
	if (argc >= 2 && !strcmp(argv[1], "--diff")) {
		int json = argc == 5 && !strcmp(argv[4], "--json");
		if (argc != 4 && !json)
			return pl_cli_usage("explain", "--diff: expected two CKPT files%s", "");
		return explain_diff(argv[2], NULL, argv[3], NULL, json);
	}
	const char *in = NULL;
	int json = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			json = 1;
		else if (argv[i][0] == '-' && argv[i][1])
			return pl_cli_usage("explain", "unknown option '%s'", argv[i]);
		else if (in)
			return pl_cli_usage("explain",
			                    "expected one CKPT file, got '%s' and '%s' (two plans "
			                    "compare with --diff A B)",
			                    in, argv[i]);
		else
			in = argv[i];
	}
	if (!in)
		return pl_cli_usage("explain", "expected one CKPT file (a strategy checkpoint "
		                               "written by 'planner search')%s",
		                    json ? " before or after --json" : "");
	pl_err err = {{0}};
	cJSON *ck = NULL;
	pl_status st = pl_cli_read_ckpt(in, &ck, &err);
	if (st)
		return pl_cli_fail(st, &err);
	if (json) {
		st = explain_json(ck, in, &err);
		cJSON_Delete(ck);
		return st ? pl_cli_fail(st, &err) : 0;
	}
	print_totals(ck, stdout);
	print_comm_memory(ck, stdout);
	print_frameworks(ck, stdout);
	print_table(ck, stdout, 0);
	cJSON_Delete(ck);
	return 0;
}

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
    "full or selective recompute.\n"
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
    "             --strategy plan.json [--backend cuda]\n"
    "MODEL may be an ONNX file: --batch N, --loss, --const and --dropout as for\n"
    "'planner import'.\n";

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
			if ((st = json_line(l, err)))
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

/* Long as a command is: its options, then the steps a run takes in
 * order (load, price, launch the backend, run, profile, report); each is a few
 * lines calling the executor. */
static int cmd_run(int argc, char **argv)
{
	common co = {0};
	const char *strategy = NULL, *backend = "cpu";
	long long steps = 3, seed = 1;
	double lr = 0;
	int json = 0, profile = 0;
	pl_optimizer opt = PL_OPT_ADAM;
	enum { OPT_WEIGHTS = 1200, OPT_BATCH_FILE, MAX_BATCH_FILES = 16 };
	const char *weights = NULL, *batch_files[MAX_BATCH_FILES];
	int nbatch_files = 0;
	static const struct option opts[] = {ONNX_OPTIONS,
	                                     {"weights", required_argument, 0, OPT_WEIGHTS},
	                                     {"batch-file", required_argument, 0, OPT_BATCH_FILE},
	                                     {"devices", required_argument, 0, 'd'},
	                                     {"cluster", required_argument, 0, 'c'},
	                                     {"memory-reserve", required_argument, 0, OPT_RESERVE},
	                                     {"attention-kernel", required_argument, 0, OPT_ATTN},
	                                     {"loss-kernel", required_argument, 0, OPT_LOSS_KERN},
	                                     {"loss-parallel", required_argument, 0, OPT_LOSS_PAR},
	                                     {"grad-dtype", required_argument, 0, OPT_GRAD_DT},
	                                     {"norm-kernel", required_argument, 0, OPT_NORM_KERN},
	                                     {"batch-norm", required_argument, 0, OPT_BN},
	                                     {"stage-output", required_argument, 0, OPT_STAGE_OUT},
	                                     {"gemm-dtype", required_argument, 0, OPT_GEMM_DT},
	                                     {"strategy", required_argument, 0, 's'},
	                                     {"backend", required_argument, 0, 'b'},
	                                     {"steps", required_argument, 0, 'n'},
	                                     {"seed", required_argument, 0, 'S'},
	                                     {"optimizer", required_argument, 0, 'O'},
	                                     {"lr", required_argument, 0, 'l'},
	                                     {"json", no_argument, 0, 'j'},
	                                     {"profile", no_argument, 0, 'P'},
	                                     {"timeout", required_argument, 0, 'T'},
	                                     {"help", no_argument, 0, 'h'},
	                                     {0, 0, 0, 0}};
	int ch;
	double timeout_s = 60;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case 'P': profile = 1; break;
		case OPT_WEIGHTS: weights = optarg; break;
		case OPT_BATCH_FILE:
			if (nbatch_files == MAX_BATCH_FILES)
				return pl_cli_usage("run", "--batch-file: at most %d",
				                    MAX_BATCH_FILES);
			batch_files[nbatch_files++] = optarg;
			break;
		case 'T': {
			char *end;
			errno = 0;
			timeout_s = strtod(optarg, &end);
			if (errno || *end || end == optarg || !(timeout_s > 0) || timeout_s > 1e6)
				return pl_cli_usage(
				    "run", "--timeout: expected seconds from 0 to 1e6, got '%s'",
				    optarg);
			break;
		}
		case OPT_BATCH:
		case OPT_LOSS:
		case OPT_CONST:
		case OPT_DROPOUT:
		case OPT_LOSS_AXIS:
		case 'd':
		case 'c':
		case OPT_ATTN:
		case OPT_LOSS_KERN:
		case OPT_LOSS_PAR:
		case OPT_GRAD_DT:
		case OPT_NORM_KERN:
		case OPT_GEMM_DT:
		case OPT_BN:
		case OPT_STAGE_OUT:
		case OPT_RESERVE: {
			int rc = common_opt(ch, optarg, &co, "run");
			if (rc)
				return rc;
			break;
		}
		case 's': strategy = optarg; break;
		case 'b': backend = optarg; break;
		case 'n':
			if (pl_parse_ll(optarg, &steps) || steps < 1 || steps > 1000000)
				return pl_cli_usage(
				    "run", "--steps: expected a count from 1 to 1000000, got '%s'",
				    optarg);
			break;
		case 'S':
			if (pl_parse_ll(optarg, &seed) || seed < 0)
				return pl_cli_usage(
				    "run", "--seed: expected a non-negative integer, got '%s'",
				    optarg);
			break;
		case 'O':
			if (!strcmp(optarg, "adam"))
				opt = PL_OPT_ADAM;
			else if (!strcmp(optarg, "sgd"))
				opt = PL_OPT_SGD;
			else
				return pl_cli_usage(
				    "run", "--optimizer: expected adam or sgd, got '%s'", optarg);
			break;
		case 'l': {
			char *end;
			errno = 0;
			lr = strtod(optarg, &end);
			if (errno || *end || end == optarg || !(lr > 0) || !isfinite(lr))
				return pl_cli_usage(
				    "run", "--lr: expected a positive number, got '%s'", optarg);
			break;
		}
		case 'j': json = 1; break;
		case 'h': fputs(run_help, stdout); return 0;
		default:
			return pl_cli_usage("run", "unknown or incomplete option '%s'",
			                    argv[optind - 1]);
		}
	}
	if (optind != argc - 1)
		return pl_cli_usage("run", "expected one MODEL file%s", "");
	if (!strategy)
		return pl_cli_usage("run", "--strategy CKPT is required%s", "");
	if (strcmp(backend, "cpu") && strcmp(backend, "cuda"))
		return pl_cli_usage("run", "--backend: expected cpu or cuda, got '%s'", backend);
	pl_err err;
	pl_graph *g = NULL;
	pl_status st = load_model(&g, argv[optind], &co.onnx, &err);
	if (st)
		return pl_cli_fail(st, &err);
	char *text = NULL;
	size_t len = 0;
	cJSON *ck = NULL;
	pl_run_plan run = {0};
	cost_result cr = {0};
	const pl_graph *rg = g;
	pl_backend *be = NULL;
	pl_exec *ex = NULL;
	double *times = NULL, *prof = NULL, *pm;
	pl_cluster cl;
	pl_rdv rdv = {.listen_fd = -1, .fd = -1}; /* under torchrun: the processes met */
	pl_store *store = NULL;
	long server = -1;         /* under torchrun with cpu: Open MPI's name server, on rank 0 */
	pl_start_values sv = {0}; /* --weights, --batch-file: read before any collective */
	if (weights && (st = pl_values_weights(&sv, weights, g, &err)))
		goto done;
	for (int k = 0; k < nbatch_files && !st; k++)
		st = pl_values_batch(&sv, batch_files[k], g, &err);
	if (st)
		goto done;
	if ((st = pl_read_file(strategy, &text, &len, &err)))
		goto done;
	if ((st = pl_json_parse(text, len, strategy, &ck, &err)))
		goto done;
	if ((st = cost_one(g, ck, strategy, &co, 0, &cr, &cl, &run, &err)))
		goto done;
	rg = pl_run_plan_graph(&run, g);
	pl_plancost pc = cr.pc;
	int64_t D = pl_cluster_devices_total(&cl);
	int bn_local = cl.bn_local; /* the plan's batch norm, run as priced */
	/* time compared with like: on the cpu backend without --cluster or
	 * --devices, the prediction is for CPU ranks (the built-in cpu preset,
	 * D ranks in one node), not for the GPUs the plan was made for */
	int builtin_cpu = !co.cluster && !co.devices && strcmp(backend, "cuda");
	if (builtin_cpu && D <= PL_MAX_DEVICES) {
		pl_cluster cpu;
		double bubble;
		if ((st = pl_cluster_preset(&cpu, "cpu", &err)))
			goto done;
		cpu.bn_local = bn_local;
		cpu.devices_per_node = D;
		cpu.nodes = 1;
		snprintf(cpu.name, sizeof cpu.name, "cpu-x%lld", (long long)D);
		if ((st = pl_plan_price(g, ck, strategy, &cpu, &pc, &bubble, NULL, NULL, &err)))
			goto done;
		cl = cpu;
	}
	/* started by an MPI launcher (or, with cuda, torchrun) with several
	 * processes: one rank each */
	int cuda = !strcmp(backend, "cuda");
	int64_t procs = pl_mpi_launched(), torch = pl_torchrun_launched();
	if (torch > 1)
		procs = torch;
	if (procs > 1 && procs != D) {
		st = pl_err_set(&err, PL_EINVAL,
		                "run: %s is a plan for %lld devices, and %lld processes were "
		                "started: start one per device",
		                strategy, (long long)D, (long long)procs);
		goto done;
	}
	if (procs > 1) { /* a rank that is killed or crashes ends the job with exit 4 */
		int guard = pl_rank_guard(timeout_s);
		if (guard >= 0)
			_exit(guard); /* the guard: the rank ran in its child */
	}
	if ((st = torch > 1
	              ? (cuda ? backend_cuda_torchrun(&rdv, &store, timeout_s, &be, &err)
	                      : backend_cpu_torchrun(&rdv, &store, &server, timeout_s, &be, &err))
	          : procs > 1 ? (cuda ? pl_backend_cuda_mpi(&be, timeout_s, &err)
	                              : pl_backend_mpi(&be, timeout_s, &err))
	          : cuda      ? pl_backend_cuda(&be, D, timeout_s, &err)
	                      : pl_backend_cpu(&be, D, timeout_s, &err)))
		goto done;
	if (pl_backend_ranks(be) != D) { /* the launcher's variables and MPI disagree */
		st = pl_err_set(&err, PL_EINVAL,
		                "run: MPI has %lld processes, the plan %lld devices",
		                (long long)pl_backend_ranks(be), (long long)D);
		goto done;
	}
	if (pl_backend_self(be) > 0 && quiet_stdout()) { /* rank 0 reports */
		st = pl_err_set(&err, PL_EDEVICE, "run: cannot quiet rank %lld's output",
		                (long long)pl_backend_self(be));
		goto done;
	}
	if ((st = same_arguments(be, argc, argv, argv[optind], g, strategy, text, &err)))
		goto done;
	pl_exec_opts eo = {.seed = (uint64_t)seed,
	                   .optimizer = opt,
	                   .lr = lr,
	                   .fail_rank = -1,
	                   .fail_op = -1,
	                   .profile = profile,
	                   .values = sv.v,
	                   .nvalues = sv.n,
	                   .local_batchnorm = bn_local};
	/* tests: PL_FAIL_RANK=R makes rank R fail at its first op's forward */
	const char *fr = getenv("PL_FAIL_RANK");
	long long frank;
	if (fr && !pl_parse_ll(fr, &frank) && frank >= 0) {
		eo.fail_rank = frank;
		eo.fail_op = 0;
	}
	if ((st = pl_exec_new_job(&ex, rg, D, run.splits, &run.job, be, &eo, &err))) {
		pl_err_prefix(&err, "%s: %s", argv[optind], strategy);
		goto done;
	}
	if (!json)
		printf("model %s, plan %s: %lld ranks on the %s backend, %s\n", g->name, strategy,
		       (long long)D, pl_backend_name(be), opt == PL_OPT_ADAM ? "Adam" : "SGD");
	if (!json && (weights || nbatch_files)) /* what starts given, what drawn */
		print_start_values(g, &sv, weights, seed);
	if (pl_backend_self(be) <= 0)
		loss_axis_note(g, argv[optind], &co.onnx);
	/* steps 2..N are measured (the first one warms up), or step 1 if alone */
	long long first = steps > 1, n = steps - first;
	if (!(times = pl_malloc(sizeof(double) * (size_t)steps)) ||
	    !(prof = pl_calloc(4 * (size_t)g->nops + 1, sizeof *prof))) {
		st = pl_err_set(&err, PL_ENOMEM, "run: out of memory");
		goto done;
	}
	pm = prof + 2 * g->nops;
	for (long long k = 0; k < steps; k++) {
		stall_if_asked(be, k + 1);
		double loss, t0 = ve_now();
		if ((st = pl_exec_step(ex, 1, &loss, &err)))
			goto done;
		if (!isfinite(loss) && k == 0) { /* before any update: not the learning rate */
			st =
			    pl_err_set(&err, PL_EINVAL,
			               "run: step 1: the loss is %g before any update: the model's "
			               "forward computes it from the synthetic data and parameters "
			               "(an op given values outside its domain)",
			               loss);
			goto done;
		}
		if (!isfinite(loss)) { /* a diverged run is not a result */
			st = pl_err_set(
			    &err, PL_EINVAL,
			    "run: step %lld: the loss is %g; training diverged (learning "
			    "rate %g: try a smaller --lr)",
			    k + 1, loss, lr > 0 ? lr : (opt == PL_OPT_ADAM ? 1e-3 : 1e-2));
			goto done;
		}
		times[k] = ve_now() - t0;
		if (profile && k >= first) {
			pl_exec_profile(ex, pm, pm + g->nops);
			for (int o = 0; o < 2 * g->nops; o++)
				prof[o] += pm[o];
		}
		if (json) {
			cJSON *l = cJSON_CreateObject();
			cJSON_AddNumberToObject(l, "step", (double)(k + 1));
			cJSON_AddNumberToObject(l, "loss", loss);
			cJSON_AddNumberToObject(l, "seconds", times[k]);
			if ((st = json_line(l, &err)))
				goto done;
		} else
			printf("step %lld  loss %.9g  %.6f s\n", k + 1, loss, times[k]);
		fflush(stdout);
	}
	/* the mean, and the median and least (robust to a noisy machine) */
	double measured = 0;
	for (long long k = first; k < steps; k++)
		measured += times[k] / (double)n;
	qsort(times + first, (size_t)n, sizeof *times, cmp_seconds);
	double median =
	    n % 2 ? times[first + n / 2] : 0.5 * (times[first + n / 2 - 1] + times[first + n / 2]);
	if (json) {
		cJSON *l = cJSON_CreateObject();
		cJSON_AddNumberToObject(l, "measured_step_seconds", measured);
		cJSON_AddNumberToObject(l, "median_step_seconds", median);
		cJSON_AddNumberToObject(l, "min_step_seconds", times[first]);
		cJSON_AddNumberToObject(l, "predicted_step_seconds", pc.step_s);
		cJSON_AddStringToObject(l, "cluster", cl.name);
		cJSON_AddNumberToObject(l, "ranks", (double)D);
		cJSON_AddStringToObject(l, "backend", pl_backend_name(be));
		if ((st = json_line(l, &err)))
			goto done;
	} else
		printf(
		    "measured step %.6f s (mean of steps %s; median %.6f s); predicted %.6f s on "
		    "%s%s\n",
		    measured, steps > 1 ? "2..N" : "1", median, pc.step_s, cl.name,
		    builtin_cpu ? " (the built-in cpu preset, a 2-core VM's calibration: "
		                  "'planner calibrate --backend cpu --ranks N' and --cluster for "
		                  "this machine's)"
		                : "");
	if (profile && (st = print_profile(rg, &cl, &run, prof, (double)n, json, &err)))
		goto done;
	if (profile) { /* memory: the executor's peak against the plan's breakdown */
		double mem[PL_EXEC_MEM], peak[PL_EXEC_MEM], predicted_peak = 0;
		for (int k = 0; k < PL_EXEC_MEM; k++) /* the plan's peak less the reserve */
			predicted_peak += cr.detail.mem[k];
		pl_exec_memory(ex, mem);
		pl_exec_memory_peak(ex, peak);
		if (json) {
			cJSON *l = cJSON_CreateObject(),
			      *m = cJSON_AddObjectToObject(l, "memory_bytes");
			cJSON_AddNumberToObject(
			    l, "rank", (double)(pl_backend_self(be) < 0 ? 0 : pl_backend_self(be)));
			cJSON *a = cJSON_AddObjectToObject(m, "measured"),
			      *c = cJSON_AddObjectToObject(m, "allocated"),
			      *p = cJSON_AddObjectToObject(m, "predicted");
			for (int k = 0; k < PL_EXEC_MEM; k++) {
				cJSON_AddNumberToObject(a, pl_ckpt_mem_names[k], peak[k]);
				cJSON_AddNumberToObject(c, pl_ckpt_mem_names[k], mem[k]);
				cJSON_AddNumberToObject(p, pl_ckpt_mem_names[k], cr.detail.mem[k]);
			}
			/* all at once: the total, and the categories then */
			double at[PL_EXEC_MEM];
			cJSON *t = cJSON_AddObjectToObject(m, "peak");
			cJSON_AddNumberToObject(t, "measured", pl_exec_memory_peak_total(ex, at));
			cJSON_AddNumberToObject(t, "predicted", predicted_peak);
			cJSON *tb = cJSON_AddObjectToObject(t, "measured_by_category");
			for (int k = 0; k < PL_EXEC_MEM; k++)
				cJSON_AddNumberToObject(tb, pl_ckpt_mem_names[k], at[k]);
			if ((st = json_line(l, &err)))
				goto done;
		} else {
			printf("\nmemory of rank %lld: the most live at once (as a framework's "
			       "allocator "
			       "counts its tensors; fp32), the buffers allocated, and the plan's "
			       "peak-stage prediction:\n",
			       (long long)(pl_backend_self(be) < 0 ? 0 : pl_backend_self(be)));
			for (int k = 0; k < PL_EXEC_MEM; k++)
				printf(
				    "  %-17s %12.0f B   allocated %12.0f B   predicted %12.0f B\n",
				    pl_ckpt_mem_names[k], peak[k], mem[k], cr.detail.mem[k]);
			printf("  %-17s %12.0f B   (all at once)            predicted %12.0f B\n",
			       "peak", pl_exec_memory_peak_total(ex, NULL), predicted_peak);
		}
	}
done:
	free(times);
	free(prof);
	pl_exec_free(ex);
	if (be)
		pl_backend_free(be);
	if (server > 0) {
		kill((pid_t)server, SIGTERM);
		waitpid((pid_t)server, NULL, 0);
	}
	pl_store_close(store);
	pl_rdv_close(&rdv);
	pl_run_plan_free(&run, g);
	pl_plan_detail_free(&cr.detail);
	cJSON_Delete(ck);
	free(text);
	pl_values_free(&sv);
	pl_graph_free(g);
	return st ? pl_cli_fail(st, &err) : 0;
}

static int dispatch(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		fputs(top_help, argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "--version")) {
		puts("planner " PL_VERSION);
		return 0;
	}
	const char *cmd = argv[1];
	argv++;
	argc--;
	if (!strcmp(cmd, "search"))
		return cmd_search(argc, argv);
	if (!strcmp(cmd, "cost"))
		return cmd_cost(argc, argv);
	if (!strcmp(cmd, "strategies"))
		return cmd_strategies(argc, argv);
	if (!strcmp(cmd, "explain"))
		return cmd_explain(argc, argv);
	if (!strcmp(cmd, "check"))
		return pl_cmd_check(argc, argv);
	if (!strcmp(cmd, "run"))
		return cmd_run(argc, argv);
	if (!strcmp(cmd, "calibrate"))
		return pl_cmd_calibrate(argc, argv);
	if (!strcmp(cmd, "topology"))
		return pl_cmd_topology(argc, argv);
	if (!strcmp(cmd, "bench"))
		return cmd_bench(argc, argv);
	if (!strcmp(cmd, "report"))
		return cmd_report(argc, argv);
	if (!strcmp(cmd, "import"))
		return cmd_import(argc, argv);
	if (!strcmp(cmd, "export"))
		return pl_cmd_export(argc, argv);
	fprintf(stderr, "planner: unknown command '%s'\n%s", cmd, top_help);
	return 2;
}

int main(int argc, char **argv)
{
	pl_alloc_init();
	signal(SIGXFSZ, SIG_IGN);    /* past ulimit -f: a write error (exit 4), not a death */
	pl_output_escape_controls(); /* names from files never drive the terminal */
	int rc = dispatch(argc, argv);
	/* an allocation that failed anywhere, however the code went on, makes
	 * the run's output suspect: say so and exit as out of memory */
	if (pl_alloc_null_count() && rc != pl_status_exit_code(PL_ENOMEM)) {
		fprintf(stderr, "planner: out of memory (what was printed may be incomplete)\n");
		rc = pl_status_exit_code(PL_ENOMEM);
	}
	return pl_output_close_stdout("planner", rc);
}
