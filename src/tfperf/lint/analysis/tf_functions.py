"""``tf.function`` objects and their calls: what a call reaches when it calls a
``tf.function`` (decorated, wrapped, a method of the same class), with the options it was
made with; and a cheap superset of the names such calls can go by."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from tfperf.lint.analysis.callers import DEF_NODES, resolve_def
from tfperf.lint.analysis.imports import from_imports_tf
from tfperf.lint.analysis.syntax import keywords_of
from tfperf.lint.semantic import TF_FUNCTION_NAMES, Context


@dataclass(frozen=True)
class TfFunction:
    """A ``tf.function`` a call reaches. ``fn``: the Python function it compiles (``None``
    when not resolvable, e.g. ``tf.function(model)``); ``options``: the keywords given to
    ``tf.function`` (``jit_compile=``, ``input_signature=``...); ``creation``: the decorator
    or the ``tf.function(...)`` call that made it."""

    fn: ast.AST | None
    options: dict[str, ast.expr]
    creation: ast.expr


def is_tf_function_call(ctx: Context, node: ast.AST) -> bool:
    """``tf.function(...)`` (any spelling); cheap syntactic test first."""
    if type(node) is not ast.Call:
        return False
    func = node.func
    if type(func) is ast.Attribute:
        if func.attr != "function":
            return False
    elif type(func) is not ast.Name:
        return False
    elif func.id != "function" and not from_imports_tf(ctx):
        return False  # a bare name is TF's only through `from tensorflow import ... as ...`
    return ctx.qualname(func) in TF_FUNCTION_NAMES


def wrapping(ctx: Context, value: ast.AST | None) -> TfFunction | None:
    """``tf.function(g, **opts)`` or ``tf.function(**opts)(g)`` → what it wraps."""
    if type(value) is not ast.Call:
        return None
    if is_tf_function_call(ctx, value) and value.args:
        return TfFunction(resolve_def(ctx, value.args[0]), keywords_of(value), value)
    inner = value.func
    if is_tf_function_call(ctx, inner) and not inner.args and value.args:
        return TfFunction(resolve_def(ctx, value.args[0]), keywords_of(inner), inner)
    return None


# Keywords only tf.function takes: a decorator `<pkg>.function(...)` given one of them is a
# project's wrapper of tf.function (TF-Agents' `common.function(autograph=True)`).
_TF_FUNCTION_KEYWORDS = frozenset({
    "autograph", "input_signature", "jit_compile", "experimental_compile",
    "experimental_relax_shapes", "reduce_retracing", "experimental_autograph_options",
    "experimental_follow_type_hints", "experimental_implements",
})


def tf_function_decorator_or_wrapper(ctx: Context, fn: ast.AST) -> ast.expr | None:
    """``fn``'s ``@tf.function`` decorator, or a wrapper of it: a decorator call whose
    callee is named ``function`` and that is given a keyword only ``tf.function`` takes."""
    deco = ctx.tf_function_decorator(fn)
    if deco is not None:
        return deco
    for d in getattr(fn, "decorator_list", ()):
        if type(d) is ast.Call:
            callee = d.func.id if type(d.func) is ast.Name else getattr(d.func, "attr", None)
            if callee == "function" and any(k.arg in _TF_FUNCTION_KEYWORDS
                                            for k in d.keywords):
                return d
    return None


def decorated_into_tf_function(ctx: Context, fn: ast.AST) -> bool:
    """A decorator of ``fn`` is the module's own and builds a ``tf.function`` around it
    (``@distributed(...)`` whose inner ``@tf.function`` def runs ``strategy.run(fun)``):
    calling ``fn`` runs a graph, though no ``tf.function`` is written on it."""
    for d in getattr(fn, "decorator_list", ()):
        target = d.func if type(d) is ast.Call else d
        if type(target) is not ast.Name:
            continue
        b = ctx.binding(target)
        if b is None or b.kind != "def" or type(b.value) not in DEF_NODES:
            continue
        for n in ast.walk(b.value):
            if type(n) in DEF_NODES and n is not b.value \
                    and tf_function_decorator_or_wrapper(ctx, n) is not None:
                return True
            if type(n) is ast.Call and is_tf_function_call(ctx, n):
                return True
    return False


def tf_function_called(ctx: Context, func: ast.AST) -> TfFunction | None:
    """The ``tf.function`` that calling ``func`` runs: a name bound to a decorated ``def`` or
    to ``tf.function(g)``; ``self.m`` for a decorated method ``m`` of the enclosing class or
    an attribute set to ``tf.function(...)`` in it; ``tf.function(g)`` itself. A decorator
    that wraps ``tf.function`` counts (see :func:`tf_function_decorator_or_wrapper`)."""
    direct = wrapping(ctx, func)
    if direct is not None:
        return direct
    if type(func) is ast.Name:
        b = ctx.binding(func)
        if b is None:
            return None
        if b.kind == "def" and type(b.value) in DEF_NODES:
            deco = tf_function_decorator_or_wrapper(ctx, b.value)
            if deco is not None:
                return TfFunction(b.value, keywords_of(deco), deco)
            return None
        if b.kind == "assign":
            return wrapping(ctx, b.value)
        return None
    if type(func) is ast.Attribute and type(func.value) is ast.Name \
            and func.value.id in ("self", "cls"):
        cls = ctx.enclosing_class(func)
        if cls is None:
            return None
        for stmt in cls.body:
            if type(stmt) in DEF_NODES and stmt.name == func.attr:
                deco = tf_function_decorator_or_wrapper(ctx, stmt)
                return TfFunction(stmt, keywords_of(deco), deco) if deco is not None else None
        for node in ast.walk(cls):  # self.step = tf.function(self._step) in __init__
            if type(node) is ast.Assign and len(node.targets) == 1:
                t = node.targets[0]
                if type(t) is ast.Attribute and t.attr == func.attr \
                        and type(t.value) is ast.Name and t.value.id == "self":
                    found = wrapping(ctx, node.value)
                    if found is not None:
                        return found
    return None


def tf_function_callee_names(ctx: Context) -> frozenset[str]:
    """Every name ``f`` (or method/attribute name ``m``) for which :func:`tf_function_called`
    can find something when ``f(...)``/``self.m(...)`` is called: decorated ``def``s and
    names or attributes assigned a call. A superset, found without resolving any name, so
    that rules skip the other calls before their costlier tests."""
    def compute() -> frozenset[str]:
        names: set[str] = set()
        for d in ctx.nodes_of(ast.FunctionDef, ast.AsyncFunctionDef):
            if d.decorator_list:
                names.add(d.name)
        for a in ctx.nodes_of(ast.Assign, ast.AnnAssign, ast.NamedExpr):
            if type(a.value) is not ast.Call:
                continue
            targets = a.targets if type(a) is ast.Assign else [a.target]
            for t in targets:
                if type(t) is ast.Name:
                    names.add(t.id)
                elif type(t) is ast.Attribute:
                    names.add(t.attr)
        return frozenset(names)
    return ctx.cached("tf_function_callee_names", compute)


# Options that make a tf.function generalise input shapes (or fix them) instead of tracing
# once per new shape.
SHAPE_OPTIONS = frozenset({"input_signature", "reduce_retracing", "experimental_relax_shapes"})


def receiving_param(call: ast.Call, fn: ast.AST, arg: ast.AST, bound: bool) -> str | None:
    """The name of ``fn``'s parameter that ``arg`` of ``call`` lands in (``bound``: called
    as a method, so ``self`` is filled already); ``None`` when it cannot be told."""
    for k in call.keywords:
        if k.value is arg:
            return k.arg
    if arg not in call.args:
        return None
    params = [a.arg for a in [*fn.args.posonlyargs, *fn.args.args]]
    if bound and params and params[0] in ("self", "cls"):
        params = params[1:]
    i = call.args.index(arg)
    return params[i] if i < len(params) else None
