/* The planner command's commands (one file each in planner/commands/) and what
 * several of them share: the options every command that reads a model or a
 * cluster takes, the printers of a checkpoint. Not part of the library. */
#ifndef PL_COMMANDS_H
#define PL_COMMANDS_H

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
#include "planner/commands/cli.h"
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

/* the most --const patterns */
#define PL_MAX_CONSTS 32

typedef struct pl_cli_common {
	const char *cluster;
	long long devices;
	int has_reserve;
	double reserve;        /* --memory-reserve */
	const char *attention; /* --attention-kernel (NULL: the cluster's) */
	const char *loss;      /* --loss-kernel (NULL: the cluster's) */
	const char *loss_par;  /* --loss-parallel (NULL: the cluster's) */
	const char *grad_dt;   /* --grad-dtype (NULL: the cluster's) */
	const char *grad_red;  /* --grad-reduce (NULL: the cluster's) */
	const char *grad_acc;  /* --grad-accumulation (NULL: the cluster's) */
	const char *param_shard; /* --param-shard (NULL: the cluster's) */
	const char *norm_k;    /* --norm-kernel (NULL: the cluster's) */
	const char *mask_k;    /* --mask-kernel (NULL: the cluster's) */
	const char *loss_metrics; /* --loss-metrics (NULL: the cluster's) */
	const char *bn;        /* --batch-norm (NULL: the cluster's) */
	const char *stage_out; /* --stage-output (NULL: the cluster's) */
	const char *gemm_dt;   /* --gemm-dtype (NULL: the cluster's) */
	const char *cp_ex;     /* --cp-exchange (NULL: the cluster's) */
	int has_limit;
	double limit;      /* search's and bench's --memory-limit (0: none) */
	double tlimit;     /* --time-limit (0: none) */
	pl_onnx_opts onnx; /* --batch, --loss, --const: how a MODEL.onnx is imported */
	const char *consts[PL_MAX_CONSTS];
} pl_cli_common;

#define OPT_RESERVE 1001 /* getopt code of --memory-reserve */

#define OPT_ATTN 1006 /* --attention-kernel NAME */

#define OPT_LOSS_KERN 1008 /* --loss-kernel fused|unfused */

#define OPT_LOSS_PAR 1009 /* --loss-parallel vocab|gathered */

#define OPT_GRAD_DT 1010 /* --grad-dtype fp32|param|param+fp32 */

#define OPT_NORM_KERN 1011 /* --norm-kernel fused|unfused */

#define OPT_MASK_KERN 1041 /* --mask-kernel fused|unfused */

#define OPT_LOSS_METRICS 1046 /* --loss-metrics N */

#define OPT_GRAD_RED 1042 /* --grad-reduce as-grad|fp32-all-reduce */

#define OPT_GRAD_ACC 1043 /* --grad-accumulation fused|autograd */

#define OPT_PARAM_SHARD 1044 /* --param-shard param|fp32 */

#define OPT_BN 1012 /* --batch-norm sync|local */

#define OPT_STAGE_OUT 1040 /* --stage-output freed|buffered */

#define OPT_GEMM_DT 1013 /* --gemm-dtype fp8|param */

#define OPT_CP_EXCHANGE 1045 /* --cp-exchange ring|allgather|allgather-sync */

#define OPT_BATCH 1002 /* --batch N: an ONNX model's symbolic batch */

#define OPT_LOSS 1003 /* --loss cross-entropy|none: what an ONNX model's import appends */

#define OPT_CONST 1004 /* --const PATTERN: initializers an ONNX model's import keeps constant */

#define OPT_DROPOUT 1005 /* --dropout keep|drop|auto: an ONNX model's Dropout nodes */

#define OPT_LOSS_AXIS 1007 /* --loss-axis 1|last|auto: the appended loss's classes */

/* Lines of the help texts of the commands that read a MODEL (an ONNX
 * file's import options) and price a plan on a cluster (its switches) */
#define PL_HELP_ONNX_MODEL                                                                         \
	"MODEL may be an ONNX file: --batch N, --loss, --const, --loss-axis and --dropout as\n"    \
	"for 'planner import'.\n"
#define PL_HELP_PRICING                                                                            \
	"--memory-reserve, --attention-kernel, --loss-kernel, --loss-parallel, --grad-dtype,\n"    \
	"--grad-reduce, --grad-accumulation, --param-shard, --norm-kernel, --mask-kernel,\n"       \
	"--loss-metrics, --batch-norm, --stage-output, --gemm-dtype and --cp-exchange price\n"     \
	"the plan as for 'planner search' (over the cluster's own).\n"
/* The option lines of search's and bench's help texts for an ONNX MODEL's
 * import, and the help option's */
#define PL_HELP_ONNX_OPTIONS                                                                       \
	"  --batch N, --loss cross-entropy|none, --loss-axis 1|last|auto, --const PATTERN,\n"      \
	"  --dropout auto|keep|drop\n"                                                             \
	"                        a MODEL.onnx's batch, appended loss, constant initializers\n"     \
	"                        and Dropout nodes (planner import --help)\n"                      \
	"  -h, --help            this text\n"

/* getopt codes of search's fixed degrees */
enum {
	OPT_DP = 1100,
	OPT_TP,
	OPT_CP,
	OPT_EP,
	OPT_MBS,
	OPT_VS,
	OPT_OVERLAP,
	OPT_TP_OVERLAP,
	OPT_PARAM_OVERLAP,
	OPT_SP,
	OPT_WHY_NOT,
	OPT_TOP,
	OPT_MAX_TP,
	OPT_REPLICATE,
	OPT_STAGE_CUTS,
	OPT_FRAMEWORK
};

/* getopt codes of run's --weights, --batch-file */
enum { OPT_WEIGHTS = 1200, OPT_BATCH_FILE };

/* search --top: the most configurations listed */
#define PL_MAX_TOP 64

/* --max-tp N: a device count, 0 for any; nonzero when it is not one */
#define MAX_TP_EXPECTED "--max-tp %s: expected a device count (0: any)"

/* One priced plan, as 'cost' reports it. */
typedef struct pl_cli_cost_result {
	pl_plancost pc;
	double bubble;         /* < 0: a per-op plan without pipeline fields */
	pl_plan_detail detail; /* pl_plan_detail_free */
	double limit;          /* the device memory it must fit in */
} pl_cli_cost_result;

/* bench.c */
int pl_cmd_bench(int argc, char **argv);

/* common.c */
pl_status pl_cli_load_model(pl_graph **out, const char *path, const pl_onnx_opts *o, pl_err *err);
int pl_cli_common_opt(const pl_cli_option *o, const char *arg, pl_cli_common *co, const char *cmd);
pl_search_opts pl_cli_common_search_opts(const pl_cli_common *co, const pl_cluster *cl);
pl_status pl_cli_apply_reserve(const pl_cli_common *c, pl_cluster *cl, pl_err *err);
pl_status pl_cli_resolve_cluster(const pl_cli_common *c, pl_cluster *out, pl_err *err);
void pl_cli_fmt_bytes(double b, char *buf, size_t n);
void pl_cli_fmt_strategy(const pl_ckpt_op *op, char *buf, size_t n);
void pl_cli_print_table(const pl_ckpt_doc *d, FILE *out, int max_rows);
pl_status pl_cli_json_line(cJSON *o, pl_err *err);
void pl_cli_print_totals(const pl_ckpt_doc *d, FILE *out);

/* cost.c */
pl_status pl_cli_cost_one(const pl_graph *g, const cJSON *plan, const char *where,
                          const pl_cli_common *co, double limit, pl_cli_cost_result *r,
                          pl_cluster *cl_out, pl_run_plan *keep, pl_err *err);
int pl_cmd_cost(int argc, char **argv);

/* cost_from.c: cost ... --from FRAMEWORK CONFIG ...: the configuration
 * read into search's fixed-degree options, planned by `search` (its table
 * not printed) into a scratch checkpoint (or -o CKPT), and priced by `cost`,
 * whose output is the command's. argv is cost's. pl_cost_has_from: whether
 * argv (cost's) has --from. */
typedef int (*pl_cli_cmd)(int argc, char **argv);
int pl_cmd_cost_from(int argc, char **argv, pl_cli_cmd search, pl_cli_cmd cost);
int pl_cost_has_from(int argc, char **argv);

/* explain.c */
int pl_cli_explain_diff(const char *pa, const char *label_a, const char *pb, const char *label_b,
                        int json);
int pl_cmd_explain(int argc, char **argv);

/* export.c: returns the exit status (2 for a plan the framework cannot
 * express, nothing written then) */
int pl_cmd_export(int argc, char **argv);

/* import.c */
void pl_cli_import_notes(const pl_graph *g, const char *path, const pl_onnx_opts *o);
int pl_cmd_import(int argc, char **argv);

/* report.c */
int pl_cmd_report(int argc, char **argv);

/* run.c */
int pl_cmd_run(int argc, char **argv);

/* search.c */
char *pl_cli_doc_text(const cJSON *ck);
int pl_cli_parse_max_tp(const char *arg, long long *v);
int pl_cmd_search(int argc, char **argv);

/* strategies.c */
int pl_cmd_strategies(int argc, char **argv);

#endif
