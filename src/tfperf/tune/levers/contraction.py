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


def _given(ctx: LeverContext, fn: ast.FunctionDef) -> dict[str, tuple[list[int], str]]:
    """The static shape and dtype of each parameter that holds a floating tensor or array in
    the run and that the function never rebinds."""
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
    given = list(zip(params, getattr(ctx.target, "args", ()), strict=False))
    given += [(k, v) for k, v in getattr(ctx.target, "kwargs", {}).items() if k in params]
    rebound = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)
               and not isinstance(n.ctx, ast.Load)}
    out: dict[str, tuple[list[int], str]] = {}
    for name, value in given:
        shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
        if shape is None or dtype is None or name in rebound:
            continue
        dims = list(shape)
        if any(not isinstance(d, int) for d in dims):
            continue
        kind = str(getattr(dtype, "name", dtype))
        if kind in ("float16", "bfloat16", "float32", "float64"):
            out[name] = ([int(d) for d in dims], kind)
    return out


def _factor(node: ast.expr, given: dict[str, tuple[list[int], str]]
            ) -> tuple[str, list[int], set[int], str] | None:
    """``x`` or ``x[:, None]`` (full slices and new axes only) of a parameter in ``given``:
    its name, its shape as the product sees it, the positions of the new axes, its dtype."""
    parts: list[ast.expr] = []
    if isinstance(node, ast.Subscript):
        parts = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in given:
        return None
    shape, kind = given[node.id]
    out: list[int] = []
    new: set[int] = set()
    k = 0
    for p in parts:
        if isinstance(p, ast.Constant) and p.value is None:
            new.add(len(out))
            out.append(1)
        elif isinstance(p, ast.Slice) and p.lower is None and p.upper is None \
                and p.step is None and k < len(shape):
            out.append(shape[k])
            k += 1
        else:
            return None
    return node.id, out + shape[k:], new, kind


def one_einsum(left: ast.expr, right: ast.expr, axis: ast.expr | None,
               given: dict[str, tuple[list[int], str]], tf: str) -> str | None:
    """``tf.einsum(spec, x, y)`` for ``reduce_sum(left * right, axis)`` where both factors
    are parameters (their new axes the only size-1 sides of the broadcast) and the axis a
    constant: the one-line contraction the patch shows (issue 26: a second ``--apply`` wrote
    the 37-line helper where ``tf.einsum("bij,i->bj", s, w)`` says it). None: the helper."""
    fa, fb = _factor(left, given), _factor(right, given)
    if fa is None or fb is None or fa[3] != fb[3]:
        return None
    (xa, sa, na, _), (xb, sb, nb, _) = fa, fb
    rank = max(len(sa), len(sb))
    if not (sa and sb) or rank > 26:
        return None
    pa, pb = rank - len(sa), rank - len(sb)
    if axis is None:
        summed = set(range(rank))
    else:
        try:
            value = ast.literal_eval(axis)
        except ValueError:
            return None
        values = [value] if isinstance(value, int) else list(value) \
            if isinstance(value, (tuple, list)) else None
        if values is None or any(type(v) is not int or not -rank <= v < rank for v in values):
            return None
        summed = {v % rank for v in values}
    letters = "abcdefghijklmnopqrstuvwxyz"
    spec_a, spec_b, out = "", "", ""
    for d in range(rank):
        da = sa[d - pa] if d >= pa else None
        db = sb[d - pb] if d >= pb else None
        new_a, new_b = d >= pa and d - pa in na, d >= pb and d - pb in nb
        if new_a and new_b:
            return None  # a new axis on both sides: the output keeps a size-1 axis
        if da is not None and db is not None and da != db and not (new_a or new_b):
            return None  # a size-1 axis of the data broadcast: the run's shapes may differ
        if (new_a and db is None) or (new_b and da is None):
            return None  # a new axis that meets no axis of the other side
        spec_a += letters[d] if da is not None and not new_a else ""
        spec_b += letters[d] if db is not None and not new_b else ""
        out += "" if d in summed else letters[d]
    return f'{tf}.einsum("{spec_a},{spec_b}->{out}", {xa}, {xb})'


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
        given = _given(ctx, find_function(parse(text), ctx.target.name))
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
            else:
                einsum = one_einsum(left, right, axis, given, tf)
                if einsum is not None:
                    edits.append((call, einsum))
                    continue
            edits.append((call, f"{HELPER}({a}, {b}, {ax})"))
        text = replace_nodes(text, edits)
        if any(e.startswith(f"{HELPER}(") for _, e in edits) and f"def {HELPER}(" not in text:
            text = text.rstrip("\n") + "\n" + HELPER_SOURCE.replace("TF.", f"{tf}.")
        return text


def levers(ctx: LeverContext) -> list[Lever]:
    return [ProductSumToEinsum()]
