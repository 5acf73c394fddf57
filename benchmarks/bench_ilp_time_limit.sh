#!/usr/bin/env bash
# How closely ilp keeps --time-limit: GPT-3 1.3B (batch 16 sequences), where
# the proof takes longer than the limits tried, on 64 devices without a memory
# limit, at 6 GiB and 7.5 GiB (duality gaps), and on 512 devices. Wall time of
# the whole command (process start and reading the model included) against
# the limit, and the step the limit stopped. Writes a markdown table.
# Usage: benchmarks/bench_ilp_time_limit.sh [BUILD_DIR]
# Then whole-job searches (--job, inner dp and ilp) of Llama-2 70B on 8 nodes
# of 8 H100 under JOB_LIMITS: the limit bounds the whole outer search, each
# inner search gets what is left of it.
# env: LIMITS ("0.3 1 3 10"), JOB_LIMITS ("5 20")
set -euo pipefail
B=${1:-build}
LIMITS=${LIMITS:-"0.3 1 3 10"}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
"$B/planner-zoo" gpt3-1.3b --batch 16 --dropout 0 > "$T/m.json"
echo "| devices | memory limit | time limit s | wall s | over s | exit | result |"
echo "|---|---|---|---|---|---|---|"
for inst in 64:none 64:6GiB 64:7.5GiB 512:none; do
  d=${inst%%:*} lim=${inst#*:}
  for tl in $LIMITS; do
    rc=0
    /usr/bin/time -f "%e" -o "$T/t" "$B/planner" search "$T/m.json" --devices "$d" \
      --memory-limit "$lim" --memory-reserve 0 --mode ilp --time-limit "$tl" -o "$T/p.json" > /dev/null 2> "$T/err" || rc=$?
    wall=$(tail -1 "$T/t")
    if [ -s "$T/p.json" ]; then
      res=$(jq -r 'if .search.optimal then "optimal" else .search.why end' "$T/p.json")
    else
      res=$(grep -v "^Command exited" "$T/err" | tail -1)
    fi
    printf "| %s | %s | %s | %s | %s | %s | %s |\n" "$d" "$lim" "$tl" "$wall" \
      "$(awk -v w="$wall" -v l="$tl" 'BEGIN { printf "%+.2f", w - l }')" "$rc" "$res"
    rm -f "$T/p.json"
  done
done

"$B/planner-zoo" llama2-70b > "$T/l.json"
echo
echo "| whole job, Llama-2 70B on h100x8:8 | time limit s | wall s | over s | exit | step s | result |"
echo "|---|---|---|---|---|---|---|"
for mode in dp ilp; do
  for tl in ${JOB_LIMITS:-5 20}; do
    rc=0
    /usr/bin/time -f "%e" -o "$T/t" "$B/planner" search "$T/l.json" --cluster h100x8:8 --job \
      --mode "$mode" --time-limit "$tl" -o "$T/p.json" > /dev/null 2> "$T/err" || rc=$?
    wall=$(tail -1 "$T/t")
    step="" res=$(grep -v "^Command exited" "$T/err" | tail -1 || true)
    if [ -s "$T/p.json" ]; then
      step=$(jq .cost.step_seconds "$T/p.json")
      res=$(jq -r 'if .search.optimal then "optimal" else (.search.why | sub(".*; the time limit"; "the time limit")) end' "$T/p.json")
    fi
    printf "| --mode %s | %s | %s | %s | %s | %s | %s |\n" "$mode" "$tl" "$wall" \
      "$(awk -v w="$wall" -v l="$tl" 'BEGIN { printf "%+.2f", w - l }')" "$rc" "$step" "$res"
    rm -f "$T/p.json"
  done
done
