#!/usr/bin/env bash
# --time-limit T holds on the grid's rows (issue 47): for each model of
# benchmarks/bench_grid.sh (the zoo's GPT-3 1.3B, 13B, 175B, Llama-2 70B and
# Mixtral 8x7B, on H100 nodes of 8 at 8-4096 devices), each search mode
# (the default, --mode dp, rec, ilp, auto, --job, --job --fastest) and each
# limit T, the wall seconds of `planner search --time-limit T` (reading the
# model included) against 1.1 T + 1 s, the exit status (0 a plan, 3 none
# found in time or none fits), whether the limit cut the search (the plan's
# search.why says so), and the plan's proven gap where it states one.
# bench_every_model.sh does the same over the ONNX fixtures, the zoo, a
# DenseNet-shaped graph and random graphs (TIME_LIMIT=T).
# Usage: benchmarks/bench_time_limit.sh [BUILD_DIR] [OUT]
#   env: LIMITS (default "1 5"), MODELS, DEVICES (default "8 64 512 4096"),
#   MODES (default "default dp rec ilp auto job fastest"); per-op modes plan
#   with --memory-limit none (the zoo's batches need pipelines or ZeRO)
# Writes CSV to $OUT.csv and a markdown summary to stdout.
set -uo pipefail
B=${1:-build}
OUT=${2:-build/bench/time_limit}
mkdir -p "$(dirname "$OUT")"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
MODES=${MODES:-default dp rec ilp auto job fastest}
echo "model,devices,mode,limit,exit,wall_seconds,within,cut,gap_percent,step_seconds" > "$OUT.csv"
for model in ${MODELS:-gpt3-1.3b gpt3-13b gpt3-175b llama2-70b mixtral-8x7b}; do
  "$B/planner-zoo" "$model" > "$T/m.json"
  for d in ${DEVICES:-8 64 512 4096}; do
    for tl in ${LIMITS:-1 5}; do
      for m in $MODES; do
        case $m in
          default) args=(--memory-limit none) ;;
          job) args=(--job) ;;
          fastest) args=(--job --fastest) ;;
          *) args=(--mode "$m" --memory-limit none) ;;
        esac
        rm -f "$T/plan.json"
        s=$(date +%s.%N)
        "$B/planner" search "$T/m.json" --cluster "h100x8:$((d / 8))" "${args[@]}" \
          --time-limit "$tl" -o "$T/plan.json" > /dev/null 2> "$T/err"
        rc=$?
        e=$(date +%s.%N)
        wall=$(awk -v a="$s" -v b="$e" 'BEGIN { printf "%.2f", b - a }')
        within=$(awk -v w="$wall" -v t="$tl" 'BEGIN { print (w <= 1.1 * t + 1) ? "yes" : "no" }')
        cut="" gap="" step=""
        if [ $rc -eq 0 ]; then
          why=$(jq -r '.search.why // ""' "$T/plan.json")
          step=$(jq -r '.cost.step_seconds' "$T/plan.json")
          case $why in *"time limit"*) cut=yes ;; *) cut=no ;; esac
          gap=$(sed -n 's/.*within \([0-9.]*\) % of.*/\1/p' <<< "$why" | head -1)
        elif grep -q "time limit" "$T/err"; then
          cut=yes
        fi
        echo "$model,$d,$m,$tl,$rc,$wall,$within,$cut,$gap,$step" >> "$OUT.csv"
      done
    done
  done
done
echo "| mode | limit s | rows | plans | cut by the limit | exit 3 | other exits | slowest wall s | 1.1 T + 1 | over it |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for m in $MODES; do
  for tl in ${LIMITS:-1 5}; do
    awk -F, -v m="$m" -v t="$tl" 'NR > 1 && $3 == m && $4 == t {
        n++; if ($5 == 0) ok++; else if ($5 == 3) three++; else other++
        if ($8 == "yes") cut++
        if ($6 + 0 > w) w = $6 + 0; if ($7 == "no") over++ }
      END { if (n) printf "| %s | %s | %d | %d | %d | %d | %d | %.2f | %.1f | %d |\n",
              m, t, n, ok, cut, three, other, w, 1.1 * t + 1, over }' "$OUT.csv"
  done
done
echo
awk -F, 'NR > 1 && $7 == "no" { printf "over: %s %s devices, %s, --time-limit %s: %s s (exit %s)\n", $1, $2, $3, $4, $6, $5 }' "$OUT.csv"
echo "$(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
