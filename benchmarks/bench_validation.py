#!/usr/bin/env python3
"""Prices the validation set (benchmarks/validation/: published measured runs
and layout sweeps the cost model was not built from) with the planner, one
`planner search` per run with the run's layout fixed, and prints how the
predictions hold:

  - runs.csv: predicted / measured step per run (measured step from the
    published step time or tokens/s per GPU; rows that publish only TFLOP/s
    or MFU are converted through the model-FLOPs formula below and counted
    apart), within 10 % and 25 %, per framework and GPU;
  - sweep.csv: per sweep group, Spearman's rank correlation between
    predicted and measured throughput over the layouts that ran, the
    planner's pick (the fastest layout it predicts to fit, or one with
    room for the memory prediction's error within 5 %, as the search picks:
    search_pick()) against the measured best, and fit/OOM agreement (measured OOM predicted to fit,
    measured run predicted not to fit);
  - residuals by class (report_residuals): predicted / measured by sequence
    length per framework and GPU, and inside the sweeps by micro-batch size
    and pipeline degree, where a shared lean of the model shows;
  - beside each run, the planner's own whole-job plan and its MFU with --job
    (slow: a search per run; benchmarks/results/validation-job.md), priced
    with the run's cluster, memory, kernels and framework switches
    (program_args): only the layout is the search's; how often it is priced
    faster than the published layout, and its MFU against the highest
    measured in the set on that GPU and precision (report_job).

What cannot be stated to the planner is skipped with the reason: FP8 GEMMs,
missing architecture fields. Assumptions, each printed in the table's notes:
Hagemann et al.'s global batch (not published in the readable sources) is
taken as 2^22 tokens (2048 sequences of 2048), which only moves the pipeline
bubble; a run's recompute left empty is the search's choice.

Model FLOPs per token (MFU): 6 x (the matrix products' parameters, embedding
excluded, + the logits' h x V) + 12 x layers x hidden x seq (the attention's
scores and values, forward and backward, not halved for causality), as
PaLM's appendix B counts them (Chowdhery et al. 2022, arXiv:2204.02311).

Usage: benchmarks/bench_validation.py [--build DIR] [--out PREFIX]
                                      [--limit N] [--only runs|sweep]
                                      [--jobs N] [--time-limit S] [--job]
                                      [--tp-comm-overlap] [--overlap-param-gather]
       benchmarks/bench_validation.py --report PREFIX.jsonl
Writes PREFIX.jsonl (one object per row priced) and prints Markdown tables;
--report prints the tables of a recorded PREFIX.jsonl without pricing.
"""
import argparse
import atexit
import concurrent.futures as cf
import csv
import json
import math
import os
import re
import subprocess
import sys
import statistics
import shutil
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
VAL = os.path.join(HERE, "validation")

# Dense peak FLOP/s of the 16-bit tensor cores (datasheets: A100 312 TFLOP/s,
# H100 SXM 989, H200 989; the peak a row's published MFU or TFLOP/s is taken
# over), the preset each GPU is priced on, and the memory, memory bandwidth
# and 16-bit peak of a variant the preset does not have: torchtitan's 500 W
# H100s with HBM2e (94-96 GB), priced with the HBM2e H100 SXM5's 2.41 TB/s (the
# 94 GiB HBM2e part's specification as Ujeniya et al. 2026, arXiv:2604.11391,
# list it; the preset's HBM3 part has 3.35 TB/s) and at the middle of the
# range torchtitan's own notes give its peak: "HBM2e-based SXM H100 with
# lower TDP, the actual peak TFLOPs number is between SXM and NVL, and we
# don't know its exact value" (benchmarks/llama3_h100_202412_torchtitan.md
# footnote 2; docs/performance.md footnote 1), SXM 989 and NVL 835.5 dense
# (1,671 TFLOP/s BF16 with sparsity, H100 NVL product brief): 912.25, FP8
# twice that. The MFU those notes publish stays over the SXM's 989, as they
# took it (docs/benchmarks.md, "Validation set", forty-sixth session)
HBM2E_BANDWIDTH = 2.41e12
HBM2E_PEAK_16 = (989e12 + 835.5e12) / 2
GPUS = {
    "A100-40GB": ("a100x8", 312e12),
    "A100-80GB": ("a100-80gx8", 312e12),
    "H100": ("h100x8", 989e12),
    "H100-80GB": ("h100x8", 989e12),
    "H100-SXM-80GB": ("h100x8", 989e12),
    "H100-96GB-HBM2e": ("h100x8", 989e12, "96GiB", HBM2E_BANDWIDTH, HBM2E_PEAK_16),
    "H100-94GB-HBM2e": ("h100x8", 989e12, "94GiB", HBM2E_BANDWIDTH, HBM2E_PEAK_16),
    "H200": ("h200x8", 989e12),
}
CLUSTER_DIR = tempfile.mkdtemp(prefix="bench_validation_")
atexit.register(shutil.rmtree, CLUSTER_DIR, True)


# the planner binaries' folder, for the cluster files below (main() sets it
# from --build; a script that imports this module and prices rows sets it too)
BUILD = "build"
# Omni-Path nodes: BLOOM's (tr11 README, "Hardware": "8 GPUs per node Using
# NVLink 4 inter-gpu connects, 4 OmniPath links"; the rows' interconnect
# column says "N OPA links per node"), each link 100 Gb/s (Jean Zay's "réseau
# Intel Omni-Path 100 Gb/s", LMI MAG, March 2020): 12 GB/s a link at the
# presets' rule for a NIC's line rate less protocol overhead (docs/cost-model.md,
# "Sources": 100 Gb/s EDR -> 12 GB/s), the node's links shared by its GPUs
OPA_LINK_BUSBW = 12e9


def opa_links(r):
    m = re.search(r"(\d+) OPA links per node", r.get("interconnect", ""))
    return int(m.group(1)) if m else 0


def cluster_file(cluster, tag, memory_bandwidth=None, peak16=None, node_busbw=None):
    """the preset `cluster` (NAME:NODES) as `planner topology --preset` writes
    it out, with another memory bandwidth, dense 16-bit peak (FP8's twice it,
    as the datasheets have it) or inter-node bus bandwidth a node (shared by
    its devices); named NAME-tag:NODES"""
    path = os.path.join(CLUSTER_DIR, f"{cluster.replace(':', '_')}-{tag}.json")
    if not os.path.exists(path):
        p = subprocess.run([os.path.join(BUILD, "planner"), "topology", "--preset", cluster,
                            "--json"], capture_output=True, text=True, check=True)
        c = json.loads(p.stdout)
        name, _, nodes = cluster.partition(":")
        c["name"] = f"{name}-{tag}:{nodes}"
        if memory_bandwidth:
            c["device"]["memory_bandwidth"] = memory_bandwidth
        if peak16:
            c["device"]["peak_flops"].update(bfloat16=peak16, float16=peak16, float8=2 * peak16)
        if node_busbw:
            c["links"]["inter_node"]["busbw"] = node_busbw / c["devices_per_node"]
        # a temporary file of this thread's own: the pricing threads may write
        # the same cluster at once (os.replace makes either one the file)
        fd, tmp = tempfile.mkstemp(dir=CLUSTER_DIR, suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            json.dump(c, f)
        os.replace(tmp, path)
    return path
HAGEMANN_TOKENS = 1 << 22
# --tp-comm-overlap: price the rows whose recipe overlaps the tensor-parallel
# collectives with the GEMMs with the planner's --tp-comm-overlap (off by
# default: its full overlap overstates the published async-TP gains,
# docs/benchmarks.md, "Validation set")
TP_COMM_OVERLAP = False
# --overlap-param-gather: price the rows whose framework gathers parameters
# ahead of use (overlap_param_gather) with the planner's --overlap-param-gather
# on (off by default: with it the set's error grows, 143 -> 141 of 245 runs
# within 10 %, mean |log ratio| 0.110 -> 0.119; docs/benchmarks.md,
# "Validation set")
PARAM_OVERLAP = False


def rows(name):
    with open(os.path.join(VAL, name)) as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def num(r, k):
    v = r.get(k, "").strip()
    try:
        return float(v) if v else None
    except ValueError:
        return None


def integer(r, k, default=None):
    v = num(r, k)
    return int(v) if v is not None else default


def llama_like(r):
    """a gated (SwiGLU) feed-forward with RMSNorm: the zoo's llama2-7b graph.
    Nemotron is not: its MLP is two GEMMs with a squared ReLU between, no
    gate, and its norm a LayerNorm (NeMo-Framework-Launcher's
    conf/training/nemotron/nemotron_{8b,22b,340b}.yaml: activation
    squared-relu, normalization layernorm1p, ffn_hidden_size 4 x hidden),
    priced with the zoo's GPT graph: the same two GEMMs, and autograd keeps
    two [tokens, ffn] tensors either way (relu's output, which pow reads,
    and its square, which the second GEMM reads; GELU's input and output),
    the elementwise op's bytes alike; the GPT graph's biases and learned
    position table are the difference (a 1e-4 share of the parameters)"""
    m = r["model"].lower()
    if "nemotron" in m:
        return False
    ffn, h = integer(r, "ffn"), integer(r, "hidden")
    return any(k in m for k in ("llama", "mistral", "mixtral")) or (
        ffn is not None and h and ffn != 4 * h)


def flops_per_token(r):
    L, h, a = integer(r, "layers"), integer(r, "hidden"), integer(r, "heads")
    kv, ffn, V, s = integer(r, "kv_heads", a), integer(r, "ffn"), integer(r, "vocab"), integer(r, "seq")
    if None in (L, h, a, s):
        return None
    ffn = ffn or 4 * h
    hd = h // a
    mlp = (3 if llama_like(r) else 2) * h * ffn
    per_layer = h * (h + 2 * (kv or a) * hd) + h * h + mlp
    return 6 * (L * per_layer + h * (V or 0)) + 12 * L * h * s


def global_batch(r):
    b = integer(r, "global_batch")
    if b:
        return b, None
    if r["id"].startswith("hag23"):
        return max(1, HAGEMANN_TOKENS // integer(r, "seq")), "global batch assumed 2^22 tokens"
    if r["framework"] == "torchtitan" and integer(r, "micro_batch"):
        # torchtitan's training.batch_size is the local batch of a data-
        # parallel rank (the context-parallel ranks share it, each with its
        # piece of the sequence), one step without gradient accumulation at
        # the rows' commits: the global batch is it times the data-parallel
        # degree, the ranks tp x pp x cp leave (as the rows that state a
        # global batch have it: tt2412-t1, local 2 on 8 GPUs, 16)
        tp, pp, cp = integer(r, "tp", 1), integer(r, "pp", 1), integer(r, "cp", 1)
        dp = integer(r, "dp") or integer(r, "gpus") // (tp * pp * cp)
        return integer(r, "micro_batch") * dp, None
    return None, None


def measured_step(r, gb):
    """(seconds, how) from what the row publishes"""
    gpus, s = integer(r, "gpus"), integer(r, "seq")
    if num(r, "measured_step_s"):
        return num(r, "measured_step_s"), "step"
    tps = num(r, "measured_tokens_per_s_per_gpu")
    if tps and gb and s:
        return gb * s / (tps * gpus), "tokens/s"
    f = flops_per_token(r)
    tf = num(r, "measured_tflops_per_gpu")
    if tf and f and gb:
        return gb * s * f / (gpus * tf * 1e12), "TFLOP/s (converted)"
    mfu = num(r, "measured_mfu")
    peak = GPUS.get(r["gpu"], (None, None))[1]
    if mfu and f and gb and peak:
        return gb * s * f / (gpus * mfu * peak), "MFU (converted)"
    return None, None


def why_not(r):
    if r["gpu"] not in GPUS:
        return f"no preset for {r['gpu']}"
    for k in ("layers", "hidden", "heads", "seq", "gpus", "tp", "pp"):
        if integer(r, k) is None:
            return f"{k} not published"
    if integer(r, "ep", 1) > 1:
        return "expert parallel: the model's experts are not in the row"
    return None


def zoo_args(r, gb):
    a = ["llama2-7b" if llama_like(r) else "gpt3-175b",
         "--layers", r["layers"], "--hidden", r["hidden"], "--heads", r["heads"],
         "--head-dim", str(integer(r, "hidden") // integer(r, "heads")),
         "--seq", r["seq"], "--batch", str(gb),
         "--dtype", "float16" if r["precision"] == "fp16" else "bfloat16"]
    if r["kv_heads"]:
        a += ["--kv-heads", r["kv_heads"]]
    a += ["--ffn", r["ffn"] or str(4 * integer(r, "hidden"))]
    a += ["--vocab", r["vocab"] or "50304"]
    if projections(r) != "separate":
        a += ["--projections", projections(r)]
    if attention_kernel(r):  # fused unless the row or its framework says otherwise
        a += ["--attention", "fused"]
        if attention_output(r) != "shared":
            a += ["--attention-output", attention_output(r)]
        if attention_inputs(r) != "copies":
            a += ["--attention-inputs", attention_inputs(r)]
    elif softmax_mask(r) != "implicit":
        a += ["--softmax-mask", softmax_mask(r)]
    if rotary(r) != "none":
        a += ["--rotary", rotary(r)]
    if llama_like(r) and swiglu(r) != "unfused":
        a += ["--swiglu", swiglu(r)]
    if not llama_like(r) and r["framework"] not in ("megatron-lm", "megatron-deepspeed"):
        a += ["--dropout", "0"]
    return a


def recompute(r):
    """the planner's recompute mode of a run's, or None (the search's
    choice): as stated, but torchtitan's "selective" is its per-op selective
    checkpointing (selective-op: selective_ac_option 'op', which its
    train_configs/llama3_*.toml set and the Llama 3 benchmark runs used)
    unless the source says "selective layer" (every n-th layer checkpointed
    whole, which the planner does not price: left as Megatron's selective,
    the nearest it has)"""
    rc = r["recompute"]
    if rc == "selective" and r["framework"] == "torchtitan" and \
            "selective layer" not in r["notes"]:
        return "selective-op"
    return rc if rc in ("none", "full", "selective") else None


def swiglu(r):
    """how the run's framework computes a SwiGLU feed-forward's SiLU and
    product: Megatron-core (Megatron-LM's --swiglu with bias_swiglu_fusion on
    by default; NeMo's and Megatron-Bridge's LlamaConfig with
    bias_activation_fusion True) as one fused kernel that keeps only fc1's
    output [gate; up] and recomputes the SiLU in its backward
    (megatron/core/transformer/mlp.py MLP.forward -> bias_swiglu_impl,
    megatron/core/fusions/fused_bias_swiglu.py SwiGLUFunction): "fused".
    Nemotron's MLP is a squared ReLU without a gate, which that kernel does
    not run. Megatron-DeepSpeed (the legacy ParallelMLP's --swiglu:
    F.silu(x[0]) * x[1] of torch.chunk, megatron/model/transformer.py),
    torchtitan (F.silu(w1(x)) * w3(x)), llm-foundry, Aleph Alpha's scaling
    and the others run the SiLU and the product under autograd, keeping
    gate, silu(gate) and up: "unfused" """
    if r["framework"] in ("megatron-lm", "nemo") and "nemotron" not in r["model"].lower():
        return "fused"
    return "unfused"


def projections(r):
    """how the run's framework lays out q, k, v (and a gated MLP's gate and
    up): Megatron-LM and NeMo as one GEMM each (linear_qkv; linear_fc1 with
    the gated unit, megatron/core/transformer), Megatron-DeepSpeed's
    query_key_value, Aleph Alpha's scaling with qkv_in_one (its default) and
    two SwiGLU GEMMs (core/nn/mlp.py ParallelSwiGLUMLP); llm-foundry's MPT
    fuses Wqkv too, torchtitan and the others keep separate projections"""
    if r["framework"] in ("megatron-lm", "nemo"):
        return "fused"
    if r["framework"] in ("megatron-deepspeed", "llm-foundry") or \
            "AA-Scaling" in r["framework_version"]:
        return "qkv"
    return "separate"


def attention_kernel(r):
    """the fused kernel a run used: as the row states it (flash1, flash2,
    flash3, cudnn), else its framework's: Megatron-LM and NeMo run Transformer
    Engine's cuDNN attention, Megatron-DeepSpeed unfused attention (flash
    only with --use-flash-attn), the others PyTorch's FlashAttention-2 (the
    presets' default); None for unfused attention"""
    a = r["attention"]
    if a in ("flash1", "flash2", "flash3", "cudnn"):
        return a
    if a == "unfused":
        return None
    if r["framework"] == "llm-foundry":
        # its benchmark sweep ran MPT with attn_impl 'triton' (submit_benchmarks.py
        # parse_args: --attn_impl default 'triton', copied into every run's model
        # config; sweep.sh never sets it): llm-foundry's copy of Tri Dao's
        # flash_attn_triton.py on the pre-MLIR Triton, which no published chart
        # measures. Both of its authors place it at FlashAttention-1's CUDA
        # kernel: MosaicML, "In our experience, `triton` is slightly faster than
        # `flash`" (TUTORIAL.md @v0.3.0, where `flash` is flash-attn 1.0.x), and
        # Tri Dao, "Overall Triton forward + backward is slightly slower than
        # CUDA forward + backward" (the file's docstring). So it is priced at
        # FlashAttention-1's measured rates (A100 and H100), not at the FA2
        # paper's "Triton" series, which is OpenAI's triton.ops.flash_attention,
        # another kernel: docs/cost-model.md
        return "flash1"
    if r["framework"] == "megatron-deepspeed":
        # FlashAttention is opt-in there (--use-flash-attn), and MT-NLG's
        # runs (2021) predate it (Dao et al., May 2022): unfused
        return None
    return "cudnn" if r["framework"] in ("nemo", "megatron-lm") else "flash2"


def attention_output(r):
    """how the run lays out its fused attention's output for the output
    projection: Aleph Alpha's scaling rearranges FlashAttention's
    [(b s), heads, dh] output to [(b heads), s, dh] (flash_attention) and that
    to [b, s, (heads dh)] before its dense layer (ParallelSelfAttention.forward,
    src/scaling/core/nn/attention/attention.py), two copies, while
    flash_attn_varlen_func saves its own output for the backward
    (flash_attn/flash_attn_interface.py, save_for_backward(q, k, v, out_padded,
    ...)): "copied", the dense layer keeping the second copy beside it; the
    others are left "shared" (the projection reads the kernel's output)"""
    return "copied" if "AA-Scaling" in r["framework_version"] else "shared"


def loss_kernel(r):
    """how the run computes its cross-entropy, by its framework's default:
    llm-foundry's MPT runs flash-attn's fused kernel (loss_fn
    'fused_crossentropy', llmfoundry/models/mpt/modeling_mpt.py), NeMo's
    GPTConfig sets cross_entropy_loss_fusion True; Megatron-LM
    (--cross-entropy-loss-fusion off by default), torchtitan and the others
    run PyTorch's cross_entropy on fp32 logits"""
    return "fused" if r["framework"] in ("llm-foundry", "nemo") else "unfused"


def loss_metrics(r):
    """the cross-entropies the run's training loop computes over the logits
    beside the loss, every micro-batch, without gradients: Composer's
    Trainer evaluates each of the model's train metrics on every
    micro-batch's outputs after its backward (_train_microbatch ->
    _eval_train_metrics, composer/trainer/trainer.py, v0.14.0 to v0.17.2),
    and llm-foundry's MPT has two, LanguageCrossEntropy and
    LanguagePerplexity (llmfoundry/models/mpt/modeling_mpt.py from v0.2.0;
    use_train_metrics defaults True from v0.4.0, and no benchmark yaml sets
    it), each torch.nn.CrossEntropyLoss over the whole logits
    (composer/metrics/nlp.py). The other frameworks compute the loss
    alone"""
    return 2 if r["framework"] == "llm-foundry" else 0


def loss_parallel(r):
    """where the run computes its loss under tensor parallelism: Aleph
    Alpha's scaling library (Hagemann et al.'s runs) has a column-parallel
    LM head that gathers its output over the tensor-parallel ranks
    (TransformerLMHead: ColumnParallelLinear with parallel_output False,
    src/scaling/transformer/model/layers/lm_head.py) and a loss that takes
    the whole vocabulary in fp32 (losses/cross_entropy.py); Megatron-LM,
    NeMo, Megatron-DeepSpeed and torchtitan (loss parallel on by default)
    run a vocab-parallel cross entropy"""
    return "gathered" if "AA-Scaling" in r["framework_version"] else "vocab"


def grad_dtype(r):
    """the gradients' dtype of 16-bit params: Aleph Alpha's scaling library
    accumulates them on the bf16 params' .grad, all-reduces those, and casts
    only the rank's ZeRO partition to fp32 at the step (core/optimizer/
    optimizer.py step and parameter_group.py step_prequel); Megatron-LM
    forces fp32 main gradients for bf16 (accumulate_allreduce_grads_in_fp32),
    FSDP's and DeepSpeed's defaults keep fp32 gradients or shard them; NeMo's
    launcher recipes whose run script sets grad_sync_dtype bf16 (the row's
    notes cite it) keep Apex distributed_fused_adam's gradient buffer and its
    reduce-scatter in bf16 (NeMo docs, "Communication Overlap": the
    reduce-scatter's precision is grad_sync_dtype, default the optimizer's
    fp32); Megatron-Bridge's performance recipes that set grad_reduce_in_fp32
    False (the notes cite it) keep Megatron-core's gradient buffer in bf16.
    DeepSpeed runs bf16 params under ZeRO 0 and 1 with its BF16_Optimizer
    (engine.py _do_optimizer_sanity_check: bf16 with the default fp32
    grad_accum_dtype), which keeps autograd's bf16 gradients beside a whole
    fp32 gradient (bf16_optimizer.py): Megatron-DeepSpeed's bf16 rows (BLOOM's
    tr11 runs and the prequel's tables after the switch to it); its fp16 runs
    (FP16 and ZeRO stage 1 optimizers: fp16 gradients, fp32 main gradients
    of the rank's share) keep fp32's bytes, 4 + 16/d"""
    if ("AA-Scaling" in r["framework_version"] or "grad_sync_dtype bf16" in r["notes"]
            or "grad_reduce_in_fp32 False" in r["notes"]):
        return "param"
    if deepspeed_bf16(r):
        return "param+fp32"
    return "fp32"


def deepspeed_bf16(r):
    """a Megatron-DeepSpeed run of bf16 params under ZeRO 0 or 1: DeepSpeed's
    BF16_Optimizer"""
    return (r["framework"] == "megatron-deepspeed" and r["precision"] == "bf16"
            and r["zero"] in ("", "0", "1"))


def grad_reduce(r):
    """how the run's framework reduces the gradients once a step under ZeRO
    0 and 1: Aleph Alpha's scaling flattens them into buckets, casts them to
    fp32 and all-reduces them whole, ZeRO or not ("communication will happen
    in full precision in case of bfloat": core/optimizer/optimizer.py step,
    allreduce.py allreduce_tensor_in_float32), then all-gathers the bf16
    weights (parameter_group.py step_sequel); the others reduce in the
    gradients' dtype, reduce-scattering under ZeRO 1, but for DeepSpeed's
    BF16_Optimizer, whose fp32 gradient the engine all-reduces whole in
    buckets (engine.py allreduce_gradients: get_grads_for_reduction, then
    buffered_allreduce_fallback; the optimizer all-gathers the bf16 weights
    after its step)"""
    if "AA-Scaling" in r["framework_version"] or deepspeed_bf16(r):
        return "fp32-all-reduce"
    return "as-grad"


def virtual_stages(r):
    """the model chunks a pipeline rank holds: the row's, else torchtitan's
    default for its multi-stage schedules (Interleaved 1F1B): 2 a rank
    (generate_split_points: "num_stages_per_rank = 2" where no split is
    given, pipelining_utils.py of the rows' Dec 2024 commits), None (the
    search's) for an interleaved schedule of a count not stated, else 1"""
    if r["vp"]:
        return r["vp"]
    if r["framework"] == "torchtitan" and "schedule Interleaved 1F1B" in r["notes"]:
        return "2"
    if "modified interleaved schedule (stage count per rank not in the table)" in r["notes"]:
        # interleaved, by how many chunks a rank the source does not say
        # (the Llama 3 paper's table 4): the search's choice, as for any
        # setting a row leaves out
        return None
    return "1"


def micro_batch_size(r):
    """the micro-batch size the run trained with: the row's, but for
    torchtitan's pipelined rows, whose micro_batch column holds the local
    batch per data-parallel rank: torchtitan (as of the rows' Dec 2024
    commits) cuts it into as many pipeline micro-batches as there are
    stages unless pipeline_parallel_microbatches says otherwise
    (pipelining_llama.py: n_microbatches defaults to the pipeline degree;
    job_config.py: "The default value will be the number of pipeline
    stages")"""
    mb = integer(r, "micro_batch")
    pp = integer(r, "pp", 1)
    if mb and r["framework"] == "torchtitan" and pp > 1 and mb % pp == 0:
        return mb // pp
    return mb


def grad_accumulation(r):
    """how each micro-batch adds its weight gradients into the kept ones:
    Aleph Alpha's scaling runs loss.backward() every micro-batch and sets the
    bf16 gradients to None only after the step (core/optimizer/optimizer.py
    Optimizer.backward, step), so PyTorch's AccumulateGrad adds each fresh
    gradient into .grad, a kernel of its own a param; so do DeepSpeed's fp16
    optimizers under ZeRO 0 and 1, which register no gradient hooks there
    (stage_1_and_2.py: only with partition_gradients or overlap_comm) and
    leave the gradients to accumulate in .grad until the step (Megatron-
    DeepSpeed's runs; under its bf16 optimizer, grad_dtype param+fp32, the
    cost model prices that optimizer's own add instead); so does PyTorch
    FSDP: FSDP1 (llm-foundry's Composer) adds each micro-batch's
    reduce-scattered gradient into the kept shard (_runtime_utils.py
    _accumulate_sharded_grad), FSDP2 (torchtitan) into the sharded .grad
    (_fsdp_collectives.py foreach_reduce), and under pipeline stages each
    16-bit gradient into the whole fp32 one it keeps until the last
    backward (_fsdp_param.py accumulate_unsharded_grad_if_needed);
    Megatron-LM and NeMo fuse the add into the weight-gradient GEMM"""
    if ("AA-Scaling" in r["framework_version"] or r["framework"] == "megatron-deepspeed"
            or r["framework"] in ("torchtitan", "llm-foundry")):
        return "autograd"
    return "fused"


def norm_kernel(r):
    """how the run's norms run: Aleph Alpha's RMSNorm is eager PyTorch
    (at the library's first public snapshot, 7848929, RMSNorm.forward:
    self._norm(x.float()).type_as(x) * weight, pow, mean, rsqrt and products
    in fp32; src/scaling/core/nn/norm/rms_norm.py) unless the row ran the fused
    RMSNorm kernel of the FlashAttention repository (Hagemann et al.'s
    'flash_attention2 + RMS kernel'). torchtitan's train configs at
    9dec370 set norm_type = "rmsnorm", its own RMSNorm module written as
    PyTorch ops (torchtitan/models/norms.py: x.float(), pow, mean, rsqrt,
    products, type_as), which only torch.compile fuses: a row whose stated
    techniques leave torch.compile out ran it eagerly. The other frameworks
    run fused norms (Transformer Engine, apex, PyTorch's native layer_norm)"""
    if "AA-Scaling" in r["framework_version"]:
        return "fused" if "RMS kernel" in r["notes"] else "unfused"
    if (r["framework"] == "torchtitan" and "techniques:" in r["notes"]
            and "compile" not in r["notes"]):
        return "unfused"
    return "fused"


def rotary(r):
    """how a Llama's rotary embedding runs: Aleph Alpha's scaling rotates q
    and k in eager PyTorch (RotaryEmbedding.forward -> apply_rotary_pos_emb,
    src/scaling/core/nn/rotary.py: q * cos + rotate_half(q) * sin, its
    @torch.jit.script commented out): "eager"; the others run a fused RoPE
    kernel (Megatron-core's apply_rope_fusion, Transformer Engine's) or
    have no rotation priced: "none" """
    if "AA-Scaling" in r["framework_version"] and llama_like(r):
        return "eager"
    return "none"


def attention_inputs(r):
    """whether the fused attention's saved q, k, v are views of the fused
    projection's output: Aleph Alpha's scaling with qkv_in_one (its default)
    splits query_key_value's output into views (split_tensor_along_last_dim)
    and flash_attn_varlen_func saves v, keeping the whole buffer (q's and
    k's thirds with it) beside the rotated q and k (new tensors) it also
    saves: "views"; the others' saved inputs are priced as their own
    tensors: "copies" """
    if "AA-Scaling" in r["framework_version"] and projections(r) == "qkv":
        return "views"
    return "copies"


def softmax_mask(r):
    """how an unfused attention masks its scores before the softmax: Aleph
    Alpha's torch kernel (MaskedSoftmaxTorch,
    src/scaling/core/nn/masked_softmax/masked_softmax.py) fills them with
    masked_fill_ in eager PyTorch, its own kernel each way ("masked-fill",
    priced with --mask-kernel unfused); Megatron-DeepSpeed's unfused path runs
    FusedScaleMaskSoftmax, the mask inside the softmax kernel ("implicit"), and
    so do Hagemann et al.'s rows labelled kernel='fused' (their "fused" is
    Megatron-LM's fused scale-mask-softmax kernel, not the torch path)"""
    if (attention_kernel(r) is None and "AA-Scaling" in r["framework_version"]
            and "kernel='fused'" not in r["notes"]):
        return "masked-fill"
    return "implicit"


def overlap_grad_reduce(r):
    """whether the run's framework overlaps the once-a-step gradient
    reduction with the backward by its recipes: NeMo's launcher configs run
    the distributed optimizer with optim.overlap_grad_sync True (NVIDIA/NeMo-
    Framework-Launcher launcher_scripts/conf/training/gpt3/20b.yaml and the
    other gpt3, llama and nemotron configs the rows cite) and Megatron-
    Bridge's recipes set ddp.overlap_grad_reduce True (the switch table of
    docs/cost-model.md: nemo's default is on); Megatron-LM's flag is off
    unless a row's source gives it (its notes), torchtitan's runs are FSDP
    (ZeRO 3), whose per-micro-batch reduce-scatters this switch does not
    price"""
    return r["framework"] == "nemo"


def tp_comm_overlap(r):
    """whether the run overlapped its tensor-parallel collectives with the
    GEMMs, where its source or recipe says so: Megatron-LM's README runs
    (--tp-comm-overlap, in the rows' notes), Megatron-Bridge's H100
    performance recipes (scripts/performance/configs/llama3/
    llama3_llm_pretrain.py llama3_70b_h100_config and the 405B one set
    comm_overlap.tp_comm_overlap_cfg to the userbuffers_fp8_h100_* configs),
    torchtitan's rows run with async TP ("Float8 + Async TP", "2D + AsyncTP"
    in their notes); NeMo 24.07's table does not say
    which configuration ran (the launcher's configs differ: ub_tp_comm_overlap
    True in gpt3/20b_fp8_performance.yaml, False in gpt3/20b.yaml and
    llama/llama2_70b.yaml), so its rows are priced without"""
    return ("--tp-comm-overlap" in r["notes"] or "asynctp" in r["notes"].lower().replace(" ", "")
            or "Megatron-Bridge" in r["framework_version"])


def overlap_param_gather(r):
    """whether the run gathers its parameters ahead of use beside the
    compute (the planner's --overlap-param-gather: ZeRO-3's per-layer
    gathers prefetched, ZeRO-1/2's updated weights gathered during the next
    forward), as its framework runs it: torchtitan's FSDP2 (fully_shard
    all-gathers the next module's weights on its own stream, always),
    llm-foundry's FSDP through Composer (PyTorch FSDP's all-gathers run in
    their own stream, backward prefetching and the implicit forward
    prefetching of a CPU thread that runs ahead: Zhao et al. 2023, PyTorch
    FSDP, VLDB 16(12), section 3.4), NeMo's launcher configs
    (optim.overlap_param_sync true in launcher_scripts/conf/training/
    gpt3/20b.yaml, gpt3/175b.yaml, llama/llama2_70b.yaml of NVIDIA/NeMo-
    Framework-Launcher) and Megatron-Bridge's recipes (ddp.overlap_param_gather
    True, recipes/llama/llama3.py v0.2.0), Megatron-LM where the row's source
    gives --overlap-param-gather (the README's scaling runs); off for
    Megatron-DeepSpeed (DeepSpeed's ZeRO-1 gathers the updated weights in the
    step, zero/config.py overlap_comm False) and the runs whose stack is not
    public"""
    return (r["framework"] in ("torchtitan", "llm-foundry", "nemo")
            or "--overlap-param-gather" in r["notes"])


def stage_output(r):
    """what the run's runtime does with the model's output (the logits)
    after the loss's forward: "buffered" where a pipeline engine keeps it in
    a buffer that the last stage never clears and the forward two
    micro-batches later overwrites: Aleph Alpha's scaling (Buffers.get in
    _execute_loss_fn, src/scaling/core/nn/parallel_module/parallel_module.py;
    the last stage's required_buffer_count is max(2, ...),
    pipeline_schedule/train.py) and DeepSpeed's PipelineEngine, which
    Megatron-DeepSpeed trains GPT through (_exec_forward_pass stores
    pipe_buffers['outputs'][buffer_id] on every stage, _exec_backward_pass
    returns on the last stage before setting it to None;
    TrainSchedule.num_pipe_buffers is max(2, ...); deepspeed/runtime/pipe/
    engine.py, schedule.py); the others compute the loss in the model's
    forward and give the output back: "freed"
    """
    if "AA-Scaling" in r["framework_version"] or r["framework"] == "megatron-deepspeed":
        return "buffered"
    return "freed"


def stage_split(r):
    """how the run's framework places layers on pipeline stages, where the
    planner would otherwise balance them: "even", the same number of layers
    a stage, the embedding on the first and the head on the last (Megatron-LM
    and NeMo: num_layers / pp, megatron/core/transformer/transformer_block.py;
    Megatron-DeepSpeed's PipelineModule partition_method "type:transformer",
    transformer layers balanced by count; torchtitan of late 2024,
    generate_split_points: n_layers split evenly); "uniform", the embedding,
    each layer, the final norm and the head as items split by
    partition_uniform (Aleph Alpha's scaling: TopologyConfig
    pipe_partition_method, default "uniform",
    src/scaling/core/topology/topology_config.py, and the layer specs of
    src/scaling/transformer/model/model.py); None: the search's"""
    if "AA-Scaling" in r["framework_version"]:
        return "uniform"
    if r["framework"] in ("megatron-lm", "nemo", "megatron-deepspeed", "torchtitan"):
        return "even"
    return None


def search_args(r):
    gpus = integer(r, "gpus")
    preset = GPUS[r["gpu"]][0]
    # a job on part of a node: that many of the preset's GPUs on one node
    # (an x8 preset with another count a node, as h100x4)
    cluster = f"{preset[:-1]}{gpus}:1" if gpus < 8 else f"{preset}:{-(-gpus // 8)}"
    if len(GPUS[r["gpu"]]) > 3:
        cluster = cluster_file(cluster, "hbm2e", *GPUS[r["gpu"]][3:5])
    elif opa_links(r) and gpus > 8:
        n = opa_links(r)
        cluster = cluster_file(cluster, f"opa{n}", node_busbw=n * OPA_LINK_BUSBW)
    a = ["--cluster", cluster, "--tp", r["tp"], "--pp", r["pp"]]
    if len(GPUS[r["gpu"]]) > 2:
        a += ["--memory-limit", GPUS[r["gpu"]][2]]
    cp = integer(r, "cp", 1)
    if cp > 1:
        a += ["--cp", str(cp)]
    if cp > 1 and "arxiv.org/abs/2407.21783" in r["source"]:
        # the Llama 3 paper's context parallelism (section 3.3.2) all-gathers
        # K and V, then computes the local queries' attention, the gather
        # exposed: Transformer Engine's all_gather, whose docstring cites it
        # ("KV all-gather between CP ranks is exposed")
        a += ["--cp-exchange", "allgather-sync"]
    if cp > 1 and r["framework"] == "torchtitan":
        # PyTorch's context_parallel rotates K/V with an all-gather unless
        # told otherwise (_ContextParallelOptions.rotate_method ALL_GATHER;
        # torchtitan's context_parallel_rotate_method "allgather")
        a += ["--cp-exchange", "allgather"]
    tp, pp = integer(r, "tp"), integer(r, "pp")
    a += ["--dp", str(integer(r, "dp") or gpus // (tp * pp * cp))]
    if micro_batch_size(r):
        a += ["--micro-batch-size", str(micro_batch_size(r))]
    if virtual_stages(r):
        a += ["--virtual-stages", virtual_stages(r)]
    zero = {"full_shard": "3", "hybrid_shard": "3", "shard_grad_op": "2"}.get(r["fsdp"])
    if zero == "3" and r["framework"] == "torchtitan" and pp > 1:
        # torchtitan's FSDP under pipeline stages does not reshard after
        # forward (apply_fsdp) and PyTorch's schedule neither reshards nor
        # reduces before the last backward (pipelining/stage.py,
        # backward_maybe_with_nosync): ZeRO 1's state and collectives
        zero = "1"
    zero = zero or (r["zero"] if r["zero"] in ("0", "1", "2", "3") else None)
    if zero:
        a += ["--zero", zero]
    if zero == "3" and r["framework"] in ("llm-foundry", "torchtitan"):
        # PyTorch FSDP (llm-foundry's Composer, torchtitan's fully_shard)
        # keeps each bf16 param's shard in fp32 and casts it when it
        # all-gathers: no 16-bit shard beside the master (docs/cost-model.md);
        # Megatron-Bridge's FSDP is Megatron FSDP, which keeps the bf16 shard
        a += ["--param-shard", "fp32"]
    kernel = attention_kernel(r)
    if kernel:
        a += ["--attention-kernel", kernel]
    a += ["--loss-kernel", loss_kernel(r)]
    if integer(r, "tp", 1) > 1 and loss_parallel(r) != "vocab":
        a += ["--loss-parallel", loss_parallel(r)]
    if grad_dtype(r) != "fp32":
        a += ["--grad-dtype", grad_dtype(r)]
    if grad_reduce(r) != "as-grad":
        a += ["--grad-reduce", grad_reduce(r)]
    if grad_accumulation(r) != "fused":
        a += ["--grad-accumulation", grad_accumulation(r)]
    if norm_kernel(r) != "fused":
        a += ["--norm-kernel", norm_kernel(r)]
    if softmax_mask(r) == "masked-fill":
        a += ["--mask-kernel", "unfused"]
    if loss_metrics(r):
        a += ["--loss-metrics", str(loss_metrics(r))]
    if stage_output(r) != "freed":
        a += ["--stage-output", stage_output(r)]
    if r["precision"] == "fp8":
        # the linear layers' GEMMs in FP8: NeMo's and Megatron-LM's fp8
        # (Transformer Engine, hybrid recipe), llm-foundry's amp_fp8 (TE),
        # torchtitan's Float8 (torchao); the output layer stays 16-bit in all
        a += ["--gemm-dtype", fp8_recipe(r)]
    if "--overlap-grad-reduce" in r["notes"] or overlap_grad_reduce(r):
        # the run overlapped its gradient reduction with the backward, as its
        # source says (Megatron-LM's README scaling table: --overlap-grad-reduce
        # --overlap-param-gather --tp-comm-overlap; the planner does not model
        # the second) or its framework's recipes set it
        a += ["--overlap-grad-reduce", "on"]
    if PARAM_OVERLAP and overlap_param_gather(r):
        a += ["--overlap-param-gather", "on"]
    if TP_COMM_OVERLAP and integer(r, "tp", 1) > 1 and tp_comm_overlap(r):
        a += ["--tp-comm-overlap", "on"]
    if pp > 1 and stage_split(r):
        a += ["--stage-cuts", stage_split(r)]
    if recompute(r):
        a += ["--recompute", recompute(r)]
    if r["sequence_parallel"] in ("on", "off", "yes", "no", "true", "false"):
        a += ["--sequence-parallel", "on" if r["sequence_parallel"] in ("on", "yes", "true") else "off"]
    elif r["id"].startswith("hag23") and "allruns" in r["notes"]:
        # Hagemann's all-runs sheets do not vary sequence parallelism (their
        # seqpar sheets do): off, Megatron's default, not the search's choice
        a += ["--sequence-parallel", "off"]
    return a


# search_args' options that set the layout (what the whole-job search
# chooses), each with its value; the rest (the cluster, its memory, the
# kernels and the framework's switches) are how the run's program runs and
# price the search's own plan as they price the published one
LAYOUT_OPTIONS = ("--tp", "--pp", "--dp", "--cp", "--micro-batch-size", "--virtual-stages",
                  "--zero", "--recompute", "--sequence-parallel", "--stage-cuts")


def fp8_recipe(r):
    """the --gemm-dtype of an FP8 run: Transformer Engine's delayed scaling
    (fp8) for Megatron-LM, NeMo and llm-foundry's amp_fp8; torchao's Float8
    for torchtitan, whose float8 converter defaults to dynamic tensorwise
    scaling (torchao's Float8LinearConfig() and the FSDP float8 all-gather
    that only tensorwise supports), rowwise where the row says so
    (float8.recipe_name rowwise)"""
    if r["framework"] != "torchtitan":
        return "fp8"
    return "fp8-rowwise" if "rowwise" in (r["id"] + " " + r["notes"]).lower() else "fp8-tensorwise"


def program_args(r):
    a, out = search_args(r), []
    for i in range(0, len(a), 2):
        if a[i] not in LAYOUT_OPTIONS:
            out += a[i:i + 2]
    return out


def price(task):
    r, build, limit, job = task
    out = {"id": r["id"], "framework": r["framework"], "gpu": r["gpu"], "gpus": r["gpus"],
           "oom": r["oom"], "group": group_of(r), "precision": r["precision"]}
    skip = why_not(r)
    gb, assumed = global_batch(r)
    if not skip and not gb:
        skip = "global batch not published"
    if skip:
        out["skipped"] = skip
        return out
    out["assumed"] = assumed
    meas, how = measured_step(r, gb)
    out["measured_step_s"], out["measured_from"] = meas, how
    f = flops_per_token(r)
    with tempfile.TemporaryDirectory() as t:
        model, plan = os.path.join(t, "m.json"), os.path.join(t, "p.json")
        with open(model, "w") as m:
            z = subprocess.run([os.path.join(build, "planner-zoo")] + zoo_args(r, gb), stdout=m,
                               stderr=subprocess.PIPE, text=True)
        if z.returncode:
            out["skipped"] = "planner-zoo: " + z.stderr.strip()[:200]
            return out
        # the published layout's fastest plan (--fastest: without the search's
        # preference for a plan with memory headroom, which the layout as run
        # did not choose; the sweeps' pick applies it below, as the search does)
        cmd = [os.path.join(build, "planner"), "search", model] + search_args(r) + [
            "--fastest", "--time-limit", str(limit), "-o", plan]
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        out["args"] = " ".join(search_args(r))
        if p.returncode == 3:
            out["predicted_fits"] = False
            out["error"] = p.stderr.strip().splitlines()[-1][:300] if p.stderr.strip() else ""
            return out
        if p.returncode:
            out["error"] = (p.stderr.strip() or f"exit {p.returncode}")[:300]
            return out
        with open(plan) as pf:
            ck = json.load(pf)
        c = ck["cost"]
        out["predicted_step_s"] = c["step_seconds"]
        if "model_tflops_per_device" in c:
            out["planner_tflops"] = c["model_tflops_per_device"]
        out["predicted_peak_gib"] = c["peak_memory_bytes"] / 2**30
        limit = ck.get("search", {}).get("memory_limit_bytes", math.inf)
        out["predicted_fits"] = c["peak_memory_bytes"] <= limit
        # where the predicted peak is: the last pipeline stage holds the head
        # and the loss (their logits), an earlier one only kept activations
        pp = integer(r, "pp", 1)
        if "peak_memory_stage" in c:
            out["predicted_peak_stage"] = ("single" if pp <= 1 else
                                           "last" if c["peak_memory_stage"] == pp - 1 else "earlier")
        if limit < math.inf:
            out["memory_limit_gib"] = limit / 2**30
        if num(r, "measured_peak_mem_gib"):
            out["measured_peak_gib"] = num(r, "measured_peak_mem_gib")
        peak = GPUS[r["gpu"]][1]
        toks = gb * integer(r, "seq")
        if f:
            out["predicted_mfu"] = toks * f / (integer(r, "gpus") * c["step_seconds"] * peak)
            if meas:
                out["measured_mfu"] = toks * f / (integer(r, "gpus") * meas * peak)
        if meas:
            out["ratio"] = c["step_seconds"] / meas
        if pp <= 1:
            # the fused attention's share of the step (one stage: every op's
            # compute is on every device's path), for report_attention()
            e = subprocess.run([os.path.join(build, "planner"), "explain", plan, "--json"],
                               capture_output=True, text=True)
            if e.returncode == 0:
                out["predicted_attention_s"] = sum(
                    o["compute_seconds"] for o in json.loads(e.stdout)["ops"]
                    if o["type"] == "Attention")
        if job:
            jp = os.path.join(t, "j.json")
            q = subprocess.run([os.path.join(build, "planner"), "search", model, "--job",
                                "--time-limit", str(limit), "-o", jp] + program_args(r),
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if q.returncode == 0:
                with open(jp) as jf:
                    js = json.load(jf)["cost"]["step_seconds"]
                out["job_step_s"] = js
                if f:
                    out["job_mfu"] = toks * f / (integer(r, "gpus") * js * peak)
    return out


def group_of(r):
    for part in r["notes"].split(";"):
        part = part.strip()
        if part.startswith("group="):
            return part[6:]
    return None


def spearman(a, b):
    def ranks(x):
        order = sorted(range(len(x)), key=lambda i: x[i])
        rk = [0.0] * len(x)
        i = 0
        while i < len(x):
            j = i
            while j + 1 < len(x) and x[order[j + 1]] == x[order[i]]:
                j += 1
            for k in range(i, j + 1):
                rk[order[k]] = (i + j) / 2
            i = j + 1
        return rk
    ra, rb = ranks(a), ranks(b)
    n = len(a)
    ma, mb = sum(ra) / n, sum(rb) / n
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    va = math.sqrt(sum((x - ma) ** 2 for x in ra))
    vb = math.sqrt(sum((y - mb) ** 2 for y in rb))
    return cov / (va * vb) if va and vb else float("nan")


def geomean(x):
    return math.exp(sum(math.log(v) for v in x) / len(x)) if x else float("nan")


def step_band(rows):
    """The uncalibrated error band (costmodel/cluster.h PL_BAND_LO, PL_BAND_HI, PL_BAND_RUNS):
    the 10th and 90th percentiles of measured / predicted step over the priced runs with a
    published step or tokens/s, widened outward to two decimals, and how many runs."""
    x = sorted(1 / r["ratio"] for r in rows
               if r.get("file", "runs") == "runs" and r.get("ratio")
               and r.get("measured_from") in ("step", "tokens/s"))
    if len(x) < 2:
        return float("nan"), float("nan"), len(x)
    q = statistics.quantiles(x, n=10, method="inclusive")
    return math.floor(q[0] * 100) / 100, math.ceil(q[-1] * 100) / 100, len(x)


def header_constants(*names):
    """#define values of costmodel/cluster.h and search/job.h, by name"""
    src = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    text = "".join(open(os.path.join(src, f)).read()
                   for f in ("costmodel/cluster.h", "search/job.h"))
    return [float(re.search(rf"#define {n}\s+([0-9.e+-]+)", text).group(1)) for n in names]


def memory_band(rows):
    """The memory band (costmodel/cluster.h PL_MEM_BAND_HI, PL_MEM_BAND_MID,
    PL_MEM_BAND_RUNS): the 90th percentile and the median of measured / predicted peak over
    the priced runs with a published measured peak, each widened upward to two decimals, and
    how many runs."""
    x = sorted(r["measured_peak_gib"] / r["predicted_peak_gib"] for r in rows
               if r.get("file", "runs") == "runs" and r.get("measured_peak_gib")
               and r.get("predicted_peak_gib"))
    if len(x) < 2:
        return float("nan"), float("nan"), len(x)
    q = statistics.quantiles(x, n=10, method="inclusive")
    return (math.ceil(q[-1] * 100) / 100, math.ceil(statistics.median(x) * 100) / 100,
            len(x))


SEEN = (("A100", "16"), ("H100", "16"), ("H100", "FP8"), ("H200", "16"), ("H200", "FP8"))


def seen_tflops(rows):
    """The most model TFLOP/s per device any run measured (its step published, or converted
    from its published TFLOP/s or MFU), by the planner's FLOP count (its predicted TFLOP/s times predicted / measured step), per GPU
    family and GEMM precision (costmodel/cluster.h PL_SEEN_TFLOPS_*: a plan priced above it
    claims what no run of the set has shown), floored to 0.1; {key: (value, run id)}, 0 and
    None where no run measured it."""
    best = {k: (0.0, None) for k in SEEN}
    for r in rows:
        if (r.get("file", "runs") != "runs" or not r.get("measured_step_s")
                or not r.get("planner_tflops") or not r.get("predicted_step_s")):
            continue
        fam = next((f for f in ("A100", "H100", "H200") if r["gpu"].startswith(f)), None)
        key = (fam, "FP8" if "--gemm-dtype fp8" in r.get("args", "") else "16")
        v = math.floor(r["planner_tflops"] * r["predicted_step_s"] / r["measured_step_s"] * 10) / 10
        if key in best and v > best[key][0]:
            best[key] = (v, r["id"])
    return best


def seen_name(key):
    return f"PL_SEEN_TFLOPS_{key[0]}_{key[1]}"


def at_risk(x, hi):
    """whether a priced layout may run out of memory: its peak times the memory band hi
    over its limit (pl_memory_at_risk)"""
    return x["predicted_peak_gib"] * hi > x.get("memory_limit_gib", math.inf)


def search_pick(layouts):
    """The layout the search takes of a group's (each priced as its fastest plan): the
    fastest predicted to fit, unless its peak times PL_MEM_BAND_HI is over its limit and
    one whose is not is within PL_JOB_HEADROOM of it, or failing that, one whose peak times
    PL_MEM_BAND_MID is not (search/job.h: the search's preference for a plan with room for
    the memory prediction's error, then for its median error)"""
    hi, mid, room = header_constants("PL_MEM_BAND_HI", "PL_MEM_BAND_MID", "PL_JOB_HEADROOM")
    fit = [x for x in layouts if x.get("predicted_fits") and "predicted_step_s" in x]
    if not fit:
        return None
    p = min(fit, key=lambda x: x["predicted_step_s"])
    for band in (hi, mid):
        if not at_risk(p, band):
            break
        safe = [x for x in fit if not at_risk(x, band)]
        if safe:
            q = min(safe, key=lambda x: x["predicted_step_s"])
            if q["predicted_step_s"] <= p["predicted_step_s"] * (1 + room):
                return q
    return p


def report_runs(res):
    priced = [x for x in res if "ratio" in x]
    clean = [x for x in priced if x["measured_from"] in ("step", "tokens/s")]
    print("## runs.csv: predicted / measured step\n")
    print("| set | runs | within 10 % | within 25 % | geomean | min | max |")
    print("|---|---|---|---|---|---|---|")
    for name, s in (("step or tokens/s published", clean),
                    ("converted from TFLOP/s or MFU", [x for x in priced if x not in clean])):
        if not s:
            continue
        r = [x["ratio"] for x in s]
        w10 = sum(abs(v - 1) <= 0.10 for v in r)
        w25 = sum(abs(v - 1) <= 0.25 for v in r)
        print(f"| {name} | {len(s)} | {w10} ({100 * w10 / len(s):.0f} %) | {w25} "
              f"({100 * w25 / len(s):.0f} %) | {geomean(r):.3f} | {min(r):.3f} | {max(r):.3f} |")
    fp8 = [x["ratio"] for x in priced if x.get("precision") == "fp8"]
    if fp8:
        w10 = sum(abs(v - 1) <= 0.10 for v in fp8)
        w25 = sum(abs(v - 1) <= 0.25 for v in fp8)
        print(f"| FP8 GEMMs (--gemm-dtype fp8), of both sets | {len(fp8)} | {w10} "
              f"({100 * w10 / len(fp8):.0f} %) | {w25} ({100 * w25 / len(fp8):.0f} %) | "
              f"{geomean(fp8):.3f} | {min(fp8):.3f} | {max(fp8):.3f} |")
    print("\n| framework, GPU, precision | runs | within 10 % | within 25 % | geomean | min | max |")
    print("|---|---|---|---|---|---|---|")
    keys = sorted({(x["framework"], x["gpu"], x.get("precision") or "") for x in priced})
    for k in keys:
        r = [x["ratio"] for x in priced
             if (x["framework"], x["gpu"], x.get("precision") or "") == k]
        print(f"| {k[0]}, {k[1]}, {k[2] or '-'} | {len(r)} | {sum(abs(v - 1) <= .1 for v in r)} | "
              f"{sum(abs(v - 1) <= .25 for v in r)} | "
              f"{geomean(r):.3f} | {min(r):.3f} | {max(r):.3f} |")
    skipped = {}
    for x in res:
        if "skipped" in x or "error" in x:
            k = x.get("skipped") or ("error: " + x["error"][:80])
            skipped[k] = skipped.get(k, 0) + 1
    nofit = [x for x in res if x.get("predicted_fits") is False and "ratio" not in x]
    print(f"\nNot priced: {sum(skipped.values())} rows; predicted not to fit although they ran: "
          f"{sum(1 for x in nofit if x['oom'] != 'yes')}")
    for k, v in sorted(skipped.items(), key=lambda kv: -kv[1])[:12]:
        print(f"- {v} x {k}")
    transcription_check()
    lo, hi, n = step_band(clean)
    print(f"\nUncalibrated band (10th-90th percentile of measured/predicted over the {n} runs "
          f"with a published step, widened to two decimals): {lo:.2f}-{hi:.2f}; "
          f"PL_BAND_LO/HI/RUNS in costmodel/cluster.h must say the same (ctest test_band)")
    mhi, mmid, mn = memory_band(res)
    print(f"\nMemory band (90th percentile of measured/predicted peak over the {mn} runs with a "
          f"published peak, widened up to two decimals): {mhi:.2f}, median {mmid:.2f}; "
          f"PL_MEM_BAND_HI/MID/RUNS in costmodel/cluster.h must say the same (ctest test_band)")
    seen = seen_tflops(res)
    print("\nThe most model TFLOP/s per device measured (the planner's FLOP count: its predicted "
          "TFLOP/s x predicted / measured step, over every run with a measured step, floored to 0.1), by "
          "GPU family and GEMM precision: " +
          "; ".join(f"{k[0]} {k[1]}-bit {v:.1f} ({i})" if k[1] == "16" else
                    f"{k[0]} {k[1]} {v:.1f} ({i})" for k, (v, i) in seen.items() if i) +
          "; PL_SEEN_TFLOPS_* in costmodel/cluster.h must say the same (ctest test_band)")


def transcription_check(tolerance=0.05):
    """a row that publishes both tokens/s and TFLOP/s a GPU states the FLOPs
    a token its source counted: an architecture transcribed as the source ran
    it gives the same within the difference of the two FLOP formulas. Rows
    further than the tolerance are printed: a wrong vocabulary or a gated MLP
    where the model has none shows here before it shows as a step-time error
    (the Nemotron rows' 256k vocabulary and ungated MLP were found so; left:
    three Megatron-Bridge Llama 3 rows at 8,192 tokens, 0.89-0.93, whose
    framework's own FLOP count was not read, e.g. causal attention counted
    half)."""
    n, off = 0, []
    for r in rows("runs.csv"):
        tps, tf = num(r, "measured_tokens_per_s_per_gpu"), num(r, "measured_tflops_per_gpu")
        f = flops_per_token(r)
        if not (tps and tf and f):
            continue
        n += 1
        q = tf * 1e12 / tps / f
        if abs(q - 1) > tolerance:
            off.append((r["id"], q))
    print(f"\nTranscription check: {n} rows publish tokens/s and TFLOP/s; {len(off)} imply a "
          f"FLOPs a token more than {100 * tolerance:.0f} % from their architecture's "
          f"(6 x multiplying parameters + 12 x layers x hidden x seq)")
    for i, q in off:
        print(f"- {i}: published / architecture {q:.3f}")


def report_job(res):
    """The planner's own whole-job plan (--job: the run's program options, its layout
    left to the search) beside each published run: its step against the price of the
    published layout, and its MFU against the highest MFU measured in the set on that
    GPU (any memory size or form factor) and precision"""
    js = [x for x in res if x.get("job_step_s") and x.get("predicted_step_s")]
    if not js:
        return
    fam = lambda x: (x["gpu"].split("-")[0], x.get("precision") or "bf16")
    top = {}
    for x in res:
        if x.get("measured_mfu"):
            top[fam(x)] = max(top.get(fam(x), 0), x["measured_mfu"])
    gain = lambda x: x["predicted_step_s"] / x["job_step_s"]
    above = lambda x: x.get("job_mfu") and x["job_mfu"] > top.get(fam(x), math.inf)
    n5 = sum(1 for x in js if gain(x) > 1.05)
    n20 = sum(1 for x in js if gain(x) > 1.20)
    print("\n## The search's own plan beside each run (--job)\n")
    print(f"Of {len(js)} runs, the search's plan is priced more than 5 % faster than the "
          f"published layout on {n5} ({100 * n5 / len(js):.0f} %), more than 20 % on {n20}; "
          f"its MFU is above the highest measured in this set on that GPU and precision on "
          f"{sum(1 for x in js if above(x))}.\n")
    print("| run | GPUs | measured step s | published layout, predicted s | search's plan s | "
          "search / published | search's MFU | highest measured MFU (GPU, precision) |")
    print("|---|---|---|---|---|---|---|---|")
    for x in js:
        mfu = f"{x['job_mfu']:.2f}" if x.get("job_mfu") else ""
        t = top.get(fam(x))
        print(f"| {x['id']} | {x['gpus']} | {x['measured_step_s']:.4g} | "
              f"{x['predicted_step_s']:.4g} | {x['job_step_s']:.4g} | {1 / gain(x):.3f} | "
              f"{mfu}{' (above)' if above(x) else ''} | {f'{t:.2f}' if t else ''} |")


def report_sweep(res):
    print("\n## sweep.csv: ranking and fit per group\n")
    print("| group | layouts ran | measured OOM | Spearman | pick / best (measured) | "
          "OOM predicted to fit | ran predicted not to fit |")
    print("|---|---|---|---|---|---|---|")
    groups = sorted({x["group"] for x in res if x["group"]})
    tot = {"oom": 0, "oom_fit": 0, "ran": 0, "ran_nofit": 0}
    rhos = []
    for g in groups:
        s = [x for x in res if x["group"] == g and "skipped" not in x]
        ran = [x for x in s if x["oom"] == "no" and x.get("measured_step_s") and "predicted_step_s" in x]
        ooms = [x for x in s if x["oom"] == "yes"]
        oom_fit = sum(1 for x in ooms if x.get("predicted_fits"))
        ran_all = [x for x in s if x["oom"] == "no"]
        ran_nofit = sum(1 for x in ran_all if x.get("predicted_fits") is False)
        tot["oom"] += len(ooms)
        tot["oom_fit"] += oom_fit
        tot["ran"] += len(ran_all)
        tot["ran_nofit"] += ran_nofit
        rho, pick = "", ""
        if len(ran) >= 3:
            r = spearman([1 / x["predicted_step_s"] for x in ran], [1 / x["measured_step_s"] for x in ran])
            rhos.append(r)
            rho = f"{r:.2f}"
        p = search_pick(s)
        if p and ran:
            best = min(x["measured_step_s"] for x in ran)
            pick = ("measured OOM" if p["oom"] == "yes" else
                    f"{best / p['measured_step_s']:.3f}" if p.get("measured_step_s") else "not measured")
        print(f"| {g} | {len(ran_all)} | {len(ooms)} | {rho} | {pick} | {oom_fit} | {ran_nofit} |")
    # a sweep's repeats that disagree: a measured OOM whose layout (every
    # option the planner is given) also ran in the same group
    ran_keys = {(x["group"], x.get("args")) for x in res
                if x["group"] and x["oom"] == "no" and x.get("args")}
    twins = [x for x in res if x["group"] and x["oom"] == "yes" and x.get("args")
             and (x["group"], x["args"]) in ran_keys]
    if tot["oom"] or tot["ran"]:
        print(f"\nRepeats that disagree (a measured OOM whose layout, every option the same, "
              f"also ran in its group; any prediction counts one of each pair against the "
              f"model): {len(twins)}, {sum(1 for x in twins if x.get('predicted_fits'))} of them "
              f"predicted to fit")
        print(f"\nAll groups: {tot['oom_fit']} of {tot['oom']} measured OOMs predicted to fit "
              f"({100 * tot['oom_fit'] / max(1, tot['oom']):.0f} %); {tot['ran_nofit']} of "
              f"{tot['ran']} layouts that ran predicted not to fit "
              f"({100 * tot['ran_nofit'] / max(1, tot['ran']):.0f} %); Spearman median "
              f"{sorted(rhos)[len(rhos) // 2]:.2f} over {len(rhos)} groups" if rhos else "")
        # where the misses' predicted peaks are (predicted_peak_stage)
        miss = [x for x in res if x["group"] and x["oom"] == "yes" and x.get("predicted_fits")]
        if miss:
            part = []
            for k, what in (("last", "on the last pipeline stage (the head, the loss and its "
                                     "logits)"),
                            ("earlier", "on an earlier stage (kept activations)"),
                            ("single", "without pipeline stages")):
                m = [x for x in miss if x.get("predicted_peak_stage") == k]
                if m:
                    lo = min(x["predicted_peak_gib"] / x["memory_limit_gib"] for x in m
                             if x.get("memory_limit_gib"))
                    part.append(f"{len(m)} {what}, the lowest at {lo:.2f} of the limit")
            print(f"\nWhere the {len(miss)} measured OOMs predicted to fit peak: " + "; ".join(part))
        # what the planner says of each layout with its memory band
        # (pl_memory_at_risk): fits with room, may run out of memory, or
        # does not fit; the count above takes "may" as "fits"
        hi, = header_constants("PL_MEM_BAND_HI")
        room = lambda x: x.get("predicted_fits") and not at_risk(x, hi)
        sw = [x for x in res if x["group"] and "skipped" not in x]
        oom_room = sum(1 for x in sw if x["oom"] == "yes" and room(x))
        ran_risk = sum(1 for x in sw if x["oom"] == "no" and not room(x))
        print(f"\nWith the memory band ({hi:g}x the predicted peak, the summary's \"may run out "
              f"of memory\"): {oom_room} of {tot['oom']} measured OOMs predicted to fit with "
              f"room ({100 * oom_room / max(1, tot['oom']):.0f} %); {ran_risk} of {tot['ran']} "
              f"layouts that ran said to be at risk or not to fit "
              f"({100 * ran_risk / max(1, tot['ran']):.0f} %)")


SEQ_BUCKETS = ((1024, "<= 1k"), (2048, "2k"), (8192, "4k-8k"), (32768, "16k-32k"),
               (math.inf, ">= 64k"))


def seq_bucket(seq):
    return next(name for top, name in SEQ_BUCKETS if seq <= top)


def report_residuals(runs, sweep):
    """Where the predictions lean, by class: predicted / measured step by
    sequence length per framework and GPU (runs with a published step), and
    inside the sweeps by micro-batch size and by pipeline degree, each layout's
    ratio over its group's geometric mean (Hagemann et al.'s batch is assumed,
    so only the ratios within a group are measured). A class whose geometric
    mean leaves 0.9-1.1 is an error of the cost model shared by its runs, not
    noise; nothing here feeds a number back into the model."""
    src = {r["id"]: r for name in ("runs.csv", "sweep.csv") for r in rows(name)}
    ok = lambda x: x["id"] in src and integer(src[x["id"]], "seq")
    clean = [x for x in runs if "ratio" in x and x["measured_from"] in ("step", "tokens/s")
             and ok(x)]
    if clean:
        print("\n## Residuals by class\n")
        print("Predicted / measured step, geometric mean (runs), by sequence length; a class "
              "outside 0.90-1.10 leans one way for all its runs.\n")
        names = [n for _, n in SEQ_BUCKETS]
        print("| framework, GPU | " + " | ".join(names) + " |")
        print("|---|" + "---|" * len(names))
        for k in sorted({(x["framework"], x["gpu"]) for x in clean}):
            cells = []
            for n in names:
                v = [x["ratio"] for x in clean if (x["framework"], x["gpu"]) == k
                     and seq_bucket(integer(src[x["id"]], "seq")) == n]
                cells.append(f"{geomean(v):.2f} ({len(v)})" if v else "")
            print(f"| {k[0]}, {k[1]} | " + " | ".join(cells) + " |")
    ran = [x for x in sweep if x["group"] and x["oom"] == "no" and x.get("measured_step_s")
           and x.get("predicted_step_s") and x["id"] in src]
    if not ran:
        return
    rel = {}
    for g in {x["group"] for x in ran}:
        s = [x for x in ran if x["group"] == g]
        if len(s) < 3:
            continue
        m = geomean([x["predicted_step_s"] / x["measured_step_s"] for x in s])
        for x in s:
            rel[x["id"]] = x["predicted_step_s"] / x["measured_step_s"] / m
    print("\nInside the sweeps (groups of 3 or more layouts that ran): each layout's "
          "predicted / measured step over its group's geometric mean, by the layout's "
          "micro-batch size and pipeline degree; below 1, the layouts of that class ran "
          "slower than their group's prediction says.\n")
    print("| sweep | by micro-batch size | by pipeline degree |")
    print("|---|---|---|")
    for fam, pre in (("Hagemann et al. (AA-Scaling)", "hag23-"),
                     ("BLOOM prequel (Megatron-DeepSpeed)", "bloom22-")):
        cols = []
        for field in ("micro_batch", "pp"):
            by = {}
            for x in ran:
                if x["id"] in rel and x["id"].startswith(pre):
                    by.setdefault(integer(src[x["id"]], field), []).append(rel[x["id"]])
            cols.append(", ".join(f"{k}: {geomean(v):.2f} ({len(v)})"
                                  for k, v in sorted(by.items()) if k is not None))
        print(f"| {fam} | {cols[0]} | {cols[1]} |")


ATTN_BUCKETS = ((2048, "<= 2k"), (4096, "4k"), (8192, "8k"), (16384, "16k"), (32768, "32k"),
                (math.inf, ">= 64k"))


def report_attention(runs):
    """How fast the fused attention ran where it is most of the step: runs of
    one pipeline stage with a published step whose predicted attention is at
    least half the predicted step. The kernel's implied speed over its price,
    attention / (measured - (predicted - attention)), says how much faster (> 1)
    or slower (< 1) the kernel ran than the published kernel measurements it is
    priced from (costmodel/attention_measured.csv, sequences of 512-16k), if the
    rest of the step is priced right. A diagnostic: nothing here feeds the model."""
    src = {r["id"]: r for r in rows("runs.csv")}
    use = []
    for x in runs:
        a, p, m = x.get("predicted_attention_s"), x.get("predicted_step_s"), x.get("measured_step_s")
        r = src.get(x["id"])
        if (not a or not p or not m or r is None or x["measured_from"] not in ("step", "tokens/s")
                or a < 0.5 * p or m - (p - a) <= 0 or not integer(r, "seq")):
            continue
        k = x["args"].split("--attention-kernel ")[1].split()[0] \
            if "--attention-kernel " in x["args"] else "unfused"
        hd = integer(r, "hidden") // integer(r, "heads")
        use.append(((x["framework"], x["gpu"], k, hd),
                    next(n for top, n in ATTN_BUCKETS if integer(r, "seq") <= top), a / (m - (p - a))))
    if not use:
        return
    print("\nAttention where it is at least half the predicted step (runs of one stage): the "
          "kernel's implied speed over its price, attention / (measured - (predicted - "
          "attention)), geometric mean (runs), by sequence length; the kernels are priced from "
          "published measurements of 512-16k tokens a sequence (costmodel/attention_measured.csv)"
          ", flat beyond.\n")
    names = [n for _, n in ATTN_BUCKETS]
    print("| framework, GPU, kernel, head dim | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for key in sorted({u[0] for u in use}):
        cells = []
        for n in names:
            v = [u[2] for u in use if u[0] == key and u[1] == n]
            cells.append(f"{geomean(v):.2f} ({len(v)})" if v else "")
        print(f"| {key[0]}, {key[1]}, {key[2]}, {key[3]} | " + " | ".join(cells) + " |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--out", default="build/bench/validation")
    ap.add_argument("--limit", type=int, default=0, help="price the first N rows of each file")
    ap.add_argument("--only", choices=("runs", "sweep"))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--time-limit", type=float, default=60)
    ap.add_argument("--job", action="store_true", help="also the planner's own whole-job plan")
    ap.add_argument("--tp-comm-overlap", action="store_true",
                    help="rows whose recipe overlaps tensor-parallel communication priced "
                         "with --tp-comm-overlap on")
    ap.add_argument("--overlap-param-gather", action="store_true",
                    help="rows whose framework gathers parameters ahead of use priced "
                         "with --overlap-param-gather on")
    ap.add_argument("--report", metavar="JSONL",
                    help="print the tables of a recorded PREFIX.jsonl (e.g. "
                         "benchmarks/results/validation.jsonl) without pricing anything")
    a = ap.parse_args()
    global TP_COMM_OVERLAP, PARAM_OVERLAP, BUILD
    BUILD = a.build
    TP_COMM_OVERLAP = a.tp_comm_overlap
    PARAM_OVERLAP = a.overlap_param_gather
    if a.report:
        return report(read_results(a.report))
    os.makedirs(os.path.dirname(a.out) or ".", exist_ok=True)
    results = {}
    for name in ("runs", "sweep"):
        if a.only and a.only != name:
            continue
        rs = rows(name + ".csv")
        if a.limit:
            rs = rs[:a.limit]
        tasks = [(r, a.build, a.time_limit, a.job) for r in rs]
        done = []
        with cf.ThreadPoolExecutor(max_workers=a.jobs) as ex:
            for k, x in enumerate(ex.map(price, tasks)):
                done.append(x)
                if (k + 1) % 50 == 0:
                    print(f"{name}: {k + 1} of {len(tasks)} priced", file=sys.stderr)
        results[name] = done
    with open(a.out + ".jsonl", "w") as f:
        for name, res in results.items():
            for x in res:
                f.write(json.dumps(dict(x, file=name)) + "\n")
    report(results)


def read_results(path):
    """a recorded PREFIX.jsonl back as {file: [row, ...]}"""
    results, where = {}, ""
    try:
        with open(path) as f:
            for k, line in enumerate(f, 1):
                where = f" line {k}"
                x = json.loads(line)
                results.setdefault(x.pop("file"), []).append(x)
    except (OSError, ValueError, KeyError, AttributeError, TypeError) as e:
        print(f"bench_validation.py: {path}{where}: not a recorded validation result "
              f"(one JSON object with a \"file\" field a line): {e}", file=sys.stderr)
        sys.exit(2)
    return results


def report(results):
    if "runs" in results:
        report_runs(results["runs"])
        report_job(results["runs"])
    if "sweep" in results:
        report_sweep(results["sweep"])
    report_residuals(results.get("runs", []), results.get("sweep", []))
    report_attention(results.get("runs", []))


if __name__ == "__main__":
    main()
