#!/usr/bin/env bash
# cli::planner -- the command line as users and outside tests drive it:
# the issue's hand-checkable plans, `cost` reproducing `search`, JSON lines on
# stdin, exit statuses, --help everywhere, nothing half-written on failure.
# Usage: test_cli.sh PLANNER ZOO SOURCE_DIR
set -u
PLANNER=$1 ZOO=$2 SRC=$3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# three steps' losses in run output B within relative TOL (default 1e-4) of reference A's: true/false
same3() { jq -s --slurpfile b "$2" --argjson tol "${3:-1e-4}" '[., $b] | transpose | map(select(.[0].loss))
            | map(((.[0].loss - .[1].loss) | fabs) / (.[0].loss | fabs) <= $tol) | (length == 3 and all)' "$1"; }

# --- a large-batch, small-hidden MLP on 8 devices gets pure data parallel
"$ZOO" mlp --batch 8192 --hidden 256 --layers 2 > "$T/mlp.json"
"$PLANNER" search "$T/mlp.json" --devices 8 -o "$T/mlp.plan" > "$T/out" 2>&1
check "search mlp exits 0" '[ $? -eq 0 ]'
# every op cuts its first input's batch dimension 8 ways and nothing else
nondp=$(jq '[.parallel_strategy_item[] | .parallel_strategy[0]
           | (.[0] == 8 and ([.[1:][] | select(. != 1)] | length) == 0) | not]
           | map(select(.)) | length' "$T/mlp.plan")
check "mlp: every op is pure data parallel" '[ "$nondp" = 0 ]'
check "mlp: weights replicated (tensor_map all -1)" \
  '[ "$(jq "[.parallel_layout_item[] | .tensor_map[] | select(. != -1)] | length" "$T/mlp.plan")" = 0 ]'
check "mlp: dp group of 8" '[ "$(jq ".groups.dp[0] | length" "$T/mlp.plan")" = 8 ]'

# --- GPT-3 175B-width MLP block on one 8-GPU node: both weights sharded 8 ways,
#     no dearer than Megatron's column-then-row split priced by `planner cost`
"$ZOO" mlp-block > "$T/block.json"
"$PLANNER" search "$T/block.json" --cluster h100x8 -o "$T/block.plan" > /dev/null 2>&1
check "search mlp-block exits 0" '[ $? -eq 0 ]'
for w in w1 w2; do
  n=$(jq -r ".parallel_layout_item.$w.slice_shape as \$s | .parallel_layout_item.$w.tensor_shape as \$t
            | (\$t[0] * \$t[1]) / (\$s[0] * \$s[1])" "$T/block.plan")
  check "mlp-block: $w is cut 8 ways" '[ "$n" = 8 ]'
done
cat > "$T/megatron.json" <<'JSON'
{"parallel_strategy_item": {
  "fc1": {"parallel_strategy": [[1, 1], [1, 8]]},
  "gelu": {"parallel_strategy": [[1, 8]]},
  "fc2": {"parallel_strategy": [[1, 8], [8, 1]]},
  "residual": {"parallel_strategy": [[1, 1], [1, 1]]}}}
JSON
mega=$("$PLANNER" cost "$T/block.json" --strategy "$T/megatron.json" --cluster h100x8 | jq .step_seconds)
ours=$(jq .cost.step_seconds "$T/block.plan")
check "mlp-block: plan ($ours s) costs no more than Megatron ($mega s)" 'num_le "$ours" "$mega"'

# --- cost on the checkpoint that search wrote gives the same step_seconds (bit for bit)
for m in mlp block; do
  a=$(jq .cost.step_seconds "$T/$m.plan")
  b=$("$PLANNER" cost "$T/$m.json" --strategy "$T/$m.plan" | jq .step_seconds)
  check "cost reproduces search on $m ($a = $b)" '[ "$a" = "$b" ]'
done
# ... also where ops alike in type and shapes are priced apart by their place (the fuzz target api
# found it): a bias Add in its product's epilogue beside one whose product's output is read twice
# (a kernel of its own), a Slice that is a view beside one that copies; the whole-job search
# shares node tables between ops it finds alike, and must not share these
cat > "$T/alike.json" <<'JSON'
{"format": "planner.model/1", "tensors": {
  "x": {"shape": [8, 16], "role": "input"},
  "w1": {"shape": [16, 16], "role": "param"}, "w2": {"shape": [16, 16], "role": "param"},
  "b1": {"shape": [16], "role": "param"}, "b2": {"shape": [16], "role": "param"}},
 "ops": [
  {"name": "m1", "type": "MatMul", "inputs": ["x", "w1"], "outputs": ["y1"]},
  {"name": "a1", "type": "Add", "inputs": ["y1", "b1"], "outputs": ["z1"]},
  {"name": "m2", "type": "MatMul", "inputs": ["x", "w2"], "outputs": ["y2"]},
  {"name": "a2", "type": "Add", "inputs": ["y2", "b2"], "outputs": ["z2"]},
  {"name": "s1", "type": "Slice", "inputs": ["z1"], "outputs": ["v1"], "view": 1,
   "attrs": {"axes": [1], "starts": [0], "ends": [16]}},
  {"name": "s2", "type": "Slice", "inputs": ["z2"], "outputs": ["v2"],
   "attrs": {"axes": [1], "starts": [0], "ends": [16]}},
  {"name": "j", "type": "Add", "inputs": ["v1", "v2"], "outputs": ["u"]},
  {"name": "k", "type": "Add", "inputs": ["u", "y1"], "outputs": ["out"]}],
 "outputs": ["out"]}
JSON
alike_bad=""
for o in "--recompute none" "--job" "--pp 2 --micro-batches 2"; do
  a="" b=""
  # shellcheck disable=SC2086
  "$PLANNER" search "$T/alike.json" --devices 2 $o -o "$T/alike.plan" > /dev/null 2>&1 &&
    a=$(jq .cost.step_seconds "$T/alike.plan") &&
    b=$("$PLANNER" cost "$T/alike.json" --strategy "$T/alike.plan" | jq .step_seconds) &&
    [ "$a" = "$b" ] || alike_bad="$alike_bad [$o: ${a:-no plan}, cost ${b:-none}]"
done
check "cost reproduces the whole-job search where ops alike are priced apart by their place${alike_bad}" \
  '[ -z "$alike_bad" ]'
"$PLANNER" search "$SRC/examples/gpt-small.json" --devices 12 -o "$T/gpt.plan" > /dev/null 2>&1
a=$(jq .cost.step_seconds "$T/gpt.plan")
b=$("$PLANNER" cost "$SRC/examples/gpt-small.json" --strategy "$T/gpt.plan" | jq .step_seconds)
check "cost reproduces search on gpt-small, 12 devices" '[ -n "$a" ] && [ "$a" = "$b" ]'
check "gpt-small: every op appears in the checkpoint" \
  '[ "$(jq ".parallel_strategy_item | length" "$T/gpt.plan")" = 101 ]'
check "gpt-small: repeated layers were solved once" \
  '[ "$(jq ".search.repeated_layers" "$T/gpt.plan")" -ge 4 ]'

# --- a mixture of experts: the zoo's Mixtral shape, shrunk; ep groups partition the ranks,
# a job search (micro-batches cut whole token groups) plans it, cost reproduces it
"$ZOO" mixtral-8x7b --layers 2 --hidden 256 --heads 4 --head-dim 64 --kv-heads 2 --ffn 512 \
  --seq 64 --vocab 512 --batch 16 > "$T/moe.json"
"$PLANNER" search "$T/moe.json" --devices 8 -o "$T/moe.plan" > "$T/moe.out" 2>&1
check "search mixtral-shaped MoE exits 0" '[ $? -eq 0 ]'
check "MoE: ep groups cover every rank once" \
  '[ "$(jq "[.groups.ep[][]] | sort | . == [range(8)]" "$T/moe.plan")" = true ]'
check "MoE: the summary prints the ep degree" 'grep -q "ep degree" "$T/moe.out"'
a=$(jq .cost.step_seconds "$T/moe.plan")
b=$("$PLANNER" cost "$T/moe.json" --strategy "$T/moe.plan" | jq .step_seconds)
check "cost reproduces search on the MoE model ($a = $b)" '[ -n "$a" ] && [ "$a" = "$b" ]'
"$PLANNER" search "$T/moe.json" --devices 8 --job -o "$T/moe-job.plan" > /dev/null 2>&1
check "MoE: whole-job search exits 0" '[ $? -eq 0 ]'
a=$(jq .cost.step_seconds "$T/moe-job.plan")
b=$("$PLANNER" cost "$T/moe.json" --strategy "$T/moe-job.plan" | jq .step_seconds)
check "cost reproduces the MoE job plan ($a = $b)" '[ -n "$a" ] && [ "$a" = "$b" ]'

# --- deterministic output: two searches write the same plan; the only field that may differ
#     is the search's wall time (search.seconds, rounded to 0.1 s: two runs on a loaded machine
#     can round differently), so the files are compared without it; the next check, with
#     SOURCE_DATE_EPOCH, compares the bytes themselves
"$PLANNER" search "$T/mlp.json" --devices 8 -o "$T/mlp.plan2" > /dev/null 2>&1
check "checkpoints are identical across runs but for the search's wall time" \
  '[ "$(jq "del(.search.seconds)" "$T/mlp.plan")" = "$(jq "del(.search.seconds)" "$T/mlp.plan2")" ] &&
   [ "$(jq -r ".search.seconds | type" "$T/mlp.plan2")" = number ]'
# with SOURCE_DATE_EPOCH the search's wall time is 0: identical however long each run took
for k in 1 2; do
  SOURCE_DATE_EPOCH=1 "$PLANNER" search "$SRC/examples/gpt-small.json" --devices 8 --job \
    -o "$T/det$k.plan" > /dev/null 2>&1
done
check "with SOURCE_DATE_EPOCH, whole-job checkpoints are byte-identical and record 0 s" \
  'cmp -s "$T/det1.plan" "$T/det2.plan" && [ "$(jq .search.seconds "$T/det1.plan")" = 0 ]'

# --- memory limit below the data-parallel footprint: a plan that fits, or exit 3
# (the model's own memory: the peak less the runtime reserve, which the tests set to 0)
dpmem=$(jq '.cost.peak_memory_bytes - .cost.memory_breakdown_bytes.reserved' "$T/mlp.plan")
lim=$(awk -v m="$dpmem" 'BEGIN { printf "%.0f", m * 0.6 }')
# (--mode dp: the per-op search alone, exact; the default search goes on to the whole job)
"$PLANNER" search "$T/mlp.json" --devices 8 --memory-limit "$lim" --memory-reserve 0 --mode dp -o "$T/lim.plan" > "$T/out" 2> "$T/err"
rc=$?
if [ $rc -eq 0 ]; then
  got=$(jq .cost.peak_memory_bytes "$T/lim.plan")
  check "memory limit $lim < dp footprint $dpmem: the plan fits ($got)" 'num_le "$got" "$lim"'
  check "memory-limited plan is proven optimal" '[ "$(jq .search.optimal "$T/lim.plan")" = true ]'
else
  check "memory limit: exit 3 naming the least memory" '[ $rc -eq 3 ] && grep -q "least memory" "$T/err"'
fi
"$PLANNER" search "$T/mlp.json" --devices 8 --memory-limit 1000 --memory-reserve 0 -o "$T/none.plan" > /dev/null 2> "$T/err"
rc=$?
check "impossible memory limit exits 3" '[ $rc -eq 3 ]'
check "... naming the least memory any plan needs" 'grep -q "least memory any plan needs is [0-9]* bytes" "$T/err"'
check "... and writes no checkpoint" '[ ! -e "$T/none.plan" ]'
# on 2 nodes of 8 a tensor-parallel cut stays inside a node unless --max-tp says otherwise:
# the least memory (weights cut as far as allowed) falls with 16, rises with 2
least_mem() { "$PLANNER" search "$SRC/examples/gpt-small.json" --cluster h100x8:2 --mode dp "$@" \
  --memory-limit 1 --memory-reserve 0 2>&1 | grep -o "needs is [0-9]*" | grep -o "[0-9]*"; }
m8=$(least_mem) m16=$(least_mem --max-tp 0) m2=$(least_mem --max-tp 2) m8b=$(least_mem --max-tp 8)
check "--max-tp: the least memory on 2 nodes is 16-way's ($m16) < one node's ($m8, the default) < 2-way's ($m2)" \
  '[ -n "$m16" ] && [ -n "$m8" ] && [ -n "$m2" ] && [ "$m16" -lt "$m8" ] && [ "$m8" -lt "$m2" ] && [ "$m8b" = "$m8" ]'
ns=$("$PLANNER" strategies "$SRC/examples/gpt-small.json" --op l0.q --cluster h100x8:2 | jq '.strategies | length')
na=$("$PLANNER" strategies "$SRC/examples/gpt-small.json" --op l0.q --cluster h100x8:2 --max-tp 0 | jq '.strategies | length')
n2=$("$PLANNER" strategies "$SRC/examples/gpt-small.json" --op l0.q --cluster h100x8:2 --max-tp 2 | jq '.strategies | length')
check "strategies lists the candidates search has: $n2 (--max-tp 2) < $ns (a node) < $na (--max-tp 0)" \
  '[ -n "$ns" ] && [ "$n2" -lt "$ns" ] && [ "$ns" -lt "$na" ]'
"$PLANNER" search "$SRC/examples/gpt-small.json" --max-tp -1 > /dev/null 2> "$T/err"
check "--max-tp -1 exits 2 saying what it expects" '[ $? -eq 2 ] && grep -q "max-tp -1: expected a device count (0: any)" "$T/err"'

# --- JSON lines on stdin: one result per line, errors per line, exit 2 at the end
{ jq -c . "$T/mlp.plan"; echo '{"parallel_strategy_item": {"fc0": {"parallel_strategy": [[3, 1], [1, 1]]}}, "cluster": {"name": "h100x8"}}'; jq -c . "$T/mlp.plan"; } \
  | "$PLANNER" cost "$T/mlp.json" --strategy - --devices 8 > "$T/lines" 2> "$T/err"
rc=$?
check "JSON lines: three lines out" '[ "$(wc -l < "$T/lines")" = 3 ]'
check "JSON lines: first and third priced alike" '[ "$(sed -n 1p "$T/lines")" = "$(sed -n 3p "$T/lines")" ]'
check "JSON lines: the bad line names the op" 'sed -n 2p "$T/lines" | jq -e ".error | test(\"op .fc0.\")" > /dev/null'
check "JSON lines: exit 2 after a bad line" '[ $rc -eq 2 ]'

# --- bad input: exit 2, message names the file, nothing written
"$PLANNER" search "$SRC/tests/fixtures/bad_models/cycle.json" -o "$T/x.plan" > /dev/null 2> "$T/err"
rc=$?
check "bad model exits 2" '[ $rc -eq 2 ]'
check "bad model message names the file" 'grep -q "cycle.json" "$T/err"'
check "bad model writes nothing" '[ ! -e "$T/x.plan" ]'
"$PLANNER" search /nonexistent.json > /dev/null 2> "$T/err"
check "missing model exits 2" '[ $? -eq 2 ] && grep -q "/nonexistent.json: cannot open" "$T/err"'
"$PLANNER" search "$T/mlp.json" --devices 0 > /dev/null 2>&1
check "--devices 0 exits 2" '[ $? -eq 2 ]'
# a stream that never ends is read up to ONNX's 2 GiB and refused (it was
# read until the OOM killer ended the process)
"$PLANNER" search /dev/zero > /dev/null 2> "$T/err"
check "a model file that never ends (/dev/zero) exits 2 naming it" \
  '[ $? -eq 2 ] && grep -q "/dev/zero: longer than 2147483648 bytes" "$T/err"'
"$PLANNER" search "$T/mlp.json" --devices 1048577 > /dev/null 2> "$T/err"
check "--devices past the largest count exits 2 saying the range" \
  '[ $? -eq 2 ] && grep -q "expected a device count from 1 to 1048576" "$T/err"'
"$PLANNER" search "$T/mlp.json" --cluster h100x8:1000001 > /dev/null 2> "$T/err"
check "a preset's node count past the largest exits 2 saying the range" \
  '[ $? -eq 2 ] && grep -q "node count after .:. must be an integer from 1 to 1000000" "$T/err"'
"$PLANNER" search "$T/mlp.json" --cluster nosuch > /dev/null 2> "$T/err"
check "unknown preset exits 2 and lists presets" '[ $? -eq 2 ] && grep -q h100x8 "$T/err"'
# an x8 preset with another count of GPUs a node: the same job as --devices
# (one node of N H100s), and nodes of 4 A100s joined by the preset's links
"$PLANNER" search "$T/mlp.json" --cluster h100x4 -o "$T/px4.plan" > /dev/null 2>&1
"$PLANNER" search "$T/mlp.json" --devices 4 -o "$T/pd4.plan" > /dev/null 2>&1
check "--cluster h100x4 is one node of 4 H100s, the plan --devices 4 finds" \
  '[ "$(jq -c "[.cluster.nodes, .cluster.devices_per_node]" "$T/px4.plan")" = "[1,4]" ] &&
   [ "$(jq -c "del(.cluster.name, .search.seconds, .created)" "$T/px4.plan" | md5sum)" = \
     "$(jq -c "del(.cluster.name, .search.seconds, .created)" "$T/pd4.plan" | md5sum)" ]'
"$PLANNER" search "$T/mlp.json" --cluster a100-80gx4:2 -o "$T/pa42.plan" > /dev/null 2>&1
check "--cluster a100-80gx4:2 is two nodes of 4 A100-80GB" \
  '[ "$(jq -c "[.cluster.nodes, .cluster.devices_per_node, .cluster.description.device.name]" "$T/pa42.plan")" = "[2,4,\"A100-SXM4-80GB\"]" ]'
"$PLANNER" search "$T/mlp.json" --cluster h100x0 > /dev/null 2> "$T/err"
check "an x8 preset with 0 GPUs a node exits 2 saying the range" \
  '[ $? -eq 2 ] && grep -q "h100x0: the GPUs a node after .x. must be an integer from 1 to 1048576" "$T/err"'
"$PLANNER" search "$T/mlp.json" --cluster dgx2-v100x4 > /dev/null 2> "$T/err"
check "only the x8 presets take another count of GPUs a node" \
  '[ $? -eq 2 ] && grep -q "dgx2-v100x4: not a file and not a preset" "$T/err"'
"$PLANNER" search "$T/mlp.json" --mode nosuch > /dev/null 2> "$T/err"
rc=$?
# the list comes from the searchers' table; search --help and bench --help offer each of them
modes=$(sed -n 's/.*--mode nosuch: expected one of //p' "$T/err" | tr -d ',')
"$PLANNER" search --help > "$T/h1" 2>&1
"$PLANNER" bench --help > "$T/h2" 2>&1
missing=""
for m in $modes; do grep -qw -- "$m" "$T/h1" && grep -qw -- "$m" "$T/h2" || missing="$missing $m"; done
check "unknown mode exits 2 and lists the 6 modes; both helps name each (missing:$missing)" \
  '[ $rc -eq 2 ] && [ "$(wc -w <<< "$modes")" = 6 ] && [ -z "$missing" ]'
"$PLANNER" search "$T/mlp.json" --memory-limit lots > /dev/null 2>&1
check "bad --memory-limit exits 2" '[ $? -eq 2 ]'
echo '{"parallel_strategy_item": {"nosuch": {"parallel_strategy": [[1]]}}}' > "$T/badck.json"
"$PLANNER" cost "$T/mlp.json" --strategy "$T/badck.json" --devices 8 > /dev/null 2> "$T/err"
check "cost with an unknown op exits 2 naming it" '[ $? -eq 2 ] && grep -q "nosuch" "$T/err"'
"$PLANNER" search "$T/mlp.json" --devices 8 -o /nonexistent-dir/plan.json > /dev/null 2> "$T/err"
check "unwritable output exits 4 (a write failure) naming the path" '[ $? -eq 4 ] && grep -q "/nonexistent-dir/plan.json: cannot write" "$T/err"'
"$PLANNER" frobnicate > /dev/null 2>&1
check "unknown command exits 2" '[ $? -eq 2 ]'

# --- every search mode writes a checkpoint that `cost` reproduces; ilp can dump its LP
for mode in rec ilp; do
  "$PLANNER" search "$T/block.json" --cluster h100x8 --mode $mode -o "$T/$mode.plan" > /dev/null 2>&1
  a=$(jq .cost.step_seconds "$T/$mode.plan")
  b=$("$PLANNER" cost "$T/block.json" --strategy "$T/$mode.plan" | jq .step_seconds)
  check "--mode $mode: cost reproduces search ($a)" '[ -n "$a" ] && [ "$a" = "$b" ]'
  check "--mode $mode: the checkpoint names its mode" '[ "$(jq -r .search.mode "$T/$mode.plan")" = $mode ]'
done
check "--mode ilp proves the mlp-block optimum, the same as dp" \
  '[ "$(jq .search.optimal "$T/ilp.plan")" = true ] && [ "$(jq .cost.step_seconds "$T/ilp.plan")" = "$(jq .cost.step_seconds "$T/block.plan")" ]'
"$PLANNER" search "$T/block.json" --cluster h100x8 --mode ilp --dump-lp "$T/block.lp" > /dev/null 2>&1
check "--dump-lp writes a CPLEX LP file" 'grep -q "^Minimize" "$T/block.lp" && grep -q "^End" "$T/block.lp"'
# under a binding limit: the Lagrangian fixing runs, the dump is the program before it
"$PLANNER" search "$SRC/examples/gpt-small.json" --devices 8 -o "$T/gs.plan" > /dev/null 2>&1
lim=$(jq '(.cost.peak_memory_bytes - .cost.memory_breakdown_bytes.reserved) * 0.8 | floor' "$T/gs.plan")
# (dp's (time, memory) sets here outgrow the default cap of 256 points: proven with 512)
# (--fastest: the limit's optimum, without the preference for a plan with memory headroom)
"$PLANNER" search "$SRC/examples/gpt-small.json" --devices 8 --memory-limit "$lim" --memory-reserve 0 \
  --mode dp --pareto-cap 512 --fastest -o "$T/gsd.plan" > /dev/null 2>&1
"$PLANNER" search "$SRC/examples/gpt-small.json" --devices 8 --memory-limit "$lim" --memory-reserve 0 --mode ilp \
  --fastest --progress --dump-lp "$T/gs.lp" -o "$T/gsi.plan" > /dev/null 2> "$T/gs.err"
# (equal optima may be different plans whose sums differ in the last bit)
check "--mode ilp under a binding limit proves dp's optimum, within the limit" \
  '[ "$(jq .search.optimal "$T/gsi.plan")" = true ] && [ "$(jq .search.optimal "$T/gsd.plan")" = true ] &&
   num_close "$(jq .cost.step_seconds "$T/gsi.plan")" "$(jq .cost.step_seconds "$T/gsd.plan")" &&
   num_le "$(jq .cost.peak_memory_bytes "$T/gsi.plan")" "$lim"'
dumped=$(grep -o "\b[xyn][0-9][0-9_]*" "$T/gs.lp" | sort -u | wc -l)
solved=$(grep -o "[0-9]* columns," "$T/gs.err" | tail -1 | cut -d' ' -f1)
check "--dump-lp under a limit writes the program before the Lagrangian fixing ($dumped > $solved columns)" \
  'grep -q "^ memory:" "$T/gs.lp" && grep -q "min-marginals fixed" "$T/gs.err" && [ -n "$solved" ] && [ "$dumped" -gt "$solved" ]'
"$PLANNER" search "$T/block.json" --mode dp --dump-lp "$T/x.lp" > /dev/null 2>&1
check "--dump-lp without ilp exits 2" '[ $? -eq 2 ] && [ ! -e "$T/x.lp" ]'
"$PLANNER" search "$T/block.json" --mode ilp --ilp-edges pairs > /dev/null 2> "$T/err"
check "--ilp-edges pairs exits 2 naming the choices" '[ $? -eq 2 ] && grep -q "expected flow or cost" "$T/err"'
"$PLANNER" search "$T/block.json" --ilp-edges cost > /dev/null 2> "$T/err"
check "--ilp-edges without ilp exits 2" '[ $? -eq 2 ] && grep -q "goes with --mode ilp" "$T/err"'
# both edge encodings are exact: the same proven optimum (test_dp checks them against brute);
# a small MLP, where cost edges' weak relaxation still closes (on gpt-small it does not in minutes)
"$ZOO" mlp --batch 64 --hidden 64 --layers 2 > "$T/enc.json"
"$PLANNER" search "$T/enc.json" --devices 8 --memory-limit none --mode ilp --ilp-edges cost \
  -o "$T/encc.plan" > /dev/null 2>&1
"$PLANNER" search "$T/enc.json" --devices 8 --memory-limit none --mode dp -o "$T/encd.plan" > /dev/null 2>&1
check "--ilp-edges cost proves dp's optimum on an MLP" \
  '[ "$(jq .search.optimal "$T/encc.plan")" = true ] &&
   num_close "$(jq .cost.step_seconds "$T/encc.plan")" "$(jq .cost.step_seconds "$T/encd.plan")"'
# --time-limit is a hard bound on a large instance: GPT-3 1.3B on 64 devices, which ilp needs
# ~24 s to prove without a limit and cannot prove at 6 GiB in 60 s (release build,
# docs/benchmarks.md; without dropout, as measured there). The limit is the behaviour under test, so the test times it: the
# search must end within 10 s, the limit (wall clock, so it holds under load) and a margin for process start and reading
# the model (2.05 s in all on an idle one, Dec 2026), plus twice what the same command stopped at
# once takes just before (its start and the model's read, which stretch on a loaded machine); a
# search that ignored the limit would take ~24 s idle, and the plan must also say the limit stopped it.
"$ZOO" gpt3-1.3b --batch 16 --dropout 0 > "$T/g13b.json"
for lim in none 6GiB; do
  t0=$(date +%s.%N)
  "$PLANNER" search "$T/g13b.json" --devices 64 --memory-limit $lim --memory-reserve 0 --mode ilp --time-limit 1e-9 \
    -o "$T/tl0.plan" > /dev/null 2>&1
  bound=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { print 10 + 2 * (b - a) }')
  rm -f "$T/tl0.plan"
  t0=$(date +%s.%N)
  "$PLANNER" search "$T/g13b.json" --devices 64 --memory-limit $lim --memory-reserve 0 --mode ilp --time-limit 2 \
    -o "$T/tl.plan" > /dev/null 2> "$T/err"
  rc=$? wall=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
  # a plan (not proven, saying the limit stopped it), or, when no plan within the memory limit
  # was found by then (6 GiB under ASan), exit 3 saying so and nothing written; without a
  # memory limit rec's plan, made first, is always there
  check "ilp --time-limit 2 on GPT-3 1.3B, 64 devices, memory limit $lim: ends in ${wall} s of ${bound} allowed (exit $rc)" \
    'num_le "$wall" "$bound" && { [ $lim != none ] || [ $rc -eq 0 ]; } && { { [ $rc -eq 0 ] && [ "$(jq .search.optimal "$T/tl.plan")" = false ] &&
       jq -r .search.why "$T/tl.plan" | grep -q "the time limit stopped"; } ||
     { [ $rc -eq 3 ] && grep -q "time limit ran out" "$T/err" && [ ! -e "$T/tl.plan" ]; }; }'
  if [ -e "$T/tl.plan" ]; then
    b=$("$PLANNER" cost "$T/g13b.json" --devices 64 --strategy "$T/tl.plan" | jq .step_seconds)
    check "ilp stopped by the time limit: cost reproduces its plan" \
      '[ "$(jq .cost.step_seconds "$T/tl.plan")" = "$b" ]'
  fi
  rm -f "$T/tl.plan"
done
# propagate: an annotation spreads; none at all is a usage error naming what to do
"$ZOO" mlp --batch 64 --hidden 64 --layers 2 > "$T/p.json"
jq '.ops[0].strategy = [[2, 1], [1, 4]]' "$T/p.json" > "$T/pa.json"
"$PLANNER" search "$T/pa.json" --devices 8 --mode propagate -o "$T/prop.plan" > /dev/null 2>&1
check "propagate keeps the annotation" '[ "$(jq -c .parallel_strategy_item.fc0.parallel_strategy "$T/prop.plan")" = "[[2,1],[1,4]]" ]'
check "propagate spreads it to the bias add" '[ "$(jq -c .parallel_strategy_item.bias0.parallel_strategy "$T/prop.plan")" = "[[2,4],[4]]" ]'
"$PLANNER" search "$T/p.json" --devices 8 --mode propagate > /dev/null 2> "$T/err"
check "propagate without annotations exits 2 saying what to annotate" '[ $? -eq 2 ] && grep -q "annotated op" "$T/err"'

# --- --load keeps the loaded strategies; semi-auto annotation is kept
jq '.parallel_strategy_item |= with_entries(select(.key == "fc0")) | .parallel_strategy_item.fc0.parallel_strategy = [[1, 1], [1, 8]]' \
  "$T/mlp.plan" > "$T/partial.json"
"$PLANNER" search "$T/mlp.json" --devices 8 --load "$T/partial.json" -o "$T/loaded.plan" > /dev/null 2>&1
check "--load keeps fc0's strategy" \
  '[ "$(jq -c .parallel_strategy_item.fc0.parallel_strategy "$T/loaded.plan")" = "[[1,1],[1,8]]" ]'

# --- strategies and explain
"$ZOO" mlp --batch 48 --hidden 96 --layers 1 > "$T/mlp96.json"
"$PLANNER" strategies "$T/mlp96.json" --op fc0 --devices 6 > "$T/st.json"
check "strategies: JSON with candidates for 6 devices" '[ "$(jq ".strategies | length" "$T/st.json")" -gt 2 ]'
# the cuts of all 6 devices first, then (free degrees, up to 8 devices) those over 3, 2 and 1 of
# them, replicated over the rest: as many devices as a fixed degree may give the op
check "strategies: the candidates use 6 devices, then 3, 2, 1 (replicated over the rest)" \
  '[ "$(jq -c "[.strategies[].parallel_strategy | (.[0][0] * .[0][1] * .[1][1])] | [.[0], (. == (sort | reverse)), unique]" "$T/st.json")" = "[6,true,[1,2,3,6]]" ]'
# 8192 x 256 has no dimension divisible by 3: the largest product that divides 6 is 2
"$PLANNER" strategies "$T/mlp.json" --op fc0 --devices 6 > "$T/st2.json"
check "strategies: without a 6-way cut, candidates use 2 of 6 devices, then 1" \
  '[ "$(jq "[.strategies[].parallel_strategy | (.[0][0] * .[0][1] * .[1][1])]" -c "$T/st2.json")" = "[2,2,2,1]" ]'
"$PLANNER" explain "$T/gpt.plan" > "$T/explain" 2>&1
check "explain prints one row per op" '[ $? -eq 0 ] && [ "$(grep -c MatMul "$T/explain")" -ge 20 ]'

# --- every zoo model imports and plans (2 layers each: the shapes, not the depth)
for m in $("$ZOO" --list | awk '{print $1}'); do
  "$ZOO" "$m" --layers 2 > "$T/zoo.json"
  "$PLANNER" search "$T/zoo.json" --devices 8 --memory-limit none -o "$T/zoo.plan" > /dev/null 2> "$T/err"
  check "zoo $m plans on 8 devices" '[ $? -eq 0 ] && [ "$(jq .search.optimal "$T/zoo.plan")" = true ]'
done

# --- zoo --projections: q, k, v as one GEMM (qkv), and a Llama MLP's gate and up too (fused), hold
#     the same parameters; under tensor and sequence parallelism the norm's output is gathered once
#     for them instead of once per projection, so the plan communicates less; the model trains on
#     4 ranks as on 1
proj_ok=1
for m in "llama2-7b --kv-heads 8" "gpt3-1.3b"; do
  for pj in separate qkv fused; do
    "$ZOO" ${m} --layers 2 --batch 8 --projections $pj > "$T/pj-$pj.json" || proj_ok=0
    "$PLANNER" search "$T/pj-$pj.json" --devices 8 --tp 4 --sequence-parallel on -o "$T/pj-$pj.plan" > /dev/null 2>&1 || proj_ok=0
  done
  n=$(jq '[.tensors[] | select(.role == "param") | .shape | reduce .[] as $x (1; . * $x)] | add' "$T/pj-separate.json")
  for pj in qkv fused; do
    [ "$(jq '[.tensors[] | select(.role == "param") | .shape | reduce .[] as $x (1; . * $x)] | add' "$T/pj-$pj.json")" = "$n" ] || { proj_ok=0; echo "# $m $pj: parameters differ"; }
    num_lt "$(jq .cost.communication_seconds "$T/pj-$pj.plan")" "$(jq .cost.communication_seconds "$T/pj-separate.plan")" || { proj_ok=0; echo "# $m $pj: no less communication"; }
  done
done
check "zoo --projections qkv|fused: same parameters, less tensor-parallel communication than separate q, k, v" '[ $proj_ok = 1 ]'
"$ZOO" llama2-7b --layers 1 --hidden 64 --heads 4 --kv-heads 2 --head-dim 16 --ffn 128 --seq 8 --vocab 32 --batch 4 --dtype float32 --projections fused > "$T/pjt.json"
"$PLANNER" search "$T/pjt.json" --devices 4 --mode rec -o "$T/pjt.plan" > /dev/null 2>&1
"$PLANNER" search "$T/pjt.json" --devices 1 -o "$T/pjt1.plan" > /dev/null 2>&1
"$PLANNER" run "$T/pjt.json" --strategy "$T/pjt1.plan" --steps 2 --json > "$T/pjt1.run" 2> /dev/null
"$PLANNER" run "$T/pjt.json" --strategy "$T/pjt.plan" --steps 2 --json > "$T/pjt4.run" 2> /dev/null
check "zoo --projections fused trains on 4 ranks with the losses of 1" \
  '[ "$(jq -s "[.[] | select(.loss) | .loss]" "$T/pjt1.run")" != "[]" ] &&
   jq -e -s --slurpfile b "$T/pjt4.run" "[., \$b] | transpose | map(select(.[0].loss)) | length > 0 and all(((.[0].loss - .[1].loss) | fabs) <= 1e-4 * (.[0].loss | fabs))" "$T/pjt1.run" > /dev/null'

# --- zoo --attention-output copied: the fused attention's output laid out again for the output
#     projection in two copies (Aleph Alpha's rearranges), the projection keeping the second beside
#     the kernel's own: by hand, one more [batch, seq, heads * head dim] fp32 tensor kept a layer,
#     2 x 4 x 8 x 64 x 4 = 16384 bytes on one device; the model trains on 4 ranks as on 1
for ao in shared copied; do
  "$ZOO" llama2-7b --layers 2 --hidden 64 --heads 4 --kv-heads 4 --head-dim 16 --ffn 128 --seq 8 --vocab 32 \
    --batch 4 --dtype float32 --attention fused --attention-output $ao > "$T/ao-$ao.json"
  "$PLANNER" search "$T/ao-$ao.json" --devices 1 --dp 1 --pp 1 --micro-batches 1 --recompute none \
    -o "$T/ao-$ao.plan" > /dev/null 2>&1
done
check "zoo --attention-output copied keeps one more attention output a layer (16384 bytes by hand)" \
  '[ "$(jq ".cost.memory_breakdown_bytes.activations - $(jq .cost.memory_breakdown_bytes.activations "$T/ao-shared.plan")" "$T/ao-copied.plan")" = 16384 ]'
"$PLANNER" search "$T/ao-copied.json" --devices 4 --mode rec -o "$T/ao4.plan" > /dev/null 2>&1
"$PLANNER" run "$T/ao-copied.json" --strategy "$T/ao-copied.plan" --steps 2 --json > "$T/ao1.run" 2> /dev/null
"$PLANNER" run "$T/ao-copied.json" --strategy "$T/ao4.plan" --steps 2 --json > "$T/ao4.run" 2> /dev/null
check "zoo --attention-output copied trains on 4 ranks with the losses of 1" \
  '[ "$(jq -s "[.[] | select(.loss) | .loss]" "$T/ao1.run")" != "[]" ] &&
   jq -e -s --slurpfile b "$T/ao4.run" "[., \$b] | transpose | map(select(.[0].loss)) | length > 0 and all(((.[0].loss - .[1].loss) | fabs) <= 1e-4 * (.[0].loss | fabs))" "$T/ao1.run" > /dev/null'
"$ZOO" gpt3-125m --attention-output sideways > /dev/null 2> "$T/err"
check "zoo --attention-output sideways: exit 2 naming the choices" '[ $? -eq 2 ] && grep -q "shared or copied" "$T/err"'

# --- zoo --rotary eager (RoPE as eager PyTorch: a Neg, a Concat, two Muls by constant tables and an
#     Add on q and k) and --attention-inputs views (q, k, v views of the fused projection, as Aleph
#     Alpha's qkv_in_one): the rotated q and k replace q and k as what the fused attention keeps, so
#     rotation alone keeps no more, but a longer step; with views the kernel's saved v keeps the
#     whole projection output beside the rotated q and k: by hand two more [4, 8, 64] fp32 tensors
#     a layer, 2 x 2 x 4 x 8 x 64 x 4 = 32768 bytes on one device; cost reproduces it
for ai in plain copies views; do
  "$ZOO" llama2-7b --layers 2 --hidden 64 --heads 4 --kv-heads 4 --head-dim 16 --ffn 128 --seq 8 --vocab 32 \
    --batch 4 --dtype float32 --attention fused --projections qkv \
    $([ $ai = plain ] || echo "--rotary eager --attention-inputs $ai") > "$T/ai-$ai.json"
  "$PLANNER" search "$T/ai-$ai.json" --devices 1 --dp 1 --pp 1 --micro-batches 1 --recompute none \
    -o "$T/ai-$ai.plan" > /dev/null 2>&1
done
"$PLANNER" cost "$T/ai-views.json" --strategy "$T/ai-views.plan" > "$T/ai.cost" 2> /dev/null
act() { jq .cost.memory_breakdown_bytes.activations "$1"; }
check "zoo --rotary eager keeps what it replaces and takes longer; --attention-inputs views keeps two more tensors a layer (32768 bytes by hand)" \
  '[ "$(($(act "$T/ai-copies.plan") - $(act "$T/ai-plain.plan")))" = 0 ] &&
   num_lt "$(jq .cost.step_seconds "$T/ai-plain.plan")" "$(jq .cost.step_seconds "$T/ai-copies.plan")" &&
   [ "$(($(act "$T/ai-views.plan") - $(act "$T/ai-copies.plan")))" = 32768 ] &&
   [ "$(jq -c "[.ops[] | select(.view == 1) | .type] | unique" "$T/ai-views.json")" = "[\"Reshape\",\"Slice\"]" ] &&
   [ "$(jq .step_seconds "$T/ai.cost")" = "$(jq .cost.step_seconds "$T/ai-views.plan")" ]'
"$ZOO" llama2-7b --rotary fused > /dev/null 2> "$T/err"
check "zoo --rotary fused: exit 2 naming the choices" '[ $? -eq 2 ] && grep -q "none or eager" "$T/err"'
"$ZOO" llama2-7b --attention-inputs aliases > /dev/null 2> "$T/err"
check "zoo --attention-inputs aliases: exit 2 naming the choices" '[ $? -eq 2 ] && grep -q "copies or views" "$T/err"'
jq '(.ops[] | select(.type == "Neg")) += {"view": 1}' "$T/ai-views.json" > "$T/ai-bad.json"
"$PLANNER" search "$T/ai-bad.json" --devices 1 > /dev/null 2> "$T/err"
check "a model's \"view\": 1 on a Neg: exit 2 naming the op and what may be a view" \
  '[ $? -eq 2 ] && grep -q "op .l0.q_ropenb.: view: only a Reshape.s or a Slice.s output" "$T/err"'
jq '(.ops[] | select(.type == "Neg")) += {"copy": 1}' "$T/ai-views.json" > "$T/ai-bad.json"
"$PLANNER" search "$T/ai-bad.json" --devices 1 > /dev/null 2> "$T/err"
check "a model's \"copy\": 1 on a Neg: exit 2 naming the op and what may be a clone" \
  '[ $? -eq 2 ] && grep -q "op .l0.q_ropenb.: copy: only an Identity can be a clone, not a Neg" "$T/err"'
jq '(.ops[] | select(.type == "Slice")) += {"view": 2}' "$T/ai-views.json" > "$T/ai-bad.json"
"$PLANNER" search "$T/ai-bad.json" --devices 1 > /dev/null 2> "$T/err"
check "a model's \"view\": 2: exit 2 naming the field and what it takes" \
  '[ $? -eq 2 ] && grep -q "view: expected 0 or 1" "$T/err"'

# --- zoo --swiglu fused: Megatron-core's fused SwiGLU keeps gate and up and recomputes the SiLU
#     in its backward (megatron/core/fusions/fused_bias_swiglu.py); the Silu op states
#     "recompute": 1. By hand one [batch, seq, ffn] fp32 tensor a layer fewer: 2 x 4 x 8 x 128 x 4
#     = 32768 bytes on one device, predicted and as the executor holds them; the plan's recompute
#     stays none; fused on 4 ranks trains with the losses of unfused on 1
for sw in unfused fused; do
  "$ZOO" llama2-7b --layers 2 --hidden 64 --heads 4 --kv-heads 4 --head-dim 16 --ffn 128 --seq 8 --vocab 32 \
    --batch 4 --dtype float32 --swiglu $sw > "$T/sw-$sw.json"
  "$PLANNER" search "$T/sw-$sw.json" --devices 1 --dp 1 --pp 1 --micro-batches 1 --recompute none \
    -o "$T/sw-$sw.plan" > /dev/null 2>&1
  "$PLANNER" run "$T/sw-$sw.json" --strategy "$T/sw-$sw.plan" --steps 2 --json --profile > "$T/sw1-$sw.run" 2> /dev/null
done
check "zoo --swiglu fused keeps one [batch, seq, ffn] tensor a layer fewer (32768 bytes by hand), predicted and run" \
  '[ "$(jq ".cost.memory_breakdown_bytes.activations - $(jq .cost.memory_breakdown_bytes.activations "$T/sw-fused.plan")" "$T/sw-unfused.plan")" = 32768 ] &&
   [ "$(jq -s "map(select(.memory_bytes))[0].memory_bytes.measured.activations" "$T/sw1-unfused.run")" = "$(jq -s "map(select(.memory_bytes))[0].memory_bytes.measured.activations + 32768" "$T/sw1-fused.run")" ] &&
   [ "$(jq -r .recompute "$T/sw-fused.plan")" = none ] && ! grep -q "\"recompute\": *1" "$T/sw-fused.plan"'
"$PLANNER" search "$T/sw-fused.json" --devices 4 --mode rec -o "$T/sw4.plan" > /dev/null 2>&1
"$PLANNER" run "$T/sw-fused.json" --strategy "$T/sw4.plan" --steps 2 --json > "$T/sw4.run" 2> /dev/null
check "zoo --swiglu fused trains on 4 ranks with the losses of unfused on 1" \
  '[ "$(jq -s "[.[] | select(.loss) | .loss]" "$T/sw1-unfused.run")" != "[]" ] &&
   jq -e -s --slurpfile b "$T/sw4.run" "[., \$b] | transpose | map(select(.[0].loss)) | length > 0 and all(((.[0].loss - .[1].loss) | fabs) <= 1e-4 * (.[0].loss | fabs))" "$T/sw1-unfused.run" > /dev/null'
# Memory the executor holds against the plan's prediction (the claim bench_memory measures on 26
# plans), on a plan whose sequence-parallel reduce-scatter cuts gpt-tiny's [batch, seq, hidden]
# gradient along seq, not the outermost dimension: the executor once packed the whole gradient
# before the collective (1.035 of the prediction); within 3 % either way
"$PLANNER" search "$SRC/tests/fixtures/models/gpt-tiny.json" --devices 4 --tp 4 --pp 1 --sequence-parallel on \
  -o "$T/sp4.plan" > /dev/null 2>&1
"$PLANNER" run "$SRC/tests/fixtures/models/gpt-tiny.json" --strategy "$T/sp4.plan" --steps 2 --json --profile > "$T/sp4.run" 2> /dev/null
check "gpt-tiny tp 4 with sequence parallelism: the executor's peak within 3 % of the prediction" \
  'jq -e -s "map(select(.memory_bytes))[0].memory_bytes.peak | (.measured / .predicted) as \$r | \$r >= 0.97 and \$r <= 1.03" "$T/sp4.run" > /dev/null'
"$ZOO" llama2-7b --swiglu sideways > /dev/null 2> "$T/err"
check "zoo --swiglu sideways: exit 2 naming the choices" '[ $? -eq 2 ] && grep -q "unfused or fused" "$T/err"'
jq '(.ops[] | select(.name == "l0.silu")).recompute = 2' "$T/sw-fused.json" > "$T/sw-bad.json"
"$PLANNER" search "$T/sw-bad.json" --devices 1 -o "$T/sw-bad.plan" > /dev/null 2> "$T/err"
check "a model's op recompute 2: exit 2 naming the op and the field, nothing written" \
  '[ $? -eq 2 ] && grep -q "l0.silu.*recompute: expected 0 or 1" "$T/err" && [ ! -e "$T/sw-bad.plan" ]'

# --- run: a plan on 6 CPU ranks trains with the losses of the 1-device plan
GT="$SRC/tests/fixtures/models/gpt-tiny.json"
"$PLANNER" search "$GT" --devices 1 -o "$T/gt1.plan" > /dev/null 2>&1
# (rec's fastest plan on 6 devices is dp's, every op whole: under 100 KB a device it cuts
# 2 and 6 ways, which the ranks must carry out)
"$PLANNER" search "$GT" --devices 6 --mode rec --memory-reserve 0 --memory-limit 100K \
  -o "$T/gt6.plan" > /dev/null 2>&1
"$PLANNER" run "$GT" --strategy "$T/gt1.plan" --steps 3 --json > "$T/run1" 2> "$T/err"
check "run on 1 rank exits 0" '[ $? -eq 0 ]'
"$PLANNER" run "$GT" --strategy "$T/gt6.plan" --steps 3 --json > "$T/run6" 2> "$T/err"
check "run on 6 ranks exits 0" '[ $? -eq 0 ]'
check "run: 3 steps and a summary" '[ "$(wc -l < "$T/run6")" = 4 ]'
same=$(jq -s --slurpfile b "$T/run6" '[., $b] | transpose | map(select(.[0].loss))
        | map(((.[0].loss - .[1].loss) | fabs) / (.[0].loss | fabs) <= 1e-4) | all' "$T/run1")
check "run: 6-rank losses equal the 1-rank losses" '[ "$same" = true ]'
check "run: the loss goes down" \
  '[ "$(jq -s "map(select(.loss)) | .[2].loss < .[0].loss" "$T/run6")" = true ]'
check "run: reports measured and predicted step time" \
  'jq -s -e ".[3] | .measured_step_seconds > 0 and .predicted_step_seconds > 0" "$T/run6" > /dev/null'
# the Mixtral-shaped fixture with its experts split over 4 ranks (expert parallel, all-to-all)
MT="$SRC/tests/fixtures/models/moe-tiny.json"
"$PLANNER" search "$MT" --devices 1 -o "$T/mt1.plan" > /dev/null 2>&1
"$PLANNER" search "$MT" --devices 4 -o "$T/mt4.plan" > /dev/null 2>&1
jq '.parallel_strategy_item |= with_entries(if (.key | test("\\.(gate|up)$"))
      then .value.parallel_strategy = [[4, 1, 1], [4, 1, 1]]
      elif (.key | test("\\.down$")) then .value.parallel_strategy = [[4, 1, 1], [4, 1, 1]]
      else . end)' "$T/mt4.plan" > "$T/mt4ep.plan"
"$PLANNER" run "$MT" --strategy "$T/mt1.plan" --steps 3 --json > "$T/mrun1" 2> "$T/err"
"$PLANNER" run "$MT" --strategy "$T/mt4ep.plan" --steps 3 --json > "$T/mrun4" 2> "$T/err"
check "run MoE with experts split 4 ways exits 0" '[ $? -eq 0 ]'
same=$(jq -s --slurpfile b "$T/mrun4" '[., $b] | transpose | map(select(.[0].loss))
        | map(((.[0].loss - .[1].loss) | fabs) / (.[0].loss | fabs) <= 1e-4) | all' "$T/mrun1")
check "run: expert-parallel MoE losses equal the 1-rank losses" '[ "$same" = true ]'
# whole-job plans run too: micro-batches (gradient accumulation), ZeRO 1-3, full and selective
# recompute, and pipeline stages (Megatron's 1F1B and its interleaved schedule, activations and
# gradients between stages)
for cfg in "--pp 1 --micro-batches 2 --zero 1 --recompute full" "--pp 1 --micro-batches 4 --zero 2" \
           "--pp 1 --micro-batches 2 --zero 3 --recompute selective" "--pp 1 --tp 2 --micro-batches 2 --zero 1" \
           "--pp 2 --micro-batches 4" "--pp 4 --micro-batches 4 --recompute selective" \
           "--pp 2 --dp 2 --micro-batches 2 --zero 1 --recompute full" \
           "--pp 2 --micro-batches 4 --virtual-stages 2"; do
  vs=1
  [[ $cfg == *--virtual-stages* ]] && vs=${cfg##* }
  # shellcheck disable=SC2086
  "$PLANNER" search "$GT" --devices 4 --virtual-stages "$vs" $cfg -o "$T/job.plan" > /dev/null 2>&1
  "$PLANNER" run "$GT" --strategy "$T/job.plan" --steps 3 --json > "$T/jrun" 2> "$T/err"
  rc=$?
  same=$(jq -s --slurpfile b "$T/jrun" '[., $b] | transpose | map(select(.[0].loss))
          | map(((.[0].loss - .[1].loss) | fabs) / (.[0].loss | fabs) <= 1e-4) | all' "$T/run1")
  check "run a whole-job plan ($cfg, 4 ranks): the 1-rank losses" \
    '[ $rc -eq 0 ] && [ "$same" = true ] && [ "$(jq .pipeline.stages "$T/job.plan")" = "${cfg:5:1}" ] &&
     [ "$(jq ".pipeline.virtual_stages // 1" "$T/job.plan")" = "$vs" ]'
done
# a fused Attention is an attention core by itself: selective recompute runs it again alone (its
# output and log-sum-exps not kept), with the one-device losses, on tensor-parallel stages too
"$ZOO" gpt-small --layers 2 --hidden 32 --heads 4 --head-dim 8 --ffn 64 --seq 8 --vocab 64 \
  --batch 4 --dtype float32 --attention fused > "$T/gf.json"
"$PLANNER" search "$T/gf.json" --devices 1 -o "$T/gf-1.plan" > /dev/null 2>&1
"$PLANNER" run "$T/gf.json" --strategy "$T/gf-1.plan" --steps 3 --json > "$T/gf-r1" 2> "$T/err"
"$PLANNER" search "$T/gf.json" --devices 4 --pp 2 --tp 2 --micro-batches 2 --recompute selective -o "$T/gfs.plan" > /dev/null 2> "$T/err"
"$PLANNER" run "$T/gf.json" --strategy "$T/gfs.plan" --steps 3 --json > "$T/gf-rs" 2> "$T/err"
rc=$?
same=$(same3 "$T/gf-r1" "$T/gf-rs")
check "fused attention, --recompute selective (pp 2, tp 2): the Attention ops run again alone, the 1-device losses" \
  '[ $rc -eq 0 ] && [ "$same" = true ] && [ "$(jq -r .recompute "$T/gfs.plan")" = selective ]'
# more chunks a device than the search tries (Megatron's recipes run one layer a chunk: 20 on
# Llama-2 70B's 4 stages): a 10-layer GPT on 2 stages of 10 chunks, each a layer's attention or
# MLP, trains with the losses of one device, and cost reprices it
"$ZOO" gpt-small --layers 10 --hidden 32 --heads 4 --head-dim 8 --ffn 64 --seq 8 --vocab 64 \
  --batch 4 --dtype float32 > "$T/g10.json"
"$PLANNER" search "$T/g10.json" --devices 1 -o "$T/g10-1.plan" > /dev/null 2>&1
"$PLANNER" run "$T/g10.json" --strategy "$T/g10-1.plan" --steps 3 --json > "$T/g10-r1" 2> "$T/err"
"$PLANNER" search "$T/g10.json" --devices 2 --pp 2 --micro-batches 2 --virtual-stages 10 -o "$T/g10v.plan" > /dev/null 2> "$T/err"
"$PLANNER" run "$T/g10.json" --strategy "$T/g10v.plan" --steps 3 --json > "$T/g10-rv" 2> "$T/err"
rc=$?
same=$(same3 "$T/g10-r1" "$T/g10-rv")
check "--virtual-stages 10 (beyond the 8 a search tries): interleaved over 10 chunks a device, the 1-device losses, repriced by cost" \
  '[ $rc -eq 0 ] && [ "$same" = true ] && [ "$(jq -c "[.pipeline.schedule, .pipeline.virtual_stages]" "$T/g10v.plan")" = "[\"interleaved-1F1B\",10]" ] &&
   [ "$("$PLANNER" cost "$T/g10.json" --strategy "$T/g10v.plan" | jq .step_seconds)" = "$(jq .cost.step_seconds "$T/g10v.plan")" ]'
jq '.parallel_strategy_item |= with_entries(if .key == "l0.fc1" then .value.parallel_strategy[0][0] = 5 else . end)' \
  "$T/gt6.plan" > "$T/bad.plan"
"$PLANNER" run "$GT" --strategy "$T/bad.plan" > /dev/null 2> "$T/err"
check "run: a strategy that does not fit exits 2" '[ $? -eq 2 ]'
check "... naming the op" 'grep -q "l0.fc1" "$T/err"'
"$PLANNER" run "$GT" --strategy "$T/gt6.plan" --devices 4 > /dev/null 2> "$T/err"
check "run: a plan for another device count exits 2" '[ $? -eq 2 ]'
# the cuda backend: with a GPU the 1-device plan gives the cpu losses; without
# one (or without CUDA in this build) it says so and exits 4
# names that JSON must escape stay valid JSON in run's output
jq '(.ops[0].name) = "fc\"1\\x"' "$SRC/examples/tiny-mlp.json" > "$T/q.json"
"$PLANNER" search "$T/q.json" --devices 2 -o "$T/q.plan" > /dev/null 2>&1
"$PLANNER" run "$T/q.json" --strategy "$T/q.plan" --steps 2 --json --profile > "$T/qrun" 2> "$T/err"
check "run --json --profile: an op named fc\"1\\x comes out as valid JSON lines" \
  '[ $? -eq 0 ] && jq -e -s "map(select(.op == \"fc\\\"1\\\\x\")) | length == 1" "$T/qrun" > /dev/null'
"$PLANNER" run "$GT" --strategy "$T/gt1.plan" --backend cuda --steps 3 --json > "$T/runc" 2> "$T/err"
rc=$?
if [ $rc -eq 0 ]; then
  same=$(jq -s --slurpfile b "$T/runc" '[., $b] | transpose | map(select(.[0].loss))
          | map(((.[0].loss - .[1].loss) | fabs) / (.[0].loss | fabs) <= 1e-4) | all' "$T/run1")
  check "run --backend cuda: the GPU's losses equal the cpu backend's" '[ "$same" = true ]'
else
  check "run --backend cuda without a GPU: exit 4 saying why" \
    '[ $rc -eq 4 ] && grep -Eq "cuda backend (found no GPU|.*has no)|no cuda backend" "$T/err"'
fi

# --- the GPU parts are a module loaded on demand: the command links no CUDA
#     library, and a missing or broken module is exit 4 naming it
if [ -e "$(dirname "$PLANNER")/libplanner-cuda.so" ]; then
  check "planner links no CUDA library (the cuda module does)" \
    '! ldd "$PLANNER" | grep -Eq "libcudart|libcublas|libnccl"'
  check "the cuda module exports its two tables alone, the executor's and topology's (sanitizers' __ symbols aside)" \
    '[ "$(nm -D --defined-only "$(dirname "$PLANNER")/libplanner-cuda.so" | awk "{ print \$3 }" | grep -v "^__" | sort | tr "\n" " ")" = "pl_cuda_exec_v1 pl_topo_gpu_v1 " ]'
fi
PL_CUDA_MODULE="$T/none.so" "$PLANNER" run "$GT" --strategy "$T/gt1.plan" --backend cuda --steps 1 \
  > /dev/null 2> "$T/err"
check "PL_CUDA_MODULE naming no file: exit 4 naming it" \
  '[ $? -eq 4 ] && grep -q "PL_CUDA_MODULE names $T/none.so, which does not exist\|no cuda backend" "$T/err"'
echo "not a library" > "$T/broken.so"
PL_CUDA_MODULE="$T/broken.so" "$PLANNER" calibrate --backend cuda -o "$T/cal.json" > /dev/null 2> "$T/err"
check "a broken cuda module: exit 4 saying why, nothing written" \
  '[ $? -eq 4 ] && grep -q "cannot load $T/broken.so\|no cuda backend" "$T/err" && [ ! -e "$T/cal.json" ]'

# --- run --profile: a row per op, measured beside predicted
"$PLANNER" run "$GT" --strategy "$T/gt6.plan" --steps 2 --json --profile > "$T/prof" 2> "$T/err"
check "run --profile exits 0" '[ $? -eq 0 ]'
check "run --profile: one row per op of the model" \
  '[ "$(jq -s "map(select(.op)) | map(.op) | sort" "$T/prof")" = "$(jq "[.ops[].name] | sort" "$GT")" ]'
check "run --profile: predicted and measured compute for every op" \
  '[ "$(jq -s "map(select(.op) | .compute_seconds >= 0 and .predicted_compute_seconds >= 0) | all" "$T/prof")" = true ]'
# every stage's ops are timed (by the stage's first rank), not only stage 0's
"$PLANNER" search "$GT" --devices 4 --pp 2 --micro-batches 4 --virtual-stages 1 -o "$T/pp.plan" \
  > /dev/null 2>&1
"$PLANNER" run "$GT" --strategy "$T/pp.plan" --steps 2 --json --profile > "$T/prof" 2> "$T/err"
check "run --profile on 2 stages: every op that computes is timed, the last stage's too" \
  '[ "$(jq -s "map(select(.op and .predicted_compute_seconds > 0) | .compute_seconds > 0) | all" "$T/prof")" = true ] &&
   [ "$(jq -s "map(select(.op == \"loss\")) | .[0].compute_seconds > 0" "$T/prof")" = true ]'

# --- calibrate: the cpu backend gives a cluster file search, cost and run accept
"$PLANNER" calibrate --backend cpu --ranks 2 --max-bytes 64KiB -o "$T/cpu2.json" > "$T/out" 2> "$T/err"
check "calibrate --backend cpu exits 0" '[ $? -eq 0 ]'
check "calibrate: a planner.cluster/1 file of 2 devices with raw measurements" \
  '[ "$(jq -r "[.format, .devices_per_node, (.calibration.collectives.all_reduce | length)] | @csv" "$T/cpu2.json")" = "\"planner.cluster/1\",2,1" ]'
check "calibrate: the summary names the collectives" 'grep -q "all_reduce *2 ranks" "$T/out"'
"$PLANNER" search "$GT" --cluster "$T/cpu2.json" -o "$T/gtc.plan" > /dev/null 2>&1
check "search with the calibrated cluster exits 0" '[ $? -eq 0 ]'
check "cost reproduces that plan's step time on the calibrated cluster" \
  '[ "$("$PLANNER" cost "$GT" --strategy "$T/gtc.plan" --cluster "$T/cpu2.json" | jq .step_seconds)" = "$(jq .cost.step_seconds "$T/gtc.plan")" ]'
"$PLANNER" run "$GT" --strategy "$T/gtc.plan" --cluster "$T/cpu2.json" --steps 2 > /dev/null 2> "$T/err"
check "run with the calibrated cluster exits 0" '[ $? -eq 0 ]'
if nvidia-smi -L > /dev/null 2>&1; then
  ok "# skip calibrate without --backend and no GPU: this machine has a GPU (bench_gpu.sh calibrates it)"
else
  "$PLANNER" calibrate > /dev/null 2> "$T/err"
  check "calibrate without --backend and no GPU: exit 4 saying so" \
    '[ $? -eq 4 ] && grep -q "GPU" "$T/err"'
fi
# launched as two processes (as torchrun would) without two GPUs: the ranks
# meet, and both stop with exit 4 and a message instead of waiting
port=$((20000 + RANDOM % 20000))
for r in 0 1; do
  WORLD_SIZE=2 RANK=$r LOCAL_RANK=$r MASTER_ADDR=127.0.0.1 PLANNER_PORT=$port \
    timeout 120 "$PLANNER" calibrate -o "$T/two.json" > /dev/null 2> "$T/err$r" &
  pids[$r]=$!
done
wait "${pids[0]}"; rc0=$?
wait "${pids[1]}"; rc1=$?
check "calibrate as 2 processes without 2 GPUs: both ranks exit 4" '[ $rc0 -eq 4 ] && [ $rc1 -eq 4 ]'
check "calibrate as 2 processes: each says why (GPU, CUDA or NCCL)" \
  'grep -qi "gpu\|cuda\|nccl" "$T/err0" && grep -qi "gpu\|cuda\|nccl" "$T/err1"'
check "calibrate as 2 processes: no cluster file written" '[ ! -e "$T/two.json" ]'
WORLD_SIZE=2 RANK=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 "$PLANNER" calibrate > /dev/null 2> "$T/err"
check "calibrate with RANK outside WORLD_SIZE: exit 2 naming RANK" \
  '[ $? -eq 2 ] && grep -q "RANK: expected an integer from 0 to 1" "$T/err"'
"$PLANNER" calibrate --backend cpu --ranks 0 > /dev/null 2> "$T/err"
check "calibrate --ranks 0 exits 2" '[ $? -eq 2 ] && grep -q -- "--ranks" "$T/err"'
"$PLANNER" calibrate --backend tpu > /dev/null 2> "$T/err"
check "calibrate --backend tpu exits 2" '[ $? -eq 2 ]'
# --- calibrate --from-nccl-tests: recorded logs become a cluster file
NCCL="$SRC/tests/fixtures/nccl"
"$PLANNER" calibrate --from-nccl-tests "$NCCL/a100x8-single-node-allgather.txt" \
  "$NCCL/a100x8-single-node-alltoall.txt" -o "$T/a100.json" > "$T/out" 2> "$T/err"
check "calibrate --from-nccl-tests exits 0" '[ $? -eq 0 ]'
check "nccl-tests: the A100 preset's device, both collectives fitted, both logs kept" \
  '[ "$(jq -r "[.device.name, .devices_per_node, (.collectives.all_gather.intra_node | length > 0),
       (.collectives.all_to_all.intra_node | length > 0), (.calibration.logs | length)] | @csv" "$T/a100.json")" = "\"A100-SXM4-40GB\",8,true,true,2" ]'
"$PLANNER" search "$GT" --cluster "$T/a100.json" -o "$T/gta.plan" > /dev/null 2>&1
check "search with the nccl-tests cluster exits 0" '[ $? -eq 0 ]'
check "cost reproduces that plan on the nccl-tests cluster" \
  '[ "$("$PLANNER" cost "$GT" --strategy "$T/gta.plan" --cluster "$T/a100.json" | jq .step_seconds)" = "$(jq .cost.step_seconds "$T/gta.plan")" ]'
"$PLANNER" calibrate --from-nccl-tests "$NCCL/a100x8x2-multinode-ib-allreduce.txt" --ranks 16 \
  --nodes 2 --cluster a100x8 -o "$T/ib.json" > /dev/null 2> "$T/err"
check "nccl-tests across 2 hosts: an inter_node all_reduce fit over 16 ranks, 2 nodes x 8" \
  '[ $? -eq 0 ] && [ "$(jq -c "[.nodes, .devices_per_node, ([.collectives.all_reduce.inter_node[].ranks] | unique)]" "$T/ib.json")" = "[2,8,[16]]" ]'
"$PLANNER" calibrate --from-nccl-tests "$NCCL/a100x8x2-multinode-ib-allreduce.txt" > /dev/null 2> "$T/err"
check "nccl-tests without Using devices: the rank count from busbw/algbw, said on stderr" \
  '[ $? -eq 0 ] && grep -q "16 ranks from busbw/algbw" "$T/err"'
grep -v "all_reduce_perf" "$NCCL/h100x8-single-node-allreduce.txt" > "$T/mystery.txt"
"$PLANNER" calibrate --from-nccl-tests "$T/mystery.txt" -o "$T/mystery.json" > /dev/null 2> "$T/err"
check "a log that names no collective: exit 2 asking for --collective, nothing written" \
  '[ $? -eq 2 ] && grep -q -- "--collective" "$T/err" && [ ! -e "$T/mystery.json" ]'
"$PLANNER" calibrate --from-nccl-tests "$T/mystery.txt" --collective all_reduce -o "$T/mystery.json" > /dev/null 2>&1
check "--collective names it" '[ $? -eq 0 ] && [ "$(jq ".collectives.all_reduce.intra_node | length > 0" "$T/mystery.json")" = true ]'
sed '30s/ *35.65 .*$//' "$NCCL/h100x8-single-node-allreduce.txt" > "$T/broken-allreduce.txt"
"$PLANNER" calibrate --from-nccl-tests "$T/broken-allreduce.txt" -o "$T/broken.json" > /dev/null 2> "$T/err"
check "a broken row: exit 2 naming file and line, nothing written" \
  '[ $? -eq 2 ] && grep -q "broken-allreduce.txt:[0-9]*:" "$T/err" && [ ! -e "$T/broken.json" ]'
"$PLANNER" calibrate --from-nccl-tests > /dev/null 2> "$T/err"
check "--from-nccl-tests without logs exits 2" '[ $? -eq 2 ]'
"$PLANNER" calibrate --backend cpu --nodes 2 > /dev/null 2> "$T/err"
check "--nodes without --from-nccl-tests exits 2" '[ $? -eq 2 ] && grep -q -- "--from-nccl-tests" "$T/err"'
"$PLANNER" calibrate --from-nccl-tests "$T/nonexistent.txt" > /dev/null 2> "$T/err"
check "a missing log exits 2 naming it" '[ $? -eq 2 ] && grep -q "nonexistent.txt" "$T/err"'
# --- topology: the recorded DGX-2H becomes a 16-GPU cluster file the searchers take
DGX2="$SRC/tests/fixtures/topology/nvidia-dgx2-16xV100-nvswitch.xml"
"$PLANNER" topology --xml "$DGX2" -o "$T/dgx2.json" > "$T/out" 2> "$T/err"
check "topology --xml exits 0" '[ $? -eq 0 ]'
check "topology: 16 GPUs, 8 per NUMA node, 6 NVLinks each, in the cluster file" \
  '[ "$(jq -c "[.devices_per_node, (.topology.gpus | length), ([.topology.gpus[] | select(.numa == 0)] | length),
       ([.topology.gpus[].nvlinks] | unique)]" "$T/dgx2.json")" = "[16,16,8,[6]]" ]'
check "topology: the summary names the GPUs and switches" 'grep -q "16 GPUs (Tesla V100" "$T/out" && grep -q NVSwitch "$T/out"'
"$PLANNER" search "$GT" --cluster "$T/dgx2.json" -o "$T/gtd.plan" > /dev/null 2>&1
check "search on the discovered cluster plans for 16 devices" \
  '[ $? -eq 0 ] && [ "$(jq .cluster.devices "$T/gtd.plan")" = 16 ]'
"$PLANNER" topology --xml "$DGX2" --json > "$T/dgx2-stdout.json" 2> /dev/null
check "topology --json prints the same cluster file" 'cmp -s "$T/dgx2.json" "$T/dgx2-stdout.json"'
head -c 5000 "$DGX2" > "$T/cut.xml"
"$PLANNER" topology --xml "$T/cut.xml" -o "$T/cut.json" > /dev/null 2> "$T/err"
check "a truncated XML exits 2 naming it, nothing written" \
  '[ $? -eq 2 ] && grep -q "cut.xml" "$T/err" && [ ! -e "$T/cut.json" ]'
# (hwloc's pci plugin leaks ~1 KB loading a live machine: no leak check here)
ASAN_OPTIONS=detect_leaks=0 "$PLANNER" topology -o "$T/here.json" > "$T/out" 2> "$T/err"
check "topology of this machine exits 0 with a cluster file" \
  '[ $? -eq 0 ] && [ "$(jq -r .format "$T/here.json")" = planner.cluster/1 ]'
if [ "$(jq ".topology.gpus | length" "$T/here.json")" = 0 ]; then
  check "no GPUs here: said, and the preset stands in" 'grep -q "no GPUs found" "$T/out"'
fi
"$PLANNER" topology stray > /dev/null 2> "$T/err"
check "topology with a stray argument exits 2" '[ $? -eq 2 ]'
# --preset: a preset written out as a cluster file to edit, pricing as the preset does
"$PLANNER" topology --preset a100-80gx8:2 -o "$T/pre.json" > "$T/out" 2> "$T/err"
check "topology --preset writes the preset's cluster file (2 nodes of 8 A100 80GB, 24 GB/s across)" \
  '[ $? -eq 0 ] && [ "$(jq -c "[.format, .nodes, .devices_per_node, .device.name, .links.inter_node.busbw]" "$T/pre.json")" = "[\"planner.cluster/1\",2,8,\"A100-SXM4-80GB\",24000000000]" ] && grep -q "inter-node 24 GB/s" "$T/out"'
"$PLANNER" search "$GT" --cluster a100-80gx8:2 -o "$T/pre-a.json" > /dev/null 2>&1
"$PLANNER" search "$GT" --cluster "$T/pre.json" -o "$T/pre-b.json" > /dev/null 2>&1
check "a search on that file prices as on the preset" \
  '[ -s "$T/pre-a.json" ] && [ "$(jq .cost.step_seconds "$T/pre-a.json")" = "$(jq .cost.step_seconds "$T/pre-b.json")" ]'
"$PLANNER" topology --preset nosuch > /dev/null 2> "$T/err"
check "topology --preset of no preset and no file exits 2 naming --preset" \
  '[ $? -eq 2 ] && grep -q "^planner: --preset nosuch: not a file and not a preset" "$T/err"'
"$PLANNER" topology --preset h100x8 --xml "$DGX2" > /dev/null 2> "$T/err"
check "topology --preset with --xml exits 2" '[ $? -eq 2 ] && grep -q "one or the other" "$T/err"'

echo '{"format": "planner.cluster/1", "nodes": 1, "devices_per_node": 2, "device": {"gemm_efficiency": {"max": -1}}}' > "$T/badc.json"
"$PLANNER" search "$GT" --cluster "$T/badc.json" > /dev/null 2> "$T/err"
check "a cluster file with a bad gemm_efficiency exits 2 naming the field" \
  '[ $? -eq 2 ] && grep -q "device.gemm_efficiency.max" "$T/err"'

# a DenseNet-style block is too entangled for exact dp: dp says so (exit 3, no plan of that
# method, not a system failure's 4, and not "no plan fits"), and so does a whole-job search with
# dp inside it (it said exit 3 "no plan fits the memory limit" with a least need of 52 KB); auto
# plans it with rec
DB="$SRC/tests/fixtures/models/dense-block.json"
"$PLANNER" search "$DB" --devices 8 --mode dp -o "$T/db.plan" > /dev/null 2> "$T/err"
check "--mode dp on a graph too entangled: exit 3 saying so and what plans it, nothing written" \
  '[ $? -eq 3 ] && grep -q "too entangled for exact dp (--mode rec or auto plans it" "$T/err" && [ ! -e "$T/db.plan" ]'
"$PLANNER" search "$DB" --devices 8 --job --mode dp -o "$T/db.plan" > /dev/null 2> "$T/err"
check "--job --mode dp on a graph too entangled: exit 3 with dp's reason, not 'no plan fits'" \
  '[ $? -eq 3 ] && grep -q "too entangled for exact dp" "$T/err" && ! grep -q "no plan fits" "$T/err"'
"$PLANNER" search "$DB" --devices 8 -o "$T/db.plan" > /dev/null 2> "$T/err"
check "the default search plans the entangled block (exit 0, auto, unproven), saying why" \
  '[ $? -eq 0 ] && grep -q "the default search plans it with --mode auto" "$T/err" && jq -e ".search.mode == \"auto\" and .search.optimal == false" "$T/db.plan" > /dev/null'
rm -f "$T/db.plan"
# the default whole-job search: dp's refusal at the first point hands every point to rec (it
# used to fail the job, then plan it again with auto, which ran DenseNet-121 out of its time)
"$PLANNER" search "$DB" --devices 8 --job -o "$T/db.plan" > /dev/null 2> "$T/err"
check "the default search --job plans the entangled block (exit 0, rec at each point, unproven), saying why" \
  '[ $? -eq 0 ] && jq -e ".search.mode == \"rec\" and .search.optimal == false and (.search.why | test(\"too entangled for exact dp: rec planned each point\"))" "$T/db.plan" > /dev/null'
rm -f "$T/db.plan"
"$PLANNER" search "$DB" --devices 8 --mode auto -o "$T/db.plan" > "$T/out" 2>&1
check "auto plans the entangled block with rec, saying why" \
  '[ $? -eq 0 ] && grep -q "auto fell back to rec" "$T/out" && grep -q "because dp failed" "$T/out" && [ -s "$T/db.plan" ]'
"$PLANNER" search "$DB" --devices 8 --job --mode rec -o "$T/db.plan" > /dev/null 2>&1
check "--job --mode rec plans the entangled block" '[ $? -eq 0 ] && [ -s "$T/db.plan" ]'

# --- whole-job plans: GPT-3-13B-shaped layers on 2 nodes x 8 with two
# pipeline stages; rank groups consistent, `cost` reproduces the step
G13="$SRC/tests/fixtures/models/gpt13b-2layers.json"
"$PLANNER" search "$G13" --cluster h100x8:2 --pipeline-stages 2 --micro-batches auto \
  --zero auto -o "$T/job.plan" > "$T/out" 2>&1
check "job search with 2 stages exits 0" '[ $? -eq 0 ] && grep -q "rank 0 pp group" "$T/out"'
check "job: 2 stages, 1F1B (interleaved or not), every op on stage 0 or 1, both used" \
  '[ "$(jq -c "[.pipeline.stages, (.pipeline.schedule | test(\"1F1B\")), ([.parallel_strategy_item[].stage] | unique)]" "$T/job.plan")" = "[2,true,[0,1]]" ]'
for k in dp tp pp; do
  check "job: every rank in exactly one $k group" \
    '[ "$(jq -c "[.groups.$k[][]] | sort" "$T/job.plan")" = "$(jq -nc "[range(16)]")" ]'
done
check "job: dp x tp x pp degrees multiply to 16" \
  '[ "$(jq "[.groups.dp[0], .groups.tp[0], .groups.pp[0]] | map(length) | .[0] * .[1] * .[2]" "$T/job.plan")" = 16 ]'
check "job: tp groups inside a node" \
  '[ "$(jq "[.groups.tp[] | map(. / 8 | floor) | unique | length] | max" "$T/job.plan")" = 1 ]'
# sequence parallel: the norm regions' tokens are cut over tensor-parallel ranks
check "job: sp groups present, every rank in exactly one" \
  '[ "$(jq -c "[.groups.sp[][]] | sort" "$T/job.plan")" = "$(jq -nc "[range(16)]")" ]'
check "job: each sp group inside one tp group" \
  '[ "$(jq "[.groups.sp[] as \$s | [.groups.tp[] | select(index(\$s[0]) != null)][0] as \$t
           | (\$s - \$t | length)] | max" "$T/job.plan")" = 0 ]'
"$PLANNER" cost "$G13" --strategy "$T/job.plan" > "$T/jc"
check "cost reproduces the job plan's step, memory and bubble" \
  '[ "$(jq -c "[.step_seconds, .peak_memory_bytes, .bubble_seconds]" "$T/jc")" = "$(jq -c "[.cost.step_seconds, .cost.peak_memory_bytes, .cost.bubble_seconds]" "$T/job.plan")" ]'
jq '.pipeline.micro_batches = 7 | .pipeline.virtual_stages = 1' "$T/job.plan" > "$T/bad.plan"
"$PLANNER" cost "$G13" --strategy "$T/bad.plan" > /dev/null 2> "$T/err"
check "cost: micro-batches that do not divide the batch exit 2 naming them" \
  '[ $? -eq 2 ] && grep -q "micro_batches 7" "$T/err"'
"$PLANNER" search "$G13" --cluster h100x8:2 --pipeline-stages 3 > /dev/null 2> "$T/err"
check "search: 3 stages of 16 devices exit 2 naming the divisors" \
  '[ $? -eq 2 ] && grep -q "pipeline stages 3 do not divide the 16 devices (1 would sit idle); the divisors are 1, 2, 4, 8, 16" "$T/err"'
"$PLANNER" search "$G13" --zero 5 > /dev/null 2> "$T/err"
check "search: --zero 5 exits 2" '[ $? -eq 2 ] && grep -q "zero 5" "$T/err"'
"$PLANNER" search "$G13" --cluster h100x8:2 --job --time-limit 1e-9 -o "$T/never.plan" \
  > /dev/null 2> "$T/err"
check "job search: a time limit that runs out exits 3, writes nothing" \
  '[ $? -eq 3 ] && grep -q "time limit of 1e-09 s ran out" "$T/err" && [ ! -e "$T/never.plan" ]'
# --- the default search prefers plain data parallelism within PL_JOB_SIMPLER (2 %) of the fastest
#     plan, says so with that plan's step, and --fastest keeps the fastest: gpt-small on 8 H100s
"$PLANNER" search "$SRC/examples/gpt-small.json" --devices 8 -o "$T/pdp.plan" > /dev/null 2>&1
"$PLANNER" search "$SRC/examples/gpt-small.json" --devices 8 --fastest -o "$T/pfast.plan" > /dev/null 2>&1
pdp=$(jq .cost.step_seconds "$T/pdp.plan") pfast=$(jq .cost.step_seconds "$T/pfast.plan")
check "search prefers data parallelism within 2 % of the fastest plan (--fastest: the fastest), and says so" \
  'awk -v a="$pdp" -v b="$pfast" "BEGIN { exit !(a >= b && a <= 1.02 * b) }" &&
   if [ "$pdp" != "$pfast" ]; then
     jq -e "[.parallel_strategy_item[] | .parallel_strategy[0][0]] | all(. == 8 or . == 1)" "$T/pdp.plan" > /dev/null &&
     jq -e ".search.space | startswith(\"data-parallel plans\")" "$T/pdp.plan" > /dev/null &&
     [ "$(jq -r .search.space_widen "$T/pdp.plan")" = --fastest ]
   fi'
# --- the default search's space is the whole job's (issue 50): a per-op plan is its point of one
#     stage and micro-batch without ZeRO or recompute. torchvision's FCN-ResNet50, batch 8, on 8
#     H100s, where --dp 8 (a whole-job search) takes ZeRO 1: the default plan is no slower, is that
#     whole-job plan, and records the per-op plan's step, which --mode dp (the per-op search alone,
#     as a given mode plans it) returns.
FCN=$SRC/tests/fixtures/models/fcn_resnet50.onnx
"$PLANNER" search "$FCN" --devices 8 -o "$T/fcn.plan" > "$T/fcn.out" 2>&1
"$PLANNER" search "$FCN" --devices 8 --fastest -o "$T/fcn-fast.plan" > /dev/null 2>&1
"$PLANNER" search "$FCN" --devices 8 --dp 8 -o "$T/fcn-dp.plan" > /dev/null 2>&1
"$PLANNER" search "$FCN" --devices 8 --tp 8 -o "$T/fcn-tp.plan" > /dev/null 2>&1
"$PLANNER" search "$FCN" --devices 8 --mode dp -o "$T/fcn-perop.plan" > /dev/null 2>&1
fcn_dp=$(jq .cost.step_seconds "$T/fcn-dp.plan")
fcn_perop=$(jq .cost.step_seconds "$T/fcn-perop.plan")
check "fcn_resnet50 on 8: --dp 8 (ZeRO $(jq .optimizer_shard "$T/fcn-dp.plan")) beats the per-op plan ($fcn_perop s)" \
  'num_lt "$fcn_dp" "$fcn_perop" && [ "$(jq ".optimizer_shard // 0" "$T/fcn-perop.plan")" = 0 ]'
check "fcn_resnet50 on 8: the default and --fastest plans are no slower than --dp 8 and --tp 8, take ZeRO, and record the per-op step" \
  '( for p in fcn fcn-fast; do
       num_le "$(jq .cost.step_seconds "$T/$p.plan")" "$fcn_dp" &&
       num_le "$(jq .cost.step_seconds "$T/$p.plan")" "$(jq .cost.step_seconds "$T/fcn-tp.plan")" &&
       [ "$(jq .optimizer_shard "$T/$p.plan")" -ge 1 ] &&
       [ "$(jq .search.per_op_step_seconds "$T/$p.plan")" = "$fcn_perop" ] || exit 1
     done )'
check "fcn_resnet50 on 8: planner cost reproduces the default (whole-job) plan" \
  '[ "$("$PLANNER" cost "$FCN" --strategy "$T/fcn.plan" | jq .step_seconds)" = "$(jq .cost.step_seconds "$T/fcn.plan")" ]'
"$PLANNER" search "$SRC/examples/gpt-small.json" --devices 8 -o "$T/gdef.plan" > /dev/null 2>&1
"$PLANNER" search "$SRC/examples/gpt-small.json" --devices 8 --dp 8 -o "$T/gdp.plan" > /dev/null 2>&1
check "gpt-small on 8: --dp 8 (ZeRO kept off within 2 %) is no faster than the default plan, which says nothing of ZeRO" \
  'awk -v a="$(jq .cost.step_seconds "$T/gdef.plan")" -v b="$(jq .cost.step_seconds "$T/gdp.plan")" "BEGIN { exit !(a <= b * (1 + 1e-9)) }" &&
   jq -e "(.search.space // \"\") | contains(\"without ZeRO\") | not" "$T/gdef.plan" > /dev/null'

# --- one truth per plan: the recorded cluster, the model digest, whether it fits
"$PLANNER" search "$SRC/examples/gpt-small.json" --cluster a100-80gx8 --micro-batches 16 \
  -o "$T/a80.plan" > /dev/null 2>&1
"$PLANNER" cost "$SRC/examples/gpt-small.json" --strategy "$T/a80.plan" > "$T/c" 2> "$T/err"
check "cost reprices a micro-batch-of-one plan on the cluster it records, without a note" \
  '[ $? -eq 0 ] && [ "$(jq -c "[.step_seconds, .peak_memory_bytes]" "$T/c")" = "$(jq -c "[.cost.step_seconds, .cost.peak_memory_bytes]" "$T/a80.plan")" ] && [ ! -s "$T/err" ]'
check "... its breakdown adds up to the peak, the A100 80 GB reserve included" \
  'num_close "$(jq "[.memory_breakdown_bytes[]] | add" "$T/c")" "$(jq .peak_memory_bytes "$T/c")" &&
   [ "$(jq .memory_breakdown_bytes.reserved "$T/c")" = "$(jq .cluster.description.device.memory_reserve_bytes "$T/a80.plan")" ] &&
   [ "$(jq .fits "$T/c")" = true ]'
"$PLANNER" cost "$SRC/examples/gpt-small.json" --strategy "$T/a80.plan" --cluster h100x8 > /dev/null 2> "$T/err"
check "cost --cluster other than the recorded one says so" \
  '[ $? -eq 0 ] && grep -q "was priced on cluster .a100-80gx8." "$T/err"'
"$PLANNER" cost "$SRC/examples/gpt-small.json" --strategy "$T/a80.plan" --memory-limit 1G > "$T/c" 2> "$T/err"
check "cost: a plan that does not fit prints fits false and exits 3" \
  '[ $? -eq 3 ] && [ "$(jq .fits "$T/c")" = false ] && grep -q "does not fit" "$T/err"'
"$PLANNER" cost "$T/mlp.json" --strategy "$T/a80.plan" > /dev/null 2> "$T/err"
check "cost: a plan for another model exits 2 naming both digests" \
  '[ $? -eq 2 ] && grep -q "$(jq -r .model.sha256 "$T/a80.plan")" "$T/err" && grep -q "$(sha256sum "$T/mlp.json" | cut -c1-64)" "$T/err"'
printf '{"format":"planner.cluster/1","nodes":1,"devices_per_node":8,"device":{"memory_byte":1e9}}' > "$T/typo.json"
"$PLANNER" search "$SRC/examples/gpt-small.json" --cluster "$T/typo.json" > /dev/null 2> "$T/err"
check "cluster file: a typo exits 2 naming the key and the nearest known one" \
  '[ $? -eq 2 ] && grep -q "device.memory_byte: unknown key (did you mean .memory_bytes.?)" "$T/err"'
"$PLANNER" search "$SRC/examples/gpt-small.json" --memory-limit 0 > /dev/null 2> "$T/err"
check "--memory-limit 0 exits 2 (0 bytes is not 'none')" \
  '[ $? -eq 2 ] && grep -q "memory-limit 0: expected bytes > 0" "$T/err"'
"$PLANNER" run "$GT" --strategy "$T/gt1.plan" --lr 1e308 --steps 3 > /dev/null 2> "$T/err"
check "run: a diverging loss (--lr 1e308) exits 2 naming the step and the learning rate" \
  '[ $? -eq 2 ] && grep -q "training diverged (learning rate 1e+308" "$T/err"'
# started by torchrun as 2 processes with a plan for 1 device: exit 2 before any work (the cpu
# backend's runs under torchrun: tests/executor/test_mpi.sh)
TORCHELASTIC_RUN_ID=t WORLD_SIZE=2 RANK=1 LOCAL_RANK=1 LOCAL_WORLD_SIZE=2 \
  "$PLANNER" run "$GT" --strategy "$T/gt1.plan" --steps 1 > "$T/out" 2> "$T/err"
check "run under torchrun with 2 processes, a 1-device plan: exit 2 saying so, nothing printed" \
  '[ $? -eq 2 ] && grep -q "is a plan for 1 devices, and 2 processes were started" "$T/err" && [ ! -s "$T/out" ]'
# with --backend cuda, torchrun's processes are one rank each: they meet (a store of NCCL ids
# at MASTER_PORT + 1), and on a machine without a GPU every one exits 4 saying so
port=$((29700 + RANDOM % 200))
"$PLANNER" search "$GT" --devices 2 -o "$T/gt2.plan" > /dev/null 2>&1
for r in 0 1; do
  TORCHELASTIC_RUN_ID=t WORLD_SIZE=2 RANK=$r LOCAL_RANK=$r LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 \
    MASTER_PORT=$port timeout 60 "$PLANNER" run "$GT" --strategy "$T/gt2.plan" --backend cuda \
    --steps 2 --json > "$T/tr$r.out" 2> "$T/tr$r.err" &
  eval "trpid$r=\$!"
done
wait "$trpid0"; tr0=$?
wait "$trpid1"; tr1=$?
if [ $tr0 -eq 4 ]; then
  check "run --backend cuda under torchrun, no GPU: both ranks meet, exit 4 naming it" \
    '[ $tr1 -eq 4 ] && grep -q "found no GPU" "$T/tr0.err" && grep -q "found no GPU" "$T/tr1.err"'
else
  check "run --backend cuda under torchrun: both ranks run the plan, rank 0 reports the 1-rank losses" \
    '[ $tr0 -eq 0 ] && [ $tr1 -eq 0 ] && [ "$(jq -s "map(select(.loss)) | length" "$T/tr0.out")" = 2 ]'
fi
ln -s "$T/victim" "$T/p.json.tmp.$$"
"$PLANNER" search "$SRC/examples/gpt-small.json" -o "$T/p.json" > /dev/null 2>&1
check "-o never writes through a link planted where a temp file could go" \
  '[ -s "$T/p.json" ] && [ ! -e "$T/victim" ] && [ -z "$(ls "$T" | grep "^p.json.tmp" | grep -v "p.json.tmp.$$")" ]'
printf '{"format":"planner.strategy/1","parallel_strategy_item":{"fc0":{"parallel_strategy":[[2,1],[1,1]]}}}' > "$T/hand.plan"
"$PLANNER" explain "$T/hand.plan" > "$T/out" 2> "$T/err"
check "explain on a hand-written plan says what it lacks, never (null) or nan" \
  '[ $? -eq 0 ] && grep -q "not priced" "$T/out" && ! grep -qi "null\|nan" "$T/out"'
# counts from files are bounded before they become integers (nodes 1e19 once died of SIGFPE)
for bad in '"nodes": 1e19#nodes: expected an integer from 1 to 1048576' \
           '"nodes": 2.5#nodes: expected an integer from 1 to 1048576' \
           '"nodes": 70000, "devices_per_node": 1000#at most 1048576 devices' \
           '"nodes": 1e999#nodes: the number is not finite' \
           '"nodes": 1, "devices_per_node": -3#devices_per_node: expected a finite number >= 1' \
           '"nodes": 1, "devices_per_node": 2, "device": {"kernel_scale": {"Gelo": 2}}#device.kernel_scale.Gelo: not an op type (did you mean .Gelu.' \
           '"nodes": 1, "devices_per_node": 2, "device": {"kernel_scale": {"Gelu": 0}}#device.kernel_scale.Gelu: expected a positive finite number'; do
  printf '{"format": "planner.cluster/1", %s}' "${bad%%#*}" > "$T/hc.json"
  for cmd in search "strategies --op l0.q"; do
    "$PLANNER" $cmd "$SRC/examples/gpt-small.json" --cluster "$T/hc.json" > /dev/null 2> "$T/err"
    check "cluster file with ${bad%%#*}: $cmd exits 2 naming the field" \
      '[ $? -eq 2 ] && grep -q "${bad#*#}" "$T/err"'
  done
done
"$PLANNER" search "$SRC/examples/gpt-small.json" --devices 8 --memory-limit 4G > /dev/null 2> "$T/err"
check "a memory limit below the runtime reserve exits 2 naming --memory-reserve" \
  '[ $? -eq 2 ] && grep -q "memory-reserve" "$T/err"'
"$PLANNER" search "$SRC/examples/gpt-small.json" --devices 8 --pipeline-stages 3 > /dev/null 2> "$T/err"
check "--pipeline-stages 3 on 8 devices exits 2 (no idle devices)" \
  '[ $? -eq 2 ] && grep -q "2 would sit idle" "$T/err"'

# --- fixed configurations, as Megatron and MindFormers state them
GS="$SRC/examples/gpt-small.json"
# (--sequence-parallel on: Megatron's layout with --sequence-parallel; left to the search, this
# small model's norms are cheaper replicated)
"$PLANNER" search "$GS" --cluster h100x8:2 --dp 2 --tp 2 --pp 4 --sequence-parallel on -o "$T/fixed.plan" > /dev/null 2>&1
check "--dp 2 --tp 2 --pp 4 on 2 x 8: Megatron's rank order (tp fastest, then dp, then pp)" \
  '[ "$(jq -c "[.groups.tp[:3], .groups.dp[:3], .groups.pp[:2]]" "$T/fixed.plan")" = "[[[0,1],[2,3],[4,5]],[[0,2],[1,3],[4,6]],[[0,4,8,12],[1,5,9,13]]]" ]'
check "... every group of the right size, 4 stages" \
  '[ "$(jq -c "[(.groups.tp | map(length) | unique), (.groups.dp | map(length) | unique), (.groups.pp | map(length) | unique), .pipeline.stages]" "$T/fixed.plan")" = "[[2],[2],[4],4]" ]'
check "... no cp group without context parallelism" '[ "$(jq -c ".groups.cp" "$T/fixed.plan")" = null ]'
# --tp 2 --cp 2 on 8: Megatron's order puts cp after tp (rank = tp + 2 cp + 4 dp), so rank 0's cp
# group is [0, 2], its dp group [0, 4]; the weight's gradient groups span dp x cp ([0, 2, 4, 6])
"$ZOO" gpt3-125m --layers 2 > "$T/cpm.json"
"$PLANNER" search "$T/cpm.json" --cluster h100x8:1 --tp 2 --cp 2 -o "$T/cp.plan" > "$T/cp.out" 2>&1
check "--tp 2 --cp 2: context-parallel groups of their own (tp fastest, then cp), dp x cp reduces the gradients" \
  '[ "$(jq -c "[.groups.cp, .groups.dp[:2], .groups.tp[:2]]" "$T/cp.plan")" = "[[[0,2],[1,3],[4,6],[5,7]],[[0,2,4,6],[1,3,5,7]],[[0,1],[2,3]]]" ] &&
   grep -q "dp degree 2, cp degree 2 (.*; --cp-exchange ring)" "$T/cp.out" && grep -q "rank 0 cp group: \[0, 2\]" "$T/cp.out"'
# a fused attention under --tp 4 --cp 2 runs as Megatron and Transformer Engine run it: heads cut
# 4 ways (tp), queries 2 ways (cp), keys and values whole along the sequence (the ring gathers them);
# q, k and v column-parallel from the norm's sequence-parallel output (cut tp x cp = 8 ways)
"$ZOO" llama2-7b --layers 2 --seq 8192 --batch 8 --hidden 1024 --heads 8 --kv-heads 8 --ffn 2816 --attention fused > "$T/cpa.json"
"$PLANNER" search "$T/cpa.json" --cluster h100x8:1 --tp 4 --cp 2 --sequence-parallel on -o "$T/cpa.plan" > /dev/null 2>&1
check "--tp 4 --cp 2, fused attention: heads by tp, queries by cp, k column-parallel, the norm's sequence 8 ways" \
  '[ "$(jq -c "[.parallel_strategy_item[\"l0.attn\"].parallel_strategy, .parallel_strategy_item[\"l0.k\"].parallel_strategy, .parallel_strategy_item[\"l0.ln1\"].parallel_strategy[0]]" "$T/cpa.plan")" = "[[[1,2,4],[1,1,4],[1,1,4]],[[1,2,1],[1,4]],[1,8,1]]" ]'
"$PLANNER" cost "$T/cpa.json" --strategy "$T/cpa.plan" > "$T/c"
check "... cost reproduces its step and the ring's hidden seconds" \
  '[ "$(jq -c "[.step_seconds, .communication_hidden_seconds]" "$T/c")" = "$(jq -c "[.cost.step_seconds, .cost.communication_hidden_seconds]" "$T/cpa.plan")" ] &&
   [ "$(jq ".cost.communication_hidden_seconds > 0" "$T/cpa.plan")" = true ]'
# --cp-exchange: one plan (cp 8) priced under each exchange by cost over its own: the exchange's
# seconds (exposed + hidden) the same; the ring (n - 1 of 8 blocks forward and backward) and
# PyTorch's all-gather (one block forward, the backward) hide some, Transformer Engine's blocking
# all-gather none; recorded in the cluster. The compute the same under the two Transformer
# Engine exchanges, more under PyTorch's (its ring attention's fp32 merges and gradient
# accumulation, eager kernels beside the attention's: graph/ops/attention.c)
"$PLANNER" search "$T/cpa.json" --cluster h100x8:1 --tp 1 --cp 8 -o "$T/cpx.plan" > /dev/null 2>&1
for e in ring allgather allgather-sync; do
  "$PLANNER" cost "$T/cpa.json" --strategy "$T/cpx.plan" --cp-exchange "$e" > "$T/cpx-$e" 2> /dev/null
done
cpx() { jq "$2" "$T/cpx-$1"; }
cpx_all=".communication_seconds + .communication_hidden_seconds"
check "--cp-exchange ring, allgather, allgather-sync: the same seconds exchanged, ring and allgather hide some, allgather-sync none; allgather computes more (its merges), ring's step below allgather-sync's" \
  '[ "$(jq -r .cluster.description.device.cp_exchange "$T/cpx.plan")" = ring ] &&
   num_close "$(cpx ring .step_seconds)" "$(jq .cost.step_seconds "$T/cpx.plan")" &&
   num_close "$(cpx allgather "$cpx_all")" "$(cpx ring "$cpx_all")" &&
   num_close "$(cpx allgather-sync "$cpx_all")" "$(cpx ring "$cpx_all")" &&
   [ "$(cpx allgather-sync .communication_hidden_seconds)" = 0 ] &&
   num_close "$(cpx allgather-sync .compute_seconds)" "$(cpx ring .compute_seconds)" &&
   awk -v r="$(cpx ring .communication_hidden_seconds)" -v a="$(cpx allgather .communication_hidden_seconds)" \
     -v cr="$(cpx ring .compute_seconds)" -v ca="$(cpx allgather .compute_seconds)" \
     -v sr="$(cpx ring .step_seconds)" -v ss="$(cpx allgather-sync .step_seconds)" \
     "BEGIN { exit !(r > 0 && a > 0 && ca > cr && sr < ss) }"'
"$PLANNER" search "$T/cpa.json" --cp-exchange p2p > /dev/null 2> "$T/err"
check "--cp-exchange p2p: exit 2 naming the three exchanges" \
  '[ $? -eq 2 ] && grep -q "cp-exchange: .p2p.: expected ring" "$T/err" && grep -q "allgather-sync" "$T/err"'
check "... the layers' matmuls column- then row-parallel (fc1 cuts its output, fc2 its input)" \
  '[ "$(jq -c "[.parallel_strategy_item[\"l1.fc1\"].parallel_strategy[1], .parallel_strategy_item[\"l1.fc2\"].parallel_strategy[1]]" "$T/fixed.plan")" = "[[1,2],[2,1]]" ]'
check "... parts: attention and MLP weights cut 2 ways, batch 2 ways, the norms' sequence 2 ways (sp); the head on the last stage" \
  '[ "$(jq -c "[.parts.attention.weight_cut, .parts.mlp.weight_cut, .parts.attention.batch_cut, .parts.mlp.norms_sequence_cut, .parts.head.stages]" "$T/fixed.plan")" = "[2,2,2,2,[3,3]]" ]'
"$PLANNER" search "$GS" --cluster h100x8:2 --dp 2 --tp 2 --pp 4 --sequence-parallel on > "$T/out" 2>&1
check "... and the summary prints them" \
  'grep -q "^  attention  weights cut 2 ways, tokens cut batch 2 x sequence 1 (norms: sequence 2); stages" "$T/out"'
"$PLANNER" cost "$GS" --strategy "$T/fixed.plan" > "$T/c"
check "cost reproduces the fixed configuration's step" \
  '[ "$(jq .step_seconds "$T/c")" = "$(jq .cost.step_seconds "$T/fixed.plan")" ]'
"$PLANNER" search "$GS" --cluster h100x8:2 --job --load "$T/fixed.plan" -o "$T/kept.plan" > /dev/null 2>&1
check "--load with --job keeps every strategy of the loaded plan" \
  '[ $? -eq 0 ] && [ "$(jq -c "[.parallel_strategy_item[].parallel_strategy]" "$T/kept.plan")" = "$(jq -c "[.parallel_strategy_item[].parallel_strategy]" "$T/fixed.plan")" ]'
"$PLANNER" search "$GS" --devices 8 --dp 2 --micro-batch-size 2 -o "$T/mbs.plan" > /dev/null 2>&1
check "--micro-batch-size 2 with --dp 2: batch 16 = 2 x 2 x 4 micro-batches" \
  '[ $? -eq 0 ] && [ "$(jq .pipeline.micro_batches "$T/mbs.plan")" = 4 ]'
"$PLANNER" search "$GS" --devices 8 --tp 8 -o "$T/tp8.plan" > /dev/null 2>&1
check "--tp 8 alone: data parallel is what is left (1), the weights cut 8 ways" \
  '[ $? -eq 0 ] && [ "$(jq -c "[(.groups.tp[0] | length), (.groups.dp[0] | length)]" "$T/tp8.plan")" = "[8,1]" ]'
"$PLANNER" search "$SRC/tests/fixtures/models/moe-tiny.json" --devices 8 --dp 4 --tp 2 --ep 2 -o "$T/ep.plan" > /dev/null 2>&1
check "--ep 2 on a mixture of experts: the experts cut over 2 ranks" \
  '[ $? -eq 0 ] && [ "$(jq ".groups.ep[0] | length" "$T/ep.plan")" = 2 ] && [ "$(jq ".parts.experts.experts_cut" "$T/ep.plan")" = 2 ]'
# the layers' dp and tp groups follow a dense weight, never the experts' (whose cut is ep's):
# Mixtral's 4 layers on 64 devices, --tp 1 --pp 4 --ep 8, are tp 1 and dp 16 a stage
"$ZOO" mixtral-8x7b --layers 4 > "$T/mx.json"
"$PLANNER" search "$T/mx.json" --cluster h100x8:8 --tp 1 --pp 4 --ep 8 -o "$T/mx.plan" > "$T/mx.out" 2>&1
check "--tp 1 --ep 8 on Mixtral: the summary and groups say tp 1, dp 16, ep 8 (not the experts' cut as tp)" \
  '[ "$(jq -c "[(.groups.tp[0] | length), (.groups.dp[0] | length), (.groups.ep[0] | length)]" "$T/mx.plan")" = "[1,16,8]" ] &&
   grep -q "dp degree 16 (4 groups), tp degree 1" "$T/mx.out" && ! grep -q "cp degree" "$T/mx.out"'
bad_combo() { # description, expected text, options...
  local what="$1" text="$2"
  shift 2
  "$PLANNER" search "$GS" --devices 8 "$@" > /dev/null 2> "$T/err"
  check "rejected: $what exits 2 saying why" '[ $? -eq 2 ] && grep -q -- "$text" "$T/err"'
}
bad_combo "--micro-batches with --micro-batch-size" "both fix the micro-batches" --dp 2 --micro-batches 4 --micro-batch-size 2
bad_combo "--micro-batch-size without --dp or --tp" "is per data-parallel rank" --micro-batch-size 2
bad_combo "--virtual-stages 2 with --pp 1" "the interleaved schedule cuts the model into chunks over pipeline stages" --virtual-stages 2 --pp 1
bad_combo "--virtual-stages 129" "expected 'auto' or an integer from 1 to 128" --virtual-stages 129
bad_combo "--zero 2 with --pp 2 (DeepSpeed)" "DeepSpeed's pipeline engine runs ZeRO stage 1 at most" --zero 2 --pp 2
bad_combo "--zero 3 with --pipeline-stages 4" "ZeRO stage 1 at most" --zero 3 --pipeline-stages 4
bad_combo "--ep on a model without experts" "has no experts" --ep 2
bad_combo "--dp 3 on 8 devices" "no pipeline stage count goes with the fixed degrees" --dp 3
bad_combo "--dp 2 --tp 2 --pp 4 on 8 devices" "cannot fill" --dp 2 --tp 2 --pp 4
bad_combo "--dp 0" "--dp 0: expected an integer >= 1" --dp 0
bad_combo "--tp 16 on 8 devices" "no pipeline stage count" --tp 16
bad_combo "--micro-batch-size 3 with --dp 2 (batch 16)" "does not divide the batch of 16" --dp 2 --micro-batch-size 3
"$PLANNER" search "$GS" --cluster h100x8:2 --dp 2 --tp 2 --pp 4 --virtual-stages 2 -o "$T/vs.plan" > "$T/out" 2>&1
check "--virtual-stages 2: interleaved 1F1B over 2 chunks a device, micro-batches a multiple of the 4 stages" \
  '[ $? -eq 0 ] && [ "$(jq -c "[.pipeline.schedule, .pipeline.virtual_stages, .pipeline.micro_batches % 4]" "$T/vs.plan")" = "[\"interleaved-1F1B\",2,0]" ] && grep -q "interleaved 1F1B, 2 chunks a device" "$T/out"'
"$PLANNER" cost "$GS" --strategy "$T/vs.plan" > "$T/c"
check "... cost reproduces it, bubble included" \
  '[ "$(jq -c "[.step_seconds, .bubble_seconds]" "$T/c")" = "$(jq -c "[.cost.step_seconds, .cost.bubble_seconds]" "$T/vs.plan")" ]'
jq '.pipeline.virtual_stages = 1 | .pipeline.schedule = "1F1B"' "$T/vs.plan" > "$T/vs1.plan"
"$PLANNER" cost "$GS" --strategy "$T/vs1.plan" > "$T/c1"
check "... the same plan without interleaving has the larger bubble" \
  'awk -v a="$(jq .bubble_seconds "$T/c1")" -v b="$(jq .bubble_seconds "$T/c")" "BEGIN { exit !(a > b) }"'
jq '.pipeline.virtual_stages = 8' "$T/vs.plan" > "$T/vs8.plan"
"$PLANNER" cost "$GS" --strategy "$T/vs8.plan" > /dev/null 2> "$T/err"
check "... with more chunks than a stage has clean segments, cost refuses it as run does (exit 2)" \
  '[ $? -eq 2 ] && grep -q "pipeline.virtual_stages 8: stage 0 has [0-9]* clean segments" "$T/err"'
"$PLANNER" search "$G13" --cluster h100x8:2 --job --overlap-grad-reduce on -o "$T/ov.plan" > "$T/out" 2>&1
"$PLANNER" search "$G13" --cluster h100x8:2 --job -o "$T/nov.plan" > /dev/null 2>&1
check "--overlap-grad-reduce on: the same plan, a step no longer, recorded and repriced by cost" \
  '[ "$(jq -c "[.parallel_strategy_item[].parallel_strategy]" "$T/ov.plan")" = "$(jq -c "[.parallel_strategy_item[].parallel_strategy]" "$T/nov.plan")" ] &&
   awk -v a="$(jq .cost.step_seconds "$T/ov.plan")" -v b="$(jq .cost.step_seconds "$T/nov.plan")" "BEGIN { exit !(a <= b) }" &&
   [ "$(jq .pipeline.overlap_grad_reduce "$T/ov.plan")" = true ] &&
   [ "$("$PLANNER" cost "$G13" --strategy "$T/ov.plan" | jq .step_seconds)" = "$(jq .cost.step_seconds "$T/ov.plan")" ]'
bad_combo "--overlap-grad-reduce maybe" "expected on or off" --overlap-grad-reduce maybe
# --tp-comm-overlap on: plans are ranked without it, so the plan is the one without; its step is
# shorter by what the linear layers' GEMMs hide of their tensor-parallel collectives, which the
# checkpoint records and cost reprices, and explain books as hidden
"$PLANNER" search "$G13" --cluster h100x8:2 --tp 4 --pp 1 --tp-comm-overlap on -o "$T/tov.plan" > /dev/null 2>&1
"$PLANNER" search "$G13" --cluster h100x8:2 --tp 4 --pp 1 -o "$T/ntov.plan" > /dev/null 2>&1
check "--tp-comm-overlap on: the same plan, a shorter step, recorded and repriced by cost" \
  '[ "$(jq -c "[.parallel_strategy_item[].parallel_strategy]" "$T/tov.plan")" = "$(jq -c "[.parallel_strategy_item[].parallel_strategy]" "$T/ntov.plan")" ] &&
   awk -v a="$(jq .cost.step_seconds "$T/tov.plan")" -v b="$(jq .cost.step_seconds "$T/ntov.plan")" "BEGIN { exit !(a < b) }" &&
   [ "$(jq .pipeline.tp_comm_overlap "$T/tov.plan")" = true ] &&
   [ "$(jq .pipeline.tp_comm_overlap "$T/ntov.plan")" = null ] &&
   [ "$("$PLANNER" cost "$G13" --strategy "$T/tov.plan" | jq .step_seconds)" = "$(jq .cost.step_seconds "$T/tov.plan")" ] &&
   "$PLANNER" explain "$T/tov.plan" | grep -q "hidden beside the compute"'
bad_combo "--tp-comm-overlap maybe" "expected on or off" --tp-comm-overlap maybe
# --overlap-param-gather on: plans are ranked without it, so the plan is the one without; its step
# is shorter by what the compute hides of ZeRO-3's per-micro-batch gathers (ZeRO 1: of the step's
# all-gather of updated weights), which the checkpoint records, cost reprices and explain books
pg_bad=""
for z in 3 1; do
  "$PLANNER" search "$G13" --cluster h100x8 --job --zero $z --pp 1 --overlap-param-gather on -o "$T/pg$z.plan" > /dev/null 2>&1
  "$PLANNER" search "$G13" --cluster h100x8 --job --zero $z --pp 1 -o "$T/npg$z.plan" > /dev/null 2>&1
  [ "$(jq -c "[.parallel_strategy_item[].parallel_strategy]" "$T/pg$z.plan")" = "$(jq -c "[.parallel_strategy_item[].parallel_strategy]" "$T/npg$z.plan")" ] &&
    awk -v a="$(jq .cost.step_seconds "$T/pg$z.plan")" -v b="$(jq .cost.step_seconds "$T/npg$z.plan")" "BEGIN { exit !(a < b) }" &&
    [ "$(jq .pipeline.overlap_param_gather "$T/pg$z.plan")" = true ] &&
    [ "$(jq .pipeline.overlap_param_gather "$T/npg$z.plan")" = null ] &&
    [ "$(jq .search.optimal "$T/pg$z.plan")" = false ] &&
    [ "$("$PLANNER" cost "$G13" --strategy "$T/pg$z.plan" | jq .step_seconds)" = "$(jq .cost.step_seconds "$T/pg$z.plan")" ] &&
    "$PLANNER" explain "$T/pg$z.plan" | grep -q "hidden beside the compute" || pg_bad="$pg_bad [zero $z]"
done
check "--overlap-param-gather on (ZeRO 3 and 1): the same plan, a shorter step, recorded and repriced by cost${pg_bad}" \
  '[ -z "$pg_bad" ]'
bad_combo "--overlap-param-gather maybe" "expected on or off" --overlap-param-gather maybe
# --sequence-parallel off (Megatron-LM without --sequence-parallel): the norms, residual adds and
# the bias after the row-parallel product cut the batch over dp alone and are replicated over the
# 4 tensor-parallel ranks, the MLP's GELU stays cut 4 ways; on: the same ops cut the sequence;
# auto (the default): the search chooses per op, never slower than either; the checkpoint says
# which was asked, cost reproduces all three
"$PLANNER" search "$GS" --devices 8 --dp 2 --tp 4 --sequence-parallel off -o "$T/nosp.plan" > /dev/null 2>&1
"$PLANNER" search "$GS" --devices 8 --dp 2 --tp 4 --sequence-parallel on -o "$T/sp.plan" > /dev/null 2>&1
"$PLANNER" search "$GS" --devices 8 --dp 2 --tp 4 -o "$T/spauto.plan" > /dev/null 2>&1
cuts() { jq -c '[.parallel_strategy_item | to_entries[] | select(.key | test("^l[0-9]+[.](ln1|add1|ln2|bias2|add2|gelu)$"))
                 | .value.parallel_strategy[0] | join("x")] | unique' "$1"; }
check "--sequence-parallel off: norms and residual adds [2,1,1] (replicated over tp 4), GELU [2,1,4], recorded" \
  '[ "$(cuts "$T/nosp.plan")" = "[\"2x1x1\",\"2x1x4\"]" ] && [ "$(jq .pipeline.sequence_parallel "$T/nosp.plan")" = false ] &&
   [ "$(jq -c "[(.groups.tp[0] | length), (.groups.dp[0] | length)]" "$T/nosp.plan")" = "[4,2]" ] &&
   "$PLANNER" explain "$T/nosp.plan" | grep -q "recompute none; no sequence parallelism$"'
check "... on: the same ops cut the sequence 4 ways ([2,4,1]), recorded" \
  '[ "$(cuts "$T/sp.plan")" = "[\"2x1x4\",\"2x4x1\"]" ] && [ "$(jq .pipeline.sequence_parallel "$T/sp.plan")" = true ]'
check "... auto (default): no slower than on or off, nothing recorded" \
  '[ "$(jq .pipeline.sequence_parallel "$T/spauto.plan")" = null ] &&
   num_le "$(jq .cost.step_seconds "$T/spauto.plan")" "$(jq .cost.step_seconds "$T/sp.plan")" &&
   num_le "$(jq .cost.step_seconds "$T/spauto.plan")" "$(jq .cost.step_seconds "$T/nosp.plan")"'
for f in nosp sp spauto; do
  check "... cost reproduces the $f plan" \
    '[ "$("$PLANNER" cost "$GS" --strategy "$T/$f.plan" | jq .step_seconds)" = "$(jq .cost.step_seconds "$T/$f.plan")" ]'
done
"$PLANNER" search "$GT" --devices 4 --pp 2 --tp 2 --micro-batches 2 --recompute full --sequence-parallel off -o "$T/nosp4.plan" > /dev/null 2>&1
"$PLANNER" run "$GT" --strategy "$T/nosp4.plan" --steps 3 --json > "$T/nosp-run" 2> "$T/err"
rc=$?
same=$(same3 "$T/run1" "$T/nosp-run")
check "--sequence-parallel off, pp 2 x tp 2, full recompute: runs with the 1-rank losses" \
  '[ $rc -eq 0 ] && [ "$same" = true ] && [ "$(jq -c "[.parallel_strategy_item[\"l0.ln1\"].parallel_strategy[0][]]" "$T/nosp4.plan")" = "[1,1,1]" ]'
bad_combo "--sequence-parallel maybe" "expected on or off or auto" --sequence-parallel maybe
"$PLANNER" search "$GS" --cluster h100x8:2 --dp 2 --tp 2 --pp 4 --recompute selective -o "$T/sel.plan" > /dev/null 2>&1
check "--recompute selective: each layer's attention core (scores, softmax, x V; gpt-small has no attention dropout) recomputes, nothing else" \
  '[ $? -eq 0 ] && [ "$(jq -r .recompute "$T/sel.plan")" = selective ] &&
   [ "$(jq -c "[.parallel_strategy_item | to_entries[] | select(.value.recompute) | .key | sub(\"^l[0-9]+[.]\"; \"\") ] | unique" "$T/sel.plan")" = "[\"ctx\",\"probs\",\"scores\"]" ]'
check "... 3 ops a layer, every layer" \
  '[ "$(jq "[.parallel_strategy_item | to_entries[] | select(.value.recompute)] | length" "$T/sel.plan")" = "$(jq "[.parallel_strategy_item | to_entries[] | select(.key | endswith(\".probs\"))] | length * 3" "$T/sel.plan")" ]'
"$PLANNER" cost "$GS" --strategy "$T/sel.plan" > "$T/c"
jq 'del(.parallel_strategy_item[].recompute) | .recompute = "none"' "$T/sel.plan" > "$T/nosel.plan"
"$PLANNER" cost "$GS" --strategy "$T/nosel.plan" > "$T/c0"
check "... cost reproduces it; the same cuts without recompute keep more activations and step faster" \
  '[ "$(jq .step_seconds "$T/c")" = "$(jq .cost.step_seconds "$T/sel.plan")" ] &&
   awk -v a="$(jq .memory_breakdown_bytes.activations "$T/c")" -v b="$(jq .memory_breakdown_bytes.activations "$T/c0")" \
       -v s="$(jq .step_seconds "$T/c")" -v t="$(jq .step_seconds "$T/c0")" "BEGIN { exit !(a < b && s > t) }"'
bad_combo "--recompute some" "expected none, full, selective, selective-op or auto" --recompute some
# torchtitan's per-op selective checkpointing: every layer recomputed but its fused attention and
# its 1st, 3rd, ... weight products (a Llama layer's q, v, gate, down), the layer's output kept
"$ZOO" llama2-7b --layers 3 --hidden 64 --heads 4 --head-dim 16 --kv-heads 2 --ffn 128 --seq 32 \
  --vocab 64 --batch 4 --attention fused --dtype float32 > "$T/sop.json"
"$PLANNER" search "$T/sop.json" --devices 4 --dp 2 --tp 2 --pp 1 --recompute selective-op \
  -o "$T/sop.plan" > /dev/null 2>&1
sop_ops() { # FLAG: the layer ops (l<N>. stripped) of that per-op recompute flag
  jq -c --argjson f "$1" '[.parallel_strategy_item | to_entries[] | select(.key | test("^l[0-9]+[.]"))
    | select((.value.recompute // 0) == $f) | .key | sub("^l[0-9]+[.]"; "")] | unique' "$T/sop.plan"
}
check "--recompute selective-op: q, v, the attention, gate and down saved (3); the rest of each layer run again, its output kept (2)" \
  '[ "$(jq -r .recompute "$T/sop.plan")" = selective-op ] &&
   [ "$(sop_ops 3)" = "[\"attn\",\"down\",\"gate\",\"q\",\"v\"]" ] && [ "$(sop_ops 2)" = "[\"add2\"]" ] &&
   [ "$(sop_ops 0)" = "[]" ] && [ "$(jq "[.parallel_strategy_item[] | select(.recompute == 3)] | length" "$T/sop.plan")" = 15 ]'
"$PLANNER" cost "$T/sop.json" --strategy "$T/sop.plan" > "$T/c" 2> /dev/null
check "... cost reproduces it" '[ "$(jq .step_seconds "$T/c")" = "$(jq .cost.step_seconds "$T/sop.plan")" ]'
"$PLANNER" run "$T/sop.json" --strategy "$T/sop.plan" --steps 3 --json > "$T/sop-run" 2> /dev/null
rc=$?
"$PLANNER" search "$T/sop.json" --devices 1 -o "$T/sop1.plan" > /dev/null 2>&1
"$PLANNER" run "$T/sop.json" --strategy "$T/sop1.plan" --steps 3 --json > "$T/sop-run1" 2> /dev/null
check "... runs (4 ranks) with the 1-rank losses" '[ $rc -eq 0 ] && [ "$(same3 "$T/sop-run1" "$T/sop-run")" = true ]'
"$PLANNER" search "$T/sop.json" --devices 4 --job -o "$T/sop-auto.plan" > /dev/null 2>&1
check "... the search never picks it by itself (--job: $(jq -r .recompute "$T/sop-auto.plan"))" \
  '[ -s "$T/sop-auto.plan" ] && [ "$(jq -r .recompute "$T/sop-auto.plan")" != selective-op ]'

"$PLANNER" search "$SRC/examples/mlp.json" --devices 4 --recompute selective > /dev/null 2> "$T/err"
check "--recompute selective on a model without attention exits 2 saying so" \
  '[ $? -eq 2 ] && grep -q "recompute selective: the model has no attention core" "$T/err"'
"$PLANNER" search "$SRC/examples/mlp.json" --devices 4 --recompute full > /dev/null 2> "$T/err"
check "--recompute full on a model without repeated layers exits 2 saying so" \
  '[ $? -eq 2 ] && grep -q "recompute full: the model has no repeated layers" "$T/err"'
jq '.optimizer_shard = 2' "$T/fixed.plan" > "$T/z2pp.plan"
"$PLANNER" cost "$GS" --strategy "$T/z2pp.plan" > /dev/null 2> "$T/err"
check "cost: a plan with ZeRO 2 over 4 pipeline stages exits 2 (DeepSpeed does not run it)" \
  '[ $? -eq 2 ] && grep -q "optimizer_shard 2 with 4 pipeline stages" "$T/err"'

# checkpoints are read as strictly as models: trailing data and twice-declared keys exit 2
{ cat "$T/fixed.plan"; echo '{}'; } > "$T/trail.plan"
"$PLANNER" cost "$GS" --strategy "$T/trail.plan" > /dev/null 2> "$T/err"
check "cost: a checkpoint with data after it exits 2 naming the line" \
  '[ $? -eq 2 ] && grep -q "trail.plan:[0-9]*:1: unexpected data after the JSON document" "$T/err"'
sed '0,/"format":[[:space:]]*"planner.strategy\/1",/s//"format": "planner.strategy\/1", "format": "x",/' "$T/fixed.plan" > "$T/dup.plan"
"$PLANNER" explain "$T/dup.plan" > /dev/null 2> "$T/err"
check "explain: a key declared twice exits 2 naming it" '[ $? -eq 2 ] && grep -q "format: declared twice" "$T/err"'
# --- the whole-job search's bounds hold for interleaved schedules: no configuration it could
# choose is bounded out below a plan the search finds with that configuration fixed (a 22B
# GPT on 8 and 16 A100s, where interleaving 8 chunks beats every plain schedule; the bound
# used to assume plain 1F1B's fill and drain and claimed a slower plan proven optimal)
"$ZOO" gpt3-175b --layers 48 --hidden 6144 --heads 64 --head-dim 96 --ffn 24576 --seq 2048 \
  --vocab 51200 --batch 4 --dtype float16 > "$T/g22.json"
worse=""
for cl in a100-80gx8:1 a100-80gx8:2; do
  free=$("$PLANNER" search "$T/g22.json" --cluster "$cl" --job --fastest -o "$T/g22.plan" > /dev/null 2>&1 &&
    jq .cost.step_seconds "$T/g22.plan")
  for pp in 2 4 8; do
    "$PLANNER" search "$T/g22.json" --cluster "$cl" --pp "$pp" --fastest -o "$T/g22pp.plan" > /dev/null 2>&1 || continue
    fixed=$(jq .cost.step_seconds "$T/g22pp.plan")
    awk -v a="$free" -v b="$fixed" 'BEGIN { exit !(a > 0 && a <= b * (1 + 1e-9)) }' || worse="$worse [$cl pp $pp: $free vs $fixed]"
  done
done
check "--job --fastest is at least as fast as every --pp it could choose, interleaved schedules included${worse}" '[ -z "$worse" ]'

# --- explain CKPT --json: the table as JSON for scripts, every number the checkpoint's: one row per
#     op in the checkpoint's order, the per-op figures as parallel_strategy_item holds them
"$PLANNER" explain "$T/fixed.plan" --json > "$T/ex.json" 2> "$T/err"
check "explain CKPT --json: one JSON object whose ops are the checkpoint's, number for number" \
  '[ $? -eq 0 ] && jq -e --slurpfile ck "$T/fixed.plan" "
     (.ops | map(.name)) == (\$ck[0].parallel_strategy_item | keys_unsorted) and
     (.ops | all(. as \$r | \$ck[0].parallel_strategy_item[\$r.name] as \$c |
        \$r.compute_seconds == \$c.compute_seconds and \$r.memory_bytes == \$c.memory_bytes and
        \$r.parallel_strategy == \$c.parallel_strategy and \$r.stage == \$c.stage)) and
     .cost == \$ck[0].cost and .format == \"planner.explain/1\"" "$T/ex.json" > /dev/null'
"$PLANNER" search "$GS" --cluster h100x8:2 --dp 2 --tp 2 --pp 4 --sequence-parallel on --stage-cuts even \
  --virtual-stages 1 -o "$T/evfw.plan" > /dev/null 2>&1
"$PLANNER" explain "$T/evfw.plan" > "$T/ex.txt" 2> "$T/err"
"$PLANNER" explain "$T/evfw.plan" --json > "$T/exfw.json" 2> "$T/err"
check "explain says per framework whether it can run the plan, as export decides (Megatron yes; DeepSpeed's own config states no tp or pp)" \
  'grep -q "^  megatron  *can run it$" "$T/ex.txt" && grep -q "^  deepspeed  *cannot: tp 2, pp 4" "$T/ex.txt" &&
   "$PLANNER" export "$T/evfw.plan" --to megatron > /dev/null 2>&1 &&
   ! "$PLANNER" export "$T/evfw.plan" --to deepspeed > /dev/null 2>&1 &&
   jq -e ".frameworks.megatron.runs == true and .frameworks.deepspeed.runs == false and
          (.frameworks.deepspeed.why | startswith(\"tp 2, pp 4\"))" "$T/exfw.json" > /dev/null'
"$PLANNER" explain "$T/fixed.plan" > "$T/ex.txt" 2> "$T/err"
check "... and a split no framework makes is named as the reason (the search's own, --stage-cuts any)" \
  '[ "$(grep -c "cannot: op .* of the embedding in stage\|cannot: pipeline stage .* ends inside" "$T/ex.txt")" -ge 1 ]'
"$PLANNER" explain --json > /dev/null 2> "$T/err"
check "explain --json without a checkpoint: exit 2 saying a CKPT is expected (not that --json cannot open)" \
  '[ $? -eq 2 ] && grep -q "expected one CKPT file" "$T/err" && ! grep -q "cannot open" "$T/err"'
"$PLANNER" explain "$T/fixed.plan" "$T/fixed.plan" > /dev/null 2> "$T/err"
check "explain A B: exit 2 pointing at --diff" '[ $? -eq 2 ] && grep -q -- "--diff" "$T/err"'

# --- explain --diff: what differs between two plans, adding up to the totals' difference
"$PLANNER" search "$GS" --cluster h100x8:2 -o "$T/flat.plan" > /dev/null 2>&1
"$PLANNER" explain --diff "$T/flat.plan" "$T/fixed.plan" --json > "$T/d.json" 2> "$T/err"
check "explain --diff: the ops' deltas and the rest add up to the step's and the peak memory's" \
  '[ $? -eq 0 ] && jq -e "(.ops | length) > 0 and
     ((.ops | map(.seconds_delta) | add) - .ops_seconds_delta | fabs) <= 1e-12 * (.ops_seconds_delta | fabs) + 1e-15 and
     ((.ops_seconds_delta + .rest_seconds_delta) - .step_seconds_delta | fabs) <= 1e-12 and
     ((.ops | map(.memory_bytes_delta) | add) - .ops_memory_bytes_delta | fabs) <= 1 and
     ((.ops_memory_bytes_delta + .rest_memory_bytes_delta) - .peak_memory_bytes_delta | fabs) <= 1" "$T/d.json" > /dev/null'
check "... the step delta is the two checkpoints' difference" \
  'num_close "$(jq .step_seconds_delta "$T/d.json")" "$(jq -n "$(jq .cost.step_seconds "$T/fixed.plan") - $(jq .cost.step_seconds "$T/flat.plan")")"'
check "explain --diff: communication by collective and link class, its deltas less the hidden part's add up to the communication's" \
  'jq -e "(.communication | length) > 0 and
     ((.communication | map(.seconds_delta) | add) - .communication_hidden_seconds_delta
       - .communication_seconds_delta | fabs) <= 1e-9 * ([.communication[] | .a_seconds, .b_seconds] | add) and
     all(.communication[]; (.collective | test(\"^(all_reduce|all_gather|reduce_scatter|all_to_all|send_recv|slice)$\")) and
                            (.link | test(\"^(intra_node|inter_node|local)$\")))" "$T/d.json" > /dev/null'
check "explain --diff: per part of the model (embedding, attention, mlp, head), its ops' deltas, adding up to the ops'" \
  'jq -e "(.parts | keys | sort) == [\"attention\", \"embedding\", \"head\", \"mlp\"] and
     ([.parts[].ops] | add) == $(jq ".parallel_strategy_item | length" "$T/flat.plan") and
     (([.parts[].seconds_delta] | add) - .ops_seconds_delta | fabs) <= 1e-12 * (.ops_seconds_delta | fabs) + 1e-15 and
     (([.parts[].memory_bytes_delta] | add) - .ops_memory_bytes_delta | fabs) <= 1 and
     ([.parts[].ops_changed] | add) == (.ops | length)" "$T/d.json" > /dev/null'
check "... the pipelined plan sends between stages (send_recv) and the flat one does not" \
  'jq -e "any(.communication[]; .collective == \"send_recv\" and .a_seconds == 0 and .b_seconds > 0)" "$T/d.json" > /dev/null'
# nccl-tests' bus bytes (PERFORMANCE.md: all-reduce moves 2(n-1)/n of the message per rank): a
# data-parallel MLP on 8 GPUs all-reduces every fp32 gradient once a step inside the node
"$PLANNER" search "$SRC/examples/mlp.json" --devices 8 --dp 8 -o "$T/dp8.plan" > /dev/null 2>&1
check "communication by collective: dp 8 all-reduces 2*7/8 of the fp32 gradients' bytes, inside the node" \
  '[ "$(jq -c "[.cost.communication_by_collective[] | [.collective, .link, .bus_bytes]]" "$T/dp8.plan")" = \
     "$(jq -c "[[\"all_reduce\", \"intra_node\", ([.tensors[] | select(.role == \"param\") | .shape | reduce .[] as \$x (1; . * \$x)] | add) * 4 * 2 * 7 / 8]]" "$SRC/examples/mlp.json")" ]'
"$PLANNER" explain --diff "$T/flat.plan" "$T/fixed.plan" > "$T/d.txt" 2> "$T/err"
check "explain --diff (text): the communication table ends in the communication's delta" \
  'grep -q "^= communication .* $(jq -r ".communication_seconds_delta" "$T/d.json" | awk "{ printf \"%+.6f\", \$1 }")$" "$T/d.txt"'
"$PLANNER" explain "$T/fixed.plan" > "$T/e.txt" 2> "$T/err"
check "explain: communication by collective and link class, and every stage's memory by category" \
  'grep -q "^communication by collective and link class" "$T/e.txt" &&
   [ "$(sed -n "/^memory per device by stage/,/^op /p" "$T/e.txt" | grep -c "^  [0-9]")" = "$(jq .pipeline.stages "$T/fixed.plan")" ]'
"$PLANNER" cost "$GS" --strategy "$T/fixed.plan" > "$T/c.json" 2> "$T/err"
check "cost: the same communication by collective and stage memory as the search wrote" \
  '[ "$(jq -c "[.communication_by_collective, .communication_hidden_seconds, .stage_memory_bytes]" "$T/c.json")" = \
     "$(jq -c "[.cost.communication_by_collective, .cost.communication_hidden_seconds, .pipeline.stage_memory_bytes]" "$T/fixed.plan")" ]'
"$PLANNER" explain --diff "$T/flat.plan" "$T/mlp.plan" > /dev/null 2> "$T/err"
check "explain --diff of plans of two models exits 2 naming both digests" \
  '[ $? -eq 2 ] && grep -q "plans of different models" "$T/err"'

# --- run compares time with like: CPU ranks are predicted on a cpu cluster unless told otherwise
"$PLANNER" search "$SRC/tests/fixtures/models/gpt-tiny.json" --devices 2 -o "$T/rc2.json" > /dev/null 2>&1
"$PLANNER" run "$SRC/tests/fixtures/models/gpt-tiny.json" --strategy "$T/rc2.json" --steps 2 --json \
  > "$T/rc.out" 2> "$T/err"
"$PLANNER" run "$SRC/tests/fixtures/models/gpt-tiny.json" --strategy "$T/rc2.json" --steps 2 --json \
  --cluster h100x8 > "$T/rc8.out" 2> "$T/err8"
check "run on cpu predicts for cpu-x2 by default, for the cluster given with --cluster" \
  '[ "$(jq -r "select(.cluster) | .cluster" "$T/rc.out")" = cpu-x2 ] &&
   [ "$(jq -r "select(.cluster) | .cluster" "$T/rc8.out")" = h100x8 ]'

# --- run --profile: memory the executor spends beside the plan's breakdown
"$PLANNER" run "$SRC/tests/fixtures/models/gpt-tiny.json" --strategy "$T/rc2.json" --steps 2 --json \
  --profile > "$T/rp.out" 2> "$T/err"
check "run --profile: weights, gradients and Adam states allocated are the plan's predicted bytes" \
  '[ $? -eq 0 ] && jq -e "select(.memory_bytes) | .memory_bytes as \$m | [\"weights\", \"gradients\", \"optimizer_states\"] | all(. as \$k | \$m.measured[\$k] == \$m.predicted[\$k] and \$m.measured[\$k] > 0)" "$T/rp.out" > /dev/null'
for cfg in "--mode dp" "--dp 4 --pp 1 --recompute selective"; do
  # shellcheck disable=SC2086
  "$PLANNER" search "$SRC/tests/fixtures/models/gpt-tiny.json" --devices 4 $cfg -o "$T/mp.json" > /dev/null 2>&1
  "$PLANNER" run "$SRC/tests/fixtures/models/gpt-tiny.json" --strategy "$T/mp.json" --steps 2 --json \
    --profile > "$T/rp.out" 2> "$T/err"
  check "run --profile ($cfg): the most activation bytes live at once within 5 % of the plan's, and no more than allocated" \
    'jq -e "select(.memory_bytes) | .memory_bytes as \$m | (\$m.measured.activations / \$m.predicted.activations - 1 | fabs) <= 0.05 and \$m.measured.activations <= \$m.allocated.activations" "$T/rp.out" > /dev/null'
done

# the most bytes live at once (every category together, gradients and scratch included) is
# what the plan's peak less its reserve predicts: data and tensor parallel, ZeRO 3, stages, full
# recompute
for cfg in "--devices 1" "--devices 4 --mode dp" "--devices 4 --tp 4 --pp 1" \
           "--devices 4 --dp 4 --pp 1 --zero 3" \
           "--devices 4 --pp 2 --micro-batches 4 --virtual-stages 1" \
           "--devices 4 --dp 4 --pp 1 --recompute full"; do
  # shellcheck disable=SC2086
  "$PLANNER" search "$SRC/tests/fixtures/models/gpt-tiny.json" $cfg -o "$T/mp.json" > /dev/null 2>&1
  "$PLANNER" run "$SRC/tests/fixtures/models/gpt-tiny.json" --strategy "$T/mp.json" --steps 2 --json \
    --profile > "$T/rp.out" 2> "$T/err"
  check "run --profile ($cfg): the peak of all bytes live at once within 5 % of the plan's, transient predicted" \
    'jq -e "select(.memory_bytes) | .memory_bytes as \$m | (\$m.peak.measured / \$m.peak.predicted - 1 | fabs) <= 0.05 and \$m.predicted.transient > 0" "$T/rp.out" > /dev/null'
done
# interleaved 1F1B: rank 0 holds model chunks 0 and 2 of 4 (Megatron's placement); the chunks
# the executor cuts are the v-ths of each stage the plan prices, so its state is the plan's
"$ZOO" gpt-small --layers 4 --hidden 128 --heads 4 --head-dim 32 --ffn 512 --seq 64 --vocab 512 \
  --batch 8 --dtype float32 > "$T/gs4.json"
"$PLANNER" search "$T/gs4.json" --devices 4 --pp 2 --micro-batches 4 --virtual-stages 2 \
  -o "$T/gs4.plan" > /dev/null 2>&1
"$PLANNER" run "$T/gs4.json" --strategy "$T/gs4.plan" --steps 2 --json --profile > "$T/rp.out" 2> "$T/err"
check "run --profile (2 stages of 2 model chunks): weights, gradients, Adam states as the plan's; the peak within 5 %" \
  'jq -e "select(.memory_bytes) | .memory_bytes as \$m | ([\"weights\", \"gradients\", \"optimizer_states\"] | all(\$m.measured[.] == \$m.predicted[.])) and (\$m.peak.measured / \$m.peak.predicted - 1 | fabs) <= 0.05" "$T/rp.out" > /dev/null'

# --- search --why-not: the counterfactual plan is what a search with those options returns
"$PLANNER" search "$SRC/examples/gpt-small.json" --devices 8 --why-not "--tp 2 --pp 1" --json \
  -o "$T/wa.json" > "$T/why.json" 2> "$T/err"
rc=$?
"$PLANNER" search "$SRC/examples/gpt-small.json" --devices 8 --tp 2 --pp 1 -o "$T/wb.json" \
  > /dev/null 2>&1
check "search --why-not: the chosen plan written, the constrained one priced as search --tp 2 --pp 1 prices it" \
  '[ $rc -eq 0 ] && num_close "$(jq ".cost.step_seconds + $(jq .step_seconds_delta "$T/why.json")" "$T/wa.json")" "$(jq .cost.step_seconds "$T/wb.json")" &&
   [ "$(jq .step_seconds_delta "$T/why.json" | cut -c1)" != "-" ]'
"$PLANNER" search "$SRC/examples/gpt-small.json" --devices 8 --why-not "--tp 3" > /dev/null 2> "$T/err"
check "search --why-not with options that cannot hold exits 2 saying why" \
  '[ $? -eq 2 ] && grep -q "tp 3" "$T/err" && grep -q "why-not" "$T/err"'

# --- search --top K: rank 1 is the search's plan, the others distinct, sorted, and each
#     the plan a search with its configuration fixed returns
mkdir -p "$T/top"
SOURCE_DATE_EPOCH=0 "$PLANNER" search "$SRC/examples/gpt-small.json" --devices 8 --job \
  -o "$T/top/plain.json" > /dev/null 2>&1
SOURCE_DATE_EPOCH=0 "$PLANNER" search "$SRC/examples/gpt-small.json" --devices 8 --job --top 4 \
  --json -o "$T/top/plan.json" > "$T/top.out" 2> "$T/err"
rc=$?
check "search --top 4: four ranked plans, rank 1 the search's plan as without --top" \
  '[ $rc -eq 0 ] && [ "$(jq ".top | length" "$T/top.out")" = 4 ] && cmp -s "$T/top/plain.json" "$T/top/plan.json"'
check "search --top: ranks 2.. sorted by step (steps within 1e-12 are ties, ranked by configuration), and no two configurations alike" \
  '[ "$(jq "[.top[1:][].step_seconds] as \$s | [range(1; \$s | length) | \$s[. - 1] <= \$s[.] * (1 + 1e-12)] | all" "$T/top.out")" = true ] &&
   [ "$(jq "[.top[] | [.dp, .tp, .pp, .ep, .micro_batches, .recompute, (if .dp > 1 then .zero else 0 end)]] | (unique | length) == length" "$T/top.out")" = true ]'
agree=1
for k in 2 3 4; do
  set -- $(jq -r ".top[$((k - 1))] | \"\(.pp) \(.micro_batches) \(.zero) \(.recompute) \(.file)\"" "$T/top.out")
  SOURCE_DATE_EPOCH=0 "$PLANNER" search "$SRC/examples/gpt-small.json" --devices 8 --pp "$1" \
    --micro-batches "$2" --zero "$3" --recompute "$4" -o "$T/top/fixed.json" > /dev/null 2>&1
  cmp -s "$T/top/fixed.json" "$5" || { agree=0; echo "# rank $k differs from search --pp $1 --micro-batches $2 --zero $3 --recompute $4"; }
done
check "search --top: each ranked plan is what search with its configuration fixed writes" '[ $agree = 1 ]'
# exact: no configuration left out beats the slowest one listed (16 configurations, each
# searched with it fixed; --top keeps one slot per point, selective recompute's included)
SOURCE_DATE_EPOCH=0 "$PLANNER" search "$SRC/examples/gpt-small.json" --devices 8 --job --top 8 \
  --json > "$T/top8.out" 2> /dev/null
kth=$(jq "[.top[].step_seconds] | max" "$T/top8.out") missing=""
for pp in 1 2; do for m in 1 2; do for z in 0 1; do for rc in none selective; do
  "$PLANNER" search "$SRC/examples/gpt-small.json" --devices 8 --pp $pp --micro-batches $m \
    --zero $z --recompute $rc -o "$T/top/f.json" > /dev/null 2>&1 || continue
  st=$(jq .cost.step_seconds "$T/top/f.json")
  num_lt "$st" "$kth" || continue
  jq -e --argjson pp $pp --argjson m $m --argjson z $z --arg rc $rc \
    '[.top[] | select(.pp == $pp and .micro_batches == $m and .zero == $z and .recompute == $rc)] | length == 1' \
    "$T/top8.out" > /dev/null || missing="$missing pp$pp/m$m/z$z/$rc($st)"
done; done; done; done
check "search --top 8: every configuration faster than the slowest listed is listed${missing:+ (missing:$missing)}" \
  '[ -n "$kth" ] && [ -z "$missing" ]'
# --- --top K is exact: its K configurations are the K best of enumerating every point of --job's
#     grid one by one with fixed options (pipeline stages dividing the 16 devices, micro-batches
#     dividing the batch of 16, ZeRO 0-3 (0-1 with stages), each recompute), the same plan at two
#     points (ZeRO without data parallelism) once; steps equal to 1e-12 ranked by configuration
"$ZOO" gpt3-350m --layers 8 --batch 16 > "$T/tk.json"
: > "$T/tk.enum"
for pp in 1 2 4 8 16; do for m in 1 2 4 8 16; do for z in 0 1 2 3; do for rc in none full selective; do
  [ $pp -gt 1 ] && [ $z -ge 2 ] && continue
  "$PLANNER" search "$T/tk.json" --cluster h100x8:2 --pp $pp --micro-batches $m --zero $z --recompute $rc \
    --json 2> /dev/null | jq -c '{s: .cost.step_seconds, dp: (.groups.dp[0] | length), tp: (.groups.tp[0] | length),
      pp: (.pipeline.stages // 1), ep: ((.groups.ep[0] // [0]) | length), m: (.pipeline.micro_batches // 1),
      vs: (.pipeline.virtual_stages // 1), rc: ({"none": 0, "full": 1, "selective": 2}[.recompute // "none"]),
      z: .optimizer_shard}' >> "$T/tk.enum"
done; done; done; done
"$PLANNER" search "$T/tk.json" --cluster h100x8:2 --job --fastest --top 8 --json > "$T/tk.top" 2> /dev/null
cat > "$T/tk.py" <<'PY'
import json, sys
enum = [json.loads(l) for l in open(sys.argv[1])]
top = json.load(open(sys.argv[2]))["top"]
rcn = {"none": 0, "full": 1, "selective": 2}
def key(e):  # search --top's config_key: ZeRO only where it shards (dp > 1)
    return (e["dp"], e["tp"], e["pp"], e["ep"], e["m"], e["vs"], e["rc"], e["z"] if e["dp"] > 1 else 0)
best = {}
for e in enum:
    if key(e) not in best or e["s"] < best[key(e)]["s"]:
        best[key(e)] = e
steps = sorted(e["s"] for e in best.values())
close = lambda a, b: abs(a - b) <= 1e-12 * max(a, b)
bad = []
if len(top) != min(8, len(steps)):
    bad.append("%d listed, %d points" % (len(top), len(steps)))
for i, t in enumerate(top):
    if i < len(steps) and not close(t["step_seconds"], steps[i]):
        bad.append("rank %d: %.9g s, the grid's %d-th best %.9g s" % (i + 1, t["step_seconds"], i + 1, steps[i]))
    c = (t["dp"], t["tp"], t["pp"], t["ep"], t["micro_batches"], rcn[t["recompute"]], t["zero"] if t["dp"] > 1 else 0)
    if not any(close(t["step_seconds"], e["s"]) and c == key(e)[:5] + key(e)[6:] for e in best.values()):
        bad.append("rank %d: configuration %s not the grid's at that step" % (i + 1, c))
for a, b in zip(top[1:], top[2:]):
    if close(a["step_seconds"], b["step_seconds"]):
        ka = (a["dp"], a["tp"], a["pp"], a["ep"], a["micro_batches"])
        kb = (b["dp"], b["tp"], b["pp"], b["ep"], b["micro_batches"])
        if ka > kb: bad.append("ranks %d and %d tie out of order" % (a["rank"], b["rank"]))
print("; ".join(bad))
PY
tk_bad=$(python3 "$T/tk.py" "$T/tk.enum" "$T/tk.top" 2>&1)
check "--top 8 of --job (GPT-3 350M shape, 8 layers, batch 16, 2x8 H100) is the 8 best of the grid's $(wc -l < "$T/tk.enum") points searched one by one${tk_bad:+: $tk_bad}" \
  '[ -z "$tk_bad" ] && [ "$(wc -l < "$T/tk.enum")" -gt 50 ]'
# a slot per point, all three recompute modes: 16 devices and a deeper pipeline grid reach the
# points the table once had no slot for (read past its end; under ASan a report, else a crash)
"$ZOO" gpt3-13b --layers 8 --batch 64 > "$T/top13.json"
"$PLANNER" search "$T/top13.json" --cluster h100x8:2 --job --top 5 --json > "$T/top13.out" 2> "$T/top13.err"
# the simpler plan kept (within PL_JOB_SIMPLER of one with ZeRO, stages or recompute): its
# "optimal" is over plans without them, and the least step one with them may take is said
"$PLANNER" search "$SRC/examples/gpt-small.json" --devices 8 --job -o "$T/simpler.plan" > "$T/simpler.out" 2>&1
"$PLANNER" search "$SRC/examples/gpt-small.json" --devices 8 --job --fastest -o "$T/fastest.plan" > /dev/null 2>&1
check "search --job: a simpler plan kept says its optimum is over plans without stages, ZeRO or recompute, and how fast one with them may be" \
  'head -1 "$T/simpler.out" | grep -q "proven optimal over plans without pipeline stages, ZeRO or recompute" &&
   [ "$(jq -r .search.space_widen "$T/simpler.plan")" = --fastest ] &&
   s=$(jq -r .search.space "$T/simpler.plan" | sed -n "s/.*may run in \([0-9.e-]*\) s.*/\1/p") &&
   num_le "$s" "$(jq .cost.step_seconds "$T/fastest.plan")" &&
   num_lt "$(jq .cost.step_seconds "$T/fastest.plan")" "$(jq .cost.step_seconds "$T/simpler.plan")" &&
   [ "$(jq -r ".search.space // empty" "$T/fastest.plan")" = "" ]'
check "search --top 5 on 16 devices: five ranked configurations, no memory error" \
  '[ $? -eq 0 ] && [ "$(jq ".top | length" "$T/top13.out")" = 5 ] && ! grep -q Sanitizer "$T/top13.err"'
# memory headroom (PL_MEM_BAND_HI 1.23, PL_JOB_HEADROOM 5 %): GPT-3 13B's shape, 8 layers, on 2 x 8
# H100 under 24 GiB: the fastest plan's peak times 1.23 is over the limit, so the search keeps the
# fastest plan within 24 / 1.23 GiB (within 5 %) and says so with the faster plan's step, which is
# --fastest's; --fastest's summary, explain and report warn, planner cost says it fits without
# that room; under 21 GiB none with that room is within 5 %, so the search keeps the fastest plan
# with room for the median error (PL_MEM_BAND_MID 1.07), said so; under 31.5 GiB the fastest plan
# (29 GiB) has that room already and none with the 90th percentile's is within 5 %: it stays, warned
"$PLANNER" search "$T/top13.json" --cluster h100x8:2 --job --memory-limit 24GiB -o "$T/room.plan" > "$T/room.out" 2>&1
"$PLANNER" search "$T/top13.json" --cluster h100x8:2 --job --memory-limit 24GiB --fastest -o "$T/room-f.plan" > "$T/room-f.out" 2>&1
"$PLANNER" cost "$T/top13.json" --strategy "$T/room-f.plan" --memory-limit 24GiB > "$T/room-c.out" 2>&1
"$PLANNER" explain "$T/room-f.plan" > "$T/room-e.out" 2>&1
"$PLANNER" report "$T/room-f.plan" -o "$T/room-f.html" > /dev/null 2>&1
"$PLANNER" report "$T/room.plan" -o "$T/room.html" > /dev/null 2>&1
"$PLANNER" search "$T/top13.json" --cluster h100x8:2 --job --memory-limit 21GiB -o "$T/room21.plan" > "$T/room21.out" 2>&1
"$PLANNER" search "$T/top13.json" --cluster h100x8:2 --job --memory-limit 21GiB --fastest -o "$T/room21-f.plan" > /dev/null 2>&1
"$PLANNER" search "$T/top13.json" --cluster h100x8:2 --job --memory-limit 31.5GiB -o "$T/room31.plan" > "$T/room31.out" 2>&1
"$PLANNER" search "$T/top13.json" --cluster h100x8:2 --job --memory-limit 31.5GiB --fastest -o "$T/room31-f.plan" > /dev/null 2>&1
risky() { awk -v p="$(jq .cost.peak_memory_bytes "$1")" -v l="$(jq .search.memory_limit_bytes "$1")" -v b="${2:-1.23}" 'BEGIN { exit !(p * b > l) }'; }
warned='may run out of memory'
check "search keeps a plan with room for the memory prediction's error within 5 % of the fastest, says so with its step, and --fastest, explain, report, cost and a plan without room warn" \
  'jq -r .search.space "$T/room.plan" | grep -q "room for the memory prediction" &&
   jq -r .search.space_widen "$T/room.plan" | grep -q -- --fastest &&
   ! risky "$T/room.plan" && risky "$T/room-f.plan" && ! grep -q "$warned" "$T/room.out" &&
   f=$(jq .cost.step_seconds "$T/room-f.plan") &&
   s=$(jq -r .search.space "$T/room.plan" | sed -n "s/.*may run in \([0-9.e-]*\) s.*/\1/p") &&
   awk -v a="$s" -v b="$f" "BEGIN { exit !(a >= b * (1 - 1e-5) && a <= b * (1 + 1e-5)) }" &&
   num_lt "$f" "$(jq .cost.step_seconds "$T/room.plan")" &&
   num_le "$(jq .cost.step_seconds "$T/room.plan")" "$(awk -v f="$f" "BEGIN { print f * 1.05 }")" &&
   grep -q "$warned" "$T/room-f.out" && grep -q "$warned" "$T/room-e.out" &&
   grep -q "id=\"memory-risk\"" "$T/room-f.html" && ! grep -q "memory-risk" "$T/room.html" &&
   [ "$(jq .fits "$T/room-c.out")" = true ] && [ "$(jq .fits_with_headroom "$T/room-c.out")" = false ] &&
   [ "$(jq .cost.step_seconds "$T/room31.plan")" = "$(jq .cost.step_seconds "$T/room31-f.plan")" ] &&
   risky "$T/room31.plan" && ! risky "$T/room31.plan" 1.07 && grep -q "$warned" "$T/room31.out" &&
   ! jq -r ".search.space // empty" "$T/room31.plan" | grep -q "room for"'
check "search keeps a plan with room for the median memory error within 5 % where none with room for the 90th percentile is, and says so" \
  'jq -r .search.space "$T/room21.plan" | grep -q "room for the memory prediction.s median error" &&
   risky "$T/room21.plan" && ! risky "$T/room21.plan" 1.07 && risky "$T/room21-f.plan" 1.07 &&
   f=$(jq .cost.step_seconds "$T/room21-f.plan") &&
   s=$(jq -r .search.space "$T/room21.plan" | sed -n "s/.*may run in \([0-9.e-]*\) s.*/\1/p") &&
   awk -v a="$s" -v b="$f" "BEGIN { exit !(a >= b * (1 - 1e-5) && a <= b * (1 + 1e-5)) }" &&
   num_lt "$f" "$(jq .cost.step_seconds "$T/room21.plan")" &&
   num_le "$(jq .cost.step_seconds "$T/room21.plan")" "$(awk -v f="$f" "BEGIN { print f * 1.05 }")" &&
   grep -q "$warned" "$T/room21.out"'
# more memory is never slower: between 26 and 28.5 GiB the unconstrained relaxed plan of the
# fastest points fits with plain 1F1B but not interleaved; the search keeps pricing leaner plans
# until one fits with its fastest schedule (it stopped at the first that fit with any: 27.5 GiB
# gave a slower plan than 27 GiB)
mono=""
for lim in 26 26.5 27 27.5 28 28.5; do
  "$PLANNER" search "$T/top13.json" --cluster h100x8:2 --job --fastest --memory-limit ${lim}GiB -o "$T/mono$lim.plan" > /dev/null 2>&1
  mono="$mono $(jq .cost.step_seconds "$T/mono$lim.plan")"
done
check "search --job --fastest: a larger memory limit never gives a slower plan (26-28.5 GiB, interleaving within reach)" \
  'echo "$mono" | awk "{ if (NF != 6) exit 1; for (i = 1; i <= NF; i++) if (\$i !~ /^[0-9.e+-]+\$/ || (i > 1 && \$i + 0 > \$(i - 1) + 0)) exit 1 }"'
# the same two levels in a per-op search (--mode dp, one stage): under 66 GiB the fastest per-op
# plan needs more than the median's room and none with the 90th percentile's is within 5 %
"$PLANNER" search "$T/top13.json" --cluster h100x8:2 --mode dp --memory-limit 66GiB -o "$T/room66.plan" > /dev/null 2>&1
"$PLANNER" search "$T/top13.json" --cluster h100x8:2 --mode dp --memory-limit 66GiB --fastest -o "$T/room66-f.plan" > /dev/null 2>&1
check "per-op search keeps a plan with room for the median memory error within 5 %, and says so" \
  'jq -r .search.space "$T/room66.plan" | grep -q "room for the memory prediction.s median error" &&
   ! risky "$T/room66.plan" 1.07 && risky "$T/room66-f.plan" 1.07 &&
   f=$(jq .cost.step_seconds "$T/room66-f.plan") && num_lt "$f" "$(jq .cost.step_seconds "$T/room66.plan")" &&
   num_le "$(jq .cost.step_seconds "$T/room66.plan")" "$(awk -v f="$f" "BEGIN { print f * 1.05 }")"'
"$PLANNER" search "$SRC/examples/gpt-small.json" --devices 8 --top 3 > /dev/null 2> "$T/err"
check "search --top without a whole-job search exits 2 saying so" \
  '[ $? -eq 2 ] && grep -q -- "--top ranks whole-job configurations" "$T/err"'

# --- ONNX in: the MLP exported by tests/fixtures/onnx/make_fixtures.py (torch Linear(64, 256),
#     GELU, Linear(256, 10)) imports with its four initializers as params, GELU fused back
O=$SRC/tests/fixtures/onnx
"$PLANNER" import "$O/mlp.onnx" --batch 64 -o "$T/mlp-onnx.json" > /dev/null 2> "$T/err"
check "import mlp.onnx --batch 64 exits 0" '[ $? -eq 0 ]'
check "import: the params are the ONNX initializers, with their dims" \
  '[ "$(jq -c "[.tensors | to_entries[] | select(.value.role == \"param\") | [.key, .value.shape]]" "$T/mlp-onnx.json")" = "[[\"fc1.weight\",[256,64]],[\"fc1.bias\",[256]],[\"fc2.weight\",[10,256]],[\"fc2.bias\",[10]]]" ]'
check "import: Erf-form GELU fused into one Gelu, the loss appended against int64 labels of [64]" \
  '[ "$(jq -c "[.ops[].type] | [(map(select(. == \"Gelu\")) | length), (map(select(. == \"Erf\")) | length), .[-1]]" "$T/mlp-onnx.json")" = "[1,0,\"SoftmaxCrossEntropy\"]" ] &&
   [ "$(jq -c ".tensors.labels | [.shape, .dtype]" "$T/mlp-onnx.json")" = "[[64],\"int64\"]" ]'
"$PLANNER" search "$O/mlp.onnx" --batch 64 --devices 4 -o "$T/onnx-direct.plan" > /dev/null 2>&1
"$PLANNER" search "$T/mlp-onnx.json" --devices 4 -o "$T/onnx-json.plan" > /dev/null 2>&1
check "search MODEL.onnx plans as search on its import does" \
  '[ "$(jq -c "[.cost.step_seconds, .parallel_strategy_item]" "$T/onnx-direct.plan")" = "$(jq -c "[.cost.step_seconds, .parallel_strategy_item]" "$T/onnx-json.plan")" ]'
"$PLANNER" import "$O/mlp.onnx" --batch 64 --loss none -o "$T/mlp-noloss.json" > /dev/null 2>&1
check "import --loss none: the graph's own output, no loss appended" \
  '[ "$(jq -c ".outputs, ([.ops[].type] | index(\"SoftmaxCrossEntropy\"))" "$T/mlp-noloss.json" | tr "\n" " ")" = "[\"out\"] null " ]'
"$PLANNER" import "$O/mlp_ln.onnx" --batch 64 -o "$T/mlp-ln.json" > /dev/null 2>&1
check "import: LayerNorm decomposed below opset 17 (torch's LayerNorm(256)) fused back, its weight and bias params, eps 1e-5" \
  '[ "$(jq -c "[.ops[] | select(.type == \"LayerNormalization\") | [.inputs[1:], .attrs.axis, (.attrs.epsilon * 1e7 | round)]]" "$T/mlp-ln.json")" = "[[[\"norm.weight\",\"norm.bias\"],-1,100]]" ] &&
   [ "$(jq "[.ops[].type | select(. == \"ReduceMean\" or . == \"Sub\" or . == \"Pow\" or . == \"Sqrt\")] | length" "$T/mlp-ln.json")" = 0 ] &&
   "$PLANNER" search "$T/mlp-ln.json" --devices 4 > /dev/null 2>&1'
"$PLANNER" search "$O/mlp.onnx" --devices 4 > /dev/null 2> "$T/err"
check "a symbolic batch without --batch exits 2 naming the input and the option" \
  '[ $? -eq 2 ] && grep -q "input .x.: dimension 0 is symbolic (.batch.); --batch N" "$T/err"'
# torch.nn.TransformerEncoder exports (GPT: causal mask; BERT) and a GPT-2-style export at
# opset 17 (LayerNormalization, c_attn Split into q, k, v, tanh GELU, a sliced mask buffer):
# shape subgraphs folded, the fused q, k, v projection imported as its weight cut in three
for f in gpt bert gpt2; do
  "$PLANNER" import "$O/$f.onnx" --batch 4 -o "$T/$f-onnx.json" > /dev/null 2> "$T/err"
  want=$(awk -v f="$f" '$1 == f { print $2 }' "$O/PARAMS")
  got=$(jq '[.tensors[] | select(.role == "param") | .shape | reduce .[] as $d (1; . * $d)] | add' "$T/$f-onnx.json" 2> /dev/null)
  check "import $f.onnx: every weight's elements are params ($got of the $want make_fixtures counted)" \
    '[ -n "$want" ] && [ "$got" = "$want" ]'
  check "import $f.onnx: each layer's fused q, k, v weight and bias (192 wide) cut into slices of 64, the whole ones gone" \
    '[ "$(jq "[.tensors | keys[] | select(endswith(\"[0:64]\") or endswith(\"[64:128]\") or endswith(\"[128:192]\"))] | length" "$T/$f-onnx.json")" = 12 ] &&
     [ "$(jq "[.tensors[] | select(.shape[-1] == 192)] | length" "$T/$f-onnx.json")" = 0 ]'
  "$PLANNER" search "$O/$f.onnx" --batch 4 --devices 1 -o "$T/$f-1.plan" > /dev/null 2>&1
  "$PLANNER" search "$O/$f.onnx" --batch 4 --devices 4 -o "$T/$f-4.plan" > /dev/null 2>&1
  "$PLANNER" run "$O/$f.onnx" --batch 4 --strategy "$T/$f-1.plan" --steps 3 --json > "$T/$f-r1" 2> "$T/err"
  "$PLANNER" run "$O/$f.onnx" --batch 4 --strategy "$T/$f-4.plan" --steps 3 --json > "$T/$f-r4" 2> "$T/err"
  same=$(jq -s --slurpfile b "$T/$f-r4" '[., $b] | transpose | map(select(.[0].loss))
          | map(((.[0].loss - .[1].loss) | fabs) / (.[0].loss | fabs) <= 1e-4) | all' "$T/$f-r1")
  check "$f.onnx plans and trains on 4 CPU ranks with the 1-rank losses" '[ "$same" = true ]'
done
# an auxiliary classifier (GoogLeNet's and Inception v3's in training mode return one or two):
# every output of the first output's shape gets its cross-entropy against the same labels, the
# step's loss their sum (2 ln 10 at a fresh start of 10 classes), trained on 4 ranks as on 1
"$PLANNER" import "$O/aux_heads.onnx" --batch 4 -o "$T/aux.json" > /dev/null 2> "$T/err"
check "import aux_heads.onnx: a cross-entropy on both outputs, the auxiliary one noted, every weight a param" \
  '[ "$(jq -c .outputs "$T/aux.json")" = "[\"loss\",\"loss.aux1\"]" ] &&
   grep -q "output .aux. has the first output.s shape: an auxiliary classifier" "$T/err" &&
   [ "$(jq "[.tensors[] | select(.role == \"param\") | .shape | reduce .[] as \$d (1; . * \$d)] | add" "$T/aux.json")" = "$(awk "\$1 == \"aux_heads\" { print \$2 }" "$O/PARAMS")" ]'
"$PLANNER" import "$O/aux_heads.onnx" --batch 4 --loss none -o "$T/aux-none.json" > /dev/null 2>&1
check "import aux_heads.onnx --loss none: the two outputs as they are" \
  '[ "$(jq -c .outputs "$T/aux-none.json")" = "[\"out\",\"aux\"]" ]'
"$PLANNER" search "$O/aux_heads.onnx" --batch 4 --devices 1 -o "$T/aux-1.plan" > /dev/null 2>&1
"$PLANNER" search "$O/aux_heads.onnx" --batch 4 --devices 4 -o "$T/aux-4.plan" > /dev/null 2>&1
"$PLANNER" run "$O/aux_heads.onnx" --batch 4 --strategy "$T/aux-1.plan" --steps 3 --json > "$T/aux-r1" 2> /dev/null
"$PLANNER" run "$O/aux_heads.onnx" --batch 4 --strategy "$T/aux-4.plan" --steps 3 --json > "$T/aux-r4" 2> /dev/null
check "aux_heads.onnx: the first loss is two cross-entropies of 10 classes (2 ln 10 within 1 %), 4 ranks as 1" \
  '[ "$(jq -s --slurpfile b "$T/aux-r4" "(.[0].loss - 2 * (10 | log) | fabs) < 0.046 and
       ([., \$b] | transpose | map(select(.[0].loss)) | length == 3 and
        (map(((.[0].loss - .[1].loss) | fabs) <= 1e-4 * (.[0].loss | fabs)) | all))" "$T/aux-r1")" = true ]'
# a slice assignment (b = fc1.bias.clone(); b[4:8] = 0, as Swin v2 zeroes its key bias): the
# ScatterND of rows 4 to 7 imported as the bias's rows 0-3, 4 zeros and rows 8-11 concatenated
"$PLANNER" import "$O/slice_assign.onnx" --batch 4 -o "$T/sa.json" > /dev/null 2> "$T/err"
check "import slice_assign.onnx: ScatterND as Concat(bias[0:4], 4 zeros, bias[8:12]), every weight a param" \
  '[ "$(jq -c "[.ops[] | select(.type == \"Slice\" and .inputs == [\"fc1.bias\"]) | [.attrs.starts[0], .attrs.ends[0]]] | sort" "$T/sa.json")" = "[[0,4],[8,12]]" ] &&
   [ "$(jq -c ". as \$m | [.ops[] | select(.type == \"Concat\") | .inputs | map(\$m.tensors[.].values // .)]" "$T/sa.json")" = "[[\"/ScatterND_output_0.before\",[0,0,0,0],\"/ScatterND_output_0.after\"]]" ] &&
   [ "$(jq "[.tensors[] | select(.role == \"param\") | .shape | reduce .[] as \$d (1; . * \$d)] | add" "$T/sa.json")" = "$(awk "\$1 == \"slice_assign\" { print \$2 }" "$O/PARAMS")" ]'
"$PLANNER" search "$O/slice_assign.onnx" --batch 4 --devices 1 -o "$T/sa-1.plan" > /dev/null 2>&1
"$PLANNER" search "$O/slice_assign.onnx" --batch 4 --devices 4 -o "$T/sa-4.plan" > /dev/null 2>&1
"$PLANNER" run "$O/slice_assign.onnx" --batch 4 --strategy "$T/sa-1.plan" --steps 3 --json > "$T/sa-r1" 2> /dev/null
"$PLANNER" run "$O/slice_assign.onnx" --batch 4 --strategy "$T/sa-4.plan" --steps 3 --json > "$T/sa-r4" 2> /dev/null
check "slice_assign.onnx trains on 4 CPU ranks with the 1-rank losses" \
  '[ "$(jq -s --slurpfile b "$T/sa-r4" "[., \$b] | transpose | map(select(.[0].loss)) | length == 3 and
       (map(((.[0].loss - .[1].loss) | fabs) <= 1e-4 * (.[0].loss | fabs)) | all)" "$T/sa-r1")" = true ]'
check "import gpt2.onnx: tanh GELU fused into Gelu, opset 17's LayerNormalization kept, no Pow or Tanh left" \
  '[ "$(jq -c "[.ops[].type] | [(map(select(. == \"Gelu\")) | length), (map(select(. == \"LayerNormalization\")) | length), (map(select(. == \"Tanh\" or . == \"Pow\")) | length)]" "$T/gpt2-onnx.json")" = "[2,5,0]" ]'
"$PLANNER" search "$O/gpt2.onnx" --batch 4 --devices 4 --tp 2 --pp 1 -o "$T/g2tp.plan" > /dev/null 2>&1
"$PLANNER" run "$O/gpt2.onnx" --batch 4 --strategy "$T/g2tp.plan" --steps 3 --json > "$T/g2tp" 2> "$T/err"
# step 1's losses differ by the sums' order alone; Adam's updates then carry
# that difference on (a parameter whose gradient is ~0 moves by +-lr on its
# sign), so later steps are compared at 1e-3: on a 16-core Xeon with
# OpenBLAS's AVX-512 kernels step 3 differed by 1.7e-4
same=$(jq -s --slurpfile b "$T/g2tp" '[., $b] | transpose | map(select(.[0].loss))
        | map(((.[0].loss - .[1].loss) | fabs) / (.[0].loss | fabs))
        | (.[0] <= 1e-5) and (map(. <= 1e-3) | all)' "$T/gpt2-r1")
check "gpt2.onnx with --tp 2 (Megatron's column/row pairs on the imported layers) trains with the 1-rank losses" \
  '[ "$same" = true ] && [ "$(jq ".groups.tp[0] | length" "$T/g2tp.plan")" = 2 ]'
# the GPT-2-style export against the zoo's GPT of its shape: with its causal mask buffer kept
# constant (--const; the exporter writes buffers like weights), the same step within 1 % on
# every configuration (its attention biases in the products' epilogues, the mask in the
# softmax, its small gradients in DDP's buckets, its optimizer in multi-tensor launches)
"$PLANNER" import "$O/gpt2.onnx" --batch 8 --const 'h.[0-9].bias' -o "$T/g2c.json" > /dev/null 2> "$T/err"
check "import --const 'h.[0-9].bias': the two 32x32 mask buffers constant, every other weight a param" \
  '[ $? -eq 0 ] && [ "$(jq -c "[.tensors | to_entries[] | select(.value.role == \"const\" and .value.shape == [32, 32]) | .key]" "$T/g2c.json")" = "[\"h.0.bias\",\"h.1.bias\"]" ] &&
   [ "$(jq "[.tensors[] | select(.role == \"param\") | .shape | reduce .[] as \$d (1; . * \$d)] | add" "$T/g2c.json")" = $(( $(awk "\$1 == \"gpt2\" { print \$2 }" "$O/PARAMS") - 2048 )) ]'
"$ZOO" gpt3-125m --layers 2 --hidden 64 --heads 4 --head-dim 16 --seq 32 --vocab 512 --ffn 256 \
  --dropout 0 --dtype float32 --batch 8 > "$T/g2zoo.json"
far=""
for cfg in "--devices 1" "--devices 8" "--devices 64" "--devices 8 --job" "--devices 8 --tp 2" \
           "--devices 8 --tp 4 --pp 2" "--cluster h100x8:2 --job"; do
  # shellcheck disable=SC2086
  a=$("$PLANNER" search "$T/g2c.json" $cfg -o "$T/g2c.plan" > /dev/null 2>&1 && jq .cost.step_seconds "$T/g2c.plan")
  # shellcheck disable=SC2086
  b=$("$PLANNER" search "$T/g2zoo.json" $cfg -o "$T/g2zoo.plan" > /dev/null 2>&1 && jq .cost.step_seconds "$T/g2zoo.plan")
  awk -v a="$a" -v b="$b" 'BEGIN { exit !(a > 0 && b > 0 && a <= 1.01 * b && b <= 1.01 * a) }' || far="$far [$cfg: $a vs $b]"
done
check "the GPT-2 export plans within 1 % of the zoo's GPT of its shape on 1-64 devices, per-op and whole-job${far}" '[ -z "$far" ]'
"$PLANNER" import "$O/gpt2.onnx" --batch 8 --const 'h.*.mask' -o "$T/g2x.json" > /dev/null 2> "$T/err"
check "import --const matching no weight exits 2 naming the pattern, nothing written" \
  '[ $? -eq 2 ] && grep -q "gpt2.onnx: --const .h\.\*\.mask.: no initializer the model trains is named so" "$T/err" && [ ! -e "$T/g2x.json" ]'
# a model's constants (GPT-2's 1/sqrt(d), its mask) are the same in every micro-batch: 2
# micro-batches of the export train with the losses of one (they used to draw constants anew
# per micro-batch, as they draw data)
"$PLANNER" search "$O/gpt2.onnx" --batch 4 --devices 1 --micro-batches 2 -o "$T/g2m.plan" > /dev/null 2>&1
"$PLANNER" run "$O/gpt2.onnx" --batch 4 --strategy "$T/g2m.plan" --steps 3 --json > "$T/g2m" 2> "$T/err"
same=$(same3 "$T/gpt2-r1" "$T/g2m" 1e-5)
check "gpt2.onnx in 2 micro-batches trains with the losses of one" '[ "$same" = true ]'
"$PLANNER" import "$O/unsupported/det.onnx" --batch 2 -o "$T/det-onnx.json" > /dev/null 2> "$T/err"
check "an op the importer does not know: exit 2 naming the node, its type and opset, the known ones, nothing written" \
  '[ $? -eq 2 ] && grep -q "node ./Det. (Det, opset 14): not supported; the importer knows MatMul (a vector operand too), Gemm, Einsum (of up to 8 operands), Conv" "$T/err" && [ ! -e "$T/det-onnx.json" ]'
"$PLANNER" import "$O/unsupported/grid_sample.onnx" --batch 2 -o "$T/gs-onnx.json" > /dev/null 2> "$T/err"
check "GridSample with padding_mode reflection: exit 2 naming the node and the mode not supported yet, nothing written" \
  '[ $? -eq 2 ] && grep -q "node ./GridSample. (GridSample, opset 16): its padding_mode reflection is not supported yet: zeros and border are" "$T/err" && [ ! -e "$T/gs-onnx.json" ]'
"$PLANNER" import "$O/unsupported/embedding_bag.onnx" -o "$T/eb-onnx.json" > /dev/null 2> "$T/err"
check "nn.EmbeddingBag given offsets at run time (a Loop over bags of lengths the graph does not know): exit 2 naming the node, saying it is control flow and when EmbeddingBag's Loop imports, nothing written" \
  '[ $? -eq 2 ] && grep -q "node ./Loop. (Loop, opset 14): control flow (Loop): not a training graph (nn.EmbeddingBag.s Loop imports when its bags are all of one length" "$T/err" && [ ! -e "$T/eb-onnx.json" ]'
# an eval export merges the equal transposed weights of a layer and its deepcopy into one
# initializer both MatMuls read (make_copies.py): one shared weight, said on stderr with the
# export that keeps them apart; the LSTM's two ops of one node (rnn_state) say nothing
"$PLANNER" import "$O/copies.onnx" -o "$T/copies.json" > /dev/null 2> "$T/err"
check "copies.onnx: the merged weight imported once, both MatMuls reading it, and a note naming it, its readers and TrainingMode.TRAINING" \
  '[ "$(jq "[.tensors[] | select(.role == \"param\")] | length" "$T/copies.json")" = 3 ] &&
   grep -q "param .onnx::MatMul_[0-9]*., a weight the exporter made, is read by 2 ops (./0/MatMul. and 1 more)" "$T/err" &&
   grep -q "training=torch.onnx.TrainingMode.TRAINING to keep them apart" "$T/err"'
# a head tied to the embedding, its transpose folded by the eval export into an "onnx::"
# initializer of the transposed values: tied back, the embedding read through a Transpose
"$PLANNER" import "$O/weighted/tied_lm.onnx" -o "$T/tied.json" > /dev/null 2> "$T/err"
check "weighted/tied_lm.onnx: the folded transpose of the tied embedding is a Transpose of wte.weight, not a param (312 params, PyTorch's)" \
  '[ "$(jq "[.tensors[] | select(.role == \"param\") | .shape | reduce .[] as \$d (1; . * \$d)] | add" "$T/tied.json")" = 312 ] &&
   [ "$(jq -c "[.ops[] | select(.type == \"Transpose\" and .inputs == [\"wte.weight\"]) | .attrs.perm]" "$T/tied.json")" = "[[1,0]]" ]'
"$PLANNER" import "$O/rnn_state.onnx" -o "$T/rnn_state-ops.json" > /dev/null 2> "$T/err"
check "rnn_state.onnx: no note of shared weights (an LSTM's ops of one node read its weights)" \
  '! grep -q "weight the exporter made" "$T/err"'

check "rnn_state.onnx: nn.LSTM from (h0, c0) an LSTM op reading them as inputs 4 and 5, its c_n the last step of a second LSTM of the same inputs giving its cells; the GRU from g0 reads it as input 4" \
  '[ "$(jq -c "[.ops[] | select(.type == \"LSTM\" or .type == \"GRU\") | [.type, .inputs[4:], .attrs.cell_states]]" "$T/rnn_state-ops.json")" = "[[\"LSTM\",[\"h0\",\"c0\"],null],[\"LSTM\",[\"h0\",\"c0\"],1],[\"GRU\",[\"g0\"],null]]" ] &&
   [ "$(jq -c "[.ops[] | select(.name | test(\"LSTM.Y_c\")) | [.type, .attrs.starts]]" "$T/rnn_state-ops.json")" = "[[\"Slice\",[4,0]],[\"Transpose\",null],[\"Reshape\",null]]" ]'
"$PLANNER" import "$O/llama.onnx" --batch 4 -o "$T/llama-rms.json" > /dev/null 2> "$T/err"
check "llama.onnx: its 5 RMSNorms (Pow, ReduceMean, Add, Sqrt, Div, Mul, Mul) are RMSNormalization ops, eps kept" \
  '[ "$(jq -c "[.ops[] | select(.type == \"RMSNormalization\") | .attrs.epsilon | . > 9.9e-7 and . < 1.01e-6] | [length, all]" "$T/llama-rms.json")" = "[5,true]" ] && ! jq -e ".ops[] | select(.type == \"Pow\")" "$T/llama-rms.json" > /dev/null'
"$PLANNER" import "$O/sumpool.onnx" --batch 4 -o "$T/sumpool-ops.json" > /dev/null 2> "$T/err"
check "sumpool.onnx: x ** 2 a Mul of x by x, ReduceSum over axis 1 (axes an input), the final LogSoftmax read by the cross-entropy as logits" \
  '[ "$(jq -c "[.ops[] | .type] | [index(\"ReduceSum\") != null, (map(select(. == \"Pow\" or . == \"LogSoftmax\")) | length), .[-1]]" "$T/sumpool-ops.json")" = "[true,0,\"SoftmaxCrossEntropy\"]" ] && [ "$(jq -c "[.ops[] | select(.type == \"ReduceSum\") | .attrs]" "$T/sumpool-ops.json")" = "[{\"axes\":[1],\"keepdims\":0}]" ]'
"$PLANNER" import "$O/sumpool.onnx" --batch 4 --loss none -o "$T/sumpool-none.json" > /dev/null 2> "$T/err"
check "sumpool.onnx --loss none: the final LogSoftmax, read by no cross-entropy, is x minus its log-sum-exp (ReduceMax, Sub, Exp, ReduceSum, Log, Sub), the output taken as it is" \
  '[ $? -eq 0 ] && [ "$(jq -c "[.ops[-6:][] | .type]" "$T/sumpool-none.json")" = "[\"ReduceMax\",\"Sub\",\"Exp\",\"ReduceSum\",\"Log\",\"Sub\"]" ]'
"$PLANNER" import "$O/unary.onnx" --batch 4 -o "$T/unary-ops.json" > /dev/null 2> "$T/err"
check "unary.onnx: Softplus, Log, Exp, Abs, Sqrt and Neg on activations imported as those ops" \
  '[ "$(jq -c "[.ops[] | .type | select(. == \"Softplus\" or . == \"Log\" or . == \"Exp\" or . == \"Abs\" or . == \"Sqrt\" or . == \"Neg\")]" "$T/unary-ops.json")" = "[\"Softplus\",\"Log\",\"Exp\",\"Abs\",\"Sqrt\",\"Neg\"]" ]'
"$PLANNER" import "$O/adaln.onnx" --batch 4 -o "$T/adaln-ops.json" > /dev/null 2> "$T/err"
check "adaln.onnx: a LayerNorm without affine parameters fused, its scale a constant of the hidden size" \
  '[ "$(jq -c "[.ops[] | select(.type == \"LayerNormalization\") | .inputs[1]] as \$s | [\$s[] as \$n | .tensors[\$n] | [.role, .shape]]" "$T/adaln-ops.json")" = "[[\"const\",[32]]]" ] && ! jq -e ".ops[] | select(.type == \"Sqrt\")" "$T/adaln-ops.json" > /dev/null'
# torch's Upsample (nearest, x2) exported as Resize: the planner's Resize,
# torch's coordinate mode and rounding kept
"$PLANNER" import "$O/upsample.onnx" --batch 4 -o "$T/up-onnx.json" > /dev/null 2> "$T/err"
check "upsample.onnx: its Resize imported as Resize to 16 x 16, nearest, asymmetric, floor" \
  '[ "$(jq -c "[.ops[] | select(.type == \"Resize\") | .attrs]" "$T/up-onnx.json")" = "[{\"shape\":[16,16],\"mode\":\"nearest\",\"coordinate_transformation_mode\":\"asymmetric\",\"nearest_mode\":\"floor\"}]" ]'
# convolutional networks: torchvision's ResNet-18 and MobileNetV2 (depthwise
# convolutions, ReLU6 as Clip), ResNet-18 exported for training (its batch
# norms kept, normalising by the batch: cut over ranks, they all-reduce their
# statistics), a small CNN, and ConvZoo (grouped, 1-d, strided, dilated; pools
# with ceil_mode and count_include_pad, the latter exported as Pad +
# AveragePool)
for f in mlp mlp_ln cnn convzoo convzoo2 resnet18 mobilenet_v2 resnet18_train vit vit_fresh swin mobilenet_v3_fresh einsum seq2seq mlp_dropout hf_bert preact shape_split upsample llama t5 sumpool unary adaln select groupnorm timestep unet stylepad opset20 opset21 bicubic recurrent activations embedder generator pointnet attention23 router clip_pool rnn_state bags spatial; do
  want=$(awk -v f="$f" '$1 == f { print $2 }' "$O/PARAMS")
  "$PLANNER" import "$O/$f.onnx" --batch 4 -o "$T/$f-onnx.json" > /dev/null 2> "$T/err"
  got=$(jq '[.tensors[] | select(.role == "param") | .shape | reduce .[] as $d (1; . * $d)] | add' "$T/$f-onnx.json" 2> /dev/null)
  check "import $f.onnx: every weight's elements are params ($got of the $want make_fixtures counted)" \
    '[ -n "$want" ] && [ "$got" = "$want" ]'
  # t5.onnx: T5's relative position buckets from a Constant of more values
  # than the importer keeps (Abs, Log, Min, Where folded on it), its RMSNorm
  # with a Cast
  # llama.onnx: LLaMA's layer (RMSNorm fused from its Pow ... Mul, rotary
  # embeddings with a Neg, SwiGLU)
  # shape_split.onnx: its Reshape's target computed from constants through
  # Split, Expand of values, Mul and Concat, all folded at import
  # preact.onnx: an inference-mode batch norm's running statistics, in the
  # file since fill_buffers.py (the executor never draws a constant's values)
  # batch norms over 4 samples (layer4's over 4 values a channel) divide by
  # tiny deviations: their gradients are ~1e6 and Adam's or a usual step size
  # makes the runs chaotic after one update, so that model trains with SGD at
  # 1e-7 (the first step's loss, before any update, agrees to 5e-6 either way;
  # the loss still falls 10.2 -> 7.0 in three steps). At 1e-6 the third
  # step's losses of 1 and 4 ranks differ by 1.0e-4 to 1.2e-4 relative
  # depending on the processor's OpenBLAS kernels (issue 50's batch-norm drift)
  ro=""
  [ "$f" = resnet18_train ] && ro="--optimizer sgd --lr 1e-7"
  "$PLANNER" search "$O/$f.onnx" --batch 4 --devices 1 -o "$T/$f-1.plan" > /dev/null 2>&1
  "$PLANNER" run "$O/$f.onnx" --batch 4 --strategy "$T/$f-1.plan" --steps 3 --json $ro > "$T/$f-r1" 2> "$T/err"
  for opts in "--devices 4" "--devices 4 --dp 2 --tp 2" "--devices 4 --dp 4"; do
    "$PLANNER" search "$O/$f.onnx" --batch 4 $opts -o "$T/$f-4.plan" > /dev/null 2> "$T/err"
    "$PLANNER" run "$O/$f.onnx" --batch 4 --strategy "$T/$f-4.plan" --steps 3 --json $ro > "$T/$f-r4" 2> "$T/err"
    same=$(same3 "$T/$f-r1" "$T/$f-r4")
    check "$f.onnx ($opts) plans and trains on 4 CPU ranks with the 1-rank losses" '[ "$same" = true ]'
  done
done
check "select.onnx: GPT-2's causal torch.where, a padding mask's masked_fill (Equal, Where) and torch.maximum/minimum are ops of their own" \
  '[ "$(jq -c "[.ops[] | select(.type | test(\"^(Where|Equal|Max|Min)\$\")) | .type]" "$T/select-onnx.json")" = "[\"Where\",\"Equal\",\"Where\",\"Max\",\"Min\"]" ] &&
   [ "$(jq -r ".tensors.pad.dtype" "$T/select-onnx.json")" = int64 ]'
check "groupnorm.onnx: GroupNorm's and InstanceNorm2d's InstanceNormalization each a LayerNormalization over the spatial dimensions, GroupNorm's constant ones and zeros left out, InstanceNorm2d's weight and bias kept" \
  '[ "$(jq -c "[.ops[] | select(.type == \"LayerNormalization\") | .attrs.axis]" "$T/groupnorm-onnx.json")" = "[2,2]" ] &&
   [ "$(jq -c "[.ops[] | select(.type == \"Reshape\") | .inputs[0]] | map(select(test(\"inorm\"))) | sort" "$T/groupnorm-onnx.json")" = "[\"inorm.bias\",\"inorm.weight\"]" ]'
check "timestep.onnx: a diffusion block's sinusoidal timestep embedding (Cos, Sin of the timestep input times constant frequencies) imports as ops on the input" \
  '[ "$(jq -c "[.ops[] | select(.type == \"Cos\" or .type == \"Sin\" or .type == \"Cast\") | .type]" "$T/timestep-onnx.json")" = "[\"Cast\",\"Cos\",\"Sin\"]" ]'
check "unet.onnx: each ConvTranspose2d an op of its own with its strides, pads and output_padding (UNet's up-convolutions)" \
  '[ "$(jq -c "[.ops[] | select(.type == \"ConvTranspose\") | [.attrs.strides, .attrs.pads, .attrs.output_padding]]" "$T/unet-onnx.json")" = "[[[2,2],[1,1,1,1],[1,1]],[[2,2],[0,0,0,0],[0,0]]]" ]'
check "stylepad.onnx: ReflectionPad2d, ReplicationPad2d and a constant pad of -1 each a Pad op of its mode over the spatial dimensions" \
  '[ "$(jq -c "[.ops[] | select(.type == \"Pad\") | [.attrs.mode, .attrs.value, .attrs.pads]]" "$T/stylepad-onnx.json")" = "[[\"reflect\",0,[0,0,3,3,0,0,3,3]],[\"reflect\",0,[0,0,1,1,0,0,1,1]],[\"edge\",0,[0,0,1,1,0,0,1,1]],[\"constant\",-1,[0,0,0,0,0,0,1,1]]]" ]'
check "opset20.onnx / opset21.onnx: GroupNormalization over [N, groups, -1], its scale and bias per group (opsets 18-20, on the grouped tensor) or per channel (21, after reshaping back); Gelu (opset 20)" \
  '[ "$(jq -c "[.ops[] | select(.type == \"Mul\" and (.name | test(\"^g\"))) | .inputs[0]]" "$T/opset20-onnx.json")" = "[\"g.normalized3\"]" ] &&
   [ "$(jq -c "[.ops[] | select(.type == \"Mul\" and (.name | test(\"^g\"))) | .inputs[0]]" "$T/opset21-onnx.json")" = "[\"g.normalized\"]" ] &&
   jq -e ".ops[] | select(.type == \"Gelu\")" "$T/opset20-onnx.json" > /dev/null'
check "bicubic.onnx: F.interpolate(mode=bicubic) a cubic Resize with PyTorch's coefficient -0.75, taps past the edges reading the edge" \
  '[ "$(jq -c "[.ops[] | select(.type == \"Resize\") | [.attrs.mode, .attrs.cubic_coeff_a, .attrs.exclude_outside, .attrs.shape]]" "$T/bicubic-onnx.json")" = "[[\"cubic\",-0.75,0,[12,12]]]" ]'
check "recurrent.onnx: nn.LSTM (bidirectional), nn.GRU (linear_before_reset 1) and nn.RNN each an op of its own; the GRU's h_n its Y's last step (Slice), made [directions, batch, hidden] with the steps dimension copied, not cut by micro-batches" \
  '[ "$(jq -c "[.ops[] | select(.type | test(\"^(LSTM|GRU|RNN)\$\")) | [.type, .attrs.direction]]" "$T/recurrent-onnx.json")" = "[[\"LSTM\",\"bidirectional\"],[\"GRU\",\"forward\"],[\"RNN\",\"forward\"]]" ] &&
   [ "$(jq -c "[.ops[] | select(.name | test(\"GRU.Y_h\")) | [.type, .attrs]]" "$T/recurrent-onnx.json")" = "[[\"Slice\",{\"axes\":[0,1],\"starts\":[6,0],\"ends\":[7,1]}],[\"Transpose\",{\"perm\":[1,0,2,3]}],[\"Reshape\",{\"shape\":[0,-1,10]}]]" ]'
"$PLANNER" search "$O/recurrent.onnx" --batch 4 --devices 1 --micro-batches 2 -o "$T/recm.plan" > /dev/null 2>&1
"$PLANNER" run "$O/recurrent.onnx" --batch 4 --strategy "$T/recm.plan" --steps 3 --json > "$T/recm" 2> "$T/err"
same=$(same3 "$T/recurrent-r1" "$T/recm" 1e-5)
check "recurrent.onnx in 2 micro-batches (its steps-first tensors cut by the batch, not the steps) trains with the losses of one" '[ "$same" = true ]'
check "activations.onnx: LeakyReLU, PReLU (per channel and shared, its slope a param), ELU, SELU and CELU each an op with its alpha (and SELU's gamma)" \
  '[ "$(jq -c "[.ops[] | select(.type | test(\"Relu|Elu|Selu|Celu\")) | [.type, (.attrs.alpha // 0 | . * 100 | round), (.attrs.gamma // 0 | . * 100 | round)]]" "$T/activations-onnx.json")" = "[[\"LeakyRelu\",20,0],[\"PRelu\",0,0],[\"Elu\",50,0],[\"Selu\",167,105],[\"PRelu\",0,0],[\"Celu\",150,0]]" ] &&
   [ "$(jq -c "[.ops[] | select(.type == \"PRelu\") | .inputs[1]] as \$s | [\$s[] as \$n | .tensors[\$n] | [.role, .shape]]" "$T/activations-onnx.json")" = "[[\"param\",[8,1,1]],[\"param\",[1,1,1]]]" ]'
check "embedder.onnx: torch.cumsum a CumSum op on its axis (RoBERTa's positions: of the int mask ids.ne(0), its Not an Equal to a const 0), torch.flip (a Slice of step -1) a Gather of the reversed indices, a const that carries them; F.normalize's ReduceL2 the square root of a sum of squares (Mul, ReduceSum, Sqrt), torch.norm(p=1)'s ReduceL1 a sum of absolute values (Abs, ReduceSum)" \
  '[ "$(jq -c "[.ops[] | select(.type == \"CumSum\") | .attrs.axis]" "$T/embedder-onnx.json")" = "[1,1,1]" ] &&
   [ "$(jq -c ". as \$r | [.ops[] | select(.name == \"/Not\") | [.type, .inputs[1]]] | .[0] as \$n | [\$n[0], \$r.tensors[\$n[1]].values]" "$T/embedder-onnx.json")" = "[\"Equal\",[0]]" ] &&
   [ "$(jq -c "[.ops[] | select(.name | test(\"Slice\")) | .inputs[1] as \$i | [.type, .attrs.axis, \$i]] | .[0] as \$g | [\$g[0], \$g[1]]" "$T/embedder-onnx.json")" = "[\"Gather\",1]" ] &&
   [ "$(jq -c "[.tensors | to_entries[] | select(.key | test(\"Slice.*indices\")) | .value.values] | .[0]" "$T/embedder-onnx.json")" = "[8,7,6,5,4,3,2,1,0]" ] &&
   [ "$(jq -c "[.ops[] | select(.name | test(\"Reduce\")) | .type]" "$T/embedder-onnx.json")" = "[\"Mul\",\"ReduceSum\",\"Sqrt\",\"Abs\",\"ReduceSum\"]" ]'
check "generator.onnx: PixelShuffle's DepthToSpace (CRD) a Reshape, Transpose, Reshape; repeat's Tile a Reshape, Expand, Reshape; randn_like drawn data (an input); Pow by 1.5; torch.std's count folded into a const that carries its value" \
  '[ "$(jq -c "[.ops[] | select(.name | test(\"DepthToSpace|Tile\")) | [.type, .attrs]]" "$T/generator-onnx.json")" = "[[\"Reshape\",{\"shape\":[4,8,2,2,6,6]}],[\"Transpose\",{\"perm\":[0,1,4,2,5,3]}],[\"Reshape\",{\"shape\":[4,8,12,12]}],[\"Reshape\",{\"shape\":[1,1,1,1,1,1,1]}],[\"Expand\",{\"shape\":[4,1,1,12,1,12,1]}],[\"Reshape\",{\"shape\":[4,1,12,12]}]]" ] &&
   [ "$(jq -c "[.tensors | to_entries[] | select(.value.role == \"input\") | .key]" "$T/generator-onnx.json")" = "[\"x\",\"/RandomNormalLike_output_0\",\"labels\"]" ] &&
   [ "$(jq -c "[.ops[] | select(.type == \"Pow\") | .attrs.exponent]" "$T/generator-onnx.json")" = "[1.5]" ] &&
   [ "$(jq -c ".tensors[\"/Sub_1_output_0\"].values" "$T/generator-onnx.json")" = "[3]" ]'
"$PLANNER" search "$O/generator.onnx" --batch 4 --devices 2 --micro-batches 2 -o "$T/genm.plan" > /dev/null 2>&1
check "generator.onnx in 2 micro-batches: its scalar reshaped to [1, 1, 1, 1] and its repeat of the batch cut as they should be, and it trains (the std's count a const of its value, no NaN)" \
  '"$PLANNER" run "$O/generator.onnx" --batch 4 --strategy "$T/genm.plan" --steps 2 > /dev/null 2> "$T/err"'
printf '{"format": "planner.model/1", "tensors": {"x": {"shape": [2, 3], "role": "input"}, "c": {"shape": [3], "role": "const", "values": [1, 2]}}, "ops": [{"name": "o", "type": "Add", "inputs": ["x", "c"], "outputs": ["y"]}]}' > "$T/vals.json"
"$PLANNER" search "$T/vals.json" --devices 1 -o "$T/vals.plan" > /dev/null 2> "$T/err"
check "a const with the wrong count of values: exit 2 naming the tensor and what was expected" \
  '[ $? -eq 2 ] && grep -q "tensors.c.values: expected an array of its 3 elements" "$T/err"'
check "pointnet.onnx: PointNet's max over the points a ReduceMax, amin a ReduceMin (their reduced axis kept whole), logsumexp its maximum subtracted, Exp, ReduceSum, Log and the maximum added" \
  '[ "$(jq -c "[.ops[] | select(.type | test(\"ReduceM\")) | [.type, .attrs.axes, .attrs.keepdims]]" "$T/pointnet-onnx.json")" = "[[\"ReduceMax\",[2],0],[\"ReduceMin\",[2],0],[\"ReduceMax\",[2],1],[\"ReduceMax\",[2],0]]" ] &&
   [ "$(jq -c "[.ops[] | select(.name | test(\"LogSumExp\")) | .type]" "$T/pointnet-onnx.json")" = "[\"ReduceMax\",\"Sub\",\"Exp\",\"ReduceSum\",\"Log\",\"ReduceMax\",\"Add\"]" ]'
check "attention23.onnx: ONNX's Attention (opset 23; 4 query heads over 2 key/value heads) each an Attention op: the 4-D form with is_causal and scale, the 3-D form with its head counts" \
  '[ "$(jq -c "[.ops[] | select(.type == \"Attention\") | [.inputs, .attrs]]" "$T/attention23-onnx.json")" = "[[[\"qt\",\"kt\",\"vt\"],{\"is_causal\":1,\"scale\":0.5}],[[\"q2\",\"k2\",\"v2\"],{\"is_causal\":0,\"q_num_heads\":4,\"kv_num_heads\":2}]]" ]'
check "router.onnx: the top-1 router an ArgMax and a OneHot (Cast to float), the top-2 one a TopK (k 2, the last axis) whose values are a GatherElements of its indices and whose indices a OneHot reads" \
  '[ "$(jq -c "[.ops[] | select(.type | test(\"^(ArgMax|OneHot|TopK|GatherElements)\$\")) | [.type, .attrs.axis, .attrs.k // .attrs.depth]]" "$T/router-onnx.json")" = "[[\"ArgMax\",2,null],[\"OneHot\",2,4],[\"TopK\",2,2],[\"GatherElements\",2,null],[\"OneHot\",3,4]]" ] &&
   [ "$(jq -r "[.ops[] | select(.type == \"OneHot\") | .inputs[0]] | .[1]" "$T/router-onnx.json")" = "$(jq -r ".ops[] | select(.type == \"TopK\") | .outputs[0]" "$T/router-onnx.json")" ]'
check "clip_pool.onnx: CLIP's EOS pooling an ArgMax over the token ids (axis 1, keepdims 0) whose positions, offset by the sequences' starts (an int64 const), index the Gather" \
  '[ "$(jq -c "[.ops[] | select(.type == \"ArgMax\") | [.inputs[0], .attrs]]" "$T/clip_pool-onnx.json")" = "[[\"tokens\",{\"axis\":1,\"keepdims\":0,\"select_last_index\":0}]]" ] &&
   a=$(jq -r ".ops[] | select(.type == \"ArgMax\") | .outputs[0]" "$T/clip_pool-onnx.json") &&
   add=$(jq -r --arg a "$a" ".ops[] | select(.type == \"Add\" and .inputs[0] == \$a) | .outputs[0]" "$T/clip_pool-onnx.json") &&
   jq -e --arg i "$add" ".ops[] | select(.type == \"Gather\" and .inputs[1] == \$i)" "$T/clip_pool-onnx.json" > /dev/null'
check "bags.onnx: each nn.EmbeddingBag's Loop (mean, sum, max over bags of one length) a Reshape of the ids to [batch, 6], a Gather of its weight's rows and a reduction over the bag" \
  '[ "$(jq -c "[.ops[] | select(.name | test(\"Loop\")) | [.type, .inputs[0], .attrs.shape // .attrs.axes]]" "$T/bags-onnx.json")" = "[[\"Reshape\",\"/mean/Reshape_output_0\",[4,6]],[\"Gather\",\"mean.weight\",null],[\"ReduceMean\",\"/mean/Loop.rows\",[1]],[\"Reshape\",\"/mean/Reshape_output_0\",[4,6]],[\"Gather\",\"sum.weight\",null],[\"ReduceSum\",\"/sum/Loop.rows\",[1]],[\"Reshape\",\"/mean/Reshape_output_0\",[4,6]],[\"Gather\",\"max.weight\",null],[\"ReduceMax\",\"/max/Loop.rows\",[1]]]" ]'
check "spatial.onnx: each F.grid_sample a GridSample op of its mode, padding and align_corners" \
  '[ "$(jq -c "[.ops[] | select(.type == \"GridSample\") | .attrs]" "$T/spatial-onnx.json")" = "[{\"mode\":\"bilinear\",\"padding_mode\":\"zeros\",\"align_corners\":0},{\"mode\":\"nearest\",\"padding_mode\":\"border\",\"align_corners\":1}]" ]'
check "vit.onnx: the class token Expanded to the batch and Concatenated before the patches, read back by a Gather" \
  '[ "$(jq -c "[.ops[] | select(.type == \"Expand\" or .type == \"Concat\" or (.type == \"Gather\" and .attrs.axis == 1)) | .type]" "$T/vit-onnx.json")" = "[\"Expand\",\"Concat\",\"Gather\"]" ]'
# every fixture plans on 8 and 64 devices in every mode (propagate from dp's
# plan), and cost reproduces each plan
for f in mlp mlp_ln gpt bert gpt2 cnn convzoo convzoo2 resnet18 mobilenet_v2 resnet18_train vit vit_fresh swin mobilenet_v3_fresh einsum seq2seq mlp_dropout hf_bert preact shape_split upsample llama t5 sumpool unary adaln select groupnorm timestep unet stylepad opset20 opset21 bicubic recurrent activations embedder generator pointnet attention23 router clip_pool rnn_state bags spatial; do
  fails=""
  for D in 8 64; do
    for mode in dp rec ilp auto propagate; do
      extra=()
      [ "$mode" = propagate ] && extra=(--load "$T/$f-$D-dp.plan")
      if ! "$PLANNER" search "$O/$f.onnx" --batch 64 --devices "$D" --mode "$mode" "${extra[@]}" \
        -o "$T/$f-$D-$mode.plan" > /dev/null 2> "$T/err" ||
        [ "$("$PLANNER" cost "$O/$f.onnx" --batch 64 --strategy "$T/$f-$D-$mode.plan" | jq .step_seconds)" != \
          "$(jq .cost.step_seconds "$T/$f-$D-$mode.plan")" ]; then
        fails="$fails $D/$mode($(head -c 120 "$T/err"))"
      fi
    done
  done
  check "$f.onnx plans on 8 and 64 devices with dp, rec, ilp, auto and propagate, each reproduced by cost${fails:+: failed$fails}" \
    '[ -z "$fails" ]'
done
# Swin: the shifted windows' attention mask computed at import (a constant of its
# shape), the relative position bias a Gather from its table by a constant index,
# patch merging's strided slices as Reshape + Slice + Reshape
# the exporter merged the fresh model's zero biases and reads them through Identities named
# onnx::Conv_N: where the file holds their values (16 zeros), each is a param of its own, read
# by its convolution; where it does not (data stripped past 64 elements), one shared param
check "mobilenet_v3_fresh.onnx: a merged zero bias whose values the file holds is a param of its own, one stripped of them stays shared" \
  '[ "$(jq -c "[.tensors[\"onnx::Conv_403\"].role, ([.ops[] | select(.inputs | index(\"onnx::Conv_403\"))] | length)]" "$T/mobilenet_v3_fresh-onnx.json")" = "[\"param\",1]" ] &&
   [ "$(jq "[.ops[] | select(.type == \"Conv\") | .inputs[2] // empty] | group_by(.) | map(length) | max" "$T/mobilenet_v3_fresh-onnx.json")" -gt 1 ]'
check "einsum.onnx: each Einsum a MatMul with the transposes and reshapes its indices need, a tensor unpacked by Split as Slices" \
  '[ "$(jq -c "[.ops[] | select(.name | test(\"Einsum\")) | .type]" "$T/einsum-onnx.json")" = "[\"Transpose\",\"MatMul\",\"MatMul\",\"Transpose\",\"Reshape\",\"Reshape\",\"MatMul\",\"Reshape\"]" ] &&
   [ "$(jq -c "[.ops[] | select(.name | test(\"Split\")) | .attrs.starts[0]]" "$T/einsum-onnx.json")" = "[0,1,2]" ]'
# Dropout: a training export's kept as the planner's (its ratio), an eval export's
# (training_mode false) dropped; --dropout keep / drop say otherwise
drops() { "$PLANNER" import "$O/$1.onnx" --batch 4 ${2:+--dropout $2} -o "$T/dr.json" > /dev/null 2>&1 &&
  jq -c "[.ops[] | select(.type == \"Dropout\") | .attrs.ratio * 100 | round]" "$T/dr.json"; }
check "--dropout: kept where the export trains, dropped in an eval export, keep and drop as asked" \
  '[ "$(drops mlp_dropout)" = "[10]" ] && [ "$(drops mlp_dropout drop)" = "[]" ] &&
   [ "$(drops swin)" = "[]" ] && [ "$(drops swin keep)" = "[0,0,0,0,0,0,0,0]" ]'
"$PLANNER" import "$O/mlp_dropout.onnx" --batch 4 --dropout sometimes -o "$T/dr.json" > /dev/null 2> "$T/err"
check "--dropout sometimes exits 2 naming the choices" '[ $? -eq 2 ] && grep -q "expected keep, drop or auto" "$T/err"'
check "hf_bert.onnx: its mask input cast to float at run time, (1 - mask) * -10000 computed per step" \
  '[ "$(jq -c "[.ops[] | select(.type == \"Cast\" or .type == \"Sub\" or .type == \"Mul\") | [.type, .attrs.to]]" "$T/hf_bert-onnx.json")" = "[[\"Cast\",\"float32\"],[\"Sub\",null],[\"Mul\",null]]" ] &&
   [ "$(jq -c ".tensors.mask | [.role, .dtype]" "$T/hf_bert-onnx.json")" = "[\"input\",\"int64\"]" ]'
check "swin.onnx: the shifted window's mask a constant [1,4,1,16,16], 4 bias Gathers from the tables, patch merging's 6 strided slices as Reshape + Slice + Reshape" \
  '[ "$(jq "[.tensors[] | select(.role == \"const\" and .shape == [1, 4, 1, 16, 16])] | length" "$T/swin-onnx.json")" = 1 ] &&
   [ "$(jq "[.ops[] | select(.type == \"Gather\") | .inputs[0] | select(test(\"relative_position_bias_table\"))] | length" "$T/swin-onnx.json")" = 4 ] &&
   [ "$(jq -c "[.ops[] | select(.name | test(\"features.2/Slice_[0-9]+(.split|.merge)?$\")) | .type] | group_by(.) | map([.[0], length])" "$T/swin-onnx.json")" = "[[\"Reshape\",12],[\"Slice\",6]]" ]'
check "resnet18_train.onnx: 20 batch norms in training mode, their running statistics dropped" \
  '[ "$(jq "[.ops[] | select(.type == \"BatchNormalization\" and .attrs.training_mode == 1 and (.inputs | length) == 3)] | length" "$T/resnet18_train-onnx.json")" = 20 ] &&
   [ "$(jq "[.tensors | keys[] | select(test(\"running\"))] | length" "$T/resnet18_train-onnx.json")" = 0 ]'
check "convzoo2.onnx: a Concat of 6 as a chain of two, channel and spatial Slices, HardSwish, HardSigmoid, Unsqueeze as a Reshape" \
  '[ "$(jq -c "[.ops[].type | select(. == \"Concat\" or . == \"Slice\" or . == \"HardSwish\" or . == \"HardSigmoid\")] | group_by(.) | map([.[0], length])" "$T/convzoo2-onnx.json")" = "[[\"Concat\",2],[\"HardSigmoid\",1],[\"HardSwish\",1],[\"Slice\",7]]" ]'
check "convzoo.onnx: Pad + AveragePool imported as one AveragePool counting the pads" \
  '[ "$(jq -c "[.ops[] | select(.type == \"AveragePool\") | .attrs | [.pads, .count_include_pad]]" "$T/convzoo-onnx.json")" = "[[[1,1,1,1],1]]" ]'
check "mobilenet_v2.onnx: depthwise convolutions (group = channels) and ReLU6 as Clip [0, 6]" \
  '[ "$(jq "[.ops[] | select(.type == \"Conv\" and .attrs.group > 1)] | length" "$T/mobilenet_v2-onnx.json")" = 17 ] &&
   [ "$(jq -c "[.ops[] | select(.type == \"Clip\") | [.attrs.min, .attrs.max]] | unique" "$T/mobilenet_v2-onnx.json")" = "[[0,6]]" ]'
# MindSpore's strategy reader (StrategyCheckpointInfo::from_json, mindspore
# ccsrc/frontend/parallel/strategy_checkpoint) reads these keys with .at() and
# these types; every checkpoint kind must have them. ZeRO's optimizer shard
# group (size, step) is the ranks holding the same piece: the dp group here.
ms_ok='(.current_stage | type == "number" and . == floor) and
  ([.parallel_strategy_item[] | (.stage | type == "number" and . == floor) and
     (.parallel_strategy | type == "array" and all(type == "array" and all(type == "number" and . == floor and . >= 1)))] | all) and
  ([.parallel_layout_item[] | (.dev_matrix | type == "array" and all(type == "number" and . >= 1)) and
     (.tensor_map | type == "array" and length > 0 or . == []) and (.tensor_shape | type == "array") and
     (.tensor_map | length) == (.tensor_shape | length) and
     (. as $it | .tensor_map | all(. >= -1 and . < ($it.dev_matrix | length))) and
     ([.field, .opt_weight_shard_step, .opt_weight_shard_size] | all(type == "number" and . == floor and . >= 0))] | all)'
bad=""
for opts in "--devices 8" "--devices 8 --dp 4 --tp 2 --zero 1" "--devices 8 --pp 2 --dp 2 --tp 2 --micro-batches 4 --zero 1" \
  "--devices 8 --job"; do
  "$PLANNER" search "$SRC/examples/gpt-small.json" $opts -o "$T/ms.json" > /dev/null 2>&1 &&
    [ "$(jq "$ms_ok" "$T/ms.json")" = true ] || bad="$bad [$opts]"
done
"$PLANNER" search "$SRC/examples/gpt-small.json" --devices 8 --dp 4 --tp 2 --zero 1 -o "$T/ms.json" > /dev/null 2>&1
check "checkpoints carry every key MindSpore's from_json reads, of its type (4 plan kinds)${bad:+: failed$bad}" '[ -z "$bad" ]'
check "ZeRO 1 on dp 4 x tp 2: a replicated weight's optimizer shard is its dp group (size 4, step 2), a whole one's all 8" \
  '[ "$(jq -c "[.parallel_layout_item.wte | .opt_weight_shard_size, .opt_weight_shard_step], .groups.dp[0]" "$T/ms.json" | tr -d "\n")" = "[4,2][0,2,4,6]" ] &&
   [ "$(jq -c "[.parallel_layout_item[\"l0.ln1.g\"] | .opt_weight_shard_size, .opt_weight_shard_step]" "$T/ms.json")" = "[8,1]" ]'
# a strategy file as MindSpore writes it for its own graph: its op names are
# MindSpore's ("Default/network-WithLossCell/...-op0"), its keys only those
# from_json reads; --load matches the params' layouts by name, so every weight
# the dp 4 x tp 2 plan cuts is cut the same way again
"$PLANNER" search "$SRC/examples/gpt-small.json" --devices 8 --dp 4 --tp 2 -o "$T/orig.json" > /dev/null 2>&1
jq '{current_stage, parallel_strategy_item: (.parallel_strategy_item | with_entries(.key = "Default/network-WithLossCell/" + .key + "-op0" | .value = {stage: .value.stage, parallel_strategy: .value.parallel_strategy})), parallel_layout_item: (.parallel_layout_item | map_values({dev_matrix, tensor_map, tensor_shape, field, opt_weight_shard_step, opt_weight_shard_size}))}' \
  "$T/orig.json" > "$T/mindspore.json"
"$PLANNER" search "$SRC/examples/gpt-small.json" --devices 8 --load "$T/mindspore.json" -o "$T/back.json" > /dev/null 2> "$T/err"
rc=$?
cuts='[.parallel_layout_item | to_entries[] | select(any(.value.tensor_map[]; . >= 0)) | [.key, .value.dev_matrix, .value.tensor_map]]'
check "--load of a MindSpore-written strategy file (MindSpore's op names): the 31 weights the plan cut, cut again by their names" \
  '[ $rc -eq 0 ] && [ "$(jq -c "$cuts | length" "$T/orig.json")" = 31 ] && [ "$(jq -c "$cuts" "$T/orig.json")" = "$(jq -c "$cuts" "$T/back.json")" ]'
"$PLANNER" cost "$SRC/examples/gpt-small.json" --strategy "$T/mindspore.json" --devices 8 > "$T/c.json" 2> "$T/err"
rc=$?
"$PLANNER" search "$SRC/examples/gpt-small.json" --devices 8 --mode propagate --load "$T/mindspore.json" \
  -o "$T/prop.json" > /dev/null 2>&1
check "cost of a MindSpore-written strategy file: its weights' layouts kept, the rest propagated (propagate --load's step, said on stderr)" \
  '[ $rc -eq 0 ] && [ "$(jq .step_seconds "$T/c.json")" = "$(jq .cost.step_seconds "$T/prop.json")" ] && grep -q "is a MindSpore strategy file" "$T/err"'
bad=""
for edit in '.parallel_layout_item.wte.dev_matrix = [0, 2]|parallel_layout_item.wte.dev_matrix' \
            '.parallel_layout_item.wte.dev_matrix = "x"|parallel_layout_item.wte.dev_matrix' \
            '.parallel_layout_item.wte.tensor_map = [7, -1]|parallel_layout_item.wte.tensor_map' \
            '.parallel_layout_item.wte.tensor_map = [0]|parallel_layout_item.wte.tensor_map' \
            '.parallel_layout_item.wte.tensor_map = [0, 0]|parallel_layout_item.wte.tensor_map'; do
  IFS='|' read -r expr want <<< "$edit"
  jq "$expr" "$T/mindspore.json" > "$T/ms-bad.json"
  "$PLANNER" search "$SRC/examples/gpt-small.json" --devices 8 --load "$T/ms-bad.json" -o "$T/ms-bad.plan" > /dev/null 2> "$T/err"
  rc=$?
  [ $rc -eq 2 ] && grep -q "$want" "$T/err" && [ ! -e "$T/ms-bad.plan" ] || bad="$bad '$expr'(exit $rc)"
done
check "a MindSpore strategy file whose layout of a model param cannot be one: exit 2 naming the param and field (not searched instead)${bad:+:$bad}" '[ -z "$bad" ]'
"$PLANNER" cost "$SRC/examples/gpt-small.json" --strategy "$T/mindspore.json" > /dev/null 2> "$T/err"
check "cost of a MindSpore strategy file without --devices/--cluster: exit 2 naming the file" \
  '[ $? -eq 2 ] && grep -q "mindspore.json: the plan has no cluster block" "$T/err"'
# hostile and unknown ONNX: every model of unsupported/ names its node and op
# type; every fixture cut short, and protobuf no exporter writes, exit 2
# naming the file; nothing is written
bad=""
for x in "$O"/unsupported/*.onnx; do
  "$PLANNER" import "$x" --batch 2 -o "$T/u.json" > /dev/null 2> "$T/err"
  rc=$?
  grep -q "^planner: $x: node '[^']*' ([A-Za-z]*, opset [0-9]*): " "$T/err" && [ $rc -eq 2 ] &&
    [ ! -e "$T/u.json" ] || bad="$bad $(basename "$x")(exit $rc)"
done
check "unsupported ONNX (Det, GridSample's reflection, EmbeddingBag's Loop of bags given at run time, a sequence of tensors): exit 2 naming the node and its type${bad:+: failed$bad}" \
  '[ -z "$bad" ]'
"$PLANNER" import "$O/unsupported/sequence.onnx" --batch 2 -o "$T/seq.json" > /dev/null 2> "$T/err"
check "unsupported/sequence.onnx: a list of tensors built at run time exits 2 saying it is a sequence (SequenceConstruct), nothing written" \
  '[ $? -eq 2 ] && grep -q "node .seq. (SequenceConstruct, opset 18): a sequence of tensors (SequenceConstruct): a list built at run time" "$T/err" && [ ! -e "$T/seq.json" ]'
# --- constants keep their values (issue 50): consts.onnx computes only on constants of more
#     than 64 elements (a position table, q/k/v weights, a -inf causal mask buffer, a Trilu mask,
#     a Pow/Reciprocal scale), so its first loss is make_constants.py's python3 reference
"$PLANNER" import "$O/consts.onnx" --batch 2 --loss none -o "$T/consts.json" > /dev/null 2> "$T/err"
check "consts.onnx: every const carries its values (-inf as \"-inf\"), the scale folded to 0.25, the -inf mask buffer a const, w the one param" \
  '[ "$(jq "[.tensors[] | select(.role == \"const\" and (.values | length) == 0)] | length" "$T/consts.json")" = 0 ] &&
   [ "$(jq -c ".tensors.scale.values" "$T/consts.json")" = "[0.25]" ] &&
   [ "$(jq -r "[.tensors.causal_mask.role, .tensors.causal_mask.values[1], .tensors.tri_mask.values[1]] | join(\" \")" "$T/consts.json")" = "const -inf -inf" ] &&
   [ "$(jq -c "[.tensors | to_entries[] | select(.value.role == \"param\") | .key]" "$T/consts.json")" = "[\"w\"]" ]'
"$PLANNER" search "$T/consts.json" --devices 1 -o "$T/consts.plan" > /dev/null 2>&1
"$PLANNER" run "$T/consts.json" --strategy "$T/consts.plan" --steps 1 --json > "$T/consts.run" 2> "$T/err"
got=$(jq -s '.[0].loss' "$T/consts.run" 2> /dev/null)
want=$(cat "$O/consts.loss")
check "consts.onnx: the first loss on one rank ($got) is the python3 reference's ($want) within 1e-5" \
  'awk -v a="$got" -v b="$want" "BEGIN { d = a - b; exit !(a != \"\" && a != \"null\" && d <= 1e-5 * b && -d <= 1e-5 * b) }"'
# the ops PyTorch's exporter does not write (Sinh, Cosh, Asinh, Atanh, Acosh, opset 18's Mish,
# Softsign; IsNaN and IsInf masks of 0 and of 1; Sum, Mean, Max and Min of one to three
# inputs, ThresholdedRelu, Shrink, LpNormalization, ReduceLogSum, Hardmax, EyeLike) on constants: the first loss on 1 and 2
# ranks is make_more_ops.py's python3 reference (weighted/functions.onnx holds the ones it writes)
"$PLANNER" import "$O/more_ops.onnx" --batch 2 --loss none -o "$T/more.json" > /dev/null 2> "$T/err"
more_ok=true
for n in 1 2; do
  "$PLANNER" search "$T/more.json" --devices $n -o "$T/more.plan" > /dev/null 2>&1
  got=$("$PLANNER" run "$T/more.json" --strategy "$T/more.plan" --steps 1 --json 2> "$T/err" |
    jq -s '.[0].loss' 2> /dev/null)
  awk -v a="$got" -v b="$(cat "$O/more_ops.loss")" \
    'BEGIN { d = a - b; exit !(a != "" && a != "null" && d <= 1e-5 * b && -d <= 1e-5 * b) }' ||
    more_ok="false ($n ranks: $got)"
done
check "more_ops.onnx: the hyperbolic functions, Mish, Softsign, IsNaN, IsInf, variadic Sum/Mean/Max/Min, ThresholdedRelu, Shrink, LpNormalization, ReduceLogSum, Hardmax and EyeLike on 1 and 2 ranks give the python3 reference's loss ($(cat "$O/more_ops.loss")) within 1e-5: $more_ok" \
  '[ "$more_ok" = true ]'
# The first loss of MODEL.json on one rank and data-parallel on 2 and 4 against the number in
# WANT_FILE, within 1e-5: prints true, or false and the first rank count that differs (each RUN_OPTION
# goes to planner run)
loss_on_ranks() { # MODEL.json WANT_FILE [RUN_OPTION...]
  local model=$1 want=$2 n got
  shift 2
  for n in 1 2 4; do
    "$PLANNER" search "$model" --devices $n --dp $n -o "$T/ranks.plan" > /dev/null 2>&1
    got=$("$PLANNER" run "$model" --strategy "$T/ranks.plan" --steps 1 --json "$@" 2> "$T/err" |
      jq -s '.[0].loss' 2> /dev/null)
    if ! awk -v a="$got" -v b="$(cat "$want")" \
      'BEGIN { d = a - b; exit !(a != "" && a != "null" && d <= 1e-5 * b && -d <= 1e-5 * b) }'; then
      echo "false ($n ranks: $got)"
      return
    fi
  done
  echo true
}
# LRN (the ONNX model zoo's AlexNet, CaffeNet, GoogLeNet, ZFNet; windows of 3, 4 -- one channel
# before, two after -- and 1 channel, cut at the ends), MeanVarianceNormalization (over axes 0, 2,
# 3 and over the channels), LpPool (p 3, padded) and GlobalLpPool: the first loss on one rank and
# data-parallel on 2 and 4 (the batch cut: the default MVN's mean runs across ranks) is
# make_norms_pools.py's python3 reference from ONNX's definitions
"$PLANNER" import "$O/norms_pools.onnx" --batch 4 --loss none -o "$T/lrn.json" > /dev/null 2> "$T/err"
lrn_ok=$(loss_on_ranks "$T/lrn.json" "$O/norms_pools.loss")
check "norms_pools.onnx: LRN of sizes 3, 4 and 1, MeanVarianceNormalization, LpPool and GlobalLpPool on 1 rank and data-parallel on 2 and 4 give the python3 reference's loss ($(cat "$O/norms_pools.loss")) within 1e-5: $lrn_ok" \
  '[ "$lrn_ok" = true ]'
# ONNX local functions (torch.onnx.export's export_modules_as_functions): two instances of one
# function, a call inside a function, attributes by reference (LeakyRelu's alpha, a Constant's
# value_float), a default from the function (attribute_proto), an output no caller reads, a body
# tensor named as a graph tensor: inlined, the first loss on 1, 2 and 4 ranks is
# make_local_functions.py's python3 reference; the one param is w [4] (a function that calls
# itself and one that expands past the bound: tests/fuzz/regress/onnx.expect)
"$PLANNER" import "$O/local_functions.onnx" --batch 4 --loss none -o "$T/fn.json" > /dev/null 2> "$T/err"
fn_ok=$(loss_on_ranks "$T/fn.json" "$O/local_functions.loss")
fn_params=$(jq -c '[.tensors | to_entries[] | select(.value.role == "param") | [.key, .value.shape]]' "$T/fn.json" 2> /dev/null)
check "local_functions.onnx: local functions inlined give the python3 reference's loss ($(cat "$O/local_functions.loss")) within 1e-5 on 1, 2 and 4 ranks: $fn_ok; params $fn_params" \
  '[ "$fn_ok" = true ] && [ "$fn_params" = "[[\"w\",[4]]]" ]'
# one op class a fixture, each held to its generator's python3 reference (make_NAME.py) on 1, 2
# and 4 ranks: opset 18's Pad with its axes input (constant padding of the last dimension, edge
# padding of two dimensions named out of order); opset 23's RMSNormalization (newer exporters'
# torch.nn.RMSNorm) over the last axis and from axis 1; Einsum of three operands (a bilinear form
# per row, a chain of three matrices), taken left to right; Pow by exponents computed at run
# time (GeM pooling's p, read from the param: both of Pow's gradients run) and by an int64 tensor; ConvTranspose of
# groups (nn.ConvTranspose2d(groups=2) and depthwise, groups = channels); ScatterND of rows not
# in one run (index_put of rows 3 and 0; index_add_ of rows computed at run time); float64 (.double())
for spec in "pad_axes|Pad with axes (opset 18)" \
  "rmsnorm23|RMSNormalization (opset 23) over the last axis and from axis 1" \
  "einsum3|Einsum of three operands" \
  "pow_tensor|Pow by run-time exponents (GeM pooling) and an int64 exponent tensor" \
  "convt_groups|ConvTranspose of 2 groups and depthwise (4 groups, dilated, with a bias)" \
  "scatter_rows|ScatterND of rows out of order (constant indices) and of rows computed at run time with reduction add" \
  "float64|a part computed in float64 (a Cast to double, double constants, a Cast back)"; do
  fx=${spec%%|*}
  "$PLANNER" import "$O/$fx.onnx" --batch 4 --loss none -o "$T/$fx.json" > /dev/null 2> "$T/err"
  fx_ok=$(loss_on_ranks "$T/$fx.json" "$O/$fx.loss")
  check "$fx.onnx: ${spec#*|} gives the python3 reference's loss ($(cat "$O/$fx.loss")) within 1e-5 on 1, 2 and 4 ranks: $fx_ok" \
    '[ "$fx_ok" = true ]'
done
jq '(.ops[] | select(.name == "hp")) += {"attrs": {"exponent": 2}}' "$T/pow_tensor.json" > "$T/pow-bad.json"
"$PLANNER" search "$T/pow-bad.json" --devices 1 > /dev/null 2> "$T/err"
check "a model's Pow with a second input and attrs.exponent: exit 2 naming the op and both" \
  '[ $? -eq 2 ] && grep -q "op .hp.: Pow: the exponent is given twice, as attrs.exponent and as its second input" "$T/err"'
# ImageScaler (opsets before 10; the model zoo's Tiny YOLOv2): scale times x plus a bias per channel
"$PLANNER" import "$O/image_scaler.onnx" --batch 4 --loss none -o "$T/is.json" > /dev/null 2> "$T/err"
"$PLANNER" search "$T/is.json" --devices 2 --dp 2 -o "$T/is.plan" > /dev/null 2>&1
got=$("$PLANNER" run "$T/is.json" --strategy "$T/is.plan" --steps 1 --json 2> "$T/err" | jq -s '.[0].loss' 2> /dev/null)
want=$(cat "$O/image_scaler.loss")
check "image_scaler.onnx: ImageScaler data-parallel on 2 ranks gives the python3 reference's loss ($want) within 1e-5 (got $got)" \
  'awk -v a="$got" -v b="$want" "BEGIN { d = a - b; exit !(a != \"\" && a != \"null\" && d <= 1e-5 * b && -d <= 1e-5 * b) }"'
# opset 9's Scatter (ScatterElements before opset 11) on one rank and data-parallel on 2 and 4:
# make_old_ops.py's python3 reference; opset 15's Bernoulli (stochastic depth's mask) as drawn
# data: imported, planned and run on 2 ranks to a finite loss
"$PLANNER" import "$O/scatter9.onnx" --loss none -o "$T/s9.json" > /dev/null 2> "$T/err"
s9_ok=$(loss_on_ranks "$T/s9.json" "$O/scatter9.loss")
check "scatter9.onnx: opset 9's Scatter on 1 rank and data-parallel on 2 and 4 gives the python3 reference's loss ($(cat "$O/scatter9.loss")) within 1e-5: $s9_ok" \
  '[ "$s9_ok" = true ]'
"$PLANNER" import "$O/bernoulli.onnx" --batch 8 --loss none -o "$T/be.json" > /dev/null 2> "$T/err" &&
  "$PLANNER" search "$T/be.json" --devices 2 -o "$T/be.plan" > /dev/null 2>&1
got=$("$PLANNER" run "$T/be.json" --strategy "$T/be.plan" --steps 1 --json 2> "$T/err" | jq -s '.[0].loss' 2> /dev/null)
check "bernoulli.onnx: Bernoulli imported as drawn data (an input of its shape), planned and run on 2 ranks to a finite loss ($got)" \
  'jq -e ".tensors.keep.role == \"input\"" "$T/be.json" > /dev/null && awk -v a="$got" "BEGIN { exit !(a != \"\" && a != \"null\" && a + 0 == a + 0 && a + 0 < 1e30) }"'
# a model exported with its loss (F.cross_entropy from opset 12: SoftmaxCrossEntropyLoss, mean and
# sum, classes on axis 1; F.nll_loss of F.log_softmax; CastLike and Size on the way): the default --loss takes its output as
# it is, and on make_losses.py's batch the first loss on one rank and data-parallel on 2 and 4 is
# its python3 reference from ONNX's definitions
"$PLANNER" import "$O/losses.onnx" --batch 4 -o "$T/losses.json" > /dev/null 2> "$T/err"
loss_ok=$([ $? -eq 0 ] && jq -e '.outputs == ["loss"]' "$T/losses.json" > /dev/null && echo true ||
  echo "false (import: $(head -c 200 "$T/err"))")
[ "$loss_ok" = true ] && loss_ok=$(loss_on_ranks "$T/losses.json" "$O/losses.loss" \
  --batch-file "x=$O/losses_x.bin" --batch-file "labels=$O/losses_labels.bin")
check "losses.onnx: SoftmaxCrossEntropyLoss (mean, sum), NegativeLogLikelihoodLoss of a LogSoftmax, CastLike and Size: the model's own loss, on 1 rank and data-parallel on 2 and 4 the python3 reference's ($(cat "$O/losses.loss")) within 1e-5: $loss_ok" \
  '[ "$loss_ok" = true ]'
# F.cross_entropy against a fixed target (a Constant int64 tensor, what PyTorch exports for
# torch.zeros(B, dtype=torch.long)): the labels a const of that type, its own loss (no note of an
# appended one), on 1, 2 and 4 ranks make_losses.py's reference
"$PLANNER" import "$O/losses_const.onnx" --batch 4 -o "$T/lc.json" > /dev/null 2> "$T/err"
lc_ok=$(jq -e '.tensors.target.dtype == "int64" and .tensors.target.role == "const"' "$T/lc.json" > /dev/null 2>&1 &&
  ! grep -q "appended cross-entropy" "$T/err" && echo true || echo "false (import: $(head -c 200 "$T/err"))")
[ "$lc_ok" = true ] && lc_ok=$(loss_on_ranks "$T/lc.json" "$O/losses_const.loss" --batch-file "x=$O/losses_x.bin")
check "losses_const.onnx: SoftmaxCrossEntropyLoss against a constant int64 target: the labels a const int64 and its loss on 1, 2 and 4 ranks the python3 reference's ($(cat "$O/losses_const.loss")) within 1e-5: $lc_ok" \
  '[ "$lc_ok" = true ]'
"$PLANNER" import "$O/unsupported/loss_per_position.onnx" --batch 2 -o "$T/lp.json" > /dev/null 2> "$T/err"
check "unsupported/loss_per_position.onnx: a loss per position (reduction none) exits 2 naming the node and why, nothing written" \
  '[ $? -eq 2 ] && grep -q "node .per_position. (SoftmaxCrossEntropyLoss, opset 15): its reduction none (a loss per position) is not supported yet" "$T/err" && [ ! -e "$T/lp.json" ]'
"$PLANNER" import "$O/big_const.onnx" --batch 1 -o "$T/big.json" > /dev/null 2> "$T/err"
check "big_const.onnx: a constant past the bound (4196352 values) exits 2 naming it and the bound, nothing written" \
  '[ $? -eq 2 ] && grep -q "big_const.onnx: constant .big.: 4196352 values, more than the importer keeps of one (at most 4194304, 16 MiB as float32" "$T/err" && [ ! -e "$T/big.json" ]'
"$PLANNER" import "$O/control_flow.onnx" --batch 1 -o "$T/cf.json" > /dev/null 2> "$T/err"
check "control_flow.onnx: post-processing's If exits 2 naming the node: control flow, not a training graph" \
  '[ $? -eq 2 ] && grep -q "node .postprocess. (If, opset 14): control flow (If): not a training graph" "$T/err" && [ ! -e "$T/cf.json" ]'
# an If whose condition folds (a shape's width against 10) is taken inline when its branch
# holds shape work, views and arithmetic (weighted/lrn.onnx: first loss within 1e-5 of
# PyTorch's); this one's branch has a Floor: refused as the control flow it is, nothing written
"$PLANNER" import "$O/unsupported/static_if.onnx" --batch 1 -o "$T/si.json" > /dev/null 2> "$T/err"
check "unsupported/static_if.onnx: an If on a shape whose branch holds a Floor exits 2 naming the If, nothing written" \
  '[ $? -eq 2 ] && grep -q "node .guard. (If, opset 14): control flow (If): not a training graph" "$T/err" && [ ! -e "$T/si.json" ]'
"$PLANNER" import "$O/lstm_static.onnx" -o "$T/lstm-static.json" > /dev/null 2> "$T/err"
check "lstm_static.onnx: an LSTM of a static batch, its zero initial states Constants of 128 values, imports as an LSTM op" \
  '[ $? -eq 0 ] && [ "$(jq -c "[.ops[] | select(.type == \"LSTM\") | .name]" "$T/lstm-static.json")" = "[\"lstm\"]" ]'
"$PLANNER" search "$T/g2c.json" --devices 1 -o "$T/g2c1.plan" > /dev/null 2>&1
"$PLANNER" run "$T/g2c.json" --strategy "$T/g2c1.plan" --steps 1 > /dev/null 2> "$T/err"
check "run of a const whose values the file does not hold (gpt2.onnx's mask buffer, dims only, --const): exit 2 naming it, never drawn" \
  '[ $? -eq 2 ] && grep -q "const .h.0.bias. (read by op .*) has no values: the executor never invents" "$T/err"'
bad=""
for f in mlp gpt2 convzoo resnet18_train vit swin; do
  size=$(stat -c %s "$O/$f.onnx")
  for part in 1 2 3 5 7; do
    head -c $((size * part / 8)) "$O/$f.onnx" > "$T/cut.onnx"
    "$PLANNER" import "$T/cut.onnx" --batch 2 -o "$T/u.json" > /dev/null 2> "$T/err"
    rc=$?
    [ $rc -eq 2 ] && grep -q "^planner: $T/cut.onnx: " "$T/err" && [ ! -e "$T/u.json" ] ||
      bad="$bad $f@$part/8(exit $rc)"
  done
done
# a length past the end, a field of a wire type onnx.proto does not give it, a
# graph whose node names an input nothing makes
printf '\x3a\xff\xff\xff\xff\x0f\x0a' > "$T/m1.onnx"
printf '\x08\x07\x3a\x02\x0d\x00' > "$T/m2.onnx"
printf '\x08\x07\x3a\x0e\x0a\x0c\x0a\x01\x61\x12\x01\x62\x22\x04\x52\x65\x6c\x75' > "$T/m3.onnx"
for x in m1 m2 m3; do
  "$PLANNER" import "$T/$x.onnx" --batch 2 -o "$T/u.json" > /dev/null 2> "$T/err"
  rc=$?
  [ $rc -eq 2 ] && grep -q "^planner: $T/$x.onnx: " "$T/err" && [ ! -e "$T/u.json" ] || bad="$bad $x(exit $rc)"
done
check "truncated and malformed ONNX (6 fixtures cut at 1/8 to 7/8, 3 hand-made protobufs): exit 2 naming the file, nothing written${bad:+: failed$bad}" \
  '[ -z "$bad" ]'
echo '{"format": "planner.model/1"}' > "$T/fake.onnx"
"$PLANNER" search "$T/fake.onnx" --devices 2 > /dev/null 2> "$T/err"
check "a .onnx file that is not ONNX exits 2 saying so" '[ $? -eq 2 ] && grep -q "fake.onnx: not an ONNX model" "$T/err"'

# --- bench: the modes side by side
"$PLANNER" bench "$SRC/examples/gpt-small.json" --devices 8 --modes dp,rec,brute --csv > "$T/b.csv" 2> "$T/err"
check "bench --csv: a row per mode, dp proven and the fastest, rec not proven, brute's refusal in its row" \
  '[ $? -eq 0 ] && [ "$(head -1 "$T/b.csv")" = "mode,search_seconds,step_seconds,peak_memory_bytes,step_vs_best,proven,error" ] &&
   grep -q "^dp,.*,1.000000,true,$" "$T/b.csv" && grep -q "^rec,.*,false,$" "$T/b.csv" && grep -q "^brute,,,,,,\".*too many" "$T/b.csv"'
check "... bench's dp step is search's" \
  '[ "$(grep "^dp," "$T/b.csv" | cut -d, -f3)" = "$("$PLANNER" search "$SRC/examples/gpt-small.json" --devices 8 --json | jq .cost.step_seconds | xargs printf %.9g)" ]'
"$PLANNER" bench "$SRC/examples/gpt-small.json" --modes dp,rec --plot "$T/b.svg" > "$T/out" 2> "$T/err"
rc=$?
if command -v gnuplot > /dev/null; then
  check "bench --plot draws the SVG with gnuplot" '[ $rc -eq 0 ] && grep -q "<svg" "$T/b.svg"'
else
  check "bench --plot without gnuplot: the table, a note, exit 0" \
    '[ $rc -eq 0 ] && grep -q "^dp " "$T/out" && grep -q "gnuplot not found" "$T/err" && [ ! -e "$T/b.svg" ]'
fi
"$PLANNER" bench "$SRC/examples/gpt-small.json" --modes brute > /dev/null 2> "$T/err"
check "bench: every mode failing exits with the first one's status" '[ $? -eq 2 ] && grep -q "too many" "$T/err"'
"$PLANNER" bench "$SRC/examples/gpt-small.json" --modes dp,nope > /dev/null 2> "$T/err"
check "bench: an unknown mode exits 2 naming it" '[ $? -eq 2 ] && grep -q "nope" "$T/err"'

# --- hostile files: an XML that crashes hwloc itself (found by tests/fuzz), a write cut by a signal
for x in "$SRC"/tests/fuzz/regress/hwloc/hwloc-crash-*.xml; do
  "$PLANNER" topology --xml "$x" > /dev/null 2> "$T/err"
  rc=$?
  # hwloc's XML readers differ (libxml2's or its own, by what is installed):
  # one crashes where the other refuses
  check "topology --xml $(basename "$x"): hwloc's crash or refusal is exit 2 naming the file" \
    '[ $rc -eq 2 ] && grep -qE "$x: (hwloc crashed reading it|not a topology hwloc can read)" "$T/err"'
done
mkdir -p "$T/sig"
(ulimit -f 1; exec "$PLANNER" search "$SRC/examples/gpt-small.json" --devices 8 -o "$T/sig/out.json") \
  > /dev/null 2> "$T/err"
rc=$?
check "past ulimit -f (SIGXFSZ at its default): exit 4 naming the limit, neither the file nor a temporary" \
  '[ $rc -eq 4 ] && grep -q "file size limit" "$T/err" && [ -z "$(ls -A "$T/sig")" ]'
(trap '' XFSZ; ulimit -f 1; exec "$PLANNER" search "$SRC/examples/gpt-small.json" --devices 8 \
  -o "$T/sig/out.json") > /dev/null 2> "$T/err"
rc=$?
check "a write that fails (EFBIG, as on a full disk) exits 4 naming the file, nothing left" \
  '[ $rc -eq 4 ] && grep -q "sig/out.json: cannot write" "$T/err" && [ -z "$(ls -A "$T/sig")" ]'

# --- the fuzz targets' regression inputs, each with the exit and message it must give
for kind in cluster checkpoint model onnx; do
  while IFS=$'\t' read -r f want msg; do
    case $f in '#'*|'') continue ;; esac
    x="$SRC/tests/fuzz/regress/$kind/$f"
    if [ $kind = cluster ]; then
      "$PLANNER" search "$SRC/examples/tiny-mlp.json" --cluster "$x" -o "$T/rg.json" > /dev/null 2> "$T/err"
    elif [ $kind = model ]; then
      "$PLANNER" search "$x" --devices 2 -o "$T/rg.json" > /dev/null 2> "$T/err"
    elif [ $kind = onnx ]; then
      "$PLANNER" search "$x" --devices 2 --batch 4 -o "$T/rg.json" > /dev/null 2> "$T/err"
    else
      "$PLANNER" cost "$SRC/examples/tiny-mlp.json" --strategy "$x" > /dev/null 2> "$T/err"
    fi
    rc=$?
    check "regress/$kind/$f: exit $want${msg:+, '$msg'}" \
      '[ $rc -eq "$want" ] && { [ -z "$msg" ] || grep -qF -- "$msg" "$T/err"; }'
  done < "$SRC/tests/fuzz/regress/$kind.expect"
done

# --- a checkpoint naming 1M ranks: priced, but not run as 1M threads (4M took 24 GB)
"$PLANNER" run "$SRC/examples/tiny-mlp.json" \
  --strategy "$SRC/tests/fuzz/regress/checkpoint/ranks-1m-no-description.json" > /dev/null 2> "$T/err"
check "run on a plan for 1048576 devices exits 2: the cpu backend's threads are bounded" \
  '[ $? -eq 2 ] && grep -q "runs 1 to 4096 ranks as threads of one process, not 1048576" "$T/err"'

# --- a document of one huge array is refused before it is built (not after gigabytes)
{ printf '{"format": "planner.model/1", "name": "big", "tensors": {"x": {"shape": ['
  yes 1 | head -n 16777217 | paste -sd, | tr -d '\n'
  printf '], "role": "input"}}, "ops": []}'; } > "$T/bigarr.json"
"$PLANNER" search "$T/bigarr.json" --devices 2 > /dev/null 2> "$T/err"
check "a model with an array of 2^24+1 values exits 2 naming the file, line and column" \
  '[ $? -eq 2 ] && grep -q "bigarr.json:1:[0-9]*: more than 16777216 values in one array or object" "$T/err"'
rm -f "$T/bigarr.json"

# --- --help on every command
for c in search cost strategies explain run calibrate topology bench; do
  "$PLANNER" $c --help > "$T/help" 2>&1
  check "planner $c --help" '[ $? -eq 0 ] && grep -q "usage: planner $c" "$T/help"'
done
"$PLANNER" --help > "$T/help" 2>&1
check "planner --help" '[ $? -eq 0 ] && grep -q "commands:" "$T/help"'

# --- every accepted number means something: a checkpoint read for what it says (explain,
#     report) and the cluster of cost/run are checked field by field, exit 2 naming the field
"$ZOO" mlp --batch 64 --hidden 64 --layers 1 > "$T/n.json"
"$PLANNER" search "$T/n.json" --devices 2 -o "$T/n.plan" > /dev/null 2>&1
bad=""
for edit in '.parallel_strategy_item.fc0.parallel_strategy = [[1e300, 1], [1, 1]]|op .fc0.: parallel_strategy' \
            '.parallel_strategy_item.fc0.parallel_strategy = "x"|op .fc0.: parallel_strategy' \
            '.parallel_strategy_item.fc0.parallel_strategy = [null, [1, 1]]|op .fc0.: parallel_strategy' \
            '.parallel_strategy_item.fc0.compute_seconds = -1|op .fc0.: compute_seconds' \
            '.cluster.devices = 1e12|cluster.devices: expected an integer' \
            '.cluster.devices = 4|cluster.devices: 4, but nodes x devices_per_node' \
            '.cost.step_seconds = "fast"|cost.step_seconds' '.pipeline.stages = 0.5|pipeline.stages' \
            '.cost = [1, 2]|cost: expected an object' '.parallel_strategy_item = [1]|parallel_strategy_item: expected an object' \
            '.cluster = [4]|cluster: expected an object' '.pipeline = "x"|pipeline: expected an object'; do
  IFS='|' read -r expr want <<< "$edit"
  jq "$expr" "$T/n.plan" > "$T/n-bad.plan"
  for cmd in explain report; do
    out=(); [ $cmd = report ] && out=(-o "$T/n-bad.html")
    "$PLANNER" $cmd "$T/n-bad.plan" "${out[@]}" > /dev/null 2> "$T/err"
    rc=$?
    [ $rc -eq 2 ] && grep -q "$want" "$T/err" && [ ! -e "$T/n-bad.html" ] || bad="$bad $cmd:'$expr'(exit $rc)"
  done
done
check "explain and report refuse out-of-range strategies, counts and costs, naming the field (exit 2)${bad:+:$bad}" '[ -z "$bad" ]'
jq 'del(.cluster.description) | del(.cluster.nodes) | del(.cluster.devices_per_node) | .cluster.name = "x" | .cluster.devices = 1e12' \
  "$T/n.plan" > "$T/n-bad.plan"
"$PLANNER" cost "$T/n.json" --strategy "$T/n-bad.plan" > /dev/null 2> "$T/err"
check "cost of a plan whose cluster.devices is past the cap names the field (not '--devices 0')" \
  '[ $? -eq 2 ] && grep -q "cluster.devices: expected an integer from 1 to" "$T/err"'
"$PLANNER" search "$T/n.json" --devices 2 --json 2> /dev/null | jq '.cluster.description | .device.memory_bytes = 1.7976931348623157e308' > "$T/huge-cluster.json"
"$PLANNER" search "$T/n.json" --cluster "$T/huge-cluster.json" -o "$T/n-huge.plan" > /dev/null 2> "$T/err"
check "a cluster with DBL_MAX bytes of memory is refused (exit 2), never written into a plan the tool cannot read back" \
  '[ $? -eq 2 ] && grep -q "device.memory_bytes: expected a finite number from 1 to 1e+18" "$T/err" && [ ! -e "$T/n-huge.plan" ]'

# --- calibrate --from-runs: runs "measured" on a cluster with planted factors (kernels at 0.7 of
#     the model's rate, collectives at 0.5, those across nodes at 0.4 times that again,
#     activations 1.2 times their bytes) give those factors back; the written cluster prices
#     every run at its measured step; bad runs files exit 2. A run's peak is its framework's max
#     allocated: the planted plan's peak less the reserve
mkdir -p "$T/fit"
"$ZOO" gpt3-1.3b --layers 4 --batch 64 > "$T/fit/a.json"
"$ZOO" llama2-7b --layers 2 --batch 64 --attention fused > "$T/fit/b.json"
: > "$T/fit/runs.jsonl"
i=0
for spec in "a.json|--tp 1 --pp 1 --dp 16" "a.json|--tp 8 --pp 1 --dp 2" "b.json|--tp 2 --pp 1 --dp 8 --zero 3" \
            "b.json|--tp 4 --pp 2 --dp 2"; do
  IFS='|' read -r m o <<< "$spec"
  i=$((i + 1))
  # shellcheck disable=SC2086
  "$PLANNER" search "$T/fit/$m" --cluster h100x8:2 $o --job -o "$T/fit/p$i.json" > /dev/null 2>&1
  jq '.cluster.description + {fitted: {compute: 0.7, communication: 0.5, communication_inter_node: 0.4, memory: 1.2}}' "$T/fit/p$i.json" > "$T/fit/planted.json"
  "$PLANNER" cost "$T/fit/$m" --strategy "$T/fit/p$i.json" --cluster "$T/fit/planted.json" 2> /dev/null |
    jq -c --arg m "$m" --arg p "p$i.json" \
      '{model: $m, plan: $p, step_seconds, peak_memory_bytes: (.peak_memory_bytes - .memory_breakdown_bytes.reserved)}' \
      >> "$T/fit/runs.jsonl"
done
"$PLANNER" calibrate --from-runs "$T/fit/runs.jsonl" -o "$T/fit/fitted.json" > "$T/fit/out" 2> "$T/err"
check "calibrate --from-runs recovers planted factors (0.7, 0.5, 0.4 across nodes, 1.2) within 1 %" \
  '[ $? -eq 0 ] && jq -e ".fitted | (.compute - 0.7 | fabs) < 0.007 and (.communication - 0.5 | fabs) < 0.005 and (.communication_inter_node - 0.4 | fabs) < 0.004 and (.memory - 1.2 | fabs) < 0.012" "$T/fit/fitted.json" > /dev/null'
check "calibrate --from-runs prints each run and the leave-one-out error" \
  'grep -q "leave-one-out" "$T/fit/out" && [ "$(grep -c "^p[0-9].json " "$T/fit/out")" = 4 ]'
bad=""
for k in 1 2 3 4; do
  m=$(sed -n "${k}p" "$T/fit/runs.jsonl" | jq -r .model)
  want=$(sed -n "${k}p" "$T/fit/runs.jsonl" | jq .step_seconds)
  got=$("$PLANNER" cost "$T/fit/$m" --strategy "$T/fit/p$k.json" --cluster "$T/fit/fitted.json" 2> /dev/null | jq .step_seconds)
  awk -v a="$got" -v b="$want" 'BEGIN { exit !(a > 0.99 * b && a < 1.01 * b) }' || bad="$bad p$k($got vs $want)"
done
check "the fitted cluster prices every run at its measured step (1 %)${bad:+:$bad}" '[ -z "$bad" ]'
# runs on one node: no collective crosses nodes, so the factor across nodes stays 1 (left out)
: > "$T/fit/one.jsonl"
for spec in "a.json|--tp 1 --pp 1 --dp 8" "a.json|--tp 8 --pp 1 --dp 1" "b.json|--tp 2 --pp 1 --dp 4"; do
  IFS='|' read -r m o <<< "$spec"
  i=$((i + 1))
  # shellcheck disable=SC2086
  "$PLANNER" search "$T/fit/$m" --cluster h100x8 $o --job -o "$T/fit/p$i.json" > /dev/null 2>&1
  jq '.cluster.description + {fitted: {compute: 0.7, communication: 0.5}}' "$T/fit/p$i.json" > "$T/fit/planted.json"
  "$PLANNER" cost "$T/fit/$m" --strategy "$T/fit/p$i.json" --cluster "$T/fit/planted.json" 2> /dev/null |
    jq -c --arg m "$m" --arg p "p$i.json" '{model: $m, plan: $p, step_seconds}' >> "$T/fit/one.jsonl"
done
"$PLANNER" calibrate --from-runs "$T/fit/one.jsonl" -o "$T/fit/one-fitted.json" > /dev/null 2> "$T/err"
check "calibrate --from-runs on one node's runs: (0.7, 0.5) within 1 %, no factor across nodes written" \
  '[ $? -eq 0 ] && jq -e ".fitted | (.compute - 0.7 | fabs) < 0.007 and (.communication - 0.5 | fabs) < 0.005 and (has(\"communication_inter_node\") | not)" "$T/fit/one-fitted.json" > /dev/null'
# --- planner check --run-line: the same runs as Megatron-LM logs (their steps printed in ms, a
#     slow first report as warm-up) become RUNS lines that fit the same factors
: > "$T/fit/logruns.jsonl"
for k in 1 2 3 4; do
  m=$(sed -n "${k}p" "$T/fit/runs.jsonl" | jq -r .model)
  ms=$(sed -n "${k}p" "$T/fit/runs.jsonl" | jq '.step_seconds * 1000')
  awk -v ms="$ms" 'BEGIN { for (i = 1; i <= 4; i++)
    printf "[default0]: [2026-01-01 00:00:0%d] iteration %8d/     100 | consumed samples: %12d | elapsed time per iteration (ms): %.1f | lm loss: 1.0E+00 |\n", i, 10 * i, 640 * i, (i == 1 ? 3 : 1) * ms }' > "$T/fit/p$k.log"
  "$PLANNER" check "$T/fit/p$k.json" --log "$T/fit/p$k.log" --run-line --model "$T/fit/$m" >> "$T/fit/logruns.jsonl" 2> "$T/err"
done
check "check --run-line: one RUNS line a log, with the log's step" \
  '[ "$(wc -l < "$T/fit/logruns.jsonl")" = 4 ] && jq -se "map(.framework == \"Megatron-LM\" and .plan != null and .model != null) | all" "$T/fit/logruns.jsonl" > /dev/null'
"$PLANNER" calibrate --from-runs "$T/fit/logruns.jsonl" -o "$T/fit/fitted-logs.json" > /dev/null 2> "$T/err"
check "calibrate --from-runs on check --run-line's lines recovers the planted step factors (1 %)" \
  '[ $? -eq 0 ] && jq -e ".fitted | (.compute - 0.7 | fabs) < 0.007 and (.communication - 0.5 | fabs) < 0.005" "$T/fit/fitted-logs.json" > /dev/null'
for k in 1 2 3 4; do
  sed -n "${k}p" "$T/fit/runs.jsonl" | jq -c --arg k "$k" '{model, plan, log: "p\($k).log"}'
done > "$T/fit/logfiles.jsonl"
"$PLANNER" calibrate --from-runs "$T/fit/logfiles.jsonl" -o "$T/fit/fitted-logfiles.json" > /dev/null 2> "$T/err"
check "calibrate --from-runs reads a run's step from its \"log\" (relative to the runs file): the same factors" \
  '[ $? -eq 0 ] && jq -e ".fitted | (.compute - 0.7 | fabs) < 0.007 and (.communication - 0.5 | fabs) < 0.005" "$T/fit/fitted-logfiles.json" > /dev/null'
echo '{"model": "a.json", "plan": "p1.json", "log": "../../nothing-here.log"}' > "$T/fit/badlog.jsonl"
"$PLANNER" calibrate --from-runs "$T/fit/badlog.jsonl" > /dev/null 2> "$T/err"
check "calibrate --from-runs: a run's log that cannot be read exits 2 naming the runs line and the log" \
  '[ $? -eq 2 ] && grep -q "badlog.jsonl:1: .*nothing-here.log" "$T/err"'
echo '{"model": "a.json", "plan": "p1.json"}' > "$T/fit/bad.jsonl"
"$PLANNER" calibrate --from-runs "$T/fit/bad.jsonl" > /dev/null 2> "$T/err"
check "a run without its measured step: exit 2 naming the line and the field" \
  '[ $? -eq 2 ] && grep -q "bad.jsonl:1: step_seconds: expected the measured step" "$T/err"'
# a path longer than the reader keeps is refused by name, never read shortened (it was cut to
# 511 bytes, so a run could read another file than the one named)
jq -nc --arg p "$(printf 'x/%.0s' $(seq 2100))p1.json" '{model: "a.json", plan: $p, step_seconds: 1}' > "$T/fit/long.jsonl"
"$PLANNER" calibrate --from-runs "$T/fit/long.jsonl" > /dev/null 2> "$T/err"
check "a run's plan path longer than 4095 bytes: exit 2 naming the line and the field" \
  '[ $? -eq 2 ] && grep -q "long.jsonl:1: plan: expected a path shorter than 4096 bytes" "$T/err"'
jq '.fitted.compute = 10' "$T/fit/fitted.json" > "$T/fit/bad-cluster.json"
"$PLANNER" cost "$T/fit/a.json" --strategy "$T/fit/p1.json" --cluster "$T/fit/bad-cluster.json" > /dev/null 2> "$T/err"
check "a cluster's fitted factor out of its bounds: exit 2 naming it" \
  '[ $? -eq 2 ] && grep -q "fitted.compute: expected a finite number from 0.25 to 4" "$T/err"'

printf '%s' '{"format": "planner.model/1", "name": "x", "tensors": {"x": {"shape": [8, 16], "role": "input"},
 "w": {"shape": [16, 16], "role": "param"}}, "ops": [{"name": "mm", "type": "MatMul", "inputs": ["x", "w"], "outputs": ["y"]},
 {"name": "c", "type": "Clip", "inputs": ["y"], "outputs": ["z"], "attrs": {"min": 2, "max": 1}}], "outputs": ["z"]}' > "$T/clip.json"
"$PLANNER" search "$T/clip.json" --devices 2 > /dev/null 2> "$T/err"
check "Clip with min above max: exit 2 naming the op and both bounds" \
  '[ $? -eq 2 ] && grep -q "op .c.: attrs.min 2 is above attrs.max 1" "$T/err"'
printf '%s' '{"format": "planner.model/1", "name": "x", "tensors": {"emb": {"shape": [10, 16], "role": "param"},
 "idx": {"shape": [4], "dtype": "int64", "role": "const", "values": [0, 3, 10, 2]}},
 "ops": [{"name": "g", "type": "Gather", "inputs": ["emb", "idx"], "outputs": ["y"]}], "outputs": ["y"]}' > "$T/gather.json"
"$PLANNER" search "$T/gather.json" --devices 2 > /dev/null 2> "$T/err"
check "constant Gather indices outside the axis: exit 2 naming the index and the range" \
  '[ $? -eq 2 ] && grep -q "constant indices .idx.\[2\] = 10: outside axis 0 of .emb. (size 10): expected -10 to 9" "$T/err"'
sed 's/\[0, 3, 10, 2\]/[0, 3, 9, -10]/' "$T/gather.json" > "$T/gather-ok.json"
"$PLANNER" search "$T/gather-ok.json" --devices 2 > /dev/null 2>&1
check "constant Gather indices from -n to n-1 are accepted" '[ $? -eq 0 ]'
# op attributes the op does not have: a warning naming the file, the op and the key (with the
# nearest attribute the format has), the model still planned; none for the format's own keys
jq '.ops[0].attrs = {"epsilonn": 1e-3} | .ops[2].attrs = {"mode": "nearest", "alpha": 0.1}' \
  "$SRC/examples/tiny-mlp.json" > "$T/attr-typo.json"
"$PLANNER" search "$T/attr-typo.json" --devices 2 -o "$T/attr-typo.plan" > /dev/null 2> "$T/err"
check "an unknown op attribute: exit 0 with a warning naming file, op, key and the nearest name" \
  '[ $? -eq 0 ] && [ -s "$T/attr-typo.plan" ] &&
   grep -q "^planner: warning: .*attr-typo.json: op .fc0.: attrs.epsilonn: not an attribute of MatMul (did you mean .epsilon.?); ignored$" "$T/err" &&
   grep -q "^planner: warning: .*attr-typo.json: op .relu0.: attrs.mode: not an attribute of Relu; ignored$" "$T/err" &&
   [ "$(grep -c warning "$T/err")" = 2 ]'
"$PLANNER" strategies "$T/attr-typo.json" --op fc0 --devices 2 > /dev/null 2> "$T/err"
check "the warning on every command that reads the model (strategies)" \
  '[ $? -eq 0 ] && grep -q "attrs.epsilonn: not an attribute of MatMul" "$T/err"'
jq '.ops |= map(.attrs = ((.attrs // {}) + {"wibble": 1}))' "$SRC/examples/tiny-mlp.json" > "$T/attr-many.json"
for i in $(seq 30); do jq ".ops[0].attrs.x$i = 1" "$T/attr-many.json" > "$T/attr-many2.json" && mv "$T/attr-many2.json" "$T/attr-many.json"; done
"$PLANNER" search "$T/attr-many.json" --devices 2 > /dev/null 2> "$T/err"
check "at most 20 such warnings, then how many more" \
  '[ $? -eq 0 ] && [ "$(grep -c "not an attribute" "$T/err")" = 20 ] &&
   grep -q "attr-many.json: 15 more keys ignored" "$T/err"'
for m in "$SRC"/examples/*.json "$SRC"/tests/fixtures/models/*.json; do
  "$PLANNER" strategies "$m" --op none --devices 2 2>&1 > /dev/null | grep warning
done > "$T/err"
check "no warning for the examples and fixtures (their attributes are the format's)" '[ ! -s "$T/err" ]'
# keys the format does not have at the top, in a tensor or in an op: warned of as attributes
# are (file, the key's path, the nearest key the format has there), the model still planned
jq '.nmae = "x" | .tensors.x.rol = "input" | .ops[0].atrs = {"axis": 1}' \
  "$SRC/examples/tiny-mlp.json" > "$T/key-typo.json"
"$PLANNER" search "$T/key-typo.json" --devices 2 -o "$T/key-typo.plan" > /dev/null 2> "$T/err"
check "unknown model keys (top, tensor, op): exit 0 with a warning naming file, path and the nearest key" \
  '[ $? -eq 0 ] && [ -s "$T/key-typo.plan" ] &&
   grep -q "^planner: warning: .*key-typo.json: nmae: unknown key (did you mean .name.?); ignored$" "$T/err" &&
   grep -q "^planner: warning: .*key-typo.json: tensors.x.rol: unknown key (did you mean .role.?); ignored$" "$T/err" &&
   grep -q "^planner: warning: .*key-typo.json: op .fc0.: atrs: unknown key (did you mean .attrs.?); ignored$" "$T/err" &&
   [ "$(grep -c warning "$T/err")" = 3 ]'
# a 10^9 x 10^9 Resize that a ReduceSum reads and drops: no backward keeps it, yet it lives
printf '%s' '{"format": "planner.model/1", "name": "rz", "tensors": {"x": {"shape": [1, 1, 4, 4], "role": "input"},
 "w": {"shape": [1], "role": "param"}}, "ops": [{"name": "r", "type": "Resize", "inputs": ["x"], "outputs": ["z"],
 "attrs": {"mode": "nearest", "shape": [1000000000, 1000000000]}}, {"name": "s", "type": "ReduceSum", "inputs": ["z"],
 "outputs": ["q"], "attrs": {"keepdims": 0}}, {"name": "m", "type": "Mul", "inputs": ["q", "w"], "outputs": ["l"]}],
 "outputs": ["l"]}' > "$T/resize.json"
"$PLANNER" search "$T/resize.json" --devices 2 > /dev/null 2> "$T/err"
check "a forward output no backward keeps still counts while it lives (a 10^18-element Resize does not fit: exit 3)" \
  '[ $? -eq 3 ] && grep -q "no plan fits the memory limit" "$T/err"'

# --- every graph gets a plan by default: a DenseNet-121-shaped model that exact dp cannot solve
#     (its concatenations entangle every layer of a block) plans with the default search, exit 0,
#     not claimed proven, its gap to a lower bound stated, and no slower than data parallel
python3 "$SRC/tests/cli/densenet_like.py" 64 > "$T/densenet.json"
"$PLANNER" search "$T/densenet.json" --devices 8 --mode dp > /dev/null 2> "$T/err"
check "densenet-like: exact dp alone cannot solve it (too entangled)" 'grep -q "too entangled for exact dp" "$T/err"'
# (--fastest: the search's own plan, not the data-parallel one it prefers within 2 %)
"$PLANNER" search "$T/densenet.json" --devices 8 --fastest -o "$T/densenet.plan" > /dev/null 2> "$T/err"
check "densenet-like: the default search plans it (exit 0), unproven, its gap to a lower bound in search.why" \
  '[ $? -eq 0 ] && jq -e ".search.optimal == false and (.search.why | test(\"within [0-9.]+ % of [0-9.e-]+ s \\\\(a bound no plan beats\"))" "$T/densenet.plan" > /dev/null'
"$PLANNER" search "$T/densenet.json" --devices 8 --dp 8 --mode rec -o "$T/densenet-dp.plan" > /dev/null 2>&1
check "densenet-like: the default plan is no slower than data parallel (ResNet-class nets train data-parallel)" \
  'awk -v a="$(jq .cost.step_seconds "$T/densenet.plan")" -v b="$(jq .cost.step_seconds "$T/densenet-dp.plan")" "BEGIN { exit !(a <= b * (1 + 1e-9)) }"'
"$PLANNER" cost "$T/densenet.json" --strategy "$T/densenet.plan" > "$T/densenet.cost" 2> /dev/null
check "densenet-like: cost reproduces the default plan" '[ "$(jq .step_seconds "$T/densenet.cost")" = "$(jq .cost.step_seconds "$T/densenet.plan")" ]'

# --- FLOPs per op, against hand counts: a 3x3 Conv 2 N Cout H W Cin k^2 forward (its weight's
#     gradient the same again; the input's not, an input needs none), a MatMul 2 M N K forward and
#     twice that backward, a causal Attention 4 s^2 d h b / 2 forward (FlashAttention's count) and
#     2.5 times that backward
printf '%s' '{"format": "planner.model/1", "name": "f", "tensors": {"x": {"shape": [8, 16, 32, 32], "role": "input"},
 "w": {"shape": [64, 16, 3, 3], "role": "param"}, "w2": {"shape": [65536, 10], "role": "param"},
 "q": {"shape": [2, 4, 128, 32], "role": "input"}, "k": {"shape": [2, 4, 128, 32], "role": "input"},
 "v": {"shape": [2, 4, 128, 32], "role": "input"}, "s": {"shape": [32], "role": "param"}},
 "ops": [{"name": "conv", "type": "Conv", "inputs": ["x", "w"], "outputs": ["y"], "attrs": {"pads": [1, 1, 1, 1]}},
 {"name": "flat", "type": "Reshape", "inputs": ["y"], "outputs": ["z"], "attrs": {"shape": [8, 65536]}},
 {"name": "mm", "type": "MatMul", "inputs": ["z", "w2"], "outputs": ["o"]},
 {"name": "qs", "type": "Mul", "inputs": ["q", "s"], "outputs": ["q2"]},
 {"name": "attn", "type": "Attention", "inputs": ["q2", "k", "v"], "outputs": ["a"], "attrs": {"is_causal": 1}}],
 "outputs": ["o", "a"]}' > "$T/flops.json"
"$PLANNER" search "$T/flops.json" --devices 2 -o "$T/flops.plan" > "$T/flops.out" 2> "$T/err"
check "per-op FLOPs in the checkpoint equal hand counts (Conv, MatMul, causal Attention)" \
  '[ "$(jq -c "[.parallel_strategy_item | .conv, .mm, .attn | .flops_forward, .flops_backward]" "$T/flops.plan")" = \
     "[$((2 * 8 * 64 * 32 * 32 * 16 * 9)),$((2 * 8 * 64 * 32 * 32 * 16 * 9)),$((2 * 8 * 65536 * 10)),$((4 * 8 * 65536 * 10)),$((4 * 128 * 128 * 32 * 4 * 2 / 2)),$((10 * 128 * 128 * 32 * 4 * 2 / 2))]" ]'
check "explain's per-op table has each op's GFLOP forward + backward" \
  'grep -q "GFLOP f+b" "$T/flops.out" && grep -Eq "^conv .* 0\.302$" "$T/flops.out"'

# --- the appended loss takes classes where frameworks do: dimension 1 of a segmentation output
#     [N, C, H, W] (segment.onnx, made by make_segment.py), the last of a language model's [B, S, V];
#     --loss-axis chooses; the segmentation model trains sharded at the one-rank losses
"$PLANNER" import "$O/segment.onnx" --batch 2 -o "$T/seg.json" > /dev/null 2>&1
check "segmentation [N, C, H, W]: labels [N, H, W], the classes moved last by a Transpose before the loss" \
  '[ "$(jq -c "[.tensors.labels.shape, [.ops[] | select(.type == \"Transpose\") | .attrs.perm], [.ops[-1].inputs[0]]]" "$T/seg.json")" = "[[2,8,8],[[0,2,3,1]],[\"loss.logits\"]]" ]'
"$PLANNER" import "$O/segment.onnx" --batch 2 --loss-axis last -o "$T/seg-last.json" > /dev/null 2>&1
check "--loss-axis last keeps the old reading (labels [N, C, H])" '[ "$(jq -c .tensors.labels.shape "$T/seg-last.json")" = "[2,4,8]" ]'
"$PLANNER" import "$O/gpt.onnx" --batch 2 -o "$T/gpt-loss.json" > /dev/null 2>&1
check "a language model [B, S, V]: classes last (labels [B, S], no Transpose)" \
  '[ "$(jq -c "[.tensors.labels.shape, ([.ops[] | select(.name == \"loss.classes_last\")] | length)]" "$T/gpt-loss.json")" = "[[2,32],0]" ]'
"$PLANNER" import "$O/segment.onnx" --batch 2 --loss-axis 2 -o "$T/x.json" > /dev/null 2> "$T/err"
check "--loss-axis 2: exit 2 naming the choices" '[ $? -eq 2 ] && grep -q "expected 1, last or auto" "$T/err"'
"$PLANNER" search "$O/segment.onnx" --batch 4 --devices 1 -o "$T/seg1.plan" > /dev/null 2>&1
"$PLANNER" run "$O/segment.onnx" --batch 4 --strategy "$T/seg1.plan" --steps 3 --json > "$T/seg-r1" 2> /dev/null
"$PLANNER" search "$O/segment.onnx" --batch 4 --devices 4 -o "$T/seg4.plan" > /dev/null 2>&1
"$PLANNER" run "$O/segment.onnx" --batch 4 --strategy "$T/seg4.plan" --steps 3 --json > "$T/seg-r4" 2> /dev/null
check "segment.onnx on 4 CPU ranks: the one-rank losses" '[ "$(same3 "$T/seg-r1" "$T/seg-r4")" = true ]'

# --- utilisation: search, cost and explain state MFU, model TFLOP/s and tokens/s per device;
#     no plan claims an MFU above what the cluster's matrix kernels reach (the GEMM curve's
#     asymptote, which attention's kernels stay under too; with FP8 GEMMs the FP8 curve's,
#     fp8_max of the FP8 peak, over the 16-bit peak MFU is taken against)
bad=""
for spec in "gpt3-1.3b --layers 4 --batch 32|--cluster h100x8|" "gpt3-1.3b --layers 4|--cluster a100x8:2|--job" \
            "llama2-7b --layers 2 --attention fused|--cluster h100x8:2|--job" \
            "llama2-7b --layers 2 --attention fused|--cluster h100x8:2|--job --gemm-dtype fp8" \
            "moe-380m|--cluster h100x8|--job --ep 4" "bert-large --layers 4|--devices 8|"; do
  IFS='|' read -r zm cl extra <<< "$spec"
  # shellcheck disable=SC2086
  "$ZOO" $zm > "$T/u.json"
  # shellcheck disable=SC2086
  "$PLANNER" search "$T/u.json" $cl $extra -o "$T/u.plan" > /dev/null 2>&1 || { bad="$bad $zm(no plan)"; continue; }
  jq -e '.cluster.description.device as $d
         | .cost.mfu > 0
         and .cost.mfu <= (if $d.gemm_dtype == "fp8"
                           then $d.gemm_efficiency.fp8_max * $d.peak_flops.float8 / $d.peak_flops.bfloat16
                           else $d.gemm_efficiency.max end)
         and (.cost.model_tflops_per_device * 1e12 * .cost.step_seconds * .cluster.devices
              - .cost.model_flops_per_step | fabs) <= 1e-6 * .cost.model_flops_per_step' "$T/u.plan" > /dev/null ||
    bad="$bad $zm($(jq -c '[.cost.mfu, .cluster.description.device.gemm_efficiency.max]' "$T/u.plan"))"
  # shellcheck disable=SC2086
  "$PLANNER" cost "$T/u.json" --strategy "$T/u.plan" > "$T/u.cost" 2> /dev/null
  [ "$(jq .mfu "$T/u.cost")" = "$(jq .cost.mfu "$T/u.plan")" ] || bad="$bad $zm(cost's mfu differs)"
done
check "MFU in (0, the GEMM asymptote] for 6 models and clusters (one FP8), TFLOP/s x step x devices = model FLOPs, cost = search${bad:+:$bad}" '[ -z "$bad" ]'
"$PLANNER" explain "$T/u.plan" > "$T/u.explain"
check "explain prints MFU, model TFLOP/s and samples/s" 'grep -Eq "^utilisation: MFU [0-9.]+ %, [0-9.]+ model TFLOP/s per device" "$T/u.explain"'
"$ZOO" gpt3-1.3b --layers 2 --batch 32 > "$T/u.json"
"$PLANNER" search "$T/u.json" --devices 8 -o "$T/u.plan" > /dev/null 2>&1
check "a language model's tokens/s per device: its batch x sequence / step / devices" \
  '[ "$(jq ".cost.tokens_per_second_per_device * .cost.step_seconds * 8 | round" "$T/u.plan")" = $((32 * 2048)) ]'

# --- the loss as the runtime computes it: PyTorch's cross_entropy on 16-bit logits runs in fp32
#     (a cast, fp32 probabilities kept, an fp32 gradient cast back), a fused kernel on the logits'
#     own dtype; the choice is the cluster's (--loss-kernel, device.loss_kernel) and travels with
#     the checkpoint, so cost reproduces each
"$ZOO" gpt3-1.3b --layers 2 --batch 16 --vocab 50304 > "$T/lk.json"
for k in unfused fused; do
  "$PLANNER" search "$T/lk.json" --cluster h100x8 --dp 8 --loss-kernel "$k" -o "$T/lk-$k.plan" > /dev/null 2>&1
  "$PLANNER" cost "$T/lk.json" --strategy "$T/lk-$k.plan" > "$T/lk-$k.cost" 2> /dev/null
done
check "--loss-kernel: unfused costs more time and memory than fused on bf16 logits" \
  'num_lt "$(jq .cost.step_seconds "$T/lk-fused.plan")" "$(jq .cost.step_seconds "$T/lk-unfused.plan")" &&
   num_lt "$(jq .cost.peak_memory_bytes "$T/lk-fused.plan")" "$(jq .cost.peak_memory_bytes "$T/lk-unfused.plan")"'
check "--loss-kernel: the checkpoint's cluster names the kernel and cost reproduces each step" \
  '[ "$(jq -r .cluster.description.device.loss_kernel "$T/lk-fused.plan")" = fused ] &&
   [ "$(jq .step_seconds "$T/lk-fused.cost")" = "$(jq .cost.step_seconds "$T/lk-fused.plan")" ] &&
   [ "$(jq .step_seconds "$T/lk-unfused.cost")" = "$(jq .cost.step_seconds "$T/lk-unfused.plan")" ]'
"$PLANNER" search "$T/lk.json" --loss-kernel fast > /dev/null 2> "$T/lk.err"
check "--loss-kernel fast: exit 2 naming the choices" '[ $? -eq 2 ] && grep -q "expected fused" "$T/lk.err"'
# --- training metrics (--loss-metrics N, device.loss_metrics): N more cross_entropy forwards on
#     the logits a micro-batch, priced with the loss's forward; the same peak; the count travels
#     with the checkpoint (written only when not 0) and a cluster file states it as a number
"$PLANNER" search "$T/lk.json" --cluster h100x8 --dp 8 --loss-kernel fused --loss-metrics 2 -o "$T/lm.plan" > /dev/null 2>&1
"$PLANNER" cost "$T/lk.json" --strategy "$T/lm.plan" > "$T/lm.cost" 2> /dev/null
check "--loss-metrics 2: a slower step at the same peak than none, cost reproduces it" \
  'num_lt "$(jq .cost.step_seconds "$T/lk-fused.plan")" "$(jq .cost.step_seconds "$T/lm.plan")" &&
   [ "$(jq .cost.peak_memory_bytes "$T/lm.plan")" = "$(jq .cost.peak_memory_bytes "$T/lk-fused.plan")" ] &&
   [ "$(jq .step_seconds "$T/lm.cost")" = "$(jq .cost.step_seconds "$T/lm.plan")" ]'
jq .cluster.description "$T/lm.plan" > "$T/lm-cluster.json"
"$PLANNER" cost "$T/lk.json" --strategy "$T/lk-fused.plan" --cluster "$T/lm-cluster.json" > "$T/lm2.cost" 2> /dev/null
check "--loss-metrics: the checkpoint's cluster says 2 (none says nothing), and as a cluster file prices the same step" \
  '[ "$(jq .cluster.description.device.loss_metrics "$T/lm.plan")" = 2 ] &&
   [ "$(jq .cluster.description.device.loss_metrics "$T/lk-fused.plan")" = null ] &&
   [ "$(jq .step_seconds "$T/lm2.cost")" = "$(jq .cost.step_seconds "$T/lm.plan")" ]'
rc_all=
for bad in -1 17 2x; do
  "$PLANNER" search "$T/lk.json" --loss-metrics=$bad > /dev/null 2> "$T/lk.err"
  rc_all="$rc_all $?"; grep -q "loss-metrics: '$bad': expected a count of training-metric cross-entropies, 0 to 16" "$T/lk.err" || rc_all="$rc_all msg"
done
jq '.device.loss_metrics = 1.5' "$T/lm-cluster.json" > "$T/lm-bad.json"
"$PLANNER" cost "$T/lk.json" --strategy "$T/lk-fused.plan" --cluster "$T/lm-bad.json" > /dev/null 2> "$T/lk.err"
rc_bad=$?
check "--loss-metrics -1, 17, 2x and a cluster's 1.5: exit 2 naming the field and the range" \
  '[ "$rc_all" = " 2 2 2" ] && [ $rc_bad -eq 2 ] && grep -q "device.loss_metrics: expected a count of training-metric cross-entropies, 0 to 16" "$T/lk.err"'

# --- where the loss runs under tensor parallelism (--loss-parallel vocab|gathered) and the
#     gradients' dtype (--grad-dtype fp32|param|param+fp32): the cluster's, recorded with the checkpoint
"$ZOO" llama2-7b --layers 2 --batch 16 --seq 1024 --vocab 128000 > "$T/lp.json"
for v in vocab gathered; do
  "$PLANNER" search "$T/lp.json" --cluster h100x8 --dp 2 --tp 4 --loss-parallel "$v" -o "$T/lp-$v.plan" > /dev/null 2>&1
  "$PLANNER" cost "$T/lp.json" --strategy "$T/lp-$v.plan" > "$T/lp-$v.cost" 2> /dev/null
done
check "--loss-parallel gathered: the loss is whole on every tensor-parallel rank (its class dimension uncut)" \
  '[ "$(jq -c ".parallel_strategy_item.loss.parallel_strategy[0][-1]" "$T/lp-gathered.plan")" = 1 ] &&
   [ "$(jq -c ".parallel_strategy_item.loss.parallel_strategy[0][-1]" "$T/lp-vocab.plan")" = 4 ]'
check "--loss-parallel gathered: more memory and time than vocab-parallel, and cost reproduces both" \
  'num_lt "$(jq .cost.peak_memory_bytes "$T/lp-vocab.plan")" "$(jq .cost.peak_memory_bytes "$T/lp-gathered.plan")" &&
   num_lt "$(jq .cost.step_seconds "$T/lp-vocab.plan")" "$(jq .cost.step_seconds "$T/lp-gathered.plan")" &&
   [ "$(jq -r .cluster.description.device.loss_parallel "$T/lp-gathered.plan")" = gathered ] &&
   [ "$(jq .step_seconds "$T/lp-gathered.cost")" = "$(jq .cost.step_seconds "$T/lp-gathered.plan")" ] &&
   [ "$(jq .step_seconds "$T/lp-vocab.cost")" = "$(jq .cost.step_seconds "$T/lp-vocab.plan")" ]'
"$PLANNER" search "$T/lp.json" --cluster h100x8 --dp 2 --tp 4 --grad-dtype param -o "$T/gd.plan" > /dev/null 2>&1
"$PLANNER" cost "$T/lp.json" --strategy "$T/gd.plan" > "$T/gd.cost" 2> /dev/null
check "--grad-dtype param: bf16 gradients take half the fp32 ones, and cost reproduces the plan" \
  '[ "$(jq -r .cluster.description.device.grad_dtype "$T/gd.plan")" = param ] &&
   [ "$(jq -r .cluster.description.device.grad_dtype "$T/lp-vocab.plan")" = fp32 ] &&
   [ "$(jq "[.pipeline.stage_memory_bytes[].gradients] | add" "$T/gd.plan")" = "$(jq "[.pipeline.stage_memory_bytes[].gradients] | add / 2" "$T/lp-vocab.plan")" ] &&
   [ "$(jq .step_seconds "$T/gd.cost")" = "$(jq .cost.step_seconds "$T/gd.plan")" ]'
# --grad-dtype param+fp32 (DeepSpeed's BF16_Optimizer): the bf16 gradient kept beside the whole fp32
# one (6 bytes a parameter against fp32's 4), and each micro-batch's backward adds it into the fp32
# one, so the same layout with 4 micro-batches takes longer; recorded, and cost reproduces it
for g in fp32 param+fp32; do
  "$PLANNER" search "$T/lp.json" --cluster h100x8 --dp 2 --tp 4 --micro-batch-size 2 --grad-dtype "$g" -o "$T/gdm-$g.plan" > /dev/null 2>&1
done
"$PLANNER" cost "$T/lp.json" --strategy "$T/gdm-param+fp32.plan" > "$T/gdm.cost" 2> /dev/null
check "--grad-dtype param+fp32: 1.5 times fp32's gradient bytes, a longer step, recorded, and cost reproduces it" \
  '[ "$(jq -r .cluster.description.device.grad_dtype "$T/gdm-param+fp32.plan")" = param+fp32 ] &&
   [ "$(jq "[.pipeline.stage_memory_bytes[].gradients] | add" "$T/gdm-param+fp32.plan")" = "$(jq "[.pipeline.stage_memory_bytes[].gradients] | add * 1.5" "$T/gdm-fp32.plan")" ] &&
   num_lt "$(jq .cost.step_seconds "$T/gdm-fp32.plan")" "$(jq .cost.step_seconds "$T/gdm-param+fp32.plan")" &&
   [ "$(jq .step_seconds "$T/gdm.cost")" = "$(jq .cost.step_seconds "$T/gdm-param+fp32.plan")" ]'
"$PLANNER" search "$T/lp.json" --loss-parallel tensor > /dev/null 2> "$T/lp.err"
check "--loss-parallel tensor: exit 2 naming the choices" '[ $? -eq 2 ] && grep -q "expected vocab" "$T/lp.err"'
"$PLANNER" search "$T/lp.json" --grad-dtype bf16 > /dev/null 2> "$T/gd.err"
check "--grad-dtype bf16: exit 2 naming the choices" '[ $? -eq 2 ] && grep -q "expected fp32" "$T/gd.err"'
# --grad-reduce fp32-all-reduce (Aleph Alpha's scaling: bf16 gradients cast to fp32 and all-reduced
# whole, under ZeRO 1 too): the step's reduction carries twice the bytes of bf16 gradients and the
# buckets' copies, so the step is longer; recorded, and cost reproduces it
for g in as-grad fp32-all-reduce; do
  "$PLANNER" search "$T/lp.json" --cluster h100x8:2 --dp 16 --zero 1 --grad-dtype param --grad-reduce "$g" -o "$T/gr-$g.plan" > /dev/null 2>&1
done
"$PLANNER" cost "$T/lp.json" --strategy "$T/gr-fp32-all-reduce.plan" > "$T/gr.cost" 2> /dev/null
check "--grad-reduce fp32-all-reduce: a longer step than reducing bf16 gradients, recorded, and cost reproduces it" \
  'num_lt "$(jq .cost.step_seconds "$T/gr-as-grad.plan")" "$(jq .cost.step_seconds "$T/gr-fp32-all-reduce.plan")" &&
   [ "$(jq -r .cluster.description.device.grad_reduce "$T/gr-fp32-all-reduce.plan")" = fp32-all-reduce ] &&
   [ "$(jq -r .cluster.description.device.grad_reduce "$T/gr-as-grad.plan")" = as-grad ] &&
   [ "$(jq .step_seconds "$T/gr.cost")" = "$(jq .cost.step_seconds "$T/gr-fp32-all-reduce.plan")" ]'
"$PLANNER" search "$T/lp.json" --grad-reduce fp32 > /dev/null 2> "$T/gr.err"
check "--grad-reduce fp32: exit 2 naming the choices" '[ $? -eq 2 ] && grep -q "expected as-grad" "$T/gr.err"'
for k in fused unfused; do  # sequence parallelism off: norms stay whole on each tensor-parallel rank
  "$PLANNER" search "$T/lp.json" --cluster h100x8 --dp 2 --tp 4 --sequence-parallel off --norm-kernel "$k" -o "$T/nk-$k.plan" > /dev/null 2>&1
done
"$PLANNER" cost "$T/lp.json" --strategy "$T/nk-unfused.plan" > "$T/nk.cost" 2> /dev/null
cp "$T/nk-unfused.plan" "$T/nk.plan"
check "--norm-kernel unfused: slower and larger than fused norms, recorded, and cost reproduces it" \
  'num_lt "$(jq .cost.step_seconds "$T/nk-fused.plan")" "$(jq .cost.step_seconds "$T/nk.plan")" &&
   num_lt "$(jq .cost.peak_memory_bytes "$T/nk-fused.plan")" "$(jq .cost.peak_memory_bytes "$T/nk.plan")" &&
   [ "$(jq -r .cluster.description.device.norm_kernel "$T/nk.plan")" = unfused ] &&
   [ "$(jq .step_seconds "$T/nk.cost")" = "$(jq .cost.step_seconds "$T/nk.plan")" ]'
"$PLANNER" search "$T/lp.json" --norm-kernel apex > /dev/null 2> "$T/nk.err"
check "--norm-kernel apex: exit 2 naming the choices" '[ $? -eq 2 ] && grep -q "expected fused" "$T/nk.err"'
# --mask-kernel unfused (eager PyTorch's masked_fill before the softmax, Aleph Alpha's torch
# kernel: planner-zoo --softmax-mask masked-fill): the fill is a kernel of its own each way, so
# the step is slower than with the fill inside the softmax kernel, by its bytes at the device's
# bandwidth; a model without a mask prices the same either way
"$ZOO" llama2-7b --layers 2 --seq 1024 --batch 16 --softmax-mask masked-fill > "$T/mk.json"
"$ZOO" llama2-7b --layers 2 --seq 1024 --batch 16 > "$T/mk0.json"
for k in fused unfused; do
  for m in mk mk0; do
    "$PLANNER" search "$T/$m.json" --cluster h100x8 --dp 8 --recompute none --mask-kernel "$k" -o "$T/$m-$k.plan" > /dev/null 2>&1
  done
done
"$PLANNER" cost "$T/mk.json" --strategy "$T/mk-unfused.plan" > "$T/mk.cost" 2> /dev/null
check "--mask-kernel unfused: the masked fill its own kernel, slower than in the softmax, recorded, and cost reproduces it" \
  '[ "$(jq -c "[.ops[] | select(.type == \"Where\") | .inputs[0]] | unique" "$T/mk.json")" = "[\"attn_mask\"]" ] &&
   num_lt "$(jq .cost.step_seconds "$T/mk-fused.plan")" "$(jq .cost.step_seconds "$T/mk-unfused.plan")" &&
   [ "$(jq .cost.step_seconds "$T/mk0-fused.plan")" = "$(jq .cost.step_seconds "$T/mk0-unfused.plan")" ] &&
   [ "$(jq -r .cluster.description.device.mask_kernel "$T/mk-unfused.plan")" = unfused ] &&
   [ "$(jq .step_seconds "$T/mk.cost")" = "$(jq .cost.step_seconds "$T/mk-unfused.plan")" ]'
"$PLANNER" search "$T/lp.json" --mask-kernel eager > /dev/null 2> "$T/mk.err"
check "--mask-kernel eager: exit 2 naming the choices" '[ $? -eq 2 ] && grep -q "expected fused" "$T/mk.err"'
"$ZOO" llama2-7b --softmax-mask causal > /dev/null 2> "$T/mk.err"
check "planner-zoo --softmax-mask causal: exit 2 naming the choices" '[ $? -eq 2 ] && grep -q "expected implicit or masked-fill" "$T/mk.err"'
# --stage-output buffered (Aleph Alpha's pipeline buffers keep the model's output of the last two
# micro-batches): the gathered loss reads the whole logits, 2 x 1024 x 128000 bf16 a micro-batch of
# 2 sequences, so the same plan takes two of them more, 2 x 524288000 bytes; recorded, and cost
# reproduces the buffered plan
"$PLANNER" search "$T/lp.json" --cluster h100x8 --dp 2 --tp 4 --micro-batch-size 2 --loss-parallel gathered -o "$T/so-f.plan" > /dev/null 2>&1
"$PLANNER" cost "$T/lp.json" --strategy "$T/so-f.plan" --stage-output buffered > "$T/so-fb.cost" 2> /dev/null
"$PLANNER" search "$T/lp.json" --cluster h100x8 --dp 2 --tp 4 --micro-batch-size 2 --loss-parallel gathered --stage-output buffered -o "$T/so-b.plan" > /dev/null 2>&1
"$PLANNER" cost "$T/lp.json" --strategy "$T/so-b.plan" > "$T/so-b.cost" 2> /dev/null
check "--stage-output buffered: two micro-batches' whole logits more (1048576000 bytes), recorded, cost reproduces it" \
  '[ "$(jq ".peak_memory_bytes - $(jq .cost.peak_memory_bytes "$T/so-f.plan")" "$T/so-fb.cost")" = 1048576000 ] &&
   [ "$(jq -r .cluster.description.device.stage_output "$T/so-f.plan")" = freed ] &&
   [ "$(jq -r .cluster.description.device.stage_output "$T/so-b.plan")" = buffered ] &&
   [ "$(jq .peak_memory_bytes "$T/so-b.cost")" = "$(jq .cost.peak_memory_bytes "$T/so-b.plan")" ] &&
   [ "$(jq .step_seconds "$T/so-b.cost")" = "$(jq .cost.step_seconds "$T/so-b.plan")" ]'
"$PLANNER" search "$T/lp.json" --stage-output kept > /dev/null 2> "$T/so.err"
check "--stage-output kept: exit 2 naming the choices" '[ $? -eq 2 ] && grep -q "expected freed" "$T/so.err"'

# --- FP8 GEMMs (--gemm-dtype fp8): the linear layers' GEMMs on the FP8 curve with Transformer
#     Engine's casts and FP8 copies, the output layer in bf16; the cluster's, recorded with the
#     checkpoint, so cost and explain reprice it; read from and written to Megatron-LM and NeMo
#     configurations; a GPU without FP8 tensor cores refuses it
for g in param fp8; do
  "$PLANNER" search "$T/lp.json" --cluster h100x8 --dp 2 --tp 4 --sequence-parallel on --gemm-dtype "$g" -o "$T/f8-$g.plan" > /dev/null 2>&1
done
"$PLANNER" cost "$T/lp.json" --strategy "$T/f8-fp8.plan" > "$T/f8.cost" 2> /dev/null
check "--gemm-dtype fp8: recorded, faster than bf16 GEMMs, FP8 weight copies, and cost reproduces the plan" \
  '[ "$(jq -r .cluster.description.device.gemm_dtype "$T/f8-fp8.plan")" = fp8 ] &&
   [ "$(jq -r .cluster.description.device.gemm_dtype "$T/f8-param.plan")" = param ] &&
   num_lt "$(jq .cost.step_seconds "$T/f8-fp8.plan")" "$(jq .cost.step_seconds "$T/f8-param.plan")" &&
   num_lt "$(jq .cost.memory_breakdown_bytes.weights "$T/f8-param.plan")" "$(jq .cost.memory_breakdown_bytes.weights "$T/f8-fp8.plan")" &&
   [ "$(jq .step_seconds "$T/f8.cost")" = "$(jq .cost.step_seconds "$T/f8-fp8.plan")" ]'
"$PLANNER" explain "$T/f8-fp8.plan" > "$T/f8.explain" 2>&1
check "--gemm-dtype fp8: explain reprices the checkpoint at its step" \
  '[ $? -eq 0 ] && grep -q "$(jq -r ".cost.step_seconds * 1e6 | round / 1e6" "$T/f8-fp8.plan")" "$T/f8.explain"'
"$PLANNER" export "$T/f8-fp8.plan" --to megatron > "$T/f8.args" 2> /dev/null
"$PLANNER" export "$T/f8-fp8.plan" --to nemo > "$T/f8.yaml" 2> /dev/null
"$PLANNER" cost "$T/lp.json" --cluster h100x8 --from megatron "$T/f8.args" > "$T/f8m.cost" 2> "$T/f8m.err"
"$PLANNER" cost "$T/lp.json" --cluster h100x8 --from nemo "$T/f8.yaml" > "$T/f8n.cost" 2> "$T/f8n.err"
check "--gemm-dtype fp8: export writes --fp8-format hybrid and fp8: hybrid, cost --from reads them back to the plan's step" \
  'grep -q -- "--fp8-format hybrid" "$T/f8.args" && grep -q "fp8: hybrid" "$T/f8.yaml" &&
   grep -q -- "--gemm-dtype fp8" "$T/f8m.err" && grep -q -- "--gemm-dtype fp8" "$T/f8n.err" &&
   [ "$(jq .step_seconds "$T/f8m.cost")" = "$(jq .cost.step_seconds "$T/f8-fp8.plan")" ] &&
   [ "$(jq .step_seconds "$T/f8n.cost")" = "$(jq .cost.step_seconds "$T/f8-fp8.plan")" ]'
"$PLANNER" export "$T/f8-fp8.plan" --to torchtitan > /dev/null 2> "$T/f8t.err"
check "--gemm-dtype fp8: export to a framework without Transformer Engine's switch refuses (exit 2)" \
  '[ $? -eq 2 ] && grep -q "FP8 GEMMs" "$T/f8t.err"'
"$PLANNER" search "$T/lp.json" --cluster a100x8 --gemm-dtype fp8 > /dev/null 2> "$T/f8a.err"
check "--gemm-dtype fp8 on A100: exit 2 naming the GPU" \
  '[ $? -eq 2 ] && grep -q "A100-SXM4-40GB has no FP8 tensor cores" "$T/f8a.err"'
"$PLANNER" cost "$T/lp.json" --from megatron "--tensor-model-parallel-size 4 --fp8-format e5m2" > /dev/null 2> "$T/f8e.err"
check "cost --from megatron --fp8-format e5m2: exit 2 naming the formats" \
  '[ $? -eq 2 ] && grep -q "expected e4m3 or hybrid" "$T/f8e.err"'
"$PLANNER" search "$T/lp.json" --gemm-dtype fp16 > /dev/null 2> "$T/f8d.err"
check "--gemm-dtype fp16: exit 2 naming the choices" \
  '[ $? -eq 2 ] && grep -q "expected param" "$T/f8d.err" && grep -q "fp8-rowwise" "$T/f8d.err"'
# torchao's recipes (torchtitan's float8 converter): recorded by name, exported as the converter
# and its recipe_name, read back by cost --from torchtitan to the plan's step; rowwise (casts
# along both axes, gathered in 16 bits under tensor parallelism) above tensorwise; Megatron-LM
# (Transformer Engine) refuses them
for g in fp8-tensorwise fp8-rowwise; do
  "$PLANNER" search "$T/lp.json" --cluster h100x8 --framework torchtitan --tp 4 --gemm-dtype "$g" -o "$T/f8-$g.plan" > /dev/null 2>&1
  "$PLANNER" export "$T/f8-$g.plan" --to torchtitan -o "$T/f8-$g.toml" > /dev/null 2>&1
  "$PLANNER" cost "$T/lp.json" --cluster h100x8 --from torchtitan "$T/f8-$g.toml" > "$T/f8-$g.cost" 2> "$T/f8-$g.err"
done
check "--gemm-dtype fp8-tensorwise|fp8-rowwise: export --to torchtitan writes the float8 converter and its recipe, cost --from torchtitan reads them back to the plan's step" \
  '[ "$(jq -r .cluster.description.device.gemm_dtype "$T/f8-fp8-rowwise.plan")" = fp8-rowwise ] &&
   grep -q "quantize.linear.float8" "$T/f8-fp8-rowwise.toml" &&
   grep -q "recipe_name = \"rowwise\"" "$T/f8-fp8-rowwise.toml" &&
   grep -q "recipe_name = \"tensorwise\"" "$T/f8-fp8-tensorwise.toml" &&
   grep -q -- "--gemm-dtype fp8-rowwise" "$T/f8-fp8-rowwise.err" &&
   grep -q -- "--gemm-dtype fp8-tensorwise" "$T/f8-fp8-tensorwise.err" &&
   [ "$(jq .step_seconds "$T/f8-fp8-rowwise.cost")" = "$(jq .cost.step_seconds "$T/f8-fp8-rowwise.plan")" ] &&
   [ "$(jq .step_seconds "$T/f8-fp8-tensorwise.cost")" = "$(jq .cost.step_seconds "$T/f8-fp8-tensorwise.plan")" ] &&
   num_lt "$(jq .cost.step_seconds "$T/f8-fp8-tensorwise.plan")" "$(jq .cost.step_seconds "$T/f8-fp8-rowwise.plan")"'
"$PLANNER" export "$T/f8-fp8-rowwise.plan" --to megatron > /dev/null 2> "$T/f8r.err"
check "--gemm-dtype fp8-rowwise: export --to megatron refuses torchao's recipe (exit 2)" \
  '[ $? -eq 2 ] && grep -q "torchao.s rowwise recipe" "$T/f8r.err"'
printf '[parallelism]\ntensor_parallel_degree = 4\n[activation_checkpoint]\nmode = "none"\n[model]\nconverters = ["quantize.linear.float8"]\n[quantize.linear.float8]\nrecipe_name = "rowwise_with_gw_hp"\n' > "$T/f8gw.toml"
"$PLANNER" cost "$T/lp.json" --cluster h100x8 --from torchtitan "$T/f8gw.toml" > /dev/null 2> "$T/f8gw.err"
check "cost --from torchtitan with recipe_name rowwise_with_gw_hp: exit 2 naming the recipes priced" \
  '[ $? -eq 2 ] && grep -q "f8gw.toml:8: quantize.linear.float8.recipe_name rowwise_with_gw_hp" "$T/f8gw.err"'
"$ZOO" mlp --batch 8192 --hidden 2048 --layers 3 --dtype bfloat16 > "$T/f8mlp.json"
"$PLANNER" bench "$T/f8mlp.json" --devices 2 --modes dp,ilp,brute --gemm-dtype fp8 --csv > "$T/f8b.csv" 2>&1
"$PLANNER" bench "$T/f8mlp.json" --devices 2 --modes dp --csv > "$T/f8b0.csv" 2>&1
check "--gemm-dtype fp8: dp = ilp = brute force, all proven, and the FP8 step differs from the bf16 one" \
  '[ "$(awk -F, "NR > 1 {print \$3}" "$T/f8b.csv" | sort -u | wc -l)" = 1 ] &&
   [ "$(awk -F, "NR > 1 && \$6 == \"true\"" "$T/f8b.csv" | wc -l)" = 3 ] &&
   [ "$(awk -F, "NR == 2 {print \$3}" "$T/f8b.csv")" != "$(awk -F, "NR == 2 {print \$3}" "$T/f8b0.csv")" ]'
for g in fp8-tensorwise fp8-rowwise; do
  "$PLANNER" bench "$T/f8mlp.json" --devices 2 --modes dp,ilp,brute --gemm-dtype "$g" --csv > "$T/f8b-$g.csv" 2>&1
done
check "--gemm-dtype fp8-tensorwise|fp8-rowwise: dp = ilp = brute force, all proven, each its own step" \
  'f8ok=1
   for g in fp8-tensorwise fp8-rowwise; do
     [ "$(awk -F, "NR > 1 {print \$3}" "$T/f8b-$g.csv" | sort -u | wc -l)" = 1 ] &&
     [ "$(awk -F, "NR > 1 && \$6 == \"true\"" "$T/f8b-$g.csv" | wc -l)" = 3 ] || f8ok=0
   done
   [ "$f8ok" = 1 ] && [ "$(awk -F, "NR == 2 {print \$3}" "$T/f8b-fp8-rowwise.csv")" != "$(awk -F, "NR == 2 {print \$3}" "$T/f8b-fp8-tensorwise.csv")" ] &&
   [ "$(awk -F, "NR == 2 {print \$3}" "$T/f8b-fp8-rowwise.csv")" != "$(awk -F, "NR == 2 {print \$3}" "$T/f8b.csv")" ]'

# --- --batch-norm local: DDP's BatchNorm, each rank normalizing its own piece of the batch, so data
#     parallel 2 computes what one device does with 2 micro-batches (each normalized alone), step
#     after step; sync (the default) computes the whole batch's statistics as one device does and
#     differs; local prices no statistics collective and is recorded in the checkpoint
BN="$SRC/tests/fixtures/models/bn-cnn.json"
"$PLANNER" search "$BN" --devices 2 --dp 2 --batch-norm local -o "$T/bnl.plan" > /dev/null 2>&1
"$PLANNER" search "$BN" --devices 2 --dp 2 -o "$T/bns.plan" > /dev/null 2>&1
"$PLANNER" search "$BN" --devices 1 --micro-batches 2 --job -o "$T/bn1.plan" > /dev/null 2>&1
for k in l s 1; do
  "$PLANNER" run "$BN" --strategy "$T/bn$k.plan" --steps 4 --json 2> /dev/null | jq -s -c '[.[] | .loss | select(. != null)]' > "$T/bn$k.loss"
done
check "--batch-norm local: dp 2 trains as one device with 2 micro-batches (4 losses within 1e-6); sync does not" \
  'jq -e -n --slurpfile a "$T/bnl.loss" --slurpfile b "$T/bn1.loss" --slurpfile c "$T/bns.loss" \
     "(\$a[0] | length) == 4 and ([range(4)] | all(. as \$i | ((\$a[0][\$i] - \$b[0][\$i]) | fabs) <= 1e-6 * (\$b[0][\$i] | fabs))) and
      ((\$c[0][0] - \$b[0][0]) | fabs) > 1e-3" > /dev/null'
check "... local prices no statistics all-reduce (sync 3 latency-bound ones), and the checkpoint says batch_norm local" \
  'jq -e "[.parallel_strategy_item[] | select(.type == \"BatchNormalization\") | .communication_seconds] | max < 1e-6" "$T/bnl.plan" > /dev/null &&
   jq -e "[.parallel_strategy_item[] | select(.type == \"BatchNormalization\") | .communication_seconds] | min > 1e-5" "$T/bns.plan" > /dev/null &&
   [ "$(jq -r .cluster.description.device.batch_norm "$T/bnl.plan")" = local ] &&
   [ "$(jq -r .cluster.description.device.batch_norm "$T/bns.plan")" = sync ]'
# a ResNet at batch 64 on one node, statistics local (as DDP trains it): the whole-job search plans
# it data-parallel (every convolution's batch cut 8 ways), as everyone trains such nets
"$PLANNER" search "$SRC/tests/fixtures/onnx/resnet18_train.onnx" --batch 64 --cluster h100x8 --job \
  --batch-norm local -o "$T/r18.plan" > /dev/null 2>&1
check "ResNet-18, batch 64, 8 H100s, --batch-norm local --job: data parallel, every conv's batch cut 8 ways" \
  'jq -e "[.parallel_strategy_item[] | select(.type == \"Conv\") | .parallel_strategy[0][0] == 8 and
          (.parallel_strategy[0][1:] | all(. == 1))] | (length == 20) and all" "$T/r18.plan" > /dev/null'
"$PLANNER" search "$BN" --devices 2 --batch-norm ddp > /dev/null 2> "$T/bn.err"
check "--batch-norm ddp: exit 2 naming the choices" '[ $? -eq 2 ] && grep -q "expected sync" "$T/bn.err"'

# --- the default search is bounded: exact dp gets PL_DEFAULT_DP_SECONDS (60 s; the variable sets
#     another for tests), then it plans with auto and says so; --mode dp or --time-limit are the user's
PL_DEFAULT_DP_SECONDS=0.000001 "$PLANNER" search "$SRC/examples/gpt-small.json" --devices 8 \
  -o "$T/bound.plan" > /dev/null 2> "$T/bound.err"
check "default search past its dp bound: exit 0, a note, the plan by auto" \
  '[ $? -eq 0 ] && grep -q "did not end within the default search" "$T/bound.err" &&
   [ "$(jq -r .search.mode "$T/bound.plan")" = auto ]'
PL_DEFAULT_DP_SECONDS=0.000001 "$PLANNER" search "$SRC/examples/gpt-small.json" --devices 8 --mode dp \
  -o "$T/bound-dp.plan" > /dev/null 2> "$T/bound.err"
check "--mode dp is not bounded by the default search's limit" \
  '[ $? -eq 0 ] && [ "$(jq -r .search.mode "$T/bound-dp.plan")" = dp ] && ! grep -q "default search" "$T/bound.err"'
# --- a time limit that has run out before any search (1e-9 s: past at every look at the clock, so
#     the outcome does not depend on the machine's speed) still gives a plan: the default search and
#     auto plan with auto's fall-back, whose local search's start is a plan with no time left; the
#     plan says the limit stopped rec, gives its gap to a bound, and planner cost reproduces it
for how in default auto; do
  [ $how = auto ] && m=(--mode auto) || m=()
  "$PLANNER" search "$SRC/examples/gpt-small.json" --devices 8 "${m[@]}" --time-limit 1e-9 \
    -o "$T/tiny.plan" > /dev/null 2> "$T/tiny.err"
  check "$how search, --time-limit 1e-9: exit 0, a plan by auto marked as stopped by the limit, with its gap" \
    '[ $? -eq 0 ] && [ "$(jq -r .search.mode "$T/tiny.plan")" = auto ] &&
     [ "$(jq .search.optimal "$T/tiny.plan")" = false ] &&
     jq -r .search.why "$T/tiny.plan" | grep -q "the time limit stopped rec before its plan), within [0-9.]* % of"'
  b=$("$PLANNER" cost "$SRC/examples/gpt-small.json" --devices 8 --strategy "$T/tiny.plan" | jq .step_seconds)
  check "$how search, --time-limit 1e-9: cost reproduces the plan" '[ "$(jq .cost.step_seconds "$T/tiny.plan")" = "$b" ]'
  rm -f "$T/tiny.plan"
done

# --- words: a degree's single group, a single micro-batch; a fixed pipeline that cannot fit says
#     why (it used to say "the least memory any plan needs is 0 bytes"), and so does a plan whose
#     transient bytes take it over (it used to name a least memory below the limit, and nothing more)
"$ZOO" gpt3-1.3b > "$T/w.json"
"$PLANNER" search "$T/w.json" --cluster h100x8 --dp 8 --micro-batches 2 > "$T/w.out" 2>&1
check "summary: 'dp degree 8 (1 group)' and '2 micro-batches (gradient accumulation)'" \
  'grep -q "dp degree 8 (1 group)" "$T/w.out" && grep -q "2 micro-batches (gradient accumulation)" "$T/w.out"'
"$PLANNER" search "$T/w.json" --cluster h100x8 --pp 4 --dp 2 --micro-batches 1 > /dev/null 2> "$T/w.err"
check "a fixed pipeline that cannot fit: exit 3 saying why, no '0 bytes'" \
  '[ $? -eq 3 ] && grep -q "every point tried is pipelined" "$T/w.err" && ! grep -q " 0 bytes" "$T/w.err"'
"$PLANNER" search "$T/w.json" --cluster h100x8 --dp 8 --micro-batches 1 --pp 1 > /dev/null 2> "$T/w.err"
check "a least memory under the limit that still does not fit: exit 3 naming the transient bytes" \
  '[ $? -eq 3 ] && grep -q "with its transient bytes" "$T/w.err"'

# --- how far to trust a step: every cost carries the band a measured step is expected in; without
#     a calibration it is the validation set's spread (PL_BAND_LO-PL_BAND_HI x, costmodel/cluster.h;
#     test_band holds them to benchmarks/results/validation.jsonl), with one the fit's leave-one-out
#     mean error either side (runs with one measured 20 % slow, so the fit cannot be exact)
band_lo=$(sed -n 's/^#define PL_BAND_LO *//p' "$SRC/costmodel/cluster.h")
band_hi=$(sed -n 's/^#define PL_BAND_HI *//p' "$SRC/costmodel/cluster.h")
"$PLANNER" search "$SRC/examples/gpt-small.json" --devices 8 -o "$T/band.plan" > "$T/band.out" 2>&1
check "uncalibrated: the band is $band_lo-$band_hi x the step, printed and in the cost" \
  'jq -e ".cost | (.step_band_seconds[0] - $band_lo * .step_seconds | fabs) <= 1e-12 * .step_seconds and
                   (.step_band_seconds[1] - $band_hi * .step_seconds | fabs) <= 1e-12 * .step_seconds and
                   (.step_band_basis | startswith(\"uncalibrated\"))" "$T/band.plan" > /dev/null &&
   grep -q "^expected measured step: " "$T/band.out"'
jq -c 'if .plan == "p1.json" then .step_seconds *= 1.2 else . end' "$T/fit/runs.jsonl" > "$T/fit/runs2.jsonl"
"$PLANNER" calibrate --from-runs "$T/fit/runs2.jsonl" -o "$T/fit/fitted2.json" > /dev/null 2>&1
"$PLANNER" cost "$T/fit/a.json" --strategy "$T/fit/p1.json" --cluster "$T/fit/fitted2.json" > "$T/band.cost" 2> /dev/null
loo=$(jq .fitted.leave_one_out_error "$T/fit/fitted2.json")
check "calibrated: the band is the step less and more the fit's leave-one-out error ($loo)" \
  'num_lt 0 "$loo" && jq -e --argjson e "$loo" "(.step_band_seconds[0] - (1 - \$e) * .step_seconds | fabs) <= 1e-9 * .step_seconds and
     (.step_band_seconds[1] - (1 + \$e) * .step_seconds | fabs) <= 1e-9 * .step_seconds and
     (.step_band_basis | startswith(\"calibrated\"))" "$T/band.cost" > /dev/null'

# --- attention past its measurements: the kernel tables end at 16k tokens a sequence (the CSV's
#     longest); a plan whose attention runs longer says so in its cost and its summary, `cost`
#     answers the same, and context parallelism that brings the local length back within says
#     nothing (docs/cost-model.md, "Attention past its measurements")
longest=$(awk -F, '$2 == "flash2" && $1 ~ /^H100/ && $3 == "fp16" && $7 > m { m = $7 } END { print m }' \
  "$SRC/costmodel/attention_measured.csv")
for s in $longest $((4 * longest)); do
  "$ZOO" llama2-70b --layers 2 --hidden 2048 --heads 16 --kv-heads 16 --ffn 5504 --seq $s --batch 8 \
    --dtype bfloat16 --attention fused > "$T/ab$s.json"
  "$PLANNER" search "$T/ab$s.json" --cluster h100x8:1 --tp 1 --pp 1 --dp 8 -o "$T/ab$s.plan" > "$T/ab$s.out" 2>&1
  "$PLANNER" search "$T/ab$s.json" --cluster h100x8:1 --tp 1 --pp 1 --cp 4 --dp 2 -o "$T/abcp$s.plan" > /dev/null 2>&1
done
s=$((4 * longest))
check "attention at $s tokens, measured to $longest: cost.attention_beyond_measured, the summary's note, cost agrees" \
  'jq -e ".cost.attention_beyond_measured == {kernel: \"flash2\", sequence: $s, longest_measured: $longest}" "$T/ab$s.plan" > /dev/null &&
   grep -q "note: the fused attention (flash2) runs $s tokens a sequence, past the longest its published measurements on this GPU cover ($longest)" "$T/ab$s.out" &&
   [ "$("$PLANNER" cost "$T/ab$s.json" --strategy "$T/ab$s.plan" | jq -c .attention_beyond_measured)" = "$(jq -c .cost.attention_beyond_measured "$T/ab$s.plan")" ]'
"$PLANNER" report "$T/ab$s.plan" -o "$T/ab$s.html" > /dev/null 2>&1
jq '.cost.attention_beyond_measured.kernel = "</p><script>alert(1)</script>"' "$T/ab$s.plan" > "$T/abx.plan"
"$PLANNER" report "$T/abx.plan" -o "$T/abx.html" > /dev/null 2>&1
check "the report says it too, a hostile kernel name escaped" \
  'grep -q "<p id=\"attention-beyond\">Note: the fused attention (flash2) runs $s tokens" "$T/ab$s.html" &&
   grep -q "&lt;script&gt;alert(1)&lt;/script&gt;" "$T/abx.html" && ! grep -q "<script>alert" "$T/abx.html"'
check "attention at $longest tokens, or at $s cut 4 ways by context parallelism: nothing said" \
  'jq -e ".cost | has(\"attention_beyond_measured\") | not" "$T/ab$longest.plan" > /dev/null &&
   ! grep -q "past the longest" "$T/ab$longest.out" &&
   jq -e ".cost | has(\"attention_beyond_measured\") | not" "$T/abcp$s.plan" > /dev/null &&
   jq -e ".groups.cp | length == 2 and all(length == 4)" "$T/abcp$s.plan" > /dev/null'

# --- more model TFLOP/s than any published run measured on the GPU (PL_SEEN_TFLOPS_*, held to the
#     validation results by test_band): the cost says so with that most, the summary notes it,
#     `cost` answers the same; a plan under it says nothing
seen=$(sed -n 's/^#define PL_SEEN_TFLOPS_H100_16 *//p' "$SRC/costmodel/cluster.h")
"$ZOO" gpt3-13b --layers 8 > "$T/tm.json"
"$PLANNER" search "$T/tm.json" --cluster h100x8 --job -o "$T/tm.plan" > "$T/tm.out" 2>&1
"$ZOO" gpt3-1.3b > "$T/tl.json"
"$PLANNER" search "$T/tl.json" --cluster h100x8 -o "$T/tl2.plan" > "$T/tl2.out" 2>&1
check "a plan priced above the $seen TFLOP/s measured on H100 (16-bit) says so; one under it does not" \
  'jq -e --argjson s "$seen" ".cost.model_tflops_per_device > \$s and
       .cost.tflops_above_measured == {gpu_family: \"H100\", gemm: \"16-bit\", most_measured: \$s}" "$T/tm.plan" > /dev/null &&
   grep -q "model TFLOP/s per device is more than any published run of the validation set measured on H100 with 16-bit GEMMs ($seen)" "$T/tm.out" &&
   [ "$("$PLANNER" cost "$T/tm.json" --strategy "$T/tm.plan" | jq -c .tflops_above_measured)" = "$(jq -c .cost.tflops_above_measured "$T/tm.plan")" ] &&
   jq -e --argjson s "$seen" ".cost.model_tflops_per_device <= \$s and (.cost | has(\"tflops_above_measured\") | not)" "$T/tl2.plan" > /dev/null &&
   ! grep -q "more than any published run" "$T/tl2.out" &&
   "$PLANNER" report "$T/tm.plan" -o "$T/tm.html" > /dev/null 2>&1 &&
   grep -q "<p id=\"above-measured\">Note: [0-9.]* model TFLOP/s per device is more than any published run" "$T/tm.html"'

# --- --stage-cuts layers: pipeline stages split the model only between whole layers, as frameworks
#     do, so the plan exports; the default may cut between a layer's attention and its MLP
"$ZOO" gpt3-1.3b --layers 8 > "$T/sc.json"
"$PLANNER" search "$T/sc.json" --cluster h100x8:2 --tp 2 --pp 2 --dp 4 --micro-batch-size 2 --zero 1 \
  --virtual-stages 1 --stage-cuts layers -o "$T/sc.plan" > /dev/null 2>&1
"$PLANNER" export "$T/sc.plan" --to megatron > "$T/sc.args" 2> "$T/sc.err"
check "--stage-cuts layers: whole layers a stage, exported to Megatron-LM with their split" \
  '[ $? -eq 0 ] && grep -q -- "--pipeline-model-parallel-size 2" "$T/sc.args" &&
   jq -e "[.parallel_strategy_item | to_entries[] | select(.key | test(\"^l[0-9]+[.]\")) |
          {l: (.key | capture(\"^l(?<n>[0-9]+)\").n), s: .value.stage}] | group_by(.l) |
          (length == 8) and all(map(.s) | unique | length == 1)" "$T/sc.plan" > /dev/null'
"$PLANNER" search "$T/sc.json" --stage-cuts halves > /dev/null 2> "$T/sc.err"
check "--stage-cuts halves: exit 2 naming the choices" '[ $? -eq 2 ] && grep -q "expected layers, even, uniform or any" "$T/sc.err"'

# --- search --framework F: only plans F can state, as `planner export` (the oracle) decides, over
#     models and meshes; the even split of Megatron; the searched space named
fw_bad=""
# seven fixed cases, then six drawn at random (python's random, seed 46: layers, width, heads, kv
# heads, sequence, batch, cluster and nodes), every one a model and mesh of its own
fw_specs=("gpt3-125m --layers 4:h100x8:1:" "gpt3-125m --layers 6 --heads 8 --hidden 512:h100x8:2:"
  "llama2-7b --layers 4 --hidden 1024 --heads 8 --ffn 2816 --seq 1024 --batch 64:a100x8:2:"
  "gpt3-350m --layers 8 --batch 64:h100x8:4:" "gpt3-13b --batch 32:a100x8:1:"
  "gpt3-350m --layers 8 --batch 64:h100x8:1:--tp 2" "gpt3-1.3b --layers 12 --batch 64:h100x8:2:--tp 4 --pp 2")
mapfile -t fw_random < <(python3 -c '
import random
r = random.Random(46)
for _ in range(6):
    heads = r.choice([8, 16, 32]); dh = r.choice([64, 128]); L = r.choice([2, 4, 6, 8, 12])
    kv = r.choice([h for h in (1, 2, 4, 8, heads) if heads % h == 0])
    arch = r.choice(["gpt3-350m", "llama2-7b"])
    kvs = " --kv-heads %d" % kv if arch == "llama2-7b" else ""
    ffn = " --ffn %d" % (r.choice([2, 3, 4]) * heads * dh) if arch == "llama2-7b" else ""
    print("%s --layers %d --heads %d --head-dim %d --hidden %d%s%s --seq %d --batch %d:%s:%d:" % (
        arch, L, heads, dh, heads * dh, kvs, ffn, r.choice([512, 1024, 2048]),
        r.choice([16, 32, 64]), r.choice(["h100x8", "a100x8", "a100-80gx8"]), r.choice([1, 2, 4])))')
for spec in "${fw_specs[@]}" "${fw_random[@]}"; do
  IFS=: read -r zargs zcl zn extra <<< "$spec"
  # shellcheck disable=SC2086
  "$ZOO" $zargs > "$T/fw.json"
  for fw in megatron nemo; do
    # shellcheck disable=SC2086
    "$PLANNER" search "$T/fw.json" --cluster "$zcl:$zn" --framework $fw $extra -o "$T/fw.plan" > "$T/fw.out" 2>&1 ||
      { fw_bad="$fw_bad [$spec $fw: search exit $?]"; continue; }
    "$PLANNER" export "$T/fw.plan" --to $fw > /dev/null 2>&1 || fw_bad="$fw_bad [$spec $fw: export refuses]"
    [ "$(jq -r .search.framework "$T/fw.plan")" = $fw ] || fw_bad="$fw_bad [$spec $fw: search.framework]"
    # whole heads on every tensor-parallel rank: tp divides the heads and the K/V heads (Megatron-LM
    # divides num_attention_heads and num_query_groups by it)
    heads=$(sed -n 's/.*--heads \([0-9]*\).*/\1/p' <<< "$zargs")
    heads=${heads:-$("$ZOO" --list | awk -v m="${zargs%% *}" '$1 == m { print $8 }')}
    kv=$(sed -n 's/.*--kv-heads \([0-9]*\).*/\1/p' <<< "$zargs")
    tpd=$(jq ".groups.tp[0] | length" "$T/fw.plan")
    [ $((heads % tpd)) = 0 ] && [ $((${kv:-$heads} % tpd)) = 0 ] ||
      fw_bad="$fw_bad [$spec $fw: tp $tpd of $heads heads, ${kv:-$heads} K/V heads]"
    layers=$(grep "^  layers a stage:" "$T/fw.out" | cut -d: -f2 | tr ' ' '\n' | sort -u | grep -c .)
    [ "${layers:-0}" -le 1 ] || fw_bad="$fw_bad [$spec $fw: stages of unequal layers]"
    "$PLANNER" cost "$T/fw.json" --strategy "$T/fw.plan" > "$T/fw.cost" &&
      [ "$(jq .step_seconds "$T/fw.cost")" = "$(jq .cost.step_seconds "$T/fw.plan")" ] ||
      fw_bad="$fw_bad [$spec $fw: cost differs]"
    # a degree given stays; tensor parallelism comes with sequence parallelism (Megatron's advice)
    case "$extra" in *"--tp "*)
      [ "$(jq ".groups.tp[0] | length" "$T/fw.plan")" = "$(sed 's/.*--tp \([0-9]*\).*/\1/' <<< "$extra")" ] ||
        fw_bad="$fw_bad [$spec $fw: tp not kept]"
      [ $fw = nemo ] || "$PLANNER" export "$T/fw.plan" --to $fw | grep -q -- "^--sequence-parallel" ||
        fw_bad="$fw_bad [$spec $fw: no sequence parallelism with tp]" ;;
    esac
  done
done
check "search --framework megatron|nemo over ${#fw_specs[@]} fixed and ${#fw_random[@]} random models and meshes: every plan exports to it, splits layers evenly, holds whole heads a rank, and cost reproduces it${fw_bad}" \
  '[ -z "$fw_bad" ] && [ ${#fw_random[@]} = 6 ]'
"$ZOO" gpt3-125m --layers 4 > "$T/fw.json"
for fw in torchtitan deepspeed megatron-deepspeed mindformers; do
  "$PLANNER" search "$T/fw.json" --cluster h100x8:2 --framework $fw -o "$T/fw-$fw.plan" > /dev/null 2>&1 &&
    "$PLANNER" export "$T/fw-$fw.plan" --to $fw > /dev/null 2>&1 || fw_bad="$fw_bad [$fw]"
done
check "search --framework torchtitan|deepspeed|megatron-deepspeed|mindformers: the plan exports to it${fw_bad}" \
  '[ -z "$fw_bad" ] && jq -e ".search.space | startswith(\"plans DeepSpeed\")" "$T/fw-deepspeed.plan" > /dev/null &&
   [ "$(jq -c "[.pipeline.stages, (.groups.tp[0] | length)]" "$T/fw-deepspeed.plan")" = "[1,1]" ]'
# torchtitan's FSDP under pipeline stages is ZeRO 1 (a stage's weights gathered once a step, its
# gradients reduced after the last backward: docs/cost-model.md): with --pp 2 the search takes ZeRO 1
# over dp 8 (and no other level), prices the reduction exposed, and the plan exports as FSDP
"$PLANNER" search "$T/fw.json" --cluster h100x8:2 --framework torchtitan --pp 2 --tp 1 \
  -o "$T/fw-ttpp.plan" > /dev/null 2>&1 &&
  "$PLANNER" export "$T/fw-ttpp.plan" --to torchtitan > "$T/fw-ttpp.toml" 2>&1
check "search --framework torchtitan --pp 2: FSDP as ZeRO 1 over dp 8, its reduction not overlapped, exported as data_parallel_shard_degree 8" \
  '[ "$(jq -c "[.pipeline.stages, .optimizer_shard, .pipeline.overlap_grad_reduce, .search.framework_defaults.overlap_grad_reduce]" "$T/fw-ttpp.plan")" = "[2,1,false,\"off\"]" ] &&
   grep -qx "data_parallel_shard_degree = 8" "$T/fw-ttpp.toml"'
"$PLANNER" search "$T/fw.json" --devices 8 --framework megatrn > /dev/null 2> "$T/err"
check "--framework megatrn: exit 2 naming the frameworks" '[ $? -eq 2 ] && grep -q "expected megatron, nemo" "$T/err"'
"$PLANNER" search "$T/fw.json" --devices 8 --framework megatron --top 3 > /dev/null 2> "$T/err"
check "--framework with --top: exit 2 saying it plans alone" '[ $? -eq 2 ] && grep -q "plans alone" "$T/err"'

# --- search --framework F prices as F runs by default (docs/cost-model.md, "Pricing defaults of
#     --framework", each default with its source): the plan costed with those switches given
#     explicitly on the preset cluster prices the same, the search with them given plans the same,
#     and an option given wins over the framework's default
"$ZOO" gpt3-125m --layers 4 > "$T/fd.json"
fd_bad=""
# per framework: the cluster switches, --overlap-grad-reduce, --overlap-param-gather and
# --cp-exchange of its defaults (H100: Transformer Engine's attention is cuDNN's on Hopper)
declare -A fd_sw=(
  [megatron]="--attention-kernel cudnn --loss-kernel unfused --loss-parallel vocab --grad-dtype fp32 --grad-reduce as-grad --grad-accumulation fused --param-shard param --norm-kernel fused --mask-kernel fused --batch-norm local|off|off|ring"
  [nemo]="--attention-kernel cudnn --loss-kernel fused --loss-parallel vocab --grad-dtype fp32 --grad-reduce as-grad --param-shard param --norm-kernel fused --mask-kernel fused --batch-norm local|on|on|ring"
  [torchtitan]="--attention-kernel flash2 --loss-kernel unfused --loss-parallel vocab --grad-dtype fp32 --grad-reduce as-grad --grad-accumulation autograd --param-shard fp32 --mask-kernel fused --batch-norm local|on|on|allgather"
  [deepspeed]="--grad-accumulation autograd --param-shard param --batch-norm local|off|off"
  [megatron-deepspeed]="--loss-kernel unfused --loss-parallel vocab --grad-accumulation autograd --param-shard param --norm-kernel fused --mask-kernel fused --batch-norm local|off|off"
  [mindformers]="||")
for fw in megatron nemo torchtitan deepspeed megatron-deepspeed mindformers; do
  IFS='|' read -r sw ov pg cx <<< "${fd_sw[$fw]}"
  jsw="${ov:+--overlap-grad-reduce $ov}${pg:+ --overlap-param-gather $pg}${cx:+ --cp-exchange $cx}"
  "$PLANNER" search "$T/fd.json" --cluster h100x8 --framework $fw -o "$T/fd-$fw.plan" > "$T/fd.out" 2>&1 ||
    { fd_bad="$fd_bad [$fw: search exit $?]"; continue; }
  # shellcheck disable=SC2086
  "$PLANNER" cost "$T/fd.json" --strategy "$T/fd-$fw.plan" --cluster h100x8 $sw > "$T/fd.cost" 2>/dev/null &&
    [ "$(jq .step_seconds "$T/fd.cost")" = "$(jq .cost.step_seconds "$T/fd-$fw.plan")" ] ||
    fd_bad="$fd_bad [$fw: cost with the switches differs]"
  [ -z "$ov" ] || [ "$(jq .pipeline.overlap_grad_reduce "$T/fd-$fw.plan")" = "$([ "$ov" = on ] && echo true || echo false)" ] ||
    fd_bad="$fd_bad [$fw: overlap]"
  [ -z "$pg" ] || [ "$(jq '.pipeline.overlap_param_gather // false' "$T/fd-$fw.plan")" = "$([ "$pg" = on ] && echo true || echo false)" ] ||
    fd_bad="$fd_bad [$fw: parameter gathers' overlap]"
  # shellcheck disable=SC2086
  "$PLANNER" search "$T/fd.json" --cluster h100x8 --framework $fw $sw $jsw \
    -o "$T/fd-x.plan" > /dev/null 2>&1 &&
    [ "$(jq -c '.cost.step_seconds, .pipeline' "$T/fd-x.plan")" = "$(jq -c '.cost.step_seconds, .pipeline' "$T/fd-$fw.plan")" ] ||
    fd_bad="$fd_bad [$fw: the explicit switches plan otherwise]"
  n=$(jq '.search.framework_defaults | length' "$T/fd-$fw.plan")
  [ "$n" = "$(wc -w <<< "$sw $jsw" | awk '{print $1 / 2}')" ] ||
    fd_bad="$fd_bad [$fw: $n defaults recorded]"
  [ "$n" = 0 ] || grep -q "^  $fw defaults: ${sw:+$sw }$jsw$" "$T/fd.out" ||
    fd_bad="$fd_bad [$fw: summary]"
done
check "search --framework F prices as F runs: cost with F's default switches given reproduces each plan, the search with them given plans the same, recorded and printed${fd_bad}" \
  '[ -z "$fd_bad" ]'
# the default differs from the cluster's (NeMo's fused loss against the preset's unfused), so the
# switches matter; an option given wins and is not a default
"$PLANNER" cost "$T/fd.json" --strategy "$T/fd-nemo.plan" --cluster h100x8 > "$T/fd.cost" 2>/dev/null
check "... NeMo's fused loss prices otherwise than the preset's unfused one" \
  '[ "$(jq .step_seconds "$T/fd.cost")" != "$(jq .cost.step_seconds "$T/fd-nemo.plan")" ]'
"$PLANNER" search "$T/fd.json" --cluster h100x8 --framework nemo --loss-kernel unfused -o "$T/fd-x.plan" > /dev/null 2>&1
check "... --loss-kernel unfused given with --framework nemo wins, and is not recorded as a default" \
  'jq -e ".cluster.description.device.loss_kernel == \"unfused\" and (.search.framework_defaults | has(\"loss_kernel\") | not)
         and .search.framework_defaults.batch_norm == \"local\"" "$T/fd-x.plan" > /dev/null'
# --- search --framework: every tensor-parallel rank holds whole attention heads, as every framework
#     needs (Megatron-LM divides num_query_groups by tp): multi-query attention (one K/V head) is
#     not cut over tp 2, two over tp 4 (refused, naming the head); tp 2 of two K/V heads plans
"$ZOO" llama2-7b --layers 2 --heads 8 --kv-heads 1 --head-dim 128 --hidden 1024 --ffn 2816 --seq 1024 \
  --batch 16 > "$T/mqa.json"
"$PLANNER" search "$T/mqa.json" --cluster h100x8 --framework megatron --tp 2 > /dev/null 2> "$T/err"
check "search --framework megatron --tp 2 of one K/V head: exit 3 naming the head cut" \
  '[ $? -eq 3 ] && grep -q "l0.k4 cuts l0.k.out (1 head of 128) 2 ways" "$T/err"'
"$ZOO" llama2-7b --layers 2 --heads 16 --kv-heads 2 --head-dim 128 --hidden 2048 --ffn 5632 --seq 2048 \
  --batch 16 > "$T/gqa.json"
for fw in megatron nemo torchtitan; do
  "$PLANNER" search "$T/gqa.json" --cluster h100x8 --framework $fw --tp 4 > /dev/null 2>&1
  rc4=$?
  "$PLANNER" search "$T/gqa.json" --cluster h100x8 --framework $fw --tp 2 -o "$T/gqa-$fw.plan" > /dev/null 2>&1
  check "search --framework $fw of 2 K/V heads: --tp 4 exits 3, --tp 2 plans" \
    '[ $rc4 -eq 3 ] && [ $? -eq 0 ] && [ "$(jq ".groups.tp[0] | length" "$T/gqa-$fw.plan")" = 2 ]'
done
# --- search --framework F trains convolutional nets as F does, batch-norm statistics local (DDP's,
#     FSDP's and DeepSpeed's engine's BatchNorm; docs/cost-model.md "Pricing defaults of
#     --framework"): ResNet-18, MobileNetV2, grouped convolutions (ResNeXt's) and ShuffleNet's
#     channel groups at batch 64 on one node of 8 H100s plan data parallel, every convolution's
#     batch cut 8 ways and nothing else (issue 46's acceptance: what everyone launches)
O=$SRC/tests/fixtures/onnx
cnn_bad=""
for f in resnet18_train mobilenet_v2 convzoo convzoo2; do
  for fw in torchtitan deepspeed; do
    "$PLANNER" search "$O/$f.onnx" --batch 64 --cluster h100x8 --framework $fw -o "$T/cnn.plan" > /dev/null 2>&1 ||
      { cnn_bad="$cnn_bad [$f $fw: exit $?]"; continue; }
    jq -e '.cluster.description.device.batch_norm == "local" and
           ([.parallel_strategy_item[] | select(.type == "Conv") | .parallel_strategy[0][0] == 8 and
             (.parallel_strategy[0][1:] | all(. == 1))] | length > 0 and all)' "$T/cnn.plan" > /dev/null ||
      cnn_bad="$cnn_bad [$f $fw: not data parallel with local statistics]"
  done
done
check "search --framework torchtitan|deepspeed: ResNet-18, MobileNetV2 and two conv zoos at batch 64 on 8 H100s train data parallel, statistics local${cnn_bad}" \
  '[ -z "$cnn_bad" ]'
# each framework's recompute modes: under a memory limit that needs recompute at 8 sequences a rank,
# torchtitan's search takes its per-op checkpointing (selective-op), Megatron's its attention-core
# selective, and neither the other's
"$ZOO" llama2-7b --layers 4 --seq 4096 --batch 64 > "$T/rcfw.json"
for fw in torchtitan megatron; do
  "$PLANNER" search "$T/rcfw.json" --cluster h100x8:1 --framework $fw --tp 1 --dp 8 \
    --micro-batch-size 8 --memory-limit 60GiB -o "$T/rcfw-$fw.plan" > /dev/null 2>&1
done
"$PLANNER" export "$T/rcfw-torchtitan.plan" --to torchtitan > "$T/rcfw.toml" 2>&1
check "--framework torchtitan recomputes per op (selective-op, exported as selective_ac_option op), --framework megatron the attention core (selective)" \
  '[ "$(jq -r .recompute "$T/rcfw-torchtitan.plan")" = selective-op ] &&
   [ "$(jq -r .recompute "$T/rcfw-megatron.plan")" = selective ] &&
   grep -qx "selective_ac_option = \"op\"" "$T/rcfw.toml"'

# --- --stage-cuts even: Megatron-LM's split, stage s starting at layer floor(s L / pp) (num_layers /
#     pp when it divides), the embedding on the first stage and the head on the last, whatever
#     memory the split leaves on each stage. 10 layers over 4 stages: layers 0-1, 2-4, 5-6, 7-9;
#     over 8: 0, 1, 2-4, 5, 6, 7, 8, 9.
"$ZOO" gpt3-1.3b --layers 10 > "$T/ev.json"
# the plan's stages against $starts, the layers that begin stages 1..pp-1 (hand-derived below)
cat > "$T/stages.jq" <<'JQ'
[.parallel_strategy_item | to_entries[]
 | if (.key | test("^l[0-9]+[.]")) then
     (.key | capture("^l(?<n>[0-9]+)").n | tonumber) as $l
     | .value.stage == ($starts | map(select(. <= $l)) | length)
   elif .value.part == "embedding" then .value.stage == 0
   elif .value.part == "head" then .value.stage == ($starts | length)
   else true end]
| (length > 100) and all
JQ
# (16 micro-batches: with 8, the 8-stage split's last stage holds layer 9, the head and a loss of
# 64 x 2048 positions over 50,304 classes at 12 bytes a logit, more than the 80 GB part)
for pp in 2 4 8; do
  "$PLANNER" search "$T/ev.json" --cluster h100x8:1 --pp $pp --micro-batches 16 --virtual-stages 1 \
    --stage-cuts even -o "$T/ev$pp.plan" > "$T/ev$pp.out" 2> "$T/ev.err"
  check "--stage-cuts even, 10 layers over $pp stages: stage s from layer floor(10 s / $pp), as Megatron" \
    '[ $? -eq 0 ] && jq -e --argjson starts "$(jq -n -c --argjson pp $pp "[range(1; \$pp)] | map(. * 10 / \$pp | floor)")" \
       -f "$T/stages.jq" "$T/ev$pp.plan" > /dev/null'
done
# --stage-cuts uniform: DeepSpeed's and Aleph Alpha's partition_uniform over 13 items (embedding,
# 10 layers, final norm, head): 2 stages of 7 and 6 items hold the embedding and layers 0-5, then
# layers 6-9, the norm and the head; 4 stages of 4, 3, 3, 3 items the embedding and layers 0-2,
# layers 3-5, 6-8, then layer 9, the norm and the head (stage s from item s floor(13 / pp) +
# min(s, 13 mod pp), layer item - 1). 8 stages would leave the head alone on the last: refused.
for pp in 2 4; do
  "$PLANNER" search "$T/ev.json" --cluster h100x8:1 --pp $pp --micro-batches 8 --virtual-stages 1 \
    --stage-cuts uniform -o "$T/un$pp.plan" > /dev/null 2> "$T/ev.err"
  check "--stage-cuts uniform, 13 items over $pp stages: stage s from item s floor(13 / $pp) + min(s, 13 mod $pp)" \
    '[ $? -eq 0 ] && jq -e --argjson starts "$(jq -n -c --argjson pp $pp "[range(1; \$pp)] | map(. * (13 / \$pp | floor) + ([., 13 % \$pp] | min) - 1)")" \
       -f "$T/stages.jq" "$T/un$pp.plan" > /dev/null'
done
check "... the summary prints each stage's layers (4 stages: 2 3 2 3)" \
  'grep -q "^  layers a stage: 2 3 2 3$" "$T/ev4.out"'
"$PLANNER" search "$T/ev.json" --cluster h100x8:1 --pp 8 --stage-cuts uniform > /dev/null 2> "$T/ev.err"
check "--stage-cuts uniform, the head alone on the last of 8 stages: exit 2 saying so" \
  '[ $? -eq 2 ] && grep -q "split uniformly over the embedding" "$T/ev.err"'
"$ZOO" gpt3-1.3b --layers 6 > "$T/ev6.json"
"$PLANNER" search "$T/ev6.json" --cluster h100x8:1 --pp 8 --stage-cuts even > /dev/null 2> "$T/ev.err"
check "--stage-cuts even, 8 stages of 6 layers: exit 2 saying so" \
  '[ $? -eq 2 ] && grep -q "same number of layers" "$T/ev.err"'


# --- planner check CKPT --log LOG: the checkpoint's prediction against a framework's log; the
#     verdict by the checkpoint's band; published excerpts of each framework's log
#     (tests/fixtures/logs/SOURCE.md); a log without step reports exits 2 naming what was expected
L="$SRC/tests/fixtures/logs"
"$PLANNER" search "$SRC/tests/fixtures/models/gpt-tiny.json" --cluster h100x8 -o "$T/ck.plan" > /dev/null 2>&1
pred=$(jq .cost.step_seconds "$T/ck.plan")
# a Megatron-LM log of four reports at F x the prediction, the first (warm-up) 40 x slower
mklog() { awk -v p="$pred" -v f="$1" 'BEGIN { for (i = 1; i <= 4; i++)
  printf " iteration %8d/     100 | consumed samples: %12d | elapsed time per iteration (ms): %.9f | lm loss: 1.0E+00 |\n", 10 * i, 40 * i, (i == 1 ? 40 : 1) * p * f * 1000 }'; }
for f in 1.0 0.5 2.0; do
  mklog $f > "$T/f$f.log"
  "$PLANNER" check "$T/ck.plan" --log "$T/f$f.log" --json > "$T/f$f.json" 2> "$T/err"
  echo "$? $(jq -c '[.step_seconds.verdict, .step_seconds.inside_band, .step_seconds.ratio, .warmup_steps, .steps_used]' "$T/f$f.json")" > "$T/f$f.v"
done
check "check: a step at the prediction is inside the band (exit 0, ratio 1, warm-up report dropped)" \
  'read -r rc v < "$T/f1.0.v"; [ "$rc" = 0 ] && jq -e ".[0] == \"inside\" and .[1] and (.[2] - 1 | fabs) < 1e-6 and .[3] == 1 and .[4] == 3" <<< "$v" > /dev/null'
check "check: half the prediction is below the band, twice it above (exit 0 both)" \
  'read -r rc1 v1 < "$T/f0.5.v"; read -r rc2 v2 < "$T/f2.0.v"; [ "$rc1$rc2" = 00 ] &&
   jq -e ".[0] == \"below\" and (.[1] | not)" <<< "$v1" > /dev/null && jq -e ".[0] == \"above\" and (.[1] | not)" <<< "$v2" > /dev/null'
check "check --json: the band is the checkpoint's step_band_seconds" \
  '[ "$(jq -c .step_seconds.band "$T/f1.0.json")" = "$(jq -c .cost.step_band_seconds "$T/ck.plan")" ]'
"$PLANNER" check "$T/ck.plan" --log "$T/f1.0.log" > "$T/out" 2> "$T/err"
check "check: the table names the framework, the warm-up and the verdict" \
  '[ $? -eq 0 ] && grep -q "Megatron-LM, 4 step reports" "$T/out" && grep -q "after 1 warm-up step" "$T/out" && grep -q "^step (s) .* inside the band" "$T/out"'
bad=""
for spec in "megatron-lm-2024-mixtral.log|Megatron-LM|5.6262" "megatron-lm-2020.log|Megatron-LM|1.986" \
            "nemo2.log|NeMo|0.031665" "megatron-deepspeed-2023.log|Megatron-LM|4.1031"; do
  IFS='|' read -r f fw want <<< "$spec"
  got=$("$PLANNER" check "$T/ck.plan" --log "$L/$f" --warmup "$([ "$f" = megatron-deepspeed-2023.log ] && echo 0 || echo 1)" --json 2> /dev/null |
        jq -r "select(.framework == \"$fw\") | .step_seconds.measured")
  awk -v a="$got" -v b="$want" 'BEGIN { exit !(a > 0.999999 * b && a < 1.000001 * b) }' || bad="$bad $f($got)"
done
check "check reads the published Megatron-LM, NeMo and Megatron-DeepSpeed excerpts' steps${bad:+:$bad}" '[ -z "$bad" ]'
tps=$("$PLANNER" check "$T/ck.plan" --log "$L/torchtitan-2025.log" --json 2> /dev/null |
      jq --slurpfile c "$T/ck.plan" '$c[0].cost.tokens_per_step / (.step_seconds.measured * $c[0].cluster.devices)')
check "check: torchtitan's tps is per device (the step is tokens a step / (tps x devices))" \
  'awk -v a="$tps" "BEGIN { exit !(a > 5863.99 && a < 5864.01) }"'
"$PLANNER" check "$T/ck.plan" --log "$L/torchtitan-2025.log" --json 2> /dev/null > "$T/tt.json"
check "check: torchtitan's memory is its max reserved, against the whole predicted peak" \
  'jq -e ".peak_memory_bytes.max_reserved.measured == 49.66 * 1073741824 and (.peak_memory_bytes.max_allocated == null)" "$T/tt.json" > /dev/null'
"$PLANNER" check "$T/ck.plan" --log "$L/deepspeed-0.7.log" --json 2> /dev/null > "$T/ds.json"
check "check: DeepSpeed's samples a second with the plan's global batch" \
  'jq -e --slurpfile c "$T/ck.plan" ".framework == \"DeepSpeed\" and (.step_seconds.measured - (\$c[0].cost.global_batch / 155.01088859630886 + \$c[0].cost.global_batch / 155.10475468488542) / 2 | fabs) < 1e-12" "$T/ds.json" > /dev/null'
"$PLANNER" check "$T/ck.plan" --log "$L/deepspeed-memory.log" > "$T/out" 2> "$T/err"
check "check: a log of memory reports only exits 2 naming the file and the step lines expected" \
  '[ $? -eq 2 ] && grep -q "deepspeed-memory.log: no training step report in 5 lines (expected Megatron-LM" "$T/err" && [ ! -s "$T/out" ]'
"$PLANNER" check "$T/ck.plan" --log "$L/megatron-lm-2026-memory.log" > /dev/null 2> "$T/err"
check "check: a log of warm-up reports only exits 2 suggesting --warmup 0" \
  '[ $? -eq 2 ] && grep -q "all in the first 1 step taken as warm-up" "$T/err"'
"$PLANNER" check "$T/ck.plan" --log "$L/megatron-lm-2026-memory.log" --warmup 0 --json > "$T/m.json" 2> "$T/err"
check "check --warmup 0: Megatron-LM's memory report is max allocated against the peak less its reserve" \
  '[ $? -eq 0 ] && jq -e --slurpfile c "$T/ck.plan" ".peak_memory_bytes.max_allocated | .measured == 5670.39 * 1048576 and .predicted == (\$c[0].cost.peak_memory_bytes - \$c[0].cost.memory_breakdown_bytes.reserved)" "$T/m.json" > /dev/null'
: > "$T/empty.log"
"$PLANNER" check "$T/ck.plan" --log "$T/empty.log" > /dev/null 2> "$T/err"
check "check: an empty log exits 2" '[ $? -eq 2 ] && grep -q "empty.log: no training step report in 0 lines" "$T/err"'
"$PLANNER" check "$T/ck.plan" --log "$T/nothere.log" > /dev/null 2> "$T/err"
check "check: a missing log exits 2" '[ $? -eq 2 ] && grep -q "nothere.log" "$T/err"'
jq 'del(.cost)' "$T/ck.plan" > "$T/nocost.plan"
"$PLANNER" check "$T/nocost.plan" --log "$T/f1.0.log" > /dev/null 2> "$T/err"
check "check: a checkpoint without a cost exits 2 naming cost.step_seconds" \
  '[ $? -eq 2 ] && grep -q "nocost.plan: cost.step_seconds: expected" "$T/err"'
"$PLANNER" check "$T/ck.plan" > /dev/null 2> "$T/err"; rc1=$?
"$PLANNER" check "$T/ck.plan" --log "$T/f1.0.log" --run-line > /dev/null 2> "$T/err"; rc2=$?
"$PLANNER" check "$T/ck.plan" --log "$T/f1.0.log" --warmup -1 > /dev/null 2>&1; rc3=$?
"$PLANNER" check --help > "$T/out"; rc4=$?
check "check: usage errors exit 2 (no --log, --run-line without --model, --warmup -1); --help exits 0" \
  '[ "$rc1$rc2$rc3$rc4" = 2220 ] && grep -q "run-line: expected --model MODEL" "$T/err" && grep -q "usage: planner check" "$T/out"'

# --- one list of presets: the names the refusal of an unknown one prints (from the cost
#     model's table) are the ones every help text, the API's header and the user guide offer
"$PLANNER" search "$SRC/examples/gpt-small.json" --cluster tpu > /dev/null 2> "$T/err"
presets=$(sed -n 's/.*(presets: \(.*\), each optionally.*/\1/p' "$T/err" | tr -d ',')
"$PLANNER" search --help > "$T/h1" 2>&1
"$PLANNER" topology --help > "$T/h2" 2>&1
missing=""
for p in $presets; do
  for f in "$T/h1" "$T/h2" "$SRC/planner/planner.h" "$SRC/docs/user-guide.md"; do
    # topology maps a GPU to its preset: every preset but the cpu backend's
    [ "$f" = "$T/h2" ] && [ "$p" = cpu ] && continue
    grep -qw -- "$p" "$f" || missing="$missing $p:$(basename "$f")"
  done
done
check "every preset is named by search --help, topology --help (the GPUs'), planner.h and the user guide (missing:$missing)" \
  '[ "$(wc -w <<< "$presets")" -ge 6 ] && [ -z "$missing" ]'

finish
