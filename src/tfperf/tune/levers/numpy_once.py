"""A tensor argument's ``.numpy()`` taken once, not at every use (held-out round 11's c13:
``l21shrink`` reads ``x.numpy()[j, i]`` per element in two nested Python loops; each
``.numpy()`` copies the whole tensor, so the loops copy it twice per element, and the NumPy
round-trip lever could not rewrite the item assignment into a NumPy buffer).

Each use calls ``_tfperf_numpy_x()`` (bound at the top of the function by
``_tfperf_numpy_once(x)``, written into the module): for a plain eager tensor (immutable) it
converts when first called and keeps that copy; for anything else (a ``tf.Variable`` that
may change in the loop, a ragged tensor whose ``.numpy()`` is an object array, ``None``
behind a guard) it converts at each call as written, so it raises, or reads new values,
exactly where the user's function did (review 41). An element or slice read inside an
expression (``x.numpy()[j, i] * e``), or the array's ``shape``/``ndim``/``dtype``/``size``,
reads the shared copy; any other use (bound to a name, passed to a call, returned) gets a copy
of its own (``.copy()``), as ``.numpy()`` gave it: a buffer filled by item assignment
(``out = x.numpy(); out[j, i] = ...``) never writes into the array the reads see. Only for
an argument whose every appearance is ``.numpy()`` or one of those attributes (never
rebound, also not by a nested lambda, function, class or comprehension of the same name;
never passed on, no method called that could change a variable), so every copy holds the
same values. The loops stay: what is left is plain NumPy, no tensor op per element.
"""

from __future__ import annotations

import ast

from tfperf.tune.lever import Lever, LeverContext, RewriteLever
from tfperf.tune.source import SourceEditError, find_function, parse, replace_nodes

PREFIX = "_tfperf_numpy_"
HELPER = "_tfperf_numpy_once"
#: Written into the user's module; the patch shows it.
HELPER_SOURCE = '''

def _tfperf_numpy_once(t):
    """tfperf tune: t.numpy as a function that converts a plain eager tensor (immutable)
    once, when first called, and anything else (a variable, a ragged tensor, None) at each
    call, as written."""
    if type(t).__name__ != "EagerTensor":
        return lambda: t.numpy()
    kept = []

    def once():
        if not kept:
            kept.append(t.numpy())
        return kept[0]

    return once
'''
#: Nodes that bind a name of their own in a nested scope (or the function's).
SCOPES = (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef)
#: Attributes of the array that are values, not views (safe to read from the shared copy).
META = {"shape", "ndim", "dtype", "size"}
#: Attributes of the tensor itself that the rewrite leaves (they do not read its values).
TENSOR_META = {"shape", "dtype", "ndim"}


def _numpy_call(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Call) and not node.args and not node.keywords \
        and isinstance(node.func, ast.Attribute) and node.func.attr == "numpy" \
        and isinstance(node.func.value, ast.Name) and node.func.value.id == name


def _parents(fn: ast.FunctionDef) -> dict[int, ast.AST]:
    return {id(c): p for p in ast.walk(fn) for c in ast.iter_child_nodes(p)}


def _hoistable(fn: ast.FunctionDef, name: str, up: dict[int, ast.AST]) -> list[ast.Call]:
    """The ``name.numpy()`` calls of ``fn`` when every appearance of ``name`` is one of them
    or a tensor attribute that reads no values; [] otherwise."""
    calls: list[ast.Call] = []
    if _rebound(fn, name):
        return []
    for node in ast.walk(fn):
        if not isinstance(node, ast.Name) or node.id != name:
            continue
        if not isinstance(node.ctx, ast.Load):
            return []
        attr = up.get(id(node))
        if not isinstance(attr, ast.Attribute):
            return []
        call = up.get(id(attr))
        if attr.attr == "numpy" and call is not None and _numpy_call(call, name):
            assert isinstance(call, ast.Call)
            calls.append(call)
        elif attr.attr not in TENSOR_META:
            return []
    return calls


def _rebound(fn: ast.FunctionDef, name: str) -> bool:
    """Whether ``name`` is bound anywhere in ``fn`` but as its own parameter: a nested
    lambda's or function's parameter, a nested def or class, an except or import name (an
    assignment or a comprehension target is a Store, refused by the caller)."""
    for node in ast.walk(fn):
        if isinstance(node, SCOPES) and node is not fn:
            a = node.args
            if any(p.arg == name for p in a.posonlyargs + a.args + a.kwonlyargs) or \
                    any(p is not None and p.arg == name for p in (a.vararg, a.kwarg)):
                return True
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                and node is not fn and node.name == name:
            return True
        if isinstance(node, ast.ExceptHandler) and node.name == name:
            return True
        if isinstance(node, (ast.Import, ast.ImportFrom)) and any(
                (al.asname or al.name.split(".")[0]) == name for al in node.names):
            return True
        if isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name == name:
            return True
    return False


def _shared_read(call: ast.Call, up: dict[int, ast.AST]) -> bool:
    """Whether the use of ``call`` only reads values: a subscript read (of any depth) inside
    an arithmetic or comparison, or a value attribute (``shape``)."""
    parent = up.get(id(call))
    if isinstance(parent, ast.Attribute) and parent.attr in META:
        return True
    node: ast.AST = call
    while isinstance(parent, ast.Subscript) and parent.value is node \
            and isinstance(parent.ctx, ast.Load):
        node, parent = parent, up.get(id(parent))
    return node is not call and isinstance(parent, (ast.BinOp, ast.UnaryOp, ast.Compare))


def rewrite(text: str, name: str) -> str:
    fn = find_function(parse(text), name)
    up = _parents(fn)
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs]
    edits: list[tuple[ast.AST, str]] = []
    hoisted: list[str] = []
    for p in params:
        calls = _hoistable(fn, p, up)
        if len(calls) < 2 or not any(_in_loop(c, up) for c in calls):
            continue  # one copy, or none in a loop: nothing to save
        if any(isinstance(n, (ast.Global, ast.Nonlocal)) for n in ast.walk(fn)):
            continue
        copy = PREFIX + p
        hoisted.append(f"{copy} = {HELPER}({p})")
        for c in calls:
            edits.append((c, f"{copy}()" if _shared_read(c, up) else f"{copy}().copy()"))
    if not hoisted:
        raise SourceEditError("no tensor argument converted by .numpy() again and again in a "
                              "loop (and only read)")
    first = fn.body[0]
    doc = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
        and isinstance(first.value.value, str)
    at = fn.body[1] if doc and len(fn.body) > 1 else first
    if at.lineno == fn.lineno or (at is not first and at.lineno == first.end_lineno):
        raise SourceEditError("the function's first statement shares a line")
    lines = text.splitlines(keepends=True)
    row = lines[at.lineno - 1]
    pad = row[:len(row) - len(row.lstrip())]
    text = replace_nodes(text, edits)
    lines = text.splitlines(keepends=True)
    new = "".join(f"{pad}{h}\n" for h in hoisted)
    lines.insert(at.lineno - 1, new)  # the statement's line is unmoved by the edits above it
    text = "".join(lines)
    if f"def {HELPER}(" not in text:
        text = text.rstrip("\n") + "\n" + HELPER_SOURCE
    return text


def _in_loop(node: ast.AST, up: dict[int, ast.AST]) -> bool:
    parent = up.get(id(node))
    while parent is not None:
        if isinstance(parent, (ast.For, ast.While, ast.comprehension, ast.ListComp,
                               ast.GeneratorExp, ast.SetComp, ast.DictComp)):
            return True
        parent = up.get(id(parent))
    return False


class NumpyOnce(RewriteLever):
    name, slot, stage, traces = ".numpy() once", "numpy_once", 10, False
    description = ("a tensor argument converted by .numpy() at every use (per element, in a "
                   "Python loop) converted once; each use that may write gets its own copy")
    rejections = ()

    edit = staticmethod(rewrite)


def levers(ctx: LeverContext) -> list[Lever]:
    return [NumpyOnce()]
