"""Per-iteration calls with a batched form (round 17, issue 26): ``np.dot`` of per-iteration
rows and ``math``/``cmath`` scalar functions. The write model asks whether a call of a
per-iteration value batches; these say which calls do, and under what name the lever lifts
them (run-time checks decide the rest: shapes, dtypes, values the scalar function refuses)."""

from __future__ import annotations

import ast
import contextlib
from collections.abc import Iterator
from contextvars import ContextVar

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


#: Names the module imported from math/cmath (``from cmath import exp``) → (module, name),
#: set while one function is analysed (``imported_from``); a name the function binds is not one.
_IMPORTED: ContextVar[dict[str, tuple[str, str]] | None] = ContextVar("_IMPORTED",
                                                                      default=None)


@contextlib.contextmanager
def imported_from(module: ast.Module, fn: ast.FunctionDef) -> Iterator[None]:
    """``from math import exp`` / ``from cmath import exp as cexp`` at the module's top level,
    less the names ``fn`` binds (a parameter, an assignment), for ``math_of`` inside."""
    bound = {a.arg for a in [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]}
    bound |= {a.arg for a in (fn.args.vararg, fn.args.kwarg) if a is not None}
    bound |= {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)
              and not isinstance(n.ctx, ast.Load)}
    found: dict[str, tuple[str, str]] = {}
    for s in module.body:
        if isinstance(s, ast.ImportFrom) and s.module in ("math", "cmath") and not s.level:
            for a in s.names:
                found[a.asname or a.name] = (s.module, a.name)
        elif isinstance(s, (ast.Import, ast.ImportFrom, ast.Assign, ast.FunctionDef)):
            # a later import or definition of the name: not the math function any more
            later = {a.asname or a.name.split(".")[0] for a in s.names} \
                if isinstance(s, (ast.Import, ast.ImportFrom)) else \
                {s.name} if isinstance(s, ast.FunctionDef) else \
                {t.id for t in s.targets if isinstance(t, ast.Name)}
            for n in later:
                found.pop(n, None)
    token = _IMPORTED.set({k: v for k, v in found.items() if k not in bound})
    try:
        yield
    finally:
        _IMPORTED.reset(token)


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
    imported = _IMPORTED.get() or {}
    if isinstance(f, ast.Name) and f.id in imported:
        module, attr = imported[f.id]  # from cmath import exp
    elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) \
            and f.value.id in ("math", "cmath"):
        module, attr = f.value.id, f.attr
    else:
        return None
    if call.keywords or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    table = MATH_UFUNCS if module == "math" else CMATH_UFUNCS
    ufunc = table.get(attr)
    two = ufunc in ("arctan2", "power", "hypot")
    if ufunc is None or len(call.args) != (2 if two else 1):
        return None
    return module, ufunc, list(call.args)
