"""Per-group reductions, one loop iteration per group id, as one segment op.

A loop over group ids ``c`` whose value reduces the rows of ``x`` that belong to the group
(``tf.reduce_mean(tf.boolean_mask(x, tf.equal(ids, c)), axis=0)``, the mask named or not,
``ids == c`` either way round, any loop spelling the loop model reads) computes, for every
group at once, ``tf.math.unsorted_segment_mean(x, ids, n)`` (sum, max and min alike): one
pass over the rows instead of one masked pass per group. The segment op is called through
``_tfperf_groups``, which keeps what the loop gives where the segment op alone would not
(review 42: the check saw those only on inputs that held them): an id outside ``range(n)`` in
no group (a CPU segment op raises on an id of ``n`` or more), an empty group's NaN mean, -inf
max and inf min (not the segment op's 0 or finite extreme).

A masked mean written out (``tf.reduce_sum(x * m[:, None], 0) / tf.reduce_sum(m)``, ``m`` the
group's 0/1 indicator ``tf.cast(ids == c, dtype)`` as a column, ``tf.expand_dims(m, -1)``,
or as it is for rows of one value; a ``boolean_mask`` sum over that count) is the segment
mean too, a masked sum the segment sum; the count must be of the same ids and group. Group
ids that do not start at 0 (``for c in range(lo, hi)``) are the ids less ``lo``: ids below
``lo`` are then negative, which the segment ops drop, as no group of the loop took them. A
step (``range(0, n, 2)``) or a max/min of a masked product (the other groups' zeros count
there) is left alone.
"""

from __future__ import annotations

import ast
import copy
from typing import Any

from tfperf.tune.iterations import Iteration
from tfperf.tune.lever import Lever, LeverContext
from tfperf.tune.levers.loop_model import every_loop, found_loops, rewrite_one
from tfperf.tune.source import SourceEditError, uses_name

SEGMENT_OPS = {"reduce_sum": "unsorted_segment_sum", "reduce_mean": "unsorted_segment_mean",
               "reduce_max": "unsorted_segment_max", "reduce_min": "unsorted_segment_min"}

GROUPS = "_tfperf_groups"
# An empty group's mean is 0 / 0 (NaN) in the loop, its max -inf and min inf (floats); the
# segment ops give 0 and the dtype's lowest/highest finite value. An id of n or more is in no
# group of the loop; a CPU segment op raises on it. The check sees these only where the inputs
# it runs hold them, and a user's later inputs may (review 42): the helper keeps the loop's.
GROUPS_SOURCE = '''

def _tfperf_groups(how, rows, ids, n):
    """Each group's reduction ("sum", "mean", "divide": a sum over a count, "max", "min") as
    the loop's is: an id outside range(n) in no group (a CPU segment op raises on one of n
    or more), an empty group's mean NaN (0 / 0; ``/`` of integers is a float division), its
    float max -inf and min inf. A reduce_mean of integers stays an integer in the loop: left
    to the segment mean."""
    import tensorflow as tf

    rows, ids = tf.convert_to_tensor(rows), tf.convert_to_tensor(ids)
    ids = tf.where(ids < tf.cast(n, ids.dtype), ids, tf.constant(-1, ids.dtype))
    if how == "sum":
        return tf.math.unsorted_segment_sum(rows, ids, n)
    floats = rows.dtype.is_floating or rows.dtype.is_complex
    if how == "mean" and not floats:
        return tf.math.unsorted_segment_mean(rows, ids, n)
    if how in ("max", "min") and not rows.dtype.is_floating:
        return getattr(tf.math, "unsorted_segment_" + how)(rows, ids, n)
    count = tf.math.unsorted_segment_sum(tf.ones_like(ids, rows.dtype), ids, n)
    out = (tf.math.unsorted_segment_sum(rows, ids, n) if how in ("mean", "divide")
           else getattr(tf.math, "unsorted_segment_" + how)(rows, ids, n))
    count = tf.reshape(count, tf.concat([[-1], tf.ones([tf.rank(out) - 1], tf.int32)], 0))
    if how in ("mean", "divide"):
        return out / count
    empty = tf.fill(tf.shape(out), tf.constant(float("-inf" if how == "max" else "inf"),
                                               rows.dtype))
    return tf.where(count > 0, out, empty)
'''


def inlined(it: Iteration) -> ast.expr | None:
    """The iteration's value with the body's single-name assignments substituted (None when
    the body does anything else)."""
    names: dict[str, ast.expr] = {}
    for s in it.stmts:
        if not (isinstance(s, ast.Assign) and len(s.targets) == 1
                and isinstance(s.targets[0], ast.Name)):
            return None
        names[s.targets[0].id] = _substituted(s.value, names)
    return _substituted(it.value, names)


def _substituted(node: ast.expr, names: dict[str, ast.expr]) -> ast.expr:
    class Sub(ast.NodeTransformer):
        def visit_Name(self, n: ast.Name) -> Any:
            return copy.deepcopy(names[n.id]) if n.id in names else n

    return Sub().visit(copy.deepcopy(node))


def _group_of(cond: ast.expr, index: str) -> ast.expr | None:
    """``ids`` of ``tf.equal(ids, c)`` / ``ids == c`` (either order), ``c`` the index."""
    if isinstance(cond, ast.Call) and ast.unparse(cond.func).rsplit(".", 1)[-1] == "equal" \
            and len(cond.args) == 2 and not cond.keywords:
        pair = cond.args
    elif isinstance(cond, ast.Compare) and len(cond.ops) == 1 \
            and isinstance(cond.ops[0], ast.Eq):
        pair = [cond.left, cond.comparators[0]]
    else:
        return None
    for ids, c in (pair, pair[::-1]):
        if uses_name(ids, index):
            continue
        if isinstance(c, ast.Name) and c.id == index:
            return ids
        if isinstance(c, ast.BinOp) and isinstance(c.op, ast.Add):
            # ids == lo + c: group c holds the ids less lo
            for i, lo in ((c.left, c.right), (c.right, c.left)):
                if isinstance(i, ast.Name) and i.id == index and not uses_name(lo, index):
                    return ast.BinOp(ids, ast.Sub(), lo)
    return None


def _reduction(value: ast.expr, axis_zero: bool = True) -> tuple[str, ast.expr] | None:
    """(reduction, its operand) of ``tf.reduce_*(operand, axis=0)`` (``axis_zero``) or of
    ``tf.reduce_*(operand)`` (not ``axis_zero``: every axis)."""
    if not isinstance(value, ast.Call) or not value.args:
        return None
    red = ast.unparse(value.func).rsplit(".", 1)[-1]
    axis = next((k.value for k in value.keywords if k.arg == "axis"), None)
    if axis is None and len(value.args) == 2:
        axis = value.args[1]
    if red not in SEGMENT_OPS or any(k.arg != "axis" for k in value.keywords) \
            or len(value.args) > 2:
        return None
    if axis_zero != (isinstance(axis, ast.Constant) and axis.value == 0) \
            or (not axis_zero and axis is not None):
        return None
    return red, value.args[0]


def _indicator(node: ast.expr, index: str) -> ast.expr | None:
    """``ids`` of ``tf.cast(ids == c, dtype)`` (``tf.equal`` too): the group's 0/1 mask."""
    if isinstance(node, ast.Call) and ast.unparse(node.func).rsplit(".", 1)[-1] == "cast" \
            and len(node.args) + len(node.keywords) == 2 and node.args:
        return _group_of(node.args[0], index)
    return None


def _column(node: ast.expr) -> ast.expr | None:
    """``m`` of ``m[:, None]`` / ``m[:, tf.newaxis]`` / ``tf.expand_dims(m, 1 | -1)``: a
    mask of rows made a column, broadcast over a row's features."""
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Tuple) \
            and len(node.slice.elts) == 2:
        first, second = node.slice.elts
        if isinstance(first, ast.Slice) and first.lower is None and first.upper is None \
                and first.step is None and (ast.unparse(second) == "None"
                                            or ast.unparse(second).endswith("newaxis")):
            return node.value
    if isinstance(node, ast.Call) and ast.unparse(node.func).rsplit(".", 1)[-1] \
            == "expand_dims" and len(node.args) == 2 and not node.keywords \
            and ast.unparse(node.args[1]) in ("1", "-1"):
        return node.args[0]
    return None


def _masked_rows(operand: ast.expr, index: str) -> tuple[ast.expr, ast.expr, int] | None:
    """(rows, ids, rank) of ``tf.boolean_mask(rows, ids == c)`` (rank 0: any) or of
    ``rows * mask`` (either order), ``mask`` the group's 0/1 indicator as a column (rows
    ``[n, d]``: rank 2) or as it is (rows ``[n]``: rank 1). Of another rank the product is
    not the group's rows (a row mask over a square ``[n, n]`` masks its columns): the rank
    is checked where the rewrite runs (review 42: the check caught it only by its values)."""
    if isinstance(operand, ast.Call) and ast.unparse(operand.func).endswith("boolean_mask") \
            and len(operand.args) == 2 and not operand.keywords:
        rows, cond = operand.args
        ids = _group_of(cond, index)
        return (rows, ids, 0) if ids is not None else None
    if isinstance(operand, ast.BinOp) and isinstance(operand.op, ast.Mult):
        for rows, mask in ((operand.left, operand.right), (operand.right, operand.left)):
            column = _column(mask)
            ids = _indicator(column or mask, index)
            if ids is not None:
                return rows, ids, 2 if column is not None else 1
    return None


def _group_count(node: ast.expr, index: str) -> ast.expr | None:
    """``ids`` of ``tf.reduce_sum(tf.cast(ids == c, dtype))``: the group's size."""
    red = _reduction(node, axis_zero=False)
    if red is None or red[0] != "reduce_sum":
        return None
    return _indicator(_column(red[1]) or red[1], index)


def segment_value(it: Iteration, tf: str) -> str | None:
    """The segment op computing every group's value at once, or None. The group id is the
    loop's index, or the variable of ``range(a, b)`` (ids then offset by ``a``: groups that do
    not start at 0)."""
    value = inlined(it)
    if value is None:
        return None
    group, offset = it.index, ""
    if it.binds:
        if len(it.binds) != 1:
            return None
        name, pick, _ = it.binds[0]
        shift = pick.removesuffix(f" + {it.index}")
        # range(a, b) only: a step would skip ids the segment op still counts
        if shift == pick or not (shift.startswith("(") and shift.endswith(")")):
            return None
        group, offset = name, f" - {shift}"
    op: str | None = None
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Div):
        # a masked mean written as a masked sum over the group's count
        red = _reduction(value.left)
        count_ids = _group_count(value.right, group)
        if red is None or red[0] != "reduce_sum" or count_ids is None:
            return None
        found = _masked_rows(red[1], group)
        if found is None or ast.dump(found[1]) != ast.dump(count_ids):
            return None
        op, (rows, ids, rank) = SEGMENT_OPS["reduce_mean"], found
    else:
        red = _reduction(value)
        found = None if red is None else _masked_rows(red[1], group)
        if red is None or found is None:
            return None
        if not isinstance(red[1], ast.Call) and red[0] != "reduce_sum":
            return None  # max/min of rows * mask: the zeros of other groups count there
        op, (rows, ids, rank) = SEGMENT_OPS[red[0]], found
    if uses_name(rows, group) or uses_name(ids, group) or uses_name(rows, it.index):
        return None
    shown = ast.unparse(rows)
    if rank:
        shown = f"{tf}.ensure_shape({shown}, [{', '.join(['None'] * rank)}])"
    args = f"{shown}, {ast.unparse(ids)}{offset}, {it.stop}"
    how = "divide" if isinstance(value, ast.BinOp) else op.rsplit("_", 1)[-1]
    return f"{GROUPS}({how!r}, {args})"


def segments(text: str, it: Iteration, tf: str, depth: int) -> str:
    if it.join != "stack" or it.nested:
        raise SourceEditError("not one value per group id")
    expr = segment_value(it, tf)
    if expr is None:
        raise SourceEditError("not a reduction of the rows of one group")
    if isinstance(it.node, (ast.ListComp, ast.GeneratorExp)):
        out = rewrite_one(text, it, tf, [], "", expr)
    else:
        out = rewrite_one(text, it, tf, [f"{it.name} = {expr}"], it.name, None)
    if expr.startswith(f"{GROUPS}(") and f"def {GROUPS}(" not in out:
        out = out.rstrip("\n") + "\n" + GROUPS_SOURCE
    return out


class GroupsToSegments(Lever):
    name, slot, stage, traces = "per-group reductions→segment ops", "vectorize", 20, False
    description = ("a loop over group ids reducing each group's rows (boolean_mask of ids == c,"
                   " a masked sum over the group's count; ids from range(lo, hi) offset by lo)"
                   " becomes one tf.math.unsorted_segment_{sum,mean,max,min}")
    rejections = ("disagrees (a reduce_mean of integers: the segment mean is a float)",)

    def applies(self, ctx: LeverContext) -> str | None:
        if any(segment_value(it, "tf") for it in found_loops(ctx) if it.join == "stack"):
            return None
        return "no loop over group ids reducing each group's rows"

    def build(self, text: str, ctx: LeverContext) -> str:
        return every_loop(text, ctx, segments)


def levers(ctx: LeverContext) -> list[Lever]:
    return [GroupsToSegments()]

