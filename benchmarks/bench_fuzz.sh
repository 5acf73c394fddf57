#!/usr/bin/env bash
# A fuzzing campaign: builds the libFuzzer targets with clang (build-fuzz/),
# runs each for SECONDS (default 600) and prints executions, coverage and
# corpus per target as a markdown table (docs/benchmarks.md records one).
# Usage: benchmarks/bench_fuzz.sh [SECONDS] [TARGET...]
#   JOBS=2 runs that many targets at once
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-600}
shift || true
CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPL_FUZZ=ON \
  -DPL_BUILD_TESTS=OFF -DPL_WITH_CUDA=OFF > /dev/null
cmake --build build-fuzz -j"$(nproc)" --target fuzzers > /dev/null
# every target built (tests/fuzz/CMakeLists.txt lists them), or those named
TARGETS=${*:-$(ls build-fuzz/tests/fuzz | sed -n 's/^fuzz_//p' | sort)}
STATS=$(mktemp)
trap 'rm -f "$STATS"' EXIT
fail=0
printf '%s\n' $TARGETS | xargs -P "${JOBS:-1}" -I{} env STATS="$STATS" tests/fuzz/run.sh build-fuzz "$SECS" {} || fail=1
echo "| target | seconds | executions | coverage (edges) | features | corpus |"
echo "|---|---|---|---|---|---|"
sort "$STATS" | awk '{ printf "| %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6 }'
exit $fail
