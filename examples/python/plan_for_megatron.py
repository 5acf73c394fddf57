#!/usr/bin/env python3
"""A training launcher that asks planner for a plan and starts Megatron-LM with it.

The launcher knows the model (a planner.model/1 file) and the cluster; the
planner chooses how to cut it (data, tensor, pipeline parallel degrees,
micro-batch, ZeRO, recompute) and writes them as Megatron-LM's
pretrain_gpt.py arguments. The model's own flags (layers, hidden size,
sequence length) come from the model file, as a launcher would have them.
It needs no GPU: it prints the command it would run, and the rank groups of
one rank; with --run it runs it (where Megatron-LM and torchrun are).

    PYTHONPATH=python python3 examples/python/plan_for_megatron.py \\
        --model examples/gpt-small.json --devices 8 --tensor-parallel 2
"""

import argparse
import json
import os
import re
import shlex
import subprocess
import sys

# a checkout: the package beside this folder (installed: on sys.path already)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import planner  # noqa: E402


def model_flags(path, heads):
    """The model's own Megatron-LM flags, read from a zoo-style GPT model file."""
    with open(path) as f:
        model = json.load(f)
    tensors = model["tensors"]
    layers = {m.group(1) for m in (re.match(r"l(\d+)\.", t) for t in tensors) if m}
    tokens = next(t for t in tensors.values() if t.get("role") == "input")
    vocab, hidden = tensors["wte"]["shape"] if "wte" in tensors else (None, None)
    flags = [
        ("--num-layers", len(layers)),
        ("--hidden-size", hidden),
        ("--num-attention-heads", heads),
        ("--seq-length", tokens["shape"][1]),
        ("--max-position-embeddings", tokens["shape"][1]),
    ]
    return [str(x) for k, v in flags if v is not None for x in (k, v)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--model", default=os.path.join(here, "..", "gpt-small.json"))
    ap.add_argument("--devices", type=int, default=8, help="GPUs of the job")
    ap.add_argument("--cluster", help="a preset (h100x8, a100x8:2, ...) or a cluster file")
    ap.add_argument("--tensor-parallel", type=int, help="fix the tensor-parallel degree")
    ap.add_argument("--memory-limit", help="bytes per GPU, such as 40G")
    ap.add_argument("--heads", type=int, default=4, help="attention heads (not in the file)")
    ap.add_argument("--run", action="store_true", help="run the command (needs Megatron-LM)")
    a = ap.parse_args()

    settings = {"device_num": a.devices, "cluster": a.cluster, "memory_limit": a.memory_limit}
    if a.tensor_parallel:
        settings["model_parallel"] = a.tensor_parallel
    with planner.Planner(**settings) as p:
        try:
            plan = p.search(a.model)
        except planner.NoPlanError as e:  # a memory limit no plan fits, ...
            sys.exit("no plan: %s" % e)
        except planner.InvalidInputError as e:  # a bad model file or setting
            sys.exit("bad input: %s" % e)
        try:
            exported = p.export_dict(plan, "megatron")
        except planner.InvalidInputError as e:
            # the free search may cut ops in ways Megatron-LM has no flags for
            sys.exit("Megatron-LM cannot run this plan: %s\n"
                     "(fix its degrees: --tensor-parallel N)" % e)

    cost = plan.cost
    print("# plan: %s" % plan)
    print("# predicted step %.3g s, peak memory %.3g GB per GPU, MFU %.1f %%"
          % (cost["step_seconds"], cost["peak_memory_bytes"] / 1e9, 100 * (plan.mfu or 0)))
    print("# rank 0's groups: tp %s, dp %s" % (plan.group("tp", 0), plan.group("dp", 0)))
    print("# Megatron-LM's keys (%s): %s" % (exported["version"], exported["keys"]))

    args = []
    for key, value in exported["keys"].items():
        args.append(key)
        if value not in (None, "", True):  # a switch has no value
            args.append(str(value))
    nodes = plan.as_dict()["cluster"].get("nodes", 1)
    per_node = a.devices // nodes
    launcher = ["torchrun", "--nnodes", str(nodes), "--nproc-per-node", str(per_node)]
    cmd = launcher + ["pretrain_gpt.py"] + model_flags(a.model, a.heads) + args
    print(" ".join(shlex.quote(c) for c in cmd))
    if a.run:
        sys.exit(subprocess.call(cmd))


if __name__ == "__main__":
    main()
