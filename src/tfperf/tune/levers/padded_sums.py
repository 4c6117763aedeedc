"""Padded sums → one scatter-add (issue 26; held-out round 5's c02: overlapping window
predictions averaged by ``cum_sum = cum_sum + tf.pad(y_pred[i], [[start[i], length - end[i]],
[0, 0]])`` per window, and a count ``tf.pad(tf.ones([T]), [[start[i], ...]])`` beside it).

Adding a padded value places it at rows ``lo, lo + 1, …`` of a zero tensor and adds: a sum of
such terms over a loop's iterations is one ``tf.scatter_nd`` of every iteration's rows at
their places (``scatter_nd`` adds where places repeat), without the padded tensor of each
iteration. The values and their first rows come from one ``tf.vectorized_map`` of the
iteration (any spelling the loop model reads). The padding after the value is what makes the
term fit the total's shape, so the total's shape is the scatter's.

The loop model reads a loop adding to several totals (the window sums and the window count
above) as one loop per total (:mod:`tfperf.tune.levers.split_sums`).
"""

from __future__ import annotations

import ast
import copy

from tfperf.tune.iterations import Iteration
from tfperf.tune.lever import Lever, LeverContext
from tfperf.tune.levers.loop_model import (
    batched_parts,
    every_loop,
    found_loops,
    helper_name,
    rewrite_one,
)
from tfperf.tune.source import SourceEditError, stmt_text


def _call_name(node: ast.AST) -> str:
    if isinstance(node, ast.Call):
        f = node.func
        return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
    return ""


def _zero(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value == 0


def padded(term: ast.expr) -> tuple[ast.expr, ast.expr] | None:
    """(the padded value, its first row) of ``tf.pad(v, [[lo, hi], [0, 0]…])`` or of a cast
    of it; None for any other term (another padded axis, a mode, a fill value)."""
    if _call_name(term) == "cast" and isinstance(term, ast.Call) and term.args:
        term = term.args[0]
    if _call_name(term) != "pad" or not isinstance(term, ast.Call) or not term.args \
            or len(term.args) > 2 or any(k.arg != "paddings" for k in term.keywords):
        return None
    pads = term.args[1] if len(term.args) > 1 else next(
        (k.value for k in term.keywords if k.arg == "paddings"), None)
    if not isinstance(pads, (ast.List, ast.Tuple)) or not pads.elts:
        return None
    pairs = [p.elts for p in pads.elts if isinstance(p, (ast.List, ast.Tuple))]
    if len(pairs) != len(pads.elts) or any(len(p) != 2 for p in pairs) \
            or not all(_zero(x) for p in pairs[1:] for x in p):
        return None
    return term.args[0], pairs[0][0]


def _scattered(text: str, it: Iteration, tf: str, mapped: bool) -> str:
    """The accumulation of ``it`` as one scatter-add: the values and their first rows of
    every iteration computed on the batch where the body takes one (no trace, no loop), or
    (``mapped``, or where the body cannot be batched) by ``tf.vectorized_map`` of the
    iteration."""
    if it.join != "sum" or it.running or isinstance(it.node, (ast.ListComp, ast.GeneratorExp,
                                                                ast.Call)):
        raise SourceEditError("not a statement loop's sum")
    got = padded(it.value)
    if got is None:
        raise SourceEditError("the term is not a padded value")
    value_node, lo_node = got
    if _call_name(it.value) == "cast" and isinstance(it.value, ast.Call):
        cast = copy.deepcopy(it.value)
        cast.args[0] = value_node  # the cast of the value: the cast of its padding
        value_node = cast
    helper = helper_name(text)
    rows, starts = f"{helper}_rows", f"{helper}_starts"
    try:
        if mapped:
            raise SourceEditError("mapped")
        lines, (batch_rows, batch_starts) = batched_parts(it, tf, [value_node, lo_node], text)
        every = f"{tf}.range({it.stop})"
        value, lo = ast.unparse(value_node), ast.unparse(lo_node)
        lines.append(f"{rows} = " + (batch_rows or f"{tf}.broadcast_to({value}, {tf}.concat("
                                     f"[{tf}.shape({every}), {tf}.shape({value})], 0))"))
        lines.append(f"{starts} = " + (batch_starts or f"{tf}.zeros_like({every}) + ({lo})"))
    except SourceEditError:
        lines = [f"def {helper}({it.index}):"]
        lines += [f"    {name} = {pick}" for name, pick, _ in it.binds]
        for s in it.stmts:
            lines += ["    " + r for r in stmt_text(text, s).splitlines()]
        lines.append(f"    return {ast.unparse(value_node)}, {ast.unparse(lo_node)}")
        lines.append(f"{rows}, {starts} = {tf}.vectorized_map({helper}, {tf}.range({it.stop}))")
    places = (f"{tf}.reshape({tf}.cast({starts}, {tf}.int32)[:, None] + "
              f"{tf}.range({tf}.shape({rows})[1])[None, :], [-1, 1])")
    values = f"{tf}.reshape({rows}, {tf}.concat([[-1], {tf}.shape({rows})[2:]], 0))"
    lines.append(f"{it.name} = {it.name} + {tf}.scatter_nd({places}, {values}, "
                 f"{tf}.shape({it.name}))")
    return rewrite_one(text, it, tf, lines, "", None)


class PaddedSumsScatter(Lever):
    slot, stage, traces = "vectorize", 20, False
    rejections = ("an op needs one example's shape (raises)", "disagrees")

    def __init__(self, mapped: bool = False) -> None:
        self.mapped = mapped
        self.name = "padded sums→scatter-add" + (" (vectorized_map)" if mapped else "")
        self.description = ("a loop adding a zero-padded value per iteration to a total "
                            "becomes one tf.scatter_nd of every iteration's rows at their "
                            "places, the rows computed " + ("by tf.vectorized_map" if mapped
                                                            else "on the whole batch"))

    def applies(self, ctx: LeverContext) -> str | None:
        found = found_loops(ctx)
        if not any(it.join == "sum" and padded(it.value) for it in found):
            return "no loop adding a zero-padded value (tf.pad) to a total per iteration"
        return None

    def build(self, text: str, ctx: LeverContext) -> str:
        return every_loop(text, ctx, lambda t, it, tf, depth: _scattered(t, it, tf, self.mapped))


def levers(ctx: LeverContext) -> list[Lever]:
    return [PaddedSumsScatter(), PaddedSumsScatter(mapped=True)]
