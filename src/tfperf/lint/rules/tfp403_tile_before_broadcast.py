"""TFP403: tf.tile to the shape of the other operand of an element-wise op that broadcasts."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from tfperf.core.findings import Finding
from tfperf.lint.analysis.assignments import assigned_value, loads_bound_by
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context

TILE_CALLS = frozenset({"tensorflow.tile", "tensorflow.compat.v1.tile", "keras.ops.tile"})
# Binary element-wise ops that broadcast their operands.
BROADCASTING_OPS = frozenset(
    f"tensorflow.{p}{n}" for p in ("", "math.") for n in (
        "add", "subtract", "multiply", "divide", "truediv", "maximum", "minimum", "pow",
        "squared_difference", "floordiv", "equal", "not_equal", "less", "greater",
        "less_equal", "greater_equal", "logical_and", "logical_or")
) | frozenset(f"keras.ops.{n}" for n in ("add", "subtract", "multiply", "divide", "maximum",
                                         "minimum", "power"))
_ARITH = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow, ast.FloorDiv, ast.Mod)


def _shape_sources(ctx: Context, expr: ast.AST) -> set[str]:
    """Source texts of the tensors whose shape ``expr`` reads (``x.shape``, ``tf.shape(x)``,
    ``len(x)``, ``x.get_shape()``)."""
    out = set()
    for n in ast.walk(expr):
        if type(n) is ast.Attribute and n.attr == "shape":
            out.add(ctx.source_of(n.value))
        elif type(n) is ast.Call:
            f = n.func
            if type(f) is ast.Attribute and f.attr == "get_shape":
                out.add(ctx.source_of(f.value))
            elif n.args and (ctx.qualname(f) in ("tensorflow.shape", "keras.ops.shape") or (
                    type(f) is ast.Name and f.id == "len" and ctx.binding(f) is None)):
                out.add(ctx.source_of(n.args[0]))
    return out


class TileBeforeBroadcast(Rule):
    code = "TFP403"
    name = "tile-before-broadcast"
    message = ("tf.tile only to match the other operand of a broadcasting op: the tiled copy "
               "is not needed")
    hint = "drop the tile and let the op broadcast (then profile: S11)"
    claims = ("S11",)
    group = "perf"
    node_types = (ast.Call,)
    callee_qualnames = TILE_CALLS
    docs = """\
## What it does
Finds `tf.tile(v, multiples)` whose result goes only into a broadcasting element-wise op
(`+`, `*`, `tf.add`, `tf.maximum`...) whose other operand is the very tensor the multiples
were computed from (`tf.shape(x)[0]`, `x.shape[0]`, `len(x)`): the tile only repeats `v` to
`x`'s shape, which broadcasting does by itself.

## Why is this bad?
`tf.tile` materialises the repeated tensor: a full-size buffer written once and read once.
Broadcasting reads `v` in place and usually costs nothing extra (claim S11). The article also
reports the opposite case, a `[512]` vector broadcast over `[100000, 512]` that ran faster
pre-expanded inside a compiled function: so drop the tile, then measure both with
`tfperf bench` if the op is hot.

## Example
```python
w_full = tf.tile(w[tf.newaxis, :], [tf.shape(x)[0], 1])
y = x * w_full
```

## Use instead
```python
y = x * w[tf.newaxis, :]     # or simply x * w
```

## Fix safety
No automatic fix: the result is the same only when broadcasting yields `x`'s shape, which
holds when the multiples were computed from `x` but cannot be proven from the source alone
(the other dimensions of `multiples` may still enlarge the result).

## Known limitations
Tiles whose result is
used elsewhere, or whose multiples do not come from the other operand's shape (the tile then
decides the output shape), are not reported.
"""
    valid = (
        # The tile decides the output shape (the other operand is a scalar).
        Valid("""
            import tensorflow as tf
            def f(v, n):
                return tf.tile(v[None, :], [n, 1]) * 2.0
        """),
        # The tiled tensor is also used on its own.
        Valid("""
            import tensorflow as tf
            def f(x, w):
                t = tf.tile(w[None, :], [tf.shape(x)[0], 1])
                tf.print(t)
                return x * t
        """),
        # Already broadcasting.
        Valid("""
            import tensorflow as tf
            def f(x, w):
                return x * w[tf.newaxis, :]
        """),
        # NumPy's tile is not TensorFlow's.
        Valid("""
            import numpy as np
            def f(x, w):
                return x * np.tile(w, (x.shape[0], 1))
        """),
        # Tiled to match a different tensor than the operand.
        Valid("""
            import tensorflow as tf
            def f(x, y, w):
                return x + tf.tile(w, [tf.shape(y)[0], 1])
        """),
    )
    invalid = (
        Invalid("""
            import tensorflow as tf
            def f(x, w):
                w_full = tf.tile(w[tf.newaxis, :], [tf.shape(x)[0], 1])
                return x * w_full
        """, count=1, lines=(3,)),
        Invalid("""
            import tensorflow as tensorflow_alias
            def f(x, b):
                return tensorflow_alias.add(x, tensorflow_alias.tile(b, [x.shape[0], 1]))
        """, count=1, lines=(3,)),
        Invalid("""
            from tensorflow import tile
            def f(rows, v):
                return tile(v, [len(rows), 1]) - rows
        """, count=1, lines=(3,)),
    )

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Finding]:
        if ctx.call_qualname(node) not in TILE_CALLS:
            return
        args = node.args  # type: ignore[attr-defined]
        multiples = args[1] if len(args) > 1 else next(
            (k.value for k in node.keywords if k.arg == "multiples"), None)  # type: ignore[attr-defined]
        if multiples is None:
            return
        use: ast.AST = node
        parent = ctx.parent(node)
        if type(parent) is ast.Assign and len(parent.targets) == 1 \
                and type(parent.targets[0]) is ast.Name:  # type: ignore[attr-defined]
            name = parent.targets[0].id  # type: ignore[attr-defined]
            loads = loads_bound_by(ctx, ctx.scope_of(parent), name, node)
            if len(loads) != 1 or assigned_value(ctx, loads[0]) is not node:
                return
            use = loads[0]
            parent = ctx.parent(use)
        other = self._other_operand(ctx, parent, use)
        if other is None:
            return
        if ctx.source_of(other) in _shape_sources(ctx, multiples):
            yield self.finding(ctx, node)

    @staticmethod
    def _other_operand(ctx: Context, op: ast.AST | None, use: ast.AST) -> ast.AST | None:
        if type(op) is ast.BinOp and isinstance(op.op, _ARITH):  # type: ignore[attr-defined]
            if op.left is use:  # type: ignore[attr-defined]
                return op.right  # type: ignore[attr-defined]
            if op.right is use:  # type: ignore[attr-defined]
                return op.left  # type: ignore[attr-defined]
            return None
        if type(op) is ast.Call and ctx.qualname(op.func) in BROADCASTING_OPS \
                and len(op.args) == 2 and use in op.args:  # type: ignore[attr-defined]
            return op.args[1] if op.args[0] is use else op.args[0]  # type: ignore[attr-defined]
        return None
