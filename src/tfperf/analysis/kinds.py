"""The kind of a value, as far as the code shows it without running it.

Kinds are plain strings (they travel in module summaries): :data:`TENSOR`, :data:`TENSOR_LIST`
(a Python list of tensors, as ``tf.split`` returns), :data:`NUMBER` and :data:`BOOL` (Python
values: what ``tf.function`` keys its traces on), :data:`STRING`, :data:`NDARRAY`,
:data:`DATASET`, :data:`MODEL` (a Keras model), :data:`NONE` and :data:`UNKNOWN`.

Followed: names through their binding in effect (assignments, loop targets, parameters and
their defaults or annotations), ``self.x`` through the assignments of the class, calls of the
module's own functions through what they return. Conservative: what cannot be told is
:data:`UNKNOWN`, and two different kinds for one value make it unknown.

Two questions about values that change per iteration live here too:
:func:`python_number_varies` (a Python number that takes a new value each iteration: one
trace per value when passed to a ``tf.function``) and :func:`leading_size_varies` (a tensor
or array whose first dimension changes from one iteration to the next: one trace per size).
"""

from __future__ import annotations

import ast
import re
from typing import Any

from tfperf.lint.analysis.keras_models import is_keras_model, other_library_object
from tfperf.lint.analysis.varying import varying_scalar
from tfperf.lint.semantic import Context, returns_tensor
from tfperf.lint.semantic.tf_api import returns_tensor_list

TENSOR, TENSOR_LIST, NUMBER, BOOL, STRING = "tensor", "tensor_list", "number", "bool", "string"
NDARRAY, DATASET, MODEL, NONE, UNKNOWN = "ndarray", "dataset", "model", "none", "unknown"
PYTHON_VALUES = frozenset({NUMBER, BOOL})

# NumPy calls that return an array (not a scalar, not a module helper).
_NUMPY_SCALAR = frozenset({"numpy.sum", "numpy.mean", "numpy.max", "numpy.min", "numpy.argmax",
                           "numpy.argmin", "numpy.prod", "numpy.std", "numpy.var",
                           "numpy.float32", "numpy.float64", "numpy.int32", "numpy.int64",
                           "numpy.median", "numpy.isscalar"})
_NUMBER_BUILTINS = frozenset({"int", "float", "len", "round", "abs", "min", "max", "sum",
                              "pow", "divmod"})
_NUMBER_MODULES = ("math.",)
_DEPTH = 8


def _unify(kinds: list[str]) -> str:
    found = set(kinds)
    if len(found) == 1:
        return found.pop()
    if found == {NUMBER, BOOL}:
        return NUMBER
    return UNKNOWN


def kind_of(ctx: Context, expr: Any, _depth: int = 0) -> str:
    """The kind of ``expr`` (see the module's docstring); :data:`UNKNOWN` when not told."""
    if expr is None or _depth > _DEPTH:
        return UNKNOWN
    t = type(expr)
    if t is ast.Constant:
        v = expr.value
        if v is None:
            return NONE
        if type(v) is bool:
            return BOOL
        if type(v) in (int, float):
            return NUMBER
        if type(v) in (str, bytes):
            return STRING
        return UNKNOWN
    if t is ast.JoinedStr:
        return STRING
    if t is ast.Compare or (t is ast.UnaryOp and type(expr.op) is ast.Not):
        return BOOL if not ctx.is_tensor_like(expr) else TENSOR
    if t is ast.BoolOp:
        return _unify([kind_of(ctx, v, _depth + 1) for v in expr.values])
    if ctx.imports_tf:
        if ctx.is_dataset(expr):
            return DATASET
        if ctx.is_tensor_like(expr):
            return TENSOR
        if ctx.is_tensor_list(expr):
            return TENSOR_LIST
    if t is ast.Name:
        return _name_kind(ctx, expr, _depth)
    if t is ast.Attribute:
        return _attribute_kind(ctx, expr, _depth)
    if t is ast.BinOp:
        left, right = kind_of(ctx, expr.left, _depth + 1), kind_of(ctx, expr.right, _depth + 1)
        if NDARRAY in (left, right):
            return NDARRAY
        if left in PYTHON_VALUES and right in PYTHON_VALUES:
            return NUMBER
        if left == STRING and right in (STRING, NUMBER, UNKNOWN):
            return STRING if type(expr.op) in (ast.Add, ast.Mod) else UNKNOWN
        return UNKNOWN
    if t is ast.UnaryOp:
        inner = kind_of(ctx, expr.operand, _depth + 1)
        return inner if inner in (NUMBER, NDARRAY, TENSOR) else UNKNOWN
    if t is ast.IfExp:
        return _unify([kind_of(ctx, expr.body, _depth + 1),
                       kind_of(ctx, expr.orelse, _depth + 1)])
    if t is ast.Call:
        return _call_kind(ctx, expr, _depth)
    if t in (ast.List, ast.Tuple) and ctx.imports_tf and expr.elts \
            and all(ctx.is_tensor_like(e) for e in expr.elts):
        return TENSOR_LIST
    return UNKNOWN


def _call_kind(ctx: Context, call: Any, depth: int) -> str:
    func = call.func
    q = ctx.qualname(func)
    if q is not None:
        if q.startswith("numpy.") and q not in _NUMPY_SCALAR and not q.startswith(
                ("numpy.random.seed", "numpy.save", "numpy.set")):
            return NDARRAY
        if q in _NUMPY_SCALAR or q.startswith(_NUMBER_MODULES):
            return NUMBER
        if is_keras_model(ctx, call):
            return MODEL
        return UNKNOWN
    if type(func) is ast.Name:
        if ctx.is_builtin(func, *_NUMBER_BUILTINS):
            if func.id in ("min", "max", "sum", "abs", "round") and call.args:
                kinds = [kind_of(ctx, a, depth + 1) for a in call.args]
                return NUMBER if all(k in PYTHON_VALUES for k in kinds) else UNKNOWN
            return NUMBER
        if ctx.is_builtin(func, "bool"):
            return BOOL
        if ctx.is_builtin(func, "str"):
            return STRING
        if is_keras_model(ctx, call):
            return MODEL
        b = ctx.binding(func)
        if b is not None and b.kind == "def":
            return returned_kind(ctx, b.value, depth + 1)
        return UNKNOWN
    if type(func) is ast.Attribute:
        attr = func.attr
        if attr == "numpy" and not call.args:
            return NDARRAY
        if attr in ("item", "__len__"):
            return NUMBER
        if attr in ("astype", "reshape", "copy", "squeeze", "flatten", "ravel", "transpose") \
                and kind_of(ctx, func.value, depth + 1) == NDARRAY:
            return NDARRAY
    return UNKNOWN


def quick_kind(ctx: Context, expr: Any, _depth: int = 0, follow: bool = True) -> str:
    """The kind of ``expr`` from its spelling alone: a literal, a call of a TensorFlow,
    NumPy or Keras API (by what it resolves to), or a name assigned one of those; no value
    is followed further (``follow=False``: not even a name). What module summaries record
    (cheap: one look per value); :func:`kind_of` follows values where a rule needs it."""
    t = type(expr)
    if t is ast.Constant or t is ast.JoinedStr:
        return kind_of(ctx, expr)
    if t is ast.Name and _depth < 2 and follow:
        b = ctx.binding(expr)
        if b is not None and b.kind == "assign" and b.value is not expr:
            return quick_kind(ctx, b.value, _depth + 1)
        return UNKNOWN
    if t is ast.Call:
        if ctx.imports_tf and ctx.is_dataset(expr):
            return DATASET
        q = ctx.qualname(expr.func)
        if q is None:
            return UNKNOWN
        if q.startswith("numpy."):
            return NUMBER if q in _NUMPY_SCALAR else NDARRAY
        if returns_tensor(q):
            return TENSOR
        if returns_tensor_list(q):
            return TENSOR_LIST
        if is_keras_model(ctx, expr):
            return MODEL
    return UNKNOWN


def returned_kind(ctx: Context, fn: Any, _depth: int = 0) -> str:
    """What a function of this module returns: the kind every ``return`` agrees on, each
    told by :func:`quick_kind` from the returned expression's spelling; a generator gives
    :data:`UNKNOWN`, a function without ``return <value>`` :data:`NONE`. Memoised per
    module; the returns of every function are grouped in one pass."""
    cache: dict[int, str] = ctx.cached("analysis.returned_kind", dict)
    key = id(fn)
    if key in cache:
        return cache[key]
    cache[key] = UNKNOWN  # a recursive function: unknown while it is being worked out
    returns, generators = _returns_by_function(ctx)
    if key in generators:
        return UNKNOWN
    values = returns.get(key, [])
    kind = _unify([quick_kind(ctx, v, follow=False) if v is not None else NONE
                   for v in values]) \
        if values else NONE
    cache[key] = kind
    return kind


def _returns_by_function(ctx: Context) -> tuple[dict[int, list[Any]], set[int]]:
    """(id of a function → the values its ``return`` statements return, ids of generator
    functions), from the module's walk: no function is walked again."""
    def compute() -> tuple[dict[int, list[Any]], set[int]]:
        returns: dict[int, list[Any]] = {}
        generators: set[int] = set()
        n: Any
        for n in ctx.nodes_of(ast.Return):
            fn = ctx.enclosing_function(n)
            if fn is not None:
                returns.setdefault(id(fn), []).append(n.value)
        for n in ctx.nodes_of(ast.Yield, ast.YieldFrom):
            fn = ctx.enclosing_function(n)
            if fn is not None:
                generators.add(id(fn))
        return returns, generators
    return ctx.cached("analysis.returns_by_function", compute)


def _name_kind(ctx: Context, name: Any, depth: int) -> str:
    b = ctx.binding(name)
    if b is None:
        return UNKNOWN
    if b.kind == "assign":
        return UNKNOWN if b.value is name else kind_of(ctx, b.value, depth + 1)
    if b.kind == "augassign":
        return kind_of(ctx, b.value.value, depth + 1) \
            if kind_of(ctx, b.value.value, depth + 1) in PYTHON_VALUES else UNKNOWN
    if b.kind == "for":
        it = getattr(b.value, "iter", None)
        if it is not None and ctx.is_builtin_call(it, "range") \
                and type(getattr(b.value, "target", None)) is ast.Name:
            return NUMBER
        return UNKNOWN
    if b.kind == "param":
        return param_kind(ctx, b.value, depth + 1)
    return UNKNOWN


_ANNOTATED = {"int": NUMBER, "float": NUMBER, "bool": BOOL, "str": STRING}


def param_kind(ctx: Context, arg: Any, _depth: int = 0) -> str:
    """A parameter's kind from its annotation, else from its default (``lr=0.01`` is a
    Python number; ``training=False`` a bool); :data:`UNKNOWN` otherwise."""
    ann = arg.annotation
    if type(ann) is ast.Name and ann.id in _ANNOTATED:
        return _ANNOTATED[ann.id]
    default = param_default(ctx, arg)
    if default is None:
        return UNKNOWN
    kind = kind_of(ctx, default, _depth + 1)
    return UNKNOWN if kind == NONE else kind


def param_default(ctx: Context, arg: Any) -> ast.expr | None:
    """The default value of a parameter, if it has one."""
    arguments = ctx.parent(arg)
    if type(arguments) is not ast.arguments:
        return None
    if arg in arguments.kwonlyargs:
        return arguments.kw_defaults[arguments.kwonlyargs.index(arg)]
    positional = [*arguments.posonlyargs, *arguments.args]
    if arg not in positional:
        return None
    i = positional.index(arg) - (len(positional) - len(arguments.defaults))
    return arguments.defaults[i] if i >= 0 else None


def _attribute_kind(ctx: Context, attr: Any, depth: int) -> str:
    """``self.x``: the kind every ``self.x = ...`` of the class agrees on."""
    if type(attr.value) is not ast.Name or attr.value.id != "self":
        return UNKNOWN
    values = self_assignments(ctx, attr).get(attr.attr)
    if not values:
        return UNKNOWN
    return _unify([kind_of(ctx, v, depth + 1) for v in values])


def self_assignments(ctx: Context, node: Any) -> dict[str, list[ast.expr]]:
    """For the class around ``node``: each ``self.<attr>`` the class's methods assign, with
    the values assigned (``self.x = v``; ``self.x: T = v``). One pass over the module's
    assignments, grouped by class."""
    cls = ctx.enclosing_class(node)
    if cls is None:
        return {}
    return _self_assignments_by_class(ctx).get(id(cls), {})


def set_only_in_class(ctx: Context, node: Any, attr: str) -> bool:
    """Review 39 (2): every store of ``.<attr>`` in the module is ``self.<attr>`` in the
    class around ``node``. A store through another receiver (``trainer.step =
    tf.function(trainer.step)`` in a script) or in another class (a subclass) may replace
    what the class assigned, so its own assignments do not say what runs."""
    cls = ctx.enclosing_class(node)
    if cls is None:
        return False
    return all(owner == id(cls) for owner in _attribute_stores(ctx).get(attr, ()))


def _attribute_stores(ctx: Context) -> dict[str, list[int | None]]:
    """``attr`` → for each store of ``<x>.attr`` in the module: the id of its class when the
    receiver is ``self``, else None."""
    def compute() -> dict[str, list[int | None]]:
        out: dict[str, list[int | None]] = {}
        n: Any
        for n in ctx.nodes_of(ast.Attribute):
            if type(n.ctx) is not ast.Store:
                continue
            owner: int | None = None
            if type(n.value) is ast.Name and n.value.id == "self":
                cls = ctx.enclosing_class(n)
                owner = id(cls) if cls is not None else None
            out.setdefault(n.attr, []).append(owner)
        return out
    return ctx.cached("analysis.attribute_stores", compute)


def _self_assignments_by_class(ctx: Context) -> dict[int, dict[str, list[ast.expr]]]:
    def compute() -> dict[int, dict[str, list[ast.expr]]]:
        out: dict[int, dict[str, list[ast.expr]]] = {}
        n: Any
        for n in ctx.nodes_of(ast.Assign, ast.AnnAssign):
            if type(n) is ast.Assign:
                targets, value = n.targets, n.value
            elif n.value is not None:
                targets, value = [n.target], n.value
            else:
                continue
            for tg in targets:
                if type(tg) is ast.Attribute and type(tg.value) is ast.Name \
                        and tg.value.id == "self":
                    cls = ctx.enclosing_class(n)
                    if cls is not None:
                        out.setdefault(id(cls), {}).setdefault(tg.attr, []).append(value)
        return out
    return ctx.cached("analysis.self_assignments", compute)


def python_number_varies(ctx: Context, expr: Any, at: Any) -> bool:
    """``expr`` (an argument of the call ``at``) is a Python number that takes a new value
    on each iteration of a loop around ``at``: a ``range`` loop variable, ``enumerate``'s
    index, a counter, and values computed from one (also through names the loop assigns:
    ``warmup = min(1.0, (step + 1) / 20)``)."""
    return type(expr) is not ast.Constant and varying_scalar(ctx, expr, at) is not None


# Calls whose result's first dimension depends on the data (a mask, a condition, a group).
_DATA_SIZED = frozenset({
    "tensorflow.boolean_mask", "tensorflow.where", "tensorflow.unique",
    "tensorflow.compat.v1.boolean_mask", "tensorflow.dynamic_partition",
    "numpy.where", "numpy.nonzero", "numpy.flatnonzero", "numpy.argwhere", "numpy.unique",
    "numpy.extract",
})
_CONVERTING = frozenset({
    "numpy.array", "numpy.asarray", "numpy.stack", "numpy.vstack", "numpy.concatenate",
    "tensorflow.convert_to_tensor", "tensorflow.stack", "tensorflow.concat",
    "tensorflow.constant",
})


def leading_size_varies(ctx: Context, expr: Any, at: Any, _depth: int = 0) -> bool:
    """``expr`` (an argument of the call ``at``) is a tensor or array whose first dimension
    may change from one iteration of a loop around ``at`` to the next: rows picked by a
    mask or a condition (``x[labels == k]``, ``tf.boolean_mask``, ``np.where``), a slice
    whose bound moves per iteration (``x[:t]``), or a list grown in the loop and converted
    (``np.array(memory)`` of a replay buffer filled by the loop)."""
    loops = ctx.enclosing_loops(at)
    if not loops or _depth > 4:
        return False
    t = type(expr)
    if t is ast.Name:
        b = ctx.binding(expr)
        if b is None or b.kind != "assign" or b.value is expr:
            return False
        return leading_size_varies(ctx, b.value, at, _depth + 1)
    if t is ast.Subscript:
        sl = expr.slice
        first = sl.elts[0] if type(sl) is ast.Tuple and sl.elts else sl
        if type(first) is ast.Slice:
            return _moving_slice(ctx, first, at)
        return _mask(ctx, first)
    if t is ast.Call:
        q = ctx.qualname(expr.func)
        if q in _DATA_SIZED:
            return True
        if q in ("tensorflow.gather", "numpy.take") and len(expr.args) >= 2:
            return leading_size_varies(ctx, expr.args[1], at, _depth + 1) \
                or _data_sized_call(ctx, expr.args[1])
        if q in _CONVERTING and expr.args:
            return _grown_in_loop(ctx, expr.args[0], loops)
    return False


def _data_sized_call(ctx: Context, expr: Any) -> bool:
    if type(expr) is ast.Name:
        b = ctx.binding(expr)
        expr = b.value if b is not None and b.kind == "assign" else expr
    if type(expr) is ast.Subscript:  # np.where(m)[0]
        expr = expr.value
    return type(expr) is ast.Call and ctx.qualname(expr.func) in _DATA_SIZED


def _mask(ctx: Context, index: Any) -> bool:
    """A boolean mask as an index: a comparison, or a name bound to one."""
    if type(index) is ast.Name:
        b = ctx.binding(index)
        if b is None or b.kind != "assign":
            return False
        index = b.value
    if type(index) is ast.Compare:
        return True
    return _data_sized_call(ctx, index)


def _moving_slice(ctx: Context, sl: Any, at: Any) -> bool:
    """``x[:t]``, ``x[s:t]`` with a bound that changes per iteration; not ``x[i:i + k]``
    (a fixed width)."""
    lo, hi = sl.lower, sl.upper
    if hi is None:
        return lo is not None and type(lo) is not ast.Constant \
            and varying_scalar(ctx, lo, at) is not None
    if type(hi) is ast.BinOp and type(hi.op) is ast.Add and lo is not None \
            and ast.dump(hi.left) == ast.dump(lo) and type(hi.right) is not ast.Name:
        return False  # x[i:i + 8]
    if type(hi) is ast.BinOp and type(hi.op) is ast.Add and lo is not None \
            and ast.dump(hi.left) == ast.dump(lo):
        b = ctx.binding(hi.right) if type(hi.right) is ast.Name else None
        if b is None or b.kind != "for":
            return False  # x[i:i + batch]: a fixed width
    return type(hi) is not ast.Constant and varying_scalar(ctx, hi, at) is not None


def _grown_in_loop(ctx: Context, expr: Any, loops: list[ast.AST]) -> bool:
    """``expr`` names a list appended to in one of ``loops`` and never reset there."""
    if type(expr) is ast.Attribute and type(expr.value) is ast.Name and expr.value.id == "self":
        ref = f"self.{expr.attr}"
    elif type(expr) is ast.Name:
        ref = expr.id
    else:
        return False
    for loop in loops:
        appended = reset = False
        for n in ast.walk(loop):
            if type(n) is ast.Call and type(n.func) is ast.Attribute \
                    and n.func.attr in ("append", "extend") and _ref(n.func.value) == ref:
                appended = True
            elif type(n) is ast.Assign and any(_ref(tg) == ref for tg in n.targets):
                reset = True
        if appended and not reset:
            return True
    return False


def _ref(node: Any) -> str | None:
    if type(node) is ast.Name:
        return node.id
    if type(node) is ast.Attribute and type(node.value) is ast.Name and node.value.id == "self":
        return f"self.{node.attr}"
    return None


# What a model is usually called, where its construction is out of sight (an attribute set
# elsewhere, a parameter): `self.model`, `self.q_network`, `actor`, `policy_net`.
_MODEL_NAME = re.compile(r"(?:^|_)(?:model|net|network|actor|critic|policy|q|dqn|agent_net)s?"
                         r"(?:_|$)|model$|net$", re.IGNORECASE)


def uses_keras(ctx: Context, tensorflow: bool = False) -> bool:
    """The module imports Keras or reads ``tf.keras`` (with ``tensorflow``, any import of
    TensorFlow counts too): a ``model`` named so there is likely a Keras model, not a
    scikit-learn, XGBoost or GP object with its own ``predict`` (TFP110, TFP117)."""
    if tensorflow and ctx.imports_tf:
        return True

    def compute() -> bool:
        for n in ast.walk(ctx.tree):
            if type(n) is ast.Import and any("keras" in a.name for a in n.names):
                return True
            if type(n) is ast.ImportFrom and ("keras" in (n.module or "")
                                             or any(a.name == "keras" for a in n.names)):
                return True
            if type(n) is ast.Attribute and n.attr == "keras":
                return True
        return False
    return ctx.cached("uses_keras", compute)


def model_like(ctx: Context, owner: Any) -> bool:
    """``owner`` (of a ``.predict``/call) is a Keras model by construction or by kind, or is
    named like one (TFP110, TFP117)."""
    if is_keras_model(ctx, owner) or kind_of(ctx, owner) == MODEL:
        return True
    if other_library_object(ctx, owner):
        return False  # `model = SGDRegressor()`: scikit-learn's predict/fit, not Keras's
    name = owner.attr if type(owner) is ast.Attribute else getattr(owner, "id", "")
    return bool(name) and bool(_MODEL_NAME.search(name))
