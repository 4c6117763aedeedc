"""A loop of 2-D convolutions, one per channel, as one depthwise convolution.

    for c in range(x.shape[-1]):                         one tf.nn.depthwise_conv2d of x
        outs.append(tf.nn.conv2d(x[..., c:c + 1],    →   by the kernels stacked along its
                                 k[:, :, c:c + 1, None],  channel axis
                                 1, "SAME"))
    tf.concat(outs, -1)

What is read is the computation: each iteration convolves channel ``c`` of one NHWC tensor
(``x[..., c:c + 1]``, ``x[:, :, :, c:c + 1]``, ``x[..., c][..., None]``, ``x[..., c, None]``,
``tf.expand_dims(x[..., c], -1)``) with its own one-input filter ``[kh, kw, 1, M]`` (any
expression of ``c``), with strides, padding and dilations that do not depend on ``c``; the
value is that convolution, or its only output channel (``[..., 0]``). The loop's values,
stacked along a new axis 0, are the depthwise convolution's channels moved there (channel
``c * M + m`` of the depthwise output is output ``m`` of channel ``c``, the order a concat of
the loop's values along the last axis gives); the loop model's joins (stack, a stack or a
concat along another axis, a ``map_fn``) take them from there. The kernels are gathered by
the filter expression evaluated once per channel (small slices, not convolutions).

Where the loop does not cover every channel of ``x`` (``range(2)`` of six), or a filter has
more than one input channel, the helper raises (the candidate is rejected, never wrong).
Another data format, a filter that reads ``x``, or a body that does more with the
convolution (a bias per channel) is left alone.
"""

from __future__ import annotations

import ast

from tfperf.tune.iterations import Iteration
from tfperf.tune.lever import Lever, LeverContext
from tfperf.tune.levers.loop_model import every_loop, found_loops, rewrite_one
from tfperf.tune.levers.segments import inlined
from tfperf.tune.source import SourceEditError, uses_name

HELPER = "_tfperf_channel_convs"
HELPER_SOURCE = '''

def _tfperf_channel_convs(x, filters, strides, padding, dilations=None, joined=""):
    """Channel c of the NHWC x convolved with filters[c] ([kh, kw, 1, M]) for every c, as
    one depthwise convolution: the per-channel results stacked, [C, n, h', w', M]; where the
    loop joins them along the channels, as they come: [n, h', w', C * M] (``joined="concat"``:
    channel c * M + m is output m of channel c, the concat's order) or each channel's first
    output [n, h', w', C] (``"first"``)."""
    import tensorflow as tf

    x, filters = tf.convert_to_tensor(x), tf.convert_to_tensor(filters)
    if (x.shape.rank != 4 or filters.shape.rank != 5 or filters.shape[3] != 1
            or x.shape[-1] != filters.shape[0]):
        raise ValueError(f"not one one-input filter per channel: x {x.shape}, filters "
                         f"{filters.shape[1:]} for {filters.shape[0]} channels")
    c, kh, kw, _, m = filters.shape
    kernel = tf.reshape(tf.transpose(filters, [1, 2, 0, 3, 4]), [kh, kw, c, m])

    def four(v):  # conv2d's int, 1-, 2- or 4-list as depthwise_conv2d's 4-list
        v = list(v) if isinstance(v, (list, tuple)) else [v]
        return [1, v[0], v[0], 1] if len(v) == 1 else [1, *v, 1] if len(v) == 2 else v

    rate = None if dilations is None else four(dilations)[1:3]
    out = tf.nn.depthwise_conv2d(x, kernel, four(strides), padding, dilations=rate)
    if joined == "concat" or (joined == "first" and m == 1):
        return out
    if joined == "first":
        return tf.reshape(out, tf.concat([tf.shape(out)[:3], [c, m]], 0))[..., 0]
    out = tf.reshape(out, tf.concat([tf.shape(out)[:3], [c, m]], 0))
    return tf.transpose(out, [3, 0, 1, 2, 4])
'''
_CONV_ARGS = ("input", "filters", "strides", "padding")


def _is_conv2d(call: ast.expr) -> bool:
    return isinstance(call, ast.Call) and ast.unparse(call.func) in (
        "tf.nn.conv2d", "tensorflow.nn.conv2d", "nn.conv2d")


def _last_zero(node: ast.Subscript) -> bool:
    """``[..., 0]`` or ``[:, :, :, 0]`` (of a rank-4 value): its last axis' first entry."""
    sl = node.slice
    if not isinstance(sl, ast.Tuple) or not sl.elts \
            or ast.unparse(sl.elts[-1]) != "0":
        return False
    rest = [ast.unparse(e) for e in sl.elts[:-1]]
    return rest == ["..."] or rest == [":", ":", ":"]


def _channel_of(node: ast.expr, index: str) -> ast.expr | None:
    """``x`` where ``node`` is channel ``index`` of ``x`` kept as an axis of 1."""
    if isinstance(node, ast.Call) and ast.unparse(node.func).rsplit(".", 1)[-1] \
            == "expand_dims" and len(node.args) == 2 and not node.keywords \
            and ast.unparse(node.args[1]) in ("-1", "3"):
        inner = node.args[0]
        return _plain_channel(inner, index) if isinstance(inner, ast.Subscript) else None
    if not isinstance(node, ast.Subscript) or not isinstance(node.slice, ast.Tuple):
        return None
    elts = [ast.unparse(e) for e in node.slice.elts]
    if elts[-1] in ("None", "tf.newaxis", "tensorflow.newaxis"):
        head = elts[:-1]
        if head == ["..."] and isinstance(node.value, ast.Subscript):
            return _plain_channel(node.value, index)  # x[..., c][..., None]
        if head[:-1] in (["..."], [":", ":", ":"]) and head[-1] == index:
            return _base(node.value, index)  # x[..., c, None]
        return None
    last = node.slice.elts[-1]
    if elts[:-1] in (["..."], [":", ":", ":"]) and isinstance(last, ast.Slice) \
            and last.step is None and last.lower is not None and last.upper is not None \
            and ast.unparse(last.lower) == index \
            and ast.unparse(last.upper).replace(" ", "") in (f"{index}+1", f"1+{index}"):
        return _base(node.value, index)
    return None


def _plain_channel(node: ast.Subscript, index: str) -> ast.expr | None:
    """``x`` of ``x[..., c]`` / ``x[:, :, :, c]``."""
    if not isinstance(node.slice, ast.Tuple):
        return None
    elts = [ast.unparse(e) for e in node.slice.elts]
    if elts[:-1] in (["..."], [":", ":", ":"]) and elts[-1] == index:
        return _base(node.value, index)
    return None


def _kernel_slice(node: ast.expr, index: str, stop: str, tf: str) -> str | None:
    """Every channel's filter at once where the filter is a slice of one tensor at the
    channel (``k[:, :, c:c + 1, None]``, ``k[:, :, c, None, None]``): that slice with ``:``
    at the channel, its axis moved first and cut to the loop's count (kept as an axis of 1
    where the loop's slice kept it). None for any other filter (the kernels are then gathered
    one per channel)."""
    if not isinstance(node, ast.Subscript) or uses_name(node.value, index):
        return None
    elts = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
    at = [i for i, e in enumerate(elts) if uses_name(e, index)]
    if len(at) != 1 or any(isinstance(e, ast.Constant) and e.value is Ellipsis
                           for e in elts):
        return None
    e = elts[at[0]]
    kept = isinstance(e, ast.Slice)
    if kept:
        assert isinstance(e, ast.Slice)
        if e.step is not None or e.lower is None or e.upper is None \
                or ast.unparse(e.lower) != index \
                or ast.unparse(e.upper).replace(" ", "") not in (f"{index}+1", f"1+{index}"):
            return None
    elif not (isinstance(e, ast.Name) and e.id == index):
        return None
    others = [ast.unparse(x) for i, x in enumerate(elts) if i != at[0]]
    if any(o not in (":", "None", f"{tf}.newaxis") for o in others):
        return None
    # the channel's axis in the slice's result: one per entry before it (":" or None)
    q = at[0]
    whole = [ast.unparse(x) if i != at[0] else ":" for i, x in enumerate(elts)]
    moved = (f"{tf}.experimental.numpy.moveaxis({ast.unparse(node.value)}"
             f"[{', '.join(whole)}], {q}, 0)[:{stop}]")
    return f"{tf}.expand_dims({moved}, {q + 1})" if kept else moved


def _whole_range(over: str, tf: str) -> bool:
    """``over`` is ``tf.range(n)`` or ``range(n)`` as it is: channel c at item c. A prefix test
    also took ``tf.range(6)[::-1]`` or ``tf.range(6) % 3`` (another order, repeats), which
    the depthwise form, channels in order, does not compute."""
    try:
        node = ast.parse(over, mode="eval").body
    except SyntaxError:
        return False
    return isinstance(node, ast.Call) and ast.unparse(node.func) in (
        f"{tf}.range", "tf.range", "range") and len(node.args) == 1 and not node.keywords \
        and not isinstance(node.args[0], ast.Starred)


def _base(node: ast.expr, index: str) -> ast.expr | None:
    return None if uses_name(node, index) else node


def channel_convs(it: Iteration, tf: str) -> str | None:
    """The loop's values stacked along a new axis 0, as one depthwise convolution; None
    where the body is not one channel's convolution."""
    if it.nested or it.running or len(it.binds) > 1:
        return None
    index = it.index
    if it.binds:  # tf.map_fn over tf.range(C): its item is the channel
        name, pick, over = it.binds[0]
        if pick != f"{over}[{it.index}]" or not _whole_range(over, tf):
            return None
        index = name
    value = inlined(it)
    if value is None:
        return None
    last = ""
    if isinstance(value, ast.Subscript) and _last_zero(value):
        value, last = value.value, "[..., 0]"
    if not isinstance(value, ast.Call) or not _is_conv2d(value) \
            or any(isinstance(a, ast.Starred) for a in value.args) or len(value.args) > 4:
        return None
    named = dict(zip(_CONV_ARGS, value.args, strict=False))
    for k in value.keywords:
        if k.arg is None or k.arg in named:
            return None
        named[k.arg] = k.value
    fmt = named.pop("data_format", None)
    if fmt is not None and not (isinstance(fmt, ast.Constant) and fmt.value == "NHWC"):
        return None
    named.pop("name", None)
    if set(named) - {*_CONV_ARGS, "dilations"} or not set(_CONV_ARGS) <= set(named):
        return None
    x = _channel_of(named["input"], index)
    if x is None or uses_name(named["filters"], ast.unparse(x)):
        return None
    if any(uses_name(named[k], index) for k in ("strides", "padding", "dilations")
           if k in named):
        return None
    kernels = _kernel_slice(named["filters"], index, it.stop, tf) or \
        f"{tf}.stack([{ast.unparse(named['filters'])} for {index} in range({it.stop})])"
    rest = ", ".join(ast.unparse(named[k]) for k in ("strides", "padding"))
    dil = f", dilations={ast.unparse(named['dilations'])}" if "dilations" in named else ""
    return f"{HELPER}({ast.unparse(x)}, {kernels}, {rest}{dil}){last}"


def _fits(it: Iteration, tf: str) -> str | None:
    """The loop's values stacked, as one depthwise convolution, where its join takes them:
    a stack along any axis, or a concat of whole convolutions along their channel axis."""
    expr = channel_convs(it, tf)
    if expr is None or it.join.startswith("array:"):
        return None
    if it.join.startswith("concat:"):
        if expr.endswith("[..., 0]") or it.join.split(":", 1)[1] not in ("-1", "3"):
            return None
        return expr
    return expr if it.join == "stack" or it.join.startswith("stack:") else None


def depthwise(text: str, it: Iteration, tf: str, depth: int) -> str:
    expr = _fits(it, tf)
    if expr is None:
        raise SourceEditError("not one channel's 2-D convolution per iteration, joined along "
                              "a new axis or the channels")
    if it.join.startswith("concat:"):
        # joined along the channels: the depthwise output as it is, no transposes
        expr = expr[:-1] + ', joined="concat")'
        it = _as_stack(it)
    elif it.join in ("stack:-1", "stack:3") and expr.endswith("[..., 0]"):
        expr = expr.removesuffix("[..., 0]")[:-1] + ', joined="first")'
        it = _as_stack(it)
    if not isinstance(it.node, (ast.For, ast.While)):  # a comprehension, a map_fn
        out = rewrite_one(text, it, tf, [], "", expr)
    else:
        out = rewrite_one(text, it, tf, [f"{it.name} = {expr}"], it.name, None)
    if f"def {HELPER}(" not in out:
        out = out.rstrip("\n") + "\n" + HELPER_SOURCE
    return out


def _as_stack(it: Iteration) -> Iteration:
    """``it`` whose join hands the consumer the value as it is (the merge did the concat)."""
    from dataclasses import replace

    return replace(it, join="stack")


class ChannelConvsToDepthwise(Lever):
    name, slot, stage, traces = "per-channel conv2d→depthwise_conv2d", "vectorize", 20, False
    description = ("a loop of 2-D convolutions, one per channel of an NHWC tensor with its own "
                   "filter, becomes one tf.nn.depthwise_conv2d")
    rejections = ("raises (the loop does not cover every channel, or a filter has more than "
                  "one input channel)",)

    def applies(self, ctx: LeverContext) -> str | None:
        if any(_fits(it, "tf") for it in found_loops(ctx)):
            return None
        return "no loop of 2-D convolutions, one per channel"

    def build(self, text: str, ctx: LeverContext) -> str:
        return every_loop(text, ctx, depthwise)


def levers(ctx: LeverContext) -> list[Lever]:
    return [ChannelConvsToDepthwise()]
