#!/usr/bin/env bash
# cli::export -- `planner export CKPT --to FRAMEWORK` and `planner cost MODEL
# --from FRAMEWORK FILE|ARGS`. For each framework a fixed configuration is
# searched, exported and read back: the same plan (every op's strategy and
# stage, the groups, the pipeline, ZeRO, recompute) and the same cost (step,
# peak memory). Every exported key is in the framework's published list
# (tests/fixtures/frameworks/, with its source); the values written are the
# search options given (hand-derived, not read back from the code). A plan a
# framework cannot state exits 2 with the reason and writes nothing; bad
# configurations exit 2 naming the file, line and key.
# Usage: test_export.sh PLANNER ZOO SOURCE_DIR
set -u
PLANNER=$1 ZOO=$2 SRC=$3
FIX=$SRC/tests/fixtures/frameworks
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
export PL_DEFAULT_DP_SECONDS=20

"$ZOO" llama2-7b --layers 4 > "$T/llama.json"  # batch 1024, seq 4096, bfloat16
"$ZOO" gpt3-125m --layers 4 > "$T/gpt.json"    # batch 256, seq 2048, bfloat16
"$ZOO" gpt-small > "$T/small.json"             # 4 layers, batch 16, seq 128, float32
"$ZOO" gpt3-1.3b --layers 8 > "$T/g13.json"
"$ZOO" gpt3-1.3b --layers 10 --batch 32 > "$T/g10.json"

search() { # OUT MODEL CLUSTER OPTIONS...
  local out=$1 model=$2 cl=$3
  shift 3
  "$PLANNER" search "$T/$model.json" --cluster "$cl" "$@" -o "$T/$out.ckpt" > /dev/null 2>&1
}
# A: tp 2, pp 2 (2 + 2 layers), dp 2, ZeRO 1, sequence parallel
search A llama h100x8 --tp 2 --pp 2 --dp 2 --micro-batch-size 1 --zero 1 \
  --sequence-parallel on --recompute none --virtual-stages 1
# B: tp 4, dp 2, selective recompute, no sequence parallel
search B llama h100x8 --tp 4 --pp 1 --dp 2 --micro-batch-size 2 --zero 1 \
  --sequence-parallel off --recompute selective
# C: data parallel 8 and ZeRO 2 (DeepSpeed)
search C gpt h100x8 --tp 1 --pp 1 --dp 8 --micro-batch-size 4 --zero 2 --recompute none
# D: FSDP (ZeRO 3) x tp 2, full recompute (torchtitan), its gathers prefetched as FSDP2 always
# runs them (torchtitan has no key to turn that off; Megatron and NeMo state it)
search D gpt h100x8 --tp 2 --pp 1 --dp 4 --micro-batch-size 4 --zero 3 --recompute full \
  --sequence-parallel on --overlap-param-gather on
# P: A as torchtitan runs FSDP under pipeline stages (ZeRO 1: a stage's weights gathered once a
# step, its gradients kept whole in fp32 and reduce-scattered after the last backward, FSDP2 adding
# each micro-batch's gradient with a kernel of its own and prefetching the gathers)
search P llama h100x8 --tp 2 --pp 2 --dp 2 --micro-batch-size 1 --zero 1 \
  --sequence-parallel on --recompute none --virtual-stages 1 --grad-accumulation autograd \
  --overlap-grad-reduce off --overlap-param-gather on
# T: D with torchtitan's per-op selective checkpointing (selective-op)
search T gpt h100x8 --tp 2 --pp 1 --dp 4 --micro-batch-size 4 --zero 3 --recompute selective-op \
  --sequence-parallel on --overlap-param-gather on
# E: float32, pp 2 x dp 4, ZeRO 0 (torchtitan's pipeline)
search E small h100x8 --tp 1 --pp 2 --dp 4 --micro-batch-size 1 --zero 0 --recompute none \
  --virtual-stages 1
# F: tp 2, pp 2, 2 chunks a device (interleaved)
search F llama h100x8 --tp 2 --pp 2 --dp 2 --micro-batch-size 1 --zero 1 \
  --sequence-parallel on --recompute full --virtual-stages 2
# U: 2 chunks a device over an uneven split of whole layers (10 layers on 2 stages: the search's
# split, 6 and 4 here), which Megatron states as the first and last stages' layers, each chunk of a
# stage holding half of them (get_transformer_layer_offset), as the planner prices a chunk
search U g10 h100x8 --tp 1 --pp 2 --dp 4 --micro-batches 8 --zero 1 --recompute none \
  --virtual-stages 2 --stage-cuts layers
# Q: 4 stages of 3, 3, 3 and 1 layers and 2 chunks a device: 3 layers do not halve
search Q g10 h100x8 --tp 1 --pp 4 --dp 2 --micro-batches 8 --zero 1 --recompute none \
  --virtual-stages 2 --stage-cuts layers
for p in A B C D E F U Q T P; do
  check "search $p wrote a plan" '[ -s "$T/$p.ckpt" ]'
done
# the layers of each stage of a plan, counted from its ops (l<N>.* on stage s)
stage_layers() {
  jq -c '[.parallel_strategy_item | to_entries[] | select(.key | test("^l[0-9]+[.]"))
          | {l: (.key | capture("^l(?<n>[0-9]+)").n), s: .value.stage}] | unique
          | group_by(.s) | map(length)' "$1"
}

# the framework's published names (comment lines are the source)
names() { grep -v '^#' "$FIX/$1"; }
list_of() {
  case $1 in
  megatron) echo megatron_args.txt ;; nemo) echo nemo_keys.txt ;;
  torchtitan) echo torchtitan_keys.txt ;; deepspeed) echo deepspeed_keys.txt ;;
  megatron-deepspeed) echo megatron_deepspeed_args.txt ;; mindformers) echo mindformers_keys.txt ;;
  esac
}
model_of() { case $1 in A | B | F | P) echo llama ;; C | D | T) echo gpt ;; E) echo small ;; U | Q) echo g10 ;; esac; }
# the plan as a comparable text: every op's stage and strategy, groups, pipeline, ZeRO, recompute
plan_of() {
  jq -S '{ops: [.parallel_strategy_item | to_entries[] | [.key, .value.stage, .value.parallel_strategy]],
          groups, p: (.pipeline // {} | {stages, micro_batches, virtual_stages}),
          optimizer_shard, recompute}' "$1"
}

roundtrip() { # PLAN FRAMEWORK
  local p=$1 fw=$2 f=$T/$1.$2 m
  m=$(model_of "$p")
  "$PLANNER" export "$T/$p.ckpt" --to "$fw" -o "$f" > "$T/out" 2> "$T/err"
  check "export $p --to $fw: exit 0" '[ $? = 0 ] && [ -s "$f" ]'
  check "export $p --to $fw: the header names the checked source" \
    '[ "$fw" = deepspeed ] || grep -q "^# keys checked against .*@[0-9a-f]\{40\}" "$f"'
  # every key written is in the published list
  "$PLANNER" export "$T/$p.ckpt" --to "$fw" --json > "$T/keys.json"
  jq -r '.keys | keys[]' "$T/keys.json" > "$T/keys"
  local missing=0 k
  while read -r k; do
    names "$(list_of "$fw")" | grep -qxF -- "$k" || { missing=1; echo "# $fw: '$k' not published"; }
  done < "$T/keys"
  check "export $p --to $fw: $(wc -l < "$T/keys") keys, all in $(list_of "$fw")" \
    '[ $missing = 0 ] && [ -s "$T/keys" ]'
  # back: the same plan and cost (the plan's gradient accumulation and ZeRO 3 shard given: no
  # configuration has a key for them, and DeepSpeed's and Megatron-DeepSpeed's default
  # accumulation, autograd, and torchtitan's shard, fp32, are not the cluster's the plan was priced
  # with)
  "$PLANNER" cost "$T/$m.json" --from "$fw" "$f" --cluster h100x8 -o "$T/back.ckpt" \
    --grad-accumulation "$(jq -r .cluster.description.device.grad_accumulation "$T/$p.ckpt")" \
    --param-shard "$(jq -r .cluster.description.device.param_shard "$T/$p.ckpt")" \
    > "$T/cost.json" 2> "$T/err"
  check "cost --from $fw ($p): exit 0" '[ $? = 0 ]'
  local s0 s1 m0 m1
  s0=$(jq .cost.step_seconds "$T/$p.ckpt") s1=$(jq .step_seconds "$T/cost.json")
  m0=$(jq .cost.peak_memory_bytes "$T/$p.ckpt") m1=$(jq .peak_memory_bytes "$T/cost.json")
  check "cost --from $fw ($p): step $s1 s = the plan's $s0 s" 'num_close "$s1" "$s0"'
  check "cost --from $fw ($p): peak memory $m1 = the plan's $m0" 'num_close "$m1" "$m0"'
  check "cost --from $fw ($p): the same plan (ops, groups, pipeline, ZeRO, recompute)" \
    '[ "$(plan_of "$T/back.ckpt")" = "$(plan_of "$T/$p.ckpt")" ]'
}

for fw in megatron nemo megatron-deepspeed mindformers; do roundtrip A $fw; done
for fw in megatron nemo mindformers; do roundtrip B $fw; done
roundtrip C deepspeed
roundtrip C megatron
for fw in torchtitan megatron nemo; do roundtrip D $fw; done
roundtrip E torchtitan
roundtrip T torchtitan
roundtrip P torchtitan
roundtrip F megatron
roundtrip F nemo
roundtrip U megatron
roundtrip U nemo
read -r u1 u2 <<< "$(stage_layers "$T/U.ckpt" | tr -d '[]' | tr , ' ')"
check "megatron U: an uneven split ($u1 and $u2 layers) with 2 chunks a device, as the first and last stages' layers" \
  '[ -n "$u2" ] && [ "$u1" != "$u2" ] && [ $((u1 % 2)) = 0 ] && [ $((u2 % 2)) = 0 ] &&
   sed "s/ \\\\$//" "$T/U.megatron" | grep -qx -- "--decoder-first-pipeline-num-layers $u1" &&
   sed "s/ \\\\$//" "$T/U.megatron" | grep -qx -- "--decoder-last-pipeline-num-layers $u2" &&
   sed "s/ \\\\$//" "$T/U.megatron" | grep -qx -- "--num-virtual-stages-per-pipeline-rank 2" &&
   grep -qx "  num_layers_in_first_pipeline_stage: $u1" "$T/U.nemo" &&
   grep -qx "  virtual_pipeline_model_parallel_size: 2" "$T/U.nemo"'

# the values written, as the search options above give them
A=$T/A.megatron
for f in "--tensor-model-parallel-size 2" "--pipeline-model-parallel-size 2" \
  "--context-parallel-size 1" "--sequence-parallel" "--micro-batch-size 1" \
  "--global-batch-size 1024" "--use-distributed-optimizer" "--bf16"; do
  check "megatron A: '$f'" 'sed "s/ \\\\$//" "$A" | grep -qx -- "$f"'
done
check "megatron A: no uneven split, no recompute, no virtual stages" \
  '! grep -v "^#" "$A" | grep -q "decoder-first\|recompute\|virtual"'
check "megatron A: the last argument ends the command (no backslash): the attention the plan was priced with (h100x8's FlashAttention-2, Megatron's --attention-backend flash)" \
  '[ "$(tail -n 1 "$A")" = "--attention-backend flash" ]'
check "megatron B: selective recompute" 'grep -qx -- "--recompute-granularity selective \\\\" "$T/B.megatron"'
check "megatron B: tp 4 without sequence parallel" \
  'grep -q -- "--tensor-model-parallel-size 4" "$T/B.megatron" && ! grep -q -- "--sequence-parallel" "$T/B.megatron"'
check "megatron D: ZeRO 3 as Megatron FSDP's optim_grads_params" \
  'grep -q -- "--use-megatron-fsdp" "$T/D.megatron" && grep -q -- "--data-parallel-sharding-strategy optim_grads_params" "$T/D.megatron"'
check "megatron F: 2 virtual stages, full recompute of every layer" \
  'grep -q -- "--num-virtual-stages-per-pipeline-rank 2" "$T/F.megatron" && grep -q -- "--recompute-granularity full" "$T/F.megatron" && grep -q -- "--recompute-method uniform" "$T/F.megatron" && grep -q -- "--recompute-num-layers 1" "$T/F.megatron"'
check "nemo A: model.tensor_model_parallel_size 2, train.global_batch_size 1024, ddp.use_distributed_optimizer" \
  '[ "$(jq -r ".keys[\"model.tensor_model_parallel_size\"], .keys[\"train.global_batch_size\"], .keys[\"ddp.use_distributed_optimizer\"]" <("$PLANNER" export "$T/A.ckpt" --to nemo --json) | tr "\n" " ")" = "2 1024 true " ]'
check "nemo A: YAML nesting (model: then indented keys)" \
  'grep -qx "model:" "$T/A.nemo" && grep -qx "  tensor_model_parallel_size: 2" "$T/A.nemo"'
check "mindformers A: data_parallel 2, model_parallel 2, pipeline_stage 2, micro_batch_num 512, batch_size 1" \
  'grep -qx "  data_parallel: 2" "$T/A.mindformers" && grep -qx "  model_parallel: 2" "$T/A.mindformers" && grep -qx "  pipeline_stage: 2" "$T/A.mindformers" && grep -qx "  micro_batch_num: 512" "$T/A.mindformers" && grep -qx "  batch_size: 1" "$T/A.mindformers"'
check "deepspeed C: 256 = 4 x 8 accumulation steps x dp 8, ZeRO 2, bf16" \
  '[ "$(jq -c "[.train_batch_size, .train_micro_batch_size_per_gpu, .gradient_accumulation_steps, .zero_optimization.stage, .bf16.enabled]" "$T/C.deepspeed")" = "[256,4,8,2,true]" ]'
check "torchtitan D: FSDP 4 x tp 2, local batch 4 of global 256, full checkpointing" \
  'grep -qx "data_parallel_shard_degree = 4" "$T/D.torchtitan" && grep -qx "data_parallel_replicate_degree = 1" "$T/D.torchtitan" && grep -qx "tensor_parallel_degree = 2" "$T/D.torchtitan" && grep -qx "local_batch_size = 4" "$T/D.torchtitan" && grep -qx "global_batch_size = 256" "$T/D.torchtitan" && grep -qx "mode = \"full\"" "$T/D.torchtitan"'
check "torchtitan T: per-op selective checkpointing (mode selective, selective_ac_option op)" \
  'grep -qx "mode = \"selective\"" "$T/T.torchtitan" && grep -qx "selective_ac_option = \"op\"" "$T/T.torchtitan"'
check "torchtitan P: FSDP under pipeline stages (ZeRO 1 with pp 2) is data_parallel_shard_degree 2, none replicated" \
  'grep -qx "data_parallel_shard_degree = 2" "$T/P.torchtitan" && grep -qx "data_parallel_replicate_degree = 1" "$T/P.torchtitan" && grep -qx "pipeline_parallel_degree = 2" "$T/P.torchtitan" && grep -qx "mixed_precision_param = \"bfloat16\"" "$T/P.torchtitan"'
# read back without the plan's switches given, FSDP with pipeline stages is ZeRO 1 whose reduction
# is not overlapped (PyTorch's pipeline schedule reduces after the last backward)
"$PLANNER" cost "$T/llama.json" --from torchtitan "$T/P.torchtitan" --cluster h100x8 > /dev/null 2> "$T/err"
check "cost --from torchtitan, FSDP with pp 2: read as --zero 1, --overlap-grad-reduce off, --grad-accumulation autograd" \
  'grep -q -- "--zero 1 " "$T/err" && grep -q -- "--overlap-grad-reduce off" "$T/err" && grep -q -- "--grad-accumulation autograd" "$T/err"'
check "torchtitan E: pp 2 of 1F1B, micro-batch 1, stages of 2 + 2 layers (none short), float32" \
  'grep -qx "pipeline_parallel_degree = 2" "$T/E.torchtitan" && grep -qx "pipeline_parallel_schedule = \"1F1B\"" "$T/E.torchtitan" && grep -qx "pipeline_parallel_microbatch_size = 1" "$T/E.torchtitan" && grep -qx "pipeline_parallel_first_stage_less_layers = 0" "$T/E.torchtitan" && grep -qx "mixed_precision_param = \"float32\"" "$T/E.torchtitan"'

# an uneven split (the plan edited: layer 1 moved to stage 1, 1 + 3 layers)
jq '.parallel_strategy_item |= with_entries(if (.key | startswith("l1.")) then .value.stage = 1 else . end)' \
  "$T/A.ckpt" > "$T/U.ckpt"
"$PLANNER" export "$T/U.ckpt" --to megatron > "$T/U.megatron"
check "megatron: an uneven split as --decoder-first/last-pipeline-num-layers 1 and 3" \
  'grep -q -- "--decoder-first-pipeline-num-layers 1" "$T/U.megatron" && grep -q -- "--decoder-last-pipeline-num-layers 3" "$T/U.megatron"'
check "nemo: the uneven split as num_layers_in_first/last_pipeline_stage" \
  '"$PLANNER" export "$T/U.ckpt" --to nemo | grep -qx "  num_layers_in_first_pipeline_stage: 1"'
check "mindformers: the uneven split as offset [-1, 1]" \
  '"$PLANNER" export "$T/U.ckpt" --to mindformers | grep -qx "    offset: \[-1, 1\]"'
"$PLANNER" cost "$T/llama.json" --from megatron "$T/U.megatron" --cluster h100x8 > /dev/null 2> "$T/err"
check "cost --from: a split the search does not make is named (1 3 read, 2 2 priced)" \
  'grep -q "places layers 1 3 on its stages; the search.s plan (priced) places 2 2" "$T/err"'

# torchtitan: layers 1 + 3 are 6 effective layers (4 + 2 short on the first stage) of 3 a stage
jq '.parallel_strategy_item |= with_entries(if (.key | startswith("l1.")) then .value.stage = 1 else . end)' \
  "$T/E.ckpt" > "$T/V.ckpt"
"$PLANNER" export "$T/V.ckpt" --to torchtitan > "$T/V.torchtitan"
check "torchtitan: the 1 + 3 split as first_stage_less_layers 2, last 0" \
  'grep -qx "pipeline_parallel_first_stage_less_layers = 2" "$T/V.torchtitan" && grep -qx "pipeline_parallel_last_stage_less_layers = 0" "$T/V.torchtitan"'
"$PLANNER" cost "$T/small.json" --from torchtitan "$T/V.torchtitan" --cluster h100x8 > /dev/null 2> "$T/err"
check "cost --from torchtitan: its split (1 3) named against the search's (2 2)" \
  'grep -q "places layers 1 3 on its stages; the search.s plan (priced) places 2 2" "$T/err"'

# a plan of search --framework F is priced as F runs (its defaults: docs/cost-model.md, "Pricing
# defaults of --framework"); export writes the switches F's configuration states (NeMo's fused
# loss and overlapped reduction, Megatron-LM's attention backend, ...) and cost --from F prices the
# configuration as F runs it, its defaults where it says nothing: the same step and memory
fwrt_bad=""
for fw in megatron nemo torchtitan deepspeed megatron-deepspeed mindformers; do
  "$PLANNER" search "$T/gpt.json" --cluster h100x8 --framework $fw -o "$T/fw-$fw.ckpt" > /dev/null 2>&1 &&
    "$PLANNER" export "$T/fw-$fw.ckpt" --to $fw -o "$T/fw-$fw.cfg" > /dev/null 2>&1 &&
    "$PLANNER" cost "$T/gpt.json" --from $fw "$T/fw-$fw.cfg" --cluster h100x8 > "$T/fw.cost" 2> /dev/null &&
    num_close "$(jq .step_seconds "$T/fw.cost")" "$(jq .cost.step_seconds "$T/fw-$fw.ckpt")" &&
    num_close "$(jq .peak_memory_bytes "$T/fw.cost")" "$(jq .cost.peak_memory_bytes "$T/fw-$fw.ckpt")" ||
    fwrt_bad="$fwrt_bad [$fw]"
done
check "search --framework F, export, cost --from F: the same step and memory for all six${fwrt_bad}" \
  '[ -z "$fwrt_bad" ] && grep -qx "  cross_entropy_loss_fusion: true" "$T/fw-nemo.cfg" &&
   grep -qx "  overlap_grad_reduce: true" "$T/fw-nemo.cfg"'
# --mask-kernel unfused (eager masked_fill before the softmax) exported and read back: Megatron-LM's
# --no-masked-softmax-fusion, NeMo's model.masked_softmax_fusion: false;
# cost --from prices the plan's own step, and without the key the framework's fused default, faster
"$ZOO" llama2-7b --layers 2 --seq 1024 --batch 16 --softmax-mask masked-fill > "$T/mk.json"
# A cluster switch exported and read back: mk.json searched with SEARCH-OPTS (which set KEY to
# VALUE) under --framework FW, export states it (a line matching STATED), cost --from prices the
# plan's own step (with COST-OPTS), and the configuration without the key (lines matching DROP
# dropped) the framework's default, a shorter step
# shellcheck disable=SC2086
sw_roundtrip() { # FW STATED DROP KEY VALUE "SEARCH-OPTS" "COST-OPTS"
  local c=$T/sw-$1-$4
  "$PLANNER" search "$T/mk.json" --cluster h100x8 --framework "$1" $6 -o "$c.ckpt" > /dev/null 2>&1 &&
    [ "$(jq -r ".cluster.description.device.$4" "$c.ckpt")" = "$5" ] &&
    "$PLANNER" export "$c.ckpt" --to "$1" -o "$c.cfg" > /dev/null 2>&1 &&
    grep -q -- "$2" "$c.cfg" &&
    "$PLANNER" cost "$T/mk.json" --from "$1" "$c.cfg" --cluster h100x8 $7 > "$c.cost" 2> /dev/null &&
    num_close "$(jq .step_seconds "$c.cost")" "$(jq .cost.step_seconds "$c.ckpt")" &&
    grep -v -- "$3" "$c.cfg" > "$c-bare.cfg" &&
    "$PLANNER" cost "$T/mk.json" --from "$1" "$c-bare.cfg" --cluster h100x8 $7 > "$c-bare.cost" 2> /dev/null &&
    num_lt "$(jq .step_seconds "$c-bare.cost")" "$(jq .step_seconds "$c.cost")"
}
mk_bad=""
sw_roundtrip megatron "^--no-masked-softmax-fusion$" "masked-softmax-fusion" mask_kernel unfused \
  "--attention-kernel none --mask-kernel unfused" "--attention-kernel none" || mk_bad="$mk_bad [megatron]"
sw_roundtrip nemo "^  masked_softmax_fusion: false$" "masked_softmax_fusion" mask_kernel unfused \
  "--attention-kernel none --mask-kernel unfused" "--attention-kernel none" || mk_bad="$mk_bad [nemo]"
check "search --mask-kernel unfused, export, cost --from: stated, the same step, faster without it${mk_bad}" \
  '[ -z "$mk_bad" ]'
# --grad-accumulation autograd (each micro-batch's weight gradients added by a kernel of their own):
# Megatron-LM's --no-gradient-accumulation-fusion, NeMo's model.gradient_accumulation_fusion: false;
# 2 micro-batches a step, so one add
ga_bad=""
sw_roundtrip megatron "^--no-gradient-accumulation-fusion$" "gradient-accumulation-fusion" \
  grad_accumulation autograd "--dp 8 --micro-batch-size 1 --grad-accumulation autograd" "" ||
  ga_bad="$ga_bad [megatron]"
sw_roundtrip nemo "^  gradient_accumulation_fusion: false$" "gradient_accumulation_fusion" \
  grad_accumulation autograd "--dp 8 --micro-batch-size 1 --grad-accumulation autograd" "" ||
  ga_bad="$ga_bad [nemo]"
check "search --grad-accumulation autograd, export, cost --from: stated, the same step, faster without it${ga_bad}" \
  '[ -z "$ga_bad" ]'
# --framework torchtitan: FSDP2 keeps a bf16 param's fp32 shard alone (--param-shard fp32): under
# ZeRO 3 the weights' shard is twice the bf16 one and the optimizer state loses the master's
# (4 bytes a parameter over the ranks), so the peak is 2 bytes a parameter over the ranks lower;
# cost --from torchtitan prices it so without the option
tt_search() { # OUT OPTIONS...
  local out=$1
  shift
  "$PLANNER" search "$T/gpt.json" --cluster h100x8 --framework torchtitan --tp 1 --pp 1 --dp 8 \
    --zero 3 --recompute full "$@" -o "$T/$out.ckpt" > /dev/null 2>&1
}
tt_search tt-ps
tt_search tt-pp --param-shard param
"$PLANNER" export "$T/tt-ps.ckpt" --to torchtitan -o "$T/tt-ps.cfg" > /dev/null 2>&1
"$PLANNER" cost "$T/gpt.json" --from torchtitan "$T/tt-ps.cfg" --cluster h100x8 > "$T/tt-ps.cost" 2> /dev/null
mb() { jq ".cost.memory_breakdown_bytes.$2" "$T/$1.ckpt"; }
check "--framework torchtitan: ZeRO 3's fp32 shard alone (param_shard fp32): weights 2x, optimizer state less that, cost --from torchtitan the same peak" \
  '[ "$(jq -r .cluster.description.device.param_shard "$T/tt-ps.ckpt")" = fp32 ] &&
   [ "$(mb tt-ps weights)" = "$(( 2 * $(mb tt-pp weights) ))" ] &&
   [ "$(mb tt-ps optimizer_states)" = "$(( $(mb tt-pp optimizer_states) - $(mb tt-ps weights) ))" ] &&
   [ "$(jq .cost.peak_memory_bytes "$T/tt-pp.ckpt")" = "$(( $(jq .cost.peak_memory_bytes "$T/tt-ps.ckpt") + $(mb tt-pp weights) ))" ] &&
   num_close "$(jq .peak_memory_bytes "$T/tt-ps.cost")" "$(jq .cost.peak_memory_bytes "$T/tt-ps.ckpt")"'
# An overlap switch exported and read back: the plan searched with it on (gpt.json on h100x8 with
# the options given), export states it (the written line matches STATED), cost --from prices the
# plan's own step; the configuration without the key (lines matching KEY dropped) is priced with
# the framework's default: a longer step where that is off, the same where it is on.
ov_roundtrip() { # SWITCH PIPELINE-KEY STATED KEY "OPTIONS" FRAMEWORK DEFAULT
  local c=$T/ov-$6
  # shellcheck disable=SC2086
  "$PLANNER" search "$T/gpt.json" --cluster h100x8 --framework "$6" $5 "--$1" on -o "$c.ckpt" > /dev/null 2>&1 &&
    [ "$(jq ".pipeline.$2" "$c.ckpt")" = true ] &&
    "$PLANNER" export "$c.ckpt" --to "$6" -o "$c.cfg" > /dev/null 2>&1 &&
    grep -q -- "$3" "$c.cfg" &&
    "$PLANNER" cost "$T/gpt.json" --from "$6" "$c.cfg" --cluster h100x8 > "$c.cost" 2> /dev/null &&
    num_close "$(jq .step_seconds "$c.cost")" "$(jq .cost.step_seconds "$c.ckpt")" &&
    grep -v -- "$4" "$c.cfg" > "$c-bare.cfg" &&
    "$PLANNER" cost "$T/gpt.json" --from "$6" "$c-bare.cfg" --cluster h100x8 > "$c-bare.cost" 2> /dev/null &&
    awk -v a="$(jq .step_seconds "$c.cost")" -v b="$(jq .step_seconds "$c-bare.cost")" -v d="$7" \
      'BEGIN { exit !(d == "off" ? a < b : a == b) }'
}
# --tp-comm-overlap (Megatron-LM's --tp-comm-overlap, Megatron-Bridge's model.tp_comm_overlap,
# torchtitan's enable_async_tensor_parallel; off in all three): the tensor-parallel collectives
tov_bad=""
for fw in megatron nemo torchtitan; do
  ov_roundtrip tp-comm-overlap tp_comm_overlap \
    "^--tp-comm-overlap\|^  tp_comm_overlap: true$\|^enable_async_tensor_parallel = true$" \
    "tp-comm-overlap\|tp_comm_overlap\|enable_async_tensor_parallel" "--tp 2" $fw off ||
    tov_bad="$tov_bad [$fw]"
done
check "search --tp-comm-overlap on, export, cost --from: stated, the same step, longer without it${tov_bad}" \
  '[ -z "$tov_bad" ]'
# Context parallelism's exchange (--cp-exchange; docs/cost-model.md): each framework's default
# priced by --framework (torchtitan's allgather, Transformer Engine's p2p ring), one given kept,
# export states it with the framework's word, cost --from reads it back and prices the plan's
# own step; torchtitan's FSDP runs over the context-parallel ranks (dp 1, cp 8: ZeRO 3 read back)
"$ZOO" llama2-7b --layers 2 --seq 8192 --batch 8 --hidden 1024 --heads 8 --kv-heads 8 --ffn 2816 \
  --attention fused > "$T/cpx.json"
cpx_bad=""
for c in 'torchtitan::allgather:^context_parallel_rotate_method = "allgather"$' \
  'torchtitan:ring:ring:^context_parallel_rotate_method = "alltoall"$' \
  'megatron::ring:^--cp-comm-type p2p' \
  'megatron:allgather-sync:allgather-sync:^--cp-comm-type all_gather' \
  'nemo:allgather-sync:allgather-sync:^  cp_comm_type: all_gather$'; do
  IFS=: read -r fw given want stated <<< "$c"
  x="$T/cpx-$fw-$given"
  # shellcheck disable=SC2086
  "$PLANNER" search "$T/cpx.json" --cluster h100x8 --framework "$fw" --tp 1 --cp 8 \
    ${given:+--cp-exchange $given} -o "$x.ckpt" > /dev/null 2>&1 &&
    [ "$(jq -r .cluster.description.device.cp_exchange "$x.ckpt")" = "$want" ] &&
    "$PLANNER" export "$x.ckpt" --to "$fw" -o "$x.cfg" > /dev/null 2>&1 &&
    grep -q -- "$stated" "$x.cfg" &&
    "$PLANNER" cost "$T/cpx.json" --from "$fw" "$x.cfg" --cluster h100x8 > "$x.cost" 2> "$x.err" &&
    grep -q -- "--cp-exchange $want" "$x.err" &&
    num_close "$(jq .step_seconds "$x.cost")" "$(jq .cost.step_seconds "$x.ckpt")" ||
    cpx_bad="$cpx_bad [$fw ${given:-default}]"
done
check "--cp-exchange: the framework's default or the one given, exported in its words, read back by cost --from at the plan's step${cpx_bad}" \
  '[ -z "$cpx_bad" ]'
"$PLANNER" search "$T/cpx.json" --cluster h100x8 --framework torchtitan --tp 1 --cp 8 \
  --cp-exchange allgather-sync -o "$T/cpx-none.ckpt" > /dev/null 2> "$T/err"
check "search --framework torchtitan --cp-exchange allgather-sync (Transformer Engine's, not PyTorch's): exit 3, nothing written" \
  '[ $? -eq 3 ] && [ ! -e "$T/cpx-none.ckpt" ]'
"$PLANNER" export "$T/cpx-torchtitan-.ckpt" --to megatron > /dev/null 2> "$T/err"
check "export --to megatron of a plan priced with PyTorch's allgather exchange: exit 2 naming the switch" \
  '[ $? -eq 2 ] && grep -q "cp-exchange allgather, which --cp-comm-type does not run" "$T/err"'
sed 's/^--cp-comm-type p2p/--cp-comm-type a2a/' "$T/cpx-megatron-.cfg" > "$T/cpx-a2a.cfg"
"$PLANNER" cost "$T/cpx.json" --from megatron "$T/cpx-a2a.cfg" --cluster h100x8 > /dev/null 2> "$T/err"
check "cost --from megatron --cp-comm-type a2a (heads exchanged, Ulysses' layout): exit 2 naming the file, line and the words it takes" \
  '[ $? -eq 2 ] && grep -q "cpx-a2a.cfg:[0-9]*: --cp-comm-type a2a: expected p2p or all_gather" "$T/err"'
"$PLANNER" search "$T/cpx.json" --cluster h100x8 --tp 1 --cp 8 --zero 0 -o "$T/cpx-z0.ckpt" > /dev/null 2>&1
"$PLANNER" export "$T/cpx-z0.ckpt" --to torchtitan > /dev/null 2> "$T/err"
check "export --to torchtitan of ZeRO 0 with context parallelism (torchtitan's FSDP always runs over the cp ranks): exit 2 saying so" \
  '[ $? -eq 2 ] && grep -q "ZeRO 0 with context parallelism" "$T/err"'
# --overlap-param-gather at ZeRO 1 (Megatron's distributed optimizer: Megatron-LM's
# --overlap-param-gather, off; Megatron-Bridge's ddp.overlap_param_gather, on): the step's
# all-gather of updated weights. Megatron-LM's validate_args takes it only with
# --overlap-grad-reduce, so both are on
pg_bad=""
for fw in megatron:off nemo:on; do
  ov_roundtrip overlap-param-gather overlap_param_gather \
    "^--overlap-param-gather\|^  overlap_param_gather: true$" \
    "overlap-param-gather\|overlap_param_gather" "--zero 1 --overlap-grad-reduce on" "${fw%:*}" "${fw#*:}" ||
    pg_bad="$pg_bad [${fw%:*}]"
done
check "search --overlap-param-gather on, export, cost --from: stated, the same step; without it Megatron-LM's default (longer), Megatron-Bridge's (the same)${pg_bad}" \
  '[ -z "$pg_bad" ]'
# ... and a plan with the parameter gathers overlapped but not the gradient reduction is one
# Megatron-LM refuses to start: search --framework megatron finds no plan it can state and says
# why (exit 3), nothing written; export of such a plan searched without --framework: exit 2
"$PLANNER" search "$T/gpt.json" --cluster h100x8 --framework megatron --zero 1 --overlap-param-gather on \
  -o "$T/pg-only.ckpt" > /dev/null 2> "$T/err"
check "search --framework megatron: parameter gathers overlapped without --overlap-grad-reduce is no Megatron-LM plan (validate_args): exit 3 saying so, nothing written" \
  '[ $? -eq 3 ] && grep -q "only with --overlap-grad-reduce" "$T/err" && [ ! -e "$T/pg-only.ckpt" ]'
"$PLANNER" search "$T/gpt.json" --cluster h100x8 --tp 1 --pp 1 --zero 1 --overlap-param-gather on \
  -o "$T/pg-only.ckpt" > /dev/null 2>&1
"$PLANNER" export "$T/pg-only.ckpt" --to megatron -o "$T/pg-only.cfg" > /dev/null 2> "$T/err"
check "export --to megatron of that plan: exit 2 saying why, nothing written" \
  '[ $? -eq 2 ] && grep -q "only with --overlap-grad-reduce" "$T/err" && [ ! -e "$T/pg-only.cfg" ]'
# a configuration that states no switch is priced with the framework's defaults: NeMo's fused
# loss and overlapped reduction (its recipes'), not the cluster's unfused loss
grep -v "cross_entropy_loss_fusion\|overlap_grad_reduce\|grad_reduce_in_fp32" "$T/A.nemo" > "$T/A-bare.nemo"
"$PLANNER" cost "$T/llama.json" --from nemo "$T/A-bare.nemo" --cluster h100x8 > /dev/null 2> "$T/err"
check "cost --from nemo without its pricing keys: NeMo's defaults (fused loss, overlap on)" \
  'grep -q -- "--loss-kernel fused .*--overlap-grad-reduce on" "$T/err"'

# what a framework cannot state: exit 2, the reason, nothing written
refuse() { # PLAN FRAMEWORK REASON-PATTERN
  rm -f "$T/no"
  "$PLANNER" export "$T/$1.ckpt" --to "$2" -o "$T/no" > /dev/null 2> "$T/err"
  local rc=$? why=$3
  check "export $1 --to $2 refused (exit $rc): $3" \
    '[ $rc = 2 ] && grep -q "$why" "$T/err" && [ ! -e "$T/no" ]'
}
search M g13 h100x8:2 --tp 2 --pp 2 --dp 4 --micro-batch-size 2 --zero 1 --sequence-parallel on \
  --recompute none --virtual-stages 1
refuse M megatron "pipeline stage 0 ends inside a transformer layer"
refuse M mindformers "ends inside a transformer layer"
refuse A deepspeed "a DeepSpeed config states data parallelism and ZeRO only"
search G gpt h100x8 --tp 2 --pp 1 --dp 4 --micro-batch-size 4 --zero 3 --recompute selective \
  --sequence-parallel on
refuse G torchtitan "selective recompute of the attention core"
refuse T megatron "selective-op recompute (torchtitan's per-op checkpointing)"
refuse T nemo "selective-op recompute"
refuse T mindformers "selective-op recompute"
refuse B torchtitan "ZeRO 1: torchtitan shards all of a layer's state with FSDP"
refuse C torchtitan "ZeRO 2"
refuse F mindformers "virtual stages"
refuse F megatron-deepspeed "interleaved virtual stages"
check "Q: 4 stages of 3 3 3 1 layers" '[ "$(stage_layers "$T/Q.ckpt")" = "[3,3,3,1]" ]'
refuse Q megatron "each chunk of a stage 1/2 of its layers"
refuse Q nemo "each chunk of a stage holds 1/2 of its layers"
refuse D mindformers "ZeRO 3"
refuse E deepspeed "tp 1, pp 2"
jq '.parts.attention.norms_sequence_cut = 1' "$T/A.ckpt" > "$T/S.ckpt"
refuse S megatron "sequence parallelism on for some parts"
jq '.parts.mlp.weight_cut = 4' "$T/A.ckpt" > "$T/W.ckpt"
refuse W nemo "the mlp's weights are cut 4 ways"
jq '.parallel_strategy_item.embed.stage = 1' "$T/A.ckpt" > "$T/X.ckpt"
refuse X megatron "stages are not runs of consecutive ops\|embedding on the first stage"

# the configuration as an argument string, and bad configurations
"$PLANNER" cost "$T/llama.json" --cluster h100x8 --from megatron "--tensor-model-parallel-size 2 \
  --pipeline-model-parallel-size 2 --sequence-parallel --micro-batch-size 1 \
  --global-batch-size 1024 --use-distributed-optimizer --bf16" > "$T/cost.json" 2> "$T/err"
check "cost --from megatron ARGS (a string): A's step" \
  'num_close "$(jq .step_seconds "$T/cost.json")" "$(jq .cost.step_seconds "$T/A.ckpt")"'
# Megatron-LM splits layers evenly (num_layers / pp a stage) unless the first and last stages' are
# stated: cost --from keeps that split (8 layers over 4 stages: 2 a stage) and says so in its search
"$PLANNER" cost "$T/g13.json" --cluster h100x8 --from megatron "--tensor-model-parallel-size 1 \
  --pipeline-model-parallel-size 4 --micro-batch-size 1 --bf16" -o "$T/even.ckpt" > /dev/null 2> "$T/err"
check "cost --from megatron, 8 layers over 4 stages: layer l on stage l / 2, the search told --stage-cuts even" \
  '[ $? -eq 0 ] && grep -q -- "--stage-cuts even" "$T/err" &&
   jq -e "[.parallel_strategy_item | to_entries[] | select(.key | test(\"^l[0-9]+[.]\")) |
          (.key | capture(\"^l(?<n>[0-9]+)\").n | tonumber) as \$l | .value.stage == ((\$l / 2) | floor)]
          | (length > 0) and all" "$T/even.ckpt" > /dev/null'
bad_config() { # FRAMEWORK FILE-CONTENT MESSAGE-PATTERN
  printf '%s' "$2" > "$T/bad.cfg"
  "$PLANNER" cost "$T/llama.json" --cluster h100x8 --from "$1" "$T/bad.cfg" -o "$T/nope" \
    > "$T/out" 2> "$T/err"
  local rc=$? why=$3
  check "cost --from $1, bad configuration (exit $rc): $3" \
    '[ $rc = 2 ] && grep -q "$why" "$T/err" && [ ! -e "$T/nope" ] && [ ! -s "$T/out" ]'
}
bad_config megatron "--tensor-model-parallel-size 2 --global-batch-size 512 --micro-batch-size 1" \
  "global batch 512, and MODEL's batch is 1024"
bad_config megatron "--tensor-model-parallel-size two" "bad.cfg:1: --tensor-model-parallel-size two"
bad_config megatron "--recompute-granularity full --recompute-method block" \
  "full recompute by method block"
bad_config megatron "--pipeline-model-parallel-layout E|t*2|L" "pipeline-model-parallel-layout"
bad_config megatron "--sequence-parallel yes" "takes no value"
bad_config megatron "--tensor-model-parallel-size '2" "unterminated ' quote"
bad_config nemo $'model:\n\ttensor_model_parallel_size: 2\n' "bad.cfg:2: a tab in the indentation"
bad_config nemo $'model:\n  tensor_model_parallel_size 2\n' "bad.cfg:2: expected 'key: value'"
bad_config nemo $'ddp:\n  use_distributed_optimizer: maybe\n' "use_distributed_optimizer maybe"
bad_config torchtitan $'[parallelism]\ndata_parallel_shard_degree = 2\ndata_parallel_replicate_degree = 2\n' "HSDP"
bad_config torchtitan $'[parallelism]\ntensor_parallel_degree = 2\n' "activation_checkpoint.mode selective (the default)"
bad_config torchtitan $'[parallelism\n' "bad.cfg:1: expected \[table\]"
bad_config torchtitan $'[parallelism]\npipeline_parallel_degree = 2\ndata_parallel_shard_degree = 4\nfsdp_reshard_after_forward = "always"\n[activation_checkpoint]\nmode = "none"\n' \
  "bad.cfg:4: fsdp_reshard_after_forward always with pipeline stages"
bad_config torchtitan $'[parallelism]\ndata_parallel_shard_degree = 8\nfsdp_reshard_after_forward = "never"\n[activation_checkpoint]\nmode = "none"\n' \
  "fsdp_reshard_after_forward never: the planner prices"
bad_config deepspeed '{"train_batch_size": 1024, "train_micro_batch_size_per_gpu": 3, "gradient_accumulation_steps": 2}' \
  "train_batch_size 1024 is not"
bad_config deepspeed '{"train_batch_size": ' "bad.cfg"
bad_config mindformers $'recompute_config:\n  recompute: True\n  select_recompute: True\n' "both on"
bad_config mindformers $'a: *nowhere\n' "alias"
"$PLANNER" cost "$T/llama.json" --from megatron "$T/missing.args" > /dev/null 2> "$T/err"
check "cost --from megatron, a missing file: exit 2 naming it (not arguments that set nothing)" \
  '[ $? = 2 ] && grep -q "missing.args" "$T/err" && ! grep -q "planner search" "$T/err"'
"$PLANNER" cost "$T/llama.json" --from nemo "$T/missing.yaml" > /dev/null 2> "$T/err"
check "cost --from nemo, a missing file: exit 2 naming it" '[ $? = 2 ] && grep -q "missing.yaml" "$T/err"'
"$PLANNER" cost "$T/llama.json" --from caffe x > /dev/null 2> "$T/err"
check "cost --from an unknown framework: exit 2 listing them" '[ $? = 2 ] && grep -q "megatron, nemo, torchtitan" "$T/err"'
"$PLANNER" export "$T/A.ckpt" --to caffe > /dev/null 2> "$T/err"
check "export --to an unknown framework: exit 2" '[ $? = 2 ] && grep -q "expected megatron" "$T/err"'
"$PLANNER" export "$T/llama.json" --to megatron > /dev/null 2> "$T/err"
check "export of a file that is not a plan: exit 2" '[ $? = 2 ] && grep -q "not a planner checkpoint" "$T/err"'
# every allocation site failed in turn (PL_FAIL_ALLOC=site:K, graph/alloc.h): exit 4 saying
# "out of memory" with nothing written, or exit 0 with the output of a run without failures
alloc_sites() { # NAME ARGS... (OUT: the output file)
  local name=$1 n k rc why bad=0
  shift
  PL_FAIL_ALLOC=site:1000000 "$PLANNER" "${@//OUT/$T/ref.out}" > /dev/null 2> "$T/ref.err"
  n=$(grep -o 'pl_alloc: [0-9]*' "$T/ref.err" | grep -o '[0-9]*$')
  for k in $(seq 1 "${n:-0}"); do
    rm -f "$T/alloc.out"
    PL_FAIL_ALLOC=site:$k "$PLANNER" "${@//OUT/$T/alloc.out}" > /dev/null 2> "$T/err"
    rc=$? why=
    if [ $rc = 4 ]; then
      grep -q "out of memory" "$T/err" || why="exit 4 without 'out of memory'"
      [ -e "$T/alloc.out" ] && why="exit 4 but the output was written"
    elif [ $rc = 0 ]; then
      cmp -s "$T/alloc.out" "$T/ref.out" || why="exit 0 with another output"
    else
      why="exit $rc"
    fi
    [ -n "$why" ] && { echo "# $name, site $k of $n: $why"; bad=1; }
  done
  check "$name: each of ${n:-no} allocation sites failed in turn" '[ -n "$n" ] && [ $bad = 0 ]'
}
alloc_sites "export --to nemo" export "$T/A.ckpt" --to nemo -o OUT
alloc_sites "export --to torchtitan --json" export "$T/E.ckpt" --to torchtitan --json -o OUT
alloc_sites "cost --from megatron" cost "$T/llama.json" --from megatron "$T/A.megatron" \
  --cluster h100x8 -o OUT

check "export --help names every framework and its version" \
  '"$PLANNER" export --help | grep -q "Megatron-LM core_v0.15.0" && "$PLANNER" export --help | grep -q "torchtitan v0.2.2"'
check "planner --help lists export" '"$PLANNER" --help | grep -q "^  export CKPT"'
check "cost --from --help" '"$PLANNER" cost x --from megatron --help | grep -q "usage: planner cost MODEL --from"'
finish
