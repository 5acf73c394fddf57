/* planner export and cost --from (planner/export.h): a plan's whole-job
 * degrees as Megatron-LM, Megatron-Bridge (NeMo), torchtitan, DeepSpeed,
 * Megatron-DeepSpeed and MindFormers state them, and back. The one idea:
 * both directions go through one record of uniform degrees (fw_config); a
 * plan a framework cannot state is refused with the reason (exit 2), never
 * rounded to a configuration near it. Every key and flag written is in the
 * framework's published source named in fws[] (the lists checked are kept in
 * tests/fixtures/frameworks/). The commands (planner export, cost --from)
 * are planner/commands/export.c and cost_from.c. */
#include "planner/export.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "costmodel/cost.h"
#include "graph/alloc.h"
#include "planner/fwread.h"
#include "graph/graph.h"
#include "graph/json.h"
#include "graph/output.h"
#include "graph/parse.h"

enum fw_kind {
	FW_MEGATRON,
	FW_NEMO,
	FW_TORCHTITAN,
	FW_DEEPSPEED,
	FW_MDS,
	FW_MINDFORMERS,
	FW_COUNT
};

static const struct fw_info {
	const char *name, *title, *version, *source;
	pl_fw_syntax syntax;
} fws[FW_COUNT] = {
    [FW_MEGATRON] = {"megatron", "Megatron-LM pretrain_gpt.py arguments",
                     "Megatron-LM core_v0.15.0",
                     "NVIDIA/Megatron-LM@0d7e02bd26d3eb347ad8d1bef625002babfa6df7 "
                     "megatron/training/arguments.py",
                     PL_FW_ARGS},
    [FW_NEMO] = {"nemo", "Megatron-Bridge (NeMo) ConfigContainer YAML overrides",
                 "Megatron-Bridge v0.6.0 (Megatron-LM cd4afffa)",
                 "NVIDIA-NeMo/Megatron-Bridge@51885cf132b2814188b6855c25a8588254274c2a "
                 "src/megatron/bridge/training/config.py; NVIDIA/Megatron-LM@"
                 "cd4afffa648426a959dc7cb1e24b5ce7d0c3ff54 megatron/core/"
                 "{model_parallel_config,transformer/transformer_config,distributed/"
                 "distributed_data_parallel_config,optimizer/optimizer_config}.py, "
                 "megatron/training/config/training_config.py",
                 PL_FW_YAML},
    [FW_TORCHTITAN] = {"torchtitan", "torchtitan job config TOML", "torchtitan v0.2.2",
                       "pytorch/torchtitan@73a0e6979dd10b6b1904098eb3c8f62c18ab87ce "
                       "torchtitan/config/job_config.py",
                       PL_FW_TOML},
    [FW_DEEPSPEED] = {"deepspeed", "DeepSpeed JSON config", "DeepSpeed v0.19.5",
                      "deepspeedai/DeepSpeed@cf44300453eb0af79ed84ed8f1cb49d57478bd76 "
                      "deepspeed/runtime/constants.py, deepspeed/runtime/zero/config.py",
                      PL_FW_JSON},
    [FW_MDS] = {"megatron-deepspeed", "Megatron-DeepSpeed pretrain_gpt.py arguments",
                "Megatron-DeepSpeed 4efb479 (2025-07-16), DeepSpeed v0.19.5",
                "deepspeedai/Megatron-DeepSpeed@4efb479d5317ce9b86096b9d8e3e8030b0b5263b "
                "megatron/arguments.py; deepspeedai/DeepSpeed@"
                "cf44300453eb0af79ed84ed8f1cb49d57478bd76 deepspeed/__init__.py",
                PL_FW_ARGS},
    [FW_MINDFORMERS] = {"mindformers", "MindFormers YAML (parallel_config, recompute_config)",
                        "MindFormers v1.7.0",
                        "mindspore-lab/mindformers@8ccc49b3f6645d3d1abfab80b4c78f3cafe5c84e "
                        "configs/general/llm_pretrain_dense_template.yaml, "
                        "mindformers/modules/transformer/transformer.py",
                        PL_FW_YAML},
};

static int fw_parse(const char *s)
{
	for (int i = 0; s && i < FW_COUNT; i++)
		if (!strcmp(s, fws[i].name))
			return i;
	return -1;
}

/* the frameworks' names as messages list them (pl_export_names) */
#define FW_NAMES PL_EXPORT_NAMES_TEXT

/* The ZeRO level torchtitan's FSDP is with pp pipeline stages: 3, and 1
 * under pipeline stages, where torchtitan's apply_fsdp does not reshard
 * after forward (fsdp_reshard_after_forward "default") and PyTorch's
 * pipeline schedule neither reshards nor reduces after a backward but the
 * last (torch/distributed/pipelining/stage.py, backward_maybe_with_nosync):
 * a stage's weights gathered once a step, its fp32 gradients kept whole and
 * reduce-scattered once (fw_spaces' zero_mask_pp says the same) */
static int tt_fsdp_zero(int64_t pp)
{
	return pp > 1 ? 1 : 3;
}

/* ---- search --framework: what each framework can state ---- */

/* The space of plans a framework states, as its exporter below accepts
 * them: tensor parallelism searched over 1, 2, 4, ... within a node (or 1
 * only), the ZeRO levels it has (bit z; with pipeline stages zero_mask_pp
 * when not 0: torchtitan's FSDP is ZeRO 1 there), its stage split (--stage-cuts: 1
 * whole layers, 2 the same number a stage), interleaved chunks, sequence
 * parallelism with tensor parallelism, pipeline stages, recompute (a
 * DeepSpeed config turns none on) and its modes (bit r: PL_RECOMPUTE_*
 * r searched; Megatron's none, full and selective, torchtitan's none,
 * full and per op). */
#define RC_MEGATRON (1 << PL_RECOMPUTE_NONE | 1 << PL_RECOMPUTE_FULL | 1 << PL_RECOMPUTE_SELECTIVE)
#define RC_TORCHTITAN                                                                              \
	(1 << PL_RECOMPUTE_NONE | 1 << PL_RECOMPUTE_FULL | 1 << PL_RECOMPUTE_SELECTIVE_OP)
static const struct fw_space {
	int tp, zero_mask, zero_mask_pp, cuts, vp, sp, pp, recompute, recompute_mask;
	const char *what;
} fw_spaces[FW_COUNT] = {
    [FW_MEGATRON] = {1, 0x3, 0, 2, 1, 1, 1, 1, RC_MEGATRON,
                     "tensor parallel within a node, ZeRO 0 or 1 (distributed optimizer), "
                     "the same layers a stage, sequence parallelism with tp"},
    [FW_NEMO] = {1, 0x3, 0, 2, 1, 1, 1, 1, RC_MEGATRON,
                 "tensor parallel within a node, ZeRO 0 or 1 (distributed optimizer), the "
                 "same layers a stage, sequence parallelism with tp"},
    [FW_TORCHTITAN] = {1, 0x9, 0x2, 1, 1, 1, 1, 1, RC_TORCHTITAN,
                       "tensor parallel within a node, FSDP (ZeRO 3; ZeRO 1 with pipeline "
                       "stages) or none, whole layers a stage, sequence parallelism with tp, "
                       "recompute none, full or per op"},
    [FW_DEEPSPEED] = {0, 0xf, 0, 1, 0, 0, 0, 0, 1 << PL_RECOMPUTE_NONE,
                      "data parallel with ZeRO 0-3, no recompute (a config turns none on)"},
    [FW_MDS] = {1, 0x3, 0, 2, 0, 1, 1, 1, RC_MEGATRON,
                "tensor parallel within a node, ZeRO 0 or 1, the same layers a stage, one "
                "chunk a stage"},
    [FW_MINDFORMERS] = {1, 0x3, 0, 1, 0, 1, 1, 1, RC_MEGATRON,
                        "tensor parallel within a node, ZeRO 0 or 1 (parallel optimizer), "
                        "whole layers a stage, one chunk a stage"},
};

/* ---- search --framework: how each framework runs by default ---- */

/* The cost model's switches of the training program (the cluster's and the
 * job's overlap), in PL_FW_PRICE_* order: the option that sets each and its
 * key in search.framework_defaults */
static const char *const price_option[PL_FW_PRICE_COUNT] = {
    [PL_FW_PRICE_ATTENTION] = "--attention-kernel",
    [PL_FW_PRICE_LOSS] = "--loss-kernel",
    [PL_FW_PRICE_LOSS_PARALLEL] = "--loss-parallel",
    [PL_FW_PRICE_GRAD_DTYPE] = "--grad-dtype",
    [PL_FW_PRICE_GRAD_REDUCE] = "--grad-reduce",
    [PL_FW_PRICE_NORM] = "--norm-kernel",
    [PL_FW_PRICE_MASK] = "--mask-kernel",
    [PL_FW_PRICE_BATCH_NORM] = "--batch-norm",
    [PL_FW_PRICE_OVERLAP] = "--overlap-grad-reduce",
    [PL_FW_PRICE_TP_OVERLAP] = "--tp-comm-overlap",
    [PL_FW_PRICE_PARAM_OVERLAP] = "--overlap-param-gather",
    [PL_FW_PRICE_GRAD_ACC] = "--grad-accumulation",
    [PL_FW_PRICE_PARAM_SHARD] = "--param-shard",
    [PL_FW_PRICE_CP_EXCHANGE] = "--cp-exchange",
};
static const char *const price_key[PL_FW_PRICE_COUNT] = {
    [PL_FW_PRICE_ATTENTION] = "attention_kernel",
    [PL_FW_PRICE_LOSS] = "loss_kernel",
    [PL_FW_PRICE_LOSS_PARALLEL] = "loss_parallel",
    [PL_FW_PRICE_GRAD_DTYPE] = "grad_dtype",
    [PL_FW_PRICE_GRAD_REDUCE] = "grad_reduce",
    [PL_FW_PRICE_NORM] = "norm_kernel",
    [PL_FW_PRICE_MASK] = "mask_kernel",
    [PL_FW_PRICE_BATCH_NORM] = "batch_norm",
    [PL_FW_PRICE_OVERLAP] = "overlap_grad_reduce",
    [PL_FW_PRICE_TP_OVERLAP] = "tp_comm_overlap",
    [PL_FW_PRICE_PARAM_OVERLAP] = "overlap_param_gather",
    [PL_FW_PRICE_GRAD_ACC] = "grad_accumulation",
    [PL_FW_PRICE_PARAM_SHARD] = "param_shard",
    [PL_FW_PRICE_CP_EXCHANGE] = "cp_exchange",
};

/* the switches that are the job's (pl_job_request), not the cluster's: the
 * checkpoint's pipeline block states them */
static int job_switch(int i)
{
	return i == PL_FW_PRICE_OVERLAP || i == PL_FW_PRICE_TP_OVERLAP ||
	       i == PL_FW_PRICE_PARAM_OVERLAP;
}

/* What each framework runs when its configuration does not say, at the
 * version fws[] names: the option's value, NULL where the framework has no
 * one default the cost model states (the cluster's stays). --tp-comm-overlap
 * has none here: off is every framework's default (Megatron-LM's store_true
 * --tp-comm-overlap, ModelParallelConfig.tp_comm_overlap False, torchtitan's
 * enable_async_tensor_parallel False) and the cost model's own. "te" is
 * Transformer Engine's choice of attention: cuDNN's fused attention on
 * Hopper and later, FlashAttention-2 before (te_attention). Context
 * parallelism's exchange: Megatron-LM's --cp-comm-type defaults to p2p and
 * Megatron-Bridge's cp_comm_type None is Transformer Engine's p2p (ring);
 * torchtitan's context_parallel_rotate_method defaults to "allgather". The
 * source of each is in docs/cost-model.md, "Pricing defaults of
 * --framework". */
static const char *const fw_pricing[FW_COUNT][PL_FW_PRICE_COUNT] = {
    /* arguments.py: --cross-entropy-loss-fusion, --overlap-grad-reduce and
     * --overlap-param-gather are store_true; validate_args forces fp32
     * gradient accumulation for bf16; TE's LayerNorm/RMSNorm;
     * vocab_parallel_cross_entropy; its DDP all-reduces and its distributed
     * optimizer reduce-scatters the gradient buffer in its dtype;
     * --no-masked-softmax-fusion is
     * store_false (FusedScaleMaskSoftmax); its DDP leaves BatchNorm local;
     * --no-gradient-accumulation-fusion is store_false (the weight gradient
     * GEMM adds into main_grad); Megatron FSDP keeps the 16-bit param's
     * shard beside the distributed optimizer's fp32 main param */
    [FW_MEGATRON] = {"te", "unfused", "vocab", "fp32", "as-grad", "fused", "param", "fused",
                     "fused", "local", "off", NULL, "off", "ring"},
    /* Megatron-Bridge's pretrain recipes (recipes/llama/llama3.py, every
     * config): Transformer Engine, cross_entropy_loss_fusion True,
     * ddp.grad_reduce_in_fp32 True, ddp.overlap_grad_reduce True,
     * ddp.overlap_param_gather True; masked_softmax_fusion True
     * (TransformerConfig) */
    [FW_NEMO] = {"te", "fused", "vocab", "fp32", "as-grad", NULL, "param", "fused", "fused",
                 "local", "on", NULL, "on", "ring"},
    /* job_config.py: loss parallel unless disable_loss_parallel,
     * mixed_precision_reduce float32; its loss is cross_entropy on
     * .float() logits; SDPA (FlashAttention-2); FSDP2/DDP reduce during the
     * backward, and FSDP2 all-gathers the next module's weights on its own
     * stream ahead of use (fully_shard's implicit prefetch); BatchNorm stays
     * local (no SyncBatchNorm); its attention is SDPA's, a mask inside the
     * kernel; fully_shard keeps each param's fp32 shard and casts it to
     * mixed_precision_param when it all-gathers (MixedPrecisionPolicy);
     * FSDP2 adds each micro-batch's gradient into the kept one with a
     * kernel of its own: the reduce-scattered shard into the sharded
     * .grad (_fsdp_collectives.py foreach_reduce), or under pipeline
     * stages, where nothing is reduced before the last backward, the
     * 16-bit gradient into the whole fp32 one (_fsdp_param.py
     * accumulate_unsharded_grad_if_needed) */
    [FW_TORCHTITAN] = {"flash2", "unfused", "vocab", "fp32", "as-grad", "autograd", "fp32", NULL,
                       "fused", "local", "on", NULL, "on", "allgather"},
    /* zero/config.py: overlap_comm False (ZeRO 0-2: the step's all-gather of
     * the updated weights runs in the step); without it and without
     * partitioned gradients (ZeRO 0 and 1) stage_1_and_2.py registers no
     * gradient hooks, so autograd adds each micro-batch's gradients into
     * .grad; the engine converts no BatchNorm; the rest is the model's code;
     * stage 3 keeps the 16-bit partition beside the fp32 one (stage3.py
     * fp16_partitioned_groups_flat, fp32_partitioned_groups_flat) */
    [FW_DEEPSPEED] = {NULL, NULL, NULL, NULL, NULL, "autograd", "param", NULL, NULL, "local", "off",
                      NULL, "off", NULL},
    /* Megatron-DeepSpeed arguments.py: no --cross-entropy-loss-fusion, fp32
     * loss unless --fp16-lm-cross-entropy, vocab-parallel loss, apex fused
     * norms, FusedScaleMaskSoftmax unless --no-masked-softmax-fusion;
     * DeepSpeed's overlap_comm False and autograd's gradient accumulation
     * (as deepspeed's) */
    [FW_MDS] = {NULL, "unfused", "vocab", NULL, NULL, "autograd", "param", "fused", "fused",
                "local", "off", NULL, "off", NULL},
    [FW_MINDFORMERS] = {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                        NULL, NULL},
};

/* Transformer Engine's attention on the cluster's GPU (compute capability
 * 9.0 and later: Hopper H100/H200/H800/H20, Blackwell B100/B200/GB200) */
static const char *te_attention(const pl_cluster *cl)
{
	static const char *const hopper[] = {"H100", "H200", "H800",  "H20", "GH200",
	                                     "B100", "B200", "GB200", "B300"};
	for (size_t i = 0; i < sizeof hopper / sizeof *hopper; i++)
		if (strstr(cl->device_name, hopper[i]))
			return "cudnn";
	return "flash2";
}

/* A key whose value names one of several choices: the framework's word and
 * the option's value it reads as (NULL-terminated) */
typedef struct fw_choice {
	const char *fw, *planner;
} fw_choice;
/* Transformer Engine's cp_comm_type (Megatron-LM's --cp-comm-type,
 * Megatron-Bridge's cp_comm_type): "a2a" and "a2a+p2p" exchange heads
 * (DeepSpeed Ulysses' layout), which the planner does not state */
static const fw_choice te_cp_comm[] = {{"p2p", "ring"}, {"all_gather", "allgather-sync"}, {0}};
/* PyTorch's context_parallel rotate method (torchtitan's
 * context_parallel_rotate_method): "alltoall" passes the chunks round the
 * ring */
static const fw_choice tt_rotate[] = {{"allgather", "allgather"}, {"alltoall", "ring"}, {0}};

/* The pricing switch a key of choices states with value v (NULL when it
 * names none of them) */
static const char *choice_of(const fw_choice *ch, const char *v)
{
	for (; ch->fw; ch++)
		if (!strcmp(ch->fw, v))
			return ch->planner;
	return NULL;
}

/* The framework's word for a pricing switch's value, or NULL */
static const char *choice_word(const fw_choice *ch, const char *v)
{
	for (; ch->fw; ch++)
		if (!strcmp(ch->planner, v))
			return ch->fw;
	return NULL;
}

/* The keys a framework's configuration states a pricing switch with (the
 * same switches fw_pricing defaults): a flag (store_true: present, `yes`;
 * absent, the framework's default), a boolean key (true `yes`, false
 * `no`) or a key of words (`choices`). export writes the plan's value; cost --from reads it, and a
 * switch no key states is the framework's default. Every key is in the framework's published list
 * (tests/fixtures/frameworks/). */
static const struct fw_price_key {
	int fw, sw;
	const char *key;
	int flag;
	const char *yes, *no;
	const fw_choice *choices; /* a key of words (flag, yes and no unused) */
} fw_price_keys[] = {
    {FW_MEGATRON, PL_FW_PRICE_LOSS, "--cross-entropy-loss-fusion", 1, "fused", "unfused", NULL},
    {FW_MEGATRON, PL_FW_PRICE_OVERLAP, "--overlap-grad-reduce", 1, "on", "off", NULL},
    {FW_MEGATRON, PL_FW_PRICE_MASK, "--no-masked-softmax-fusion", 1, "unfused", "fused", NULL},
    {FW_NEMO, PL_FW_PRICE_MASK, "model.masked_softmax_fusion", 0, "fused", "unfused", NULL},
    {FW_NEMO, PL_FW_PRICE_LOSS, "model.cross_entropy_loss_fusion", 0, "fused", "unfused", NULL},
    {FW_NEMO, PL_FW_PRICE_GRAD_DTYPE, "ddp.grad_reduce_in_fp32", 0, "fp32", "param", NULL},
    {FW_MEGATRON, PL_FW_PRICE_TP_OVERLAP, "--tp-comm-overlap", 1, "on", "off", NULL},
    {FW_NEMO, PL_FW_PRICE_OVERLAP, "ddp.overlap_grad_reduce", 0, "on", "off", NULL},
    {FW_NEMO, PL_FW_PRICE_TP_OVERLAP, "model.tp_comm_overlap", 0, "on", "off", NULL},
    {FW_MEGATRON, PL_FW_PRICE_PARAM_OVERLAP, "--overlap-param-gather", 1, "on", "off", NULL},
    {FW_NEMO, PL_FW_PRICE_PARAM_OVERLAP, "ddp.overlap_param_gather", 0, "on", "off", NULL},
    {FW_MEGATRON, PL_FW_PRICE_GRAD_ACC, "--no-gradient-accumulation-fusion", 1, "autograd", "fused",
     NULL},
    {FW_NEMO, PL_FW_PRICE_GRAD_ACC, "model.gradient_accumulation_fusion", 0, "fused", "autograd",
     NULL},
    {FW_TORCHTITAN, PL_FW_PRICE_LOSS_PARALLEL, "parallelism.disable_loss_parallel", 0, "gathered",
     "vocab", NULL},
    {FW_TORCHTITAN, PL_FW_PRICE_TP_OVERLAP, "parallelism.enable_async_tensor_parallel", 0, "on",
     "off", NULL},
    {FW_MEGATRON, PL_FW_PRICE_CP_EXCHANGE, "--cp-comm-type", 0, NULL, NULL, te_cp_comm},
    {FW_NEMO, PL_FW_PRICE_CP_EXCHANGE, "model.cp_comm_type", 0, NULL, NULL, te_cp_comm},
    {FW_TORCHTITAN, PL_FW_PRICE_CP_EXCHANGE, "parallelism.context_parallel_rotate_method", 0, NULL,
     NULL, tt_rotate},
};

/* Megatron-LM's --attention-backend (AttnBackend) and the kernel each runs:
 * Transformer Engine's FlashAttention (2), its cuDNN fused attention, or
 * attention of GEMMs ("": none) */
static const char *const mg_backend[][2] = {
    {"flash", "flash2"}, {"fused", "cudnn"}, {"unfused", ""}, {"local", ""}};

/* fw's default for pricing switch i with pp pipeline stages: fw_pricing's,
 * but torchtitan's FSDP under pipeline stages reduces the gradients after
 * the last micro-batch's backward (PyTorch's pipeline schedule runs FSDP's
 * post-backward then), not during it */
static const char *fw_default(int fw, int i, int64_t pp)
{
	if (i == PL_FW_PRICE_OVERLAP && fw == FW_TORCHTITAN && pp > 1)
		return "off";
	return fw_pricing[fw][i];
}

/* The framework a --framework option names, or -1 (err: the names expected) */
static int framework_option(const char *framework, pl_err *err)
{
	int fw = fw_parse(framework);
	char nb[PL_EXPORT_NAMES_MAX];
	if (fw < 0)
		pl_err_set(err, PL_EINVAL, "--framework %s: expected %s",
		           framework ? framework : "(missing)", pl_export_names(nb, sizeof nb));
	return fw;
}

pl_status pl_export_defaults(const char *framework, unsigned given, pl_cluster *cl,
                             pl_job_request *jr, cJSON **applied, pl_err *err)
{
	int fw = framework_option(framework, err);
	*applied = NULL;
	if (fw < 0)
		return PL_EINVAL;
	static pl_status (*const set[PL_FW_PRICE_COUNT])(pl_cluster *, const char *, const char *,
	                                                 pl_err *) = {
	    [PL_FW_PRICE_ATTENTION] = pl_cluster_set_attention,
	    [PL_FW_PRICE_LOSS] = pl_cluster_set_loss,
	    [PL_FW_PRICE_LOSS_PARALLEL] = pl_cluster_set_loss_parallel,
	    [PL_FW_PRICE_GRAD_DTYPE] = pl_cluster_set_grad_dtype,
	    [PL_FW_PRICE_GRAD_REDUCE] = pl_cluster_set_grad_reduce,
	    [PL_FW_PRICE_NORM] = pl_cluster_set_norm,
	    [PL_FW_PRICE_MASK] = pl_cluster_set_mask,
	    [PL_FW_PRICE_BATCH_NORM] = pl_cluster_set_batch_norm,
	    [PL_FW_PRICE_GRAD_ACC] = pl_cluster_set_grad_accumulation,
	    [PL_FW_PRICE_PARAM_SHARD] = pl_cluster_set_param_shard,
	    [PL_FW_PRICE_CP_EXCHANGE] = pl_cluster_set_cp_exchange,
	};
	cJSON *o = cJSON_CreateObject();
	if (!o)
		return pl_err_set(err, PL_ENOMEM, "out of memory");
	for (int i = 0; i < PL_FW_PRICE_COUNT; i++) {
		const char *v = fw_default(fw, i, pl_dim_or(jr->stages, 1));
		if (!v || (given >> i & 1))
			continue;
		if (i == PL_FW_PRICE_ATTENTION && !strcmp(v, "te"))
			v = te_attention(cl);
		pl_status st = PL_OK;
		if (i == PL_FW_PRICE_OVERLAP)
			jr->overlap = pl_dim_value(!strcmp(v, "on"));
		else if (i == PL_FW_PRICE_TP_OVERLAP)
			jr->tp_overlap = pl_dim_value(!strcmp(v, "on"));
		else if (i == PL_FW_PRICE_PARAM_OVERLAP)
			jr->param_overlap = pl_dim_value(!strcmp(v, "on"));
		else
			st = set[i](cl, v, price_option[i], err);
		if (st || !cJSON_AddStringToObject(o, price_key[i], v)) {
			cJSON_Delete(o);
			return st ? st : pl_err_set(err, PL_ENOMEM, "out of memory");
		}
	}
	*applied = o;
	return PL_OK;
}

const char *pl_export_price_option(const char *key)
{
	for (int i = 0; key && i < PL_FW_PRICE_COUNT; i++)
		if (!strcmp(key, price_key[i]))
			return price_option[i];
	return NULL;
}

/* Whether fw states the plan ck; the reason in err when not. */
static int states(int fw, const cJSON *ck, pl_err *err)
{
	char *text = cJSON_PrintUnformatted(ck), *out = NULL;
	if (!text) {
		pl_err_set(err, PL_ENOMEM, "out of memory");
		return 0;
	}
	pl_status st = pl_export_text(text, strlen(text), "the plan", fws[fw].name, 0, &out, err);
	free(text);
	free(out);
	return st == PL_OK;
}

/* Whether every rank of the plan ck holds whole attention heads: a Reshape
 * that splits a projection's last dimension H into (n heads, d) with n d =
 * H (d > 1) may have that dimension cut c ways only where c divides n. Every
 * framework's tensor parallelism gives a rank n / tp whole heads (Megatron-
 * LM's attention.py divides num_query_groups by the tp size, torchtitan's
 * n_kv_heads // tp, MindFormers asserts num_heads % model_parallel); a cut
 * inside a head (the one K/V head of multi-query attention over tp 2) runs
 * in none of them. 1, or 0 with the reason in err. */
static int whole_heads(const pl_graph *g, const cJSON *ck, pl_err *err)
{
	pl_ckpt_doc d;
	int *at = g ? pl_malloc(sizeof *at * ((size_t)g->nops + 1)) : NULL, ok = 1;
	if (!g || !at || pl_ckpt_doc_read(ck, &d, err)) {
		if (g)
			pl_err_set(err, PL_ENOMEM, "out of memory");
		if (at)
			pl_ckpt_doc_free(&d);
		free(at);
		return !g;
	}
	/* the model's ops' entries in the plan (-1: none; the first of a name) */
	for (int i = 0; i < g->nops; i++)
		at[i] = -1;
	for (int k = d.nops - 1; k >= 0; k--) {
		int i = d.ops[k].name ? pl_graph_find_op(g, d.ops[k].name) : -1;
		if (i >= 0)
			at[i] = k;
	}
	for (int i = 0; ok && i < g->nops; i++) {
		const pl_op *op = &g->ops[i];
		if (op->type != PL_OP_RESHAPE || op->ninputs < 1 || op->noutputs < 1)
			continue;
		const pl_tensor *in = &g->tensors[op->in[0]], *out = &g->tensors[op->out[0]];
		if (in->rank < 1 || out->rank < 2 || out->rank <= in->rank)
			continue;
		int64_t H = in->shape[in->rank - 1], n = out->shape[out->rank - 2],
		        dh = out->shape[out->rank - 1];
		if (dh <= 1 || n < 1 || n * dh != H)
			continue;
		const pl_ckpt_op *po = at[i] >= 0 ? &d.ops[at[i]] : NULL;
		int64_t c = po && po->ninputs > 0 && po->rank[0] >= in->rank
		                ? po->split[0][in->rank - 1]
		                : 0;
		if (c > 1 && n % c) {
			pl_err_set(err, PL_EINFEASIBLE,
			           "%s cuts %s (%lld head%s of %lld) %lld ways: a tensor-parallel "
			           "rank holds whole heads in every framework (heads / tp)",
			           op->name, in->name, (long long)n, n == 1 ? "" : "s",
			           (long long)dh, (long long)c);
			ok = 0;
		}
	}
	pl_ckpt_doc_free(&d);
	free(at);
	return ok;
}

static double ck_step(const cJSON *ck)
{
	pl_ckpt_view v;
	pl_ckpt_view_read(ck, &v);
	return pl_ckpt_or(v.step_s, INFINITY);
}

/* One tensor-parallel degree's best plan fw states: the search's (*first =
 * 1), or the first of its alternatives (best first) that fw states, re-solved
 * with its configuration fixed. PL_OK and *ck, or an error (why not in
 * err). */
static pl_status search_one(int fw, pl_graph *g, const pl_cluster *cl, const pl_plan_opts *base,
                            const pl_job_request *r, cJSON **ck, double *secs, int *first,
                            pl_err *err)
{
	pl_plan_opts o = *base;
	pl_status st = pl_plan_opts_job(&o, r, 0, err);
	if (st)
		return st;
	if (r->zero.how != PL_GIVEN_VALUE) {
		o.jo.zero_mask = fw_spaces[fw].zero_mask;
		o.jo.zero_mask_pp = fw_spaces[fw].zero_mask_pp;
	}
	if (r->recompute.how != PL_GIVEN_VALUE)
		o.jo.recompute_mask = fw_spaces[fw].recompute_mask;
	o.top = 8;
	cJSON *all = NULL;
	double s1 = 0;
	if ((st = pl_plan_search(g, cl, &o, &all, &s1, err)))
		return st;
	*secs += s1;
	pl_err why = {{0}};
	if (states(fw, all, &why) && whole_heads(g, all, &why)) {
		cJSON_DeleteItemFromObject(cJSON_GetObjectItemCaseSensitive(all, "search"),
		                           "alternatives");
		*ck = all;
		*first = 1;
		return PL_OK;
	}
	*err = why;
	st = PL_EINFEASIBLE;
	pl_ckpt_doc d;
	if (pl_ckpt_doc_read(all, &d, err)) {
		pl_ckpt_doc_free(&d);
		cJSON_Delete(all);
		return PL_ENOMEM;
	}
	for (int k = 1; k < d.nalts; k++) { /* 0: the plan just refused */
		const pl_ckpt_alt *alt = &d.alts[k];
		pl_job_request q = *r;
		q.stages = pl_dim_value((long long)pl_ckpt_or(alt->stages, 1));
		q.micro_batches = pl_dim_value((long long)pl_ckpt_or(alt->micro_batches, 1));
		q.micro_batch_size = (pl_dim){0};
		q.virtual_stages = pl_dim_value((long long)pl_ckpt_or(alt->virtual_stages, 1));
		q.zero = pl_dim_value((long long)pl_ckpt_or(alt->zero, 0));
		int rc = alt->recompute ? pl_recompute_parse(alt->recompute) : PL_RECOMPUTE_NONE;
		q.recompute = pl_dim_value(rc >= 0 ? rc : PL_RECOMPUTE_NONE);
		pl_plan_opts o2 = *base;
		pl_err e2 = {{0}};
		cJSON *one = NULL;
		double s2 = 0;
		if (pl_plan_opts_job(&o2, &q, 0, &e2) || pl_plan_search(g, cl, &o2, &one, &s2, &e2))
			continue;
		*secs += s2;
		if (states(fw, one, &e2) && whole_heads(g, one, &e2)) {
			*ck = one;
			st = PL_OK;
			break;
		}
		cJSON_Delete(one);
	}
	pl_ckpt_doc_free(&d);
	cJSON_Delete(all);
	return st;
}

pl_status pl_export_search(pl_graph *g, const pl_cluster *cl, const pl_plan_opts *base,
                           const pl_job_request *jr, const char *framework, cJSON **ck,
                           double *seconds, pl_err *err)
{
	int fw = framework_option(framework, err);
	*ck = NULL;
	if (fw < 0)
		return PL_EINVAL;
	const struct fw_space *sp = &fw_spaces[fw];
	pl_job_request r = *jr;
	r.all = 1;
	if (r.layer_cuts.how == PL_GIVEN_NOT)
		r.layer_cuts = pl_dim_value(sp->cuts);
	if (r.replicas.how == PL_GIVEN_NOT)
		r.replicas = pl_dim_value(0); /* every op cut by the degrees */
	if (!sp->vp && r.virtual_stages.how != PL_GIVEN_VALUE)
		r.virtual_stages = pl_dim_value(1);
	if (!sp->pp && r.stages.how != PL_GIVEN_VALUE)
		r.stages = pl_dim_value(1);
	if (!sp->recompute && r.recompute.how != PL_GIVEN_VALUE)
		r.recompute = pl_dim_value(PL_RECOMPUTE_NONE);
	/* the tensor-parallel degrees: the one given, else 1, 2, 4, ... within a
	 * node (and the devices) where the framework has tensor parallelism */
	int64_t node = cl->devices_per_node > 0 ? cl->devices_per_node : 1,
	        devs = pl_cluster_devices_total(cl), tps[32];
	int ntp = 0;
	if (r.tp.how == PL_GIVEN_VALUE)
		tps[ntp++] = r.tp.v;
	else
		for (int64_t t = 1; t <= (sp->tp ? node : 1) && t <= devs && ntp < 32; t *= 2)
			tps[ntp++] = t;
	double secs = 0, best = INFINITY;
	pl_status last = PL_OK;
	pl_err why = {{0}};
	int found = 0, refused = 0, proven = 1;
	for (int i = 0; i < ntp; i++) {
		pl_job_request q = r;
		q.tp = pl_dim_value(tps[i]);
		if (q.seq_parallel.how != PL_GIVEN_VALUE)
			q.seq_parallel = pl_dim_value(tps[i] > 1 && sp->sp);
		cJSON *one = NULL;
		pl_err e = {{0}};
		int first = 0;
		pl_status st = search_one(fw, g, cl, base, &q, &one, &secs, &first, &e);
		if (st == PL_ENOMEM || st == PL_ETIMEOUT) {
			cJSON_Delete(*ck);
			*ck = NULL;
			*err = e;
			return st;
		}
		if (st) {
			refused += st == PL_EINFEASIBLE && !strstr(e.msg, "memory limit");
			if (!last || st == PL_EINFEASIBLE) {
				last = st;
				why = e;
			}
			continue;
		}
		found = 1;
		/* proven over the framework's space when every degree's search is
		 * proven and its own optimum is one the framework states */
		pl_ckpt_view ov;
		pl_ckpt_view_read(one, &ov);
		proven &= first && ov.optimal;
		if (ck_step(one) < best) {
			best = ck_step(one);
			cJSON_Delete(*ck);
			*ck = one;
		} else {
			cJSON_Delete(one);
		}
	}
	if (seconds)
		*seconds = secs;
	if (!found) {
		*err = why;
		if (refused)
			pl_err_prefix(err,
			              "%s states none of the fastest configurations' plans (its "
			              "space: %s); of the best",
			              fws[fw].version, sp->what);
		return last ? last : pl_err_set(err, PL_EINFEASIBLE, "no plan");
	}
	cJSON *s = cJSON_GetObjectItemCaseSensitive(*ck, "search");
	char space[512];
	snprintf(space, sizeof space, "plans %s can state (%s)", fws[fw].version, sp->what);
	cJSON_DeleteItemFromObject(s, "space");
	cJSON_DeleteItemFromObject(s, "space_widen");
	if (!proven)
		cJSON_ReplaceItemInObjectCaseSensitive(s, "optimal", cJSON_CreateFalse());
	if (!cJSON_AddStringToObject(s, "framework", fws[fw].name) ||
	    !cJSON_AddStringToObject(s, "space", space)) {
		cJSON_Delete(*ck);
		*ck = NULL;
		return pl_err_set(err, PL_ENOMEM, "out of memory");
	}
	return PL_OK;
}

int pl_export_find(const char *name)
{
	return fw_parse(name);
}

const char *pl_export_title(int i)
{
	return i >= 0 && i < FW_COUNT ? fws[i].title : NULL;
}

int pl_export_count(void)
{
	return FW_COUNT;
}

const char *pl_export_name(int i)
{
	return i >= 0 && i < FW_COUNT ? fws[i].name : NULL;
}

const char *pl_export_version(int i)
{
	return i >= 0 && i < FW_COUNT ? fws[i].version : NULL;
}

const char *pl_export_names(char *buf, size_t n)
{
	return pl_join_names(buf, n, FW_COUNT, pl_export_name);
}

enum { PREC_FP32, PREC_BF16, PREC_FP16 };

/* A job's configuration in uniform degrees: what a plan says, or what a
 * framework's configuration says. */
typedef struct fw_config {
	int64_t devices;            /* 0: unknown (a configuration read) */
	int64_t dp;                 /* 0: what is left of the devices */
	int64_t tp, pp, cp, ep, vp; /* >= 1 */
	int64_t mbs, gbs;           /* per data-parallel rank; the step's; 0: unknown */
	int zero, recompute;        /* ZeRO level; PL_RECOMPUTE_* */
	int sp;                     /* sequence parallel: 1, 0, -1 not said */
	int precision;              /* PREC_*; -1 not said */
	int fp8;                    /* the linear layers' GEMMs: pl_gemm_dtype, -1 not said */
	int vocab_emb_dp;           /* embedding replicated over tp (not cut) */
	int64_t layers;             /* repeated layers, 0: unknown */
	int64_t *stage;             /* layers of each pipeline stage (pp; owned), or NULL */
	int64_t first, last;        /* first and last stage layers as read; -1: even */
	int64_t tt_first, tt_last;  /* torchtitan's *_stage_less_layers as read; -1 */
	int64_t seq;                /* sequence length, 0: unknown */
	/* the pricing switches (PL_FW_PRICE_*) as the options take them: the
	 * plan's (its cluster block, pipeline.overlap_grad_reduce) or what a
	 * configuration states; NULL: not said */
	const char *price[PL_FW_PRICE_COUNT];
	const char *model, *cluster; /* names, for the header (the checkpoint's) */
} fw_config;

static void cfg_init(fw_config *c)
{
	memset(c, 0, sizeof *c);
	c->tp = c->pp = c->cp = c->ep = c->vp = 1;
	c->sp = c->precision = c->fp8 = -1;
	c->first = c->last = c->tt_first = c->tt_last = -1;
	c->recompute = PL_RECOMPUTE_NONE;
}

/* ---- the plan's configuration ---- */

/* the size of the checkpoint's group `name` (1 without one) */
static int64_t group_size(const pl_ckpt_doc *d, const char *name)
{
	int n = pl_ckpt_group_size(pl_ckpt_doc_groups(d, name), 0);
	return n > 0 ? n : 1;
}

/* the job's pricing switch i (job_switch) as the pipeline block says it */
static int pipe_switch(const pl_ckpt_view *v, int i)
{
	return i == PL_FW_PRICE_OVERLAP      ? v->overlap_grad_reduce
	       : i == PL_FW_PRICE_TP_OVERLAP ? v->tp_comm_overlap
	                                     : v->overlap_param_gather;
}

/* x as an integer when it is one (to 1e-6 relative), else -1 */
static int64_t near_int(double x)
{
	double r = round(x);
	return isfinite(x) && r >= 1 && r < 9e15 && fabs(x - r) <= 1e-6 * r ? (int64_t)r : -1;
}

/* o.k as an integer; dflt when absent, -1 when it is no integer of a sane
 * size (a cast of a huge double would be undefined) */
static int64_t jint(const cJSON *o, const char *k, int64_t dflt)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, k);
	if (!x)
		return dflt;
	double v = cJSON_IsNumber(x) ? x->valuedouble : NAN;
	return v >= -(1LL << 40) && v <= (1LL << 40) && v == floor(v) ? (int64_t)v : -1;
}

static int64_t part_num(const cJSON *parts, const char *part, const char *k)
{
	return jint(cJSON_GetObjectItemCaseSensitive(parts, part), k, 0);
}

/* plan_config's first part: the devices, the pipeline, the pricing
 * switches, the degrees (groups and cuts), ZeRO and recompute; *m the
 * micro-batches */
static pl_status plan_degrees(const cJSON *ck, const pl_ckpt_doc *d, const char *where,
                              fw_config *c, int64_t *m, pl_err *err)
{
	cfg_init(c);
	const cJSON *cl = cJSON_GetObjectItemCaseSensitive(ck, "cluster"),
	            *pipe = cJSON_GetObjectItemCaseSensitive(ck, "pipeline"),
	            *cost = cJSON_GetObjectItemCaseSensitive(ck, "cost"),
	            *parts = cJSON_GetObjectItemCaseSensitive(ck, "parts"),
	            *items = cJSON_GetObjectItemCaseSensitive(ck, "parallel_strategy_item");
	if (!cJSON_IsObject(ck) || !cJSON_IsObject(cl) || !cJSON_IsObject(cost) ||
	    !cJSON_IsObject(items))
		return pl_err_set(err, PL_EINVAL,
		                  "%s: not a planner checkpoint (expected \"cluster\", \"cost\" "
		                  "and \"parallel_strategy_item\", as 'planner search -o' writes)",
		                  where);
	c->model = d->v.model_name;
	c->cluster = d->v.cluster_name;
	c->devices = jint(cl, "devices", 0);
	c->pp = jint(pipe, "stages", 1);
	*m = jint(pipe, "micro_batches", 1);
	c->vp = jint(pipe, "virtual_stages", 1);
	if (c->devices < 1 || c->devices > PL_MAX_DEVICES || c->pp < 1 || c->pp > c->devices ||
	    *m < 1 || *m > (1 << 30) || c->vp < 1 || c->vp > 64)
		return pl_err_set(err, PL_EINVAL,
		                  "%s: cluster.devices, pipeline.stages, .micro_batches or "
		                  ".virtual_stages out of range",
		                  where);
	/* how the plan was priced: the training program's switches */
	const cJSON *dev = cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(cl, "description"), "device");
	for (int i = 0; i < PL_FW_PRICE_COUNT; i++)
		c->price[i] =
		    job_switch(i) ? (pipe_switch(&d->v, i) ? "on" : "off")
		                  : cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(dev, price_key[i]));
	if (d->v.has_groups_exceptions)
		return pl_err_set(
		    err, PL_EINVAL,
		    "%s: the layers' weights are not all cut alike "
		    "(\"groups_exceptions\"): a framework cuts every layer by the same "
		    "degrees",
		    where);
	/* tp: the ranks holding different slices of the layers' weight; the
	 * ranks holding the same slice are data and context parallel */
	c->tp = group_size(d, "tp");
	int64_t dpcp = group_size(d, "dp");
	c->ep = group_size(d, "ep");
	c->cp = parts ? part_num(parts, "attention", "sequence_cut") : 1;
	if (c->cp < 1)
		c->cp = 1;
	if (c->tp > c->devices || dpcp > c->devices || c->ep > c->devices || c->cp > c->devices)
		return pl_err_set(err, PL_EINVAL, "%s: groups or cuts larger than the %lld devices",
		                  where, (long long)c->devices);
	if (dpcp % c->cp)
		return pl_err_set(err, PL_EINVAL,
		                  "%s: the attention's sequence cut %lld does not divide the "
		                  "weight's replicas %lld: no context-parallel degree states it",
		                  where, (long long)c->cp, (long long)dpcp);
	c->dp = dpcp / c->cp;
	if ((double)c->dp * (double)c->tp * (double)c->cp * (double)c->pp != (double)c->devices)
		return pl_err_set(err, PL_EINVAL,
		                  "%s: dp %lld x tp %lld x cp %lld x pp %lld is not the cluster's "
		                  "%lld devices: the plan's layout is not one of uniform degrees",
		                  where, (long long)c->dp, (long long)c->tp, (long long)c->cp,
		                  (long long)c->pp, (long long)c->devices);
	const cJSON *z = cJSON_GetObjectItemCaseSensitive(ck, "optimizer_shard");
	c->zero =
	    z ? (int)(jint(ck, "optimizer_shard", 0) < 0 ? 9 : jint(ck, "optimizer_shard", 0)) : 0;
	if (c->zero < 0 || c->zero > 3)
		return pl_err_set(err, PL_EINVAL, "%s: optimizer_shard %d", where, c->zero);
	const char *rc = d->v.recompute;
	c->recompute = rc ? pl_recompute_parse(rc) : PL_RECOMPUTE_NONE;
	if (c->recompute < 0)
		return pl_err_set(err, PL_EINVAL, "%s: recompute \"%s\"", where, rc);
	return PL_OK;
}

/* plan_config's second part: the batch, the micro-batch (m micro-batches),
 * the sequence, 16-bit or not, FP8 */
static pl_status plan_batch(const pl_ckpt_view *v, const char *where, fw_config *c, int64_t m,
                            pl_err *err)
{
	/* the batch and the sequence: cost.global_batch and tokens_per_step, or
	 * (checkpoints written before them) from the step's rates: samples a
	 * second times the step is the batch, tokens the same way */
	double step = pl_ckpt_or(v->step_s, 0), sps = pl_ckpt_or(v->samples_per_s, 0),
	       tps = pl_ckpt_or(v->tokens_per_s, 0), gb = pl_ckpt_or(v->global_batch, sps * step),
	       tokens = pl_ckpt_or(v->tokens_per_step, tps * step * (double)c->devices);
	c->gbs = near_int(gb);
	if (c->gbs < 1 || c->gbs % (c->dp * m))
		return pl_err_set(err, PL_EINVAL,
		                  "%s: no whole global batch in the cost (%g) that dp %lld x %lld "
		                  "micro-batches divide",
		                  where, gb, (long long)c->dp, (long long)m);
	c->mbs = c->gbs / (c->dp * m);
	if (tokens > 0)
		c->seq = near_int(tokens / (double)c->gbs);
	if (c->seq < 0)
		c->seq = 0;
	/* 16-bit or not, from the peak the MFU was taken against */
	/* the cluster's device (planner.cluster/1, topology's format) */
	const cJSON *dev = cJSON_GetObjectItemCaseSensitive(v->cluster_desc, "device"),
	            *peaks = cJSON_GetObjectItemCaseSensitive(dev, "peak_flops");
	double mfu = pl_ckpt_or(v->mfu, 0), flops = pl_ckpt_or(v->model_flops, 0);
	double used = mfu > 0 ? flops / (mfu * step * (double)c->devices) : 0;
	double p32 = pl_json_num(peaks, "float32", 0), p16 = pl_json_num(peaks, "bfloat16", 0);
	c->precision = used > 0 && p32 > 0 && p32 != p16 && fabs(used - p32) <= 1e-6 * p32
	                   ? PREC_FP32
	                   : PREC_BF16;
	const char *gd = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(dev, "gemm_dtype"));
	c->fp8 = gd && pl_gemm_dtype_parse(gd) > 0 ? pl_gemm_dtype_parse(gd) : PL_GEMM_PARAM;
	return PL_OK;
}

/* plan_config's third part: every part of the model cut by the degrees,
 * sequence parallelism on or off */
static pl_status plan_parts(const cJSON *ck, const pl_ckpt_view *v, const char *where,
                            fw_config *c, pl_err *err)
{
	const cJSON *parts = cJSON_GetObjectItemCaseSensitive(ck, "parts");
	/* the parts: every layer's weights cut tp ways, tokens dp ways, the
	 * sequence cp ways (tp x cp for sequence-parallel norms) */
	static const char *const pn[] = {"embedding", "attention", "mlp", "experts", "head"};
	int sp_on = 0, sp_off = 0;
	for (int i = 0; parts && i < 5; i++) {
		const cJSON *p = cJSON_GetObjectItemCaseSensitive(parts, pn[i]);
		if (!p)
			continue;
		int64_t w = jint(p, "weight_cut", 0), b = jint(p, "batch_cut", 1),
		        s = jint(p, "sequence_cut", 1), r = jint(p, "replicated", 1),
		        ns = jint(p, "norms_sequence_cut", 0);
		if (i == 0 && w == 1 && c->tp > 1) {
			c->vocab_emb_dp = 1;
		} else if (i != 3 && w > 0 && w != c->tp) {
			return pl_err_set(
			    err, PL_EINVAL,
			    "%s: the %s's weights are cut %lld ways, the layers' %lld "
			    "(tensor parallel): one degree cuts them all in a framework",
			    where, pn[i], (long long)w, (long long)c->tp);
		}
		if (i != 3 && b != c->dp)
			return pl_err_set(err, PL_EINVAL,
			                  "%s: the %s's tokens are cut %lld ways in the batch, the "
			                  "data-parallel degree is %lld",
			                  where, pn[i], (long long)b, (long long)c->dp);
		if (i != 3 && s != c->cp && s != c->cp * c->tp)
			return pl_err_set(err, PL_EINVAL,
			                  "%s: the %s's sequence is cut %lld ways: neither the "
			                  "context-parallel degree %lld nor it times tp",
			                  where, pn[i], (long long)s, (long long)c->cp);
		if (i != 3 && r != 1 && r != c->tp)
			return pl_err_set(err, PL_EINVAL,
			                  "%s: the %s's ops are replicated %lld times: a framework "
			                  "replicates only over the tensor-parallel ranks (%lld)",
			                  where, pn[i], (long long)r, (long long)c->tp);
		if (ns > 0 && c->tp > 1) {
			sp_on += ns == c->cp * c->tp;
			sp_off += ns == c->cp;
			if (ns != c->cp * c->tp && ns != c->cp)
				return pl_err_set(err, PL_EINVAL,
				                  "%s: the %s's norms cut the sequence %lld ways",
				                  where, pn[i], (long long)ns);
		}
	}
	if (sp_on && sp_off)
		return pl_err_set(err, PL_EINVAL,
		                  "%s: sequence parallelism on for some parts' norms and off for "
		                  "others: a framework turns it on or off for the whole model "
		                  "(search with --sequence-parallel on or off)",
		                  where);
	c->sp = c->tp > 1 ? sp_on > 0 : 0;
	if (v->sequence_parallel >= 0 && c->tp > 1)
		c->sp = v->sequence_parallel;
	return PL_OK;
}

/* plan_config's last part: the layers of each pipeline stage (c->stage) */
static pl_status plan_stages(const cJSON *ck, const char *where, fw_config *c, pl_err *err)
{
	const cJSON *items = cJSON_GetObjectItemCaseSensitive(ck, "parallel_strategy_item");
	/* the layers of each stage, counted in attention and MLP ops */
	c->layers = jint(cJSON_GetObjectItemCaseSensitive(ck, "search"), "repeated_layers", 0);
	if (c->pp == 1)
		return PL_OK;
	if (c->layers < c->pp)
		return pl_err_set(err, PL_EINVAL,
		                  "%s: %lld pipeline stages and %lld repeated layers found in the "
		                  "model: a framework's split states whole transformer layers",
		                  where, (long long)c->pp, (long long)c->layers);
	int64_t *att = pl_calloc((size_t)c->pp * 2, sizeof *att);
	c->stage = pl_calloc((size_t)c->pp, sizeof *c->stage);
	if (!att || !c->stage) {
		free(att);
		return pl_err_set(err, PL_ENOMEM, "out of memory");
	}
	int64_t *mlp = att + c->pp, last_stage = 0, ta = 0, tm = 0;
	const cJSON *it;
	cJSON_ArrayForEach (it, items) {
		int64_t s = jint(it, "stage", 0);
		const char *part =
		    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, "part"));
		if (s < 0 || s >= c->pp || s < last_stage) {
			free(att);
			return pl_err_set(err, PL_EINVAL,
			                  "%s: op '%s' in stage %lld after ops of stage %lld: the "
			                  "stages are not runs of consecutive ops",
			                  where, it->string, (long long)s, (long long)last_stage);
		}
		last_stage = s;
		if (!part)
			continue;
		if ((!strcmp(part, "embedding") && s != 0) ||
		    (!strcmp(part, "head") && s != c->pp - 1)) {
			free(att);
			return pl_err_set(
			    err, PL_EINVAL,
			    "%s: op '%s' of the %s in stage %lld: a framework keeps "
			    "the embedding on the first stage and the head on the last",
			    where, it->string, part, (long long)s);
		}
		if (!strcmp(part, "attention"))
			att[s]++, ta++;
		else if (!strcmp(part, "mlp") || !strcmp(part, "experts"))
			mlp[s]++, tm++;
	}
	pl_status st = PL_OK;
	if (!ta || !tm || ta % c->layers || tm % c->layers) {
		st = pl_err_set(err, PL_EINVAL,
		                "%s: %lld attention and %lld MLP ops are not %lld alike layers: "
		                "the stages' layers cannot be counted",
		                where, (long long)ta, (long long)tm, (long long)c->layers);
		goto done;
	}
	for (int64_t s = 0; s < c->pp; s++) {
		int64_t a = att[s] / (ta / c->layers), b = mlp[s] / (tm / c->layers);
		if (att[s] % (ta / c->layers) || mlp[s] % (tm / c->layers) || a != b) {
			st = pl_err_set(
			    err, PL_EINVAL,
			    "%s: pipeline stage %lld ends inside a transformer layer (it "
			    "holds %lld attention and %lld MLP ops, a layer %lld and %lld): "
			    "frameworks place whole layers on a stage",
			    where, (long long)s, (long long)att[s], (long long)mlp[s],
			    (long long)(ta / c->layers), (long long)(tm / c->layers));
			goto done;
		}
		c->stage[s] = a;
	}
done:
	free(att);
	return st;
}

/* Reads the plan's whole-job degrees; an error says what of the plan no
 * framework's uniform degrees state (PL_EINVAL). */
static pl_status plan_config(const cJSON *ck, const char *where, fw_config *c, pl_err *err)
{
	int64_t m = 1;
	pl_ckpt_doc d;
	pl_status st = pl_ckpt_doc_read(ck, &d, err);
	if (!st)
		st = plan_degrees(ck, &d, where, c, &m, err);
	if (!st)
		st = plan_batch(&d.v, where, c, m, err);
	if (!st)
		st = plan_parts(ck, &d.v, where, c, err);
	if (!st)
		st = plan_stages(ck, where, c, err);
	pl_ckpt_doc_free(&d);
	return st;
}

/* ---- writing ---- */

typedef struct sbuf {
	char *p;
	size_t n, cap;
	int oom;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (b->oom || k < 0)
		return;
	if (b->n + (size_t)k + 1 > b->cap) {
		size_t cap = (b->n + (size_t)k + 1) * 2;
		char *p = pl_realloc(b->p, cap);
		if (!p) {
			b->oom = 1;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	va_start(ap, fmt);
	vsnprintf(b->p + b->n, b->cap - b->n, fmt, ap);
	va_end(ap);
	b->n += (size_t)k;
}

/* What an export writes: its text, and its keys with their values. */
typedef struct out {
	int fw;
	sbuf text;
	cJSON *keys;
	char prefix[128]; /* YAML/TOML: the section of the next value */
	int depth;        /* YAML: the prefix's components */
} out;

static void record(out *o, const char *key, const char *val)
{
	if (!cJSON_GetObjectItemCaseSensitive(o->keys, key))
		cJSON_AddStringToObject(o->keys, key, val ? val : "");
}

/* a flag: "--name value \" lines (the last line's backslash dropped at the end) */
static void arg(out *o, const char *flag, const char *val)
{
	if (val)
		sb_printf(&o->text, "%s %s \\\n", flag, val);
	else
		sb_printf(&o->text, "%s \\\n", flag);
	record(o, flag, val);
}

/* YAML or TOML: the values that follow go under section (dotted) */
static void section(out *o, const char *sec)
{
	if (fws[o->fw].syntax == PL_FW_TOML) {
		sb_printf(&o->text, "\n[%s]\n", sec);
		snprintf(o->prefix, sizeof o->prefix, "%s", sec);
		return;
	}
	/* YAML: the components not open already (those shared with the last
	 * section stay open) */
	const char *p = o->prefix, *q = sec;
	int d = 0;
	while (*p && *q) {
		size_t pn = strcspn(p, "."), qn = strcspn(q, ".");
		if (pn != qn || memcmp(p, q, pn))
			break;
		d++;
		p += pn + (p[pn] == '.');
		q += qn + (q[qn] == '.');
	}
	o->depth = d;
	for (const char *s = q; *s;) {
		size_t n = strcspn(s, ".");
		sb_printf(&o->text, "%*s%.*s:\n", 2 * o->depth, "", (int)n, s);
		o->depth++;
		s += n + (s[n] == '.');
	}
	snprintf(o->prefix, sizeof o->prefix, "%s", sec);
}

static void value(out *o, const char *key, const char *val)
{
	char full[256];
	snprintf(full, sizeof full, "%s.%s", o->prefix, key);
	if (fws[o->fw].syntax == PL_FW_TOML)
		sb_printf(&o->text, "%s = %s\n", key, val);
	else
		sb_printf(&o->text, "%*s%s: %s\n", 2 * o->depth, "", key, val);
	/* recorded unquoted, as the readers give it back */
	size_t n = strlen(val);
	char *plain = pl_strdup(val);
	if (!plain) {
		o->text.oom = 1;
		return;
	}
	if (n >= 2 && val[0] == '"' && val[n - 1] == '"') {
		memmove(plain, plain + 1, n - 2);
		plain[n - 2] = 0;
	}
	record(o, full, plain);
	free(plain);
}

static void ivalue(out *o, const char *key, int64_t v)
{
	char b[32];
	snprintf(b, sizeof b, "%lld", (long long)v);
	value(o, key, b);
}

/* the pricing switches the plan was priced with that fw states with a key
 * of section sec (YAML/TOML: after section(o, sec); "" for arguments): a
 * flag where on, a boolean key always */
static void price_keys(out *o, const fw_config *c, const char *sec)
{
	size_t n = strlen(sec);
	for (size_t i = 0; i < sizeof fw_price_keys / sizeof *fw_price_keys; i++) {
		const struct fw_price_key *k = &fw_price_keys[i];
		const char *v = c->price[k->sw];
		if (k->fw != o->fw || !v || strncmp(k->key, sec, n) || (n && k->key[n] != '.'))
			continue;
		/* Megatron-LM takes --overlap-param-gather only with a sharded
		 * optimizer (validate_args); a ZeRO-0 plan gathers no parameters, so
		 * the switch priced nothing there */
		if (o->fw == FW_MEGATRON && k->sw == PL_FW_PRICE_PARAM_OVERLAP && c->zero == 0)
			continue;
		if (k->choices) { /* stated where it prices something: context parallel */
			const char *w = choice_word(k->choices, v);
			char q[64];
			snprintf(q, sizeof q, fws[o->fw].syntax == PL_FW_TOML ? "\"%s\"" : "%s",
			         w ? w : "");
			if (w && c->cp > 1 && !n)
				arg(o, k->key, w);
			else if (w && c->cp > 1)
				value(o, k->key + n + 1, q);
		} else if (k->flag) {
			if (!strcmp(v, k->yes))
				arg(o, k->key, NULL);
		} else if (!strcmp(v, k->yes) || !strcmp(v, k->no)) {
			value(o, k->key + n + 1, !strcmp(v, k->yes) ? "true" : "false");
		}
	}
}

static const char *num(char *b, int64_t v)
{
	snprintf(b, 24, "%lld", (long long)v);
	return b;
}

/* a pricing switch's value is "on" */
static int on(const char *v)
{
	return v && !strcmp(v, "on");
}

/* refusal: what the framework cannot state, and why */
#define REFUSE(...)                                                                                \
	do {                                                                                       \
		char why_[600];                                                                    \
		snprintf(why_, sizeof why_, __VA_ARGS__);                                          \
		return pl_err_set(err, PL_EINVAL, "%s cannot state this plan: %s",                 \
		                  fws[o->fw].version, why_);                                       \
	} while (0)

/* the stages' layers: even (NULL), or first/middle/last with the middle
 * stages alike (*mid), else -1 */
static int split_form(const fw_config *c, int64_t *first, int64_t *mid, int64_t *last)
{
	*first = *mid = *last = 0;
	if (c->pp == 1 || !c->stage)
		return 0;
	*first = c->stage[0];
	*last = c->stage[c->pp - 1];
	*mid = c->pp > 2 ? c->stage[1] : (c->layers / c->pp);
	for (int64_t s = 1; s < c->pp - 1; s++)
		if (c->stage[s] != *mid)
			return -1;
	int even = c->layers % c->pp == 0 && *first == c->layers / c->pp &&
	           *last == c->layers / c->pp && *mid == c->layers / c->pp;
	return even ? 0 : 1;
}

/* Megatron-LM's interleaved schedule with the first and last stages' layers
 * stated: every chunk of a stage holds that stage's layers / vp
 * (transformer_layer.py get_transformer_layer_offset: first // vp_size,
 * last // vp_size, middle // vp_size over the middle stages), which is the
 * planner's chunk, a vp-th of its stage, where each divides */
static int chunks_divide(const fw_config *c, int64_t first, int64_t mid, int64_t last)
{
	return first % c->vp == 0 && last % c->vp == 0 && (c->pp <= 2 || mid % c->vp == 0);
}

static const char *rc_name(int r)
{
	return pl_recompute_name(r);
}

/* The layer split Megatron-LM and NeMo state (split_form's), after the two
 * refusals both make first: torchtitan's per-op recompute (`whose`
 * selective recompute is the attention core's) and middle stages of
 * different sizes (`ends`: what the framework states instead) */
static pl_status megatron_split(out *o, const fw_config *c, const char *whose, const char *ends,
                                int *form, int64_t *first, int64_t *mid, int64_t *last, pl_err *err)
{
	*form = split_form(c, first, mid, last);
	if (c->recompute == PL_RECOMPUTE_SELECTIVE_OP)
		REFUSE("selective-op recompute (torchtitan's per-op checkpointing): %s selective "
		       "recompute is the attention core's",
		       whose);
	if (*form < 0)
		REFUSE("its middle pipeline stages hold different numbers of layers; %s", ends);
	return PL_OK;
}

/* Whether Megatron's virtual stages cut the layer split (form and its
 * counts) unevenly: 1 when an uneven split's stages do not divide into vp
 * chunks (chunks_divide), 2 when an even split's layers do not make pp x vp
 * equal chunks, else 0 */
static int chunks_uneven(const fw_config *c, int form, int64_t first, int64_t mid, int64_t last)
{
	if (form && c->vp > 1 && !chunks_divide(c, first, mid, last))
		return 1;
	if (!form && c->vp > 1 && (c->layers <= 0 || c->layers % (c->pp * c->vp)))
		return 2;
	return 0;
}

/* Megatron-LM (and the Megatron-DeepSpeed fork: mds) */
static pl_status emit_megatron(out *o, const fw_config *c, int mds, pl_err *err)
{
	char b[24];
	int64_t first, mid, last;
	int form;
	pl_status st = megatron_split(o, c, "Megatron's",
	                              "Megatron states the first and last stages' layers and "
	                              "splits the rest evenly",
	                              &form, &first, &mid, &last, err);
	if (st)
		return st;
	if (c->ep > 1 && mds)
		REFUSE("expert parallelism (ep %lld)", (long long)c->ep);
	if (c->cp > 1 && mds)
		REFUSE("context parallelism (cp %lld): its --ds-sequence-parallel-size is "
		       "DeepSpeed-Ulysses, another cut",
		       (long long)c->cp);
	if (mds && (c->vp > 1 || form))
		REFUSE("%s: DeepSpeed's pipeline engine splits the layers evenly, one chunk a "
		       "stage",
		       c->vp > 1 ? "interleaved virtual stages" : "an uneven layer split");
	if (!mds && c->zero >= 2 && c->pp > 1)
		REFUSE("ZeRO %d with pipeline stages", c->zero);
	if (mds && c->zero >= 2 && c->pp > 1)
		REFUSE("ZeRO %d with DeepSpeed's pipeline engine (it takes ZeRO 0 or 1)", c->zero);
	int uneven = chunks_uneven(c, form, first, mid, last);
	if (uneven == 1)
		REFUSE("an uneven layer split (%lld first, %lld a middle stage, %lld last) with "
		       "%lld virtual stages: Megatron gives each chunk of a stage 1/%lld of its "
		       "layers (get_transformer_layer_offset), as the planner prices each chunk, "
		       "and these do not divide",
		       (long long)first, (long long)mid, (long long)last, (long long)c->vp,
		       (long long)c->vp);
	if (uneven == 2)
		REFUSE("%lld virtual stages of %lld pipeline stages: %lld layers do not split "
		       "into that many equal chunks",
		       (long long)c->vp, (long long)c->pp, (long long)c->layers);
	if (c->vocab_emb_dp)
		REFUSE("an embedding replicated over the tensor-parallel ranks: Megatron cuts it "
		       "by vocabulary (VocabParallelEmbedding)");
	/* validate_args: --overlap-param-gather only with the distributed
	 * optimizer and --overlap-grad-reduce (arguments.py) */
	if (!mds && c->zero == 1 && on(c->price[PL_FW_PRICE_PARAM_OVERLAP]) &&
	    !on(c->price[PL_FW_PRICE_OVERLAP]))
		REFUSE("parameter all-gathers overlapped without the gradient reduction's: "
		       "Megatron-LM takes --overlap-param-gather only with --overlap-grad-reduce "
		       "(validate_args); search with --overlap-grad-reduce on, or "
		       "--overlap-param-gather off");
	arg(o, "--tensor-model-parallel-size", num(b, c->tp));
	arg(o, "--pipeline-model-parallel-size", num(b, c->pp));
	if (c->vp > 1)
		arg(o, "--num-virtual-stages-per-pipeline-rank", num(b, c->vp));
	if (form) {
		arg(o, "--decoder-first-pipeline-num-layers", num(b, first));
		arg(o, "--decoder-last-pipeline-num-layers", num(b, last));
	}
	if (!mds)
		arg(o, "--context-parallel-size", num(b, c->cp));
	if (c->ep > 1)
		arg(o, "--expert-model-parallel-size", num(b, c->ep));
	if (c->sp > 0 && c->tp > 1)
		arg(o, "--sequence-parallel", NULL);
	arg(o, "--micro-batch-size", num(b, c->mbs));
	arg(o, "--global-batch-size", num(b, c->gbs));
	if (mds) {
		arg(o, "--zero-stage", num(b, c->zero));
		if (c->pp == 1)
			arg(o, "--no-pipeline-parallel", NULL);
	} else if (c->zero == 1) {
		arg(o, "--use-distributed-optimizer", NULL);
	} else if (c->zero >= 2) {
		arg(o, "--use-megatron-fsdp", NULL);
		arg(o, "--data-parallel-sharding-strategy",
		    c->zero == 2 ? "optim_grads" : "optim_grads_params");
	}
	if (c->recompute == PL_RECOMPUTE_FULL) {
		arg(o, "--recompute-granularity", "full");
		arg(o, "--recompute-method", "uniform");
		arg(o, "--recompute-num-layers", "1");
	} else if (c->recompute == PL_RECOMPUTE_SELECTIVE) {
		arg(o, "--recompute-granularity", "selective");
	}
	if (c->precision == PREC_BF16)
		arg(o, "--bf16", NULL);
	else if (c->precision == PREC_FP16)
		arg(o, "--fp16", NULL);
	if (c->fp8 > 0 && mds)
		REFUSE("FP8 GEMMs (Megatron-DeepSpeed has no Transformer Engine FP8 switch)");
	if (c->fp8 > 0) /* Transformer Engine's delayed scaling, E4M3 forward, E5M2 gradients */
		arg(o, "--fp8-format", "hybrid");
	if (!mds) { /* how the plan was priced, where Megatron-LM's arguments say it */
		for (size_t j = 0;
		     c->price[PL_FW_PRICE_ATTENTION] && j < sizeof mg_backend / sizeof *mg_backend;
		     j++)
			if (!strcmp(c->price[PL_FW_PRICE_ATTENTION], mg_backend[j][1])) {
				arg(o, "--attention-backend", mg_backend[j][0]);
				break;
			}
		price_keys(o, c, "");
	}
	if (mds) {
		arg(o, "--deepspeed", NULL);
		arg(o, "--deepspeed_config", "ds_config.json");
	}
	return PL_OK;
}

static pl_status emit_nemo(out *o, const fw_config *c, pl_err *err)
{
	int64_t first, mid, last;
	int form;
	pl_status st = megatron_split(o, c, "NeMo's",
	                              "num_layers_in_first/last_pipeline_stage state the ends only",
	                              &form, &first, &mid, &last, err);
	if (st)
		return st;
	if (c->zero >= 2 && c->pp > 1)
		REFUSE("ZeRO %d with pipeline stages", c->zero);
	int uneven = chunks_uneven(c, form, first, mid, last);
	if (uneven == 1)
		REFUSE("an uneven layer split (%lld first, %lld a middle stage, %lld last) with "
		       "%lld virtual stages: each chunk of a stage holds 1/%lld of its layers "
		       "(Megatron-LM's get_transformer_layer_offset), and these do not divide",
		       (long long)first, (long long)mid, (long long)last, (long long)c->vp,
		       (long long)c->vp);
	if (uneven == 2)
		REFUSE("%lld layers in %lld x %lld equal chunks", (long long)c->layers,
		       (long long)c->pp, (long long)c->vp);
	if (c->vocab_emb_dp)
		REFUSE("an embedding replicated over the tensor-parallel ranks");
	section(o, "model");
	ivalue(o, "tensor_model_parallel_size", c->tp);
	ivalue(o, "pipeline_model_parallel_size", c->pp);
	if (c->vp > 1)
		ivalue(o, "virtual_pipeline_model_parallel_size", c->vp);
	else
		value(o, "virtual_pipeline_model_parallel_size", "null");
	if (form) {
		ivalue(o, "num_layers_in_first_pipeline_stage", first);
		ivalue(o, "num_layers_in_last_pipeline_stage", last);
	}
	ivalue(o, "context_parallel_size", c->cp);
	ivalue(o, "expert_model_parallel_size", c->ep);
	value(o, "sequence_parallel", c->sp > 0 && c->tp > 1 ? "true" : "false");
	if (c->recompute == PL_RECOMPUTE_FULL) {
		value(o, "recompute_granularity", "full");
		value(o, "recompute_method", "uniform");
		value(o, "recompute_num_layers", "1");
	} else if (c->recompute == PL_RECOMPUTE_SELECTIVE) {
		value(o, "recompute_granularity", "selective");
	} else {
		value(o, "recompute_granularity", "null");
	}
	if (c->precision >= 0) {
		value(o, "bf16", c->precision == PREC_BF16 ? "true" : "false");
		value(o, "fp16", c->precision == PREC_FP16 ? "true" : "false");
	}
	price_keys(o, c, "model");
	if (c->fp8 > 0) /* TransformerConfig.fp8: Transformer Engine's hybrid recipe */
		value(o, "fp8", "hybrid");
	section(o, "train");
	ivalue(o, "micro_batch_size", c->mbs);
	ivalue(o, "global_batch_size", c->gbs);
	section(o, "ddp");
	value(o, "use_distributed_optimizer", c->zero == 1 ? "true" : "false");
	if (c->zero >= 2) {
		value(o, "use_megatron_fsdp", "true");
		value(o, "data_parallel_sharding_strategy",
		      c->zero == 2 ? "optim_grads" : "optim_grads_params");
	}
	price_keys(o, c, "ddp");
	section(o, "optimizer");
	value(o, "use_distributed_optimizer", c->zero == 1 ? "true" : "false");
	return PL_OK;
}

/* torchtitan v0.2.2's split of L layers over S stages with the first and
 * last stages a and b layers short (generate_llm_fqn_per_model_part);
 * 0, or -1 where it raises */
static int tt_split(int64_t L, int64_t S, int64_t a, int64_t b, int64_t *out)
{
	int64_t e = L + a + b, per = e / S, extra = e % S;
	if (S < 1 || per < 1 || a > per || b > per)
		return -1;
	if (S == 1) {
		out[0] = L;
		return 0;
	}
	for (int64_t s = 0; s < S; s++) {
		int64_t k = per + (s < extra);
		if (s == 0)
			k -= a;
		if (s == S - 1)
			k -= b;
		if (k < 0)
			return -1;
		out[s] = k;
	}
	return 0;
}

/* torchao's recipe_name of an FP8 gemm dtype, or NULL (param, Transformer
 * Engine's fp8) */
static const char *torchao_recipe(int fp8)
{
	return fp8 == PL_GEMM_FP8_TENSORWISE ? "tensorwise"
	       : fp8 == PL_GEMM_FP8_ROWWISE  ? "rowwise"
	                                     : NULL;
}

static pl_status emit_torchtitan(out *o, const fw_config *c, pl_err *err)
{
	char b[64];
	int fsdp = c->zero == tt_fsdp_zero(c->pp); /* data_parallel_shard_degree */
	if (c->zero != 0 && !fsdp)
		REFUSE("ZeRO %d%s: torchtitan shards all of a layer's state with FSDP "
		       "(data_parallel_shard_degree: ZeRO 3, or ZeRO 1 with pipeline stages, "
		       "which gather a stage's weights once a step) or none "
		       "(data_parallel_replicate_degree)",
		       c->zero, c->pp > 1 ? " with pipeline stages" : "");
	if (!fsdp && c->cp > 1)
		REFUSE("ZeRO 0 with context parallelism: torchtitan shards the weights with FSDP "
		       "over the context-parallel ranks whenever context_parallel_degree > 1 "
		       "(ParallelDims.fsdp_enabled)");
	/* job_config.py: mixed_precision_param takes effect through FSDP (shard
	 * degree > 1 or context parallel), or autocast without other parallelism */
	if (c->precision != PREC_FP32 && !(fsdp && c->dp > 1) && c->cp == 1 &&
	    (c->tp > 1 || c->pp > 1 || c->ep > 1))
		REFUSE("16-bit training with tensor, pipeline or expert parallelism and no FSDP "
		       "(ZeRO 3, or 1 with pipeline stages) or context parallelism: torchtitan's "
		       "mixed_precision_param takes "
		       "effect through fully_shard there, so it would train in float32");
	if (c->precision == PREC_FP16)
		REFUSE("float16 (its training.mixed_precision_param is bfloat16 or float32)");
	if (c->tp > 1 && c->sp == 0)
		REFUSE("tensor parallelism without sequence parallelism: torchtitan's cuts the "
		       "norms over the sequence (SequenceParallel) always");
	if (c->recompute == PL_RECOMPUTE_SELECTIVE)
		REFUSE("selective recompute of the attention core: torchtitan's selective modes "
		       "are per op (selective-op: save the attention and every other matmul) or "
		       "every n-th layer");
	if (c->vocab_emb_dp)
		REFUSE("an embedding replicated over the tensor-parallel ranks");
	int64_t ta = 0, tb = 0;
	if (c->pp > 1) {
		/* the first/last stage's layers short of torchtitan's even split */
		int64_t S = c->pp * c->vp, *want = pl_calloc((size_t)S, sizeof *want),
		        *got = pl_calloc((size_t)S, sizeof *got);
		int found = 0;
		if (!want || !got) {
			free(want);
			free(got);
			return pl_err_set(err, PL_ENOMEM, "out of memory");
		}
		if (c->vp > 1) { /* the chunks are not recorded: only an even split */
			for (int64_t s = 0; s < S; s++)
				want[s] = c->layers / S;
			int even = c->layers % S == 0;
			for (int64_t s = 0; s < c->pp; s++)
				even &= c->stage[s] == c->layers / c->pp;
			if (!even) {
				free(want);
				free(got);
				REFUSE("%lld virtual stages with layers not split evenly",
				       (long long)c->vp);
			}
		} else {
			memcpy(want, c->stage, (size_t)S * sizeof *want);
		}
		/* the last stage is per - b short of nothing (it is never one of the
		 * first `extra`): per x (S - 1) + extra = L + a - last, so b follows
		 * from a up to the rounding; the least a and b that fit */
		int64_t maxw = 0;
		for (int64_t s = 0; s < S; s++)
			maxw = want[s] > maxw ? want[s] : maxw;
		for (ta = 0; !found && ta <= maxw; ta++) {
			int64_t base = S > 1 ? (c->layers + ta - want[S - 1]) / (S - 1) : 0;
			for (int64_t d = -1; !found && d <= 1; d++) {
				tb = base + d - want[S - 1];
				found = tb >= 0 && !tt_split(c->layers, S, ta, tb, got) &&
				        !memcmp(got, want, (size_t)S * sizeof *got);
			}
		}
		ta--; /* the loop stepped past it */
		free(want);
		free(got);
		if (!found)
			REFUSE("its pipeline stages' layers: torchtitan splits them evenly but for "
			       "the first and last stages' *_stage_less_layers");
	}
	section(o, "parallelism");
	ivalue(o, "data_parallel_replicate_degree", fsdp ? 1 : c->dp);
	ivalue(o, "data_parallel_shard_degree", fsdp ? c->dp : 1);
	ivalue(o, "tensor_parallel_degree", c->tp);
	ivalue(o, "pipeline_parallel_degree", c->pp);
	ivalue(o, "context_parallel_degree", c->cp);
	ivalue(o, "expert_parallel_degree", c->ep);
	if (c->pp > 1) {
		value(o, "pipeline_parallel_schedule",
		      c->vp > 1 ? "\"Interleaved1F1B\"" : "\"1F1B\"");
		ivalue(o, "pipeline_parallel_microbatch_size", c->mbs);
		ivalue(o, "pipeline_parallel_first_stage_less_layers", ta);
		ivalue(o, "pipeline_parallel_last_stage_less_layers", tb);
	}
	price_keys(o, c, "parallelism");
	section(o, "training");
	/* a step's samples per data-parallel rank: with pipelines, cut into
	 * micro-batches of pipeline_parallel_microbatch_size; without, the
	 * micro-batch itself (more are gradient accumulation) */
	ivalue(o, "local_batch_size", c->pp > 1 ? c->gbs / c->dp : c->mbs);
	ivalue(o, "global_batch_size", c->gbs);
	if (c->seq > 0)
		ivalue(o, "seq_len", c->seq);
	snprintf(b, sizeof b, "\"%s\"", c->precision == PREC_FP32 ? "float32" : "bfloat16");
	value(o, "mixed_precision_param", b);
	section(o, "activation_checkpoint");
	value(o, "mode",
	      c->recompute == PL_RECOMPUTE_FULL           ? "\"full\""
	      : c->recompute == PL_RECOMPUTE_SELECTIVE_OP ? "\"selective\""
	                                                  : "\"none\"");
	if (c->recompute == PL_RECOMPUTE_SELECTIVE_OP)
		value(o, "selective_ac_option", "\"op\"");
	if (torchao_recipe(c->fp8)) {
		/* torchao's Float8Linear with the recipe priced (v0.2.2:
		 * components/quantization/float8.py registers the converter as
		 * quantize.linear.float8; job_config.py Float8Linear.recipe_name),
		 * under torch.compile, which fuses the casts as they are priced */
		section(o, "model");
		value(o, "converters", "[\"quantize.linear.float8\"]");
		section(o, "quantize.linear.float8");
		snprintf(b, sizeof b, "\"%s\"", torchao_recipe(c->fp8));
		value(o, "recipe_name", b);
		section(o, "compile");
		value(o, "enable", "true");
	}
	return PL_OK;
}

static pl_status emit_deepspeed(out *o, const fw_config *c, cJSON *doc, pl_err *err)
{
	if (c->tp > 1 || c->pp > 1 || c->cp > 1 || c->ep > 1)
		REFUSE("tp %lld, pp %lld, cp %lld, ep %lld: a DeepSpeed config states data "
		       "parallelism and ZeRO only (--to megatron-deepspeed writes tensor and "
		       "pipeline parallelism as Megatron-DeepSpeed's arguments)",
		       (long long)c->tp, (long long)c->pp, (long long)c->cp, (long long)c->ep);
	if (c->recompute != PL_RECOMPUTE_NONE)
		REFUSE("recompute %s: DeepSpeed's activation checkpointing is called from the "
		       "model's code, not turned on by its config",
		       rc_name(c->recompute));
	char b[24];
	int64_t gas = c->gbs / (c->mbs * c->dp);
	cJSON_AddNumberToObject(doc, "train_batch_size", (double)c->gbs);
	record(o, "train_batch_size", num(b, c->gbs));
	cJSON_AddNumberToObject(doc, "train_micro_batch_size_per_gpu", (double)c->mbs);
	record(o, "train_micro_batch_size_per_gpu", num(b, c->mbs));
	cJSON_AddNumberToObject(doc, "gradient_accumulation_steps", (double)gas);
	record(o, "gradient_accumulation_steps", num(b, gas));
	cJSON *z = cJSON_AddObjectToObject(doc, "zero_optimization");
	cJSON_AddNumberToObject(z, "stage", c->zero);
	record(o, "zero_optimization.stage", num(b, c->zero));
	cJSON_AddBoolToObject(cJSON_AddObjectToObject(doc, "bf16"), "enabled",
	                      c->precision == PREC_BF16);
	record(o, "bf16.enabled", c->precision == PREC_BF16 ? "true" : "false");
	cJSON_AddBoolToObject(cJSON_AddObjectToObject(doc, "fp16"), "enabled",
	                      c->precision == PREC_FP16);
	record(o, "fp16.enabled", c->precision == PREC_FP16 ? "true" : "false");
	return PL_OK;
}

static pl_status emit_mindformers(out *o, const fw_config *c, pl_err *err)
{
	if (c->recompute == PL_RECOMPUTE_SELECTIVE_OP)
		REFUSE("selective-op recompute (torchtitan's per-op checkpointing): MindFormers' "
		       "select_recompute names the ops to recompute, not a per-op save policy");
	if (c->zero >= 2)
		REFUSE("ZeRO %d: MindFormers' parallel.enable_parallel_optimizer shards the "
		       "optimizer states (ZeRO-1); deeper levels are not in its v1.7.0 template",
		       c->zero);
	if (c->vp > 1)
		REFUSE("%lld virtual stages: the v1.7.0 configurations name no interleaved "
		       "pipeline",
		       (long long)c->vp);
	if (c->precision == PREC_FP16)
		REFUSE("float16 (stated here as bfloat16 or float32 only)");
	section(o, "parallel_config");
	ivalue(o, "data_parallel", c->dp);
	ivalue(o, "model_parallel", c->tp);
	ivalue(o, "pipeline_stage", c->pp);
	ivalue(o, "context_parallel", c->cp);
	ivalue(o, "expert_parallel", c->ep);
	ivalue(o, "micro_batch_num", c->gbs / (c->mbs * c->dp));
	value(o, "use_seq_parallel", c->sp > 0 && c->tp > 1 ? "True" : "False");
	value(o, "vocab_emb_dp", c->vocab_emb_dp || c->tp == 1 ? "True" : "False");
	ivalue(o, "gradient_aggregation_group", 4); /* its default: a fusion size */
	section(o, "runner_config");
	ivalue(o, "batch_size", c->mbs);
	section(o, "parallel");
	value(o, "enable_parallel_optimizer", c->zero == 1 ? "True" : "False");
	section(o, "recompute_config");
	value(o, "recompute", c->recompute == PL_RECOMPUTE_FULL ? "True" : "False");
	value(o, "select_recompute", c->recompute == PL_RECOMPUTE_SELECTIVE ? "True" : "False");
	section(o, "model.model_config");
	value(o, "compute_dtype", c->precision == PREC_FP32 ? "\"float32\"" : "\"bfloat16\"");
	int64_t f_, m_, l_;
	if (c->pp > 1 && c->stage && (split_form(c, &f_, &m_, &l_) || c->layers % c->pp)) {
		/* offset[s]: stage s holds layers / pp + offset[s] */
		sbuf l = {0};
		sb_printf(&l, "[");
		for (int64_t s = 0; s < c->pp; s++)
			sb_printf(&l, "%s%lld", s ? ", " : "",
			          (long long)(c->stage[s] - c->layers / c->pp));
		sb_printf(&l, "]");
		if (l.oom) {
			free(l.p);
			return pl_err_set(err, PL_ENOMEM, "out of memory");
		}
		value(o, "offset", l.p);
		free(l.p);
	}
	return PL_OK;
}

static void header(out *o, const fw_config *c, const char *ckpt)
{
	const struct fw_info *f = &fws[o->fw];
	char stages[256] = "";
	size_t k = 0;
	for (int64_t s = 0; c->stage && s < c->pp && k + 24 < sizeof stages; s++)
		k += (size_t)snprintf(stages + k, sizeof stages - k, "%s%lld", s ? " " : "",
		                      (long long)c->stage[s]);
	sb_printf(&o->text,
	          "# %s for the plan %s (model %s, cluster %s, %lld devices), written by planner "
	          "export\n"
	          "# keys checked against %s: %s\n"
	          "# dp %lld x tp %lld x cp %lld x pp %lld%s%s%s; global batch %lld of micro-batch "
	          "%lld; ZeRO %d; recompute %s\n",
	          f->title, ckpt, c->model ? c->model : "?", c->cluster ? c->cluster : "?",
	          (long long)c->devices, f->version, f->source, (long long)c->dp, (long long)c->tp,
	          (long long)c->cp, (long long)c->pp, c->stage ? " (layers per stage: " : "",
	          stages, c->stage ? ")" : "", (long long)c->gbs, (long long)c->mbs, c->zero,
	          rc_name(c->recompute));
	if (o->fw == FW_MEGATRON)
		sb_printf(&o->text,
		          "# data parallel (%lld) is what the world size leaves; the "
		          "model's own flags (--num-layers, --hidden-size, --seq-length "
		          "%lld, ...) stay the user's\n",
		          (long long)c->dp, (long long)c->seq);
	if (o->fw == FW_MDS)
		sb_printf(&o->text,
		          "# with the DeepSpeed config that 'planner export --to deepspeed' "
		          "writes for the same plan at tp 1 and pp 1 (or your own), as "
		          "ds_config.json\n");
}

static pl_status emit(out *o, const fw_config *c, const char *ckpt, pl_err *err)
{
	pl_status st = PL_EINVAL;
	cJSON *doc = NULL;
	if (c->fp8 > 0 && o->fw != FW_MEGATRON && o->fw != FW_NEMO && o->fw != FW_MDS &&
	    o->fw != FW_TORCHTITAN)
		REFUSE("FP8 GEMMs (--gemm-dtype fp8*): this export writes them for megatron "
		       "(--fp8-format), nemo (model.fp8) and torchtitan (torchao's float8 "
		       "converter) only");
	if (c->fp8 == PL_GEMM_FP8 && o->fw == FW_TORCHTITAN)
		REFUSE("FP8 GEMMs with Transformer Engine's delayed scaling (--gemm-dtype fp8): "
		       "torchtitan's float8 converter runs torchao's dynamic recipes "
		       "(--gemm-dtype fp8-tensorwise or fp8-rowwise)");
	if (torchao_recipe(c->fp8) && (o->fw == FW_MEGATRON || o->fw == FW_NEMO))
		REFUSE("FP8 GEMMs with torchao's %s recipe: %s runs Transformer Engine's "
		       "delayed scaling (--gemm-dtype fp8)",
		       torchao_recipe(c->fp8), fws[o->fw].version);
	for (size_t i = 0; c->cp > 1 && i < sizeof fw_price_keys / sizeof *fw_price_keys; i++) {
		const struct fw_price_key *k = &fw_price_keys[i];
		const char *v = c->price[k->sw];
		if (k->fw == o->fw && k->choices && v && !choice_word(k->choices, v))
			REFUSE("context parallelism priced with %s %s, which %s does not run",
			       price_option[k->sw], v, k->key);
	}
	if (fws[o->fw].syntax != PL_FW_JSON)
		header(o, c, ckpt);
	switch ((enum fw_kind)o->fw) {
	case FW_COUNT: return pl_err_set(err, PL_EINVAL, "export: no framework");
	case FW_MEGATRON: st = emit_megatron(o, c, 0, err); break;
	case FW_MDS: st = emit_megatron(o, c, 1, err); break;
	case FW_NEMO: st = emit_nemo(o, c, err); break;
	case FW_TORCHTITAN: st = emit_torchtitan(o, c, err); break;
	case FW_MINDFORMERS: st = emit_mindformers(o, c, err); break;
	case FW_DEEPSPEED:
		if (!(doc = cJSON_CreateObject()))
			return pl_err_set(err, PL_ENOMEM, "out of memory");
		st = emit_deepspeed(o, c, doc, err);
		if (!st) { /* JSON has no comments: the plain config */
			char *t = cJSON_Print(doc);
			if (t)
				sb_printf(&o->text, "%s\n", t);
			else
				o->text.oom = 1;
			free(t);
		}
		cJSON_Delete(doc);
	}
	if (st)
		return st;
	if (fws[o->fw].syntax == PL_FW_ARGS && o->text.n >= 3 &&
	    !strcmp(o->text.p + o->text.n - 3, " \\\n")) {
		o->text.n -= 3;
		sb_printf(&o->text, "\n");
	}
	if (o->text.oom || !o->keys)
		return pl_err_set(err, PL_ENOMEM, "out of memory");
	return PL_OK;
}

pl_status pl_export_text(const char *ckpt_text, size_t len, const char *where,
                         const char *framework, int flags, char **result, pl_err *err)
{
	int fw = fw_parse(framework);
	if (!ckpt_text || !where || !result)
		return pl_err_set(err, PL_EINVAL, "pl_export_text: NULL argument");
	char nb[PL_EXPORT_NAMES_MAX];
	if (fw < 0)
		return pl_err_set(err, PL_EINVAL, "unknown framework '%s': expected %s",
		                  framework ? framework : "(null)", pl_export_names(nb, sizeof nb));
	cJSON *ck = NULL;
	fw_config c;
	cfg_init(&c);
	out o = {.fw = fw, .keys = cJSON_CreateObject()};
	pl_status st = pl_json_parse(ckpt_text, len, where, &ck, err);
	if (!st)
		st = plan_config(ck, where, &c, err);
	if (!st && (flags & PL_EXPORT_FP16) && c.precision == PREC_BF16)
		c.precision = PREC_FP16;
	if (!st && (st = emit(&o, &c, where, err)) == PL_EINVAL)
		pl_err_prefix(err, "%s", where);
	if (!st && (flags & PL_EXPORT_JSON)) {
		cJSON *r = cJSON_CreateObject();
		cJSON_AddStringToObject(r, "framework", fws[fw].name);
		cJSON_AddStringToObject(r, "version", fws[fw].version);
		cJSON_AddStringToObject(r, "source", fws[fw].source);
		pl_json_add(r, "keys", o.keys);
		o.keys = NULL;
		cJSON_AddStringToObject(r, "text", o.text.p);
		char *t = cJSON_Print(r);
		cJSON_Delete(r);
		free(o.text.p);
		o.text = (sbuf){0};
		if (t)
			sb_printf(&o.text, "%s\n", t);
		free(t);
		if (!t || o.text.oom)
			st = pl_err_set(err, PL_ENOMEM, "out of memory");
	}
	if (!st) {
		*result = o.text.p;
		o.text.p = NULL;
	}
	free(c.stage);
	free(o.text.p);
	cJSON_Delete(o.keys);
	cJSON_Delete(ck);
	return st;
}

/* ---- reading a framework's configuration ---- */

/* an entry's integer in [lo, hi] into *v; 0 when absent or null */
static pl_status get_int(const pl_fw_kvs *k, const char *key, int64_t lo, int64_t hi, int64_t *v,
                         int *given, const char *where, pl_err *err)
{
	const pl_fw_kv *e = pl_fw_get(k, key);
	long long x;
	if (given)
		*given = 0;
	if (!e || (e->val &&
	           (!strcmp(e->val, "null") || !strcmp(e->val, "None") || !strcmp(e->val, "~"))))
		return PL_OK;
	if (!e->val || pl_parse_ll(e->val, &x) || x < lo || x > hi)
		return pl_err_set(
		    err, PL_EINVAL, "%s:%d: %s %s: expected an integer from %lld to %lld", where,
		    e->line, key, e->val ? e->val : "(no value)", (long long)lo, (long long)hi);
	*v = x;
	if (given)
		*given = 1;
	return PL_OK;
}

/* an entry's boolean (true/false, True/False, 1/0; a switch is true): 1, 0,
 * or -1 when absent */
static pl_status get_bool(const pl_fw_kvs *k, const char *key, int *v, const char *where,
                          pl_err *err)
{
	const pl_fw_kv *e = pl_fw_get(k, key);
	*v = -1;
	if (!e)
		return PL_OK;
	if (!e->val) {
		*v = 1;
		return PL_OK;
	}
	static const char *const t[] = {"true", "True", "TRUE", "1", "yes"},
	                         *f[] = {"false", "False", "FALSE", "0", "no"};
	for (int i = 0; i < 5; i++) {
		if (!strcmp(e->val, t[i]))
			*v = 1;
		if (!strcmp(e->val, f[i]))
			*v = 0;
	}
	if (*v < 0)
		return pl_err_set(err, PL_EINVAL, "%s:%d: %s %s: expected true or false", where,
		                  e->line, key, e->val);
	return PL_OK;
}

/* a switch flag (argparse store_true): present without a value */
static pl_status get_switch(const pl_fw_kvs *k, const char *key, int *v, const char *where,
                            pl_err *err)
{
	const pl_fw_kv *e = pl_fw_get(k, key);
	*v = e != NULL;
	if (e && e->val)
		return pl_err_set(err, PL_EINVAL, "%s:%d: %s takes no value (got '%s')", where,
		                  e->line, key, e->val);
	return PL_OK;
}

static const char *get_str(const pl_fw_kvs *k, const char *key)
{
	const pl_fw_kv *e = pl_fw_get(k, key);
	return e && e->val && strcmp(e->val, "null") && strcmp(e->val, "None") ? e->val : NULL;
}

static int line_of(const pl_fw_kvs *k, const char *key)
{
	const pl_fw_kv *e = pl_fw_get(k, key);
	return e ? e->line : 0;
}

#define D         PL_MAX_DEVICES
#define BATCH_MAX (1LL << 40)

/* not stated the planner's way: the flag's presence is refused */
static pl_status refuse_keys(const pl_fw_kvs *k, const char *const *keys, const char *why,
                             const char *where, pl_err *err)
{
	for (int i = 0; keys[i]; i++)
		if (pl_fw_get(k, keys[i]))
			return pl_err_set(err, PL_EINVAL, "%s:%d: %s: %s", where,
			                  line_of(k, keys[i]), keys[i], why);
	return PL_OK;
}

static pl_status recompute_megatron(const char *gran, const char *method, int64_t layers,
                                    int method_line, const char *where, fw_config *c, pl_err *err)
{
	if (!gran)
		return PL_OK;
	if (!strcmp(gran, "selective")) {
		c->recompute = PL_RECOMPUTE_SELECTIVE;
		return PL_OK;
	}
	if (strcmp(gran, "full"))
		return pl_err_set(err, PL_EINVAL,
		                  "%s: recompute granularity '%s': expected full or "
		                  "selective",
		                  where, gran);
	if ((method && strcmp(method, "uniform")) || layers != 1)
		return pl_err_set(
		    err, PL_EINVAL,
		    "%s:%d: full recompute by method %s of %lld layers: the planner's "
		    "full recompute keeps each layer's input (method uniform, 1 layer)",
		    where, method_line, method ? method : "(none)", (long long)layers);
	c->recompute = PL_RECOMPUTE_FULL;
	return PL_OK;
}

/* Transformer Engine's FP8 as Megatron-LM's --fp8-format and Megatron-Bridge's
 * TransformerConfig.fp8 state it: e4m3 or hybrid (both run the linear layers'
 * GEMMs in FP8; hybrid takes E5M2 for the gradients); NeMo 1's model.fp8
 * true; null, None or false: off */
static pl_status read_fp8(const pl_fw_kvs *k, const char *key, const char *where, fw_config *c,
                          pl_err *err)
{
	const pl_fw_kv *e = pl_fw_get(k, key);
	if (!e)
		return PL_OK;
	static const char *const on[] = {"e4m3", "hybrid", "true", "True", "TRUE", NULL},
	                         *off[] = {"null", "None", "false", "False", "FALSE", NULL};
	for (int i = 0; e->val && on[i]; i++)
		if (!strcmp(e->val, on[i]))
			c->fp8 = 1;
	for (int i = 0; e->val && off[i]; i++)
		if (!strcmp(e->val, off[i]))
			c->fp8 = 0;
	if (c->fp8 < 0)
		return pl_err_set(err, PL_EINVAL,
		                  "%s:%d: %s %s: expected e4m3 or hybrid (Transformer Engine's FP8 "
		                  "formats), or null",
		                  where, e->line, key, e->val ? e->val : "(no value)");
	return PL_OK;
}

static pl_status read_megatron(const pl_fw_kvs *k, int mds, const char *where, fw_config *c,
                               pl_err *err)
{
	pl_status st;
	int sp, dopt, fsdp, act;
	int64_t nlv = 0, L = 0, rl = 1, zero = 0;
	int g_nlv, g_rl;
	static const char *const refused[] = {"--pipeline-model-parallel-layout",
	                                      "--use-torch-fsdp2",
	                                      "--account-for-embedding-in-pipeline-split",
	                                      "--account-for-loss-in-pipeline-split",
	                                      "--hierarchical-context-parallel-sizes",
	                                      "--recompute-modules",
	                                      "--num-layers-per-stage",
	                                      NULL};
	if ((st = refuse_keys(k, refused,
	                      "not stated in the planner's degrees (a per-stage layout, "
	                      "another sharding or recompute scope)",
	                      where, err)) ||
	    (st = get_int(k, "--tensor-model-parallel-size", 1, D, &c->tp, NULL, where, err)) ||
	    (st = get_int(k, "--pipeline-model-parallel-size", 1, D, &c->pp, NULL, where, err)) ||
	    (st = get_int(k, "--context-parallel-size", 1, D, &c->cp, NULL, where, err)) ||
	    (st = get_int(k, "--expert-model-parallel-size", 1, D, &c->ep, NULL, where, err)) ||
	    (st = get_int(k, "--micro-batch-size", 1, BATCH_MAX, &c->mbs, NULL, where, err)) ||
	    (st = get_int(k, "--global-batch-size", 1, BATCH_MAX, &c->gbs, NULL, where, err)) ||
	    (st = get_int(k, "--num-layers", 1, 1 << 20, &L, NULL, where, err)) ||
	    (st = get_int(k, "--num-virtual-stages-per-pipeline-rank", 1, 64, &c->vp, NULL, where,
	                  err)) ||
	    (st = get_int(k, "--num-layers-per-virtual-pipeline-stage", 1, 1 << 20, &nlv, &g_nlv,
	                  where, err)) ||
	    (st = get_int(k, "--decoder-first-pipeline-num-layers", 0, 1 << 20, &c->first, NULL,
	                  where, err)) ||
	    (st = get_int(k, "--decoder-last-pipeline-num-layers", 0, 1 << 20, &c->last, NULL,
	                  where, err)) ||
	    (st = get_int(k, "--recompute-num-layers", 1, 1 << 20, &rl, &g_rl, where, err)) ||
	    (st = get_switch(k, "--sequence-parallel", &sp, where, err)) ||
	    (st = get_switch(k, "--recompute-activations", &act, where, err)))
		return st;
	c->sp = sp;
	c->layers = L;
	if (mds) {
		int npp;
		if ((st = get_int(k, "--zero-stage", 0, 3, &zero, NULL, where, err)) ||
		    (st = get_switch(k, "--no-pipeline-parallel", &npp, where, err)))
			return st;
		c->zero = (int)zero;
		if ((st = get_switch(k, "--checkpoint-activations", &act, where, err)))
			return st;
		if (act)
			c->recompute = PL_RECOMPUTE_FULL;
		if (c->cp > 1 || c->ep > 1)
			return pl_err_set(err, PL_EINVAL, "%s: Megatron-DeepSpeed with cp or ep",
			                  where);
	} else {
		if ((st = get_switch(k, "--use-distributed-optimizer", &dopt, where, err)) ||
		    (st = get_switch(k, "--use-megatron-fsdp", &fsdp, where, err)))
			return st;
		c->zero = dopt ? 1 : 0;
		const char *sh = get_str(k, "--data-parallel-sharding-strategy");
		if (fsdp && sh) {
			static const char *const lv[] = {"no_shard", "optim", "optim_grads",
			                                 "optim_grads_params"};
			int found = -1;
			for (int i = 0; i < 4; i++)
				if (!strcmp(sh, lv[i]))
					found = i;
			if (found < 0)
				return pl_err_set(
				    err, PL_EINVAL, "%s:%d: --data-parallel-sharding-strategy %s",
				    where, line_of(k, "--data-parallel-sharding-strategy"), sh);
			c->zero = found;
		}
		if (act)
			c->recompute = PL_RECOMPUTE_SELECTIVE;
	}
	const char *gran = get_str(k, "--recompute-granularity");
	if ((st = recompute_megatron(gran, get_str(k, "--recompute-method"), g_rl ? rl : 1,
	                             line_of(k, "--recompute-method"), where, c, err)))
		return st;
	if (g_nlv) {
		if (!L || L % (c->pp * nlv))
			return pl_err_set(
			    err, PL_EINVAL,
			    "%s: --num-layers-per-virtual-pipeline-stage %lld needs "
			    "--num-layers, a multiple of it times the pipeline stages",
			    where, (long long)nlv);
		c->vp = L / (c->pp * nlv);
	}
	const pl_fw_kv *pr = pl_fw_get(k, "--bf16"), *pf = pl_fw_get(k, "--fp16");
	c->precision = pr ? PREC_BF16 : pf ? PREC_FP16 : -1;
	return read_fp8(k, "--fp8-format", where, c, err);
}

static pl_status read_nemo(const pl_fw_kvs *k, const char *where, fw_config *c, pl_err *err)
{
	pl_status st;
	int sp, d1, d2, fsdp;
	if ((st = get_int(k, "model.tensor_model_parallel_size", 1, D, &c->tp, NULL, where, err)) ||
	    (st = get_int(k, "model.pipeline_model_parallel_size", 1, D, &c->pp, NULL, where,
	                  err)) ||
	    (st = get_int(k, "model.virtual_pipeline_model_parallel_size", 1, 64, &c->vp, NULL,
	                  where, err)) ||
	    (st = get_int(k, "model.context_parallel_size", 1, D, &c->cp, NULL, where, err)) ||
	    (st = get_int(k, "model.expert_model_parallel_size", 1, D, &c->ep, NULL, where, err)) ||
	    (st = get_int(k, "model.num_layers_in_first_pipeline_stage", 0, 1 << 20, &c->first,
	                  NULL, where, err)) ||
	    (st = get_int(k, "model.num_layers_in_last_pipeline_stage", 0, 1 << 20, &c->last, NULL,
	                  where, err)) ||
	    (st = get_int(k, "train.micro_batch_size", 1, BATCH_MAX, &c->mbs, NULL, where, err)) ||
	    (st = get_int(k, "train.global_batch_size", 1, BATCH_MAX, &c->gbs, NULL, where, err)) ||
	    (st = get_bool(k, "model.sequence_parallel", &sp, where, err)) ||
	    (st = get_bool(k, "ddp.use_distributed_optimizer", &d1, where, err)) ||
	    (st = get_bool(k, "optimizer.use_distributed_optimizer", &d2, where, err)) ||
	    (st = get_bool(k, "ddp.use_megatron_fsdp", &fsdp, where, err)))
		return st;
	static const char *const refused[] = {"model.pipeline_model_parallel_layout",
	                                      "model.recompute_modules",
	                                      "model.account_for_embedding_in_pipeline_split",
	                                      "model.account_for_loss_in_pipeline_split", NULL};
	if ((st = refuse_keys(k, refused, "not stated in the planner's degrees", where, err)))
		return st;
	c->sp = sp > 0;
	if (d1 >= 0 && d2 >= 0 && d1 != d2)
		return pl_err_set(err, PL_EINVAL,
		                  "%s: ddp.use_distributed_optimizer and "
		                  "optimizer.use_distributed_optimizer disagree",
		                  where);
	c->zero = d1 > 0 || d2 > 0;
	const char *sh = get_str(k, "ddp.data_parallel_sharding_strategy");
	if (fsdp > 0 && sh) {
		c->zero = !strcmp(sh, "optim")                ? 1
		          : !strcmp(sh, "optim_grads")        ? 2
		          : !strcmp(sh, "optim_grads_params") ? 3
		          : !strcmp(sh, "no_shard")           ? 0
		                                              : -1;
		if (c->zero < 0)
			return pl_err_set(err, PL_EINVAL,
			                  "%s:%d: ddp.data_parallel_sharding_strategy %s", where,
			                  line_of(k, "ddp.data_parallel_sharding_strategy"), sh);
	}
	int64_t rl = 1;
	int g_rl;
	if ((st = get_int(k, "model.recompute_num_layers", 1, 1 << 20, &rl, &g_rl, where, err)))
		return st;
	int b = -1, f = -1;
	if ((st = get_bool(k, "model.bf16", &b, where, err)) ||
	    (st = get_bool(k, "model.fp16", &f, where, err)))
		return st;
	c->precision = b > 0 ? PREC_BF16 : f > 0 ? PREC_FP16 : -1;
	if ((st = read_fp8(k, "model.fp8", where, c, err)))
		return st;
	return recompute_megatron(get_str(k, "model.recompute_granularity"),
	                          get_str(k, "model.recompute_method"), g_rl ? rl : 1,
	                          line_of(k, "model.recompute_method"), where, c, err);
}

/* torchtitan's float8 converter (model.converters naming
 * quantize.linear.float8, v0.2.2) and its recipe: torchao's tensorwise when
 * none is named (Float8LinearConfig()), rowwise; rowwise_with_gw_hp is not
 * priced. Without the converter, not said (the cluster's). */
static pl_status read_tt_float8(const pl_fw_kvs *k, const char *where, fw_config *c,
                                pl_err *err)
{
	const char *conv = get_str(k, "model.converters");
	if (!conv || !strstr(conv, "quantize.linear.float8"))
		return PL_OK;
	const char *r = get_str(k, "quantize.linear.float8.recipe_name");
	if (!r || !strcmp(r, "tensorwise"))
		c->fp8 = PL_GEMM_FP8_TENSORWISE;
	else if (!strcmp(r, "rowwise"))
		c->fp8 = PL_GEMM_FP8_ROWWISE;
	else
		return pl_err_set(err, PL_EINVAL,
		                  "%s:%d: quantize.linear.float8.recipe_name %s: the planner prices "
		                  "torchao's tensorwise and rowwise recipes",
		                  where, line_of(k, "quantize.linear.float8.recipe_name"), r);
	return PL_OK;
}

static pl_status read_torchtitan(const pl_fw_kvs *k, const char *where, fw_config *c, pl_err *err)
{
	pl_status st;
	int64_t rep = 1, shard = -1, pmbs = 1, local = 8, global = -1, lps = 0, seq = 0;
	int g_lps, g_pmbs;
	c->tt_first = c->tt_last = 1; /* torchtitan's defaults */
	if ((st = get_int(k, "parallelism.data_parallel_replicate_degree", 1, D, &rep, NULL, where,
	                  err)) ||
	    (st = get_int(k, "parallelism.data_parallel_shard_degree", -1, D, &shard, NULL, where,
	                  err)) ||
	    (st = get_int(k, "parallelism.tensor_parallel_degree", 1, D, &c->tp, NULL, where,
	                  err)) ||
	    (st = get_int(k, "parallelism.pipeline_parallel_degree", 1, D, &c->pp, NULL, where,
	                  err)) ||
	    (st = get_int(k, "parallelism.context_parallel_degree", 1, D, &c->cp, NULL, where,
	                  err)) ||
	    (st = get_int(k, "parallelism.expert_parallel_degree", 1, D, &c->ep, NULL, where,
	                  err)) ||
	    (st = get_int(k, "parallelism.pipeline_parallel_microbatch_size", 1, BATCH_MAX, &pmbs,
	                  &g_pmbs, where, err)) ||
	    (st = get_int(k, "parallelism.pipeline_parallel_layers_per_stage", 1, 1 << 20, &lps,
	                  &g_lps, where, err)) ||
	    (st = get_int(k, "parallelism.pipeline_parallel_first_stage_less_layers", 0, 1 << 20,
	                  &c->tt_first, NULL, where, err)) ||
	    (st = get_int(k, "parallelism.pipeline_parallel_last_stage_less_layers", 0, 1 << 20,
	                  &c->tt_last, NULL, where, err)) ||
	    (st =
	         get_int(k, "training.local_batch_size", 1, BATCH_MAX, &local, NULL, where, err)) ||
	    (st = get_int(k, "training.global_batch_size", -1, BATCH_MAX, &global, NULL, where,
	                  err)) ||
	    (st = get_int(k, "training.seq_len", 1, BATCH_MAX, &seq, NULL, where, err)))
		return st;
	static const char *const refused[] = {"parallelism.module_fqns_per_model_part",
	                                      "parallelism.pipeline_parallel_schedule_csv",
	                                      "parallelism.expert_tensor_parallel_degree", NULL};
	if ((st = refuse_keys(k, refused, "not stated in the planner's degrees", where, err)))
		return st;
	if (g_lps)
		return pl_err_set(err, PL_EINVAL,
		                  "%s:%d: parallelism.pipeline_parallel_layers_per_stage: the "
		                  "stages per rank it makes depend on the model's layers; give the "
		                  "schedule alone (1F1B: one stage a rank, Interleaved1F1B: two)",
		                  where,
		                  line_of(k, "parallelism.pipeline_parallel_layers_per_stage"));
	if (rep > 1 && shard > 1)
		return pl_err_set(err, PL_EINVAL,
		                  "%s: data_parallel_replicate_degree %lld with "
		                  "data_parallel_shard_degree %lld (HSDP): the planner's ZeRO "
		                  "shards over all data-parallel ranks",
		                  where, (long long)rep, (long long)shard);
	if (shard == 0 || shard < -1)
		return pl_err_set(err, PL_EINVAL, "%s: data_parallel_shard_degree %lld", where,
		                  (long long)shard);
	/* ParallelDims.fsdp_enabled: dp_shard > 1 or cp > 1, FSDP over dp_shard x
	 * cp; with dp_replicate too, HSDP */
	if (rep > 1 && c->cp > 1)
		return pl_err_set(err, PL_EINVAL,
		                  "%s: data_parallel_replicate_degree %lld with "
		                  "context_parallel_degree %lld: torchtitan shards with FSDP over "
		                  "the context-parallel ranks and replicates over the rest (HSDP); "
		                  "the planner's ZeRO shards over all data-parallel ranks",
		                  where, (long long)rep, (long long)c->cp);
	c->dp = shard == -1 ? 0 : shard > 1 ? shard : rep; /* -1: what is left */
	c->zero = shard == 1 && c->cp == 1 ? 0 : tt_fsdp_zero(c->pp); /* FSDP */
	const char *raf = get_str(k, "parallelism.fsdp_reshard_after_forward");
	if (raf && c->zero && strcmp(raf, "default") && strcmp(raf, c->pp > 1 ? "never" : "always"))
		return pl_err_set(err, PL_EINVAL,
		                  "%s:%d: fsdp_reshard_after_forward %s%s: the planner prices "
		                  "torchtitan's FSDP as its \"default\" runs it (resharding "
		                  "after forward without pipeline stages: ZeRO 3; a stage's "
		                  "weights kept gathered with them: ZeRO 1)",
		                  where, line_of(k, "parallelism.fsdp_reshard_after_forward"), raf,
		                  c->pp > 1 ? " with pipeline stages" : "");
	if (shard == -1 && rep > 1)
		return pl_err_set(err, PL_EINVAL,
		                  "%s: data_parallel_shard_degree -1 (the rest) with "
		                  "data_parallel_replicate_degree %lld: HSDP",
		                  where, (long long)rep);
	const char *sched = get_str(k, "parallelism.pipeline_parallel_schedule");
	if (c->pp > 1) {
		if (!sched || !strcmp(sched, "1F1B"))
			c->vp = 1;
		else if (!strcmp(sched, "Interleaved1F1B"))
			c->vp = 2; /* torchtitan's default stages per rank */
		else
			return pl_err_set(
			    err, PL_EINVAL,
			    "%s:%d: pipeline_parallel_schedule %s: the planner prices "
			    "1F1B and Interleaved1F1B",
			    where, line_of(k, "parallelism.pipeline_parallel_schedule"), sched);
		c->mbs = pmbs;
		if (local % pmbs)
			return pl_err_set(
			    err, PL_EINVAL,
			    "%s: local_batch_size %lld is not whole micro-batches of %lld", where,
			    (long long)local, (long long)pmbs);
	} else {
		c->mbs = local;
	}
	c->gbs = global > 0 ? global : 0;
	c->sp = c->tp > 1; /* torchtitan's tensor parallelism is sequence parallel */
	c->seq = seq;
	const char *mode = get_str(k, "activation_checkpoint.mode"),
	           *sac = get_str(k, "activation_checkpoint.selective_ac_option");
	if (!mode)
		mode = "selective"; /* torchtitan v0.2.2's default */
	if (!sac)
		sac = "2"; /* its default: every second layer */
	if (!strcmp(mode, "full"))
		c->recompute = PL_RECOMPUTE_FULL;
	else if (!strcmp(mode, "selective") && !strcmp(sac, "op"))
		c->recompute = PL_RECOMPUTE_SELECTIVE_OP;
	else if (strcmp(mode, "none"))
		return pl_err_set(
		    err, PL_EINVAL,
		    "%s:%d: activation_checkpoint.mode %s%s with selective_ac_option %s%s: the "
		    "planner's recompute is none, full, per op (mode \"selective\" with "
		    "selective_ac_option \"op\") or the attention core (which torchtitan has not)",
		    where, line_of(k, "activation_checkpoint.mode"), mode,
		    pl_fw_get(k, "activation_checkpoint.mode") ? "" : " (the default)", sac,
		    pl_fw_get(k, "activation_checkpoint.selective_ac_option") ? ""
		                                                              : " (the default)");
	const char *mp = get_str(k, "training.mixed_precision_param");
	c->precision = mp && !strcmp(mp, "float32") ? PREC_FP32 : PREC_BF16;
	return read_tt_float8(k, where, c, err);
}

static pl_status read_deepspeed(const pl_fw_kvs *k, const char *where, fw_config *c, pl_err *err)
{
	pl_status st;
	int64_t tbs = 0, mbs = 0, gas = 0, zero = 0;
	int b, f;
	if ((st = get_int(k, "train_batch_size", 1, BATCH_MAX, &tbs, NULL, where, err)) ||
	    (st = get_int(k, "train_micro_batch_size_per_gpu", 1, BATCH_MAX, &mbs, NULL, where,
	                  err)) ||
	    (st =
	         get_int(k, "gradient_accumulation_steps", 1, BATCH_MAX, &gas, NULL, where, err)) ||
	    (st = get_int(k, "zero_optimization.stage", 0, 3, &zero, NULL, where, err)) ||
	    (st = get_bool(k, "bf16.enabled", &b, where, err)) ||
	    (st = get_bool(k, "fp16.enabled", &f, where, err)))
		return st;
	if (!mbs)
		return pl_err_set(err, PL_EINVAL, "%s: train_micro_batch_size_per_gpu is needed",
		                  where);
	c->mbs = mbs;
	c->gbs = tbs;
	if (tbs && gas) {
		if ((double)mbs * (double)gas > (double)tbs || tbs % (mbs * gas))
			return pl_err_set(
			    err, PL_EINVAL,
			    "%s: train_batch_size %lld is not train_micro_batch_size_per_"
			    "gpu %lld x gradient_accumulation_steps %lld x a data-"
			    "parallel degree",
			    where, (long long)tbs, (long long)mbs, (long long)gas);
		c->dp = tbs / (mbs * gas);
	}
	c->zero = (int)zero;
	c->precision = b > 0 ? PREC_BF16 : f > 0 ? PREC_FP16 : PREC_FP32;
	return PL_OK;
}

static pl_status read_mindformers(const pl_fw_kvs *k, const char *where, fw_config *c, pl_err *err)
{
	pl_status st;
	int64_t m = 0;
	int sp, po, r, sr;
	if ((st = get_int(k, "parallel_config.data_parallel", 1, D, &c->dp, NULL, where, err)) ||
	    (st = get_int(k, "parallel_config.model_parallel", 1, D, &c->tp, NULL, where, err)) ||
	    (st = get_int(k, "parallel_config.pipeline_stage", 1, D, &c->pp, NULL, where, err)) ||
	    (st = get_int(k, "parallel_config.context_parallel", 1, D, &c->cp, NULL, where, err)) ||
	    (st = get_int(k, "parallel_config.expert_parallel", 1, D, &c->ep, NULL, where, err)) ||
	    (st = get_int(k, "parallel_config.micro_batch_num", 1, BATCH_MAX, &m, NULL, where,
	                  err)) ||
	    (st =
	         get_int(k, "runner_config.batch_size", 1, BATCH_MAX, &c->mbs, NULL, where, err)) ||
	    (st = get_bool(k, "parallel_config.use_seq_parallel", &sp, where, err)) ||
	    (st = get_bool(k, "parallel.enable_parallel_optimizer", &po, where, err)) ||
	    (st = get_bool(k, "recompute_config.recompute", &r, where, err)) ||
	    (st = get_bool(k, "recompute_config.select_recompute", &sr, where, err)))
		return st;
	if (!c->mbs)
		c->mbs = 1; /* runner_config.batch_size's default */
	if ((double)c->mbs * (double)c->dp * (double)m > (double)BATCH_MAX)
		return pl_err_set(err, PL_EINVAL,
		                  "%s: runner_config.batch_size x data_parallel x micro_batch_num "
		                  "above %lld",
		                  where, (long long)BATCH_MAX);
	c->gbs = c->dp && m ? c->mbs * c->dp * m : 0;
	c->sp = sp > 0;
	c->zero = po > 0;
	if (r > 0 && sr > 0)
		return pl_err_set(err, PL_EINVAL,
		                  "%s: recompute_config.recompute and select_recompute both on",
		                  where);
	c->recompute = r > 0    ? PL_RECOMPUTE_FULL
	               : sr > 0 ? PL_RECOMPUTE_SELECTIVE
	                        : PL_RECOMPUTE_NONE;
	const char *dt = get_str(k, "model.model_config.compute_dtype");
	c->precision = !dt ? -1 : !strcmp(dt, "float32") ? PREC_FP32 : PREC_BF16;
	return PL_OK;
}

/* A key of words (fw_price_key.choices) into c->price: Megatron-LM's
 * --cp-comm-type takes one word a layer, which must agree */
static pl_status read_choice(const pl_fw_kvs *k, const struct fw_price_key *pk, const char *where,
                             fw_config *c, pl_err *err)
{
	const char *s = get_str(k, pk->key);
	const char *got = NULL;
	char w[64];
	while (s && *s) {
		size_t n = strcspn(s, " \t,[]'\"");
		if (n > 0 && n < sizeof w) {
			memcpy(w, s, n);
			w[n] = 0;
			const char *v = choice_of(pk->choices, w);
			if (!v || (got && strcmp(got, v))) {
				char exp[160] = "";
				for (const fw_choice *ch = pk->choices; ch->fw; ch++)
					snprintf(exp + strlen(exp), sizeof exp - strlen(exp),
					         "%s%s", ch == pk->choices ? "" : " or ", ch->fw);
				return pl_err_set(err, PL_EINVAL, "%s:%d: %s %s: expected %s%s",
				                  where, line_of(k, pk->key), pk->key,
				                  get_str(k, pk->key), exp,
				                  got ? ", the same for every layer"
				                      : " (the planner states no other)");
			}
			got = v;
		} else if (n) {
			return pl_err_set(err, PL_EINVAL, "%s:%d: %s: a word of %zu characters",
			                  where, line_of(k, pk->key), pk->key, n);
		}
		s += n + (s[n] != 0);
	}
	if (got)
		c->price[pk->sw] = got;
	return PL_OK;
}

/* the pricing switches the configuration states (fw_price_keys, Megatron-
 * LM's --attention-backend) into c->price */
static pl_status read_price_keys(int fw, const pl_fw_kvs *k, const char *where, fw_config *c,
                                 pl_err *err)
{
	pl_status st;
	for (size_t i = 0; i < sizeof fw_price_keys / sizeof *fw_price_keys; i++) {
		const struct fw_price_key *pk = &fw_price_keys[i];
		int v;
		if (pk->fw != fw)
			continue;
		if (pk->choices) {
			if ((st = read_choice(k, pk, where, c, err)))
				return st;
			continue;
		}
		if ((st = pk->flag ? get_switch(k, pk->key, &v, where, err)
		                   : get_bool(k, pk->key, &v, where, err)))
			return st;
		if (v > 0)
			c->price[pk->sw] = pk->yes;
		else if (v == 0 && !pk->flag)
			c->price[pk->sw] = pk->no;
	}
	const char *ab = fw == FW_MEGATRON ? get_str(k, "--attention-backend") : NULL;
	if (ab && strcmp(ab, "auto")) {
		for (size_t j = 0; j < sizeof mg_backend / sizeof *mg_backend; j++)
			if (!strcmp(ab, mg_backend[j][0]))
				c->price[PL_FW_PRICE_ATTENTION] = mg_backend[j][1];
		if (!c->price[PL_FW_PRICE_ATTENTION])
			return pl_err_set(err, PL_EINVAL,
			                  "%s:%d: --attention-backend %s: expected flash, fused, "
			                  "unfused, local or auto",
			                  where, line_of(k, "--attention-backend"), ab);
	}
	return PL_OK;
}

static pl_status read_config(int fw, const pl_fw_kvs *k, const char *where, fw_config *c,
                             pl_err *err)
{
	cfg_init(c);
	pl_status st = PL_EINVAL;
	switch ((enum fw_kind)fw) {
	case FW_COUNT: return pl_err_set(err, PL_EINVAL, "%s: no framework", where);
	case FW_MEGATRON: st = read_megatron(k, 0, where, c, err); break;
	case FW_MDS: st = read_megatron(k, 1, where, c, err); break;
	case FW_NEMO: st = read_nemo(k, where, c, err); break;
	case FW_TORCHTITAN: st = read_torchtitan(k, where, c, err); break;
	case FW_DEEPSPEED: st = read_deepspeed(k, where, c, err); break;
	case FW_MINDFORMERS: st = read_mindformers(k, where, c, err); break;
	}
	return st ? st : read_price_keys(fw, k, where, c, err);
}

pl_status pl_export_read_config(const char *framework, const char *text, size_t len,
                                const char *where, pl_err *err)
{
	int fw = fw_parse(framework);
	if (fw < 0 || !text || !where)
		return pl_err_set(err, PL_EINVAL, "pl_export_read_config: framework '%s'",
		                  framework ? framework : "(null)");
	pl_fw_kvs k = {0};
	fw_config c;
	cfg_init(&c);
	pl_status st = pl_fw_read(fws[fw].syntax, text, len, where, &k, err);
	if (!st)
		st = read_config(fw, &k, where, &c, err);
	pl_fw_kvs_free(&k);
	free(c.stage);
	return st;
}

/* ---- a framework's configuration read for pricing (cost --from) ---- */

struct pl_export_conf {
	int fw;
	fw_config c;
	char *text;        /* the configuration's text */
	pl_fw_kvs kvs;     /* its keys */
	const char *where; /* the file's name, or "the arguments" */
	char nums[16][24]; /* the degrees' numbers, as arguments */
};

void pl_export_conf_free(pl_export_conf *c)
{
	if (!c)
		return;
	pl_fw_kvs_free(&c->kvs);
	free(c->c.stage);
	free(c->text);
	free(c);
}

pl_status pl_export_conf_read(const char *framework, const char *src, pl_export_conf **out,
                              pl_err *err)
{
	*out = NULL;
	int fw = fw_parse(framework);
	if (fw < 0 || !src)
		return pl_err_set(err, PL_EINVAL, "--from %s: expected %s and a FILE or ARGS",
		                  framework ? framework : "(missing)", FW_NAMES);
	pl_export_conf *c = pl_calloc(1, sizeof *c);
	if (!c)
		return pl_err_set(err, PL_ENOMEM, "out of memory");
	c->fw = fw;
	cfg_init(&c->c);
	size_t len = 0;
	pl_status st = PL_OK;
	c->where = src;
	/* a word without a flag is a file name (one that is missing is an
	 * error, never arguments that set nothing) */
	if (access(src, F_OK) == 0 || fws[fw].syntax != PL_FW_ARGS || !strstr(src, "--")) {
		st = pl_read_file(src, &c->text, &len, err);
	} else {
		c->where = "the arguments";
		if (!(c->text = pl_strdup(src)))
			st = pl_err_set(err, PL_ENOMEM, "out of memory");
		else
			len = strlen(c->text);
	}
	if (!st && !(st = pl_fw_read(fws[fw].syntax, c->text, len, c->where, &c->kvs, err)))
		st = read_config(fw, &c->kvs, c->where, &c->c, err);
	if (!st && c->c.vp > 1 && c->c.pp == 1)
		st = pl_err_set(err, PL_EINVAL, "%s: virtual stages %lld without pipeline stages",
		                c->where, (long long)c->c.vp);
	if (st) {
		pl_export_conf_free(c);
		return st;
	}
	*out = c;
	return PL_OK;
}

const char *pl_export_conf_where(const pl_export_conf *c)
{
	return c->where;
}

const char *pl_export_conf_gemm_dtype(const pl_export_conf *c)
{
	return c->c.fp8 > 0 ? pl_gemm_dtype_name(c->c.fp8) : NULL;
}

/* search's fixed options: the configuration's degrees, recompute, sequence
 * parallelism, FP8, where the stages may split */
static void conf_degrees(pl_export_conf *conf, char **sv, int *ns)
{
	const fw_config *c = &conf->c;
	int k = 0, fw = conf->fw;
#define OPT(name, v)                                                                               \
	do {                                                                                       \
		sv[(*ns)++] = name;                                                                \
		snprintf(conf->nums[k], sizeof conf->nums[k], "%lld", (long long)(v));             \
		sv[(*ns)++] = conf->nums[k++];                                                     \
	} while (0)
	OPT("--tp", c->tp);
	OPT("--pp", c->pp);
	OPT("--cp", c->cp);
	if (c->ep > 1)
		OPT("--ep", c->ep);
	if (c->dp > 0)
		OPT("--dp", c->dp);
	OPT("--virtual-stages", c->vp);
	if (c->mbs > 0)
		OPT("--micro-batch-size", c->mbs);
	OPT("--zero", c->zero);
#undef OPT
	sv[(*ns)++] = "--recompute";
	sv[(*ns)++] = (char *)pl_recompute_name(c->recompute);
	if (c->tp > 1) {
		sv[(*ns)++] = "--sequence-parallel";
		sv[(*ns)++] = c->sp > 0 ? "on" : "off";
	}
	if (c->fp8 > 0) {
		sv[(*ns)++] = "--gemm-dtype";
		sv[(*ns)++] = (char *)pl_export_conf_gemm_dtype(conf);
	}
	/* Megatron-LM, NeMo and Megatron-DeepSpeed ("type:transformer") place
	 * the same number of layers on every stage unless the first and last
	 * stages' are stated; a --stage-cuts given wins */
	int cuts_given = 0;
	for (int i = 1; i < *ns; i++)
		cuts_given |= !strncmp(sv[i], "--stage-cuts", 12);
	if (c->pp > 1 && !cuts_given) {
		/* else whole layers a stage, as every framework places them */
		sv[(*ns)++] = "--stage-cuts";
		sv[(*ns)++] = c->first < 0 && c->last < 0 &&
		                      (fw == FW_MEGATRON || fw == FW_NEMO || fw == FW_MDS)
		                  ? "even"
		                  : "layers";
	}
}

/* How the framework runs: what the configuration states, else its defaults
 * (fw_pricing, as search --framework prices); an option given is kept.
 * Transformer Engine's attention follows the cluster's GPU. */
static void conf_pricing(const pl_export_conf *conf, int argc, char **argv, char **sv, int *ns,
                         char **cv, int *nc)
{
	const fw_config *c = &conf->c;
	pl_cluster pc;
	const char *cname = NULL;
	long long ndev = 8;
	for (int i = 1; i < argc; i++) {
		int next = i + 1 < argc;
		if ((!strcmp(argv[i], "--cluster") || !strcmp(argv[i], "-c")) && next)
			cname = argv[i + 1];
		else if (!strncmp(argv[i], "--cluster=", 10))
			cname = argv[i] + 10;
		else if ((!strcmp(argv[i], "--devices") || !strcmp(argv[i], "-d")) && next)
			ndev = atoll(argv[i + 1]);
	}
	pl_err ce = {{0}};
	memset(&pc, 0, sizeof pc);
	int have = !(cname ? pl_cluster_resolve(&pc, cname, &ce)
	                   : pl_cluster_devices(&pc, ndev > 0 ? ndev : 8, &ce));
	for (int i = 0; i < PL_FW_PRICE_COUNT; i++) {
		size_t on = strlen(price_option[i]);
		int given = 0;
		for (int a = 1; a < argc; a++)
			given |= !strncmp(argv[a], price_option[i], on) &&
			         (argv[a][on] == 0 || argv[a][on] == '=');
		const char *v = c->price[i] ? c->price[i] : fw_default(conf->fw, i, c->pp);
		if (given || !v || (!strcmp(v, "te") && !have))
			continue;
		if (!strcmp(v, "te"))
			v = te_attention(&pc);
		if (i == PL_FW_PRICE_ATTENTION && !*v)
			v = "none";
		sv[(*ns)++] = (char *)price_option[i];
		sv[(*ns)++] = (char *)v;
		if (!job_switch(i)) {
			cv[(*nc)++] = (char *)price_option[i];
			cv[(*nc)++] = (char *)v;
		}
	}
}

void pl_export_conf_args(pl_export_conf *c, int argc, char **argv, char **sv, int *ns, char **cv,
                         int *nc)
{
	conf_degrees(c, sv, ns);
	conf_pricing(c, argc, argv, sv, ns, cv, nc);
}

/* Compares the plan made with the configuration read; notes on stderr, an
 * error where the plan is not of that configuration (its batch). */
pl_status pl_export_conf_compare(const pl_export_conf *conf, const cJSON *ck, pl_err *err)
{
	int fw = conf->fw;
	const fw_config *want = &conf->c;
	const char *where = conf->where;
	fw_config got;
	pl_err e2 = {{0}};
	pl_status st = plan_config(ck, "the plan", &got, &e2);
	if (st == PL_ENOMEM) {
		*err = e2;
		free(got.stage);
		return st;
	}
	if (st) { /* the plan priced, but no framework states it */
		fprintf(stderr, "planner: note: %s\n", e2.msg);
		free(got.stage);
		return PL_OK;
	}
	if (want->gbs && want->gbs != got.gbs) {
		st =
		    pl_err_set(err, PL_EINVAL,
		               "%s: global batch %lld, and MODEL's batch is %lld (the planner "
		               "prices the model's batch: give one of %lld sequences)",
		               where, (long long)want->gbs, (long long)got.gbs, (long long)got.gbs);
		free(got.stage);
		return st;
	}
	if (want->mbs && want->mbs != got.mbs)
		fprintf(stderr, "planner: note: micro-batch %lld in %s, %lld in the plan\n",
		        (long long)want->mbs, where, (long long)got.mbs);
	/* the stage split: the configuration's, where it says one */
	int64_t *exp = NULL, L = got.layers;
	if (got.pp > 1 && got.stage && L >= got.pp) {
		exp = pl_calloc((size_t)got.pp * (size_t)got.vp, sizeof *exp);
		int ok = exp != NULL;
		if (ok && fw == FW_TORCHTITAN) {
			int64_t S = got.pp * got.vp;
			ok = !tt_split(L, S, want->tt_first, want->tt_last, exp);
			if (ok && got.vp > 1) /* chunk s runs on stage s mod pp */
				for (int64_t s = got.pp; s < S; s++)
					exp[s % got.pp] += exp[s];
		} else if (ok) {
			int64_t f = want->first >= 0 ? want->first : -1,
			        l = want->last >= 0 ? want->last : -1;
			int64_t mids = got.pp - (f >= 0) - (l >= 0),
			        rest = L - (f > 0 ? f : 0) - (l > 0 ? l : 0);
			ok = rest >= 0 && (mids > 0 ? rest % mids == 0 : rest == 0);
			for (int64_t s = 0; ok && s < got.pp; s++)
				exp[s] = s == 0 && f >= 0            ? f
				         : s == got.pp - 1 && l >= 0 ? l
				                                     : rest / mids;
		}
		if (ok && memcmp(exp, got.stage, (size_t)got.pp * sizeof *exp)) {
			fprintf(stderr, "planner: note: %s places layers", where);
			for (int64_t s = 0; s < got.pp; s++)
				fprintf(stderr, "%s%lld", s ? " " : " ", (long long)exp[s]);
			fprintf(stderr, " on its stages; the search's plan (priced) places");
			for (int64_t s = 0; s < got.pp; s++)
				fprintf(stderr, " %lld", (long long)got.stage[s]);
			fprintf(stderr, "\n");
		}
	}
	free(exp);
	free(got.stage);
	return PL_OK;
}
