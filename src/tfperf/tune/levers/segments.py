"""Per-group reductions, one loop iteration per group id, as one segment op.

A loop over group ids ``c`` whose value reduces the rows of ``x`` that belong to the group
(``tf.reduce_mean(tf.boolean_mask(x, tf.equal(ids, c)), axis=0)``, the mask named or not,
``ids == c`` either way round, any loop spelling the loop model reads) computes, for every
group at once, ``tf.math.unsorted_segment_mean(x, ids, n)`` (sum, max and min alike): one
pass over the rows instead of one masked pass per group. Ids outside ``range(n)`` are in no
group either way. An empty group differs (the mean of nothing is NaN, the segment mean 0):
the equivalence check sees it on the inputs it runs.
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
        if isinstance(c, ast.Name) and c.id == index and not uses_name(ids, index):
            return ids
    return None


def segment_value(it: Iteration, tf: str) -> str | None:
    """The segment op computing every group's value at once, or None."""
    value = inlined(it)
    if value is None or not isinstance(value, ast.Call) or not value.args:
        return None
    op = SEGMENT_OPS.get(ast.unparse(value.func).rsplit(".", 1)[-1])
    axis = next((k.value for k in value.keywords if k.arg == "axis"), None)
    if axis is None and len(value.args) == 2:
        axis = value.args[1]
    if op is None or not (isinstance(axis, ast.Constant) and axis.value == 0) \
            or any(k.arg != "axis" for k in value.keywords):
        return None
    masked = value.args[0]
    if not (isinstance(masked, ast.Call) and ast.unparse(masked.func).endswith("boolean_mask")
            and len(masked.args) == 2 and not masked.keywords):
        return None
    rows, cond = masked.args
    ids = _group_of(cond, it.index)
    if ids is None or uses_name(rows, it.index):
        return None
    return f"{tf}.math.{op}({ast.unparse(rows)}, {ast.unparse(ids)}, {it.stop})"


def segments(text: str, it: Iteration, tf: str, depth: int) -> str:
    if it.binds or it.join != "stack" or it.nested:
        raise SourceEditError("not one value per group id")
    expr = segment_value(it, tf)
    if expr is None:
        raise SourceEditError("not a reduction of the rows of one group")
    if isinstance(it.node, (ast.ListComp, ast.GeneratorExp)):
        return rewrite_one(text, it, tf, [], "", expr)
    return rewrite_one(text, it, tf, [f"{it.name} = {expr}"], it.name, None)


class GroupsToSegments(Lever):
    name, slot, stage, traces = "per-group reductions→segment ops", "vectorize", 20, False
    description = ("a loop over group ids reducing each group's rows (boolean_mask of ids == c)"
                   " becomes one tf.math.unsorted_segment_{sum,mean,max,min}")
    rejections = ("disagrees (an empty group: NaN against the segment op's 0)",)

    def applies(self, ctx: LeverContext) -> str | None:
        if any(segment_value(it, "tf") for it in found_loops(ctx) if it.join == "stack"):
            return None
        return "no loop over group ids reducing each group's rows"

    def build(self, text: str, ctx: LeverContext) -> str:
        return every_loop(text, ctx, segments)


def levers(ctx: LeverContext) -> list[Lever]:
    return [GroupsToSegments()]

