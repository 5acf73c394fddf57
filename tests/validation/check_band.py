#!/usr/bin/env python3
"""The uncalibrated error band (PL_BAND_LO, PL_BAND_HI, PL_BAND_RUNS in costmodel/cluster.h,
printed by every answer) and the memory band (PL_MEM_BAND_HI, PL_MEM_BAND_RUNS: the 90th
percentile of measured / predicted peak over the runs with a published peak, which the search's
memory headroom uses; PL_MEM_BAND_MID, the median, its second level) are the spread of the validation set,
and the most model TFLOP/s per device it measured per GPU family and GEMM precision
(PL_SEEN_TFLOPS_*, the note on plans priced above it) its best: the 10th and 90th percentiles of
measured / predicted step over the published runs with a measured step or tokens/s, as
benchmarks/bench_validation.py priced them into benchmarks/results/validation.jsonl, widened
outward to two decimals. This check fails when the validation results and the band disagree
(a change of the model re-runs the bench; the band must follow), and when docs/cost-model.md
states other numbers, and when benchmarks/results/validation.md is not the bench's report of
that validation.jsonl (bench_validation.py --report), so the recorded tables and the recorded
results say the same. Usage: check_band.py SOURCE_DIR"""
import contextlib
import io
import json
import os
import re
import sys


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else "."
    sys.path.insert(0, os.path.join(src, "benchmarks"))
    # the bench's own definitions of the bands
    from bench_validation import (header_constants, memory_band, read_results, report,
                                  seen_name, seen_tflops, step_band)
    with open(f"{src}/benchmarks/results/validation.jsonl") as f:
        res = [json.loads(line) for line in f]
    lo, hi, n = step_band(res)
    mhi, mmid, mn = memory_band(res)
    names = ("PL_BAND_LO", "PL_BAND_HI", "PL_BAND_RUNS", "PL_MEM_BAND_HI", "PL_MEM_BAND_MID",
             "PL_MEM_BAND_RUNS")
    got = dict(zip(names, header_constants(*names)))
    want = {"PL_BAND_LO": lo, "PL_BAND_HI": hi, "PL_BAND_RUNS": n, "PL_MEM_BAND_HI": mhi,
            "PL_MEM_BAND_MID": mmid, "PL_MEM_BAND_RUNS": mn}
    bad = [f"{k} is {got[k]:g} in costmodel/cluster.h; benchmarks/results/validation.jsonl "
           f"gives {want[k]:g}" for k in want if abs(got[k] - want[k]) > 1e-9]
    seen = seen_tflops(res)
    for k, (v, run) in seen.items():
        (have,) = header_constants(seen_name(k))
        if abs(have - v) > 1e-9:
            bad.append(f"{seen_name(k)} is {have:g} in costmodel/cluster.h; "
                       f"benchmarks/results/validation.jsonl gives {v:g} ({run})")
    hdr = open(f"{src}/costmodel/cluster.h").read()
    for name, v in (("PL_MEM_BAND_TEXT", mhi), ("PL_MEM_BAND_MID_TEXT", mmid)):
        text = f'#define {name} "{v:.2f}"'
        if not re.search(rf'#define {name}\s+"{v:.2f}"', hdr):
            bad.append(f"costmodel/cluster.h does not say '{text}' (the help texts' copy)")
    doc = open(f"{src}/docs/cost-model.md").read()
    said = f"of the {n} published runs"
    if said not in doc or f"between {lo:.2f} and {hi:.2f} times" not in doc:
        bad.append(f"docs/cost-model.md does not say '{said}' and 'between {lo:.2f} and "
                   f"{hi:.2f} times' (the band's paragraph)")
    said = f"{mhi:.2f} times the predicted peak for 90 % of the {mn} published runs"
    if said not in doc:
        bad.append(f"docs/cost-model.md does not say '{said}' (the memory band's paragraph)")
    most = ", ".join(f"{k[0]} {'16-bit' if k[1] == '16' else k[1]} {v:.1f}"
                     for k, (v, run) in seen.items() if run)
    flat = " ".join(doc.split())
    if most.replace(", ", " TFLOP/s, ", 1) not in flat:
        bad.append(f"docs/cost-model.md does not say '{most.replace(', ', ' TFLOP/s, ', 1)}' "
                   f"(the most measured TFLOP/s, 'How far to trust a step')")
    said = f"{mmid:.2f} times for half of them"
    if said not in doc:
        bad.append(f"docs/cost-model.md does not say '{said}' (the memory band's median)")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        report(read_results(f"{src}/benchmarks/results/validation.jsonl"))
    with open(f"{src}/benchmarks/results/validation.md") as f:
        recorded = f.read()
    if out.getvalue() != recorded:
        first = next((k + 1 for k, (a, b) in enumerate(zip(out.getvalue().splitlines(),
                                                            recorded.splitlines())) if a != b),
                     min(len(out.getvalue().splitlines()), len(recorded.splitlines())) + 1)
        bad.append(f"benchmarks/results/validation.md differs from the report of "
                   f"validation.jsonl from line {first} (bench_validation.py --report "
                   f"benchmarks/results/validation.jsonl > benchmarks/results/validation.md)")
    for b in bad:
        print("not ok:", b)
    if not bad:
        print(f"ok: band {lo:.2f}-{hi:.2f} over {n} runs, memory band {mhi:.2f} (median "
              f"{mmid:.2f}) over {mn} runs, the most TFLOP/s measured ({most}), as the "
              f"validation results give; validation.md is their report")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
