#!/usr/bin/env bash
# Predicted against published peak memory: each run of
# benchmarks/published-memory/*.csv (a Megatron-LM configuration and the
# peak torch.cuda.max_memory_allocated it reported) is priced by `planner
# search` with the configuration fixed (--dp --tp --pp, the micro-batch size,
# ZeRO-1 for Megatron's distributed optimizer, no recompute, plain 1F1B) on
# the zoo's Llama-2 7B with fused attention (FlashAttention) and the run's
# sequence and batch; "predicted" is the checkpoint's peak less the runtime
# reserve (max_memory_allocated counts tensors only: no CUDA context, NCCL
# buffers or allocator fragmentation). Markdown table on stdout, one JSON line
# per run in $OUT.jsonl.
# Usage: benchmarks/bench_published_memory.sh [BUILD_DIR] [OUT]
#   OUT: path prefix of the results (default build/bench/published-memory,
#   untracked; the table in docs/benchmarks.md was recorded with
#   OUT=benchmarks/results/published-memory)
set -euo pipefail
B=${1:-build}
OUT=${2:-build/bench/published-memory}
mkdir -p "$(dirname "$OUT")"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
: > "$OUT.jsonl"
echo "| run | mbs | global batch | dp·pp·tp | measured GiB | predicted GiB | predicted / measured | weights | gradients | optimizer | activations | transient |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
grep -hv '^#' "$(dirname "$0")"/published-memory/*.csv |
  while IFS=, read -r name mb gbs dp pp tp measured sp; do
    "$B/planner-zoo" llama2-7b --attention fused --seq 2048 --batch "$gbs" > "$T/m.json"
    if ! "$B/planner" search "$T/m.json" --cluster h100x8 --dp "$dp" --pp "$pp" --tp "$tp" \
      --micro-batch-size "$mb" --zero 1 --recompute none --virtual-stages 1 \
      --sequence-parallel "${sp:-on}" -o "$T/p.json" \
      > /dev/null 2> "$T/err"; then
      echo "| $name | $mb | $gbs | dp$dp·pp$pp·tp$tp | $measured | $(head -c 80 "$T/err" | tr '\n|' '  ') | | | | | | |"
      continue
    fi
    jq -c --arg name "$name" --argjson measured "$measured" \
      '.cost.memory_breakdown_bytes | {run: $name, measured_gib: $measured,
        breakdown_gib: (with_entries(.value /= 1073741824)),
        predicted_gib: ((to_entries | map(select(.key != "reserved") | .value) | add) / 1073741824)}' \
      "$T/p.json" | tee -a "$OUT.jsonl" |
      jq -r --arg mb "$mb" --arg gbs "$gbs" --arg cfg "dp$dp·pp$pp·tp$tp" '
        def r2: . * 100 | round / 100;
        "| \(.run) | \($mb) | \($gbs) | \($cfg) | \(.measured_gib) | \(.predicted_gib | r2) | \(.predicted_gib / .measured_gib * 1000 | round / 1000) | \(.breakdown_gib.weights | r2) | \(.breakdown_gib.gradients | r2) | \(.breakdown_gib.optimizer_states | r2) | \(.breakdown_gib.activations | r2) | \(.breakdown_gib.transient | r2) |"'
  done
