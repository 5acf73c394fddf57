#!/usr/bin/env python3
"""An FP8 linear layer's price against torchao's own measurement of it.

torchao publishes, for its Float8 rowwise recipe on an H100, the measured
speedup over bf16 of LayerNorm -> Linear -> Sigmoid, forward and backward,
both under torch.compile, at 216 shapes M x K x N
(benchmarks/published/torchao-float8-rowwise-h100.csv, with its source).
This script builds that block as a planner model (a LayerNormalization
whose input needs its gradient, a MatMul with a weight, a Sigmoid), prices
it on the h100x1 preset with --gemm-dtype param and with each FP8 recipe,
and prints the predicted speedup (the three ops' compute seconds, from
`planner explain --json`) beside the measured one.

The measurement is of the FP8 linear layer with its casts and rescales: it
checks the recipe's kernels (docs/cost-model.md, "FP8 GEMMs"); nothing is
fitted to it. torchao sums the profiler's kernel durations, without launch
gaps, where the planner adds a launch cost to every kernel: at the small
shapes (a GEMM of a few microseconds) that alone moves the ratio.

Usage: benchmarks/bench_fp8_linear.py [--build DIR] [--recipes R,R,...]
                                      [--csv]
Prints a table per shape and a summary line per recipe on stdout.
"""
import argparse
import csv
import json
import math
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TABLE = os.path.join(HERE, "published", "torchao-float8-rowwise-h100.csv")


def model(m, k, n):
    return {
        "format": "planner.model/1", "name": "ln-linear-sigmoid", "dtype": "bfloat16",
        # x a param so that the LayerNorm's backward runs, as the benchmark's
        # x.requires_grad_(); the norm has no affine params (a constant scale)
        "tensors": {"x": {"shape": [m, k], "role": "param"},
                    "w": {"shape": [k, n], "role": "param"},
                    "s": {"shape": [k], "role": "input"}},
        "ops": [{"name": "ln", "type": "LayerNormalization", "inputs": ["x", "s"],
                 "outputs": ["ln.out"]},
                {"name": "fc", "type": "MatMul", "inputs": ["ln.out", "w"],
                 "outputs": ["fc.out"]},
                {"name": "sig", "type": "Sigmoid", "inputs": ["fc.out"],
                 "outputs": ["sig.out"]}],
        "outputs": ["sig.out"]}


def block_seconds(build, tmp, m, k, n, gemm_dtype):
    path, ck = os.path.join(tmp, "m.json"), os.path.join(tmp, "c.json")
    with open(path, "w") as f:
        json.dump(model(m, k, n), f)
    subprocess.run([os.path.join(build, "planner"), "search", path, "--cluster", "h100x1",
                    "--memory-limit", "none", "--gemm-dtype", gemm_dtype, "-o", ck],
                   check=True, stdout=subprocess.DEVNULL)
    out = subprocess.run([os.path.join(build, "planner"), "explain", ck, "--json"],
                         check=True, capture_output=True, text=True).stdout
    return sum(op["compute_seconds"] for op in json.loads(out)["ops"])


def rows():
    with open(TABLE) as f:
        return [r for r in csv.DictReader(line for line in f if not line.startswith("#"))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(HERE, "..", "build"))
    ap.add_argument("--recipes", default="fp8-rowwise,fp8-tensorwise,fp8",
                    help="the --gemm-dtype values to price (default: all three FP8 ones)")
    ap.add_argument("--csv", action="store_true", help="CSV instead of the table")
    a = ap.parse_args()
    recipes = a.recipes.split(",")
    res = []
    with tempfile.TemporaryDirectory() as tmp:
        for r in rows():
            m, k, n = int(r["M"]), int(r["K"]), int(r["N"])
            bf16 = block_seconds(a.build, tmp, m, k, n, "param")
            pred = {x: bf16 / block_seconds(a.build, tmp, m, k, n, x) for x in recipes}
            res.append((m, k, n, float(r["speedup"]), pred))
    if a.csv:
        print("M,K,N,measured_rowwise," + ",".join("predicted_" + x for x in recipes))
        for m, k, n, meas, pred in res:
            print(f"{m},{k},{n},{meas}," + ",".join(f"{pred[x]:.3f}" for x in recipes))
        return
    print("| M | K | N | measured (rowwise) | " +
          " | ".join(f"predicted {x}" for x in recipes) + " |")
    print("|---|---|---|---|" + "---|" * len(recipes))
    for m, k, n, meas, pred in res:
        print(f"| {m} | {k} | {n} | {meas:.2f} | " +
              " | ".join(f"{pred[x]:.2f}" for x in recipes) + " |")
    print()
    # the rowwise measurement against each recipe's price, over all shapes and
    # over those whose forward GEMM has every side >= 4096 (GEMMs of tens of
    # microseconds and more, where launch gaps do not decide the ratio)
    for x in recipes:
        for name, sel in (("all 216 shapes", lambda m, k, n: True),
                          ("every side >= 4096", lambda m, k, n: min(m, k, n) >= 4096)):
            q = [p[x] / meas for m, k, n, meas, p in res if sel(m, k, n)]
            within = sum(abs(v - 1) <= 0.10 for v in q)
            gm = math.exp(sum(math.log(v) for v in q) / len(q))
            print(f"{x}, {name}: predicted / measured rowwise speedup geomean {gm:.3f}, "
                  f"range {min(q):.2f}-{max(q):.2f}, within 10 % on {within} of {len(q)}")


if __name__ == "__main__":
    sys.exit(main())
