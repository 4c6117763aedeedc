"""Per-iteration calls with a batched form (round 17, issue 26): ``np.dot`` of per-iteration
rows and ``math``/``cmath`` scalar functions. The write model asks whether a call of a
per-iteration value batches; these say which calls do, and under what name the lever lifts
them (run-time checks decide the rest: shapes, dtypes, values the scalar function refuses)."""

from __future__ import annotations

import ast

#: ``np.dot(a, b)`` of 1-D rows, ``a @ b``: one contraction of the last axis (``np.inner``
#: contracts a matrix's other axis: not here).
DOTS = frozenset({"dot"})
#: ``math``/``cmath`` functions whose NumPy ufunc computes them element by element (the same
#: IEEE function; the run-time check sends a value the scalar one raises on to the loop).
MATH_UFUNCS = {"exp": "exp", "log": "log", "log2": "log2", "log10": "log10", "sqrt": "sqrt",
               "sin": "sin", "cos": "cos", "tan": "tan", "asin": "arcsin", "acos": "arccos",
               "atan": "arctan", "sinh": "sinh", "cosh": "cosh", "tanh": "tanh",
               "expm1": "expm1", "log1p": "log1p", "fabs": "fabs", "atan2": "arctan2",
               "pow": "power", "hypot": "hypot"}
#: cmath has no real-only functions: ``fabs``, ``atan2``, ``pow``, ``hypot``, ``expm1``,
#: ``log1p``, ``log2`` are math's alone.
CMATH_UFUNCS = {k: v for k, v in MATH_UFUNCS.items()
                if k not in ("fabs", "atan2", "pow", "hypot", "expm1", "log1p", "log2")}


def dot_of(node: ast.AST) -> tuple[ast.expr, ast.expr] | None:
    """(a, b) of ``np.dot(a, b)`` or ``a @ b``, else None."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
        return node.left, node.right
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr in DOTS and isinstance(node.func.value, ast.Name) \
            and node.func.value.id in ("np", "numpy") and len(node.args) == 2 \
            and not node.keywords and not any(isinstance(a, ast.Starred) for a in node.args):
        return node.args[0], node.args[1]
    return None


def math_of(call: ast.Call) -> tuple[str, str, list[ast.expr]] | None:
    """(module, ufunc name, args) of ``math.exp(v)``/``cmath.exp(v)`` (positional args,
    one or two as the function takes), else None."""
    f = call.func
    if not (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name)
            and f.value.id in ("math", "cmath")) or call.keywords \
            or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    table = MATH_UFUNCS if f.value.id == "math" else CMATH_UFUNCS
    ufunc = table.get(f.attr)
    two = ufunc in ("arctan2", "power", "hypot")
    if ufunc is None or len(call.args) != (2 if two else 1):
        return None
    return f.value.id, ufunc, list(call.args)
