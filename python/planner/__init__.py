"""planner: sharding plans for training a model on many GPUs, from Python.

A thin layer (ctypes, the standard library only) over libplanner, the C
library of the ``planner`` command (``planner/planner.h``). It searches a
plan for a model, prices a given plan, and writes a plan as a training
framework's arguments; a plan is also a dict (the strategy checkpoint, the
JSON that ``planner search -o`` writes)::

    import planner

    with planner.Planner(device_num=8, cluster="h100x8") as p:
        plan = p.search("model.json")          # planner search
        print(plan.step_seconds, plan.degrees)   # {'dp': 4, 'tp': 2, ...}
        ckpt = plan.as_dict()                    # the strategy checkpoint
        priced = p.cost("model.json", ckpt)      # planner cost
        args = p.export(plan, "megatron")        # planner export --to megatron

Settings are the keys of MindSpore's set_auto_parallel_context that the C
API takes (``device_num``, ``cluster``, ``search_mode``, ``memory_limit``,
``pipeline_stages``, ``micro_batch_num``, ``enable_parallel_optimizer``,
``recompute``, ``data_parallel``, ``model_parallel``, ... see docs/api.md):
keyword arguments of :class:`Planner`, or :meth:`Planner.set`. Python
values are written as the C API reads them (``True`` -> ``"true"``,
``8`` -> ``"8"``).

Errors raise :class:`PlannerError` carrying the library's message and its
code, as one of three classes, the command line's exit statuses:
:class:`InvalidInputError` (2: a bad model, plan, setting or argument; also
a ValueError), :class:`NoPlanError` (3: no plan satisfies the constraints,
such as a memory limit too small) and :class:`PlannerSystemError` (4: out of
memory, a solver, device or file failure; also an OSError).
:class:`LibraryNotFoundError` says where libplanner was looked for: the
environment variable ``PLANNER_LIBRARY``, next to the package (where
``cmake --install`` put it), the build tree of a checkout, and the system's
library path.

Handles (:class:`Planner`, :class:`Model`, :class:`Plan`) free their C
objects when closed, when their ``with`` block ends, or when collected. A
Planner is used from one thread at a time; plans are independent of it.
"""

import ctypes
import json
import math
import os
import tempfile

from . import _native

__all__ = [
    "Planner",
    "Model",
    "Plan",
    "PlannerError",
    "InvalidInputError",
    "NoPlanError",
    "PlannerSystemError",
    "LibraryNotFoundError",
    "FRAMEWORKS",
    "search",
    "cost",
    "export",
    "library_path",
    "library_version",
]

__version__ = "0.1.0"

#: The frameworks :meth:`Planner.export` writes for (``planner export --to``).
FRAMEWORKS = ("megatron", "nemo", "torchtitan", "deepspeed", "megatron-deepspeed", "mindformers")

# planner.h's codes and flags
_EINVAL, _EINFEASIBLE, _ESYSTEM = 2, 3, 4
_EXPORT_JSON, _EXPORT_FP16 = 1, 2
_GROUP_KINDS = ("dp", "tp", "pp", "ep", "sp")


class PlannerError(Exception):
    """A failure the library reported: ``message`` is its text, ``code`` its
    status (2 invalid input, 3 no plan, 4 system failure; the exit status of
    the ``planner`` command for the same failure)."""

    code = None

    def __init__(self, message, code=None):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code

    def __str__(self):
        return self.message


class InvalidInputError(PlannerError, ValueError):
    """Invalid input (code 2): a model, plan, setting or argument that is
    wrong; the message names the file, key, op or field and what was expected."""

    code = _EINVAL


class NoPlanError(PlannerError):
    """No plan satisfies the constraints (code 3), such as a memory limit
    smaller than any plan needs; the message says which and by how much."""

    code = _EINFEASIBLE


class PlannerSystemError(PlannerError, OSError):
    """A system failure (code 4): out of memory, a solver, a device or a file
    write failed."""

    code = _ESYSTEM


class LibraryNotFoundError(PlannerError, ImportError):
    """libplanner could not be found or loaded; the message lists where it
    was looked for. Set PLANNER_LIBRARY to its path."""

    code = _ESYSTEM


_CLASSES = {_EINVAL: InvalidInputError, _EINFEASIBLE: NoPlanError, _ESYSTEM: PlannerSystemError}


def _error(code, message):
    cls = _CLASSES.get(code, PlannerError)
    return cls(message, code)


def _lib():
    try:
        return _native.load()
    except _native.LibraryNotFound as e:
        raise LibraryNotFoundError(str(e)) from None


def library_path():
    """The path of the libplanner loaded (loading it if need be)."""
    _lib()
    return _native.path()


def library_version():
    """libplanner's version, such as ``"0.1.0"``."""
    return _lib().planner_version().decode()


def _setting(value):
    """A Python value as the C API's string."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    return str(value)


def _bytes(s):
    return s.encode() if isinstance(s, str) else bytes(s)


class _Handle:
    """A C object freed once: by close(), at the end of a with block, or
    when collected."""

    _free = None  # the name of the C function that frees it

    def __init__(self, ptr):
        self._ptr = ptr

    def close(self):
        """Frees the C object; using this object afterwards raises
        InvalidInputError. A second close() does nothing."""
        ptr, self._ptr = getattr(self, "_ptr", None), None
        if ptr:
            getattr(_native.load(), self._free)(ptr)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __del__(self):
        try:
            self.close()
        except Exception:  # at interpreter exit the module may be gone
            pass

    def _live(self):
        if not self._ptr:
            raise InvalidInputError("%s is closed" % type(self).__name__, _EINVAL)
        return self._ptr


class Planner(_Handle):
    """A planning context (the C API's planner_ctx), usable as a context manager.

    Keyword arguments are settings (see :meth:`set`)::

        with Planner(device_num=16, cluster="h100x8:2", memory_limit="80G") as p:
            plan = p.search("gpt.json")

    ``devices`` is short for ``device_num``. A setting the library does not
    know, or a bad value, raises InvalidInputError naming both.
    """

    _free = "planner_ctx_free"

    def __init__(self, devices=None, **settings):
        lib = _lib()
        ptr = lib.planner_ctx_new()
        if not ptr:
            raise PlannerSystemError("planner_ctx_new: out of memory", _ESYSTEM)
        super().__init__(ptr)
        if devices is not None:
            settings.setdefault("device_num", devices)
        for key, value in settings.items():
            if value is not None:
                self.set(key, value)

    def _check(self, rc):
        if rc:
            raise _error(rc, _native.load().planner_errmsg(self._ptr).decode())

    def set(self, key, value):
        """Sets one key of the context, such as ``set("device_num", 8)``,
        ``set("memory_limit", "80G")``, ``set("model_parallel", 2)``,
        ``set("enable_parallel_optimizer", True)``. Returns self."""
        self._check(
            _native.load().planner_set_auto_parallel_context(
                self._live(), _bytes(key), _bytes(_setting(value))
            )
        )
        return self

    def get(self, key):
        """A key's current value as the library's string (its default when
        never set; "" for keys unset without a default)."""
        v = _native.load().planner_get_auto_parallel_context(self._live(), _bytes(key))
        if v is None:
            self._check(_EINVAL)
        return v.decode()

    def reset(self):
        """Every key back to its default."""
        _native.load().planner_reset_auto_parallel_context(self._live())

    __getitem__ = get

    def __setitem__(self, key, value):
        self.set(key, value)

    def load_model(self, model):
        """A :class:`Model` from a planner.model/1 file (a path, or an ONNX
        file's planner import) or from its JSON as a dict."""
        if isinstance(model, Model):
            return model
        if isinstance(model, dict):
            fd, tmp = tempfile.mkstemp(prefix="planner-model-", suffix=".json")
            try:
                with os.fdopen(fd, "w") as f:
                    json.dump(model, f)
                return self.load_model(tmp)
            finally:
                os.unlink(tmp)
        out = ctypes.c_void_p()
        lib = _native.load()
        self._check(
            lib.planner_graph_load(self._live(), os.fsencode(model), ctypes.byref(out))
        )
        return Model(out.value, self)

    def search(self, model):
        """Searches a plan for ``model`` (a path, a dict or a :class:`Model`)
        under the context's settings, as ``planner search`` does, and
        returns it as a :class:`Plan`. Writes ``strategy_ckpt_save_file``
        when that is set. NoPlanError when no plan fits the memory limit."""
        m = self.load_model(model)
        try:
            out = ctypes.c_void_p()
            self._check(
                _native.load().planner_plan_new(self._live(), m._live(), ctypes.byref(out))
            )
            return Plan(out.value)
        finally:
            if m is not model:
                m.close()

    def cost(self, model, plan):
        """Prices a given plan for ``model``, as ``planner cost MODEL
        --strategy CKPT`` does, and returns it as a :class:`Plan` whose
        ``cost`` is what that command prints (with ``fits`` and
        ``memory_limit_bytes``). ``plan``: a :class:`Plan`, the checkpoint as
        a dict, its JSON text, or a checkpoint file's path. It is priced on
        the context's cluster when ``cluster`` or ``device_num`` is set,
        else on the one the checkpoint records. A plan that does not fit is
        priced all the same (``plan.fits`` is False)."""
        text = _plan_text(plan)
        m = self.load_model(model)
        try:
            out = ctypes.c_void_p()
            self._check(
                _native.load().planner_plan_cost(
                    self._live(), m._live(), _bytes(text), ctypes.byref(out)
                )
            )
            return Plan(out.value)
        finally:
            if m is not model:
                m.close()

    def _export(self, plan, framework, flags):
        lib = _native.load()
        text, fw = _bytes(_plan_text(plan)), _bytes(framework)
        n = ctypes.c_size_t()
        self._check(lib.planner_export(self._live(), text, fw, flags, None, 0, ctypes.byref(n)))
        buf = ctypes.create_string_buffer(n.value + 1)
        self._check(lib.planner_export(self._live(), text, fw, flags, buf, len(buf), None))
        return buf.value.decode()

    def export(self, plan, framework="megatron", fp16=False):
        """The plan as a training framework states it, as ``planner export
        CKPT --to FRAMEWORK`` writes it: Megatron-LM's ``pretrain_gpt.py``
        arguments (``"megatron"``), Megatron-Bridge YAML (``"nemo"``),
        torchtitan TOML, DeepSpeed JSON, Megatron-DeepSpeed arguments or
        MindFormers YAML (see FRAMEWORKS). The text opens with comments
        naming the framework's version and the source its keys were checked
        against. ``plan``: as for :meth:`cost`. ``fp16``: a 16-bit plan as
        float16 rather than bfloat16. InvalidInputError, saying why, for a
        plan the framework cannot state."""
        return self._export(plan, framework, _EXPORT_FP16 if fp16 else 0)

    def export_dict(self, plan, framework="megatron", fp16=False):
        """As :meth:`export`, as a dict: ``framework``, ``version``,
        ``source``, ``keys`` (each key or flag written, with its value as
        the text has it) and ``text`` (what :meth:`export` returns)."""
        flags = _EXPORT_JSON | (_EXPORT_FP16 if fp16 else 0)
        return json.loads(self._export(plan, framework, flags))

    def __repr__(self):
        if not self._ptr:
            return "<planner.Planner closed>"
        return "<planner.Planner device_num=%s cluster=%r search_mode=%s>" % (
            self.get("device_num"),
            self.get("cluster"),
            self.get("search_mode"),
        )


def _plan_text(plan):
    """A strategy checkpoint's JSON text from a Plan, dict, JSON text or path."""
    if isinstance(plan, Plan):
        return plan.json
    if isinstance(plan, dict):
        return json.dumps(plan)
    if isinstance(plan, (bytes, bytearray)):
        return plan.decode()
    if isinstance(plan, str) and plan.lstrip().startswith("{"):
        return plan
    if isinstance(plan, (str, os.PathLike)):
        try:
            with open(plan, encoding="utf-8") as f:
                return f.read()
        except OSError as e:
            msg = "%s: cannot open: %s" % (os.fspath(plan), e.strerror)
            raise InvalidInputError(msg, _EINVAL) from None
    raise InvalidInputError(
        "plan: expected a Plan, a dict, JSON text or a file's path, got %s" % type(plan).__name__,
        _EINVAL,
    )


class Model(_Handle):
    """A model loaded into the library (planner_graph): a planner.model/1
    file checked (shapes inferred, op rules applied). Made by
    :meth:`Planner.load_model`; usable as a context manager."""

    _free = "planner_graph_free"

    def __init__(self, ptr, planner):
        super().__init__(ptr)
        self._planner = planner  # its messages go to the planner's context

    def save(self, path):
        """Writes the model as planner.model/1 JSON, atomically ("-": stdout)."""
        self._planner._check(_native.load().planner_graph_save(self._live(), os.fsencode(path)))

    def __repr__(self):
        return "<planner.Model%s>" % ("" if self._ptr else " closed")


class Plan(_Handle):
    """A plan (planner_plan): the strategy of every op, the layouts, the rank
    groups and the predicted cost, as the strategy checkpoint states them.

    The numbers are the checkpoint's cost (seconds, bytes); :meth:`as_dict`
    is the whole checkpoint. A plan refers to no Planner: it outlives the one
    that made it. Usable as a context manager."""

    _free = "planner_plan_free"

    def _num(self, fn):
        v = getattr(_native.load(), fn)(self._live())
        return None if math.isnan(v) else v

    @property
    def json(self):
        """The strategy checkpoint's JSON text (what ``planner search -o`` writes)."""
        return _native.load().planner_plan_json(self._live()).decode()

    def as_dict(self):
        """The strategy checkpoint as a dict (a new one each call):
        ``parallel_strategy_item`` (per op: ``parallel_strategy``, ``stage``),
        ``parallel_layout_item`` (per param), ``groups``, ``cost``, ..."""
        return json.loads(self.json)

    def save(self, path):
        """Writes the checkpoint to ``path`` atomically (a temporary file
        beside it, then renamed), as ``planner search -o`` does."""
        path = os.fspath(path)
        fd, tmp = tempfile.mkstemp(prefix=".planner-", dir=os.path.dirname(path) or ".")
        try:
            with os.fdopen(fd, "w") as f:
                f.write(self.json)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise

    @property
    def cost(self):
        """The checkpoint's cost object as a dict (step_seconds,
        compute_seconds, communication_seconds, peak_memory_bytes,
        memory_breakdown_bytes, mfu, ...)."""
        return self.as_dict().get("cost", {})

    @property
    def strategies(self):
        """Per op, its strategy: one list of split counts per input
        (MindSpore's convention), from parallel_strategy_item."""
        items = self.as_dict().get("parallel_strategy_item", {})
        return {op: v.get("parallel_strategy") for op, v in items.items()}

    @property
    def step_seconds(self):
        """The predicted step time (seconds)."""
        return self._num("planner_plan_step_seconds")

    @property
    def peak_memory_bytes(self):
        """The predicted peak memory of a device (bytes)."""
        return self._num("planner_plan_memory_bytes")

    @property
    def fits(self):
        """Whether the peak memory is within the limit (for a priced plan:
        the cost's ``fits``; a searched plan always fits)."""
        return self.cost.get("fits", True)

    @property
    def mfu(self):
        """Model FLOPs utilisation of the predicted step."""
        return self._num("planner_plan_mfu")

    @property
    def flops_per_step(self):
        """The model's matrix-product FLOPs of a step, forward and backward."""
        return self._num("planner_plan_flops_per_step")

    @property
    def tflops_per_device(self):
        """Model TFLOP/s per device."""
        return self._num("planner_plan_tflops_per_device")

    @property
    def tokens_per_second_per_device(self):
        """Tokens/s per device, or None for a model without token ids."""
        return self._num("planner_plan_tokens_per_second_per_device")

    @property
    def step_band(self):
        """(low, high): the seconds a measured step is expected within."""
        lo, hi = ctypes.c_double(), ctypes.c_double()
        _native.load().planner_plan_step_band(
            self._live(), ctypes.byref(lo), ctypes.byref(hi)
        )
        return (lo.value, hi.value)

    def degree(self, kind):
        """The degree of ``kind``: "dp", "tp", "pp", "ep" or "sp" (1 when absent)."""
        v = _native.load().planner_plan_degree(self._live(), _bytes(kind))
        if v < 0:
            msg = "degree: kind %r: expected one of %s" % (kind, ", ".join(_GROUP_KINDS))
            raise InvalidInputError(msg, _EINVAL)
        return v

    @property
    def degrees(self):
        """{"dp": ..., "tp": ..., "pp": ..., "ep": ..., "sp": ...}"""
        return {k: self.degree(k) for k in _GROUP_KINDS}

    def group(self, kind, rank=None):
        """The ranks of ``rank``'s group of ``kind`` (a list, ascending);
        rank None: the context's global_rank when the plan was made."""
        lib = _native.load()
        r = -1 if rank is None else rank
        n = lib.planner_plan_group(self._live(), _bytes(kind), r, None, 0)
        if n < 0:
            raise InvalidInputError(
                "group: kind %r or rank %r: expected one of %s and a rank of the plan"
                % (kind, rank, ", ".join(_GROUP_KINDS)),
                _EINVAL,
            )
        ranks = (ctypes.c_int64 * n)()
        lib.planner_plan_group(self._live(), _bytes(kind), r, ranks, n)
        return list(ranks)

    def __repr__(self):
        if not self._ptr:
            return "<planner.Plan closed>"
        d = self.degrees
        return "<planner.Plan dp %d x tp %d x pp %d, step %.4g s, peak %.4g GB>" % (
            d["dp"],
            d["tp"],
            d["pp"],
            self.step_seconds or float("nan"),
            (self.peak_memory_bytes or float("nan")) / 1e9,
        )


def search(model, **settings):
    """A plan for ``model`` under ``settings``: Planner(**settings).search(model)."""
    with Planner(**settings) as p:
        return p.search(model)


def cost(model, plan, **settings):
    """``plan`` priced for ``model``: Planner(**settings).cost(model, plan)."""
    with Planner(**settings) as p:
        return p.cost(model, plan)


def export(plan, framework="megatron", fp16=False):
    """``plan`` as ``framework``'s arguments: Planner().export(plan, framework)."""
    with Planner() as p:
        return p.export(plan, framework, fp16)
