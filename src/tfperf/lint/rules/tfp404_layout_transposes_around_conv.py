"""TFP404: channels-first ↔ channels-last transposes around a conv/pool op that has data_format."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from tfperf.core.findings import Finding
from tfperf.lint.analysis.assignments import assigned_value, loads_bound_by
from tfperf.lint.analysis.syntax import keyword
from tfperf.lint.analysis.transposes import inverse, transpose_of
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context

# Ops that take a data_format argument (and their input argument's keyword name).
LAYOUT_OPS = frozenset({
    *(f"tensorflow.nn.{n}" for n in (
        "conv1d", "conv2d", "conv3d", "convolution", "conv2d_transpose", "conv3d_transpose",
        "conv1d_transpose", "conv_transpose", "depthwise_conv2d", "separable_conv2d",
        "max_pool", "avg_pool", "max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d",
        "avg_pool2d", "avg_pool3d", "pool", "bias_add", "fused_batch_norm")),
    *(f"keras.ops.{n}" for n in ("conv", "conv_transpose", "depthwise_conv", "separable_conv",
                                 "max_pool", "average_pool")),
})
_INPUT_KEYWORDS = ("input", "inputs", "value", "x")
# Element-wise steps a result may pass through on its way to the transpose back.
PASS_THROUGH = frozenset(f"tensorflow.nn.{n}" for n in (
    "relu", "relu6", "elu", "selu", "gelu", "silu", "swish", "sigmoid", "tanh", "leaky_relu",
    "bias_add")) | frozenset({"tensorflow.sigmoid", "tensorflow.tanh", "tensorflow.math.sigmoid",
                              "tensorflow.math.tanh", "keras.ops.relu", "keras.activations.relu"})
TO_LAST = {(0, 2, 1): "NCW→NWC", (0, 2, 3, 1): "NCHW→NHWC", (0, 2, 3, 4, 1): "NCDHW→NDHWC"}
TO_FIRST = {(0, 2, 1): "NWC→NCW", (0, 3, 1, 2): "NHWC→NCHW", (0, 4, 1, 2, 3): "NDHWC→NCDHW"}
_LAST_FORMATS = {None, "NWC", "NHWC", "NDHWC", "channels_last"}
_FIRST_FORMATS = {"NCW", "NCHW", "NCDHW", "channels_first"}


class LayoutTransposesAroundConv(Rule):
    code = "TFP404"
    name = "layout-transposes-around-conv"
    message = "layout transposes around a conv/pool op: data_format does this without copies"
    hint = ("keep one layout end to end; on GPU pass data_format='NCHW' instead of "
            "transposing (TF's CPU convolutions are NHWC-only: there, keep the data NHWC)")
    claims = ("S10",)
    group = "preview"  # 3 findings on 153 repositories (3/3 true or minor): not measurable yet
    node_types = (ast.Call,)
    callee_qualnames = LAYOUT_OPS
    docs = """\
## What it does
Finds a convolution or pooling op (`tf.nn.conv2d`, `tf.nn.max_pool2d`, `tf.nn.bias_add`,
`keras.ops.conv`...) whose input is transposed from channels-first to channels-last
(`[0, 2, 3, 1]`) and whose output is transposed straight back (`[0, 3, 1, 2]`), possibly
through an activation on the way; or the same dance in the other direction.

## Why is this bad?
Each transpose copies the whole activation tensor (claim S10: `[8, 128, 128, 32]` with
`[0, 3, 1, 2]` moves every element). These ops take a `data_format` argument so that the
layout change is folded into the kernel; the article's advice is to fold layout changes into
ops and keep one layout throughout. Note that TensorFlow's CPU convolution kernels only
support NHWC: on a CPU, the cure is to keep the data NHWC from the start, not NCHW.

## Example
```python
y = tf.transpose(x_nchw, [0, 2, 3, 1])
y = tf.nn.relu(tf.nn.conv2d(y, w, 1, "SAME"))
out = tf.transpose(y, [0, 3, 1, 2])
```

## Use instead
```python
out = tf.nn.relu(tf.nn.conv2d(x_nchw, w, 1, "SAME", data_format="NCHW"))   # GPU
```
or keep `x` NHWC throughout and drop both transposes.

## Fix safety
No automatic fix: whether `data_format="NCHW"` is available depends on the device (not on
CPU for convolutions), and dropping the transposes changes the layout of everything around.
A single transpose at the boundary (data that arrives NCHW and stays NHWC after) is not
reported.

## Known limitations
In `preview` (not on by default): on the 153 repositories judged so far it fired 3 times (1
true, 2 minor: the CPU branch of a StyleGAN2 port, where the transposes added 6-11 % here);
a default rule needs at least 5 judged findings at 80 % or better (docs/lint.md, "Rules that
rarely fire").
"""
    valid = (
        # Data arrives NCHW, is converted once and stays NHWC.
        Valid("""
            import tensorflow as tf
            def f(x_nchw, w):
                x = tf.transpose(x_nchw, [0, 2, 3, 1])
                y = tf.nn.conv2d(x, w, 1, 'SAME')
                return tf.nn.max_pool2d(y, 2, 2, 'VALID')
        """),
        # The op does the layout itself.
        Valid("""
            import tensorflow as tf
            def f(x, w):
                return tf.nn.conv2d(x, w, 1, 'SAME', data_format='NCHW')
        """),
        # Transposes around a matmul: not a data_format op.
        Valid("""
            import tensorflow as tf
            def f(x, w):
                y = tf.matmul(tf.transpose(x, [0, 2, 1]), w)
                return tf.transpose(y, [0, 2, 1])
        """),
        # A user's own conv2d.
        Valid("""
            import tensorflow as tf
            def conv2d(x, w):
                return x * w
            def f(x, w):
                return tf.transpose(conv2d(tf.transpose(x, [0, 2, 3, 1]), w), [0, 3, 1, 2])
        """),
        # Transposed on the way in, but the output goes on in NHWC.
        Valid("""
            import tensorflow as tf
            def f(x, w):
                y = tf.nn.conv2d(tf.transpose(x, [0, 2, 3, 1]), w, 1, 'SAME')
                return tf.reduce_mean(y, axis=[1, 2])
        """),
    )
    invalid = (
        Invalid("""
            import tensorflow as tf
            def f(x_nchw, w):
                y = tf.transpose(x_nchw, [0, 2, 3, 1])
                y = tf.nn.relu(tf.nn.conv2d(y, w, 1, 'SAME'))
                return tf.transpose(y, [0, 3, 1, 2])
        """, count=1, lines=(4,)),
        Invalid("""
            import tensorflow as tensorflow_alias
            def f(x):
                return tensorflow_alias.transpose(tensorflow_alias.nn.max_pool2d(
                    tensorflow_alias.transpose(x, perm=[0, 2, 3, 1]), 2, 2, 'VALID'),
                    perm=[0, 3, 1, 2])
        """, count=1, lines=(3,)),
        # The other direction: NHWC data turned NCHW for the op, and back.
        Invalid("""
            from tensorflow import transpose
            from tensorflow.nn import conv2d
            def f(x, w):
                t = transpose(x, [0, 3, 1, 2])
                out = conv2d(t, w, 1, 'SAME', data_format='NCHW')
                return transpose(out, [0, 2, 3, 1])
        """, count=1, lines=(5,)),
        # 1-D.
        Invalid("""
            import tensorflow as tf
            def f(x, w):
                y = tf.nn.conv1d(tf.transpose(x, [0, 2, 1]), w, 1, 'SAME')
                return tf.transpose(y, [0, 2, 1])
        """, count=1, lines=(3,)),
    )

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Finding]:
        if ctx.call_qualname(node) not in LAYOUT_OPS:
            return
        call: ast.Call = node  # type: ignore[assignment]
        inp = call.args[0] if call.args else next(
            (k.value for k in call.keywords if k.arg in _INPUT_KEYWORDS), None)
        if inp is None:
            return
        src = transpose_of(ctx, inp) or transpose_of(ctx, assigned_value(ctx, inp))
        if src is None:
            return
        fmt_node = keyword(call, "data_format")
        fmt = fmt_node.value if type(fmt_node) is ast.Constant else (
            None if fmt_node is None else "?")
        if src.perm in TO_LAST and fmt in _LAST_FORMATS:
            what = TO_LAST[src.perm]
        elif src.perm in TO_FIRST and fmt in _FIRST_FORMATS:
            what = TO_FIRST[src.perm]
        else:
            return
        if self._transposed_back(ctx, call, inverse(src.perm), 0):
            op = ctx.source_of(call.func)
            yield self.finding(
                ctx, call, f"{what} transposes around {op} and back: data_format does this "
                           "without copies")

    def _transposed_back(self, ctx: Context, node: ast.AST, perm: tuple[int, ...],
                         depth: int) -> bool:
        if depth > 4:
            return False
        parent = ctx.parent(node)
        t = transpose_of(ctx, parent)
        if t is not None and t.operand is node:
            return t.perm == perm
        if type(parent) is ast.Assign and len(parent.targets) == 1 \
                and type(parent.targets[0]) is ast.Name and parent.value is node:
            loads = loads_bound_by(ctx, ctx.scope_of(parent), parent.targets[0].id, node)
            return any(self._transposed_back(ctx, n, perm, depth + 1) for n in loads)
        if type(parent) is ast.Call and parent.args and parent.args[0] is node \
                and ctx.qualname(parent.func) in PASS_THROUGH:
            return self._transposed_back(ctx, parent, perm, depth + 1)
        if type(parent) is ast.BinOp and type(parent.op) in (ast.Add, ast.Mult):
            return self._transposed_back(ctx, parent, perm, depth + 1)
        return False
