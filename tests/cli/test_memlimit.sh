#!/usr/bin/env bash
# cli::memlimit -- a rank under a memory limit too small for OpenBLAS's
# buffers (ulimit -v) ends with exit 4 and a message instead of hanging
# (OpenBLAS retries mmap forever; planner/mmap_guard.c); a rank's exit 4 ends
# an MPI job (test_mpi's failing rank). ulimit -v cannot hold AddressSanitizer's shadow memory:
# under ASan this exits 77 (skipped), and .ci/run runs it on the release build.
# Usage: test_memlimit.sh PLANNER SOURCE_DIR
set -u
P=$1 SRC=$2
if ldd "$P" 2> /dev/null | grep -q "libasan\|libtsan"; then
  echo "skipped: $P is built with a sanitizer (ulimit -v cannot hold its shadow memory)"
  exit 77
fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
M=$SRC/tests/fixtures/models/gpt-tiny.json
export OPENBLAS_NUM_THREADS=1 # its buffers, whatever the machine's cores
"$P" search "$M" --devices 1 -o "$T/one.json" > /dev/null 2>&1
"$P" search "$M" --devices 2 -o "$T/two.json" > /dev/null 2>&1
(ulimit -v 200000 && timeout 60 "$P" run "$M" --strategy "$T/one.json" --steps 1 > /dev/null 2> "$T/err"
 echo $? > "$T/rc")
check "run under ulimit -v 200 MB: exit 4 saying OpenBLAS's buffers do not fit (not a hang)" \
  '[ "$(cat "$T/rc")" = 4 ] && grep -q "out of memory: mmap refused" "$T/err"'
(ulimit -v 1000000 && timeout 60 "$P" run "$M" --strategy "$T/one.json" --steps 1 > /dev/null 2>&1
 echo $? > "$T/rc")
check "run under ulimit -v 1 GB (room for the buffers): exit 0" '[ "$(cat "$T/rc")" = 0 ]'
finish
