#!/usr/bin/env python3
"""Reference outputs of the GridSample check in test_exec.c
(gridsample_matches_pytorch): PyTorch's F.grid_sample on X [1, 2, 3, 4] and
a grid [1, 2, 3, 2] of the formulas below (some positions outside [-1, 1]),
in the four combinations of bilinear/nearest, zeros/border and
align_corners; prints the C initialisers. Run with torch installed:
    python3 tests/executor/gridsample_reference.py
"""
import numpy as np
import torch
import torch.nn.functional as F


def vals(n, a, m, scale):
    """n values ((k * a) % m - m // 2) * scale: the same formula as the test"""
    return np.array([((k * a) % m - m // 2) * scale for k in range(n)], dtype=np.float32)


x = torch.tensor(vals(24, 7, 11, 0.5).reshape(1, 2, 3, 4))
grid = torch.tensor(vals(12, 5, 13, 0.21).reshape(1, 2, 3, 2))
for mode, pad, ac in [("bilinear", "zeros", False), ("bilinear", "border", True),
                      ("nearest", "zeros", False), ("nearest", "border", True)]:
    y = F.grid_sample(x, grid, mode=mode, padding_mode=pad, align_corners=ac)
    body = ", ".join(("%.8g" % v) + ("" if "." in "%.8g" % v or "e" in "%.8g" % v else ".0") + "f"
                     for v in y.numpy().reshape(-1))
    print("/* %s, %s, align_corners %d */ {%s}}," % (mode, pad, ac, body))
