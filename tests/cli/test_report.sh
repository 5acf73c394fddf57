#!/usr/bin/env bash
# cli::report -- `planner report` pages open in headless Chromium (started with
# the flags a closed network needs) for a per-op plan, a pipelined plan and a
# MoE plan, with every part present in the rendered DOM; the page fetches
# nothing, runs no script, and escapes names. Exit 77 (skipped) without
# chromium.
# Usage: test_report.sh PLANNER ZOO SOURCE_DIR
set -u
PLANNER=$1 ZOO=$2 SRC=$3
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
[ -n "$CHROMIUM" ] || { echo "skipped: no chromium (Debian: apt-get install chromium)"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
# no network, no GPU, no sandbox (root in CI), a profile of its own
browse() { # PAGE, then --dump-dom or --screenshot=FILE
  timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run \
    --no-default-browser-check --disable-extensions --disable-background-networking \
    --disable-component-update --disable-sync --disable-default-apps --metrics-recording-only \
    --user-data-dir="$T/profile" --window-size=1050,1600 "$2" "file://$1" 2> "$T/chrome.err"
}

"$ZOO" moe-380m > "$T/moe.json"
"$PLANNER" search "$SRC/examples/gpt-small.json" --devices 8 -o "$T/op.json" > /dev/null 2>&1
"$PLANNER" search "$SRC/examples/gpt-small.json" --devices 8 --pp 2 --micro-batches 4 \
  -o "$T/pp.json" > /dev/null 2>&1
"$PLANNER" search "$T/moe.json" --cluster h100x8 --job --ep 4 -o "$T/moe.plan" > /dev/null 2>&1
for kind in op pp moe; do
  plan=$T/$kind.json
  [ $kind = moe ] && plan=$T/moe.plan
  "$PLANNER" report "$plan" -o "$T/$kind.html" > /dev/null 2> "$T/err"
  check "$kind plan: report exits 0 and writes the page" '[ $? -eq 0 ] && [ -s "$T/$kind.html" ]'
  check "$kind plan: the page is self-contained (no script, nothing fetched)" \
    '! grep -Eqi "<script|https?://|<link|@import|url\\(" "$T/$kind.html"'
  browse "$T/$kind.html" --dump-dom > "$T/$kind.dom"
  check "$kind plan: chromium renders it" '[ $? -eq 0 ] && grep -q "</html>" "$T/$kind.dom"'
  for part in summary mesh schedule memory strategies communication; do
    check "$kind plan: the rendered page has its $part" "grep -q 'id=\"$part\"' '$T/$kind.dom'"
  done
  check "$kind plan: a mesh per kind of group in the plan" \
    '[ "$(grep -o "data-kind=\"[a-z]*\"" "$T/$kind.dom" | sort -u | sed "s/data-kind=//; s/\"//g" | tr "\n" " ")" = "$(jq -r ".groups | keys | sort | join(\" \")" "$plan") " ]'
  check "$kind plan: the step on the page is the checkpoint's" \
    "grep -q \"<b>\$(jq -r '.cost.step_seconds' '$plan' | awk '{ printf \"%.6g\", \$1 }') s</b>\" '$T/$kind.dom'"
done
check "pipelined plan: forward, backward and optimizer passes drawn for each of 2 stages" \
  '[ "$(grep -o "<title>stage 1 forward" "$T/pp.dom" | wc -l)" = 4 ] && grep -q "class=\"bwd\"" "$T/pp.dom" && grep -q "class=\"opt\"" "$T/pp.dom"'
check "MoE plan: an expert-parallel mesh" 'grep -q "data-kind=\"ep\"" "$T/moe.dom"'
for kind in op pp moe; do
  plan=$T/$kind.json
  [ $kind = moe ] && plan=$T/moe.plan
  check "$kind plan: communication by collective and link class, a row for each the checkpoint has" \
    '[ "$(sed -n "/id=\"comm-by-collective\"/,/<\/table>/p" "$T/$kind.dom" | grep -o "<tr data-link=\"[a-z_]*\"><td>[a-z_]*" | sed "s/<tr data-link=\"\([a-z_]*\)\"><td>/\1 /" | tr "\n" ";")" = \
       "$(jq -r ".cost.communication_by_collective[] | \"\(.link) \(.collective)\"" "$plan" | tr "\n" ";")" ]'
done
check "pipelined plan: every stage's memory drawn by category (weights, gradients, optimizer states, activations, transient, reserve)" \
  '[ "$(grep -o "data-stage=\"[0-9]*\"" "$T/pp.dom" | sort -u | wc -l)" = "$(jq .pipeline.stages "$T/pp.json")" ] &&
   [ "$(grep -o "data-category=\"[a-z_]*\"" "$T/pp.dom" | sort | uniq -c | awk "{ print \$1 }" | sort -u | tr "\n" " ")" = "$(jq .pipeline.stages "$T/pp.json") " ] &&
   [ "$(grep -o "data-category=\"[a-z_]*\"" "$T/pp.dom" | sort -u | wc -l)" = 6 ]'
browse "$T/pp.html" --screenshot="$T/shot.png" > /dev/null
check "a screenshot of the page" '[ -s "$T/shot.png" ]'

# names are escaped: an op called a<b&"c shows as text
cat > "$T/odd.json" <<'JSON'
{"format": "planner.model/1", "name": "odd<model>", "tensors": {
  "x": {"shape": [8, 16], "role": "input"}, "w": {"shape": [16, 16], "role": "param"}},
 "ops": [{"name": "a<b&\"c", "type": "MatMul", "inputs": ["x", "w"], "outputs": ["y"]}],
 "outputs": ["y"]}
JSON
"$PLANNER" search "$T/odd.json" --devices 2 -o "$T/odd.plan" > /dev/null 2>&1
"$PLANNER" report "$T/odd.plan" -o "$T/odd.html" > /dev/null 2>&1
browse "$T/odd.html" --dump-dom > "$T/odd.dom"
check "names with <, & and \" are text on the page" \
  'grep -q "<td>a&lt;b&amp;\"c</td>" "$T/odd.dom" && grep -q "odd&lt;model&gt;" "$T/odd.dom"'

# hostile checkpoints (tests/fuzz/regress/report): every string the page shows
# (cluster, mode, schedule, recompute, group, part, category, collective, op
# names and types) carries markup whose handlers would mark the body if they
# ran; every count is out of range. Chromium renders them and runs nothing.
H=$SRC/tests/fuzz/regress/report
"$PLANNER" report "$H/hostile-strings.json" -o "$T/hostile.html" > /dev/null 2> "$T/err"
check "hostile strings: report exits 0" '[ $? -eq 0 ]'
browse "$T/hostile.html" --dump-dom > "$T/hostile.dom"
check "hostile strings: chromium renders the page and no injected handler ran" \
  'grep -q "</html>" "$T/hostile.dom" && ! grep -q "data-pwned=\"1\"" "$T/hostile.dom"'
check "hostile strings: the rendered DOM holds only the report's own elements and attributes" \
  'python3 "$SRC/tests/cli/dom_check.py" "$T/hostile.dom"'
check "hostile strings: the injected markup shows as text" \
  'grep -q "per step on c\"&gt;&lt;img src=x onerror=" "$T/hostile.dom"'
"$PLANNER" report "$H/hostile-numbers.json" -o "$T/numbers.html" > /dev/null 2> "$T/err"
check "hostile numbers (1e300, negative, strings as counts): exit 2 naming the field, no page (fuzz_report renders them unchecked: no crash, only the report's markup)" \
  '[ $? -eq 2 ] && grep -q "hostile-numbers.json: " "$T/err" && [ ! -e "$T/numbers.html" ]'
# the project's fuzz corpus of checkpoints: every page it makes, as Chromium builds its DOM
n=0
for ck in "$SRC"/tests/fuzz/corpus/checkpoint/* "$SRC"/tests/fuzz/corpus/report/* "$H"/*; do
  "$PLANNER" report "$ck" -o "$T/c.html" > /dev/null 2>&1 || continue
  browse "$T/c.html" --dump-dom > "$T/c.dom"
  python3 "$SRC/tests/cli/dom_check.py" "$T/c.dom" || { bad "fuzz corpus: $ck: a foreign element or attribute in the DOM"; continue; }
  n=$((n + 1))
done
check "fuzz corpus: $n pages, each DOM only the report's own markup" '[ $n -ge 4 ]'

"$PLANNER" report "$T/op.json" > /dev/null 2> "$T/err"
check "report without -o exits 2 saying so" '[ $? -eq 2 ] && grep -q -- "-o PAGE.html" "$T/err"'
echo '{"format": "nope"}' > "$T/bad.json"
"$PLANNER" report "$T/bad.json" -o "$T/bad.html" > /dev/null 2> "$T/err"
check "report of a file that is not a checkpoint exits 2, nothing written" \
  '[ $? -eq 2 ] && grep -q "bad.json: format" "$T/err" && [ ! -e "$T/bad.html" ]'
"$PLANNER" report --help | grep -q "usage: planner report"
check "report --help" '[ $? -eq 0 ]'

finish
