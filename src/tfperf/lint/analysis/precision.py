"""Mixed precision: where the module sets the global Keras policy to ``mixed_float16``."""

from __future__ import annotations

import ast
from operator import attrgetter

from tfperf.lint.analysis.assignments import assigned_value
from tfperf.lint.analysis.syntax import keyword
from tfperf.lint.semantic import Context

POLICY_SETTERS = frozenset({
    "keras.mixed_precision.set_global_policy", "keras.mixed_precision.experimental.set_policy",
    "keras.mixed_precision.set_dtype_policy", "keras.config.set_dtype_policy",
    "keras.dtype_policies.set_dtype_policy",
})


POLICY_CLASSES = frozenset({
    "keras.mixed_precision.Policy", "keras.mixed_precision.experimental.Policy",
    "keras.mixed_precision.DTypePolicy", "keras.DTypePolicy", "keras.dtype_policies.DTypePolicy",
})


def _names_mixed_float16(ctx: Context, expr: ast.AST | None, depth: int = 0) -> bool:
    if expr is None or depth > 5:
        return False
    if type(expr) is ast.Constant:
        return expr.value == "mixed_float16"
    if type(expr) is ast.Call and ctx.qualname(expr.func) in POLICY_CLASSES:
        arg = expr.args[0] if expr.args else keyword(expr, "name")
        return _names_mixed_float16(ctx, arg, depth + 1)
    value = assigned_value(ctx, expr)
    return _names_mixed_float16(ctx, value, depth + 1) if value is not None else False


_VALUE = attrgetter("value")


def mixed_float16_policy(ctx: Context) -> ast.Call | None:
    """The call that sets the global policy to ``mixed_float16`` in this module, if any."""
    if not ctx.imports_tf:
        return None
    return ctx.cached("mixed_float16_policy", lambda: _find_policy_call(ctx))


def _find_policy_call(ctx: Context) -> ast.Call | None:
    # Every match ends at the string constant "mixed_float16": without one, no call needs
    # resolving (the scan is much cheaper than resolving every call's callee).
    if "mixed_float16" not in map(_VALUE, ctx.nodes_of(ast.Constant)):  # a scan in C
        return None
    for call in ctx.calls:
        if ctx.qualname(call.func) in POLICY_SETTERS:
            arg = call.args[0] if call.args else keyword(call, "policy")
            if _names_mixed_float16(ctx, arg):
                return call
    return None


def _policy_setters(ctx: Context) -> list[tuple[ast.Call, bool]]:
    """Every call that sets the global policy, in source order, with whether it sets
    ``mixed_float16`` (a notebook's cells are one module in cell order: source order is the
    order IPython runs them top to bottom)."""
    def compute() -> list[tuple[ast.Call, bool]]:
        out = []
        for call in ctx.calls:
            if ctx.qualname(call.func) in POLICY_SETTERS:
                arg = call.args[0] if call.args else keyword(call, "policy")
                out.append((call, _names_mixed_float16(ctx, arg)))
        return sorted(out, key=lambda c: (c[0].lineno, c[0].col_offset))
    return ctx.cached("precision.policy_setters", compute)


def _top_statement(ctx: Context, node: ast.AST) -> ast.AST:
    top = node
    for p in ctx.ancestors(node):
        if type(p) is ast.Module:
            return top
        top = p
    return top


def _run_points(ctx: Context, node: ast.AST, depth: int = 0) -> list[ast.AST] | None:
    """Module-level statements whose running runs ``node``: its own statement at module level;
    for code in a function or class, the module-level statements that refer to that function
    or class by name (following references from other functions, a few levels). ``None``
    when nothing in the module refers to it (it runs later, from elsewhere)."""
    fn = next((p for p in ctx.ancestors(node)
               if type(p) in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)), None)
    if fn is None:
        return [_top_statement(ctx, node)]
    # A method runs when its class is used: follow the outermost class or function.
    for p in ctx.ancestors(fn):
        if type(p) in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            fn = p
    if depth > 3:
        return None
    name = fn.name
    points: list[ast.AST] = []
    for n in ctx.nodes_of(ast.Name):
        if n.id != name or type(n.ctx) is not ast.Load or _inside(ctx, n, fn):
            continue
        b = ctx.binding(n)  # type: ignore[arg-type]
        if b is not None and b.value is not fn:
            continue
        more = _run_points(ctx, n, depth + 1)
        if more is None:
            return None
        points += more
    return points or None


def _inside(ctx: Context, node: ast.AST, scope: ast.AST) -> bool:
    return any(p is scope for p in ctx.ancestors(node))


def policy_in_effect(ctx: Context, node: ast.AST) -> bool:
    """Whether the ``mixed_float16`` policy is in effect when ``node`` runs: set by the last
    policy call before it (in the same function, or at module level before a statement that
    runs it). A policy set in a later cell does not apply to a model built earlier."""
    setters = _policy_setters(ctx)
    if not any(mixed for _, mixed in setters):
        return False
    fn = ctx.enclosing_function(node)
    local = [(c, m) for c, m in setters
             if fn is not None and ctx.enclosing_function(c) is fn
             and (c.lineno, c.col_offset) < (node.lineno, node.col_offset)]
    if local:
        return local[-1][1]
    top = [(c, m) for c, m in setters if ctx.enclosing_function(c) is None]
    if not top:
        return True  # set in some function: when it runs is not known here
    points = _run_points(ctx, node)
    if points is None:
        return top[-1][1]  # run from elsewhere, after the module ran
    where = (node.lineno, node.col_offset)

    def runs_before(call: ast.Call, point: ast.AST) -> bool:
        stmt = _top_statement(ctx, call)
        return stmt.lineno < point.lineno or (
            stmt is point and (call.lineno, call.col_offset) < where)

    for point in points:
        before = [mixed for call, mixed in top if runs_before(call, point)]
        if before and before[-1]:
            return True
    return False
