"""Finding and loading libplanner, and the C functions' prototypes (ctypes).

The library is looked for, in this order:

1. the file the environment variable ``PLANNER_LIBRARY`` names;
2. next to the package: the path CMake wrote into ``_libpath.py`` when it
   installed the package, or a ``libplanner.so`` in the package's folder;
3. the build tree, when the package is imported from a checkout
   (``python/planner`` beside ``build*/libplanner.so``);
4. ``ctypes.util.find_library("planner")`` (the system's library path).

It is loaded once per process, on first use, so that ``import planner`` and
``help(planner)`` work without it.
"""

import ctypes
import ctypes.util
import glob
import os
import threading

_lock = threading.Lock()
_lib = None
_path = None


class LibraryNotFound(Exception):
    """Raised (as planner.LibraryNotFoundError) when libplanner cannot be loaded."""


def _candidates():
    """(where, path) pairs in the order they are tried."""
    env = os.environ.get("PLANNER_LIBRARY")
    if env:
        # the user's choice: nothing else is tried
        yield "PLANNER_LIBRARY", env
        return
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        from . import _libpath  # written by cmake --install

        yield "the installed path", _libpath.LIBRARY
    except ImportError:
        pass
    for name in ("libplanner.so", "libplanner.so.0"):
        yield "the package's folder", os.path.join(here, name)
    source = os.path.dirname(os.path.dirname(here))  # python/planner -> the checkout
    builds = sorted(glob.glob(os.path.join(source, "build*", "libplanner.so")))
    first = os.path.join(source, "build", "libplanner.so")
    if first in builds:  # the README's build folder first
        builds.remove(first)
        builds.insert(0, first)
    for b in builds:
        yield "the build tree", b
    found = ctypes.util.find_library("planner")
    if found:
        yield "ctypes.util.find_library", found


def load():
    """The loaded library (a ctypes.CDLL) with its prototypes set."""
    global _lib, _path
    with _lock:
        if _lib is not None:
            return _lib
        tried = []
        for where, path in _candidates():
            # a bare soname (find_library's) is looked up by the loader
            if os.sep in path and not os.path.exists(path):
                tried.append("%s: %s (no such file)" % (where, path))
                continue
            try:
                lib = ctypes.CDLL(path)
                lib.planner_version  # noqa: B018 -- a libplanner, not another
            except (OSError, AttributeError) as e:
                tried.append("%s: %s (%s)" % (where, path, e))
                continue
            _prototypes(lib)
            _lib, _path = lib, path
            return lib
        raise LibraryNotFound(
            "libplanner not found; build it (cmake --build build --target "
            "planner_lib) or install it, or set PLANNER_LIBRARY to the path of "
            "libplanner.so. Tried: " + ("; ".join(tried) or "nothing")
        )


def path():
    """The path the library was loaded from (loading it if need be)."""
    load()
    return _path


def _prototypes(lib):
    P = ctypes.c_void_p
    S = ctypes.c_char_p
    I = ctypes.c_int
    D = ctypes.c_double
    I64 = ctypes.c_int64
    SZ = ctypes.c_size_t
    table = {
        "planner_version": (S, []),
        "planner_ctx_new": (P, []),
        "planner_ctx_free": (None, [P]),
        "planner_errmsg": (S, [P]),
        "planner_set_auto_parallel_context": (I, [P, S, S]),
        "planner_get_auto_parallel_context": (S, [P, S]),
        "planner_reset_auto_parallel_context": (None, [P]),
        "planner_graph_load": (I, [P, S, ctypes.POINTER(P)]),
        "planner_graph_save": (I, [P, S]),
        "planner_graph_free": (None, [P]),
        "planner_plan_new": (I, [P, P, ctypes.POINTER(P)]),
        "planner_plan_cost": (I, [P, P, S, ctypes.POINTER(P)]),
        "planner_plan_json": (S, [P]),
        "planner_plan_step_seconds": (D, [P]),
        "planner_plan_memory_bytes": (D, [P]),
        "planner_plan_mfu": (D, [P]),
        "planner_plan_flops_per_step": (D, [P]),
        "planner_plan_tflops_per_device": (D, [P]),
        "planner_plan_tokens_per_second_per_device": (D, [P]),
        "planner_plan_step_band": (I, [P, ctypes.POINTER(D), ctypes.POINTER(D)]),
        "planner_plan_degree": (I64, [P, S]),
        "planner_plan_group": (I64, [P, S, I64, ctypes.POINTER(I64), SZ]),
        "planner_plan_free": (None, [P]),
        "planner_export": (I, [P, S, S, I, ctypes.POINTER(ctypes.c_char), SZ, ctypes.POINTER(SZ)]),
    }
    for name, (res, args) in table.items():
        f = getattr(lib, name)
        f.restype = res
        f.argtypes = args
