"""What is surely a tensor (stricter than ``ctx.is_tensor_like``, for rules where a Python
value in that place would be legitimate), and where ``tf.Variable`` objects are made."""

from __future__ import annotations

import ast

from tfperf.lint.analysis.imports import from_imports_tf
from tfperf.lint.semantic import TENSOR_ANNOTATIONS, Context


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
    if type(deco) is ast.Call and any(k.arg == "input_signature" for k in deco.keywords):
        return True
    if ctx.dataset_map_call(fn) is not None:
        return True
    positional = arguments.posonlyargs + arguments.args
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
        return surely_tensor(ctx, expr.value, _depth + 1)
    if t is ast.BinOp:
        return surely_tensor(ctx, expr.left, _depth + 1) \
            or surely_tensor(ctx, expr.right, _depth + 1)
    if t is ast.UnaryOp:
        return surely_tensor(ctx, expr.operand, _depth + 1)
    if t is ast.Call:
        return ctx.is_tensor_like(expr)
    return False


VARIABLE_CLASSES = frozenset({"tensorflow.Variable", "tensorflow.compat.v1.Variable"})


def is_variable_call(ctx: Context, node: ast.AST) -> bool:
    """``tf.Variable(...)`` in any spelling; cheap syntactic test first."""
    if type(node) is not ast.Call:
        return False
    func = node.func
    if type(func) is ast.Attribute:
        if func.attr != "Variable":
            return False
    elif type(func) is not ast.Name or (func.id != "Variable" and not from_imports_tf(ctx)):
        return False
    return ctx.qualname(func) in VARIABLE_CLASSES
