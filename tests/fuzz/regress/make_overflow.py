#!/usr/bin/python3
"""Writes ONNX models whose sizes overflow 64-bit arithmetic when multiplied or
added as read (one per class of op that computes a shape from its input), for
tests/fuzz/regress/onnx: each must be refused with exit 2 naming the node and
the field, never a sanitizer report (onnx.expect says what each gives).
Run: /usr/bin/python3 tests/fuzz/regress/make_overflow.py [OUT_DIR] (python3-onnx;
OUT_DIR regress/onnx by default)."""
import os
import sys

import onnx
from onnx import TensorProto, helper

out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "onnx")
BIG = 1 << 40
HUGE = (1 << 52)  # within the model format's 9e15 a dimension
I64MAX = (1 << 63) - 1


def const(name, vals, dt=TensorProto.INT64, dims=None):
    return helper.make_node("Constant", [], [name], name=name + "_c",
                            value=helper.make_tensor(name + "_v", dt,
                                                     [len(vals)] if dims is None else dims, vals))


def model(fname, nodes, inputs, outputs, opset=17):
    g = helper.make_graph(nodes, fname, inputs, outputs)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    with open(os.path.join(out, fname), "wb") as f:
        f.write(m.SerializeToString())


def vi(name, dims, dt=TensorProto.FLOAT):
    # a graph output's shape as declared (python ints past 64 bits wrap as protobuf's int64 does)
    return helper.make_tensor_value_info(
        name, dt, None if dims is None else [((d + (1 << 63)) % (1 << 64)) - (1 << 63) for d in dims])


# a graph input's dimensions whose product overflows
model("input-dims-product-overflow.onnx",
      [helper.make_node("Relu", ["x"], ["y"], name="relu")],
      [vi("x", [HUGE, HUGE])], [vi("y", [HUGE, HUGE])])
# Expand to a shape whose product overflows
model("expand-product-overflow.onnx",
      [const("s", [1 << 31, 1 << 31, 1 << 31]),
       helper.make_node("Expand", ["x", "s"], ["y"], name="expand")],
      [vi("x", [1, 1, 1])], [vi("y", [1 << 31, 1 << 31, 1 << 31])])
# Tile by repeats whose products with the dimensions overflow
model("tile-product-overflow.onnx",
      [const("r", [1000000, 1000000]), helper.make_node("Tile", ["x", "r"], ["y"], name="tile")],
      [vi("x", [1 << 30, 1 << 30])], [vi("y", [1000000 << 30, 1000000 << 30])])
model("tile-dim-overflow.onnx",
      [const("r", [I64MAX, 1]), helper.make_node("Tile", ["x", "r"], ["y"], name="tile")],
      [vi("x", [8, 4])], [vi("y", [8 * I64MAX, 4])])
# ConstantOfShape of a shape whose product overflows, added to an input
model("constantofshape-product-overflow.onnx",
      [const("s", [BIG, BIG, BIG]),
       helper.make_node("ConstantOfShape", ["s"], ["c"], name="cos",
                        value=helper.make_tensor("v", TensorProto.FLOAT, [1], [1.0])),
       helper.make_node("Add", ["x", "c"], ["y"], name="add")],
      [vi("x", [1, 1, 4])], [vi("y", [BIG, BIG, BIG])])
# Resize by scales (floats) past int64, and to sizes whose product overflows
model("resize-scales-overflow.onnx",
      [helper.make_node("Constant", [], ["sc"], name="sc_c",
                        value=helper.make_tensor("scv", TensorProto.FLOAT, [4], [1, 1, 1e30, 1e30])),
       helper.make_node("Resize", ["x", "", "sc"], ["y"], name="resize", mode="nearest")],
      [vi("x", [1, 1, 4, 4])], [vi("y", [1, 1, 4, 4])])
model("resize-sizes-overflow.onnx",
      [const("sz", [1, 1, HUGE, HUGE]),
       helper.make_node("Resize", ["x", "", "", "sz"], ["y"], name="resize", mode="nearest")],
      [vi("x", [1, 1, 4, 4])], [vi("y", [1, 1, HUGE, HUGE])])
# Pad by amounts past int64
model("pad-sum-overflow.onnx",
      [const("p", [0, 0, 0, I64MAX, 0, 0, 0, I64MAX]),
       helper.make_node("Pad", ["x", "p"], ["y"], name="pad", mode="constant")],
      [vi("x", [1, 2, 4, 4])], [vi("y", [1, 2, 4, 4])])
# Slice with bounds at int64's ends and a step of INT64_MIN
model("slice-bounds-overflow.onnx",
      [const("st", [-I64MAX - 1]), const("en", [I64MAX]), const("ax", [1]), const("sp", [-I64MAX - 1]),
       helper.make_node("Slice", ["x", "st", "en", "ax", "sp"], ["y"], name="slice")],
      [vi("x", [2, 8])], [vi("y", [2, 8])])
# Range of more elements than int64 counts (folded at import), feeding a Reshape
model("range-count-overflow.onnx",
      [const("a", [-I64MAX - 1], dims=[]), const("b", [I64MAX], dims=[]), const("d", [1], dims=[]),
       helper.make_node("Range", ["a", "b", "d"], ["r"], name="range"),
       helper.make_node("Reshape", ["x", "r"], ["y"], name="reshape")],
      [vi("x", [2, 8])], [vi("y", [2, 8])])
# ConvTranspose whose stride times the input overflows
model("convtranspose-stride-overflow.onnx",
      [helper.make_node("ConvTranspose", ["x", "w"], ["y"], name="deconv", strides=[HUGE, HUGE],
                        output_padding=[0, 0])],
      [vi("x", [1, 2, 8, 8]), vi("w", [2, 2, 3, 3])], [vi("y", [1, 2, 8, 8])])
# Gather whose output (data's outer dims times the indices') overflows
model("gather-product-overflow.onnx",
      [helper.make_node("Gather", ["x", "i"], ["y"], name="gather", axis=1)],
      [vi("x", [HUGE, 8]), vi("i", [HUGE], TensorProto.INT64)], [vi("y", [HUGE, HUGE])])
# Concat of dimensions whose sum overflows
model("concat-sum-overflow.onnx",
      [helper.make_node("Concat", ["x", "z"], ["y"], name="concat", axis=1)],
      [vi("x", [2, HUGE]), vi("z", [2, HUGE])], [vi("y", [2, 2 * HUGE])])
# Flatten of dimensions whose product overflows
model("flatten-product-overflow.onnx",
      [helper.make_node("Flatten", ["x"], ["y"], name="flatten", axis=2)],
      [vi("x", [BIG, BIG, 1])], [vi("y", [BIG * BIG, 1])])
# Conv and pooling whose padded input overflows
model("conv-pads-overflow.onnx",
      [helper.make_node("Conv", ["x", "w"], ["y"], name="conv", pads=[0, 0, I64MAX, I64MAX],
                        kernel_shape=[3, 3])],
      [vi("x", [1, 2, 8, 8]), vi("w", [2, 2, 3, 3])], [vi("y", [1, 2, 8, 8])])
model("pool-dilation-overflow.onnx",
      [helper.make_node("MaxPool", ["x"], ["y"], name="pool", kernel_shape=[HUGE, 2],
                        dilations=[HUGE, 1])],
      [vi("x", [1, 2, 8, 8])], [vi("y", [1, 2, 8, 8])])
# Einsum whose free dimensions' product (the matmul's M) overflows
model("einsum-product-overflow.onnx",
      [helper.make_node("Einsum", ["x", "w"], ["y"], name="einsum", equation="abj,jk->abk")],
      [vi("x", [BIG, BIG, 4]), vi("w", [4, 2])], [vi("y", [BIG, BIG, 2])])
# GroupNormalization of a group whose size (channels x positions / groups) overflows
model("groupnorm-product-overflow.onnx",
      [const("sc", [1, 1], dt=TensorProto.FLOAT), const("bi", [0, 0], dt=TensorProto.FLOAT),
       helper.make_node("GroupNormalization", ["x", "sc", "bi"], ["y"], name="gn", num_groups=2)],
      [vi("x", [1, 2, BIG, BIG])], [vi("y", [1, 2, BIG, BIG])], opset=18)
