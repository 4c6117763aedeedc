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
        return expr.value == "mixed_float16"  # type: ignore[attr-defined]
    if type(expr) is ast.Call and ctx.qualname(expr.func) in POLICY_CLASSES:  # type: ignore[attr-defined]
        arg = expr.args[0] if expr.args else keyword(expr, "name")  # type: ignore[arg-type,attr-defined]
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
