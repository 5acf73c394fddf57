#!/usr/bin/env bash
# ilp (GLPK) against CBC, the solver Alpa, Colossal-AI and PyTorch AutoParallel
# use, on the same instance: GPT-3 1.3B (batch 16 sequences) on 8 and 64
# devices, without and with a binding memory limit. CBC runs on the LP file
# `planner search --mode ilp --dump-lp` writes (after planner's dominance
# presolve, before its Lagrangian fixing, which is part of ilp's method);
# dp's optimum is the reference. Objectives in seconds. Writes a markdown table.
# Usage: benchmarks/bench_ilp.sh [BUILD_DIR]   (needs coinor-cbc)
# env: ILP_LIMIT_S (60), CBC_LIMIT_S (300), ROWS ("8:none 8:36GiB 64:none 64:7GiB")
set -euo pipefail
B=${1:-build}
ILP_LIMIT_S=${ILP_LIMIT_S:-60}
CBC_LIMIT_S=${CBC_LIMIT_S:-300}
command -v cbc > /dev/null || { echo "bench_ilp.sh: needs cbc (apt-get install coinor-cbc)" >&2; exit 2; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
"$B/planner-zoo" gpt3-1.3b --batch 16 > "$T/m.json"
echo "| devices | memory limit | columns (CBC's program) | columns (ilp's, after its fixing) | ilp s | ilp step s | ilp result | CBC s | CBC objective s | CBC result | dp step s (proven) |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
ROWS=${ROWS:-"8:none 8:36GiB 64:none 64:7GiB"}
for row in $ROWS; do
  d=${row%%:*} lim=${row#*:}
  "$B/planner" search "$T/m.json" --devices "$d" --memory-limit "$lim" --memory-reserve 0 --pareto-cap 100000 \
    --time-limit 600 -o "$T/dp.json" > /dev/null
  /usr/bin/time -f "%e" -o "$T/t" "$B/planner" search "$T/m.json" --devices "$d" \
    --memory-limit "$lim" --memory-reserve 0 --mode ilp --time-limit "$ILP_LIMIT_S" --progress \
    -o "$T/ilp.json" > /dev/null 2> "$T/err" || true
  cols=$(grep -o "[0-9]* columns," "$T/err" | cut -d' ' -f1 | tail -1 || true)
  if [ -s "$T/ilp.json" ]; then
    ilp_step=$(jq .cost.step_seconds "$T/ilp.json")
    ilp_res=$(jq -r 'if .search.optimal then "optimal" else .search.why end' "$T/ilp.json")
  else
    ilp_step="-" ilp_res=$(grep -v "^planner: ilp:" "$T/err" | tail -1)
  fi
  "$B/planner" search "$T/m.json" --devices "$d" --memory-limit "$lim" --memory-reserve 0 --mode ilp \
    --time-limit 30 --dump-lp "$T/i.lp" > /dev/null 2>&1 || true
  lp_cols=$(grep -o "\b[xyn][0-9][0-9_]*" "$T/i.lp" | sort -u | wc -l)
  # CBC's -sec does not bound its LP solve: stop it 60 s past the limit
  /usr/bin/time -f "%e" -o "$T/tc" timeout "$((CBC_LIMIT_S + 60))" \
    cbc "$T/i.lp" -sec "$CBC_LIMIT_S" -solve -quit > "$T/cbc" 2>&1 || true
  cbc_obj=$( (grep -o "Objective value: *[-0-9.e+]*" "$T/cbc" | tail -1 | awk '{print $3 / 1e6}') || true)
  cbc_res=$(grep -m1 -o "Result - .*" "$T/cbc" | sed 's/Result - //' || true)
  [ -n "$cbc_res" ] || cbc_res="stopped $((CBC_LIMIT_S + 60)) s in, no result"
  printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s (%s) |\n" "$d" "$lim" "$lp_cols" "${cols:--}" \
    "$(tail -1 "$T/t")" "$ilp_step" "$ilp_res" "$(tail -1 "$T/tc")" "${cbc_obj:--}" \
    "${cbc_res:-see log}" "$(jq .cost.step_seconds "$T/dp.json")" "$(jq .search.optimal "$T/dp.json")"
  rm -f "$T/ilp.json" "$T/i.lp"
done
