#!/usr/bin/env bash
# cli::outputs -- every output path follows one rule (graph/output.h): a
# regular file is replaced atomically with its mode kept; a character device,
# a FIFO or standard output under any name is written through, never
# replaced; a link is followed and stays a link; a directory, a block device,
# a socket or a link to nothing is refused (exit 2); a full disk or the file
# size limit is exit 4 with a message and nothing half-written; temporary
# files of dead writers are removed; every command's standard output is
# checked. Device nodes are made in a scratch folder (mknod, as root), so the
# machine's own /dev is never at stake; without root those checks skip.
# Usage: test_outputs.sh PLANNER ZOO SOURCE_DIR
set -u
PLANNER=$1 ZOO=$2 SRC=$3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"

"$ZOO" mlp --batch 64 --hidden 64 --layers 1 > "$T/m.json"
search() { "$PLANNER" search "$T/m.json" --devices 2 "$@"; }
plan_ok() { jq -e '.format == "planner.strategy/1"' "$1" > /dev/null 2>&1; }

# --- regular files: replaced, mode kept; new files get the umask's mode
echo old > "$T/p.json"
chmod 600 "$T/p.json"
search -o "$T/p.json" > /dev/null 2>&1
check "a regular file is replaced by the plan" 'plan_ok "$T/p.json"'
check "a replaced file keeps its mode (0600)" '[ "$(stat -c %a "$T/p.json")" = 600 ]'
(umask 027 && search -o "$T/new.json" > /dev/null 2>&1)
check "a new file gets the umask's mode (0640 under umask 027)" '[ "$(stat -c %a "$T/new.json")" = 640 ]'

# --- links: followed, the link stays, the file it names is replaced
echo old > "$T/target.json"
ln -s target.json "$T/link.json"
search -o "$T/link.json" > /dev/null 2>&1
check "-o onto a link: the link stays a link" '[ -L "$T/link.json" ]'
check "-o onto a link: the file it names holds the plan" 'plan_ok "$T/target.json"'
ln -s nothere "$T/dangling"
search -o "$T/dangling" > /dev/null 2> "$T/err"
check "-o onto a link to nothing: exit 2, says so, creates nothing" \
  '[ $? -eq 2 ] && grep -q "dangling: a symbolic link to nothing" "$T/err" && [ ! -e "$T/nothere" ] && [ -L "$T/dangling" ]'
# GLPK's LP file by the same rule (it opened the name itself: a planted link to nothing was
# followed and its target created, a replaced file lost its mode)
search --mode ilp --dump-lp "$T/dangling" > /dev/null 2> "$T/err"
check "--dump-lp onto a link to nothing: exit 2, says so, creates nothing" \
  '[ $? -eq 2 ] && grep -q "dangling: a symbolic link to nothing" "$T/err" && [ ! -e "$T/nothere" ] && [ -L "$T/dangling" ]'
echo old > "$T/lp-target.lp"
chmod 600 "$T/lp-target.lp"
ln -s lp-target.lp "$T/lp-link.lp"
search --mode ilp --dump-lp "$T/lp-link.lp" > /dev/null 2>&1
check "--dump-lp onto a link: the link stays, the file it names holds the LP with its mode (0600)" \
  '[ -L "$T/lp-link.lp" ] && grep -q "^End" "$T/lp-target.lp" && [ "$(stat -c %a "$T/lp-target.lp")" = 600 ]'
mkdir "$T/dir"
search -o "$T/dir" > /dev/null 2> "$T/err"
check "-o onto a directory: exit 2 naming it" '[ $? -eq 2 ] && grep -q "dir: is a directory" "$T/err" && [ -d "$T/dir" ]'

# --- standard output under its names: the plan alone on stdout, the summary on stderr
search -o - > "$T/dash.json" 2> /dev/null
check "-o -: the plan is the whole of standard output" 'plan_ok "$T/dash.json"'
search -o /dev/stdout > "$T/devstdout.json" 2> /dev/null
check "-o /dev/stdout: written through the stream (the plan alone), not replaced" \
  'plan_ok "$T/devstdout.json" && [ -L /dev/stdout ]'
search -o /dev/stdout 2> /dev/null | jq -e .format > /dev/null
check "-o /dev/stdout into a pipe" '[ "${PIPESTATUS[0]}" -eq 0 ]'

# --- FIFOs: written through (a reader gets the plan), refused when nobody reads
mkfifo "$T/fifo"
cat "$T/fifo" > "$T/from-fifo" &
reader=$!
search -o "$T/fifo" > /dev/null 2>&1
rc=$?
wait $reader
check "-o onto a FIFO: exit 0, the reader gets the plan, the FIFO stays" \
  '[ $rc -eq 0 ] && plan_ok "$T/from-fifo" && [ -p "$T/fifo" ]'

# --- device nodes of our own (root only): /dev/null's and /dev/full's numbers
if [ "$(id -u)" -eq 0 ] && mknod "$T/null" c 1 3 2> /dev/null && mknod "$T/full" c 1 7 2> /dev/null; then
  search -o "$T/null" > /dev/null 2>&1
  check "-o onto a null device: exit 0, still a character device" '[ $? -eq 0 ] && [ -c "$T/null" ]'
  search -o "$T/full" > /dev/null 2> "$T/err"
  check "-o onto a full device: exit 4 with a message, still a device" \
    '[ $? -eq 4 ] && grep -q "full: cannot write: No space left on device" "$T/err" && [ -c "$T/full" ]'
  "$PLANNER" search "$T/m.json" --devices 2 --mode ilp --dump-lp "$T/null" > /dev/null 2>&1
  check "--dump-lp onto a device: written through, not replaced" '[ $? -eq 0 ] && [ -c "$T/null" ]'
  # every command's standard output is checked (exit 4 on a full disk)
  "$ZOO" gpt3-13b > "$T/full" 2> "$T/err"
  check "planner-zoo > a full disk: exit 4 with a message" '[ $? -eq 4 ] && grep -q "standard output: cannot write" "$T/err"'
  for cmd in "explain $T/p.json" "cost $T/m.json --strategy $T/p.json" \
    "strategies $T/m.json --op fc0 --devices 2" "topology --xml $SRC/tests/fixtures/topology/nvidia-dgx2-16xV100-nvswitch.xml --json" \
    "calibrate --from-nccl-tests $SRC/tests/fixtures/nccl/a100x8-single-node-allgather.txt" \
    "search $T/m.json --devices 2" "search $T/m.json --devices 2 --json"; do
    # shellcheck disable=SC2086
    "$PLANNER" $cmd > "$T/full" 2> "$T/err"
    check "planner ${cmd%% *} > a full disk: exit 4 naming standard output" \
      '[ $? -eq 4 ] && grep -q "standard output: cannot write" "$T/err"'
  done
  mknod "$T/blk" b 7 0 2> /dev/null &&
    { search -o "$T/blk" > /dev/null 2> "$T/err"
      check "-o onto a block device: refused (exit 2)" '[ $? -eq 2 ] && grep -q "block device" "$T/err" && [ -b "$T/blk" ]'; }
else
  echo "# skipped: device nodes need root (mknod)"
fi

# --- the file size limit: exit 4 with a message, not a SIGXFSZ death; nothing left
(ulimit -f 1 && search -o "$T/big.json" > /dev/null 2> "$T/err"; echo $? > "$T/rc")
check "past ulimit -f: exit 4 naming the limit, no file, no temporary" \
  '[ "$(cat "$T/rc")" = 4 ] && grep -q "file size limit" "$T/err" && [ ! -e "$T/big.json" ] && [ -z "$(ls "$T" | grep "^big.json.tmp")" ]'
(ulimit -f 1 && "$ZOO" gpt3-13b > "$T/big-model.json" 2> "$T/err"; echo $? > "$T/rc")
check "planner-zoo past ulimit -f: exit 4" '[ "$(cat "$T/rc")" = 4 ] && grep -q "file size limit" "$T/err"'

# --- temporary files of dead writers (SIGKILL) are removed by the next write
host=$(hostname)
sh -c 'exit 0' & dead=$!
wait $dead
: > "$T/p.json.tmp.$dead.1f.$host"
: > "$T/p.json.tmp.$$.2f.$host"          # a live writer (this shell)
: > "$T/p.json.tmp.$dead.3f.otherhost"   # another host's: not ours to judge
search -o "$T/p.json" > /dev/null 2>&1
check "a dead writer's temporary file is removed by the next write" '[ ! -e "$T/p.json.tmp.$dead.1f.$host" ]'
check "a live writer's and another host's temporary files stay" \
  '[ -e "$T/p.json.tmp.$$.2f.$host" ] && [ -e "$T/p.json.tmp.$dead.3f.otherhost" ]'
# a real SIGKILL mid-search leaves at most its temporary file, which the next write removes
"$ZOO" gpt3-175b > "$T/big-model.json"
"$PLANNER" search "$T/big-model.json" --devices 64 -o "$T/k.json" > /dev/null 2>&1 &
killer=$!
sleep 0.3
kill -9 $killer 2> /dev/null
wait $killer 2> /dev/null
search -o "$T/k.json" > /dev/null 2>&1
check "after a SIGKILLed writer, the next write leaves the plan and no temporary file" \
  'plan_ok "$T/k.json" && [ -z "$(ls "$T" | grep "^k.json.tmp")" ]'

# --- terminal output: names' control characters are escaped, JSON stays JSON
printf '%s' '{"format": "planner.model/1", "name": "odd\u001b]0;TITLE\u0007", "tensors": {
  "x": {"shape": [8, 16], "role": "input"}, "w": {"shape": [16, 16], "role": "param"}},
 "ops": [{"name": "a\u001b[2J\u009bb\u007f", "type": "MatMul", "inputs": ["x", "w"], "outputs": ["y"]}],
 "outputs": ["y"]}' > "$T/esc.json"
controls() { LC_ALL=C grep -c $'[\x01-\x08\x0b-\x1f\x7f]\|\xc2[\x80-\x9f]' "$1"; }
"$PLANNER" search "$T/esc.json" --devices 2 -o "$T/esc.plan" > "$T/esc.out" 2>&1
"$PLANNER" explain "$T/esc.plan" >> "$T/esc.out" 2>&1
"$PLANNER" report "$T/esc.plan" -o "$T/esc.html" >> "$T/esc.out" 2>&1
sed 's/"MatMul"/"Nope"/' "$T/esc.json" > "$T/esc-bad.json"
"$PLANNER" search "$T/esc-bad.json" >> "$T/esc.out" 2>&1
check "search, explain and errors print names' ESC, BEL, DEL and C1 controls escaped (\\u001b)" \
  '[ "$(controls "$T/esc.out")" = 0 ] && grep -q "a\\\\u001b\[2J\\\\u009bb\\\\u007f" "$T/esc.out" && grep -q "op .a\\\\u001b\[2J" "$T/esc.out"'
"$PLANNER" search "$T/esc.json" --devices 2 --json > "$T/esc-json.out" 2>&1
check "--json: no raw control byte, and the name reads back as it was" \
  '[ "$(controls "$T/esc-json.out")" = 0 ] && [ "$(jq -r ".parallel_strategy_item | keys[0]" "$T/esc-json.out")" = "$(jq -r ".ops[0].name" "$T/esc.json")" ]'

finish
