"""Helpers for the tracing rules (TFP30x) and the TF1 rules (TFP70x).

What a call's callee is when it is a ``tf.function`` (decorated, wrapped, or a method of the
same class), which Python values change from one loop iteration to the next, and which calls
of a function run inside a loop. Candidates for ``semantic.py`` later.

Per-module tables are cached on the ``Context`` object (one per module), never on the rule.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from tfperf.lint.rules._helpers_loops_sync import memo
from tfperf.lint.semantic import TF_FUNCTION_NAMES, Context

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
# Python builtins that turn a Python number into another Python number.
_SCALAR_BUILTINS = frozenset({"int", "float", "bool", "round", "abs", "min", "max", "str"})
VARIABLE_CLASSES = frozenset({"tensorflow.Variable", "tensorflow.compat.v1.Variable"})
# A literal loop over this many values or fewer is "a handful": a few traces, on purpose.
HANDFUL = 4


@dataclass(frozen=True)
class TfFunction:
    """A ``tf.function`` a call reaches. ``fn``: the Python function it compiles (``None``
    when not resolvable, e.g. ``tf.function(model)``); ``options``: the keywords given to
    ``tf.function`` (``jit_compile=``, ``input_signature=``...); ``creation``: the decorator
    or the ``tf.function(...)`` call that made it."""

    fn: ast.AST | None
    options: dict[str, ast.expr]
    creation: ast.expr


def _keywords(call: ast.AST) -> dict[str, ast.expr]:
    if type(call) is not ast.Call:
        return {}
    return {k.arg: k.value for k in call.keywords if k.arg}  # type: ignore[attr-defined]


def is_tf_function_call(ctx: Context, node: ast.AST) -> bool:
    """``tf.function(...)`` (any spelling); cheap syntactic test first."""
    if type(node) is not ast.Call:
        return False
    func = node.func  # type: ignore[attr-defined]
    if type(func) is ast.Attribute:
        if func.attr != "function":
            return False
    elif type(func) is not ast.Name:
        return False
    elif func.id != "function" and not from_imports_tf(ctx):
        return False  # a bare name is TF's only through `from tensorflow import ... as ...`
    return ctx.qualname(func) in TF_FUNCTION_NAMES


def from_imports_tf(ctx: Context) -> bool:
    """The module has a ``from tensorflow... import`` (cheap text test, cached): only then
    can a bare name be a TensorFlow API under another name."""
    cached = ctx.__dict__.get("_tfp3_from_tf")
    if cached is None:
        cached = "from tensorflow" in ctx.source
        ctx.__dict__["_tfp3_from_tf"] = cached
    return cached


def is_variable_call(ctx: Context, node: ast.AST) -> bool:
    """``tf.Variable(...)`` in any spelling; cheap syntactic test first."""
    if type(node) is not ast.Call:
        return False
    func = node.func  # type: ignore[attr-defined]
    if type(func) is ast.Attribute:
        if func.attr != "Variable":
            return False
    elif type(func) is not ast.Name or (func.id != "Variable" and not from_imports_tf(ctx)):
        return False
    return ctx.qualname(func) in VARIABLE_CLASSES


def wrapping(ctx: Context, value: ast.AST | None) -> TfFunction | None:
    """``tf.function(g, **opts)`` or ``tf.function(**opts)(g)`` → what it wraps."""
    if type(value) is not ast.Call:
        return None
    if is_tf_function_call(ctx, value) and value.args:  # type: ignore[attr-defined]
        return TfFunction(resolve_def(ctx, value.args[0]), _keywords(value), value)  # type: ignore[attr-defined]
    inner = value.func  # type: ignore[attr-defined]
    if is_tf_function_call(ctx, inner) and not inner.args and value.args:  # type: ignore[attr-defined]
        return TfFunction(resolve_def(ctx, value.args[0]), _keywords(inner), inner)  # type: ignore[attr-defined]
    return None


def resolve_def(ctx: Context, expr: ast.AST) -> ast.AST | None:
    """The ``def`` (or lambda) a name or ``self.method`` refers to, when it is in this module."""
    if type(expr) is ast.Lambda:
        return expr
    if type(expr) is ast.Name:
        b = ctx.binding(expr)
        if b is not None and b.kind == "def" and type(b.value) in _DEFS:
            return b.value  # type: ignore[no-any-return]
        return None
    if type(expr) is ast.Attribute and type(expr.value) is ast.Name \
            and expr.value.id in ("self", "cls"):
        cls = ctx.enclosing_class(expr)
        if cls is not None:
            for stmt in cls.body:
                if type(stmt) in _DEFS and stmt.name == expr.attr:  # type: ignore[attr-defined]
                    return stmt
    return None


def tf_function_called(ctx: Context, func: ast.AST) -> TfFunction | None:
    """The ``tf.function`` that calling ``func`` runs: a name bound to a decorated ``def`` or
    to ``tf.function(g)``; ``self.m`` for a decorated method ``m`` of the enclosing class or
    an attribute set to ``tf.function(...)`` in it; ``tf.function(g)`` itself."""
    direct = wrapping(ctx, func)
    if direct is not None:
        return direct
    if type(func) is ast.Name:
        b = ctx.binding(func)
        if b is None:
            return None
        if b.kind == "def" and type(b.value) in _DEFS:
            deco = ctx.tf_function_decorator(b.value)
            if deco is not None:
                return TfFunction(b.value, _keywords(deco), deco)
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
            if type(stmt) in _DEFS and stmt.name == func.attr:  # type: ignore[attr-defined]
                deco = ctx.tf_function_decorator(stmt)
                return TfFunction(stmt, _keywords(deco), deco) if deco is not None else None
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
            if d.decorator_list:  # type: ignore[attr-defined]
                names.add(d.name)  # type: ignore[attr-defined]
        for a in ctx.nodes_of(ast.Assign, ast.AnnAssign, ast.NamedExpr):
            if type(a.value) is not ast.Call:  # type: ignore[attr-defined]
                continue
            targets = a.targets if type(a) is ast.Assign else [a.target]  # type: ignore[attr-defined]
            for t in targets:
                if type(t) is ast.Name:
                    names.add(t.id)
                elif type(t) is ast.Attribute:
                    names.add(t.attr)
        return frozenset(names)
    return memo(ctx, "tf_function_callee_names", compute)


# ---------------------------------------------------------------- values that vary per loop


def is_builtin_call(ctx: Context, node: ast.AST, *names: str) -> bool:
    return type(node) is ast.Call and type(node.func) is ast.Name \
        and node.func.id in names and ctx.binding(node.func) is None  # type: ignore[attr-defined]


def _literal_count(ctx: Context, it: ast.AST) -> int | None:
    """How many values a literal iterable yields: ``range(3)``, ``[0.1, 0.01]``; else None."""
    if type(it) in (ast.List, ast.Tuple, ast.Set):
        return len(it.elts)  # type: ignore[attr-defined]
    if is_builtin_call(ctx, it, "range") and it.args and not it.keywords \
            and all(type(a) is ast.Constant and type(a.value) is int for a in it.args):  # type: ignore[attr-defined]
        try:
            return len(range(*[a.value for a in it.args]))  # type: ignore[attr-defined]
        except (TypeError, ValueError):
            return None
    return None


def _python_number_source(ctx: Context, it: ast.AST, target: ast.AST, name: str) -> bool:
    """Whether ``for <target> in <it>`` binds ``name`` to a Python number per iteration:
    ``range(...)``; the index of ``enumerate(...)``; a literal list of numbers."""
    count = _literal_count(ctx, it)
    if count is not None and count <= HANDFUL:
        return False
    if type(target) is ast.Name:
        if is_builtin_call(ctx, it, "range"):
            return True
        if type(it) in (ast.List, ast.Tuple):
            return all(type(e) is ast.Constant and type(e.value) in (int, float)
                       for e in it.elts)  # type: ignore[attr-defined]
        return False
    if type(target) is ast.Tuple and len(target.elts) == 2 \
            and is_builtin_call(ctx, it, "enumerate"):
        first = target.elts[0]
        return type(first) is ast.Name and first.id == name
    return False


def _counter_loop(ctx: Context, name: ast.Name, loops: list[ast.AST]) -> ast.AST | None:
    """``n = 0`` … ``n += 1`` inside one of ``loops``: a Python int counter; the loop.
    Every store of the name in its scope must be one of those two forms."""
    scope = ctx.scope_of(name)
    bumped_in: ast.AST | None = None
    seen_int_init = False
    for node in _stores(ctx).get((id(scope), name.id), ()):
        stmt = ctx.parent(node)
        if type(stmt) is ast.AugAssign:
            if not (type(stmt.op) in (ast.Add, ast.Sub) and _int_const(stmt.value)):
                return None
            for loop in ctx.enclosing_loops(stmt):
                if loop in loops:
                    bumped_in = loop
                    break
        elif type(stmt) is ast.Assign and node in stmt.targets and _int_const(stmt.value):
            seen_int_init = True
        else:
            return None  # bound some other way: not a plain counter
    return bumped_in if seen_int_init else None


def _stores(ctx: Context) -> dict[tuple[int, str], list[ast.Name]]:
    """(id of scope, name) → the names stored in that scope (not in nested ones), in
    ``ast.walk`` order: built once per module from the engine's walk, instead of walking a
    function per call argument."""
    def compute() -> dict[tuple[int, str], list[ast.Name]]:
        table: dict[tuple[int, str], list[ast.Name]] = {}
        Store = ast.Store
        for n in ctx.nodes_of(ast.Name):
            if type(n.ctx) is Store:  # type: ignore[attr-defined]
                table.setdefault((id(ctx.scope_of(n)), n.id), []).append(n)  # type: ignore[attr-defined]
        return table
    return memo(ctx, "tfp3_stores", compute)


def _int_const(node: ast.AST) -> bool:
    return type(node) is ast.Constant and type(node.value) is int  # type: ignore[attr-defined]


def varying_scalar(ctx: Context, expr: ast.AST, at: ast.AST) -> ast.AST | None:
    """If ``expr`` (an argument of the call ``at``) is a Python number that changes on each
    iteration of a loop running ``at``, that loop; else ``None``. Numbers built from such a
    value with constants (``i + 1``, ``float(i)``, ``step * 0.1``) vary too."""
    t = type(expr)
    if t is ast.Name:
        loops = ctx.enclosing_loops(at)
        if not loops:
            return None
        b = ctx.binding(expr)  # type: ignore[arg-type]
        if b is None:
            return None
        if b.kind == "for":
            loop = b.value
            if loop in loops and _python_number_source(ctx, loop.iter, loop.target, expr.id):  # type: ignore[attr-defined]
                return loop  # type: ignore[no-any-return]
            if type(loop) is ast.comprehension:
                comp = ctx.parent(loop)
                if comp in loops and _python_number_source(ctx, loop.iter, loop.target, expr.id):  # type: ignore[attr-defined]
                    return comp
            return None
        if b.kind in ("assign", "augassign"):
            return _counter_loop(ctx, expr, loops)  # type: ignore[arg-type]
        return None
    if t is ast.BinOp:
        left, right = expr.left, expr.right  # type: ignore[attr-defined]
        lv = varying_scalar(ctx, left, at) if type(left) is not ast.Constant else None
        rv = varying_scalar(ctx, right, at) if type(right) is not ast.Constant else None
        if lv is None and rv is None:
            return None
        # Both sides must be Python numbers: constants or varying values.
        if (lv is None and not _number_const(left)) or (rv is None and not _number_const(right)):
            return None
        return lv or rv
    if t is ast.UnaryOp:
        return varying_scalar(ctx, expr.operand, at)  # type: ignore[attr-defined]
    if t is ast.Call and is_builtin_call(ctx, expr, "int", "float") and len(expr.args) == 1:  # type: ignore[attr-defined]
        return varying_scalar(ctx, expr.args[0], at)  # type: ignore[attr-defined]
    return None


def _number_const(node: ast.AST) -> bool:
    return type(node) is ast.Constant and type(node.value) in (int, float)  # type: ignore[attr-defined]


def varies_in(ctx: Context, expr: ast.AST, loops: list[ast.AST]) -> bool:
    """Some name in ``expr`` is rebound by one of ``loops`` (its target, or assigned in its
    body): the value may differ from one iteration to the next."""
    names = {n.id for n in ast.walk(expr) if type(n) is ast.Name}
    if not names:
        return False
    for loop in loops:
        targets: list[ast.AST] = []
        if type(loop) in (ast.For, ast.AsyncFor):
            targets.append(loop.target)  # type: ignore[attr-defined]
            body: list[ast.AST] = list(loop.body)  # type: ignore[attr-defined]
        elif type(loop) is ast.While:
            body = list(loop.body)  # type: ignore[attr-defined]
        else:
            targets.extend(g.target for g in loop.generators)  # type: ignore[attr-defined]
            body = []
        for stmt in body:
            for n in ast.walk(stmt):
                if type(n) in (ast.Assign, ast.AugAssign, ast.AnnAssign):
                    ts = n.targets if type(n) is ast.Assign else [n.target]  # type: ignore[attr-defined]
                    targets.extend(ts)
        for tgt in targets:
            if any(type(n) is ast.Name and n.id in names for n in ast.walk(tgt)):
                return True
    return False


# ---------------------------------------------------------------- who calls a function


def calls_of(ctx: Context, fn: ast.AST) -> list[ast.Call]:
    """Calls in this module that reach the ``def`` ``fn``: by its name (where the name
    resolves to it), then as ``self.<name>`` inside its class."""
    name = getattr(fn, "name", None)
    if name is None:
        return []
    by_attr, by_name = ctx.call_groups()
    out = []
    for call in by_name.get(name, ()):
        b = ctx.binding(call.func)  # type: ignore[arg-type]
        if b is not None and b.value is fn:
            out.append(call)
    for call in by_attr.get(name, ()):
        f = call.func
        if type(f.value) is ast.Name and f.value.id in ("self", "cls") \
                and resolve_def(ctx, f) is fn:  # type: ignore[attr-defined]
            out.append(call)
    return out


def called_in_loop(ctx: Context, fn: ast.AST) -> ast.Call | None:
    """A call of ``fn`` that runs once per iteration of a loop, outside any
    ``tf.function`` (where a loop would be traced once, not run per call)."""
    for call in calls_of(ctx, fn):
        if ctx.in_loop(call) and not ctx.in_tf_function(call):
            return call
    return None


def traced_fn_of(ctx: Context, node: ast.AST) -> ast.AST | None:
    """The ``tf.function`` body ``node`` runs in, unless a function between them is handed to
    ``tf.py_function``/``tf.numpy_function`` (which runs it eagerly, every call)."""
    # The answer depends only on the chain of enclosing functions, which the innermost one
    # determines: cache it per innermost function.
    first = ctx.enclosing_function(node)
    if first is None:
        return None
    cache = ctx.memo.get("tfp3_traced_fn")
    if cache is None:
        cache = ctx.memo["tfp3_traced_fn"] = {}
    key = id(first)
    if key in cache:
        return cache[key]
    found = None
    inner: list[ast.AST] = []
    for fn in ctx.enclosing_functions(node):
        if ctx.is_tf_function(fn):
            if not (inner and any(_runs_eagerly(ctx, f) for f in inner)):
                found = fn
            break
        inner.append(fn)
    cache[key] = found
    return found


_EAGER_WRAPPERS = frozenset({
    "tensorflow.py_function", "tensorflow.numpy_function", "tensorflow.compat.v1.py_func",
    "tensorflow.compat.v1.py_function", "tensorflow.compat.v1.numpy_function",
})


def _eager_names(ctx: Context) -> set[str]:
    """Names of functions handed to ``tf.py_function`` and the like (cached per module)."""
    names: set[str] | None = ctx.__dict__.get("_tfp3_eager_names")
    if names is None:
        names = set()
        src = ctx.source
        if "py_func" in src or "numpy_function" in src:
            for node in ctx.calls:
                if ctx.qualname(node.func) in _EAGER_WRAPPERS:
                    for a in [*node.args[:1], *(k.value for k in node.keywords
                                                if k.arg == "func")]:
                        if type(a) is ast.Name:
                            names.add(a.id)
        ctx.__dict__["_tfp3_eager_names"] = names
    return names


def _runs_eagerly(ctx: Context, fn: ast.AST) -> bool:
    if type(fn) is ast.Lambda:
        parent = ctx.parent(fn)
        return type(parent) is ast.Call and ctx.qualname(parent.func) in _EAGER_WRAPPERS  # type: ignore[attr-defined]
    name = getattr(fn, "name", None)
    return name is not None and name in _eager_names(ctx)
