"""The function a map applies (``tf.map_fn``, ``K.map_fn``, ``keras.ops.map``), read as one
expression of its element, so that the loop model's batching sees what one iteration computes
whatever the callable's spelling:

- a lambda of one argument: its body;
- a name bound to a lambda, or a ``def`` (nested in the tuned function, or at module level):
  its statements inlined (``t = ...`` bindings, then ``return ...``), its parameter the element;
- ``functools.partial(g, w=w)``: ``g`` with the given arguments bound, the one left the element;
- a lambda whose body calls such a function (``lambda r: score(r, w)``): the call inlined;
- a TensorFlow function given by name (``tf.map_fn(tf.norm, x)``): its call on the element;
- Keras backend reductions (``K.sum(v)``) read as the TensorFlow reductions they are.

A body with Python side effects (``print``, ``.numpy()``, appending to a list, ``global``,
writes to attributes or items) or an op whose output shape depends on the data
(``tf.boolean_mask``, ``tf.unique``, ``tf.where`` of one argument) is not read: a map runs
it once per element, a batched body once; pfor (``tf.vectorized_map``) traces it once.
"""

from __future__ import annotations

import ast
import contextlib
import copy
from dataclasses import dataclass
from typing import Any

#: Keras backend functions that are TensorFlow reductions with the same arguments.
KERAS_REDUCTIONS = {"sum": "reduce_sum", "mean": "reduce_mean", "max": "reduce_max",
                    "min": "reduce_min", "prod": "reduce_prod", "std": "reduce_std",
                    "var": "reduce_variance", "any": "reduce_any", "all": "reduce_all"}
KERAS_BACKENDS = ("keras.backend.", "tf_keras.backend.")
#: Calls whose output shape depends on the values (a map of them is ragged or fails).
DATA_SHAPED = {"boolean_mask", "unique", "unique_with_counts", "ragged", "py_function",
               "numpy_function", "py_func"}
#: Calls with Python side effects (or a host round trip) inside the mapped function.
SIDE_EFFECTS = {"print", "numpy", "append", "extend", "insert", "pop", "update", "write",
                "add", "assign", "assign_add", "assign_sub", "setdefault", "input", "open"}
#: Usual aliases of modules whose ``add`` is an op (not a set's).
MODULE_ALIASES = {"tf", "tensorflow", "np", "numpy", "K", "keras", "backend", "math", "tnp",
                  "ops"}
_MAX_INLINE = 4  # nested inlining depth (a function calling a function...)
ELEMENT = "_tfperf_element"  # the element's name where the mapped callable names none


@dataclass
class MapBody:
    param: str  # the element's name in ``value``
    value: ast.expr  # one iteration's value (no source positions: read with ast.unparse)


def side_effects(node: ast.AST, data: bool = True) -> str:
    """Why ``node`` (a mapped function's code) must not be batched or traced once: "" when
    nothing in it has a Python side effect or a shape set by the data (``data=False``: the
    latter left to the check of its inlined expression, where ``hits = tf.where(row)`` and
    ``reduce_min(hits[:, 0])`` are one reduction)."""
    reduced = masked_reductions(node)
    for n in ast.walk(node):
        if id(n) in reduced:  # reduce_min(boolean_mask(x, m)): one value, whatever m holds
            continue
        if isinstance(n, (ast.Global, ast.Nonlocal, ast.Yield, ast.YieldFrom, ast.Raise,
                          ast.With, ast.Try, ast.Delete, ast.Import, ast.ImportFrom)):
            return f"the mapped function holds a {type(n).__name__.lower()} statement"
        if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            if any(isinstance(m, (ast.Attribute, ast.Subscript))
                   for t in targets for m in ast.walk(t)):
                return "the mapped function writes to an attribute or an item"
        if isinstance(n, ast.Call):
            last = ast.unparse(n.func).rsplit(".", 1)[-1]
            if last in SIDE_EFFECTS and not (last == "add" and _of_a_module(n.func)):
                return f"the mapped function calls {last}() (a Python side effect)"
            if data and (last in DATA_SHAPED or (last == "where" and len(n.args) == 1
                                                 and not n.keywords)):
                return f"the mapped function calls {last}() (a shape set by the data)"
    return ""


#: Reductions whose value over the masked elements is a reduction of ``where(m, x, identity)``.
MASKED_IDENTITY = {"reduce_min": "float('inf')", "reduce_max": "-float('inf')",
                   "reduce_sum": "0", "reduce_prod": "1"}


#: The empty reduction of ``where(m)``'s int64 coordinates (the dtype's extreme).
TRUE_INDEX_EMPTY = {"reduce_min": "max", "reduce_max": "min"}


def true_index(node: ast.AST) -> tuple[ast.expr, int] | None:
    """``reduce_min(tf.where(m)[:, k])`` (or ``reduce_max``): the first (last) True index of
    ``m`` along its axis ``k``; (``m``, ``k``), or None for anything else."""
    if not (isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords
            and ast.unparse(node.func).rsplit(".", 1)[-1] in TRUE_INDEX_EMPTY):
        return None
    sub = node.args[0]
    if not (isinstance(sub, ast.Subscript) and isinstance(sub.slice, ast.Tuple)
            and len(sub.slice.elts) == 2):
        return None
    whole, k = sub.slice.elts
    if not (isinstance(whole, ast.Slice) and whole.lower is None and whole.upper is None
            and whole.step is None and isinstance(k, ast.Constant) and type(k.value) is int
            and k.value >= 0):
        return None
    where = sub.value
    if not (isinstance(where, ast.Call) and len(where.args) == 1 and not where.keywords
            and ast.unparse(where.func).rsplit(".", 1)[-1] == "where"):
        return None
    return where.args[0], k.value


def masked_reductions(node: ast.AST) -> set[int]:
    """Ids of the ``boolean_mask(x, m)`` calls that are the whole argument of a reduction of
    every element (``reduce_min(boolean_mask(x, m))``), and of the ``where(m)`` calls whose
    coordinates along one axis are reduced (``reduce_min(where(m)[:, 0])``, a first True
    index): their shape, set by the data, is reduced away."""
    found = set()
    for n in ast.walk(node):
        if true_index(n) is not None:
            found.add(id(n.args[0].value))  # type: ignore[attr-defined]
        if isinstance(n, ast.Call) and ast.unparse(n.func).rsplit(".", 1)[-1] in \
                MASKED_IDENTITY and len(n.args) == 1 and not n.keywords:
            arg = n.args[0]
            if isinstance(arg, ast.Call) and ast.unparse(arg.func).rsplit(".", 1)[-1] == \
                    "boolean_mask" and len(arg.args) == 2 and not arg.keywords:
                found.add(id(arg))
    return found


def _of_a_module(func: ast.expr) -> bool:
    """``tf.add``, ``tf.math.add``: a function of a module (by its usual alias), an op,
    not a method of a value (``seen.add``)."""
    while isinstance(func, ast.Attribute):
        func = func.value
    return isinstance(func, ast.Name) and func.id in MODULE_ALIASES


def _strip(node: ast.AST) -> ast.AST:
    """``node`` without source positions (read with ``ast.unparse``, never as a segment)."""
    for n in ast.walk(node):
        for attr in ("lineno", "col_offset", "end_lineno", "end_col_offset"):
            with contextlib.suppress(AttributeError):  # (a node made here has none)
                delattr(n, attr)
    return node


class _Substitute(ast.NodeTransformer):
    def __init__(self, names: dict[str, ast.expr]) -> None:
        self.names = names

    def visit_Name(self, node: ast.Name) -> Any:
        if isinstance(node.ctx, ast.Load) and node.id in self.names:
            return copy.deepcopy(self.names[node.id])
        return node

    def visit_Lambda(self, node: ast.Lambda) -> Any:
        shadow = {a.arg for a in node.args.args}
        inner = _Substitute({k: v for k, v in self.names.items() if k not in shadow})
        node.body = inner.visit(node.body)
        return node


def _definition(name: str, fn: ast.FunctionDef, module: ast.Module,
                ) -> ast.FunctionDef | ast.Lambda | None:
    """What ``name`` is bound to where ``fn`` reads it: one ``def`` or one ``name = lambda``
    in ``fn``'s own body, else one ``def`` at module level (bound once there)."""
    local = [s for s in fn.body if (isinstance(s, ast.FunctionDef) and s.name == name)
             or (isinstance(s, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name
                                                    for t in s.targets))]
    stores = [n for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == name
              and isinstance(n.ctx, ast.Store)]
    if local:
        if len(local) != 1 or (isinstance(local[0], ast.Assign) and len(stores) != 1):
            return None
        s = local[0]
        if isinstance(s, ast.FunctionDef):
            return s if not stores else None
        assert isinstance(s, ast.Assign)
        return s.value if isinstance(s.value, ast.Lambda) and len(s.targets) == 1 else None
    if stores or any(isinstance(a, ast.arg) and a.arg == name for a in ast.walk(fn.args)):
        return None
    top = [s for s in module.body if isinstance(s, ast.FunctionDef) and s.name == name]
    bound = [n for s in module.body if not isinstance(s, ast.FunctionDef)
             for n in ast.walk(s) if isinstance(n, ast.Name) and n.id == name
             and isinstance(n.ctx, ast.Store)]
    if len(top) != 1 or bound:
        return None
    # Inlined into fn, the module function's free names would read fn's own bindings.
    own = {a.arg for a in ast.walk(top[0].args) if isinstance(a, ast.arg)} | {
        n.id for n in ast.walk(top[0]) if isinstance(n, ast.Name)
        and isinstance(n.ctx, ast.Store)}
    free = {n.id for n in ast.walk(top[0]) if isinstance(n, ast.Name)} - own
    mine = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)
            and isinstance(n.ctx, ast.Store)} | {a.arg for a in ast.walk(fn.args)
                                                 if isinstance(a, ast.arg)}
    return None if free & mine else top[0]


def _body(defn: ast.FunctionDef | ast.Lambda) -> tuple[list[str], ast.expr] | None:
    """(parameters, the returned expression with its local bindings substituted) of a
    function of plain positional parameters whose body binds names and returns one value."""
    a = defn.args
    if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs or a.defaults \
            or (isinstance(defn, ast.FunctionDef) and defn.decorator_list):
        return None
    params = [p.arg for p in a.args]
    if isinstance(defn, ast.Lambda):
        return params, copy.deepcopy(defn.body)
    stmts = list(defn.body)
    if stmts and isinstance(stmts[0], ast.Expr) and isinstance(stmts[0].value, ast.Constant) \
            and isinstance(stmts[0].value.value, str):
        stmts = stmts[1:]  # the docstring
    if not stmts or not isinstance(stmts[-1], ast.Return) or stmts[-1].value is None:
        return None
    names: dict[str, ast.expr] = {}
    for s in stmts[:-1]:
        if not (isinstance(s, ast.Assign) and len(s.targets) == 1
                and isinstance(s.targets[0], ast.Name)) or s.targets[0].id in params:
            return None
        names[s.targets[0].id] = _Substitute(names).visit(copy.deepcopy(s.value))
    return params, _Substitute(names).visit(copy.deepcopy(stmts[-1].value))


def _bind(defn: ast.FunctionDef | ast.Lambda, args: list[ast.expr],
          keywords: dict[str, ast.expr]) -> MapBody | None:
    """``defn`` with ``args``/``keywords`` bound to its first/named parameters; the one
    parameter left is the element."""
    found = _body(defn)
    if found is None:
        return None
    params, value = found
    given = dict(zip(params, args, strict=False))
    if len(args) > len(params) or any(k not in params or k in given for k in keywords):
        return None
    given.update(keywords)
    left = [p for p in params if p not in given]
    if len(left) != 1:
        return None
    subs = {k: v for k, v in given.items()}
    return MapBody(left[0], _Substitute(subs).visit(value))


def map_body(ctx: Any, fn: ast.FunctionDef, module: ast.Module, callable_: ast.expr,
             tf: str = "tf") -> MapBody | None:
    """The mapped ``callable_`` of ``fn`` as one expression of its element, or None."""
    body = _resolve(ctx, fn, module, callable_)
    if body is None:
        return None
    body.value = _inline_calls(ctx, fn, module, body.value, 0)
    body.value = _keras_reductions(ctx, module, body.value, tf)
    if side_effects(body.value):
        return None
    _strip(body.value)
    return body


def _resolve(ctx: Any, fn: ast.FunctionDef, module: ast.Module, node: ast.expr,
             ) -> MapBody | None:
    if isinstance(node, ast.Lambda):
        return _bind(node, [], {})
    if isinstance(node, ast.Name):  # (map_body checks the inlined expression's data shapes)
        defn = _definition(node.id, fn, module)
        if defn is None or side_effects(defn, data=False):
            return None
        return _bind(defn, [], {})
    if isinstance(node, ast.Attribute) and (ctx.qualname(node) or "").startswith(
            "tensorflow.") and not any(isinstance(n, ast.Call) for n in ast.walk(node)):
        # a TensorFlow function of one tensor (tf.map_fn(tf.norm, x)): its call on the row
        call = ast.Call(copy.deepcopy(node), [ast.Name(ELEMENT, ast.Load())], [])
        return MapBody(ELEMENT, call)
    if isinstance(node, ast.Call) and ctx.call_qualname(node) == "functools.partial" \
            and node.args and isinstance(node.args[0], ast.Name) \
            and all(k.arg for k in node.keywords):
        defn = _definition(node.args[0].id, fn, module)
        if defn is None or side_effects(defn, data=False):
            return None
        return _bind(defn, list(node.args[1:]),
                     {k.arg: k.value for k in node.keywords if k.arg})
    return None


class _Inline(ast.NodeTransformer):
    """Calls of the module's (or ``fn``'s) plain functions replaced by their bodies."""

    def __init__(self, fn: ast.FunctionDef, module: ast.Module, depth: int) -> None:
        self.fn, self.module, self.depth = fn, module, depth

    def visit_Call(self, node: ast.Call) -> Any:
        self.generic_visit(node)
        if not isinstance(node.func, ast.Name) or self.depth >= _MAX_INLINE:
            return node
        defn = _definition(node.func.id, self.fn, self.module)
        if defn is None or side_effects(defn) or any(isinstance(a, ast.Starred)
                                                     for a in node.args):
            return node
        found = _body(defn)
        if found is None:
            return node
        params, value = found
        if len(node.args) > len(params) or any(k.arg not in params for k in node.keywords):
            return node
        subs = dict(zip(params, node.args, strict=False))
        subs.update({k.arg: k.value for k in node.keywords if k.arg})
        if set(subs) != set(params):
            return node
        inner = _Inline(self.fn, self.module, self.depth + 1)
        return inner.visit(_Substitute(subs).visit(value))


def _inline_calls(ctx: Any, fn: ast.FunctionDef, module: ast.Module, value: ast.expr,
                  depth: int) -> ast.expr:
    out = _Inline(fn, module, depth).visit(value)
    assert isinstance(out, ast.expr)
    return out


def _keras_reductions(ctx: Any, module: ast.Module, value: ast.expr, tf: str) -> ast.expr:
    """``K.sum(v, ...)`` → ``tf.reduce_sum(v, ...)`` (the same arguments). The calls are
    found in the module by position (``value`` is a copy the names' index does not hold)."""
    at = {}
    for n in ast.walk(module):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute):
            q = ctx.call_qualname(n) or ""
            if q.startswith(KERAS_BACKENDS) and q.rsplit(".", 1)[-1] in KERAS_REDUCTIONS:
                at[(n.lineno, n.col_offset)] = q.rsplit(".", 1)[-1]
    for n in ast.walk(value):
        if isinstance(n, ast.Call) and getattr(n, "lineno", None) is not None:
            last = at.get((n.lineno, n.col_offset))
            if last is not None:
                n.func = ast.parse(f"{tf}.{KERAS_REDUCTIONS[last]}", mode="eval").body
    return value


def mapped_side_effects(text: str, callable_: ast.expr) -> str:
    """Why the callable a map is given must not be traced once by pfor: a lambda, a
    ``def``/``name = lambda`` of the module by that name (any of them), a partial of one,
    with a side effect (:func:`side_effects`); "" otherwise (a library function)."""
    node = callable_
    if isinstance(node, ast.Call) and node.args and ast.unparse(node.func).endswith("partial"):
        node = node.args[0]
    if isinstance(node, ast.Lambda):
        return side_effects(node)
    if not isinstance(node, ast.Name):
        return ""
    for n in ast.walk(ast.parse(text)):
        if isinstance(n, ast.FunctionDef) and n.name == node.id:
            why = side_effects(n)
        elif isinstance(n, ast.Assign) and isinstance(n.value, ast.Lambda) and any(
                isinstance(t, ast.Name) and t.id == node.id for t in n.targets):
            why = side_effects(n.value)
        else:
            continue
        if why:
            return why
    return ""


def inline_calls(text: str, node: ast.AST, part: ast.AST) -> ast.AST:
    """``part`` (a copy of code of the loop ``node`` of ``text``) with the calls of plain
    functions of the module or of the function around the loop replaced by their bodies
    (``norm_of(r)`` → ``tf.sqrt(tf.reduce_sum(r * r))``), so that the batching sees the
    reductions of one example they hold; functions with side effects are left as calls."""
    module = ast.parse(text)
    line = getattr(node, "lineno", None)
    around = [f for f in ast.walk(module) if isinstance(f, ast.FunctionDef) and line
              and f.lineno <= line <= (f.end_lineno or f.lineno)]
    if not around:
        return part
    fn = max(around, key=lambda f: f.lineno)  # the innermost
    return _Inline(fn, module, 0).visit(part)
