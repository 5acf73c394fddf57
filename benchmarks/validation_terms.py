#!/usr/bin/env python3
"""Where a validation run's predicted step goes, term by term: for each
priced row of benchmarks/validation/runs.csv (as bench_validation.py prices
it: the same model, layout and flags), the share of the predicted step in
GEMMs (MatMul), fused attention, the loss, the other (memory-bound) kernels
and each op's communication, read from `planner explain --json`, beside
predicted / measured.

It also prints, for a row, the factor on the predicted attention time that
would make the step the measured one if every other term were right
("attention needed / predicted"). That number is a diagnostic for reading
where an error sits (it fits nothing and sets nothing: docs/benchmarks.md,
"Validation set", 2026-12-03).

Usage: benchmarks/validation_terms.py [--build DIR] [--framework F]
                                      [--min-seq N] [--max-seq N]
                                      [--model M ...] [--time-limit S]
Prints one line per row to stdout.
"""
import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_validation as bv  # noqa: E402


def term(op_type):
    if op_type == "MatMul":
        return "gemm"
    if op_type == "Attention":
        return "attention"
    if "Loss" in op_type or "CrossEntropy" in op_type or op_type == "Softmax":
        return "loss"
    return "memory-bound"


def explain(r, build, limit):
    """the row's `planner explain --json`, or None where it is not priced"""
    gb, _ = bv.global_batch(r)
    if bv.why_not(r) or not gb:
        return None, gb
    with tempfile.TemporaryDirectory() as t:
        model, plan = os.path.join(t, "m.json"), os.path.join(t, "p.json")
        with open(model, "w") as m:
            if subprocess.run([os.path.join(build, "planner-zoo")] + bv.zoo_args(r, gb),
                              stdout=m, stderr=subprocess.DEVNULL).returncode:
                return None, gb
        if subprocess.run([os.path.join(build, "planner"), "search", model] + bv.search_args(r) +
                          ["--time-limit", str(limit), "-o", plan],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode:
            return None, gb
        e = subprocess.run([os.path.join(build, "planner"), "explain", plan, "--json"],
                           capture_output=True, text=True, check=True)
        return json.loads(e.stdout), gb


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--framework")
    ap.add_argument("--min-seq", type=int, default=0)
    ap.add_argument("--max-seq", type=int, default=1 << 30)
    ap.add_argument("--model", nargs="*")
    ap.add_argument("--time-limit", type=float, default=30)
    a = ap.parse_args()
    bv.BUILD = a.build  # the cluster files bv.search_args writes
    for r in bv.rows("runs.csv"):
        if a.framework and r["framework"] != a.framework:
            continue
        if a.model and r["model"] not in a.model:
            continue
        if not a.min_seq <= bv.integer(r, "seq", 0) <= a.max_seq:
            continue
        e, gb = explain(r, a.build, a.time_limit)
        if not e:
            continue
        meas, _ = bv.measured_step(r, gb)
        step = e["cost"]["step_seconds"]
        t = collections.Counter()
        for o in e["ops"]:
            t[term(o["type"])] += o["compute_seconds"]
            t["communication"] += o["communication_seconds"]
        shares = " ".join(f"{k} {100 * v / step:.0f}%" for k, v in sorted(t.items()))
        line = f"{r['id']} {r['gpu']} {r['model']} seq {r['seq']}"
        if meas:
            line += f" predicted/measured {step / meas:.2f}"
            if t["attention"] > 0:
                need = (meas - (step - t["attention"])) / t["attention"]
                line += f" attention needed/predicted {need:.2f}"
        print(f"{line} | {shares}", flush=True)


if __name__ == "__main__":
    main()
