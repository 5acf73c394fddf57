#!/usr/bin/env bash
# Cost-model fidelity on the cpu backend: calibrates the backend for 1, 2 and
# 4 ranks (`planner calibrate --backend cpu`), plans one GPT-style model
# (fp32) with several search modes, hand-made plans and whole-job plans
# (micro-batches, ZeRO 1 and 3, recompute, pipeline stages) on each rank count,
# runs every plan (`planner run`: the median of steps 2..N, the least over
# ROUNDS passes) and reports predicted
# against measured step time and their Spearman rank correlation.
# Writes CSV to $OUT.csv, a plot to $OUT.svg (gnuplot, if installed) and a
# markdown table to stdout.
# Usage: benchmarks/bench_fidelity.sh [BUILD_DIR] [OUT]
#   OUT: path prefix of the results (default build/bench/NAME, untracked; the
#   tables in docs/benchmarks.md were recorded with OUT=benchmarks/results/NAME)
# Env: RANKS="1 2 4", STEPS=9, ROUNDS=3, MODEL_ARGS (planner-zoo gpt-small arguments),
#   LAUNCH=mpi: plans of several ranks run as processes (mpirun -np R: MPI's
#   collectives) instead of threads, and are priced on a calibration taken the
#   same way (mpirun -np R planner calibrate --backend cpu).
#   CALIBRATED=PREFIX: take PREFIX-cpuR.json (an earlier run's OUT-cpuR.json on
#   the same machine) instead of calibrating again.
# Every run's row is appended to $OUT.runs.csv as it is measured, so an
# interrupted run keeps what it measured.
set -euo pipefail
B=${1:-build}
OUT=${2:-build/bench/fidelity}
mkdir -p "$(dirname "$OUT")"
STEPS=${STEPS:-9}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
"$B/planner-zoo" gpt-small ${MODEL_ARGS:---layers 2 --hidden 256 --heads 4 --head-dim 64 \
  --ffn 1024 --seq 64 --vocab 1024 --batch 8 --dtype float32} > "$T/m.json"

# hand-made plans: one annotated op, the rest propagated from it
annotate() { # NAME STRATEGY -> a partial checkpoint
  printf '{"format": "planner.strategy/1", "parallel_strategy_item": {"%s": {"parallel_strategy": %s}}}\n' "$1" "$2"
}

MPI=(mpirun --oversubscribe --bind-to none)
[ "$(id -u)" = 0 ] && MPI+=(--allow-run-as-root)
list=""
for r in ${RANKS:-1 2 4}; do
  if [ -n "${CALIBRATED:-}" ]; then
    cp "$CALIBRATED-cpu$r.json" "$T/cpu$r.json"
  elif [ "${LAUNCH:-}" = mpi ] && [ "$r" -gt 1 ]; then
    "${MPI[@]}" -np "$r" "$B/planner" calibrate --backend cpu -o "$T/cpu$r.json" > /dev/null 2>&1
  else
    "$B/planner" calibrate --backend cpu --ranks "$r" -o "$T/cpu$r.json" > /dev/null 2>&1
  fi
  [ "$T/cpu$r.json" -ef "$OUT-cpu$r.json" ] || cp "$T/cpu$r.json" "$OUT-cpu$r.json"
  plans="dp"
  "$B/planner" search "$T/m.json" --cluster "$T/cpu$r.json" --mode dp -o "$T/dp-$r.json" > /dev/null
  if [ "$r" -gt 1 ]; then
    plans="dp rec batch-split sequence-split column-split row-split replicated"
    "$B/planner" search "$T/m.json" --cluster "$T/cpu$r.json" --mode rec -o "$T/rec-$r.json" > /dev/null
    annotate l0.q "[[$r, 1, 1], [1, 1]]" > "$T/a-batch-split.json"
    annotate l0.q "[[1, $r, 1], [1, 1]]" > "$T/a-sequence-split.json"
    annotate l0.q "[[1, 1, 1], [1, $r]]" > "$T/a-column-split.json"
    annotate l0.q "[[1, 1, $r], [$r, 1]]" > "$T/a-row-split.json"
    for a in batch-split sequence-split column-split row-split; do
      "$B/planner" search "$T/m.json" --cluster "$T/cpu$r.json" --mode propagate \
        --load "$T/a-$a.json" -o "$T/$a-$r.json" > /dev/null
    done
    # every op unsplit: each rank computes the whole step
    jq '.parallel_strategy_item |= map_values(.parallel_strategy |= map(map(1)))' \
      "$T/dp-$r.json" > "$T/replicated-$r.json"
    # whole-job plans: micro-batches, ZeRO, recompute, pipeline stages (1F1B)
    job() { # NAME OPTIONS...
      local name=$1
      shift
      "$B/planner" search "$T/m.json" --cluster "$T/cpu$r.json" "$@" -o "$T/$name-$r.json" > /dev/null
      plans="$plans $name"
    }
    job micro2 --pp 1 --micro-batches 2
    job zero1 --pp 1 --zero 1 --micro-batches 2
    job zero3 --pp 1 --zero 3
    job recompute --pp 1 --recompute full
    job pp2 --pp 2 --micro-batches 4 --virtual-stages 1
    if [ "$r" -ge 4 ]; then job pp2dp2zero1 --pp 2 --dp 2 --zero 1 --micro-batches 2 --virtual-stages 1; fi
  fi
  for p in $plans; do list="$list $p-$r"; done
done

# ROUNDS passes over all plans, so a burst of noise on a shared machine hits
# different plans in different passes; a plan's time is its least median
echo "plan-ranks,predicted_seconds,measured_seconds,final_loss" > "$OUT.runs.csv"
for round in $(seq "${ROUNDS:-3}"); do
  for pr in $list; do
    launch=()
    [ "${LAUNCH:-}" = mpi ] && [ "${pr##*-}" -gt 1 ] && launch=("${MPI[@]}" -np "${pr##*-}")
    "${launch[@]}" "$B/planner" run "$T/m.json" --strategy "$T/$pr.json" --cluster "$T/cpu${pr##*-}.json" \
      --steps "$STEPS" --json > "$T/run.out"
    tail -n 1 "$T/run.out" | jq -r '[.predicted_step_seconds, .median_step_seconds] | @csv' \
      > "$T/row"
    echo "$pr,$(cat "$T/row"),$(tail -n 2 "$T/run.out" | head -n 1 | jq .loss)" >> "$OUT.runs.csv"
  done
done
echo "plan,ranks,predicted_seconds,measured_seconds,final_loss" > "$OUT.csv"
for pr in $list; do
  grep "^$pr," "$OUT.runs.csv" | sort -t, -k3 -g | head -n 1 |
    awk -F, -v OFS=, '{ n = split($1, a, "-"); r = a[n]; sub("-[0-9]+$", "", $1); print $1, r, $2, $3, $4 }' >> "$OUT.csv"
done

# Spearman: rank both columns (ties share their mean rank), Pearson of the
# ranks; over every plan, or (RANKS_OF=R) the plans of R ranks only
spearman_of() {
  awk -F, -v only="${1:-}" 'NR > 1 && (only == "" || $2 == only) { n++; p[n] = $3; m[n] = $4 }
  function rank(v, r,   i, j, less, eq) {
    for (i = 1; i <= n; i++) { less = 0; eq = 0
      for (j = 1; j <= n; j++) { if (v[j] < v[i]) less++; else if (v[j] == v[i]) eq++ }
      r[i] = less + (eq + 1) / 2 }
  }
  END { if (n < 3) { printf "-"; exit }
    rank(p, rp); rank(m, rm)
    for (i = 1; i <= n; i++) { sp += rp[i]; sm += rm[i] }
    sp /= n; sm /= n
    for (i = 1; i <= n; i++) { a += (rp[i] - sp) * (rm[i] - sm); b += (rp[i] - sp)^2; c += (rm[i] - sm)^2 }
    printf "%.3f (%d plans)", a / sqrt(b * c), n }' "$OUT.csv"
}
spearman=$(spearman_of)

echo "| plan | ranks | predicted s | measured s | measured / predicted | loss after $STEPS steps |"
echo "|---|---|---|---|---|---|"
awk -F, 'NR > 1 { printf "| %s | %s | %.4f | %.4f | %.2f | %s |\n", $1, $2, $3, $4, $4 / $3, $5 }' "$OUT.csv"
echo
echo "Spearman rank correlation (predicted vs measured): $spearman over every plan;"
for r in ${RANKS:-1 2 4}; do
  echo "  $r ranks: $(spearman_of "$r")"
done
# Whether each rank had a core of its own: the replicated plan computes the
# whole step on every rank, as the 1-rank plan does, so its step on R ranks
# over the 1-rank step is 1 where they do (the model's setting) and grows as
# ranks share cores
one=$(awk -F, '$1 == "dp" && $2 == 1 { print $4 }' "$OUT.csv")
if [ -n "$one" ]; then
  echo
  echo "Cores of their own (replicated plan's step on R ranks / the 1-rank step; 1 where each rank has a core):"
  awk -F, -v one="$one" '$1 == "replicated" { printf "  %s ranks: %.2f\n", $2, $4 / one }' "$OUT.csv"
fi

if command -v gnuplot > /dev/null; then
  gnuplot <<GP
set terminal svg size 640,480 font "sans,10" noenhanced
set output "$OUT.svg"
set title "cost-model fidelity, cpu backend (Spearman $spearman)"
set datafile separator ","
set xlabel "predicted step seconds"
set ylabel "measured step seconds"
set logscale xy
set key top left
f(x) = x
plot "$OUT.csv" skip 1 using 3:4 with points pt 7 ps 1.2 title "plans", f(x) with lines dt 2 title "measured = predicted"
GP
fi
