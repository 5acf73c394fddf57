#!/usr/bin/env bash
# Issue 47, item 4: the whole-job search's CPU seconds (user + sys,
# /usr/bin/time) and peak RSS per row, with the load average beside it (a
# shared VM's CPU times vary with it). Rows: the grid's searches with a plan
# (GPT-3 1.3B on 8-4096 devices; GPT-3 175B, Llama-2 70B and Mixtral 8x7B on
# 64-4096; `planner search --job --time-limit 120` and with --fastest) and the
# frontier's (GPT-3 175B, Llama-3 405B -- the Llama 3 paper's shape and 16M-token
# batch -- and Mixtral 8x7B on 16,384, 65,536 and 131,072 devices; `--job
# --time-limit 600`), H100 nodes of 8. One line per row to OUT/times.tsv (name,
# exit status, load average, user s, sys s, peak RSS KiB, the search's own
# clock in s -- the checkpoint's search.seconds, what item 4 bounds); each
# checkpoint to OUT/NAME.ckpt.
# Usage: benchmarks/bench_scale.sh [BUILD_DIR] [OUT] [grid|frontier|all]
#        benchmarks/bench_scale.sh --compare OUT_A OUT_B
#   --compare: every checkpoint of run A against run B's, without the search's
#   wall time (search.seconds); prints the rows that differ, exit 1 if any.
set -uo pipefail
if [ "${1:-}" = --compare ]; then
  bad=0
  for f in "$2"/*.ckpt; do
    b="$3/$(basename "$f")"
    if ! cmp -s <(jq -S 'del(.search.seconds)' "$f") <(jq -S 'del(.search.seconds)' "$b"); then
      echo "differs: $(basename "$f" .ckpt)"
      bad=1
    fi
  done
  exit $bad
fi
B=${1:-build}
OUT=${2:-build/bench/scale}
WHAT=${3:-all}
mkdir -p "$OUT/models"
: > "$OUT/times.tsv"
for m in gpt3-1.3b gpt3-175b llama2-70b mixtral-8x7b; do
  "$B/planner-zoo" "$m" > "$OUT/models/$m.json"
done
"$B/planner-zoo" llama2-70b --layers 126 --hidden 16384 --heads 128 --kv-heads 8 --ffn 53248 \
  --vocab 128256 --seq 8192 --batch 2048 > "$OUT/models/llama3-405b.json"
row() { # NAME MODEL DEVICES OPTIONS...
  local name=$1 model=$2 d=$3
  shift 3
  /usr/bin/time -f '%U %S %M' -o "$OUT/$name.time" "$B/planner" search "$OUT/models/$model.json" \
    --cluster "h100x8:$((d / 8))" --job "$@" -o "$OUT/$name.ckpt" > "$OUT/$name.out" 2>&1
  local rc=$? secs=""
  [ $rc -eq 0 ] && secs=$(jq -r '.search.seconds // empty' "$OUT/$name.ckpt" 2> /dev/null)
  printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$rc" "$(cut -d' ' -f1 /proc/loadavg)" \
    "$(tail -1 "$OUT/$name.time" | tr ' ' '\t')" "$secs" >> "$OUT/times.tsv"
}
if [ "$WHAT" != frontier ]; then
  for m in gpt3-1.3b gpt3-175b llama2-70b mixtral-8x7b; do
    for d in 8 64 512 4096; do
      [ "$m" != gpt3-1.3b ] && [ "$d" = 8 ] && continue # no plan fits 8 H100s
      row "$m@$d" "$m" "$d" --time-limit 120
      row "$m@$d-fastest" "$m" "$d" --time-limit 120 --fastest
    done
  done
fi
if [ "$WHAT" != grid ]; then
  for m in gpt3-175b llama3-405b mixtral-8x7b; do
    for d in 16384 65536 131072; do
      row "$m@$d" "$m" "$d" --time-limit 600
    done
  done
fi
awk -F'\t' '{ s += $4 + $5; if ($7 > w) { w = $7; wn = $1 } }
  END { printf "%d rows, %.1f CPU s in all; the slowest search %s s (%s)\n", NR, s, w, wn }' \
  "$OUT/times.tsv"
