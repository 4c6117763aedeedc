"""``int(v)``/``float(v)`` of a per-element value in a loop body (issue 26, round 16's c07,
development: ``p = int(img[i - 1, j] < c)`` eight times per pixel, weighted into a code).

In the loop each call makes a Python scalar; on the grid it is one cast of the batch
(``_tfperf_scalar('int', v)``: bool and integer → int64, float → int64 toward zero as
``int`` does, anything → float64 for ``float``). That is exact only where the Python
scalars never meet an array (a Python int is weak: ``int(x) + u8`` stays uint8, an int64
batch would not) and int64 cannot overflow where Python ints grow. So the calls are taken
only in **scalar expressions**: Python number constants, these calls and names bound to
scalar expressions, combined by ``+``, ``-``, ``*`` and unary ``-``/``+``; such a name is
read only inside scalar expressions, and the write stores one. The lever checks at run time
that the largest value the expression can reach (:func:`bound`, from the largest cast
magnitude) is below 2**63 and fits the written array's dtype; else the loop runs.
"""

from __future__ import annotations

import ast
import math

from tfperf.analysis.element_forms import NotAWrite, names

SCALAR = "_tfperf_scalar"
#: The written value, bound before the write so that the run-time check sees its casts.
VALUE = "_tfperf_scalar_value"
#: The run-time largest magnitude of the batch's casts, read by :func:`bound`'s text.
LARGEST = "_tfperf_scalar_max"
_OPS = (ast.Add, ast.Sub, ast.Mult)


def _is_cast(node: ast.AST, varying: set[str]) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
        and node.func.id in ("int", "float") and len(node.args) == 1 and not node.keywords \
        and not isinstance(node.args[0], ast.Starred) and bool(names(node.args[0]) & varying)


def _bound(node: ast.expr, scalars: dict[str, str], varying: set[str]) -> str | None:
    """The text of an upper bound of ``|node|`` if it is a scalar expression, else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        v: float = node.value
        return str(int(abs(v)) + 1) if math.isfinite(v) else None
    if isinstance(node, ast.Name) and node.id in scalars:
        return scalars[node.id]
    if _is_cast(node, varying):
        return LARGEST
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return _bound(node.operand, scalars, varying)
    if isinstance(node, ast.BinOp) and isinstance(node.op, _OPS):
        a, b = _bound(node.left, scalars, varying), _bound(node.right, scalars, varying)
        if a is None or b is None:
            return None
        # max(a*b, a, b) also bounds an int part that a float factor hides
        return f"max(({a}) * ({b}), {a}, {b})" if isinstance(node.op, ast.Mult) \
            else f"(({a}) + ({b}))"
    return None


class _Casts(ast.NodeTransformer):
    def __init__(self, varying: set[str]) -> None:
        self.varying = varying

    def visit_Call(self, node: ast.Call) -> ast.expr:
        self.generic_visit(node)
        if _is_cast(node, self.varying):
            assert isinstance(node.func, ast.Name)
            return ast.Call(ast.Name(SCALAR, ast.Load()),
                            [ast.Constant(node.func.id), node.args[0]], [])
        return node


def scalar_casts(stmts: list[ast.stmt], write: ast.Assign | ast.AugAssign,
                 varying: set[str]) -> tuple[list[ast.stmt], ast.Assign | ast.AugAssign,
                                             tuple[str, bool] | None]:
    """The body with each per-element ``int``/``float`` as one cast of the batch, the written
    value bound first to :data:`VALUE`; and (the text of the bound of the written value,
    whether it is an int: no ``float`` and no float constant in it), or None: no cast in the
    body, nothing changed."""
    body: list[ast.stmt] = [*stmts, write]
    if not any(_is_cast(n, varying) for s in body for n in ast.walk(s)):
        return stmts, write, None
    if not isinstance(write, ast.Assign):
        raise NotAWrite("a per-element int()/float() in an accumulation")
    scalars: dict[str, str] = {}
    for s in stmts:
        assert isinstance(s, ast.Assign)
        b = _bound(s.value, scalars, varying)
        if b is not None and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name) \
                and (any(_is_cast(n, varying) for n in ast.walk(s.value))
                     or names(s.value) & set(scalars)):
            scalars[s.targets[0].id] = b
        elif any(_is_cast(n, varying) for n in ast.walk(s.value)) \
                or names(s.value) & set(scalars):
            raise NotAWrite("a per-element int()/float() that meets an array (a Python "
                            "scalar promotes less than its batch)")
    top = _bound(write.value, scalars, varying)
    stored = [n for t in write.targets for n in ast.walk(t)]
    if top is None or any(isinstance(n, ast.Name) and n.id in scalars for n in stored) \
            or any(_is_cast(n, varying) for n in stored):
        raise NotAWrite("a per-element int()/float() that meets an array (a Python "
                        "scalar promotes less than its batch)")
    def floats(node: ast.AST) -> bool:
        return any((isinstance(n, ast.Constant) and isinstance(n.value, float))
                   or (_is_cast(n, varying) and n.func.id == "float")  # type: ignore[attr-defined]
                   for n in ast.walk(node))
    float_names: set[str] = set()
    for s in stmts:
        assert isinstance(s, ast.Assign)
        if floats(s.value) or names(s.value) & float_names:
            float_names |= names(ast.Tuple(s.targets, ast.Load()))
    is_int = not floats(write.value) and not names(write.value) & float_names
    casts = _Casts(varying)
    out = [casts.visit(s) for s in stmts]
    value = casts.visit(write.value)
    out.append(ast.Assign([ast.Name(VALUE, ast.Store())], value, lineno=0))
    new_write = ast.Assign(write.targets, ast.Name(VALUE, ast.Load()), lineno=0)
    return out, new_write, (top, is_int)
