#!/usr/bin/env bash
# Every model in every mode (issue 47): the ONNX fixtures (imported with
# --batch 64; torchvision's 86 classification and segmentation models among
# them as tv_NAME), the zoo's transformers, a DenseNet-121-shaped graph
# (tests/cli/densenet_like.py) and, through planner-bench-rec, random graphs;
# per model, devices (8 and 64) and mode (dp, rec, ilp, propagate, auto,
# --job) the exit status, the wall seconds of the search command, the
# predicted step, whether the plan is proven, and whether the wall time kept
# to --time-limit T (at most 1.1 T + 1 s). Per-op modes run the zoo with
# --memory-limit none (its paper batches need pipelines or ZeRO: --job); the
# whole-job search with the device's memory. Writes CSV to $OUT.csv and a
# markdown table (rows that did not plan, and a summary per mode) to stdout.
# Usage: benchmarks/bench_every_model.sh [BUILD_DIR] [OUT]
#   env: TIME_LIMIT (default 30), DEVICES (default "8 64"), MODES,
#   MODELS (default: every fixture, the zoo's and densenet), RANDOM_GRAPHS (graphs
#   for planner-bench-rec, default 120; 0: none), ALL=1 prints every row
set -uo pipefail
B=${1:-build}
OUT=${2:-build/bench/every_model}
mkdir -p "$(dirname "$OUT")"
TL=${TIME_LIMIT:-30}
MODES=${MODES:-dp rec ilp propagate auto job}
DEVICES=${DEVICES:-8 64}
SRC=$(cd "$(dirname "$0")/.." && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# the models: NAME FILE [per-op memory limit]
: > "$T/models"
for f in "$SRC"/tests/fixtures/onnx/*.onnx "$SRC"/tests/fixtures/onnx/weighted/*.onnx \
  "$SRC"/tests/fixtures/onnx/unsupported/*.onnx; do
  n=$(basename "$f" .onnx)
  case $f in */weighted/*) n=weighted_$n ;; */unsupported/*) n=unsupported_$n ;; esac
  echo "$n $f onnx" >> "$T/models"
done
for f in "$SRC"/tests/fixtures/onnx/torchvision/*.onnx; do # torchvision's, as tv_NAME
  echo "tv_$(basename "$f" .onnx) $f onnx" >> "$T/models"
done
for z in gpt3-1.3b llama2-7b bert-large; do echo "$z zoo:$z none" >> "$T/models"; done
echo "densenet121-like densenet device" >> "$T/models"

echo "model,devices,mode,exit,wall_seconds,step_seconds,proven,within_limit,reason" > "$OUT.csv"
while read -r name src kind; do
  [ -n "${MODELS:-}" ] && [[ " $MODELS " != *" $name "* ]] && continue
  limit=()
  case $src in
    zoo:*) "$B/planner-zoo" "${src#zoo:}" > "$T/m.json"; limit=(--memory-limit none) ;;
    densenet) python3 "$SRC/tests/cli/densenet_like.py" 64 > "$T/m.json" ;;
    *)
      if ! "$B/planner" import "$src" --batch 64 -o "$T/m.json" > /dev/null 2> "$T/ierr" &&
        ! "$B/planner" import "$src" --batch 64 --loss none -o "$T/m.json" > /dev/null 2>> "$T/ierr"; then
        why=$(head -1 "$T/ierr" | sed 's/^planner: [^:]*: //' | cut -c1-90 | tr ',|' ';/')
        for d in $DEVICES; do
          echo "$name,$d,import,2,,,,,$why" >> "$OUT.csv"
        done
        continue
      fi
      ;;
  esac
  for d in $DEVICES; do
    for m in $MODES; do
      if [ "$m" = job ]; then args=(--job); else args=(--mode "$m" "${limit[@]}"); fi
      rm -f "$T/plan.json"
      s=$(date +%s.%N)
      "$B/planner" search "$T/m.json" --devices "$d" "${args[@]}" --time-limit "$TL" \
        -o "$T/plan.json" > /dev/null 2> "$T/err"
      rc=$?
      e=$(date +%s.%N)
      wall=$(awk -v a="$s" -v b="$e" 'BEGIN { printf "%.2f", b - a }')
      within=$(awk -v w="$wall" -v t="$TL" 'BEGIN { print (w <= 1.1 * t + 1) ? "yes" : "no" }')
      step="" proven="" why=""
      if [ $rc -eq 0 ]; then
        step=$(jq -r '.cost.step_seconds' "$T/plan.json")
        proven=$(jq -r '.search.optimal // .search.proven // ""' "$T/plan.json")
      else
        why=$(head -1 "$T/err" | sed 's/^planner: [^:]*: //' | cut -c1-90 | tr ',|' ';/')
      fi
      echo "$name,$d,$m,$rc,$wall,$step,$proven,$within,$why" >> "$OUT.csv"
    done
  done
done < "$T/models"

echo "| model | devices | mode | exit | wall s | step s | proven | within 1.1 T + 1 | why not |"
echo "|---|---|---|---|---|---|---|---|---|"
tail -n +2 "$OUT.csv" | while IFS=, read -r name d m rc wall step proven within why; do
  if [ "${ALL:-0}" = 1 ] || [ "$rc" != 0 ] || [ "$within" = no ]; then
    echo "| $name | $d | $m | $rc | $wall | $step | $proven | $within | $why |"
  fi
done
echo
echo "| mode | rows | plans | stated refusals | failed | slowest wall s | over 1.1 T + 1 |"
echo "|---|---|---|---|---|---|---|"
for m in import $MODES; do
  awk -F, -v m="$m" 'NR > 1 && $3 == m {
      n++; if ($4 == 0) ok++
      else if (m == "import" || (m == "propagate" && $9 ~ /needs at least one annotated op/) ||
               (m == "dp" && $4 == 3 && $9 ~ /too entangle/)) st++
      else bad++
      if ($5 + 0 > w) w = $5 + 0; if ($8 == "no") over++ }
    END { if (n) printf "| %s | %d | %d | %d | %d | %.2f | %d |\n", m, n, ok, st, bad, w, over }' "$OUT.csv"
done
echo
echo "time limit $TL s; devices $DEVICES; $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
if [ "${RANDOM_GRAPHS:-120}" != 0 ] && [ -x "$B/planner-bench-rec" ]; then
  echo
  echo "random graphs (planner-bench-rec ${RANDOM_GRAPHS:-120} --all: dp, rec, ilp and brute where it runs):"
  "$B/planner-bench-rec" --all "${RANDOM_GRAPHS:-120}" | tail -2
fi
