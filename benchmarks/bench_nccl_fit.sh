#!/usr/bin/env bash
# How the nccl-tests fit scales with the log: a recorded log's header and
# ROWS synthetic rows (sizes 8 B apart, alpha 20 us, 300 GB/s), fitted by
# `planner calibrate --from-nccl-tests`. Markdown table on stdout.
# Usage: benchmarks/bench_nccl_fit.sh [BUILD_DIR]   env: ROWS ("1000 10000 100000")
set -euo pipefail
B=${1:-build}
SRC=$(cd "$(dirname "$0")/.." && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
F="$SRC/tests/fixtures/nccl/h100x8-single-node-allreduce.txt"
echo "| rows | wall s | max RSS MB |"
echo "|---|---|---|"
for n in ${ROWS:-1000 10000 100000}; do
  { sed -n 1,21p "$F"
    awk -v n="$n" 'BEGIN { for (i = 0; i < n; i++) { s = 8 * (i + 1); t = 20 + s / 3e5
      printf "%12d %12d     float     sum      -1 %8.2f %7.2f %7.2f       0 %8.2f %7.2f %7.2f       0\n",
        s, s / 4, t, s / t / 1e3, s / t / 1e3 * 1.75, t, s / t / 1e3, s / t / 1e3 * 1.75 } }'
  } > "$T/all_reduce.txt"
  /usr/bin/time -f "%e %M" -o "$T/t" "$B/planner" calibrate --from-nccl-tests "$T/all_reduce.txt" \
    -o "$T/c.json" > /dev/null 2>&1
  read -r wall rss < "$T/t"
  printf "| %s | %s | %.0f |\n" "$n" "$wall" "$(awk -v k="$rss" 'BEGIN { print k / 1024 }')"
done
