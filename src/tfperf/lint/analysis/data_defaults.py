"""What ``tf.data`` does to a pipeline by itself, for the TensorFlow version the code targets.

Two of TF's default graph rewrites make the two classic pipeline tips moot (TF's
``dataset_utils.cc`` puts both in the default set; TF's ``inject_prefetch.cc`` and
``map_parallelization.cc`` say when they apply):

* ``inject_prefetch`` adds ``prefetch(AUTOTUNE)`` after the pipeline's last transformation
  unless that is already a ``prefetch`` (it looks past ``with_options``). Documented default:
  off in the r2.10 API docs, on from r2.12 (r2.11's docs were not checked: 2.11 is treated
  as not injecting).
* ``map_parallelization`` turns a ``map`` into a parallel, deterministic map when its
  function is stateless (no stateful op in the traced graph: stateful random ops,
  ``py_function``/``numpy_function``, ``tf.print``, variable updates...). Default: on from
  TF 2.6 (the r2.6 API docs point ``OptimizationOptions`` at v2.6.0's
  ``experimental/ops/optimization_options.py``, whose ``map_parallelization`` says "If None,
  defaults to True", and TF's C++ ``finalize_dataset_op.cc`` puts it in the default set;
  r2.5's Python options still leave it out of the defaults, so 2.5 and older are off; the
  r2.7-r2.21 API docs say on). It never touches ``interleave``.

Both are off when the pipeline's options say so: ``apply_default_optimizations = False``
(unless the option itself is set to True), the option itself set to False, or
``autotune.enabled = False`` (both rewrites skip a pipeline without autotune).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

from tfperf.lint.analysis.callers import bound_arguments
from tfperf.lint.analysis.pipelines import (
    Pipeline,
    is_random_op,
    map_function,
    map_function_flags,
    parallel_calls_given,
)
from tfperf.lint.analysis.syntax import body_nodes, keyword
from tfperf.lint.analysis.traced import PY_FUNCTIONS
from tfperf.lint.semantic import Context

Version = tuple[int, int]
INJECT_PREFETCH_SINCE: Version = (2, 12)
MAP_PARALLELIZATION_SINCE: Version = (2, 6)

# TF calls that put a stateful op into the traced function (besides random ops and the
# Python-function wrappers): TF keeps such a map sequential.
STATEFUL_CALLS = frozenset({
    "tensorflow.print", "tensorflow.Variable", "tensorflow.compat.v1.assign",
    "tensorflow.compat.v1.assign_add", "tensorflow.compat.v1.assign_sub",
    "tensorflow.compat.v1.Print", "tensorflow.Print",
})
STATEFUL_PREFIXES = ("tensorflow.summary.", "tensorflow.compat.v1.summary.",
                     "tensorflow.random.Generator", "tensorflow.io.write_file")
# Variable methods that write: a map that updates a variable is stateful.
STATEFUL_METHODS = frozenset({"assign", "assign_add", "assign_sub", "scatter_update",
                              "scatter_add", "scatter_nd_update",
                              # a lookup table's ``lookup`` is LookupTableFindV2, which TF's
                              # op registry marks stateful: map_parallelization refuses it
                              "lookup"})
# Calls that run at trace time only (Python builtins) or tensor methods that add no state:
# they leave a map function stateless.
TRACE_TIME_BUILTINS = frozenset({
    "len", "int", "float", "str", "bool", "range", "dict", "tuple", "list", "zip", "enumerate",
    "isinstance", "print", "min", "max", "abs", "round", "sorted", "reversed", "sum", "any",
    "all", "getattr", "hasattr", "set", "format", "slice", "map", "type", "super",
})
STATELESS_METHODS = frozenset({"set_shape", "get_shape", "with_rank", "as_list", "items",
                               "keys", "values", "get", "format", "join", "split", "strip",
                               "lower", "upper", "replace", "append", "copy", "numpy",
                               # dict methods on a parsed example, run at trace time
                               "pop", "update", "setdefault"})
_MAX_DEPTH = 4


@dataclass(frozen=True)
class DataDefaults:
    """What TF does by itself for one pipeline: ``inject_prefetch`` and
    ``map_parallelization`` on or off, and ``why`` (for messages) when off."""

    inject_prefetch: bool
    map_parallelization: bool
    why_no_prefetch: str = ""
    why_no_parallel_map: str = ""


def _version(v: Version) -> str:
    return f"TF {v[0]}.{v[1]}"


def option_settings(ctx: Context) -> dict[str, dict[str, bool]]:
    """``{options name: {setting: value}}`` for the module's ``tf.data.Options`` objects:
    ``opts.experimental_optimization.inject_prefetch = False`` → ``{"opts":
    {"inject_prefetch": False}}``; ``opts.autotune.enabled = False`` → ``"autotune"``;
    the TF 2.4-era ``opts.experimental_optimization.autotune = False`` too."""
    def compute() -> dict[str, dict[str, bool]]:
        out: dict[str, dict[str, bool]] = {}
        for node in ctx.nodes_of(ast.Assign):
            value = node.value
            if type(value) is not ast.Constant or type(value.value) is not bool:
                continue
            for t in node.targets:
                chain = _attribute_chain(t)
                if chain is None or len(chain) != 3:
                    continue
                name, group, setting = chain
                if group == "experimental_optimization" or (group, setting) == ("autotune",
                                                                                   "enabled"):
                    key = "autotune" if setting in ("enabled", "autotune") else setting
                    out.setdefault(name, {})[key] = value.value
        return out
    return ctx.cached("tfperf.data_defaults.options", compute)


def _attribute_chain(node: ast.AST) -> list[str] | None:
    """``opts.experimental_optimization.inject_prefetch`` → the three names."""
    parts: list[str] = []
    while type(node) is ast.Attribute:
        parts.append(node.attr)
        node = node.value
    if type(node) is not ast.Name:
        return None
    parts.append(node.id)
    return parts[::-1]


def pipeline_settings(ctx: Context, pipe: Pipeline) -> dict[str, bool]:
    """The option settings the pipeline's ``with_options(opts)`` steps apply (later wins)."""
    settings: dict[str, bool] = {}
    known = option_settings(ctx)
    for step in pipe.steps:
        if step.func.attr != "with_options" or not step.args:
            continue
        arg = step.args[0]
        if type(arg) is ast.Name:
            settings.update(known.get(arg.id, {}))
    return settings


def data_defaults(ctx: Context, pipe: Pipeline | None) -> DataDefaults:
    """What TF (``ctx.tf_version``) does by itself to ``pipe`` (``None``: a pipeline whose
    options are not visible, taken as TF's defaults)."""
    v = ctx.tf_version
    s = pipeline_settings(ctx, pipe) if pipe is not None else {}
    defaults_on = s.get("apply_default_optimizations", True)

    def decide(option: str, since: Version) -> tuple[bool, str]:
        if s.get("autotune") is False:
            return False, "the pipeline turns autotune off"
        if option in s:
            return (True, "") if s[option] else (False, f"the pipeline sets {option}=False")
        if not defaults_on:
            return False, "the pipeline sets apply_default_optimizations=False"
        if v < since:
            return False, (f"the targeted {_version(v)} has no {option} by default; "
                           f"it is on from {_version(since)}")
        return True, ""

    inject, why_inject = decide("inject_prefetch", INJECT_PREFETCH_SINCE)
    parallel, why_parallel = decide("map_parallelization", MAP_PARALLELIZATION_SINCE)
    return DataDefaults(inject, parallel, why_inject, why_parallel)


@dataclass(frozen=True)
class MapState:
    """Whether a map function is stateful as TF sees the traced graph: ``stateful`` with
    the call that makes it so (``what``), or not; ``known``: every call in it was
    understood (a call to a function not visible here leaves it unknown)."""

    stateful: bool
    known: bool
    what: str = ""


def map_state(ctx: Context, fn: ast.AST | None, _depth: int = 0,
              _flags: dict[str, bool] | None = None) -> MapState:
    """Is the function ``ds.map(fn)`` runs stateful (so TF will not parallelise it)?
    (``_flags``: parameters a calling function fixes to ``True``/``False``; an ``if flag:``
    on one is a Python branch taken at trace time, so only that branch is traced.)"""
    if fn is None:
        return MapState(False, False, "a function not visible here")
    known = True
    unknown_what = ""
    nodes = body_nodes(fn) if not _flags else _traced_nodes(fn, _flags)
    for n in nodes:
        if type(n) is not ast.Call:
            continue
        func = n.func
        q = ctx.qualname(func)
        if q is not None:
            if is_random_op(q):
                return MapState(True, True, _short(q))
            if q in PY_FUNCTIONS:
                stateful = keyword(n, "stateful")
                if not (type(stateful) is ast.Constant and stateful.value is False):
                    return MapState(True, True, _short(q))
                continue
            if q in STATEFUL_CALLS or q.startswith(STATEFUL_PREFIXES):
                return MapState(True, True, _short(q))
            if q.startswith(("tensorflow.", "keras.ops.", "numpy.", "math.")):
                continue
            known, unknown_what = False, unknown_what or _short(q)
            continue
        if type(func) is ast.Name:
            inner = _callee(ctx, func, _depth, n)
            if isinstance(inner, MapState):
                if inner.stateful:
                    return inner
                if not inner.known:
                    known, unknown_what = False, unknown_what or inner.what
                continue
            if func.id in TRACE_TIME_BUILTINS:
                continue
            known, unknown_what = False, unknown_what or func.id
            continue
        if type(func) is ast.Attribute:
            if func.attr in STATEFUL_METHODS:
                return MapState(True, True, f".{func.attr}()")
            if func.attr in STATELESS_METHODS:
                continue
        known, unknown_what = False, unknown_what or ast.unparse(func)
    return MapState(False, known, unknown_what)


def _callee(ctx: Context, name: ast.Name, depth: int, call: ast.Call) -> MapState | None:
    """What calling ``name`` does, when it is bound here: a ``def`` (looked into, with the
    boolean constants ``call`` passes or leaves at their defaults), a Keras random layer or a
    ``Sequential`` holding one (stateful), a ``lambda``."""
    b = ctx.binding(name)
    if b is None or depth >= _MAX_DEPTH:
        return None
    if b.kind == "def":
        return map_state(ctx, b.value, depth + 1, _bool_arguments(b.value, call))
    if b.kind != "assign" or b.value is None:
        return None
    value = b.value
    if type(value) is ast.Lambda:
        return map_state(ctx, value, depth + 1)
    if type(value) is not ast.Call:
        return None
    q = ctx.qualname(value.func)
    if q is None:
        return None
    if is_random_op(q):
        return MapState(True, True, _short(q))
    if q in ("keras.Sequential", "keras.models.Sequential"):
        for layer in ast.walk(value):
            if type(layer) is ast.Call and layer is not value \
                    and is_random_op(ctx.qualname(layer.func)):
                return MapState(True, True, _short(ctx.qualname(layer.func) or ""))
        return MapState(False, False, name.id)  # layers not seen through: a model's call
    return None


def mapped_function_state(ctx: Context, fn: ast.AST | None,
                          fixed: dict[str, bool] | None = None) -> MapState:
    """:func:`map_state` of the function ``ds.map(fn)`` runs. tf.data calls a ``def`` with
    the element's components only, so its parameters with a ``True``/``False`` default keep
    it while tracing: ``def prep(img, label, augment=False)`` traces the ``else`` branch;
    ``fixed``: parameters a ``functools.partial`` sets (:func:`map_function_flags`)."""
    flags: dict[str, bool] = {}
    args = getattr(fn, "args", None)
    if type(fn) in (ast.FunctionDef, ast.AsyncFunctionDef) and args is not None:
        positional = [*args.posonlyargs, *args.args]
        for a, d in zip(positional[len(positional) - len(args.defaults):], args.defaults,
                        strict=True):
            if type(d) is ast.Constant and type(d.value) is bool:
                flags[a.arg] = d.value
        for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True):
            if type(d) is ast.Constant and type(d.value) is bool:
                flags[a.arg] = d.value
    flags.update(fixed or {})
    return map_state(ctx, fn, _flags=flags or None)


def _bool_arguments(fn: ast.AST, call: ast.Call) -> dict[str, bool]:
    """Parameters of ``fn`` that ``call`` fixes to a bool constant, passed or by default:
    ``preprocess(img, is_training=False)`` → ``{"is_training": False}``."""
    return {name: v.value for name, v in (bound_arguments(fn, call) or {}).items()
            if type(v) is ast.Constant and type(v.value) is bool}


def _traced_nodes(fn: ast.AST, flags: dict[str, bool]) -> Iterator[ast.AST]:
    """``body_nodes`` of ``fn``, but ``if flag:``/``if not flag:`` on a fixed flag yields only
    the branch Python takes (the other one is never traced)."""
    def walk(node: ast.AST) -> Iterator[ast.AST]:
        yield node
        if type(node) is ast.If:
            taken = _flag_value(node.test, flags)
            if taken is not None:
                for stmt in node.body if taken else node.orelse:
                    yield from walk(stmt)
                return
        for child in ast.iter_child_nodes(node):
            yield from walk(child)

    if type(fn) is ast.Lambda:
        yield from ast.walk(fn.body)
        return
    for stmt in getattr(fn, "body", ()):
        yield from walk(stmt)


def _flag_value(test: ast.expr, flags: dict[str, bool]) -> bool | None:
    if type(test) is ast.Name and test.id in flags:
        return flags[test.id]
    if type(test) is ast.UnaryOp and type(test.op) is ast.Not:
        inner = _flag_value(test.operand, flags)
        return None if inner is None else not inner
    return None


def _short(qualname: str) -> str:
    """``tensorflow.image.random_flip_left_right`` → ``tf.image.random_flip_left_right``."""
    if qualname.startswith("tensorflow."):
        return "tf." + qualname[len("tensorflow."):]
    return qualname


def asynchronous_end(ctx: Context, pipe: Pipeline, defaults: DataDefaults) -> bool:
    """Is the pipeline's last transformation (past ``with_options``) one that already runs
    ahead of its consumer? TF's ``inject_prefetch.cc`` counts ``ParallelMapDataset`` and
    ``ParallelInterleaveDataset`` as asynchronous and injects nothing after them: a ``map``
    or ``interleave`` given ``num_parallel_calls``, or a ``map`` that ``map_parallelization``
    makes parallel (its function seen here and stateless)."""
    steps = [s for s in pipe.steps if s.func.attr != "with_options"]
    if not steps:
        return False
    last = steps[-1]
    method = last.func.attr
    if method == "apply" and last.args and type(last.args[0]) is ast.Call:
        # `apply(tf.data.experimental.map_and_batch(f, n, num_parallel_batches=k))` (or
        # `parallel_interleave`): TF1's fused forms, their own workers run ahead
        fused = last.args[0]
        name = (ctx.qualname(fused.func) or "").rsplit(".", 1)[-1]
        return (name == "parallel_interleave" or (name == "map_and_batch" and any(
            k.arg in ("num_parallel_batches", "num_parallel_calls") for k in fused.keywords)))
    if method not in ("map", "interleave"):
        return False
    if parallel_calls_given(last):
        return True
    if method != "map" or not defaults.map_parallelization:
        return False
    state = mapped_function_state(ctx, map_function(ctx, last), map_function_flags(ctx, last))
    return state.known and not state.stateful
