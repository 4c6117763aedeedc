"""Who calls a function: the ``def`` a name or ``self.method`` refers to, the calls in the
module that reach a ``def``, and whether one of them runs once per loop iteration."""

from __future__ import annotations

import ast

from tfperf.lint.semantic import Context

DEF_NODES = (ast.FunctionDef, ast.AsyncFunctionDef)


def resolve_def(ctx: Context, expr: ast.AST) -> ast.AST | None:
    """The ``def`` (or lambda) a name or ``self.method`` refers to, when it is in this module."""
    if type(expr) is ast.Lambda:
        return expr
    if type(expr) is ast.Name:
        b = ctx.binding(expr)
        if b is not None and b.kind == "def" and type(b.value) in DEF_NODES:
            return b.value
        return None
    if type(expr) is ast.Attribute and type(expr.value) is ast.Name \
            and expr.value.id in ("self", "cls"):
        cls = ctx.enclosing_class(expr)
        if cls is not None:
            for stmt in cls.body:
                if type(stmt) in DEF_NODES and stmt.name == expr.attr:
                    return stmt
    return None


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
                and resolve_def(ctx, f) is fn:
            out.append(call)
    # Through a local alias: `step = self._train_step` (or `= train_step`), then `step(x)`.
    for alias, calls in by_name.items():
        if alias == name:
            continue
        for call in calls:
            b = ctx.binding(call.func)  # type: ignore[arg-type]
            if b is None or b.kind != "assign":
                continue
            value = b.value
            if (getattr(value, "attr", None) == name or getattr(value, "id", None) == name) \
                    and resolve_def(ctx, value) is fn:
                out.append(call)
    return out


def called_in_loop(ctx: Context, fn: ast.AST) -> ast.Call | None:
    """A call of ``fn`` that runs once per iteration of a loop, outside any
    ``tf.function`` (where a loop would be traced once, not run per call)."""
    for call in calls_of(ctx, fn):
        if ctx.in_loop(call) and not ctx.in_tf_function(call):
            return call
    return None


def bound_arguments(fn: ast.AST, call: ast.Call) -> dict[str, ast.expr] | None:
    """What each parameter of ``fn`` receives from ``call``: the argument passed, else the
    parameter's default (a parameter with neither is left out); ``self``/``cls`` count as
    filled already. ``None`` when ``*args``/``**kwargs`` in the call hide which is which."""
    args = getattr(fn, "args", None)
    if args is None or any(type(a) is ast.Starred for a in call.args) \
            or any(k.arg is None for k in call.keywords):
        return None
    params = [a.arg for a in (*args.posonlyargs, *args.args)]
    values: dict[str, ast.expr] = dict(zip(params[len(params) - len(args.defaults):],
                                           args.defaults, strict=True))
    values.update((a.arg, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)
                  if d is not None)
    given = [p for p in params if p not in ("self", "cls")]
    values.update(zip(given, call.args, strict=False))  # fewer given: defaults stand
    values.update((k.arg, k.value) for k in call.keywords if k.arg is not None)
    return values


def passed_values(ctx: Context, name: ast.AST) -> list[ast.expr] | None:
    """What this module's calls of the function whose parameter ``name`` is pass for it,
    one value per call that binds it; ``None`` where ``name`` is no parameter of a
    function of this module. The project model's one walk from a parameter back to its
    callers' arguments (an instance passed to a training function, a model passed to a
    helper): rules ask it rather than walking calls themselves."""
    if type(name) is not ast.Name:
        return None
    b = ctx.binding(name)
    if b is None or b.kind != "param":
        return None
    fn = next((f for f in ctx.enclosing_functions(name)
               if b.value in (*f.args.posonlyargs, *f.args.args, *f.args.kwonlyargs)), None)
    if fn is None:
        return None
    out: list[ast.expr] = []
    for call in calls_of(ctx, fn):
        bound = bound_arguments(fn, call)
        value = bound.get(name.id) if bound else None
        if value is not None:
            out.append(value)
    return out
