"""Window sums and means, one loop iteration per window, as differences of one cumsum.

A loop (any spelling the loop model reads: ``range(n)`` or ``range(a, b, s)``, a comprehension,
values appended or written to ``out[k]``/a ``TensorArray``, a counter-driven ``while``, a running
``+=``) whose value sums or averages a slice of a tensor along one axis with bounds that move
with the loop variable, ``tf.reduce_sum(x[:, k:k + T], axis=1)``, ``tf.reduce_mean(tf.slice(x,
[0, k, 0], [B, T, C]), axis=1, keepdims=True)``, ``tf.reduce_mean(x[max(0, i - w):min(i + w,
n)])`` (clipped at the edges), ``tf.reduce_sum(x[:k + 1])`` (a prefix), computes every window at
once from one prefix sum along that axis: ``c[high] - c[low]`` with ``c = [0, cumsum(x)]``, the
bounds of every iteration computed at once (``max``/``min`` as ``tf.maximum``/``tf.minimum``)
and read as a slice reads them (negative from the end, clipped to the axis). The windows come out
stacked along a new axis 0, as the loop's values would, so every join the loop model knows
(stack along any axis, concat along any axis, a sum, a reduction of the list) takes them as it
takes the other loop levers' values.

A prefix sum's difference rounds differently from the window's own sum (more so in float16 or
over long axes of large values): the equivalence check judges it on the inputs it runs.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, replace

from tfperf.tune.iterations import Iteration
from tfperf.tune.lever import Lever, LeverContext
from tfperf.tune.levers.loop_model import every_loop, found_loops, rewrite_one
from tfperf.tune.levers.segments import inlined
from tfperf.tune.source import SourceEditError, uses_name

HELPER = "_tfperf_window_sums"
#: The windows ``[lows[k], highs[k])`` of ``x`` along ``axis`` (bounds read as a slice reads
#: them: negative ones from the end, clipped to the axis), stacked along a new axis 0
#: (``TF``: the module's alias).
HELPER_SOURCE = '''

def _tfperf_window_sums(x, axis, sliced, lows, highs, keepdims, mean, join="", at=0,
                        band=False):
    """tfperf tune: the sums (means) of x[lows[k]:highs[k]] along `axis` for every k, as
    differences of one cumsum (`sliced`: the axis the slice moves along, the same axis once
    the rank is known), stacked along a new axis 0, or as `join` ("stack", "concat") of
    them along axis `at` would give them (in place where that is the window axis); `band`:
    one product with a 0/1 band matrix instead (what XLA on a CPU compiles well)."""
    x = TF.convert_to_tensor(x)
    rank = x.shape.rank
    axis %= rank
    if sliced % rank != axis:
        raise ValueError("the window moves along an axis it is not reduced over")
    n = TF.cast(TF.shape(x)[axis], TF.int64)
    lows, highs = TF.cast(lows, TF.int64), TF.cast(highs, TF.int64)
    lows, highs = lows + TF.zeros_like(highs), highs + TF.zeros_like(lows)
    lows = TF.clip_by_value(TF.where(lows < 0, lows + n, lows), 0, n)
    highs = TF.maximum(TF.clip_by_value(TF.where(highs < 0, highs + n, highs), 0, n), lows)
    if band:
        if (x.shape[axis] is not None and lows.shape[0] is not None
                and x.shape[axis] * lows.shape[0] > 1 << 26):
            raise ValueError("a band matrix of more than 2**26 entries")
        rows = TF.range(n)[:, None]
        inside = (rows >= lows[None, :]) & (rows < highs[None, :])
        sums = TF.tensordot(x, TF.cast(inside, x.dtype), [[axis], [0]])
        sums = TF.experimental.numpy.moveaxis(sums, -1, axis)
    else:
        c = TF.cumsum(x, axis=axis)
        c = TF.concat([TF.zeros_like(TF.gather(c, [0], axis=axis)), c], axis)
        sums = TF.gather(c, highs, axis=axis) - TF.gather(c, lows, axis=axis)
    if mean:
        shape = [1] * rank
        shape[axis] = -1
        sums = sums / TF.reshape(TF.cast(highs - lows, sums.dtype), shape)
    stacked_in_place = join == "stack" and not keepdims or join == "concat" and keepdims
    if stacked_in_place and at % rank == axis:
        return sums  # the windows already lie where the join puts them
    stacked = TF.transpose(sums, [axis] + [d for d in range(rank) if d != axis])
    stacked = TF.expand_dims(stacked, axis + 1) if keepdims else stacked
    if join == "stack":
        return TF.experimental.numpy.moveaxis(stacked, 0, at)
    if join == "concat":
        k = at % (stacked.shape.rank - 1)
        moved = TF.experimental.numpy.moveaxis(stacked, 0, k)
        shape = TF.shape(moved)
        return TF.reshape(moved, TF.concat([shape[:k], [-1], shape[k + 2:]], 0))
    return stacked
'''
REDUCTIONS = {"reduce_sum": False, "reduce_mean": True}


@dataclass
class Window:
    """A window reduction of one iteration: ``x``'s slice ``[low, high)`` along ``axis`` (a
    negative axis counts from the end), the bounds expressions of the loop variable (source
    text with every value of the variable at once: ``ks``), ``high`` empty for the axis end."""
    x: str
    axis: str  # the reduced axis: an int, or a name the function binds
    sliced: int  # the axis the slice moves along (the reduced one, once the rank is known)
    low: str
    high: str
    keepdims: bool
    mean: bool


def _every(node: ast.expr, var: str, ks: str, tf: str) -> str | None:
    """``node`` (an index expression) for every value of ``var`` at once (``ks``: a 1-D
    tensor of them): arithmetic, ``max``/``min``; None for anything else that reads ``var``."""
    if not uses_name(node, var):
        return ast.unparse(node)
    if isinstance(node, ast.Name):
        return f"({ks})"
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _every(node.operand, var, ks, tf)
        return None if inner is None else f"-{inner}"
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult,
                                                            ast.FloorDiv)):
        left, right = _every(node.left, var, ks, tf), _every(node.right, var, ks, tf)
        if left is None or right is None:
            return None
        op = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "//"}[type(node.op)]
        return f"({left} {op} {right})"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
            and node.func.id in ("max", "min") and len(node.args) == 2 and not node.keywords:
        parts = [_every(a, var, ks, tf) for a in node.args]
        if None in parts:
            return None
        fn = "maximum" if node.func.id == "max" else "minimum"
        return f"{tf}.{fn}({tf}.cast({parts[0]}, {tf}.int64), {tf}.cast({parts[1]}, {tf}.int64))"
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


def _subscript_window(node: ast.Subscript, var: str, ks: str, tf: str,
                      ) -> tuple[str, int, str, str] | None:
    """``x[..., lo(k):hi(k), ...]``: (x, axis, low, high); the other parts whole axes."""
    if uses_name(node.value, var):
        return None
    parts = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
    found = [p for p, part in enumerate(parts) if isinstance(part, ast.Slice)
             and uses_name(part, var)]
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
    low = "0" if window.lower is None else _every(window.lower, var, ks, tf)
    high = "" if window.upper is None else _every(window.upper, var, ks, tf)
    if low is None or high is None:
        return None
    axis = pos - len(parts) if ellipses and ellipses[0] < pos else pos
    return ast.unparse(node.value), axis, low, high


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


def _slice_window(node: ast.Call, var: str, ks: str, tf: str,
                  ) -> tuple[str, int, str, str, int] | None:
    """``tf.slice(x, [0, k, 0], [B, T, C])``: (x, axis, low, high, rank)."""
    if ast.unparse(node.func).rsplit(".", 1)[-1] != "slice" or len(node.args) != 3 \
            or node.keywords:
        return None
    x, begin, size = node.args
    if not isinstance(begin, (ast.List, ast.Tuple)) or not isinstance(size, (ast.List, ast.Tuple)) \
            or len(begin.elts) != len(size.elts) or uses_name(x, var) or uses_name(size, var):
        return None
    rank = len(begin.elts)
    found = [p for p, b in enumerate(begin.elts) if uses_name(b, var)]
    if len(found) != 1:
        return None
    pos = found[0]
    low = _every(begin.elts[pos], var, ks, tf)
    if low is None or _int(size.elts[pos]) == -1:
        return None
    for p, (b, sz) in enumerate(zip(begin.elts, size.elts, strict=True)):
        if p != pos and not (_int(b) == 0 and _size_is_whole(sz, x, p, rank)):
            return None
    return ast.unparse(x), pos, low, f"{low} + ({ast.unparse(size.elts[pos])})", rank


def window_of(value: ast.expr, var: str, ks: str, tf: str) -> Window | None:
    """The window reduction ``value`` is (``var``: the loop variable), or None."""
    if not isinstance(value, ast.Call) or not value.args:
        return None
    mean = REDUCTIONS.get(ast.unparse(value.func).rsplit(".", 1)[-1])
    if mean is None or len(value.args) > 3 \
            or any(k.arg not in ("axis", "keepdims") for k in value.keywords):
        return None
    named = {k.arg: k.value for k in value.keywords}
    axis_node = named.get("axis", value.args[1] if len(value.args) > 1 else None)
    axis = _int(axis_node)
    # A name (``axis=d_axis``) is the same axis or not once the function runs.
    axis_text = str(axis) if axis is not None else (
        axis_node.id if isinstance(axis_node, ast.Name) and axis_node.id != var else "")
    keep = named.get("keepdims", value.args[2] if len(value.args) > 2 else None)
    if not axis_text or not (keep is None or (isinstance(keep, ast.Constant)
                                              and isinstance(keep.value, bool))):
        return None
    keepdims = bool(keep.value) if isinstance(keep, ast.Constant) else False
    operand = value.args[0]
    rank: int | None = None
    if isinstance(operand, ast.Subscript):
        sub = _subscript_window(operand, var, ks, tf)
        if sub is None:
            return None
        x, at, low, high = sub
    elif isinstance(operand, ast.Call):
        sliced = _slice_window(operand, var, ks, tf)
        if sliced is None:
            return None
        x, at, low, high, rank = sliced
    else:
        return None
    if rank is not None:
        at = at % rank
        if axis is not None:
            axis = axis % rank
            axis_text = str(axis)
    if axis is not None and axis != at and (axis < 0) == (at < 0):
        return None  # (signs that differ: the same axis or not, known once the rank is)
    return Window(x, axis_text, at, low, high, keepdims, mean)


def loop_variable(it: Iteration, tf: str) -> tuple[str, str] | None:
    """The loop's variable and every value of it at once (a 1-D tensor's source), or None."""
    if not it.binds:  # for k in range(n): the index is the variable
        return it.index, f"{tf}.range({it.stop})"
    if len(it.binds) == 1 and it.binds[0][2].startswith("tf.range("):
        return it.binds[0][0], it.binds[0][2].replace("tf.", f"{tf}.", 1)
    return None


def slice_window(value: ast.expr, var: str, ks: str, tf: str,
                 ) -> tuple[str, int, str, str] | None:
    """``value`` as a slice whose bounds move with ``var`` (``x[..., lo:hi]`` or
    ``tf.slice``): (x, axis, low, high: "" for the axis end), or None."""
    if isinstance(value, ast.Subscript):
        return _subscript_window(value, var, ks, tf)
    if isinstance(value, ast.Call):
        sliced = _slice_window(value, var, ks, tf)
        if sliced is not None:
            x, at, low, high, rank = sliced
            return x, at % rank, low, high
    return None


def window_value(it: Iteration, tf: str) -> str | None:
    """Every window of the loop at once, stacked along a new axis 0, or None."""
    if it.nested or it.running:
        return None
    found = loop_variable(it, tf)
    if found is None:
        return None
    var, ks = found
    value = inlined(it)
    if value is None:
        return None
    w = window_of(value, var, ks, tf)
    if w is None or (ks not in w.low and ks not in w.high):
        return None
    high = w.high or f"{tf}.shape({w.x})[{w.sliced}]"
    return (f"{HELPER}({w.x}, {w.axis}, {w.sliced}, {w.low}, {high}, {w.keepdims}, "
            f"{w.mean})")


def windows(text: str, it: Iteration, tf: str, band: bool = False) -> str:
    expr = window_value(it, tf)
    if expr is None:
        raise SourceEditError("not a sum or mean of a window that moves with the index")
    if f"def {HELPER}(" not in text:
        # Appended after every node of the loop: their positions stay valid.
        text = text.rstrip("\n") + "\n" + HELPER_SOURCE.replace("TF.", f"{tf}.")
    how, _, at = it.join.partition(":")
    if how in ("stack", "concat") and it.consumer is not None and not it.shared:
        # The helper joins them itself (in place, without moving axes, where it can).
        expr = f"{expr[:-1]}, {how!r}, {at or 0})"
        it = replace(it, join="stack")
    if band:
        expr = f"{expr[:-1]}, band=True)"
    if isinstance(it.node, (ast.ListComp, ast.GeneratorExp)):
        return rewrite_one(text, it, tf, [], "", expr)
    if it.join == "sum":
        return rewrite_one(text, it, tf, [f"{it.name} = {it.name} + {tf}.reduce_sum({expr}, "
                                          "axis=0)"], "", None)
    return rewrite_one(text, it, tf, [f"{it.name} = {expr}"], it.name, None)


class WindowsToCumsum(Lever):
    slot, stage, traces = "vectorize", 20, False

    def __init__(self, band: bool = False) -> None:
        self.band = band
        if band:
            self.name = "window sums→band matmul"
            self.description = ("a loop summing or averaging a window whose bounds move with"
                                " its variable becomes one product with a 0/1 band matrix")
            self.rejections = ("more than 2**26 band entries (raises)",)
        else:
            self.name = "window sums→cumsum difference"
            self.description = ("a loop summing or averaging a window whose bounds move with"
                                " its variable becomes one cumsum and a difference")
            self.rejections = ("disagrees (the prefix sum's rounding, over a long axis of "
                               "large values)",)

    def applies(self, ctx: LeverContext) -> str | None:
        if any(window_value(it, "tf") for it in found_loops(ctx)):
            return None
        return "no loop summing or averaging a window that starts at its index"

    def build(self, text: str, ctx: LeverContext) -> str:
        return every_loop(text, ctx, lambda t, it, tf, depth: windows(t, it, tf, self.band))


def levers(ctx: LeverContext) -> list[Lever]:
    # Both: a cumsum is linear in the axis but XLA on a CPU lowers it as a reduce-window;
    # the band product costs axis × windows but compiles to one matmul.
    return [WindowsToCumsum(), WindowsToCumsum(band=True)]
