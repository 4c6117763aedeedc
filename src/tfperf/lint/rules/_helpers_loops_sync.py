"""Shared analysis for the loop (TFP104, TFP105) and host-sync (TFP201-TFP204) rules.

Candidates for ``tfperf.lint.semantic`` later: host conversions of tensors, code that a
``tf.py_function`` runs eagerly inside a traced function, guards such as
``if tf.executing_eagerly():``, Keras model values, and "per iteration" data of a loop.
Modules starting with ``_`` are helpers, not rules; the registry skips them.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TypeVar

from tfperf.lint.rules._loops import is_builtin, range_args
from tfperf.lint.semantic import FUNCTION_NODES, TENSOR_ANNOTATIONS, Context

T = TypeVar("T")

# ---------------------------------------------------------------------------- per-module memo

def memo(ctx: Context, key: str, compute: Callable[[], T]) -> T:
    """A fact about the module, computed once per ``Context`` (rules stay stateless: the
    value lives on the module's context, not on the rule)."""
    slot = f"_loops_sync_{key}"
    value = ctx.__dict__.get(slot, _MISSING)
    if value is _MISSING:
        value = compute()
        ctx.__dict__[slot] = value
    return value  # type: ignore[return-value]


_MISSING = object()


def source_mentions(ctx: Context, *words: str) -> bool:
    """Whether the module's text contains any of ``words``: a cheap filter before any name
    resolution (memoised per module and word set)."""
    return memo(ctx, "text:" + "|".join(words), lambda: any(w in ctx.source for w in words))


def top_level_imports(ctx: Context, module: str) -> dict[str, str]:
    """Module-level names bound by importing from ``module`` (``import numpy as np`` →
    ``{"np": "numpy"}``, ``from numpy import mean as m`` → ``{"m": "numpy.mean"}``), from the
    module's top-level statements only (cheap: no tree walk)."""
    def compute() -> dict[str, str]:
        out: dict[str, str] = {}
        for stmt in ctx.tree.body:
            if type(stmt) is ast.Import:
                for a in stmt.names:
                    if a.name == module or a.name.startswith(module + "."):
                        out[a.asname or a.name.split(".", 1)[0]] = a.name if a.asname \
                            else a.name.split(".", 1)[0]
            elif type(stmt) is ast.ImportFrom and not stmt.level and stmt.module \
                    and (stmt.module == module or stmt.module.startswith(module + ".")):
                for a in stmt.names:
                    out[a.asname or a.name] = f"{stmt.module}.{a.name}"
        return out
    return memo(ctx, "imports:" + module, compute)


def root_name(expr: ast.AST) -> str | None:
    """``np.linalg.norm`` → "np"; ``mean`` → "mean"; anything else → ``None``."""
    while type(expr) is ast.Attribute:
        expr = expr.value  # type: ignore[attr-defined]
    return expr.id if type(expr) is ast.Name else None  # type: ignore[attr-defined]


# ---------------------------------------------------------------------------- host conversions

NUMPY_CONVERSIONS = frozenset({"numpy.array", "numpy.asarray", "numpy.asanyarray",
                               "numpy.ascontiguousarray"})
SCALAR_BUILTINS = ("float", "int", "bool", "complex")
# Frameworks whose tensors also have ``.numpy()``: there, an unknown receiver may be theirs.
_OTHER_FRAMEWORKS = frozenset({"torch", "jax", "paddle", "mxnet", "cupy", "oneflow"})


@dataclass(frozen=True)
class HostConversion:
    """A call that copies a value to the host: ``x.numpy()``, ``np.array(x)``, ``float(x)``...
    ``operand`` is ``x``; ``label`` names the conversion for messages."""

    call: ast.Call
    operand: ast.expr
    label: str
    kind: str  # "numpy" (.numpy()), "np" (np.array & co), "builtin" (float/int/bool)


def host_conversion(ctx: Context, call: ast.AST) -> HostConversion | None:
    """What ``call`` converts to a host value, whatever the operand is (callers judge it)."""
    if type(call) is not ast.Call:
        return None
    func = call.func  # type: ignore[attr-defined]
    if type(func) is ast.Attribute:
        if func.attr == "numpy" and not call.args and not call.keywords:  # type: ignore[attr-defined]
            return HostConversion(call, func.value, ".numpy()", "numpy")  # type: ignore[arg-type]
        if func.attr in ("array", "asarray", "asanyarray", "ascontiguousarray") \
                and call.args and ctx.qualname(func) in NUMPY_CONVERSIONS:  # type: ignore[attr-defined]
            return HostConversion(call, call.args[0], f"np.{func.attr}()", "np")  # type: ignore[arg-type, attr-defined]
        return None
    if type(func) is ast.Name:
        if func.id in SCALAR_BUILTINS and len(call.args) == 1 and not call.keywords \
                and is_builtin(ctx, func, func.id):  # type: ignore[attr-defined]
            return HostConversion(call, call.args[0], f"{func.id}()", "builtin")  # type: ignore[arg-type, attr-defined]
        if call.args and ctx.qualname(func) in NUMPY_CONVERSIONS:  # `from numpy import asarray`  # type: ignore[attr-defined]
            return HostConversion(call, call.args[0], f"{func.id}()", "np")  # type: ignore[arg-type, attr-defined]
    return None


def other_framework_imported(ctx: Context) -> bool:
    """The module imports a framework (PyTorch, JAX...) whose tensors also have ``.numpy()``."""
    def compute() -> bool:
        if not any(w in ctx.source for w in _OTHER_FRAMEWORKS):
            return False
        for stmt in ctx.nodes_of(ast.Import, ast.ImportFrom):
            if type(stmt) is ast.Import:
                if any(a.name.split(".", 1)[0] in _OTHER_FRAMEWORKS for a in stmt.names):
                    return True
            elif type(stmt) is ast.ImportFrom and not stmt.level and stmt.module \
                    and stmt.module.split(".", 1)[0] in _OTHER_FRAMEWORKS:
                return True
        return False
    return memo(ctx, "other_framework", compute)


def converts_a_tensor(ctx: Context, conv: HostConversion) -> bool:
    """Whether the conversion's operand is (or, for ``.numpy()``, may be taken as) a TF
    tensor. ``.numpy()`` is itself the evidence, unless another framework with ``.numpy()``
    is imported and nothing else says the receiver is TensorFlow's."""
    if ctx.is_tensor_like(conv.operand):
        return True
    return conv.kind == "numpy" and not other_framework_imported(ctx)


# ---------------------------------------------------------------------------- traced code

# Last parts of the TF functions that run a Python function eagerly (public and internal
# spellings: tf.py_function, tf.numpy_function, tf.compat.v1.py_func, script_ops.eager_py_func).
PY_FUNCTION_NAMES = frozenset({"py_function", "numpy_function", "py_func", "eager_py_func"})
# Words in an `if` test that guard eager-only code (`if tf.executing_eagerly():`,
# `if is_torch_backend:`, `isinstance(x, EagerTensor)`, `hasattr(x, "numpy")`).
_EAGER_GUARD_WORDS = ("eager", "torch", "symbolic", "inside_function", "keras_tensor")


def is_py_function_call(ctx: Context, call: ast.AST) -> bool:
    q = ctx.call_qualname(call)
    return q is not None and q.startswith("tensorflow.") \
        and q.rsplit(".", 1)[1] in PY_FUNCTION_NAMES


def _py_function_targets(ctx: Context) -> frozenset[str]:
    """Names of the functions handed to ``tf.py_function``-like calls in the module."""
    def compute() -> frozenset[str]:
        if not any(w in ctx.source for w in ("py_func", "numpy_function")):
            return frozenset()
        names: set[str] = set()
        by_attr, by_name = ctx.call_groups()
        for call in (c for n in PY_FUNCTION_NAMES for g in (by_attr, by_name)
                     for c in g.get(n, ())):
            if not is_py_function_call(ctx, call):
                continue
            passed = [call.args[0]] if call.args else []
            passed += [k.value for k in call.keywords if k.arg == "func"]
            for a in passed:
                name = getattr(a, "id", None) or getattr(a, "attr", None)
                if name:
                    names.add(name)
        return frozenset(names)
    return memo(ctx, "py_function_targets", compute)


def _passed_to_py_function(ctx: Context, fn: ast.AST) -> bool:
    """``fn`` is handed to ``tf.py_function``/``tf.numpy_function``: it runs eagerly."""
    if type(fn) is ast.Lambda:
        p = ctx.parent(fn)
        if type(p) is ast.keyword:
            p = ctx.parent(p)
        return type(p) is ast.Call and is_py_function_call(ctx, p)
    name = getattr(fn, "name", None)
    return name is not None and name in _py_function_targets(ctx)


def eager_guarded(ctx: Context, node: ast.AST) -> bool:
    """``node`` sits in an ``if``/conditional expression whose test asks whether code runs
    eagerly (``tf.executing_eagerly()``, ``isinstance(x, EagerTensor)``, ``hasattr(x,
    "numpy")``, ``if is_torch_backend:``), within its function: code that is correct in
    both modes."""
    for p in ctx.ancestors(node):
        tp = type(p)
        if tp is ast.If or tp is ast.IfExp or tp is ast.While:
            for n in ast.walk(p.test):  # type: ignore[attr-defined]
                t = type(n)
                word = n.id if t is ast.Name else n.attr if t is ast.Attribute \
                    else n.value if t is ast.Constant and type(n.value) is str else None  # type: ignore[attr-defined]
                if word is not None and (word == "numpy" or any(
                        w in word.lower() for w in _EAGER_GUARD_WORDS)):
                    return True
        elif tp in FUNCTION_NODES:
            return False
    return False


def traced(ctx: Context, node: ast.AST) -> bool:
    """``node`` runs inside a graph TensorFlow traces (``tf.function``, Keras ``call``,
    ``Dataset.map`` function), and not in a function a ``tf.py_function`` runs eagerly."""
    for fn in ctx.enclosing_functions(node):
        if _passed_to_py_function(ctx, fn):
            return False
        if ctx.is_tf_function(fn) or ctx.dataset_map_call(fn) is not None:
            return True
    return False


def in_py_function(ctx: Context, node: ast.AST) -> bool:
    """``node`` runs in a function handed to ``tf.py_function``/``tf.numpy_function``, where
    host values are the point."""
    return any(_passed_to_py_function(ctx, fn) for fn in ctx.enclosing_functions(node))


# ---------------------------------------------------------------------------- strict tensors

def _literal_default(arguments: ast.arguments, arg: ast.arg) -> bool:
    if arg in arguments.kwonlyargs:
        default = arguments.kw_defaults[arguments.kwonlyargs.index(arg)]
        return isinstance(default, ast.Constant)
    positional = arguments.posonlyargs + arguments.args
    if arg not in positional:
        return True  # *args / **kwargs: anything
    i = positional.index(arg) - (len(positional) - len(arguments.defaults))
    return i >= 0 and isinstance(arguments.defaults[i], ast.Constant)


def param_is_tensor(ctx: Context, arg: ast.arg) -> bool:
    """A parameter that surely holds a tensor: annotated so, or (without a literal default)
    a parameter of a function with an ``input_signature``, of a ``Dataset.map`` function, or
    the inputs of a Keras ``call``. A plain ``tf.function`` parameter may be a Python value."""
    if arg.annotation is not None:
        return ctx.qualname(arg.annotation) in TENSOR_ANNOTATIONS
    arguments = ctx.parent(arg)
    fn = ctx.parent(arguments) if arguments is not None else None
    if fn is None or arg.arg in ("self", "cls") or _literal_default(arguments, arg):  # type: ignore[arg-type]
        return False
    deco = ctx.tf_function_decorator(fn)
    if type(deco) is ast.Call and any(k.arg == "input_signature" for k in deco.keywords):  # type: ignore[attr-defined]
        return True
    if ctx.dataset_map_call(fn) is not None:
        return True
    positional = arguments.posonlyargs + arguments.args  # type: ignore[union-attr]
    return getattr(fn, "name", None) == "call" and ctx.is_tf_function(fn) \
        and len(positional) > 1 and positional[1] is arg


def surely_tensor(ctx: Context, expr: ast.AST | None, _depth: int = 0) -> bool:
    """Like ``ctx.is_tensor_like`` but parameters count only when :func:`param_is_tensor`:
    for rules where a Python value in that place would be legitimate."""
    if expr is None or _depth > 10:
        return False
    t = type(expr)
    if t is ast.Name:
        b = ctx.binding(expr)  # type: ignore[arg-type]
        if b is None:
            return False
        if b.kind == "param":
            return param_is_tensor(ctx, b.value)
        if b.kind == "assign":
            return surely_tensor(ctx, b.value, _depth + 1)
        return ctx.is_tensor_like(expr)
    if t is ast.Subscript:
        return surely_tensor(ctx, expr.value, _depth + 1)  # type: ignore[attr-defined]
    if t is ast.BinOp:
        return surely_tensor(ctx, expr.left, _depth + 1) \
            or surely_tensor(ctx, expr.right, _depth + 1)  # type: ignore[attr-defined]
    if t is ast.UnaryOp:
        return surely_tensor(ctx, expr.operand, _depth + 1)  # type: ignore[attr-defined]
    if t is ast.Call:
        return ctx.is_tensor_like(expr)
    return False


# ---------------------------------------------------------------------------- loop data

def loop_targets(loop: ast.AST) -> set[str]:
    """Names a ``for`` loop or comprehension binds per iteration (all generators)."""
    if type(loop) in (ast.For, ast.AsyncFor):
        targets = [loop.target]  # type: ignore[attr-defined]
    elif hasattr(loop, "generators"):
        targets = [g.target for g in loop.generators]  # type: ignore[attr-defined]
    else:
        return set()
    return {n.id for t in targets for n in ast.walk(t) if type(n) is ast.Name}


def loop_iterables(loop: ast.AST) -> list[ast.expr]:
    """What a ``for`` loop or comprehension iterates; ``enumerate``/``zip`` unwrapped."""
    if type(loop) in (ast.For, ast.AsyncFor):
        its = [loop.iter]  # type: ignore[attr-defined]
    elif hasattr(loop, "generators"):
        its = [g.iter for g in loop.generators]  # type: ignore[attr-defined]
    else:
        return []
    out: list[ast.expr] = []
    for it in its:
        if type(it) is ast.Call and type(it.func) is ast.Name \
                and it.func.id in ("enumerate", "zip") and it.args:
            out.extend(it.args if it.func.id == "zip" else it.args[:1])
        else:
            out.append(it)
    return out


def iterates_dataset(ctx: Context, loop: ast.AST) -> bool:
    """A loop over a ``tf.data`` dataset: one whole batch per iteration."""
    return any(ctx.is_dataset(it) for it in loop_iterables(loop))


def iterates_tensor(ctx: Context, loop: ast.AST) -> bool:
    """A loop over a tensor's rows (``for row in t``, ``enumerate(t)``), not a dataset."""
    return any(ctx.is_tensor_like(it) and not ctx.is_dataset(it) for it in loop_iterables(loop))


def _inside(ctx: Context, node: ast.AST, container: ast.AST) -> bool:
    return any(p is container for p in ctx.ancestors(node))


def per_iteration_data(ctx: Context, expr: ast.AST, loop: ast.AST, *,
                       bare_target: bool = True, _depth: int = 0) -> bool:
    """``expr`` holds data the loop picks per iteration: a loop variable (when
    ``bare_target``), something indexed with one (``x[i]``, ``x[:, i]``), or values derived
    from those by indexing, arithmetic, casts and names assigned inside the loop. A call of
    anything else (``load_image(path)``) is new data, not the loop's."""
    if _depth > 8:
        return False
    names = loop_targets(loop)
    t = type(expr)
    if t is ast.Name:
        if expr.id in names:  # type: ignore[attr-defined]
            return bare_target
        b = ctx.binding(expr)  # type: ignore[arg-type]
        if b is not None and b.kind == "assign" and b.value is not None \
                and _inside(ctx, b.value, loop) and b.value is not expr:
            return per_iteration_data(ctx, b.value, loop, bare_target=bare_target,
                                      _depth=_depth + 1)
        return False
    if t is ast.Subscript:
        if any(type(n) is ast.Name and n.id in names for n in ast.walk(expr.slice)):  # type: ignore[attr-defined]
            return True
        return per_iteration_data(ctx, expr.value, loop, bare_target=bare_target,  # type: ignore[attr-defined]
                                  _depth=_depth + 1)
    if t is ast.Attribute:
        return per_iteration_data(ctx, expr.value, loop, bare_target=bare_target,  # type: ignore[attr-defined]
                                  _depth=_depth + 1)
    if t is ast.BinOp:
        return any(per_iteration_data(ctx, e, loop, bare_target=bare_target, _depth=_depth + 1)
                   for e in (expr.left, expr.right))  # type: ignore[attr-defined]
    if t is ast.UnaryOp:
        return per_iteration_data(ctx, expr.operand, loop, bare_target=bare_target,  # type: ignore[attr-defined]
                                  _depth=_depth + 1)
    if t is ast.Call:
        first = preserved_operand(ctx, expr)  # type: ignore[arg-type]
        if first is not None:
            return per_iteration_data(ctx, first, loop, bare_target=bare_target,
                                      _depth=_depth + 1)
    return False


# Calls that reshape, cast or re-wrap their first argument without bringing new data.
_PRESERVING_METHODS = frozenset({"astype", "reshape", "squeeze", "flatten", "ravel", "copy"})
_PRESERVING_CALLS = frozenset({
    "tensorflow.cast", "tensorflow.convert_to_tensor", "tensorflow.constant",
    "tensorflow.expand_dims", "tensorflow.reshape", "tensorflow.squeeze",
    "tensorflow.image.convert_image_dtype", "numpy.array", "numpy.asarray",
    "numpy.expand_dims", "numpy.reshape", "numpy.float32", "numpy.float64", "numpy.squeeze",
    "keras.ops.expand_dims", "keras.ops.reshape", "keras.ops.cast",
    "keras.ops.convert_to_tensor",
})


def preserved_operand(ctx: Context, call: ast.Call) -> ast.expr | None:
    """For a call that only reshapes, casts or re-wraps a value (``x.astype(...)``,
    ``tf.cast(x, ...)``, ``np.expand_dims(x, 0)``), that value ``x``; else ``None``."""
    func = call.func
    if type(func) is ast.Attribute and func.attr in _PRESERVING_METHODS \
            and ctx.qualname(func) is None:
        return func.value
    if call.args and ctx.qualname(func) in _PRESERVING_CALLS:
        return call.args[0]
    return None


def small_literal_range(ctx: Context, loop: ast.AST, limit: int = 8) -> bool:
    """``for _ in range(3)``: a loop over a handful of iterations (literal bound)."""
    it = getattr(loop, "iter", None)
    args = range_args(ctx, it) if it is not None else None
    if not args:
        return False
    stop = args[0] if len(args) == 1 else args[1]
    return type(stop) is ast.Constant and type(stop.value) is int and stop.value <= limit


# ---------------------------------------------------------------------------- Keras models

# Calls whose result is a Keras model (canonical names; `keras.applications.X` too).
MODEL_FACTORIES = frozenset({
    "keras.Model", "keras.models.Model", "keras.Sequential", "keras.models.Sequential",
    "keras.models.load_model", "keras.saving.load_model", "keras.models.clone_model",
    "keras.models.model_from_json", "keras.models.model_from_config",
    "keras.models.model_from_yaml",
})
MODEL_CLASSES = frozenset({"keras.Model", "keras.models.Model", "keras.Sequential",
                           "keras.models.Sequential"})


def _model_class(ctx: Context, cls: ast.AST, depth: int = 0) -> bool:
    """A class deriving (directly or through classes of this module) from ``keras.Model``."""
    if type(cls) is not ast.ClassDef or depth > 10:
        return False
    for base in cls.bases:
        if ctx.qualname(base) in MODEL_CLASSES:
            return True
        if type(base) is ast.Name:
            b = ctx.binding(base)
            if b is not None and b.kind == "class" and _model_class(ctx, b.value, depth + 1):
                return True
    return False


def _model_factory_call(ctx: Context, call: ast.AST, depth: int) -> bool:
    if type(call) is not ast.Call:
        return False
    q = ctx.qualname(call.func)  # type: ignore[attr-defined]
    if q is not None:
        if q in MODEL_FACTORIES:
            return True
        parts = q.split(".")
        return q.startswith("keras.applications.") and parts[-1][:1].isupper()
    func = call.func  # type: ignore[attr-defined]
    if type(func) is not ast.Name:
        return False
    b = ctx.binding(func)
    if b is None:
        return False
    if b.kind == "class":
        return _model_class(ctx, b.value)
    if b.kind == "def" and depth < 3:  # `def build_model(): ... return keras.Model(...)`
        returns = [n for n in _own_nodes(b.value) if type(n) is ast.Return and n.value]
        return bool(returns) and all(is_keras_model(ctx, r.value, depth + 1) for r in returns)
    return False


def _own_nodes(fn: ast.AST) -> Iterator[ast.AST]:
    """Nodes of a function's body, not descending into nested functions or classes."""
    stack = list(getattr(fn, "body", ()))
    while stack:
        n = stack.pop()
        yield n
        for c in ast.iter_child_nodes(n):
            if type(c) not in (*FUNCTION_NODES, ast.ClassDef):
                stack.append(c)


def is_keras_model(ctx: Context, expr: ast.AST | None, depth: int = 0) -> bool:
    """``expr`` is a Keras model: a name bound to ``keras.Model(...)``/``Sequential``/
    ``load_model``/``keras.applications.X(...)``, to an instance of a ``keras.Model``
    subclass, to a module function that returns one, or a parameter annotated
    ``keras.Model``."""
    if expr is None or depth > 5:
        return False
    if type(expr) is ast.Call:
        return _model_factory_call(ctx, expr, depth)
    if type(expr) is not ast.Name:
        return False
    b = ctx.binding(expr)
    if b is None:
        return False
    if b.kind == "assign":
        return b.value is not expr and is_keras_model(ctx, b.value, depth + 1)
    if b.kind == "param":
        ann = b.value.annotation
        return ann is not None and ctx.qualname(ann) in MODEL_CLASSES
    return False
