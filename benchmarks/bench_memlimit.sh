#!/usr/bin/env bash
# Memory-constrained dp: GPT-3 1.3B (batch 16 sequences) on one node of 8
# devices, limits from the least-memory plan up to the fastest plan's
# footprint, at two Pareto caps. Writes a markdown table.
# Usage: benchmarks/bench_memlimit.sh [BUILD_DIR]
set -euo pipefail
B=${1:-build}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
"$B/planner-zoo" gpt3-1.3b --batch 16 > "$T/m.json"
"$B/planner" search "$T/m.json" --devices 8 --memory-limit none -o "$T/free.json" > /dev/null
free_mem=$(jq .cost.peak_memory_bytes "$T/free.json")
free_step=$(jq .cost.step_seconds "$T/free.json")
echo "Unconstrained: step $free_step s, $(jq -n "$free_mem/1073741824*100|round/100") GiB."
echo
echo "| limit GiB | cap | search s | step s | vs unconstrained | peak GiB | proven optimal |"
echo "|---|---|---|---|---|---|---|"
for lim in 40 36 32; do
  for cap in 256 4096; do
    /usr/bin/time -f "%e" -o "$T/t" "$B/planner" search "$T/m.json" --devices 8 \
      --memory-reserve 0 --memory-limit "${lim}GiB" --pareto-cap "$cap" -o "$T/p.json" > /dev/null 2> "$T/err" || true
    if [ -s "$T/p.json" ]; then
      printf "| %s | %s | %s | %.6g | %+.2f%% | %.2f | %s |\n" "$lim" "$cap" "$(tail -1 "$T/t")" \
        "$(jq .cost.step_seconds "$T/p.json")" \
        "$(jq -n "($(jq .cost.step_seconds "$T/p.json") / $free_step - 1) * 100")" \
        "$(jq -n "$(jq .cost.peak_memory_bytes "$T/p.json") / 1073741824")" \
        "$(jq .search.optimal "$T/p.json")"
    else
      printf "| %s | %s | %s | exit 3 | | | %s |\n" "$lim" "$cap" "$(tail -1 "$T/t")" "$(head -c 90 "$T/err")"
    fi
    rm -f "$T/p.json"
  done
done
