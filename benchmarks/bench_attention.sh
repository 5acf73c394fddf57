#!/usr/bin/env bash
# The same models with attention unfused (MatMul, Softmax, Dropout, MatMul:
# the scores kept for the backward) and fused (one Attention op, as
# FlashAttention runs it), planned with `--job` on H100 nodes of 8 at the
# device counts given: the planner's plan, its step and its peak memory for
# each. One JSON line per row to $OUT.jsonl, a markdown table to stdout.
# Usage: benchmarks/bench_attention.sh [BUILD_DIR] [OUT]
#   OUT: path prefix of the results (default build/bench/attention, untracked;
#   the table in docs/benchmarks.md was recorded with
#   OUT=benchmarks/results/attention)
#   MODELS="gpt3-13b ..." DEVICES="64 512" TIME_LIMIT=120 (seconds per search)
set -euo pipefail
B=${1:-build}
OUT=${2:-build/bench/attention}
mkdir -p "$(dirname "$OUT")"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
: > "$OUT.jsonl"
echo "| model | devices | unfused plan | step s | peak GiB | fused plan | step s | peak GiB | fused / unfused |"
echo "|---|---|---|---|---|---|---|---|---|"
for m in ${MODELS:-gpt3-13b gpt3-175b llama2-70b}; do
  for a in unfused fused; do
    "$B/planner-zoo" "$m" --attention "$a" > "$T/$a.json"
  done
  for d in ${DEVICES:-64 512}; do
    for a in unfused fused; do
      "$B/planner" search "$T/$a.json" --job --cluster "h100x8:$((d / 8))" \
        --time-limit "${TIME_LIMIT:-120}" -o "$T/$a.plan" > /dev/null 2> "$T/err" ||
        echo '{}' > "$T/$a.plan"
    done
    jq -n -c --arg model "$m" --argjson devices "$d" --slurpfile u "$T/unfused.plan" \
      --slurpfile f "$T/fused.plan" '
      def row($p): if $p.cost then {plan: "tp\($p.groups.tp[0] | length)·pp\($p.pipeline.stages)·dp\($p.groups.dp[0] | length), m \($p.pipeline.micro_batches), v \($p.pipeline.virtual_stages // 1), ZeRO \($p.optimizer_shard), rc \($p.recompute)",
        step_seconds: $p.cost.step_seconds, peak_bytes: $p.cost.peak_memory_bytes} else null end;
      {model: $model, devices: $devices, unfused: row($u[0]), fused: row($f[0])}' | tee -a "$OUT.jsonl" |
      jq -r 'def cell($r): if $r then "\($r.plan) | \($r.step_seconds * 1000 | round / 1000) | \($r.peak_bytes / 1073741824 * 10 | round / 10)" else "no plan | | " end;
        "| \(.model) | \(.devices) | \(cell(.unfused)) | \(cell(.fused)) | \(if .unfused and .fused then (.fused.step_seconds / .unfused.step_seconds * 1000 | round / 1000) else "" end) |"'
  done
done
