#!/usr/bin/env bash
# Allocation-failure injection: for each command, fail the first allocation
# of every allocation site in turn (PL_FAIL_ALLOC=site:K, graph/alloc.h).
# Each run must either exit 4 saying "out of memory" with no output file and
# no temporary file left, or exit 0 with exactly the output of a run without
# failures (it recovered). A crash, a sanitizer report (the suite runs under
# ASan/UBSan, leaks included) or any other exit fails the test.
# Usage: test_alloc.sh PLANNER SOURCE_DIR [CASE...]
set -uo pipefail
P=$1
SRC=$2
shift 2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
M="$SRC/examples/tiny-mlp.json"
"$P" search "$M" --devices 2 -o "$T/plan.json" > /dev/null || exit 1
log="$SRC/tests/fixtures/nccl/h100x8-single-node-allreduce.txt"
# name | arguments (OUT: the output file, if the command writes one)
cases=(
  "search|search $M --devices 2 -o OUT"
  "search-job|search $M --cluster h100x8:2 --job --pp 2 -o OUT"
  "search-cluster-file|search $M --cluster $SRC/tests/fixtures/cluster/cpu-x2-calibrated.json -o OUT"
  "cost|cost $M --strategy $T/plan.json"
  "explain|explain $T/plan.json"
  "run|run $M --strategy $T/plan.json --steps 1"
  "calibrate-log|calibrate --from-nccl-tests $log -o OUT"
  "topology-xml|topology --xml $SRC/tests/fixtures/topology/nvidia-dgx2-16xV100-nvswitch.xml"
  "check|check $T/plan.json --log $SRC/tests/fixtures/logs/megatron-lm-2020.log"
  "check-json|check $T/plan.json --log $SRC/tests/fixtures/logs/deepspeed-0.7.log --json"
)
fail=0 total=0
for c in "${cases[@]}"; do
  name=${c%%|*} args=${c#*|}
  [ $# -gt 0 ] && ! grep -qw -- "$name" <<< "$*" && continue
  mkdir -p "$T/$name"
  out="$T/$name/out.json"
  # the reference run, which also counts the sites
  PL_FAIL_ALLOC=site:1000000 "$P" ${args//OUT/$T/$name/ref.json} > "$T/$name/ref.stdout" 2> "$T/$name/ref.err"
  rc=$?
  n=$(grep -o 'pl_alloc: [0-9]*' "$T/$name/ref.err" | grep -o '[0-9]*$')
  if [ $rc -ne 0 ] || [ -z "$n" ]; then
    echo "not ok - $name: the run without failures exits $rc"; sed 's/^/# /' "$T/$name/ref.err"
    fail=1; continue
  fi
  bad=0
  for k in $(seq 1 "$n"); do
    rm -f "$out"
    PL_FAIL_ALLOC=site:$k "$P" ${args//OUT/$out} > "$T/$name/stdout" 2> "$T/$name/err"
    rc=$?
    total=$((total + 1))
    why=""
    if [ $rc -eq 4 ]; then
      grep -q "out of memory" "$T/$name/err" || why="exit 4 without 'out of memory'"
      [ -e "$out" ] && why="exit 4 but $out was written"
    elif [ $rc -eq 0 ]; then
      if grep -q "one failed" "$T/$name/err"; then
        if [ "$name" = run ]; then :   # measured times differ run to run
        elif grep -q OUT <<< "$args"; then
          cmp -s "$out" "$T/$name/ref.json" || why="exit 0 with an output that differs"
        else
          cmp -s "$T/$name/stdout" "$T/$name/ref.stdout" || why="exit 0 with an output that differs"
        fi
      fi
    else
      why="exit $rc"
    fi
    ls "$T/$name" | grep -q '\.tmp\.' && why="${why:+$why; }a temporary file was left"
    rm -f "$T/$name/"*.tmp.*
    if [ -n "$why" ]; then
      echo "not ok - $name: failing allocation site $k of $n: $why"
      grep -v "^pl_alloc:" "$T/$name/err" | head -12 | sed 's/^/# /'
      bad=1
    fi
  done
  [ $bad -eq 0 ] && echo "ok - $name: each of $n allocation sites failed in turn"
  [ $bad -ne 0 ] && fail=1
done
echo "# $total runs"
exit $fail
