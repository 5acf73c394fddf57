#!/usr/bin/env bash
# Memory the executor spends against the plan's prediction: for plans of
# gpt-tiny, moe-tiny and small zoo GPTs (data, tensor and expert parallel,
# micro-batches, ZeRO 1 and 3, full and selective recompute, pipeline
# stages; the small GPT with its attention fused too), `planner run --profile --json` reports per category the most
# bytes live at once on rank 0 (as a framework's allocator counts its
# tensors; fp32 models, so the executor's fp32 buffers are the model's
# bytes) beside the plan's peak-stage prediction. Markdown table on stdout,
# one JSON line per plan in $OUT.jsonl.
# Usage: benchmarks/bench_memory.sh [BUILD_DIR] [OUT]
#   OUT: path prefix of the results (default build/bench/memory, untracked; the
#   table in docs/benchmarks.md was recorded with OUT=benchmarks/results/memory)
set -euo pipefail
B=${1:-build}
OUT=${2:-build/bench/memory}
SRC=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$(dirname "$OUT")"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
: > "$OUT.jsonl"
"$B/planner-zoo" gpt-small --layers 4 --hidden 128 --heads 4 --head-dim 32 --ffn 512 --seq 64 \
  --vocab 512 --batch 8 --dtype float32 > "$T/gpt-small.json"
"$B/planner-zoo" gpt-small --layers 4 --hidden 128 --heads 4 --head-dim 32 --ffn 512 --seq 64 \
  --vocab 512 --batch 8 --dtype float32 --attention fused > "$T/gpt-small-fused.json"
# 256 tokens over 4 heads of 16 and a vocabulary of 32: the attention scores are most of a layer and
# the loss is small, so a recomputed layer's backward (its forward run again) makes the peak
"$B/planner-zoo" gpt-small --layers 4 --hidden 64 --heads 4 --head-dim 16 --ffn 256 --seq 256 \
  --vocab 32 --batch 8 --dtype float32 > "$T/gpt-long.json"
cp "$SRC/tests/fixtures/models/gpt-tiny.json" "$SRC/tests/fixtures/models/moe-tiny.json" "$T/"
echo "| model | plan | weights | gradients | optimizer | activations measured / predicted | transient measured / predicted | peak measured / predicted |"
echo "|---|---|---|---|---|---|---|---|"
while IFS='|' read -r model name opts; do
  # shellcheck disable=SC2086
  "$B/planner" search "$T/$model.json" $opts -o "$T/p.json" > /dev/null 2> "$T/err" ||
    { echo "| $model | $name | $(head -c 80 "$T/err") | | | | | |"; continue; }
  "$B/planner" run "$T/$model.json" --strategy "$T/p.json" --steps 2 --profile --json \
    > "$T/run" 2> "$T/err"
  jq -c --arg model "$model" --arg plan "$name" \
    'select(.memory_bytes) | {model: $model, plan: $plan, measured: .memory_bytes.measured, predicted: .memory_bytes.predicted, peak: .memory_bytes.peak}' \
    "$T/run" | tee -a "$OUT.jsonl" |
    jq -r '. as $r | def ratio(a; b): if b > 0 then (a / b * 100 | round / 100 | tostring) else "-" end;
      def mp(a; b): "\(a) / \(b) = \(ratio(a; b))";
      "| \($r.model) | \($r.plan) | \(ratio($r.measured.weights; $r.predicted.weights)) | \(ratio($r.measured.gradients; $r.predicted.gradients)) | \(ratio($r.measured.optimizer_states; $r.predicted.optimizer_states)) | \(mp($r.measured.activations; $r.predicted.activations)) | \(mp($r.peak.measured - $r.measured.weights - $r.measured.gradients - $r.measured.optimizer_states - $r.measured.activations; $r.predicted.transient)) | \(mp($r.peak.measured; $r.peak.predicted)) |"'
done <<'PLANS'
gpt-tiny|1 device|--devices 1
gpt-tiny|dp 4|--devices 4 --mode dp
gpt-tiny|tp 4|--devices 4 --tp 4 --pp 1 --sequence-parallel on
gpt-tiny|tp 4, no sequence parallelism|--devices 4 --tp 4 --pp 1 --sequence-parallel off
gpt-tiny|2 micro-batches|--devices 4 --pp 1 --micro-batches 2
gpt-tiny|ZeRO 1|--devices 4 --dp 4 --pp 1 --zero 1
gpt-tiny|ZeRO 3|--devices 4 --dp 4 --pp 1 --zero 3
gpt-tiny|full recompute|--devices 4 --dp 4 --pp 1 --recompute full
gpt-tiny|selective recompute|--devices 4 --dp 4 --pp 1 --recompute selective
gpt-tiny|pp 2, 4 micro-batches|--devices 4 --pp 2 --micro-batches 4 --virtual-stages 1
gpt-tiny|pp 2 dp 2 ZeRO 1|--devices 4 --pp 2 --dp 2 --micro-batches 2 --zero 1 --virtual-stages 1
moe-tiny|dp 4|--devices 4 --mode dp
moe-tiny|ep 2|--devices 4 --dp 2 --ep 2 --pp 1 --sequence-parallel on
gpt-small|dp 2|--devices 2 --mode dp
gpt-small|dp 4 selective|--devices 4 --dp 4 --pp 1 --recompute selective
gpt-small|pp 2, 4 micro-batches|--devices 4 --pp 2 --micro-batches 4 --virtual-stages 1
gpt-small|pp 2 of 2 chunks, 4 micro-batches|--devices 4 --pp 2 --micro-batches 4 --virtual-stages 2
gpt-small|full recompute, 2 micro-batches|--devices 4 --dp 4 --pp 1 --micro-batches 2 --recompute full
gpt-small|dp 2 tp 2, no sequence parallelism|--devices 4 --dp 2 --tp 2 --pp 1 --sequence-parallel off
gpt-small-fused|dp 2|--devices 2 --mode dp
gpt-small-fused|tp 2 cp 2|--devices 4 --tp 2 --cp 2 --pp 1 --sequence-parallel on
gpt-small-fused|dp 4 selective|--devices 4 --dp 4 --pp 1 --recompute selective
gpt-small-fused|pp 2, 4 micro-batches|--devices 4 --pp 2 --micro-batches 4 --virtual-stages 1
gpt-long|full recompute, 2 micro-batches|--devices 1 --dp 1 --pp 1 --micro-batches 2 --recompute full
gpt-long|dp 2 selective, 2 micro-batches|--devices 2 --dp 2 --pp 1 --micro-batches 2 --recompute selective
gpt-long|pp 2 full recompute, 4 micro-batches|--devices 2 --pp 2 --micro-batches 4 --virtual-stages 1 --recompute full
PLANS
