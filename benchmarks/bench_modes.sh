#!/usr/bin/env bash
# Compares search modes on the zoo: model x devices x mode -> search seconds,
# predicted step seconds, peak memory per device, ratio to dp. No memory
# limit (the zoo's paper batches do not fit without pipeline/ZeRO: --job).
# Writes CSV to $OUT.csv and a markdown table to stdout.
# Usage: benchmarks/bench_modes.sh [BUILD_DIR] [OUT]
#   OUT: path prefix of the results (default build/bench/NAME, untracked; the
#   tables in docs/benchmarks.md were recorded with OUT=benchmarks/results/NAME)
set -euo pipefail
B=${1:-build}
OUT=${2:-build/bench/modes}
mkdir -p "$(dirname "$OUT")"
MODES=${MODES:-dp rec}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
echo "model,devices,mode,search_seconds,step_seconds,peak_memory_bytes,ratio_to_dp,optimal" > "$OUT.csv"
echo "| model | devices | mode | search s | step s | peak GiB | ratio to dp | proven |"
echo "|---|---|---|---|---|---|---|---|"
for m in ${MODELS:-gpt3-1.3b gpt3-13b gpt3-175b llama2-7b bert-large}; do
  "$B/planner-zoo" "$m" > "$T/m.json"
  for d in ${DEVICES:-8 64 512}; do
    # the modes side by side: planner bench (one row per mode, or why it failed)
    "$B/planner" bench "$T/m.json" --devices "$d" --modes "$(echo $MODES | tr ' ' ,)" \
      --memory-limit none --time-limit "${TIME_LIMIT:-120}" --csv > "$T/b.csv" 2> "$T/err" || true
    dp=$(awk -F, '$1 == "dp" { print $3 }' "$T/b.csv")
    tail -n +2 "$T/b.csv" | while IFS=, read -r mode secs step mem _ opt error; do
      if [ -n "$error" ]; then echo "| $m | $d | $mode | $(echo "$error" | head -c 80) |||||"; continue; fi
      ratio=$( [ -n "$dp" ] && awk -v a="$step" -v b="$dp" 'BEGIN { printf "%.4f", a / b }' || echo "")
      echo "$m,$d,$mode,$secs,$step,$mem,$ratio,$opt" >> "$OUT.csv"
      printf "| %s | %s | %s | %s | %.5g | %.1f | %s | %s |\n" "$m" "$d" "$mode" "$secs" "$step" \
        "$(awk -v m="$mem" 'BEGIN { print m / 1073741824 }')" "$ratio" "$opt"
    done
  done
done
# plot: search seconds per row and mode (gnuplot-nox from Debian, if installed)
if command -v gnuplot > /dev/null; then
  awk -F, 'NR > 1 { key = $1 "@" $2; if (!(key in seen)) { seen[key] = ++n; name[n] = key }
                    t[seen[key], $3] = $4 }
           END { print "row dp rec"; for (i = 1; i <= n; i++) print name[i], t[i, "dp"], t[i, "rec"] }' \
    "$OUT.csv" > "$T/plot.dat"
  gnuplot <<GP
set terminal svg size 900,420 font "sans,10" noenhanced
set output "$OUT.svg"
set title "search time by mode (2-core machine)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set logscale y
set ylabel "seconds"
set xtics rotate by -40 scale 0
set key top left
plot "$T/plot.dat" using 2:xtic(1) title columnheader(2), "" using 3 title columnheader(3)
GP
fi
