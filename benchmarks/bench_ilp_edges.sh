#!/usr/bin/env bash
# ilp's two edge encodings on the same instances (GPT-3 1.3B, batch 16
# sequences): flow (per edge, columns over the distinct rows x columns of its
# cost table with transportation rows: the default) against cost (one cost
# column per edge, bounded below by a big-M row per class of the consumer's
# strategies). Same presolve, Lagrangian step and GLPK pipeline; the LP bound
# (before branch and bound) shows the difference. Writes a markdown table.
# Usage: benchmarks/bench_ilp_edges.sh [BUILD_DIR]
# env: ILP_LIMIT_S (120), ROWS ("8:none 8:36GiB 64:none 64:7GiB")
set -euo pipefail
B=${1:-build}
ILP_LIMIT_S=${ILP_LIMIT_S:-120}
ROWS=${ROWS:-"8:none 8:36GiB 64:none 64:7GiB"}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
"$B/planner-zoo" gpt3-1.3b --batch 16 > "$T/m.json"
echo "| devices | memory limit | encoding | columns | rows | nonzeros | LP bound s | ilp s | step s | result |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for row in $ROWS; do
  d=${row%%:*} lim=${row#*:}
  for enc in flow cost; do
    /usr/bin/time -f "%e" -o "$T/t" "$B/planner" search "$T/m.json" --devices "$d" \
      --memory-limit "$lim" --memory-reserve 0 --mode ilp --ilp-edges "$enc" --time-limit "$ILP_LIMIT_S" \
      --progress -o "$T/p.json" > /dev/null 2> "$T/err" || true
    size=$(grep -o "[0-9]* columns, [0-9]* rows, [0-9]* nonzeros" "$T/err" | tail -1 |
      awk '{print $1 " | " $3 " | " $5}' || true)
    lpb=$(grep -o "LP bound [0-9.e-]*" "$T/err" | tail -1 | awk '{print $3}' || true)
    if [ -s "$T/p.json" ]; then
      step=$(jq .cost.step_seconds "$T/p.json")
      res=$(jq -r 'if .search.optimal then "optimal: " + .search.why else .search.why end' "$T/p.json")
    else
      step="-" res=$(tail -1 "$T/err")
    fi
    printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n" "$d" "$lim" "$enc" "${size:-- | - | -}" \
      "${lpb:--}" "$(tail -1 "$T/t")" "$step" "$res"
    rm -f "$T/p.json"
  done
done
