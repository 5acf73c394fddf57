#!/usr/bin/env bash
# dp search time on the GPT-3 shapes (paper table 2.1) for several device
# counts. Each row: the median of REPEAT runs of `planner search` (the
# search's own clock: candidate pricing + elimination, not JSON import) and
# the median wall time of the whole command; no memory limit, so the row
# measures the search itself. Writes a markdown table to stdout.
# Usage: benchmarks/bench_dp.sh [BUILD_DIR] [REPEAT]
set -euo pipefail
B=${1:-build}
REPEAT=${2:-5}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "| model | ops | devices | search s (median of $REPEAT) | wall s | step s (predicted) | peak memory GiB | layers solved once |"
echo "|---|---|---|---|---|---|---|---|"
for m in ${MODELS:-gpt3-1.3b gpt3-13b gpt3-175b}; do
  "$B/planner-zoo" "$m" > "$T/$m.json"
  ops=$(jq '.ops | length' "$T/$m.json")
  for d in ${DEVICES:-8 64 1024}; do
    : > "$T/s"; : > "$T/w"
    for _ in $(seq "$REPEAT"); do
      /usr/bin/time -f "%e" -o "$T/time" "$B/planner" search "$T/$m.json" --devices "$d" \
        --memory-limit none -o "$T/plan.json" > "$T/out"
      tail -1 "$T/time" >> "$T/w"
      sed -n 's/^search took \([0-9.]*\) s/\1/p' "$T/out" >> "$T/s"
    done
    step=$(jq .cost.step_seconds "$T/plan.json")
    mem=$(jq '.cost.peak_memory_bytes / 1073741824 | . * 100 | round / 100' "$T/plan.json")
    rep=$(jq '.search.repeated_layers // 0' "$T/plan.json")
    printf "| %s | %s | %s | %s | %s | %.4g | %s | %s |\n" "$m" "$ops" "$d" \
      "$(median < "$T/s")" "$(median < "$T/w")" "$step" "$mem" "$rep"
  done
done
