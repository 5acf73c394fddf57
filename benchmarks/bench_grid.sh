#!/usr/bin/env bash
# Whole-job plans against a Megatron-style manual grid (tp in {1,2,4,8}, pp
# dividing the layers, dp the rest, ZeRO-1 on/off, recompute on/off, micro-
# batches of 1-8 sequences a rank), both priced by the same cost model, on
# H100 nodes of 8 at the device counts given. One JSON line per row to
# $OUT.jsonl, a markdown table to stdout.
# Usage: benchmarks/bench_grid.sh [BUILD_DIR] [OUT]
#   OUT: path prefix of the results (default build/bench/NAME, untracked; the
#   tables in docs/benchmarks.md were recorded with OUT=benchmarks/results/NAME)
#   MODELS="gpt3-1.3b ..." DEVICES="8 64" TIME_LIMIT=120 (seconds per search)
set -euo pipefail
B=${1:-build}
OUT=${2:-build/bench/grid}
mkdir -p "$(dirname "$OUT")"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
: > "$OUT.jsonl"
echo "| model | devices | best grid point (tp·pp·dp, m, ZeRO, rc) | grid step s | planner plan | planner step s | vs grid | search s | --fastest plan | step s | vs grid | search s |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
for m in ${MODELS:-gpt3-1.3b gpt3-13b gpt3-175b llama2-70b}; do
  "$B/planner-zoo" "$m" > "$T/m.json"
  for d in ${DEVICES:-8 64 512 4096}; do
    "$B/planner-bench-grid" "$T/m.json" --cluster "h100x8:$((d / 8))" \
      --time-limit "${TIME_LIMIT:-120}" > "$T/row" 2> "$T/err" || true
    cat "$T/row" >> "$OUT.jsonl"
    jq -r '
      def cfg: "tp\(.tp)·pp\(.pp)·dp\(.dp), m \(.micro_batches), ZeRO \(.zero), rc \(.recompute)";
      def plan($p): if $p == null then "| — | | | "
        elif $p.error then "| \($p.error | .[0:60]) | | | \($p.wall_seconds | . * 10 | round / 10) "
        else "| \($p | cfg) | \($p.step_seconds) | \(if .grid.best then ($p.step_seconds / .grid.best.step_seconds | . * 10000 | round / 10000) else "" end) | \($p.search_seconds | . * 100 | round / 100) " end;
      "| \(.model) | \(.devices) | \(if .grid.best then (.grid.best | cfg) else "none fits" end) | \(.grid.best.step_seconds // "") "
      + plan(.planner) + (if .planner_fastest then plan(.planner_fastest) else "| same | | | " end) + "|"' "$T/row"
  done
done
