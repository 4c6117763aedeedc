"""A sum of a broadcast product, ``tf.reduce_sum(a * b, axis=k)``, as one contraction.

What a loop computes often ends as a product broadcast over a batch and summed (a weighted
sum over a window, one example's matrix-vector product written as ``r[:, None] * w``, a
masked sum): the product is materialised before the sum. ``tf.einsum`` contracts the same
axes without it. The axes are only known when the code runs, so the rewrite calls a helper
written into the module that builds the einsum from the operands' static shapes (the
broadcast's size-1 axes squeezed, the summed axes left out of the output) and keeps the
product where a shape or dtype is not known or differs. This lever runs after the loop
rewrites (their batched bodies are where such sums appear) and before the compile levers.
"""

from __future__ import annotations

import ast
from typing import Any

from tfperf.tune.lever import Lever, LeverContext
from tfperf.tune.levers.loop_model import WHOLE_HELPER
from tfperf.tune.source import (
    SourceEditError,
    ensure_tf,
    find_function,
    is_within,
    parse,
    replace_nodes,
)

HELPER = "_tfperf_contract"
SUMS = {"reduce_sum"}

#: The helper written into the module (``TF`` → the module's TensorFlow alias). It must be
#: plain Python of the user's module (the patch shows it), so it is kept short.
HELPER_SOURCE = '''

def _tfperf_contract(a, b, axis=None):
    """tfperf tune: TF.reduce_sum(a * b, axis) as one TF.einsum (no broadcast product)."""
    a, b = TF.convert_to_tensor(a), TF.convert_to_tensor(b)
    if axis == "examples":  # each example's sum: every axis but the batch axis (axis 0)
        axis = list(range(1, max(len(a.shape), len(b.shape))))
    ra, rb = a.shape.rank, b.shape.rank
    if (ra is None or rb is None or a.dtype != b.dtype or not (ra and rb)
            or not a.dtype.is_floating):
        return TF.reduce_sum(a * b, axis=axis)
    rank = max(ra, rb)
    sa = [1] * (rank - ra) + a.shape.as_list()
    sb = [1] * (rank - rb) + b.shape.as_list()
    if None in sa or None in sb or any(x != y and 1 not in (x, y) for x, y in zip(sa, sb)):
        return TF.reduce_sum(a * b, axis=axis)
    axes = range(rank) if axis is None else [axis] if isinstance(axis, int) else list(axis)
    summed = {k % rank for k in axes}
    letters = "abcdefghijklmnopqrstuvwxyz"
    spec_a, spec_b, out, drop_a, drop_b = "", "", "", [], []
    for d in range(rank):
        has_a, has_b = d >= rank - ra, d >= rank - rb
        if has_a and has_b and sa[d] != sb[d]:  # a broadcast axis: the size-1 side squeezed
            if sa[d] == 1:
                drop_a.append(d - (rank - ra))
                has_a = False
            else:
                drop_b.append(d - (rank - rb))
                has_b = False
        spec_a += letters[d] if has_a else ""
        spec_b += letters[d] if has_b else ""
        out += "" if d in summed else letters[d]
    if drop_a:
        a = TF.squeeze(a, drop_a)
    if drop_b:
        b = TF.squeeze(b, drop_b)
    return TF.einsum(spec_a + "," + spec_b + "->" + out, a, b)
'''


#: Calls that are the element-wise product of their two arguments (by what the name
#: refers to: a user's own ``def multiply(a, b)`` is not one).
PRODUCTS = {"tensorflow.multiply", "tensorflow.math.multiply", "numpy.multiply"}


def _product(node: ast.AST, names: Any) -> tuple[ast.expr, ast.expr] | None:
    """The two factors of ``a * b`` or ``tf.multiply(a, b)`` (``tf.math.multiply``; a
    ``name=`` aside), None for anything else; ``names``: the module's name resolution."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        return node.left, node.right
    if isinstance(node, ast.Call) and len(node.args) == 2 \
            and all(k.arg == "name" for k in node.keywords) \
            and names.call_qualname(node) in PRODUCTS:
        return node.args[0], node.args[1]
    return None


def _function(text: str, name: str) -> tuple[Any, ast.FunctionDef]:
    """The module's name resolution and the function ``name`` of the same tree."""
    from tfperf.lint.semantic import Context

    tree = parse(text)
    return Context(tree, text, "<tune>"), find_function(tree, name)


def _sums(names: Any, fn: ast.FunctionDef) -> list[tuple[ast.Call, tuple[ast.expr, ast.expr],
                                                         ast.expr | None]]:
    """``reduce_sum(a * b[, axis])`` calls (the product also ``tf.multiply(a, b)``) of the
    function (and of the helpers the loop levers wrote into it): the call, the factors, the
    axis."""
    out: list[tuple[ast.Call, tuple[ast.expr, ast.expr], ast.expr | None]] = []
    for n in ast.walk(fn):
        if not isinstance(n, ast.Call):
            continue
        if ast.unparse(n.func) == WHOLE_HELPER and len(n.args) == 2 and not n.keywords \
                and ast.unparse(n.args[0]).rsplit(".", 1)[-1] in SUMS:
            factors = _product(n.args[1], names)
            if factors is not None:
                # a batched loop's sum of one example's product, over each example's axes
                out.append((n, factors, ast.Constant("examples")))
            continue
        factors = _product(n.args[0], names) if n.args else None
        if factors is None:
            continue
        name = ast.unparse(n.func).rsplit(".", 1)[-1]
        if name not in SUMS or len(n.args) > 2 or any(k.arg != "axis" for k in n.keywords):
            continue
        axis = n.args[1] if len(n.args) == 2 else next((k.value for k in n.keywords), None)
        out.append((n, factors, axis))
    return out


class ProductSumToEinsum(Lever):
    name, slot, stage, traces = "sum of a product→einsum", "contract", 30, False
    description = ("tf.reduce_sum(a * b, axis) (what a batched loop's weighted sum or "
                   "matrix-vector product becomes) as one tf.einsum, without the broadcast "
                   "product")
    rejections = ("the shapes are unknown: the product is kept (no gain)",
                  "disagrees (summation order)")

    def applies(self, ctx: LeverContext) -> str | None:
        # The sums appear once the loop levers have batched a loop: judged on the function
        # as written and as those levers leave it (each is tried on top of them).
        from tfperf.tune.levers.loop_model import found_loops

        if _sums(*_function(ctx.target.source, ctx.target.name)) or found_loops(ctx):
            return None
        return "no sum of a product, and no loop whose batched form may hold one"

    def build(self, text: str, ctx: LeverContext) -> str:
        text, tf = ensure_tf(text)
        found = _sums(*_function(text, ctx.target.name))
        if not found:
            raise SourceEditError("no tf.reduce_sum of a product in the function")
        # a * a: one tensor, one shape, no broadcast product to save; as written it is the
        # short form, and the helper would only add its 30 lines to the patch
        found = [f for f in found if ast.dump(f[1][0]) != ast.dump(f[1][1])]
        if not found:
            raise SourceEditError("each sum is of the same factor twice (a * a): no "
                                  "broadcast product to save")
        edits: list[tuple[ast.AST, str]] = []
        for call, (left, right), axis in found:
            if any(call is not other and is_within(call, other) for other, _, _ in found):
                continue  # an outer sum takes the inner one whole
            a = ast.get_source_segment(text, left) or ast.unparse(left)
            b = ast.get_source_segment(text, right) or ast.unparse(right)
            ax = "None" if axis is None else (ast.get_source_segment(text, axis)
                                             or ast.unparse(axis))
            if isinstance(axis, ast.Constant) and axis.value == "examples":
                ax = repr("examples")
            edits.append((call, f"{HELPER}({a}, {b}, {ax})"))
        text = replace_nodes(text, edits)
        if f"def {HELPER}(" not in text:
            text = text.rstrip("\n") + "\n" + HELPER_SOURCE.replace("TF.", f"{tf}.")
        return text


def levers(ctx: LeverContext) -> list[Lever]:
    return [ProductSumToEinsum()]
