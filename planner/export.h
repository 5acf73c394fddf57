/* planner export CKPT --to FRAMEWORK and planner cost MODEL --from FRAMEWORK
 * CONFIG (planner/export.c): a plan as the launch arguments or configuration
 * file of a training framework, and such a configuration priced. */
#ifndef PL_EXPORT_H
#define PL_EXPORT_H

/* A command of the planner command (planner/main.c dispatches): argv[0] is its name. */
typedef int (*pl_cli_cmd)(int argc, char **argv);

/* planner export: returns the exit status (2 for a plan the framework
 * cannot express, nothing written then). */
int pl_cmd_export(int argc, char **argv);

/* planner cost ... --from FRAMEWORK CONFIG ...: the configuration read into
 * search's fixed-degree options, planned by `search` (its table not
 * printed) into a scratch checkpoint (or -o CKPT), and priced by `cost`,
 * whose output is the command's. argv is cost's. */
int pl_cmd_cost_from(int argc, char **argv, pl_cli_cmd search, pl_cli_cmd cost);

#include <stddef.h>

#include "graph/status.h"

enum { PL_EXPORT_JSON = 1, PL_EXPORT_FP16 = 2 };

/* The checkpoint text ckpt_text[0..len) (where names it) as framework
 * ("megatron", "nemo", "torchtitan", "deepspeed", "megatron-deepspeed",
 * "mindformers") writes its configuration, into *out (the caller frees);
 * flags: PL_EXPORT_JSON (the {"framework", "version", "source", "keys",
 * "text"} object), PL_EXPORT_FP16 (16-bit as float16). PL_EINVAL names what
 * the framework cannot state. */
pl_status pl_export_text(const char *ckpt_text, size_t len, const char *where,
                         const char *framework, int flags, char **out, pl_err *err);

/* The frameworks export writes, in its table's order: the name --to takes
 * of the i-th (0 <= i < pl_export_count()) and its version as written. */
int pl_export_count(void);
const char *pl_export_name(int i);
const char *pl_export_version(int i);
/* The names, as messages list them ("megatron, nemo, ... or mindformers"),
 * into buf[0..n) (PL_EXPORT_NAMES_MAX holds them all); returns buf. */
#define PL_EXPORT_NAMES_MAX 160
const char *pl_export_names(char *buf, size_t n);

/* search --framework F: the best plan F can state. The search is run over
 * F's space (planner/export.c, fw_spaces: the tensor-parallel degrees it
 * runs, its ZeRO levels, its stage split, interleaving, sequence
 * parallelism), one whole-job search a tensor-parallel degree, each with its
 * top configurations; the first plan export states for F (the oracle every
 * returned plan passes) is that degree's, the fastest over the degrees the
 * answer. What the request gives (jr) stays fixed. search.framework and
 * search.space say which space the plan is optimal over. PL_EINFEASIBLE when
 * plans exist but F states none of them (err says why not the best). */
#include "planner/plan.h"
pl_status pl_export_search(pl_graph *g, const pl_cluster *cl, const pl_plan_opts *base,
                           const pl_job_request *jr, const char *framework, cJSON **ck,
                           double *seconds, pl_err *err);

/* The cost model's switches of the training program that search
 * --framework F defaults to what F runs (bit i of `given`: the user gave
 * switch i, which is kept). */
enum {
	PL_FW_PRICE_ATTENTION,     /* --attention-kernel */
	PL_FW_PRICE_LOSS,          /* --loss-kernel */
	PL_FW_PRICE_LOSS_PARALLEL, /* --loss-parallel */
	PL_FW_PRICE_GRAD_DTYPE,    /* --grad-dtype */
	PL_FW_PRICE_GRAD_REDUCE,   /* --grad-reduce */
	PL_FW_PRICE_GRAD_ACC,      /* --grad-accumulation */
	PL_FW_PRICE_PARAM_SHARD,   /* --param-shard */
	PL_FW_PRICE_NORM,          /* --norm-kernel */
	PL_FW_PRICE_MASK,          /* --mask-kernel */
	PL_FW_PRICE_BATCH_NORM,    /* --batch-norm */
	PL_FW_PRICE_OVERLAP,       /* --overlap-grad-reduce (jr->overlap) */
	PL_FW_PRICE_TP_OVERLAP,    /* --tp-comm-overlap (jr->tp_overlap) */
	PL_FW_PRICE_PARAM_OVERLAP, /* --overlap-param-gather (jr->param_overlap) */
	PL_FW_PRICE_COUNT
};
/* framework's pricing defaults (planner/export.c, fw_pricing: each cited in
 * docs/cost-model.md) set on cl and jr where not given; *applied (the
 * caller's, cJSON_Delete) is {"loss_kernel": "unfused", ...}: those set, the
 * value of search.framework_defaults. PL_EINVAL for an unknown framework. */
pl_status pl_export_defaults(const char *framework, unsigned given, pl_cluster *cl,
                             pl_job_request *jr, cJSON **applied, pl_err *err);
/* The option ("--loss-kernel") of a key of search.framework_defaults, or
 * NULL. */
const char *pl_export_price_option(const char *key);

/* Reads a framework's configuration text into degrees, as cost --from does,
 * and checks it (the fuzz target's entry). */
pl_status pl_export_read_config(const char *framework, const char *text, size_t len,
                                const char *where, pl_err *err);

/* Whether argv (cost's) has --from. */
int pl_cost_has_from(int argc, char **argv);

#endif
