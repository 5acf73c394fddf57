#!/usr/bin/env bash
# cli::memlimit -- a rank under a memory limit too small for OpenBLAS's
# buffers (ulimit -v) ends with exit 4 and a message instead of hanging
# (OpenBLAS retries mmap forever; planner/mmap_guard.c); a rank's exit 4 ends
# an MPI job (test_mpi's failing rank); loading takes memory in proportion to the model
# (max RSS bounds). ulimit -v cannot hold AddressSanitizer's shadow memory:
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
# the limit at which OpenBLAS's buffers stop fitting depends on the machine (its kernel for the
# CPU sets the buffer's size: about 150-200 MB on an AMD EPYC read as Haswell, over 200 MB on
# others): a ladder of limits, each run must end (no hang: timeout's 124 fails), and at least
# one of them must end with exit 4 and the message
ladder=""
for v in 100000 125000 150000 175000 200000 250000 300000 400000; do
  (ulimit -v $v && timeout 60 "$P" run "$M" --strategy "$T/one.json" --steps 1 > /dev/null 2> "$T/err"
   echo $? > "$T/rc")
  rc=$(cat "$T/rc")
  ladder="$ladder ${v%000}MB:$rc"
  if [ "$rc" = 4 ] && grep -q "out of memory: mmap refused" "$T/err"; then refused=1; fi
  [ "$rc" = 124 ] && hung=1
  [ "$rc" = 0 ] && break
done
check "run under ulimit -v limits too small for OpenBLAS's buffers: exit 4 saying so, never a hang (${ladder# })" \
  '[ "${refused:-0}" = 1 ] && [ "${hung:-0}" = 0 ]'
(ulimit -v 1000000 && timeout 60 "$P" run "$M" --strategy "$T/one.json" --steps 1 > /dev/null 2>&1
 echo $? > "$T/rc")
check "run under ulimit -v 1 GB (room for the buffers): exit 0" '[ "$(cat "$T/rc")" = 0 ]'

# --- memory in proportion to the model (issue 49 item 5), max RSS by /usr/bin/time (a sanitizer
# build's would be its shadow's): an op costs what it holds (attributes out of line and shared,
# 1,296 -> 416 bytes a record); an array sized by a count the file states costs nothing until written
if [ -x /usr/bin/time ]; then
  rss_kb() { /usr/bin/time -f %M -o "$T/rss" "$@" > /dev/null 2> "$T/err"; echo $? > "$T/rc"; tail -1 "$T/rss"; }
  awk 'BEGIN { printf "{\"format\": \"planner.model/1\", \"tensors\": {\"x\": {\"shape\": [8, 64], \"role\": \"input\"}}, \"ops\": ["
    for (i = 0; i < 100000; i++)
      printf "%s{\"name\": \"r%d\", \"type\": \"Relu\", \"inputs\": [\"%s\"], \"outputs\": [\"t%d\"]}", (i ? ", " : ""), i, (i ? "t" i - 1 : "x"), i
    printf "]}\n" }' > "$T/chain.json"
  kb=$(rss_kb "$P" strategies "$T/chain.json" --op r0 --devices 2)
  check "a chain of 10^5 ops loads in under 2,000 bytes an op of max RSS (${kb} KB; 2,630 before)" \
    '[ "$(cat "$T/rc")" = 0 ] && [ "$kb" -lt 200000 ]'
  awk 'BEGIN { printf "{\"format\": \"planner.model/1\", \"tensors\": {}, \"ops\": [0"
    for (i = 1; i < 1000000; i++) printf ",0"
    printf "]}" }' > "$T/ops.json"
  kb=$(rss_kb "$P" strategies "$T/ops.json" --op r0 --devices 2)
  check "a 2 MB file stating 10^6 ops that are none: exit 2 naming ops[0], under 200 MB of max RSS (${kb} KB; 1.4 GB before)" \
    '[ "$(cat "$T/rc")" = 2 ] && grep -q "ops\[0\]: expected an object" "$T/err" && [ "$kb" -lt 200000 ]'
  # a const's values read by the scanner, not a parsed node (84 bytes) a number
  awk 'BEGIN { printf "{\"format\": \"planner.model/1\", \"tensors\": {\"x\": {\"shape\": [1024, 1024], \"role\": \"input\"}"
    for (c = 0; c < 4; c++) {
      printf ", \"c%d\": {\"shape\": [1024, 1024], \"role\": \"const\", \"values\": [0", c
      for (i = 1; i < 1048576; i++) printf ",0"
      printf "]}"
    }
    printf "}, \"ops\": [{\"name\": \"a\", \"type\": \"Add\", \"inputs\": [\"x\", \"c0\"], \"outputs\": [\"y\"]}]}" }' > "$T/consts.json"
  kb=$(rss_kb "$P" strategies "$T/consts.json" --op a --devices 2)
  check "4 consts of 2^20 values (8 MB): loaded under 150 MB of max RSS (${kb} KB; 360 MB before)" \
    '[ "$(cat "$T/rc")" = 0 ] && [ "$kb" -lt 150000 ]'
  # the values of keys the reader does not read (warned of and ignored) checked by json.c's walk,
  # never built: 3 x 4 arrays of 10^6 numbers (24 MB) at the top, in a tensor and in an op
  awk 'function junk(   a, i) { printf "["; for (a = 0; a < 4; a++) { printf "%s[1", (a ? ", " : ""); for (i = 1; i < 1000000; i++) printf ",1"; printf "]" }; printf "]" }
    BEGIN { printf "{\"format\": \"planner.model/1\", \"junk\": "; junk()
      printf ", \"tensors\": {\"x\": {\"shape\": [8, 64], \"role\": \"input\", \"junk\": "; junk()
      printf "}}, \"ops\": [{\"name\": \"r\", \"type\": \"Relu\", \"inputs\": [\"x\"], \"outputs\": [\"y\"], \"junk\": "; junk()
      printf "}]}\n" }' > "$T/junk.json"
  kb=$(rss_kb "$P" strategies "$T/junk.json" --op r --devices 2)
  check "24 MB of values under unknown keys (top, tensor, op): 3 warnings, under 150 MB of max RSS (${kb} KB; 0.99 GB before)" \
    '[ "$(cat "$T/rc")" = 0 ] && [ "$(grep -c "junk: unknown key" "$T/err")" = 3 ] && [ "$kb" -lt 150000 ]'
  # the same file through the C API (planner_graph_load keeps the document the graph is edited
  # and saved from: without the keys the format does not have, never built)
  lib=$(dirname "$P")/libplanner.so
  if [ -e "$lib" ]; then
    cat > "$T/load.py" << 'PY'
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
lib.planner_ctx_new.restype = ctypes.c_void_p
lib.planner_graph_load.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]
ctx, g = lib.planner_ctx_new(), ctypes.c_void_p()
sys.exit(lib.planner_graph_load(ctx, sys.argv[2].encode(), ctypes.byref(g)))
PY
    kb=$(rss_kb python3 "$T/load.py" "$lib" "$T/junk.json")
    check "the same 24 MB through planner_graph_load (the API): under 150 MB of max RSS (${kb} KB; 0.98 GB before)" \
      '[ "$(cat "$T/rc")" = 0 ] && [ "$kb" -lt 150000 ]'
  fi
else
  echo "# skipped: no /usr/bin/time"
fi
finish
