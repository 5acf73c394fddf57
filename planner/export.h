/* A plan as the launch arguments or configuration file of a training
 * framework (planner export), such a configuration read back for pricing
 * (cost --from), and search --framework's space and defaults
 * (planner/export.c). The commands are planner/commands/export.c and
 * cost_from.c. */
#ifndef PL_EXPORT_H
#define PL_EXPORT_H

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
/* The same as a constant, for help texts (test_help checks it against the
 * table) */
#define PL_EXPORT_NAMES_TEXT                                                                       \
	"megatron, nemo, torchtitan, deepspeed, megatron-deepspeed or mindformers"
/* The index of the framework --to or --from names, or -1; what it writes,
 * in words ("Megatron-LM pretrain_gpt.py arguments") */
int pl_export_find(const char *name);
const char *pl_export_title(int i);

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
	PL_FW_PRICE_CP_EXCHANGE,   /* --cp-exchange */
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

/* A framework's configuration read for pricing (cost --from): a file, or
 * (launch arguments) src itself as text. pl_export_conf_read: PL_OK with *out
 * (pl_export_conf_free), or PL_EINVAL naming the key and what was expected
 * (an unknown framework too), PL_EIO. */
typedef struct pl_export_conf pl_export_conf;
pl_status pl_export_conf_read(const char *framework, const char *src, pl_export_conf **out,
                              pl_err *err);
void pl_export_conf_free(pl_export_conf *c);
/* what the messages call it: the file's name or "the arguments" */
const char *pl_export_conf_where(const pl_export_conf *c);
/* the --gemm-dtype of its FP8 GEMMs ("fp8", "fp8-tensorwise",
 * "fp8-rowwise"), or NULL where its linear layers' GEMMs are not FP8 */
const char *pl_export_conf_gemm_dtype(const pl_export_conf *c);
/* search's options that state it, appended to sv[*ns..] (its degrees,
 * recompute, sequence parallelism, FP8, stage cuts, and the pricing switches
 * it states or its framework defaults to), those of the switches cost takes
 * to cv[*nc..] as well; an option argv (cost's) gives is kept, not added.
 * At most 50 entries to sv and 26 to cv. The strings live as long as c. */
void pl_export_conf_args(pl_export_conf *c, int argc, char **argv, char **sv, int *ns, char **cv,
                         int *nc);
/* The plan searched for it (checkpoint ck) against it: notes on stderr
 * where they differ (micro-batch, stage split); PL_EINVAL where the plan is
 * not of that configuration (its global batch). */
pl_status pl_export_conf_compare(const pl_export_conf *c, const cJSON *ck, pl_err *err);

#endif
