"""Sliding-window sums and means, one loop iteration per window start, as a cumsum difference.

A loop (any spelling the loop model reads over ``range(n)``: a comprehension, values appended
or written to ``out[k]``/a ``TensorArray``, a counter-driven ``while``, a running ``+=``) whose
value sums or averages one window of a tensor that starts at the index,
``tf.reduce_sum(x[:, k:k + T], axis=1)`` or ``tf.reduce_mean(tf.slice(x, [0, k, 0], [B, T, C]),
axis=1, keepdims=True)``, computes every window at once from one prefix sum along that axis:
``c[k + T] - c[k]`` with ``c = [0, cumsum(x)]``. The windows come out stacked along a new axis 0,
as the loop's values would, so every join the loop model knows (stack, concat along any axis,
a sum, a reduction of the list) takes them as it takes the other loop levers' values.

A prefix sum's difference rounds differently from the window's own sum (more so in float16 or
over long axes of large values): the equivalence check judges it on the inputs it runs.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from tfperf.tune.iterations import Iteration
from tfperf.tune.lever import Lever, LeverContext
from tfperf.tune.levers.loop_model import every_loop, found_loops, rewrite_one
from tfperf.tune.levers.segments import inlined
from tfperf.tune.source import SourceEditError

HELPER = "_tfperf_window_sums"
#: The windows of ``x`` along ``axis`` starting at ``start .. start + count - 1``, stacked
#: along a new axis 0 (``TF``: the module's alias).
HELPER_SOURCE = '''

def _tfperf_window_sums(x, width, axis, start, count, keepdims, mean):
    """tfperf tune: the sums (means) of x's windows of `width` along `axis` starting at
    start, start + 1, ... (count of them), stacked along a new axis 0, from one cumsum."""
    x = TF.convert_to_tensor(x)
    rank = x.shape.rank
    axis %= rank
    c = TF.cumsum(x, axis=axis)
    c = TF.concat([TF.zeros_like(TF.gather(c, [0], axis=axis)), c], axis)
    starts = TF.range(count) + start
    sums = TF.gather(c, starts + width, axis=axis) - TF.gather(c, starts, axis=axis)
    if mean:
        sums = sums / TF.cast(width, sums.dtype)
    stacked = TF.transpose(sums, [axis] + [d for d in range(rank) if d != axis])
    return TF.expand_dims(stacked, axis + 1) if keepdims else stacked
'''
REDUCTIONS = {"reduce_sum": False, "reduce_mean": True}


@dataclass
class Window:
    """A window reduction of one iteration: ``x``'s window of ``width`` along ``axis`` (a
    negative axis counts from the end), starting at the index plus ``offset`` (source text)."""
    x: str
    axis: int
    width: str
    offset: str
    keepdims: bool
    mean: bool
    rank: int | None  # known from a tf.slice's begin list


def _uses(node: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node))


def _offset(node: ast.expr | None, index: str) -> str | None:
    """``c`` of ``index + c`` / ``c + index`` / ``index - c`` / ``index`` (``"0"``), or None."""
    if isinstance(node, ast.Name) and node.id == index:
        return "0"
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        left, right = node.left, node.right
        if isinstance(left, ast.Name) and left.id == index and not _uses(right, index):
            other = ast.unparse(right)
            return other if isinstance(node.op, ast.Add) else f"-({other})"
        if isinstance(node.op, ast.Add) and isinstance(right, ast.Name) and right.id == index \
                and not _uses(left, index):
            return ast.unparse(left)
    return None


def _int(node: ast.expr | None) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _int(node.operand)
        return None if inner is None else -inner
    return None


def _full(part: ast.expr) -> bool:
    return isinstance(part, ast.Slice) and part.lower is None and part.upper is None \
        and part.step is None


def _subscript_window(node: ast.Subscript, index: str) -> tuple[str, int, str, str] | None:
    """``x[..., k + a:k + b, ...]``: (x, axis, width, offset); the other parts whole axes."""
    if _uses(node.value, index):
        return None
    parts = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
    found = [p for p, part in enumerate(parts) if isinstance(part, ast.Slice)
             and _uses(part, index)]
    if len(found) != 1:
        return None
    pos = found[0]
    window = parts[pos]
    assert isinstance(window, ast.Slice)
    ellipses = [p for p, part in enumerate(parts) if isinstance(part, ast.Constant)
                and part.value is Ellipsis]
    others = [part for p, part in enumerate(parts) if p != pos and p not in ellipses]
    if window.step is not None or len(ellipses) > 1 or not all(_full(o) for o in others):
        return None
    low, high = _offset(window.lower, index), _offset(window.upper, index)
    if low is None or high is None:
        return None
    axis = pos - len(parts) if ellipses and ellipses[0] < pos else pos
    width = high if low == "0" else f"{high} - {low}"
    return ast.unparse(node.value), axis, width, low


def _size_is_whole(size: ast.expr, x: ast.expr, pos: int, rank: int) -> bool:
    """``-1``, ``tf.shape(x)[p]`` or ``x.shape[p]`` for the axis ``pos`` of ``x``."""
    if _int(size) == -1:
        return True
    if not isinstance(size, ast.Subscript) or _int(size.slice) is None:
        return False
    at = _int(size.slice)
    assert at is not None
    of = size.value
    shape_of = (isinstance(of, ast.Call) and ast.unparse(of.func).rsplit(".", 1)[-1] == "shape"
                and len(of.args) == 1 and ast.dump(of.args[0]) == ast.dump(x)) or (
        isinstance(of, ast.Attribute) and of.attr == "shape" and ast.dump(of.value) == ast.dump(x))
    return shape_of and at % rank == pos


def _slice_window(node: ast.Call, index: str) -> tuple[str, int, str, str, int] | None:
    """``tf.slice(x, [0, k, 0], [B, T, C])``: (x, axis, width, offset, rank)."""
    if ast.unparse(node.func).rsplit(".", 1)[-1] != "slice" or len(node.args) != 3 \
            or node.keywords:
        return None
    x, begin, size = node.args
    if not isinstance(begin, (ast.List, ast.Tuple)) or not isinstance(size, (ast.List, ast.Tuple)) \
            or len(begin.elts) != len(size.elts) or _uses(x, index) or _uses(size, index):
        return None
    rank = len(begin.elts)
    found = [p for p, b in enumerate(begin.elts) if _uses(b, index)]
    if len(found) != 1:
        return None
    pos = found[0]
    offset = _offset(begin.elts[pos], index)
    if offset is None:
        return None
    for p, (b, s) in enumerate(zip(begin.elts, size.elts)):
        if p != pos and not (_int(b) == 0 and _size_is_whole(s, x, p, rank)):
            return None
    return ast.unparse(x), pos, ast.unparse(size.elts[pos]), offset, rank


def window_of(value: ast.expr, index: str) -> Window | None:
    """The window reduction ``value`` is, or None."""
    if not isinstance(value, ast.Call) or not value.args:
        return None
    mean = REDUCTIONS.get(ast.unparse(value.func).rsplit(".", 1)[-1])
    if mean is None or len(value.args) > 3 \
            or any(k.arg not in ("axis", "keepdims") for k in value.keywords):
        return None
    named = {k.arg: k.value for k in value.keywords}
    axis = _int(named.get("axis", value.args[1] if len(value.args) > 1 else None))
    keep = named.get("keepdims", value.args[2] if len(value.args) > 2 else None)
    if axis is None or not (keep is None or (isinstance(keep, ast.Constant)
                                              and isinstance(keep.value, bool))):
        return None
    keepdims = bool(keep.value) if isinstance(keep, ast.Constant) else False
    operand = value.args[0]
    rank: int | None = None
    if isinstance(operand, ast.Subscript):
        sub = _subscript_window(operand, index)
        if sub is None:
            return None
        x, at, width, offset = sub
    elif isinstance(operand, ast.Call):
        sliced = _slice_window(operand, index)
        if sliced is None:
            return None
        x, at, width, offset, rank = sliced
    else:
        return None
    if rank is not None:
        axis, at = axis % rank, at % rank
    if axis != at:  # (signs that differ with the rank unknown: not known to be the same)
        return None
    return Window(x, at, width, offset, keepdims, mean, rank)


def window_value(it: Iteration, tf: str) -> str | None:
    """Every window of the loop at once, stacked along a new axis 0, or None."""
    if it.binds or it.nested or it.running:
        return None
    value = inlined(it)
    if value is None:
        return None
    w = window_of(value, it.index)
    if w is None or _uses(ast.parse(w.x + "\n" + w.width, mode="exec"), it.index):
        return None
    return (f"{HELPER}({w.x}, {w.width}, {w.axis}, {w.offset}, {it.stop}, {w.keepdims}, "
            f"{w.mean})")


def windows(text: str, it: Iteration, tf: str, depth: int) -> str:
    expr = window_value(it, tf)
    if expr is None:
        raise SourceEditError("not a sum or mean of a window that starts at the index")
    if f"def {HELPER}(" not in text:
        # Appended after every node of the loop: their positions stay valid.
        text = text.rstrip("\n") + "\n" + HELPER_SOURCE.replace("TF.", f"{tf}.")
    if isinstance(it.node, (ast.ListComp, ast.GeneratorExp)):
        return rewrite_one(text, it, tf, [], "", expr)
    if it.join == "sum":
        return rewrite_one(text, it, tf, [f"{it.name} = {it.name} + {tf}.reduce_sum({expr}, "
                                          "axis=0)"], "", None)
    return rewrite_one(text, it, tf, [f"{it.name} = {expr}"], it.name, None)


class WindowsToCumsum(Lever):
    name, slot, stage, traces = "window sums→cumsum difference", "vectorize", 20, False
    description = ("a loop over window starts summing or averaging the window that starts at"
                   " the index (x[:, k:k + T], tf.slice) becomes one cumsum and a difference")
    rejections = ("disagrees (the prefix sum's rounding, over a long axis of large values)",)

    def applies(self, ctx: LeverContext) -> str | None:
        if any(window_value(it, "tf") for it in found_loops(ctx)):
            return None
        return "no loop summing or averaging a window that starts at its index"

    def build(self, text: str, ctx: LeverContext) -> str:
        return every_loop(text, ctx, windows)


def levers(ctx: LeverContext) -> list[Lever]:
    return [WindowsToCumsum()]
