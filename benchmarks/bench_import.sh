#!/usr/bin/env bash
# ONNX import speed: torchvision's ViT-B/16, ResNet-50 and Swin-T (224x224, as
# torchvision defines them, weights stripped), exported here with Debian's
# python3-torch/-torchvision/-onnx (this benchmark needs them; the tests do
# not), then `planner import` timed as a whole process, best of 5.
# Usage: benchmarks/bench_import.sh [BUILD_DIR]     Markdown table on stdout.
set -euo pipefail
B=${1:-build}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
if ! /usr/bin/python3 -c "import torch, torchvision, onnx" 2> /dev/null; then
  echo "bench_import: needs Debian's python3-torch, python3-torchvision and python3-onnx" >&2
  exit 4
fi
/usr/bin/python3 - "$T" > /dev/null 2>&1 << 'PY'
import sys, torch, torchvision, onnx
from onnx import shape_inference
out = sys.argv[1]
# Swin-T at opset 17 without constant folding (which would fold each block's
# gathered relative position bias into a new initializer in place of its table)
for name, ctor, opset, fold in [("vit_b_16", torchvision.models.vit_b_16, 14, True),
                                ("resnet50", torchvision.models.resnet50, 14, True),
                                ("swin_t", torchvision.models.swin_t, 17, False)]:
    path = "%s/%s.onnx" % (out, name)
    m = ctor().eval()
    torch.onnx.export(m, (torch.randn(1, 3, 224, 224),), path, input_names=["x"],
                      output_names=["out"], opset_version=opset, dynamic_axes={"x": {0: "batch"}},
                      do_constant_folding=fold)
    g = shape_inference.infer_shapes(onnx.load(path))
    for t in g.graph.initializer:  # dims kept, data dropped (scalars, an epsilon, stay)
        n = 1
        for d in t.dims:
            n *= d
        if t.data_type == onnx.TensorProto.FLOAT and n > 1:
            t.ClearField("raw_data")
            t.ClearField("float_data")
    onnx.save(g, path)
PY
echo "| model | nodes | file KB | params | import wall s (best of 5) | max RSS MB |"
echo "|---|---|---|---|---|---|"
for m in vit_b_16 resnet50 swin_t; do
  best=""
  for i in 1 2 3 4 5; do
    /usr/bin/time -f "%e %M" -o "$T/t" "$B/planner" import "$T/$m.onnx" --batch 32 -o "$T/$m.json" \
      > /dev/null
    read -r wall rss < "$T/t"
    if [ -z "$best" ] || awk -v a="$wall" -v b="$best" 'BEGIN { exit !(a < b) }'; then
      best=$wall bestrss=$rss
    fi
  done
  nodes=$(/usr/bin/python3 -c "import onnx, sys; print(len(onnx.load(sys.argv[1]).graph.node))" "$T/$m.onnx")
  params=$(jq '[.tensors[] | select(.role == "param") | .shape | reduce .[] as $d (1; . * $d)] | add' "$T/$m.json")
  printf "| %s | %s | %.0f | %s | %s | %.0f |\n" "$m" "$nodes" "$(stat -c %s "$T/$m.onnx" | awk '{ print $1 / 1024 }')" \
    "$params" "$best" "$(awk -v k="$bestrss" 'BEGIN { print k / 1024 }')"
done
