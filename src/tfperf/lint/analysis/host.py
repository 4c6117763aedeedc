"""Host conversions: calls that copy a value from the device to the host (``.numpy()``,
``np.array(x)``, ``float(x)``) and whether what they convert is a TensorFlow tensor."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from tfperf.lint.analysis.imports import other_framework_imported
from tfperf.lint.semantic import Context

NUMPY_CONVERSIONS = frozenset({"numpy.array", "numpy.asarray", "numpy.asanyarray",
                               "numpy.ascontiguousarray"})


SCALAR_BUILTINS = ("float", "int", "bool", "complex")


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
    func = call.func
    if type(func) is ast.Attribute:
        if func.attr == "numpy" and not call.args and not call.keywords:
            return HostConversion(call, func.value, ".numpy()", "numpy")
        if func.attr in ("array", "asarray", "asanyarray", "ascontiguousarray") \
                and call.args and ctx.qualname(func) in NUMPY_CONVERSIONS:
            return HostConversion(call, call.args[0], f"np.{func.attr}()", "np")
        return None
    if type(func) is ast.Name:
        if func.id in SCALAR_BUILTINS and len(call.args) == 1 and not call.keywords \
                and ctx.is_builtin(func, func.id):
            return HostConversion(call, call.args[0], f"{func.id}()", "builtin")
        if call.args and ctx.qualname(func) in NUMPY_CONVERSIONS:  # `from numpy import asarray`  # type: ignore[attr-defined]
            return HostConversion(call, call.args[0], f"{func.id}()", "np")
    return None


def converts_a_tensor(ctx: Context, conv: HostConversion) -> bool:
    """Whether the conversion's operand is (or, for ``.numpy()``, may be taken as) a TF
    tensor. ``.numpy()`` is itself the evidence, unless another framework with ``.numpy()``
    is imported and nothing else says the receiver is TensorFlow's."""
    if ctx.is_tensor_like(conv.operand):
        return True
    return conv.kind == "numpy" and not other_framework_imported(ctx)


# Libraries whose calls return host arrays (NumPy arrays, images), never TensorFlow tensors.
HOST_ARRAY_ROOTS = ("numpy.", "cv2.", "PIL.", "scipy.", "skimage.", "imageio.")


def host_array(ctx: Context, expr: ast.AST | None, _depth: int = 0) -> bool:
    """``expr`` is surely a host array, not a tensor: a call into NumPy or an image library
    (``cv2.resize(img, ...)``), a tensor's ``.numpy()``/``np.array(t)``, a slice of one
    (``img[y:y + h, x:x + w]``), arithmetic of one with numbers or another (``crop / 255``),
    or a name whose last binding before the use is one (through a few assignments)."""
    if expr is None or _depth > 6 or ctx.is_tensor_like(expr):
        return False
    t = type(expr)
    if t is ast.Call:
        conv = host_conversion(ctx, expr)
        if conv is not None and conv.kind in ("numpy", "np"):
            return True
        q = ctx.call_qualname(expr)
        return q is not None and q.startswith(HOST_ARRAY_ROOTS)
    if t is ast.Subscript:
        return host_array(ctx, expr.value, _depth + 1)
    if t is ast.BinOp:
        sides = [s for s in (expr.left, expr.right) if type(s) is not ast.Constant]
        return bool(sides) and all(host_array(ctx, s, _depth + 1) for s in sides)
    if t is ast.Name:
        b = ctx.binding(expr)  # type: ignore[arg-type]
        if b is None or b.kind != "assign":
            return False
        return host_array(ctx, b.value, _depth + 1)
    return False


def host_scalar(ctx: Context, expr: ast.AST | None, _depth: int = 0) -> ast.expr | None:
    """``expr`` is surely a Python number, not a tensor: ``float(t)``/``int(t)``/``bool(t)``,
    ``t.item()``, or a name whose last binding before the use is one. Returns what was
    converted (callers judge whether converting it per element is itself the slowdown)."""
    if expr is None or _depth > 6:
        return None
    if type(expr) is ast.Call:
        conv = host_conversion(ctx, expr)
        if conv is not None and conv.kind == "builtin":
            return conv.operand
        f = expr.func
        if type(f) is ast.Attribute and f.attr == "item" and not expr.args \
                and not expr.keywords:
            return f.value
        return None
    if type(expr) is ast.Name:
        b = ctx.binding(expr)
        if b is None or b.kind != "assign":
            return None
        return host_scalar(ctx, b.value, _depth + 1)
    return None
