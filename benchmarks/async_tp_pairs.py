#!/usr/bin/env python3
"""Checks the planner's --tp-comm-overlap against torchtitan's published
async tensor-parallel pairs (benchmarks/validation/runs.csv, ids ttasync-*:
the same job measured with vanilla TP and with async TP, tokens/s a GPU,
pytorch/torchtitan benchmarks/asyncTP_llama3_h100_2025-06_torchtitan.md).

Each pair is priced with its row's layout (bench_validation.py's arguments),
the vanilla row without and the async row with --tp-comm-overlap on, and the
predicted speedup (vanilla step / async step) printed beside the measured one
(async tokens/s / vanilla tokens/s). The rows publish no global batch; it is
taken as torchtitan defines it, the local batch (the micro_batch column)
times the data-parallel ranks, which only scales both steps alike.

Usage: benchmarks/async_tp_pairs.py [--build DIR]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_validation as bv  # noqa: E402


def price(build, r, extra, t):
    tp, pp, cp = bv.integer(r, "tp"), bv.integer(r, "pp"), bv.integer(r, "cp", 1)
    dp = bv.integer(r, "dp") or bv.integer(r, "gpus") // (tp * pp * cp)
    gb = bv.integer(r, "micro_batch") * dp
    model, plan = os.path.join(t, r["id"] + ".json"), os.path.join(t, r["id"] + ".plan.json")
    with open(model, "w") as f:
        subprocess.run([os.path.join(build, "planner-zoo")] + bv.zoo_args(r, gb), stdout=f,
                       check=True)
    q = subprocess.run([os.path.join(build, "planner"), "search", model] + bv.search_args(r) +
                       extra + ["--time-limit", "60", "-o", plan],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if q.returncode:
        return None
    with open(plan) as f:
        return json.load(f)["cost"]["step_seconds"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build")
    a = ap.parse_args()
    bv.BUILD = a.build  # the cluster files bv.search_args writes
    rows = {r["id"]: r for r in bv.rows("runs.csv") if r["id"].startswith("ttasync-")}
    print("| pair | tp | measured speedup | predicted speedup |")
    print("|---|---|---|---|")
    with tempfile.TemporaryDirectory() as t:
        for k in sorted(rows):
            if not k.endswith("-vanillaTP"):
                continue
            v, w = rows[k], rows.get(k[:-len("vanillaTP")] + "asyncTP")
            if w is None:
                continue
            sv, sw = price(a.build, v, [], t), price(a.build, w, ["--tp-comm-overlap", "on"], t)
            meas = float(w["measured_tokens_per_s_per_gpu"]) / float(
                v["measured_tokens_per_s_per_gpu"])
            pred = f"{sv / sw:.3f}" if sv and sw else "not priced"
            print(f"| {k[len('ttasync-'):-len('-vanillaTP')]} | {v['tp']} | {meas:.3f} | {pred} |")


if __name__ == "__main__":
    main()
