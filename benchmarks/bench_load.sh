#!/usr/bin/env bash
# How loading scales with the model: chains of N element-wise ops (a model
# file generated here, no Python), timed through `planner strategies` (load,
# build the problem, list one op's candidates). Markdown table on stdout.
# Usage: benchmarks/bench_load.sh [BUILD_DIR]   env: SIZES ("30000 100000 1000000")
# Then GPT-3 175B: the whole process of --help, a load, dp on 8 and 1024 devices.
set -euo pipefail
B=${1:-build}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
echo "| ops | file MB | wall s | max RSS MB |"
echo "|---|---|---|---|"
for n in ${SIZES:-30000 100000 1000000}; do
  awk -v n="$n" 'BEGIN {
    printf "{\"format\": \"planner.model/1\", \"name\": \"chain\", \"tensors\": {\"x\": {\"shape\": [8, 64], \"role\": \"input\"}}, \"ops\": ["
    prev = "x"
    for (i = 0; i < n; i++) {
      printf "%s{\"name\": \"r%d\", \"type\": \"Relu\", \"inputs\": [\"%s\"], \"outputs\": [\"t%d\"]}", (i ? ", " : ""), i, prev, i
      prev = "t" i
    }
    printf "], \"outputs\": [\"%s\"]}\n", prev
  }' > "$T/m.json"
  /usr/bin/time -f "%e %M" -o "$T/t" "$B/planner" strategies "$T/m.json" --op r0 --devices 2 > /dev/null
  read -r wall rss < "$T/t"
  printf "| %s | %.1f | %s | %.0f |\n" "$n" "$(stat -c %s "$T/m.json" | awk '{ print $1 / 1e6 }')" "$wall" "$(awk -v k="$rss" 'BEGIN { print k / 1024 }')"
done

# GPT-3 175B from the zoo (96 layers, 2598 ops): the whole process, best of 3
echo
echo "| GPT-3 175B | wall s | max RSS MB |"
echo "|---|---|---|"
"$B/planner-zoo" gpt3-175b > "$T/g.json"
best() { # label, planner arguments...
  local label=$1
  shift
  for _ in 1 2 3; do
    /usr/bin/time -f "%e %M" -o "$T/t" "$B/planner" "$@" > /dev/null 2>&1 || true
    cat "$T/t"
  done | sort -n | head -1 | awk -v l="$label" '{ printf "| %s | %.2f | %.0f |\n", l, $1, $2 / 1024 }'
}
best "planner --help" --help
best "load (strategies --op l0.q)" strategies "$T/g.json" --op l0.q --devices 2
best "search --mode dp --devices 8" search "$T/g.json" --mode dp --devices 8 --memory-limit none -o "$T/p.json"
best "search --mode dp --devices 1024" search "$T/g.json" --mode dp --devices 1024 --memory-limit none -o "$T/p.json"
