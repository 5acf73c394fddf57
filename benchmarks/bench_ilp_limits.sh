#!/usr/bin/env bash
# ilp against dp across memory limits: GPT-3 1.3B (batch 16 sequences) on
# DEVICES devices, one row per limit. ilp proves the optimum fast where the
# Lagrangian bound (dp under a memory price) is close to the best plan, and
# runs to its time limit where the duality gap is large; dp (default Pareto
# cap) is the comparison. Writes a markdown table.
# Usage: benchmarks/bench_ilp_limits.sh [BUILD_DIR]
# env: DEVICES (64), LIMITS ("5GiB 5.5GiB 6GiB 6.5GiB 7GiB 7.5GiB 8GiB 9GiB"), ILP_LIMIT_S (60)
set -euo pipefail
B=${1:-build}
DEVICES=${DEVICES:-64}
LIMITS=${LIMITS:-"5GiB 5.5GiB 6GiB 6.5GiB 7GiB 7.5GiB 8GiB 9GiB"}
ILP_LIMIT_S=${ILP_LIMIT_S:-60}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
"$B/planner-zoo" gpt3-1.3b --batch 16 > "$T/m.json"
echo "| limit | Lagrangian bound s | strategies left of | columns | ilp s | ilp step s | ilp result | dp s | dp step s | dp proven |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for lim in $LIMITS; do
  /usr/bin/time -f "%e" -o "$T/t" "$B/planner" search "$T/m.json" --devices "$DEVICES" \
    --memory-limit "$lim" --memory-reserve 0 --mode ilp --time-limit "$ILP_LIMIT_S" --progress \
    -o "$T/ilp.json" > /dev/null 2> "$T/err" || true
  lag=$(grep -o "Lagrangian bound [0-9.e-]*" "$T/err" | awk '{print $3}' || true)
  kept=$(grep -o "presolve kept [0-9]* of [0-9]*" "$T/err" | tail -1 | awk '{print $3 " of " $5}' || true)
  cols=$(grep -o "[0-9]* columns," "$T/err" | tail -1 | cut -d' ' -f1 || true)
  if [ -s "$T/ilp.json" ]; then
    ilp_step=$(jq .cost.step_seconds "$T/ilp.json")
    ilp_res=$(jq -r 'if .search.optimal then "optimal" else .search.why end' "$T/ilp.json")
  else
    ilp_step="-" ilp_res=$(tail -1 "$T/err")
  fi
  /usr/bin/time -f "%e" -o "$T/td" "$B/planner" search "$T/m.json" --devices "$DEVICES" \
    --memory-limit "$lim" --memory-reserve 0 -o "$T/dp.json" > /dev/null 2>&1 || true
  printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n" "$lim" "${lag:--}" "${kept:--}" \
    "${cols:--}" "$(tail -1 "$T/t")" "$ilp_step" "$ilp_res" "$(tail -1 "$T/td")" \
    "$(jq .cost.step_seconds "$T/dp.json")" "$(jq .search.optimal "$T/dp.json")"
  rm -f "$T/ilp.json" "$T/dp.json"
done
