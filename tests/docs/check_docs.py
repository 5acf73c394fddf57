#!/usr/bin/env python3
"""Runs the shell examples of README.md and docs/*.md and compares the output they show with
the program's real output, so the docs cannot drift from the program (issue 46, item 6).

The convention, for whoever writes an example:

- A fenced block tagged `console` is a transcript: `$ COMMAND` lines (a line ending in `\\`
  continues the command) each followed by the output that command prints, standard output and
  standard error together (as `2>&1` into one pipe gives them).
- A fenced block tagged `sh` is commands whose output is not shown: they run as one bash script
  (`set -eo pipefail`) and must exit 0.
- `<!-- doctest: output -->` on the line above a fence makes that block (whatever its tag) the
  output of the `sh` block just before it (its commands' output, as for `console`).
- Other tags (`json`, `c`, `yaml`, `text`, ...) are formats, code and pictures: never run. A
  fence without a tag is an error: it must say which of these it is.

Markers, each an HTML comment on its own line directly above the fence (several may stack):

- `<!-- doctest: skip: REASON -->`   not run (a GPU, a cluster, files the reader supplies).
- `<!-- doctest: slow: REASON -->`   not run with --skip-slow (ctest's test_docs; .ci/run
                                     runs them on its release build).
- `<!-- doctest: needs mpi -->`      not run where the build has no MPI or there is no mpirun.
- `<!-- doctest: exit N -->`         the block's last command exits N (the others 0); an `sh`
                                     block then runs without `set -e`.
- `<!-- doctest: mask REGEX -->`     text that changes from run to run (wall times): each match
                                     of REGEX, or of each of its groups when it has any, is
                                     replaced by `<masked>` in the shown and the real output
                                     alike before they are compared.
- `<!-- doctest: output -->`         as above.

Normalisation of every comparison: trailing blanks of each line and trailing empty lines are
dropped, the run directory's path reads `.`; in the shown output a line that is `...` alone
stands for any number of lines (none too), and `…` within a line for any text on that line.

Each file's blocks run in order in one fresh directory holding `build/` (links to the built
programs, also first on PATH, so `planner` and `build/planner` both work) and copies of
`examples/` and `tests/fixtures/`; files written by one block are there for the next, but each
block (each `console` command) starts a new bash there, so a `cd` ends with its block. Open MPI
is told it may run as root and oversubscribe the cores. Files are checked side by side
(--jobs, default 2); a block that runs past --timeout is killed with its processes.
"""

import argparse
import concurrent.futures
import difflib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

PROGRAMS = ("planner", "planner-zoo", "planner-train-gpt")
MARKER = re.compile(r"^<!--\s*doctest:\s*(.*?)\s*-->\s*$")
FENCE = re.compile(r"^(\s*)```\s*(\S*)\s*$")
RUN_TAGS = ("sh", "console")


class Block:
    def __init__(self, path, line, tag, lines, markers):
        self.path, self.line, self.tag, self.lines = path, line, tag, lines
        self.markers = markers  # list of (key, value)

    def marker(self, key):
        for k, v in self.markers:
            if k == key:
                return v
        return None

    def masks(self):
        return [v for k, v in self.markers if k == "mask"]

    def where(self):
        return f"{self.path}:{self.line}"


def parse_markers(text):
    """'skip: reason' -> ('skip', 'reason'); 'mask RE' -> ('mask', 'RE'); 'output' -> ('output', '')."""
    m = re.match(r"^(skip|slow)\s*:\s*(.+)$", text)
    if m:
        return m.group(1), m.group(2)
    m = re.match(r"^(mask|exit|needs)\s+(.+)$", text)
    if m:
        return m.group(1), m.group(2)
    if text == "output":
        return "output", ""
    raise ValueError(f"unknown doctest marker '{text}'")


def read_blocks(path, shown):
    blocks, errors = [], []
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, tag, start = m.group(1), m.group(2), i
        markers, j = [], i - 1
        while j >= 0 and MARKER.match(lines[j]):
            try:
                markers.insert(0, parse_markers(MARKER.match(lines[j]).group(1)))
            except ValueError as e:
                errors.append(f"{shown}:{j + 1}: {e}")
            j -= 1
        body, i = [], i + 1
        while i < len(lines) and not re.match(r"^\s*```\s*$", lines[i]):
            body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i])
            i += 1
        if i == len(lines):
            errors.append(f"{shown}:{start + 1}: a fence that is never closed")
        i += 1
        b = Block(shown, start + 1, tag, body, markers)
        if not tag and b.marker("output") is None:
            errors.append(f"{shown}:{start + 1}: a fenced block without a tag: tag it sh, console, "
                          "text, json, ... or mark it <!-- doctest: output -->")
        if tag == "sh" and any(l.startswith("$ ") for l in body):
            errors.append(f"{shown}:{start + 1}: an sh block with '$ ' prompts: tag it console")
        blocks.append(b)
    return blocks, errors


def console_commands(block):
    """[(command, [expected lines]), ...] of a console block."""
    cmds, cur, cont = [], None, False
    for line in block.lines:
        if cont:
            cur[0] += "\n" + line
            cont = line.endswith("\\")
        elif line.startswith("$ "):
            cur = [line[2:], []]
            cmds.append(cur)
            cont = line.endswith("\\")
        elif cur is None:
            raise ValueError(f"{block.where()}: a console block must start with '$ '")
        else:
            cur[1].append(line)
    return cmds


def apply_masks(text, masks):
    for rx in masks:
        r = re.compile(rx, re.M)
        if r.groups == 0:
            text = r.sub("<masked>", text)
            continue

        def repl(m):
            s, base, parts, pos = m.group(0), m.start(), [], 0
            for g in range(1, r.groups + 1):
                if m.start(g) >= 0:
                    parts += [s[pos:m.start(g) - base], "<masked>"]
                    pos = m.end(g) - base
            return "".join(parts) + s[pos:]

        text = r.sub(repl, text)
    return text


def normalise(text, masks):
    lines = [l.rstrip() for l in text.replace("\r", "").split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return apply_masks("\n".join(lines), masks).split("\n") if lines else []


def matches(expected, actual):
    pat = []
    for line in expected:
        if line.strip() == "...":
            pat.append(r"(?:[^\n]*\n)*?")
        else:
            pat.append("[^\n]*".join(re.escape(p) for p in line.split("…")) + r"\n")
    return re.fullmatch("".join(pat), "".join(l + "\n" for l in actual)) is not None


class Runner:
    def __init__(self, args):
        self.args = args
        self.failures, self.checked, self.skipped, self.log = [], 0, [], []

    def say(self, line):
        self.log.append(line)

    def setup(self):
        d = tempfile.mkdtemp(prefix="pl-docs.")
        os.mkdir(os.path.join(d, "build"))
        for p in PROGRAMS:
            src = os.path.join(self.args.bin, p)
            if os.path.exists(src):
                os.symlink(src, os.path.join(d, "build", p))
        lib = os.path.join(self.args.bin, "libplanner.so")
        if os.path.exists(lib):  # the Python module's library (python/planner finds build/)
            os.symlink(os.path.realpath(lib), os.path.join(d, "build", "libplanner.so"))
        shutil.copytree(os.path.join(self.args.src, "examples"), os.path.join(d, "examples"))
        shutil.copytree(os.path.join(self.args.src, "python"), os.path.join(d, "python"),
                        ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copytree(os.path.join(self.args.src, "tests", "fixtures"),
                        os.path.join(d, "tests", "fixtures"))
        return d

    def env(self, d, mpi=False, python=False):
        e = dict(os.environ)
        if mpi:  # Open MPI's own allocations read as leaks under ASan (test_mpi does the same)
            e["ASAN_OPTIONS"] = e.get("ASAN_OPTIONS", "") + ":detect_leaks=0"
        lib = os.path.join(d, "build", "libplanner.so")
        if os.path.exists(lib):
            e["PLANNER_LIBRARY"] = lib
        if python and self.args.preload:
            # a sanitized libplanner needs the ASan runtime first in python3
            # (test_python does the same); the interpreter keeps its memory
            e["LD_PRELOAD"] = self.args.preload
            e["ASAN_OPTIONS"] = e.get("ASAN_OPTIONS", "") + ":detect_leaks=0"
        e["PATH"] = os.path.join(d, "build") + os.pathsep + e.get("PATH", "")
        e.update(LC_ALL="C", OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                 OMPI_MCA_rmaps_base_oversubscribe="1", OMPI_MCA_hwloc_base_binding_policy="none")
        return e

    def run(self, d, script, errexit=True, mpi=False):
        pre = "set -eo pipefail\n" if errexit else "set -o pipefail\n"
        t = time.time()
        p = subprocess.Popen(["bash", "-c", pre + script], cwd=d,
                             env=self.env(d, mpi, python="python3" in script),
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, start_new_session=True)
        try:
            raw, _ = p.communicate(timeout=self.args.timeout)
            rc = p.returncode
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)  # the block's own process group: mpirun's ranks too
            raw, _ = p.communicate()
            rc = f"timeout {self.args.timeout} s"
        out = raw.decode("utf-8", "replace")
        return out.replace(d, "."), rc, time.time() - t

    def skip_reason(self, b):
        if b.marker("skip") is not None:
            return b.marker("skip")
        if b.marker("slow") is not None and self.args.skip_slow:
            return "slow (--skip-slow): " + b.marker("slow")
        if b.marker("needs") == "mpi" and not (self.args.mpi and shutil.which("mpirun")):
            return "needs MPI (this build has none, or there is no mpirun)"
        return None

    def fail(self, b, what):
        self.failures.append(f"{b.where()}: {what}")

    def compare(self, b, expected, actual, masks, what):
        exp, act = normalise("\n".join(expected), masks), normalise(actual, masks)
        if matches(exp, act):
            return True
        diff = "\n".join(difflib.unified_diff(exp, act, "shown", "real", lineterm="", n=2))
        self.fail(b, f"{what}: the output shown is not the program's\n{diff}")
        return False

    def file(self, path, shown):
        blocks, errors = read_blocks(path, shown)
        self.failures += errors
        d = self.setup()
        last = None  # (block, output, ran) of the last sh block
        for b in blocks:
            if b.marker("output") is not None:
                if last is None:
                    self.fail(b, "an output block that follows no sh block")
                elif last[2]:
                    self.checked += 1
                    self.compare(b, b.lines, last[1], b.masks() + last[0].masks(),
                                 f"output of the block at line {last[0].line}")
                last = None
                continue
            if b.tag not in RUN_TAGS:
                continue
            why = self.skip_reason(b)
            want = int(b.marker("exit")) if b.marker("exit") is not None else 0
            if why:
                self.skipped.append(f"{b.where()}: {why}")
                self.say(f"skip {b.where()}: {why}")
                last = (b, "", False) if b.tag == "sh" else None
                continue
            self.checked += 1
            if b.tag == "sh":
                out, rc, s = self.run(d, "\n".join(b.lines), errexit=(want == 0),
                                      mpi=(b.marker("needs") == "mpi"))
                if rc != want:
                    self.fail(b, f"exit {rc}, expected {want}\n{out[-3000:]}")
                last = (b, out, True)
                self.say(f"ran  {b.where()} sh ({s:.1f} s)")
                continue
            last = None
            try:
                cmds = console_commands(b)
            except ValueError as e:
                self.failures.append(str(e))
                continue
            t = time.time()
            for k, (cmd, expected) in enumerate(cmds):
                out, rc, _ = self.run(d, cmd, errexit=False, mpi=(b.marker("needs") == "mpi"))
                exp_rc = want if k == len(cmds) - 1 else 0
                if rc != exp_rc:
                    self.fail(b, f"'{cmd}': exit {rc}, expected {exp_rc}\n{out[-3000:]}")
                    break
                if not self.compare(b, expected, out, b.masks(), f"'{cmd}'"):
                    break
            self.say(f"ran  {b.where()} console ({time.time() - t:.1f} s)")
        if self.args.keep:
            self.say(f"kept {d}")
        else:
            shutil.rmtree(d, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", required=True, help="the build directory with planner, planner-zoo")
    ap.add_argument("--src", required=True, help="the source tree")
    ap.add_argument("--skip-slow", action="store_true", help="skip blocks marked slow")
    ap.add_argument("--mpi", action="store_true", help="the build has MPI")
    ap.add_argument("--timeout", type=int, default=120, help="seconds a block may run")
    ap.add_argument("--jobs", type=int, default=2, help="files checked at once")
    ap.add_argument("--keep", action="store_true", help="keep the run directories")
    ap.add_argument("--preload", default="",
                    help="the ASan runtime python3 preloads for a sanitized libplanner")
    ap.add_argument("files", nargs="*", help="markdown files (default README.md, docs/*.md)")
    args = ap.parse_args()
    args.bin, args.src = os.path.abspath(args.bin), os.path.abspath(args.src)
    files = [f for f in args.files if f]  # ctest passes an empty generator expression as ''
    files = files or ["README.md"] + sorted(
        os.path.join("docs", f) for f in os.listdir(os.path.join(args.src, "docs"))
        if f.endswith(".md"))
    t = time.time()

    def one(f):  # each file in its own directory, the files side by side
        r = Runner(args)
        r.file(os.path.join(args.src, f) if not os.path.isabs(f) else f, f)
        return r

    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
        runs = list(pool.map(one, files))
    for r in runs:
        if r.log:
            print("\n".join(r.log))
    checked = sum(r.checked for r in runs)
    skipped = sum(len(r.skipped) for r in runs)
    failures = [f for r in runs for f in r.failures]
    print(f"{checked} blocks checked, {skipped} skipped, {len(failures)} failed "
          f"({time.time() - t:.1f} s)")
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
