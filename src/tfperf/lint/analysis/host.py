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
