#!/usr/bin/env bash
# Runs every libFuzzer target of tests/fuzz for SECONDS each (CI: a short
# budget; benchmarks/bench_fuzz.sh: long campaigns), starting from the
# committed corpus and regression inputs, with the target's dictionary. The
# corpus grows in a scratch copy, never in the repository. A finding fails
# the run and is kept (its path is printed) to become a regression input in
# tests/fuzz/regress/TARGET.
# Usage: tests/fuzz/run.sh BUILD_FUZZ_DIR [SECONDS] [TARGET...]
#   BUILD_FUZZ_DIR: configured with CC=clang -DPL_FUZZ=ON (see .ci/run)
#   STATS=FILE appends one line per target: name, seconds, executions,
#   coverage (edges), features, corpus size.
set -uo pipefail
B=${1:?usage: tests/fuzz/run.sh BUILD_FUZZ_DIR [SECONDS] [TARGET...]}
SECS=${2:-20}
shift $(( $# >= 2 ? 2 : $# ))
SRC=$(cd "$(dirname "$0")" && pwd)
# by default every target built (tests/fuzz/CMakeLists.txt lists them)
TARGETS=${*:-$(ls "$B/tests/fuzz" 2> /dev/null | sed -n 's/^fuzz_//p' | sort)}
[ -n "$TARGETS" ] || { echo "fuzz: no fuzz_* binaries in $B/tests/fuzz (cmake --build $B --target fuzzers)" >&2; exit 2; }
OUT=$(mktemp -d /tmp/pl-fuzz-XXXXXX)
fail=0
for t in $TARGETS; do
  bin="$B/tests/fuzz/fuzz_$t"
  [ -x "$bin" ] || { echo "fuzz: $bin is not built" >&2; exit 2; }
  mkdir -p "$OUT/$t/corpus" "$OUT/$t/found"
  cp "$SRC/corpus/$t/"* "$SRC/regress/$t/"* "$OUT/$t/corpus/" 2> /dev/null
  dict=()
  [ -f "$SRC/dict/$t.dict" ] && dict=(-dict="$SRC/dict/$t.dict")
  # -timeout=120: a plan for millions of devices lists ~100 MB of groups
  # (15 s in a release build, several times that instrumented)
  # -close_fd_mask=3: the planner's own messages stay out of the log
  # (libFuzzer keeps its reports); leaks are findings
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
  "$bin" "$OUT/$t/corpus" "${dict[@]}" -max_total_time="$SECS" -timeout=120 -rss_limit_mb=4096 \
    -max_len=65536 -close_fd_mask=3 -print_final_stats=1 -artifact_prefix="$OUT/$t/found/" \
    > "$OUT/$t/log" 2>&1
  rc=$?
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$OUT/$t/log" | grep -o '[0-9]*$')
  cov=$(grep -o 'cov: [0-9]*' "$OUT/$t/log" | tail -1 | grep -o '[0-9]*')
  ft=$(grep -o 'ft: [0-9]*' "$OUT/$t/log" | tail -1 | grep -o '[0-9]*')
  n=$(ls "$OUT/$t/corpus" | wc -l)
  echo "fuzz $t: ${execs:-?} executions in ${SECS} s, coverage ${cov:-?} edges, ${ft:-?} features, corpus $n"
  [ -n "${STATS:-}" ] && echo "$t $SECS ${execs:-0} ${cov:-0} ${ft:-0} $n" >> "$STATS"
  # slow units (libFuzzer's note of an input over 10 s: here, plans for millions of
  # devices) are reported, not failures; crashes, leaks, timeouts and OOMs are
  slow=$(ls "$OUT/$t/found" | grep -c '^slow-unit-' || true)
  [ "$slow" -gt 0 ] && echo "fuzz $t: $slow slow inputs (over 10 s) in $OUT/$t/found"
  if [ $rc -ne 0 ] || [ -n "$(ls "$OUT/$t/found" | grep -v '^slow-unit-')" ]; then
    echo "fuzz $t: FOUND a problem (exit $rc); inputs in $OUT/$t/found, log $OUT/$t/log:" >&2
    grep -A12 -m1 "ERROR\|==ERROR\|runtime error\|deadly signal\|timeout" "$OUT/$t/log" >&2
    fail=1
  fi
done
[ $fail -eq 0 ] && [ -z "$(ls "$OUT"/*/found 2> /dev/null)" ] && rm -rf "$OUT"
exit $fail
