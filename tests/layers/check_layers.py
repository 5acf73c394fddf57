#!/usr/bin/env python3
"""The layers as the compiler sees them (docs/architecture.md): every folder
of C sources is assigned to one layer, and every header a file really
includes -- as the compiler resolved it, so `../`, `<dir/x.h>` and includes
through another header count -- belongs to its own layer or one below.

  0 core       graph/, graph/ops/, graph/onnx/
  1 cost       costmodel/
  2 search     search/        2 executor  executor/ (side by side: neither
                                                     includes the other)
  3 topology   topology/
  4 app        planner/, planner/commands/
  on top       tests/, benchmarks/, examples/ (may include anything; nothing
               in a layer may include them)

What a file includes is read from the build's dependency files (the
compiler's -MD output, `*.o.d`, for every object the build compiled) and,
for sources this configuration does not compile (the MPI, CUDA or ONNX
stand-ins, headers), from `cc -MM -MG` run on the file with the build's
include path. A C/C++/CUDA file in a folder not assigned below, a project
header included from outside its folder when it is private to it
(`internal.h`, `*_impl.h`), an include that points up or sideways, or a
circle of files (x.c or x.h including y.h while y.c or y.h includes x.h,
through any number of files; x_impl.h is x's) fails the check, each
violation on its own line, exit 1.

Usage: check_layers.py SOURCE_DIR [BUILD_DIR]
       check_layers.py --self-test: builds a small tree with one violation of
           each kind and checks that each is reported (and nothing else).
"""
import os
import re
import subprocess
import sys
import tempfile

# folder (relative to the source dir) -> (rank, side); "top" folders may
# include anything and may be included by nothing in a layer
LAYERS = {
    "graph": (0, "core"),
    "graph/ops": (0, "core"),
    "graph/onnx": (0, "core"),
    "costmodel": (1, "costmodel"),
    "search": (2, "search"),
    "executor": (2, "executor"),
    "topology": (3, "topology"),
    "planner": (4, "app"),
    "planner/commands": (4, "app"),
}
TOP = 9
# folders on top of every layer; their subfolders too
TOP_FOLDERS = ("tests", "benchmarks", "examples")
SOURCE_EXT = (".c", ".h", ".cu", ".cc", ".cpp")


def folder_layer(folder):
    """(rank, side) of a folder, or None when it is not assigned"""
    if folder in LAYERS:
        return LAYERS[folder]
    top = folder.split("/")[0]
    if top in TOP_FOLDERS:
        return (TOP, "top")
    return None


def project_files(src):
    """the C/C++/CUDA files of the tree: git's view (tracked and new files
    not ignored) when it is a checkout, else every file outside build trees"""
    try:
        out = subprocess.run(
            ["git", "-C", src, "ls-files", "--cached", "--others", "--exclude-standard"],
            check=True, capture_output=True, text=True).stdout.split("\n")
        files = [f for f in out if f.endswith(SOURCE_EXT) and os.path.exists(os.path.join(src, f))]
        if files:
            return sorted(files)
    except (OSError, subprocess.CalledProcessError):
        pass
    files = []
    for root, dirs, names in os.walk(src):
        if "CMakeCache.txt" in names or os.path.basename(root).startswith("."):
            dirs[:] = []
            continue
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for n in names:
            if n.endswith(SOURCE_EXT):
                files.append(os.path.relpath(os.path.join(root, n), src))
    return sorted(files)


def parse_depfile(text):
    """a make rule's prerequisites: [source, header, ...]"""
    text = text.replace("\\\n", " ")
    rule = text.split("\n", 1)[0]
    if ":" not in rule:
        return []
    deps = rule.split(":", 1)[1]
    return [d.replace("\\ ", " ") for d in re.split(r"(?<!\\)\s+", deps.strip()) if d]


def depfiles(build):
    for root, _, names in os.walk(build):
        for n in names:
            if n.endswith(".o.d"):
                yield os.path.join(root, n)


def rel(path, src, build):
    """a dependency's path relative to the source dir ("@gen/..." for files
    the build generated), or None for a system header"""
    p = os.path.realpath(path)
    if build and (p == build or p.startswith(build + os.sep)):
        return "@gen/" + os.path.relpath(p, build)
    if p.startswith(src + os.sep):
        return os.path.relpath(p, src)
    return None


def mm_deps(src, build, f):
    """cc -MM -MG on one file with the build's include path"""
    inc = ["-I", src]
    if build:
        inc += ["-I", os.path.join(build, "onnx"), "-I", os.path.join(build, "generated")]
    lang = ["-x", "c++"] if f.endswith((".cu", ".cc", ".cpp")) else (["-x", "c"] if f.endswith(".h") else [])
    r = subprocess.run(["cc", "-MM", "-MG"] + inc + lang + [os.path.join(src, f)],
                       capture_output=True, text=True, cwd=os.path.dirname(os.path.join(src, f)))
    if r.returncode != 0:
        return None, r.stderr.strip().split("\n")[0]
    deps = parse_depfile(r.stdout)
    return deps[1:], None


def check(src, build):
    src = os.path.realpath(src)
    build = os.path.realpath(build) if build else None
    bad = []
    files = project_files(src)
    layered = {}
    for f in files:
        folder = os.path.dirname(f)
        lay = folder_layer(folder)
        if lay is None:
            bad.append(f"unassigned: {f} is in folder '{folder or '.'}', which no layer owns "
                       "(assign it in tests/layers/check_layers.py and docs/architecture.md)")
        elif lay[0] != TOP:
            layered[f] = lay
    includes = {f: set() for f in layered}
    seen = set()
    if build:
        # per source, the newest dependency file: an object a target no longer
        # builds (a file moved to another library) leaves a stale one behind
        newest = {}
        for d in depfiles(build):
            try:
                with open(d, encoding="utf-8", errors="replace") as fh:
                    deps = parse_depfile(fh.read())
                mtime = os.path.getmtime(d)
            except OSError:
                continue
            if not deps:
                continue
            s = rel(deps[0], src, build)
            if s in includes and os.path.exists(os.path.join(src, s)) and \
                    (s not in newest or mtime > newest[s][0]):
                newest[s] = (mtime, deps[1:])
        for s, (_, deps) in newest.items():
            seen.add(s)
            for h in deps:
                r = rel(h, src, build)
                if r and r != s:
                    includes[s].add(r)
    for f in layered:
        if f in seen:
            continue
        deps, err = mm_deps(src, build, f)
        if deps is None:
            bad.append(f"unreadable: {f}: the compiler could not list its includes: {err}")
            continue
        for h in deps:
            p = h if os.path.isabs(h) else os.path.join(os.path.dirname(os.path.join(src, f)), h)
            if not os.path.exists(p):
                continue  # a system or optional dependency's header (-MG)
            r = rel(p, src, build)
            if r and r != f:
                includes[f].add(r)
    # the spelling: a project header is included as "folder/name.h" from the
    # source dir, never climbing (../) or through the system search path (<>)
    inc_re = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)
    for f in layered:
        try:
            with open(os.path.join(src, f), encoding="utf-8", errors="replace") as fh:
                text = fh.read()
        except OSError:
            continue
        for q, name in inc_re.findall(text):
            if q == '"' and (name.startswith("../") or "/../" in name):
                bad.append(f"spelling: {f} includes \"{name}\" (a project header is "
                           "\"folder/name.h\", from the source dir)")
            elif q == "<" and os.path.exists(os.path.join(src, name)):
                bad.append(f"spelling: {f} includes <{name}>, a project header "
                           "(write \"" + name + "\")")
    for f, hs in sorted(includes.items()):
        ra, sa = layered[f]
        for h in sorted(hs):
            if h.startswith("@gen/"):
                continue  # generated code (protobuf-c, the attention table): the bottom
            base = os.path.basename(h)
            if (base == "internal.h" or base.endswith("_impl.h")) and \
                    os.path.dirname(h) != os.path.dirname(f):
                bad.append(f"private: {f} includes {h} (private to {os.path.dirname(h)}/)")
            lay = folder_layer(os.path.dirname(h))
            if lay is None:
                bad.append(f"unassigned: {f} includes {h}, in a folder no layer owns")
                continue
            rb, sb = lay
            if rb > ra or (ra == rb == 2 and sa != sb):
                bad.append(f"upward: {f} ({sa}) includes {h} ({sb})")
    bad += circles(includes)
    return bad, len(layered)


def circles(includes):
    """A circle of files: x.c, x.h and x_impl.h (its private half) are one
    unit (the path without its extension); a unit including another's header
    depends on it. Each set of
    units that depend on each other in a ring is reported once, as one ring
    through its first unit."""
    def unit(f):
        u = os.path.splitext(f)[0]
        return u[:-len("_impl")] if u.endswith("_impl") else u
    edges = {}
    for f, hs in includes.items():
        for h in hs:
            if not h.startswith("@gen/") and unit(h) != unit(f):
                edges.setdefault(unit(f), set()).add(unit(h))
    # Tarjan's strongly connected components, iterative
    index, low, on, stack, comps, n = {}, {}, set(), [], [], [0]
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = n[0]
        n[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = n[0]
                    n[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    comps.append(sorted(comp))
    bad = []
    for comp in comps:
        members, start = set(comp), comp[0]
        prev, queue = {start: None}, [start]
        while queue:  # the shortest ring from start back to it, inside comp
            v = queue.pop(0)
            for w in sorted(edges.get(v, ())):
                if w == start:
                    ring = [v]
                    while prev[ring[-1]] is not None:
                        ring.append(prev[ring[-1]])
                    ring = ring[::-1]
                    bad.append("circle: " + " -> ".join(ring + [start]) +
                               " (each includes the other's header; one of them must not)")
                    queue = []
                    break
                if w in members and w not in prev:
                    prev[w] = v
                    queue.append(w)
    return bad


SELF_TREE = {
    "graph/a.h": "#pragma once\n",
    "graph/a.c": '#include "graph/a.h"\n',
    "costmodel/c.h": '#include "graph/a.h"\n',
    "search/s.h": '#include "costmodel/c.h"\n',
    "search/ok.c": '#include "search/s.h"\n#include <stdio.h>\n',
    # a relative include that climbs out of its folder, up a layer
    "costmodel/up_relative.c": '#include "../search/s.h"\n',
    # an angle-bracket include of a project header, up a layer
    "costmodel/up_angle.c": "#include <search/s.h>\n",
    # through another header: executor.h includes search's header (sideways)
    "executor/e.h": '#include "search/s.h"\n',
    "executor/through.c": '#include "executor/e.h"\n',
    # another folder's private header
    "search/internal.h": "#pragma once\n",
    "topology/peek.c": '#include "search/internal.h"\n',
    # the same spellings pointing down are refused too
    "search/down_relative.c": '#include "../costmodel/c.h"\n',
    "search/down_angle.c": "#include <graph/a.h>\n",
    # two files of one folder that include each other's header (the headers
    # differ: gcc's #pragma once takes two files of one content for one)
    "search/p.h": "#pragma once\nint p(void);\n",
    "search/p.c": '#include "search/p.h"\n#include "search/q.h"\n',
    "search/q.h": "#pragma once\nint q(void);\n",
    "search/q.c": '#include "search/q.h"\n#include "search/p.h"\n',
    # a file in a folder no layer owns, and one at the top of the tree
    "newlayer/x.c": "int x;\n",
    "stray.c": "int y;\n",
}
SELF_EXPECT = [
    "upward: costmodel/up_relative.c (costmodel) includes search/s.h (search)",
    "upward: costmodel/up_angle.c (costmodel) includes search/s.h (search)",
    "upward: executor/through.c (executor) includes search/s.h (search)",
    "upward: executor/e.h (executor) includes search/s.h (search)",
    "private: topology/peek.c includes search/internal.h (private to search/)",
    "spelling: costmodel/up_relative.c includes \"../search/s.h\"",
    "spelling: costmodel/up_angle.c includes <search/s.h>",
    "spelling: search/down_relative.c includes \"../costmodel/c.h\"",
    "spelling: search/down_angle.c includes <graph/a.h>",
    "circle: search/p -> search/q -> search/p",
    "unassigned: newlayer/x.c",
    "unassigned: stray.c",
]


def self_test():
    with tempfile.TemporaryDirectory() as t:
        for path, text in SELF_TREE.items():
            os.makedirs(os.path.join(t, os.path.dirname(path)), exist_ok=True)
            with open(os.path.join(t, path), "w") as fh:
                fh.write(text)
        bad, _ = check(t, None)
    missing = [e for e in SELF_EXPECT if not any(b.startswith(e) for b in bad)]
    extra = [b for b in bad if not any(b.startswith(e) for e in SELF_EXPECT)]
    if missing or extra:
        print("self-test failed")
        for m in missing:
            print("  not caught:", m)
        for x in extra:
            print("  reported wrongly:", x)
        return 1
    print(f"self-test: all {len(SELF_EXPECT)} violations caught (a ../ include, a <> include, an "
          "include through a header, a private header, a circle of files, new folders and "
          "files), the allowed includes passed")
    return 0


def main(argv):
    if len(argv) == 2 and argv[1] == "--self-test":
        return self_test()
    if len(argv) not in (2, 3) or argv[1].startswith("-"):
        print(__doc__.split("\n\n")[-1], file=sys.stderr)
        return 2
    bad, n = check(argv[1], argv[2] if len(argv) == 3 else None)
    for b in bad:
        print("layer violation:", b)
    if bad:
        return 1
    print(f"layers: {n} files in 8 folders, every include points down, no circle of files")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
