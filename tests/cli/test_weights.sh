#!/usr/bin/env bash
# planner run --weights MODEL.onnx --batch-file NAME=FILE (issue 50 item 3): the first loss of the
# models of tests/fixtures/onnx/weighted/, exported by PyTorch with their weights and a batch as
# .npy files, is PyTorch's own (weighted/REFERENCE: F.cross_entropy in float64, written by
# make_weighted.py; no torch here) within 1e-5 relative, on 1 rank and under plans for 2 and 4
# (batch, tensor-parallel and default cuts, ZeRO 3; micro-batches and pipeline stages for the
# MLP),
# from a raw float32 file as from the .npy; drawn weights give another loss; every bad file or
# name exits 2 naming the file and the field. And the appended loss's classes axis, said for
# outputs of rank 3 and more (item 5).
# Usage: test_weights.sh PLANNER SOURCE_DIR
set -uo pipefail
P=$1
SRC=$2
W="$SRC/tests/fixtures/onnx/weighted"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
rel_close() { # A within 1e-5 relative of B
  isnum "$1" && isnum "$2" &&
    awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; s = b < 0 ? -b : b
      exit !(d <= 1e-5 * s) }'
}
first_loss() { # MODEL PLAN [args...]: step 1's loss, or nothing
  local m=$1 plan=$2
  shift 2
  "$P" run "$W/$m.onnx" --strategy "$plan" --steps 1 --json "$@" 2> "$T/err" |
    jq -r 'select(.step == 1) | .loss'
}
given() { echo --weights "$W/$1.onnx" --batch-file "x=$W/$1.x.npy" --batch-file "labels=$W/$1.labels.npy"; }

models=$(grep -v '^#' "$W/REFERENCE" | cut -d' ' -f1)
check "nineteen models with PyTorch's first losses" '[ "$(echo $models | wc -w)" = 19 ]'
for m in $models; do
  ref=$(awk -v m="$m" '$1 == m { print $2 }' "$W/REFERENCE")
  # shellcheck disable=SC2046
  for cfg in "1" "2 --dp 2" "2 --tp 2" "4" "4 --dp 2 --tp 2" "2 --dp 2 --micro-batches 2" \
    "2 --dp 2 --zero 3" "4 --pp 2 --micro-batches 2"; do
    read -r n opts <<< "$cfg"
    case "$m:$opts" in
      cnn_bn:*micro*) continue ;;   # its batch norm's statistics would be a micro-batch's
      mlp:*micro*) ;;               # the others' batches are 2 (tiny_lm, convmix, segment)
      unfolded:*--pp*) ;;           # one sequence a micro-batch: reshaped weights stay whole
      *:*micro*) continue ;;
      lstm:*--dp* | gru_tanh:*--dp*) continue ;; # [sequence, batch, input]: dimension 0 no batch
    esac
    # shellcheck disable=SC2086
    if ! "$P" search "$W/$m.onnx" --devices "$n" $opts -o "$T/plan.json" > /dev/null 2> "$T/err"; then
      bad "$m: search --devices $n $opts: $(head -2 "$T/err")"
      continue
    fi
    # shellcheck disable=SC2046
    got=$(first_loss "$m" "$T/plan.json" $(given "$m"))
    if rel_close "$got" "$ref"; then
      ok "$m on $n ranks ${opts:-(default plan)}: first loss $got, PyTorch's $ref"
    else
      bad "$m on $n ranks ${opts:-(default plan)}: first loss '$got', PyTorch's $ref"
      head -3 "$T/err" | sed 's/^/# /'
    fi
  done
done

# ranks as processes: every process reads the files, rank 0 reports PyTorch's loss
if command -v mpirun > /dev/null; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  export ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0
  for cfg in "cnn_bn --dp 2" "tiny_lm --tp 2"; do
    read -r m opts <<< "$cfg"
    ref=$(awk -v m="$m" '$1 == m { print $2 }' "$W/REFERENCE")
    # shellcheck disable=SC2086,SC2046
    "$P" search "$W/$m.onnx" --devices 2 $opts -o "$T/mpi.json" > /dev/null 2>&1 &&
      got=$(timeout 120 mpirun --oversubscribe --bind-to none -np 2 "$P" run "$W/$m.onnx" \
        --strategy "$T/mpi.json" --steps 1 --json $(given "$m") 2> "$T/err" |
        jq -r 'select(.step == 1) | .loss')
    check "$m under mpirun -np 2 ($opts): first loss ${got:-none}, PyTorch's $ref" 'rel_close "$got" "$ref"'
  done
else
  echo "# skipped the mpirun runs: no mpirun"
fi

# the weights are what makes the loss PyTorch's: drawn ones give another
"$P" search "$W/mlp.onnx" --devices 1 -o "$T/one.json" > /dev/null 2>&1
drawn=$(first_loss mlp "$T/one.json" --batch-file "x=$W/mlp.x.npy" --batch-file "labels=$W/mlp.labels.npy")
ref=$(awk '$1 == "mlp" { print $2 }' "$W/REFERENCE")
check "mlp without --weights: another first loss ($drawn)" 'isnum "$drawn" && ! rel_close "$drawn" "$ref"'

# raw little-endian files: x's float32 data without the .npy header, labels as int32
python3 - "$W" "$T" << 'EOF'
import struct, sys
w, t = sys.argv[1], sys.argv[2]
def body(path):
    b = open(path, "rb").read()
    n = struct.unpack("<H", b[8:10])[0]
    return b[10 + n:]
open(t + "/x.raw", "wb").write(body(w + "/mlp.x.npy"))
lab = body(w + "/mlp.labels.npy")
ints = struct.unpack("<%dq" % (len(lab) // 8), lab)
open(t + "/labels32.raw", "wb").write(struct.pack("<%di" % len(ints), *ints))
EOF
got=$(first_loss mlp "$T/one.json" --weights "$W/mlp.onnx" --batch-file "x=$T/x.raw" \
  --batch-file "labels=$T/labels32.raw")
check "raw float32 x and int32 labels: PyTorch's first loss ($got)" 'rel_close "$got" "$ref"'
"$P" run "$W/mlp.onnx" --strategy "$T/one.json" --steps 1 $(given mlp) > "$T/out" 2>&1
check "the run says where its values come from" \
  'grep -q "weights: 6 of 6 params from .*mlp.onnx" "$T/out" && grep -q "inputs: x (given) labels (given)" "$T/out"'

# a const without values (a buffer exported without its data) runs once --weights gives it
"$P" import "$W/mlp.onnx" --const 'norm.weight' -o "$T/c.json" > /dev/null 2>&1
jq 'del(.tensors["norm.weight"].values)' "$T/c.json" > "$T/novalues.json"
"$P" search "$T/novalues.json" --devices 2 -o "$T/c2.json" > /dev/null 2>&1
"$P" run "$T/novalues.json" --strategy "$T/c2.json" --steps 1 > /dev/null 2> "$T/err"
check "a const without values: refused without --weights" \
  '[ $? -eq 2 ] && grep -q "const .norm.weight. (read by op .*) has no values" "$T/err"'
"$P" run "$T/novalues.json" --strategy "$T/c2.json" --steps 1 $(given mlp) > "$T/out" 2> "$T/err"
got=$(awk '$1 == "step" && $2 == 1 { print $4 }' "$T/out")
check "a const without values given by --weights: PyTorch's first loss ($got), said" \
  'rel_close "$got" "$ref" && grep -q "weights: 5 of 5 params and 1 const without values" "$T/out"'
# one input (--loss none): FILE alone is its batch; a NAME= naming no input is not a path
"$P" search "$W/mlp.onnx" --loss none --devices 1 -o "$T/none.json" > /dev/null 2>&1
"$P" run "$W/mlp.onnx" --loss none --strategy "$T/none.json" --steps 1 --batch-file "$W/mlp.x.npy" \
  > "$T/out" 2> "$T/err"
check "one input: --batch-file FILE without NAME=" '[ $? -eq 0 ] && grep -q "inputs: x (given)" "$T/out"'
"$P" run "$W/mlp.onnx" --loss none --strategy "$T/none.json" --steps 1 \
  --batch-file "data=$W/mlp.x.npy" > /dev/null 2> "$T/err"
check "one input: data=FILE names no input: exit 2 listing x" \
  '[ $? -eq 2 ] && grep -q "data=.*expected NAME=FILE, NAME one of the model.s inputs: x$" "$T/err"'

# which dimension the appended loss takes as the classes, said for outputs of rank 3 and more
# (issue 50 item 5): the last of tiny_lm's [2, 8, 50] (auto), dimension 1 of segment.onnx's
# [N, 4, 8, 8] (auto), the last under --loss-axis last; nothing for mlp's [8, 10]
"$P" search "$W/tiny_lm.onnx" --devices 1 -o "$T/lm.json" > /dev/null 2>&1
"$P" run "$W/tiny_lm.onnx" --strategy "$T/lm.json" --steps 1 --json > /dev/null 2> "$T/err"
check "run: rank 3 [2, 8, 50] under auto: the classes on the last dimension, --loss-axis 1 named" \
  'grep -q "the appended cross-entropy takes the classes on the last dimension of output .out. \[2, 8, 50\] (auto at rank 3.*--loss-axis 1 for \[N, C, L\]" "$T/err"'
SEG="$SRC/tests/fixtures/onnx/segment.onnx"
"$P" import "$SEG" --batch 2 -o "$T/seg.json" > /dev/null 2> "$T/err"
check "import: rank 4 under auto: the classes on dimension 1" \
  'grep -q "classes on dimension 1 of output .y. \[2, 4, 8, 8\] (auto at rank 4" "$T/err"'
"$P" import "$SEG" --batch 2 --loss-axis last -o "$T/seg.json" > /dev/null 2> "$T/err"
check "import --loss-axis last: the classes on the last dimension, as asked" \
  'grep -q "classes on the last dimension of output .y. \[2, 4, 8, 8\] (--loss-axis)" "$T/err"'
"$P" import "$W/mlp.onnx" -o "$T/mlp.json" > /dev/null 2> "$T/err"
check "import of a rank-2 output: no note" '[ ! -s "$T/err" ]'

# bad input: exit 2, the message naming the file and the field
expect2() { # MSG PATTERN ARGS...: exit 2 and the pattern in stderr
  local what=$1 pat=$2
  shift 2
  "$P" run "$W/mlp.onnx" --strategy "$T/one.json" --steps 1 "$@" > /dev/null 2> "$T/err"
  local rc=$?
  if [ $rc -eq 2 ] && grep -q -- "$pat" "$T/err"; then
    ok "$what: exit 2, '$(head -1 "$T/err" | cut -c1-150)'"
  else
    bad "$what: exit $rc, '$(head -2 "$T/err")' (wanted '$pat')"
  fi
}
python3 - "$W" "$T" << 'EOF'
import struct, sys
w, t = sys.argv[1], sys.argv[2]
def npy(name, header, data, version=1):
    h = header.encode()
    pad = (-(10 + len(h) + 1)) % 64
    h += b" " * pad + b"\n"
    out = b"\x93NUMPY" + bytes([version, 0]) + struct.pack("<H", len(h)) + h + data
    open(t + "/" + name, "wb").write(out)
x = open(w + "/mlp.x.npy", "rb").read()
n = struct.unpack("<H", x[8:10])[0]
xd = x[10 + n:]  # 8 x 16 float32
labels = struct.pack("<8q", *range(8))
npy("shape.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (16, 8), }", xd)
npy("fortran.npy", "{'descr': '<f4', 'fortran_order': True, 'shape': (8, 16), }", xd)
npy("big.npy", "{'descr': '>f4', 'fortran_order': False, 'shape': (8, 16), }", xd)
npy("key.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (8, 16), 'x': 1}", xd)
npy("short.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (8, 16), }", xd[:-4])
npy("nodescr.npy", "{'fortran_order': False, 'shape': (8, 16), }", xd)
npy("floatlabels.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (8,), }",
    struct.pack("<8f", *range(8)))
npy("class10.npy", "{'descr': '<i8', 'fortran_order': False, 'shape': (8,), }",
    struct.pack("<8q", 0, 1, 2, 3, 4, 5, 6, 10))
npy("v9.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (8, 16), }", xd, 9)
open(t + "/odd.raw", "wb").write(xd[:100])
EOF
L="labels=$W/mlp.labels.npy"
expect2 "--batch-file of another shape" "shape.npy: .npy header: 'shape'" --batch-file "x=$T/shape.npy" --batch-file "$L"
expect2 "fortran_order True" "fortran.npy: .npy header: 'fortran_order' is True" --batch-file "x=$T/fortran.npy"
expect2 "a big-endian descr" "big.npy: .npy header: 'descr' is '>f4'" --batch-file "x=$T/big.npy"
expect2 "a key numpy does not write" "key.npy: .npy header: key 'x'" --batch-file "x=$T/key.npy"
expect2 "data shorter than the shape" "short.npy: .npy data: 508 bytes" --batch-file "x=$T/short.npy"
expect2 "no descr" "nodescr.npy: .npy header: no 'descr'" --batch-file "x=$T/nodescr.npy"
expect2 "float labels" "floatlabels.npy: .npy header: 'descr'.*expected an integer" --batch-file "labels=$T/floatlabels.npy"
expect2 "a label past the classes" "values for 'labels': element 7 is 10; op 'loss'" --batch-file "labels=$T/class10.npy"
expect2 "a .npy version it does not know" "v9.npy: .npy version 9.0" --batch-file "x=$T/v9.npy"
expect2 "a raw file of another size" "odd.raw: 100 bytes: not a .npy file" --batch-file "x=$T/odd.raw"
expect2 "an input the model does not have" "expected NAME=FILE, NAME one of the model's inputs: x, labels" --batch-file "y=$T/x.raw"
expect2 "no NAME with two inputs" "expected NAME=FILE" --batch-file "$T/x.raw"
expect2 "a param named as an input" "'fc1.weight' is a param, not an input" --batch-file "fc1.weight=$T/x.raw"
expect2 "an input given twice" "input 'x' is given twice" --batch-file "x=$T/x.raw" --batch-file "x=$T/x.raw"
S="$SRC/tests/fixtures/onnx/mlp.onnx" # exported with its weights stripped (dims only)
"$P" search "$S" --batch 8 --devices 1 -o "$T/stripped.json" > /dev/null 2>&1
"$P" run "$S" --batch 8 --strategy "$T/stripped.json" --steps 1 --weights "$S" > /dev/null 2> "$T/err"
rc=$?
check "weights stripped of their data: exit 2 ($rc), naming the file and the initializer" \
  '[ $rc -eq 2 ] && grep -q "mlp.onnx: --weights: initializer .fc1.weight.: it holds dims only" "$T/err"'
expect2 "another model's weights" "cnn_bn.onnx: --weights: the model's param 'fc1.weight' is not an initializer" \
  --weights "$W/cnn_bn.onnx"
expect2 "a weights file that is not ONNX" "mlp.x.npy: --weights: not an ONNX model" --weights "$W/mlp.x.npy"
expect2 "a missing batch file" "nothere.npy" --batch-file "x=$T/nothere.npy"
finish
