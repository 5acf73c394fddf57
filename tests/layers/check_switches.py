#!/usr/bin/env python3
"""No `default:` in a switch over a project enum (issue 48 item 3): such a
switch names every enumerator and is written on the enum's type, so that
gcc's -Wswitch (in -Wall) reports the one a new enumerator leaves out
instead of sending it silently down the default branch.

A switch is over a project enum when one of its case labels is an
identifier in capitals that is not a foreign library's (ONNX__*, the
protobuf-c enums of onnx.proto; CUDA's and NCCL's enumerators are left
to their own code); switches over characters, numbers and foreign enums may
keep their default.

Usage: check_switches.py SOURCE_DIR
       check_switches.py --self-test: a file with each kind of switch, the
           offending one reported and nothing else.
Exit 1, each offending switch on its own line (FILE:LINE), when any is
found.
"""
import os
import re
import sys
import tempfile

FOLDERS = ("graph", "costmodel", "search", "executor", "topology", "planner", "tests", "benchmarks")
FOREIGN = ("ONNX__", "GLP_", "CUDA", "NCCL", "CUBLAS", "HWLOC_", "MPI_", "cJSON_")
CASE = re.compile(r"\bcase\s+([A-Za-z_][A-Za-z0-9_]*)\s*:")


def strip(text):
    """comments and string/character literals blanked, newlines kept"""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + "x" * max(0, min(j, n) - i - 1) + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def offending(text):
    """line numbers of switches over project enums with a top-level default"""
    s = strip(text)
    lines = []
    for m in re.finditer(r"\bswitch\s*\(", s):
        i = s.find("{", m.end())
        if i < 0:
            continue
        depth, j = 1, i + 1
        start = j
        while j < len(s) and depth:
            if s[j] == "{":
                depth += 1
            elif s[j] == "}":
                depth -= 1
            j += 1
        body = s[start : j - 1]
        # the switch's own labels: nested switches' bodies blanked
        own = re.sub(r"\bswitch\s*\([^)]*\)\s*\{", "switch{", body)
        while True:
            n = re.search(r"switch\{", own)
            if not n:
                break
            q, dd = n.end(), 1
            while q < len(own) and dd:
                dd += {"{": 1, "}": -1}.get(own[q], 0)
                q += 1
            own = own[: n.start()] + " " * (q - n.start()) + own[q:]
        labels = CASE.findall(own)
        project = [l for l in labels if l.isupper() and not l.startswith(FOREIGN)]
        if project and re.search(r"\bdefault\s*:", own):
            lines.append(s[: m.start()].count("\n") + 1)
    return lines


def check(src):
    bad = []
    for folder in FOLDERS:
        for root, _, files in os.walk(os.path.join(src, folder)):
            for f in sorted(files):
                if f.endswith((".c", ".h", ".cu")):
                    p = os.path.join(root, f)
                    with open(p, encoding="utf-8", errors="replace") as fh:
                        for line in offending(fh.read()):
                            bad.append(f"{os.path.relpath(p, src)}:{line}")
    return bad


SAMPLE = """enum k { K_A, K_B };
int f(enum k v, int c, int t)
{
\tswitch (v) { /* a project enum with a default: reported */
\tcase K_A: return 1;
\tdefault: return 2;
\t}
\tswitch (c) { /* characters: fine */
\tcase 'a': return 3;
\tdefault: return 4;
\t}
\tswitch (t) { /* a foreign enum: fine */
\tcase ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT: return 5;
\tdefault: return 6;
\t}
\tswitch (v) { /* every enumerator, no default: fine; "default:" in a string */
\tcase K_A: { const char *s = "default:"; (void)s; return 7; }
\tcase K_B: switch (c) { case 1: return 8; default: return 9; }
\t}
\treturn 0;
}
"""


def self_test():
    with tempfile.TemporaryDirectory() as d:
        os.makedirs(os.path.join(d, "graph"))
        with open(os.path.join(d, "graph", "x.c"), "w") as fh:
            fh.write(SAMPLE)
        got = check(d)
    want = ["graph/x.c:4"]
    if got != want:
        print(f"self-test: expected {want}, got {got}")
        return 1
    print("self-test: the switch over a project enum with a default reported, nothing else")
    return 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) != 2:
        print(__doc__.strip().split("\n\n")[-2], file=sys.stderr)
        return 2
    bad = check(argv[1])
    for b in bad:
        print(f"{b}: a switch over a project enum has a default: name every enumerator")
    print(f"{len(bad)} switch(es) over project enums with a default")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
