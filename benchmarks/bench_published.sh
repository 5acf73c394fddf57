#!/usr/bin/env bash
# Predicted against published iteration times: each published run of
# benchmarks/published/*.csv (model, tp, pp, GPUs, batch, micro-batch size,
# interleaving, recompute; the measured iteration time, or teraFLOP/s per GPU
# to derive it from) is priced by `planner search` with its configuration
# fixed (--tp --pp --recompute, --micro-batch-size and --virtual-stages where
# published, data parallel what is left; the per-op cuts, and micro-batches
# and ZeRO where not published, left to the search), and the planner's own
# best plan for the same model and cluster (--job) is priced by the same cost
# model. Where a paper gives teraFLOP/s, the iteration time is its FLOPs per
# iteration over the measured rate. Markdown table on stdout, one JSON line
# per run in $OUT.jsonl.
# Usage: benchmarks/bench_published.sh [BUILD_DIR] [OUT]
#   OUT: path prefix of the results (default build/bench/NAME, untracked; the
#   tables in docs/benchmarks.md were recorded with OUT=benchmarks/results/NAME)
#   CSV="a.csv b.csv" (default: every benchmarks/published/*.csv)
#   RUNS="gpt-1.7b gpt-22b-full" (names in the csvs; default: all)
#   CLUSTER=a100-80gx8 (the preset the runs are priced on, 8 GPUs a node)
#   BEST=0 to skip the planner's own search
#   VS=N overrides every run's interleaving (VS=auto lets the search choose)
#   PROJECTIONS=qkv: q, k and v as one GEMM, as Megatron-LM's query_key_value
#   (separate: one GEMM each); STAGE_CUTS=even: Megatron's num_layers / pp a
#   stage (layers or any: the search's split)
set -euo pipefail
B=${1:-build}
OUT=${2:-build/bench/published}
mkdir -p "$(dirname "$OUT")"
CSV=${CSV:-$(ls "$(dirname "$0")"/published/*.csv)}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
: > "$OUT.jsonl"
echo "| run | GPUs | tp·pp·dp, recompute | published s | predicted s | predicted / published | peak GiB | planner's plan | its step s | vs published config | search s |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
# shellcheck disable=SC2086
grep -hv '^#' $CSV | while IFS=, read -r name layers hidden heads tp pp gpus batch mb vs rc tflops seconds sp; do
  if [ -n "${RUNS:-}" ] && ! grep -qw -- "$name" <<< "$RUNS"; then continue; fi
  s=2048 v=51200
  "$B/planner-zoo" gpt3-175b --layers "$layers" --hidden "$hidden" --heads "$heads" \
    --head-dim $((hidden / heads)) --ffn $((4 * hidden)) --seq $s --vocab $v --batch "$batch" \
    --dtype float16 --projections "${PROJECTIONS:-qkv}" > "$T/m.json"
  flops=$(awk -v B="$batch" -v s=$s -v l="$layers" -v h="$hidden" -v V=$v \
    'BEGIN { printf "%.6e", 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h)) }')
  if [ -n "$seconds" ]; then
    published=$seconds
  else
    published=$(awk -v f="$flops" -v n="$gpus" -v x="$tflops" 'BEGIN { printf "%.4f", f / (n * x * 1e12) }')
  fi
  mbs=()
  [ -n "$mb" ] && mbs=(--micro-batch-size "$mb")
  cl="${CLUSTER:-a100-80gx8}:$(((gpus + 7) / 8))"
  t0=$(date +%s.%N)
  split=()
  [ "$pp" -gt 1 ] && split=(--stage-cuts "${STAGE_CUTS:-even}")
  "$B/planner" search "$T/m.json" --cluster "$cl" --tp "$tp" --pp "$pp" --recompute "$rc" \
    --virtual-stages "${VS:-$vs}" --sequence-parallel "${sp:-on}" "${mbs[@]}" "${split[@]}" \
    --time-limit "${TIME_LIMIT:-300}" -o "$T/fixed.json" > /dev/null 2> "$T/err" || true
  if [ ! -s "$T/fixed.json" ]; then
    echo "| $name | $gpus | tp$tp·pp$pp, $rc | $published | $(head -c 80 "$T/err" | tr '\n|' '  ') | | | | | | |"
    continue
  fi
  pred=$(jq .cost.step_seconds "$T/fixed.json")
  peak=$(jq '.cost.peak_memory_bytes / 1073741824 | . * 10 | round / 10' "$T/fixed.json")
  dp=$((gpus / tp / pp))
  best="" bstep="" bratio="" bsec=""
  if [ "${BEST:-1}" = 1 ]; then
    t1=$(date +%s.%N)
    if "$B/planner" search "$T/m.json" --cluster "$cl" --job --time-limit "${TIME_LIMIT:-300}" \
      -o "$T/best.json" > /dev/null 2>&1; then
      best=$(jq -r '"tp\(.groups.tp[0] | length)·pp\(.pipeline.stages)·dp\(.groups.dp[0] | length), m \(.pipeline.micro_batches), v \(.pipeline.virtual_stages // 1), ZeRO \(.optimizer_shard), rc \(.recompute)"' "$T/best.json")
      bstep=$(jq .cost.step_seconds "$T/best.json")
      bratio=$(awk -v a="$bstep" -v b="$pred" 'BEGIN { printf "%.3f", a / b }')
    fi
    bsec=$(awk -v a="$t1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  fi
  ratio=$(awk -v a="$pred" -v b="$published" 'BEGIN { printf "%.3f", a / b }')
  echo "| $name | $gpus | tp$tp·pp$pp·dp$dp, $rc | $published | $(printf %.4f "$pred") | $ratio | $peak | $best | $bstep | $bratio | $bsec |"
  jq -nc --arg name "$name" --argjson gpus "$gpus" --argjson tp "$tp" --argjson pp "$pp" --arg rc "$rc" \
    --argjson published "$published" --argjson predicted "$pred" --argjson peak "$peak" \
    --arg best "$best" --arg bstep "$bstep" \
    '{run: $name, gpus: $gpus, tp: $tp, pp: $pp, recompute: $rc, published_s: $published, predicted_s: $predicted,
      peak_gib: $peak, planner_plan: $best, planner_step_s: ($bstep | tonumber? // null)}' >> "$OUT.jsonl"
done
