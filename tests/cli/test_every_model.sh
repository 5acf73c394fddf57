#!/usr/bin/env bash
# cli::every_model -- issue 47: every ONNX fixture (torchvision's ResNet-18,
# MobileNet v2 and v3, ViT and Swin, the segmentation and U-Net models, the
# transformers, recurrent and convolutional zoos, the weighted set) and every
# torchvision classification and segmentation model (torchvision/, exported in
# training mode by make_torchvision.py; imported with PyTorch's parameter
# count, torchvision/PARAMS) plans in every mode -- dp, rec, ilp, propagate,
# auto and the whole-job search -- on 8 and 64 devices within a time limit
# (at most 20 s for torchvision's): exit 0 and a checkpoint, or a stated
# reason of a known class. A fixture that stops planning in some mode fails
# here. The known classes:
#   import   the importer refuses the file and says why: control flow (If,
#            Loop: not a training graph), an operator or attribute it does
#            not support, a constant larger than it keeps, no output shape
#            for a loss (then imported again with --loss none)
#   annot    propagate spreads annotations, and the fixture has none
#            ("propagate needs at least one annotated op", exit 2)
#   tangled  --mode dp asked for exact dp on a graph whose tables would not
#            fit (DenseNet's concatenations: "too entangled for exact dp",
#            exit 3); the default search and every other mode plan it
# Anything else -- exit 4, exit 3 (no plan in the time given, or none that
# fits: the device's memory is ample for these models at batch 64), a crash
# -- is a failure. Batch 64 (--batch 64) for every symbolic batch.
# Under a sanitizer build (PL_TEST_SANITIZED=1, set by the CMake test when
# PL_SANITIZE is on) a search runs 10-30 times slower: only 8 devices, the
# modes dp, rec and auto, and the fixtures that plan in under a second in
# release (LARGE below left out) and none of torchvision's; .ci/run runs the
# whole matrix on its release build. Times are not checked here (tests assert behaviour; the times and
# the --time-limit bound are benchmarks/bench_every_model.sh's).
# Usage: test_every_model.sh PLANNER SOURCE_DIR [TIME_LIMIT_S (default 60)]
set -u
PLANNER=$1 SRC=$2 TL=${3:-60}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
O=$SRC/tests/fixtures/onnx
MODES="dp rec ilp propagate auto job"
DEVICES="8 64"
LARGE=" llama swin mobilenet_v3_fresh resnet18 resnet18_train seq2seq t5 mobilenet_v2 "
if [ "${PL_TEST_SANITIZED:-0}" = 1 ]; then
  MODES="dp rec auto" DEVICES=8 TL=$((TL * 4))
  echo "# sanitizer build: 8 devices, modes $MODES, without$LARGE"
fi

# the import, or the reason class of its refusal (echoes: ok | import)
import() { # FILE NAME [IMPORT OPTION...]
  local f=$1 name=$2
  shift 2
  if "$PLANNER" import "$f" --batch 64 "$@" -o "$T/$name.json" > /dev/null 2> "$T/ierr"; then
    echo ok
  elif grep -q "no shape: --loss cross-entropy needs one" "$T/ierr" &&
    "$PLANNER" import "$f" --batch 64 --loss none "$@" -o "$T/$name.json" > /dev/null 2> "$T/ierr"; then
    echo ok
  elif grep -Eq "control flow \((If|Loop)\): not a training graph|a sequence of tensors \(|: not supported|is not supported yet|more than the importer keeps" "$T/ierr"; then
    echo import
  else
    echo "failed: $(head -c 300 "$T/ierr")"
  fi
}

# every mode on every device count for model NAME (imported to $T/NAME.json), time limit TLM
plan_all() { # NAME TLM
  local name=$1 tlm=$2 d m rc args
  for d in $DEVICES; do
    for m in $MODES; do
      if [ "$m" = job ]; then args=(--job); else args=(--mode "$m"); fi
      rm -f "$T/plan.json"
      "$PLANNER" search "$T/$name.json" --devices "$d" "${args[@]}" --time-limit "$tlm" \
        -o "$T/plan.json" > /dev/null 2> "$T/err"
      rc=$?
      if [ $rc -eq 0 ] && jq -e '.parallel_strategy_item | length > 0' "$T/plan.json" > /dev/null 2>&1; then
        ok "$name on $d devices, $m: a plan"
      elif [ "$m" = propagate ] && [ $rc -eq 2 ] && grep -q "propagate needs at least one annotated op" "$T/err"; then
        ok "$name on $d devices, propagate: no annotation to spread (stated)"
      elif [ "$m" = dp ] && [ $rc -eq 3 ] && grep -q "too entangled for exact dp" "$T/err"; then
        ok "$name on $d devices, dp: too entangled for exact dp (stated; the default search plans it)"
      else
        bad "$name on $d devices, $m: exit $rc: $(head -c 300 "$T/err" | tr '\n' ' ')"
      fi
    done
  done
}

n=0
for f in "$O"/*.onnx "$O"/weighted/*.onnx "$O"/unsupported/*.onnx; do
  name=$(basename "$f" .onnx)
  case $f in */weighted/*) name=weighted_$name ;; */unsupported/*) name=unsupported_$name ;; esac
  if [ "${PL_TEST_SANITIZED:-0}" = 1 ] && [[ $LARGE == *" $name "* ]]; then continue; fi
  r=$(import "$f" "$name")
  case $r in
    ok) ;;
    import) ok "$name: the importer refuses it with a stated reason ($(head -c 120 "$T/ierr" | tr '\n' ' '))"; continue ;;
    *) bad "$name: import $r"; continue ;;
  esac
  n=$((n + 1))
  plan_all "$name" "$TL"
done

# torchvision's classification and segmentation models: each imported with
# PyTorch's parameter count (no buffer counted, no weight lost; PARAMS gives
# --const for the buffers nothing in the graph tells from weights), each planned
TV=$O/torchvision
if [ "${PL_TEST_SANITIZED:-0}" != 1 ]; then
  ntv=0
  while read -r model want rest; do # MODEL PARAMETERS [IMPORT OPTION...] (not globbed)
    read -ra extra <<< "$rest"
    name=tv_$model
    if [ ! -f "$TV/$model.onnx" ]; then
      bad "$name: torchvision/PARAMS lists it, torchvision/$model.onnx is missing"
      continue
    fi
    r=$(import "$TV/$model.onnx" "$name" "${extra[@]}")
    if [ "$r" != ok ]; then
      bad "$name: import $r"
      continue
    fi
    got=$(jq '[.tensors[] | select(.role == "param") | .shape | reduce .[] as $d (1; . * $d)] | add' "$T/$name.json")
    check "$name: $got parameters imported, as PyTorch counts them ($want)" '[ "$got" = "$want" ]'
    ntv=$((ntv + 1))
    plan_all "$name" "$((TL < 20 ? TL : 20))"
  done < "$TV/PARAMS"
  check "torchvision: every model listed imported ($ntv of $(ls "$TV"/*.onnx | wc -l) exports; 86 in torchvision 0.14)" \
    '[ "$ntv" -ge 86 ] && [ "$ntv" = "$(ls "$TV"/*.onnx | wc -l)" ]'
fi
check "fixtures planned (at least 30; 8 under a sanitizer)" \
  '[ "$n" -ge "$([ "${PL_TEST_SANITIZED:-0}" = 1 ] && echo 8 || echo 30)" ]'
finish
