"""``tf.map_fn`` of a helper that already takes a batch (TFP106, held-out round 14 F001).

The map's function is a lambda or a one-line ``def`` returning one call of a helper on the
element (``lambda m: utils.affine_to_dense_shift(m, shape)``), or the helper itself
(``tf.map_fn(utils.f, x)``). Whether the helper takes a batch is a question about its body
(:func:`tfperf.lint.analysis.leading_axes.batches_first_argument`), asked here when the
helper is a function of this module, and of the project model (the helper's module
publishes the answer) when it is imported."""

from __future__ import annotations

import ast

from tfperf.lint.analysis.leading_axes import batches_first_argument
from tfperf.lint.semantic import Context


def _element(fn: ast.AST) -> str | None:
    args = fn.args
    params = [a.arg for a in (*args.posonlyargs, *args.args)]
    if args.vararg or args.kwarg or not params:
        return None
    if params[0] in ("self", "cls"):
        params = params[1:]
    return params[0] if len(params) == 1 else None


def delegate(fn: ast.AST) -> tuple[ast.Call, str] | None:
    """``lambda m: g(m, a, k=b)`` / ``def f(m): return g(m, ...)``: the one call and the
    slot the element goes to ("0", or the keyword's name), the other arguments not reading
    the element."""
    if type(fn) is ast.Lambda:
        expr: ast.AST = fn.body
    elif type(fn) in (ast.FunctionDef, ast.AsyncFunctionDef):
        body = [s for s in fn.body
                if not (type(s) is ast.Expr and type(s.value) is ast.Constant)]
        if len(body) != 1 or type(body[0]) is not ast.Return or body[0].value is None:
            return None
        expr = body[0].value
    else:
        return None
    element = _element(fn)
    if element is None or type(expr) is not ast.Call:
        return None
    slots = [(str(i), a) for i, a in enumerate(expr.args)]
    slots += [(k.arg, k.value) for k in expr.keywords if k.arg is not None]
    if len(slots) != len(expr.args) + len(expr.keywords):
        return None  # `**kwargs`: the slots are hidden
    given = [s for s, v in slots if type(v) is ast.Name and v.id == element]
    if len(given) != 1 or (given[0] not in ("0",) and not given[0].isidentifier()):
        return None
    others = [v for s, v in slots if s != given[0]]
    if any(type(n) is ast.Name and n.id == element for v in others for n in ast.walk(v)):
        return None  # another argument depends on the element
    return expr, given[0]


def takes_slot(fn: ast.FunctionDef | ast.AsyncFunctionDef, slot: str) -> bool:
    """The element's slot is ``fn``'s first parameter."""
    params = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)]
    return bool(params) and slot in ("0", params[0])


def local_batched_helper(ctx: Context, fn: ast.AST) -> str | None:
    """The name of a module-level function of this module that ``fn`` hands the element to
    and that takes a batch already, else None."""
    found = delegate(fn)
    if found is None:
        return None
    call, slot = found
    if type(call.func) is not ast.Name:
        return None
    b = ctx.binding(call.func)
    target = b.value if b is not None and b.kind == "def" else None
    if not isinstance(target, ast.FunctionDef | ast.AsyncFunctionDef) \
            or ctx.scope_of(target) is not ctx.tree:
        return None
    if not takes_slot(target, slot) or not batches_first_argument(ctx, target):
        return None
    return call.func.id


# Words without which no function of a module reads its argument from the back through
# batched ops (a cheap gate before looking at each function).
GATE_WORDS = ("...", "@", "linalg", "matmul", "matrix_")


def batched_functions(ctx: Context, names: dict[ast.AST, str]) -> list[dict]:
    """``{"batches": qualname, "first": param}`` for each module-level function of this
    module that takes a batch in front of its first argument's axes."""
    if not any(w in ctx.source for w in GATE_WORDS):
        return []
    out = []
    for node in ctx.tree.body:
        if type(node) in (ast.FunctionDef, ast.AsyncFunctionDef) \
                and batches_first_argument(ctx, node):  # type: ignore[arg-type]
            q = names.get(node)
            params = node.args.posonlyargs + node.args.args
            if q is not None and params:
                out.append({"batches": q, "first": params[0].arg})
    return out
