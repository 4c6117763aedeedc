"""Frames: a loop whose value is a slice of a tensor whose bounds move with the loop variable,
stacked or concatenated, not summed (an STFT's frames, ``x[..., k * hop:k * hop + T]``, held-out
round 6's c09) — the windows lever's slices without the reduction.

Any spelling the loop model reads (``range``/``tf.range``, a comprehension, values appended or
written to a ``TensorArray``, a counter ``while``) becomes one ``tf.gather`` of every frame at
once along the sliced axis, ``x[..., starts[:, None] + range(T)]``, the bounds of every iteration
computed at once and read as a slice reads them (negative from the end, clipped to the axis);
the frames come out stacked along a new axis 0 as the loop's values would, or where the join
puts them. Frames of different lengths cannot be stacked, so the user's loop already made
them equal; a bound past the axis end (a shorter last frame) raises here as it would there.
"""

from __future__ import annotations

import ast
from dataclasses import replace

from tfperf.tune.iterations import Iteration
from tfperf.tune.lever import Lever, LeverContext
from tfperf.tune.levers.loop_model import every_loop, found_loops, rewrite_one
from tfperf.tune.levers.segments import inlined
from tfperf.tune.levers.windows import loop_variable, slice_window
from tfperf.tune.source import SourceEditError

HELPER = "_tfperf_frames"
HELPER_SOURCE = '''

def _tfperf_frames(x, axis, lows, highs, join="", at=0):
    """tfperf tune: the slices x[lows[k]:highs[k]] along `axis` for every k (all of one
    length), stacked along a new axis 0, or as `join` ("stack", "concat") of them along
    axis `at` would give them."""
    x = TF.convert_to_tensor(x)
    rank = x.shape.rank
    axis %= rank
    n = TF.cast(TF.shape(x)[axis], TF.int64)
    lows, highs = TF.cast(lows, TF.int64), TF.cast(highs, TF.int64)
    lows, highs = lows + TF.zeros_like(highs), highs + TF.zeros_like(lows)
    lows = TF.clip_by_value(TF.where(lows < 0, lows + n, lows), 0, n)
    highs = TF.maximum(TF.clip_by_value(TF.where(highs < 0, highs + n, highs), 0, n), lows)
    widths = highs - lows
    TF.debugging.assert_equal(widths, widths[0], message="frames of different lengths")
    frames = None
    starts, width = TF.get_static_value(lows), TF.get_static_value(widths[0])
    if starts is not None and width is not None and len(starts) > 1 and width > 0:
        step = int(starts[1] - starts[0])
        if step > 0 and all(int(b - a) == step for a, b in zip(starts[:-1], starts[1:])):
            # regular starts (known here): tf.signal.frame, which copies without an index
            rest = x[(slice(None),) * axis + (slice(int(starts[0]), None),)]
            framed = TF.signal.frame(rest, int(width), step, axis=axis)
            if framed.shape[axis] is not None and framed.shape[axis] >= len(starts):
                frames = framed[(slice(None),) * axis + (slice(0, len(starts)),)]
    if frames is None:
        places = lows[:, None] + TF.range(widths[0])[None, :]
        frames = TF.gather(x, places, axis=axis)  # x's axes, `axis` now [frames, width]
    if join == "stack" and at % (rank + 1) == axis:
        return frames  # the frames already lie where the stack puts them
    frames = TF.experimental.numpy.moveaxis(frames, axis, 0)
    if join == "stack":
        return TF.experimental.numpy.moveaxis(frames, 0, at)
    if join == "concat":
        k = at % rank
        moved = TF.experimental.numpy.moveaxis(frames, 0, k)
        shape = TF.shape(moved)
        return TF.reshape(moved, TF.concat([shape[:k], [-1], shape[k + 2:]], 0))
    return frames
'''


def frames_value(it: Iteration, tf: str) -> str | None:
    """Every frame of the loop at once, stacked along a new axis 0, or None. A value that is
    a ``tf.concat`` of such slices (the ids before and after a position: held-out round 8's
    c07) is the concat of their frames, along its axis moved past the new one."""
    if it.nested or it.running or it.join == "sum":
        return None
    found = loop_variable(it, tf)
    value = inlined(it)
    if found is None or value is None:
        return None
    var, ks = found
    parts, at = concat_parts(value, tf)
    out = []
    for part in parts:
        window = slice_window(part, var, ks, tf)
        if window is None:
            return None
        x, axis, low, high = window
        if ks not in low and ks not in high:
            return None
        high = high or f"{tf}.shape({x})[{axis}]"
        out.append(f"{HELPER}({x}, {axis}, {low}, {high})")
    if at is None:
        return out[0]
    return f"{tf}.concat([{', '.join(out)}], axis={at + 1 if at >= 0 else at})"


def concat_parts(value: ast.expr, tf: str) -> tuple[list[ast.expr], int | None]:
    """``tf.concat((a, b, ...), axis=k)`` with a constant ``k`` → ([a, b, ...], k); anything
    else → ([value], None)."""
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
            and value.func.attr == "concat" and isinstance(value.func.value, ast.Name)
            and value.func.value.id == tf and value.args
            and isinstance(value.args[0], (ast.Tuple, ast.List))):
        return [value], None
    given = {k.arg: k.value for k in value.keywords}
    axis = value.args[1] if len(value.args) > 1 else given.get("axis")
    if axis is None or set(given) - {"axis"} or len(value.args) > 2:
        return [value], None
    try:
        k = ast.literal_eval(axis)
    except ValueError:
        return [value], None
    if not isinstance(k, int) or isinstance(k, bool):
        return [value], None
    return list(value.args[0].elts), k


def frames(text: str, it: Iteration, tf: str) -> str:
    expr = frames_value(it, tf)
    if expr is None:
        raise SourceEditError("not a slice that moves with the index, stacked")
    if f"def {HELPER}(" not in text:
        # Appended after every node of the loop: their positions stay valid.
        text = text.rstrip("\n") + "\n" + HELPER_SOURCE.replace("TF.", f"{tf}.")
    how, _, at = it.join.partition(":")
    if not expr.startswith(HELPER):  # a concat of frames: stacked along axis 0 only
        if how != "stack" or at not in ("", "0"):
            raise SourceEditError("frames joined by a concat, then not stacked along axis 0")
    elif how in ("stack", "concat") and it.consumer is not None and not it.shared:
        expr = f"{expr[:-1]}, {how!r}, {at or 0})"
        it = replace(it, join="stack")
    if isinstance(it.node, (ast.ListComp, ast.GeneratorExp, ast.Call)):  # a call: tf.map_fn
        return rewrite_one(text, it, tf, [], "", expr)
    return rewrite_one(text, it, tf, [f"{it.name} = {expr}"], it.name, None)


class FramesToGather(Lever):
    name, slot, stage, traces = "frame slices→one gather", "vectorize", 20, False
    description = ("a loop stacking a slice whose bounds move with its variable (frames) "
                   "becomes one gather of every frame")
    rejections = ("frames of different lengths (raises, as the user's stack does)",)

    def applies(self, ctx: LeverContext) -> str | None:
        if any(frames_value(it, "tf") for it in found_loops(ctx)):
            return None
        return "no loop stacking a slice that moves with its index"

    def build(self, text: str, ctx: LeverContext) -> str:
        return every_loop(text, ctx, lambda t, it, tf, depth: frames(t, it, tf))


def levers(ctx: LeverContext) -> list[Lever]:
    return [FramesToGather()]
