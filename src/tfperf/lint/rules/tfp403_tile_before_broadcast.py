"""TFP403: tf.tile to the shape of the other operand of an element-wise op that broadcasts."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Any

from tfperf.core.findings import Finding
from tfperf.lint.analysis.assignments import assigned_value, loads_bound_by
from tfperf.lint.analysis.transposes import transpose_of
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context

TILE_CALLS = frozenset({"tensorflow.tile", "tensorflow.compat.v1.tile", "keras.ops.tile",
                        "keras.backend.tile"})
# Binary element-wise ops that broadcast their operands.
BROADCASTING_OPS = frozenset(
    f"tensorflow.{p}{n}" for p in ("", "math.") for n in (
        "add", "subtract", "multiply", "divide", "truediv", "maximum", "minimum", "pow",
        "squared_difference", "floordiv", "equal", "not_equal", "less", "greater",
        "less_equal", "greater_equal", "logical_and", "logical_or")
) | frozenset(f"keras.ops.{n}" for n in ("add", "subtract", "multiply", "divide", "maximum",
                                         "minimum", "power"))
_ARITH = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow, ast.FloorDiv, ast.Mod)
_SHAPE_CALLS = frozenset({"tensorflow.shape", "tensorflow.compat.v1.shape", "keras.ops.shape",
                          "keras.backend.shape", "keras.backend.int_shape"})
# Ops that broadcast their operands' batch axes (all but the last two), and the TensorFlow
# version from which they do (BatchMatMulV2 from 1.14; triangular_solve from 2.2).
BATCH_BROADCASTING_OPS = {
    **{f"tensorflow.{p}{n}": (1, 14) for p in ("", "compat.v1.")
       for n in ("matmul", "linalg.matmul")},
    **{f"tensorflow.{p}{n}": (2, 2) for p in ("", "compat.v1.")
       for n in ("linalg.triangular_solve", "matrix_triangular_solve")},
}
_EXPAND_CALLS = frozenset({"tensorflow.expand_dims", "tensorflow.compat.v1.expand_dims",
                           "keras.ops.expand_dims", "keras.backend.expand_dims"})
_RESHAPE_CALLS = frozenset({"tensorflow.reshape", "tensorflow.compat.v1.reshape",
                            "keras.ops.reshape", "keras.backend.reshape"})


def _literal_int(node: ast.AST | None) -> int | None:
    if type(node) is ast.UnaryOp and type(node.op) is ast.USub:
        v = _literal_int(node.operand)
        return None if v is None else -v
    if type(node) is ast.Constant and type(node.value) is int:
        return node.value
    return None


def _size_one_axes(ctx: Context, expr: ast.AST, rank: int) -> set[int]:
    """Axes of ``expr`` (of rank ``rank``) known to have size 1: the axis ``expand_dims``
    inserts, the literal 1s of a ``reshape``, the ``None``/``tf.newaxis`` of a subscript."""
    if type(expr) is ast.Call:
        q = ctx.qualname(expr.func)
        args = expr.args
        kws = {k.arg: k.value for k in expr.keywords}
        if q in _EXPAND_CALLS:
            axis = _literal_int(args[1] if len(args) > 1 else kws.get("axis"))
            if axis is None or not -rank <= axis < rank:
                return set()
            return {axis % rank}
        if q in _RESHAPE_CALLS:
            shape = args[1] if len(args) > 1 else kws.get("shape")
            if type(shape) in (ast.List, ast.Tuple) and len(shape.elts) == rank:
                return {i for i, e in enumerate(shape.elts) if _literal_int(e) == 1}
        return set()
    if type(expr) is ast.Subscript:
        index = expr.slice
        items = index.elts if type(index) is ast.Tuple else [index]
        if any(type(i) is ast.Starred or (type(i) is ast.Constant and i.value is Ellipsis)
               for i in items):
            return set()
        axes, pos = set(), 0
        for i in items:
            if (type(i) is ast.Constant and i.value is None) or (
                    ctx.qualname(i) in ("tensorflow.newaxis", "numpy.newaxis")):
                axes.add(pos)
                pos += 1
            elif type(i) is ast.Slice:
                pos += 1
            else:
                return set()  # an integer index drops an axis: positions unknown
        return axes
    return set()


def _names_in(expr: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(expr) if type(n) is ast.Name}


def _version_guarded(ctx: Context, node: ast.AST) -> bool:
    """Inside a branch chosen by the TensorFlow version (a workaround for an old release)."""
    for p in ctx.ancestors(node):
        if type(p) in (ast.If, ast.IfExp) and "version" in ctx.source_of(p.test).lower():
            return True
    return False


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
            elif n.args and (ctx.qualname(f) in _SHAPE_CALLS or (
                    type(f) is ast.Name and f.id == "len" and ctx.binding(f) is None)):
                out.add(ctx.source_of(n.args[0]))
    return out


# `K.repeat(x, n)`: [B, D] -> [B, n, D], a tile of a new axis 1.
_REPEAT_NEW_AXIS = frozenset({"keras.backend.repeat"})
# `tf.repeat(x, n, axis=a)`: a tile when axis `a` has size 1 (else the shapes would not meet
# the operand whose shape gave `n`).
_REPEAT_CALLS = frozenset({"tensorflow.repeat", "keras.ops.repeat",
                           "keras.backend.repeat_elements"})
_PERMUTE_CALLS = frozenset({"keras.backend.permute_dimensions"})
_REDUCE_CALLS = frozenset(
    {f"tensorflow.{p}reduce_{n}" for p in ("", "math.", "compat.v1.")
     for n in ("sum", "mean", "max", "min")}
    | {f"keras.backend.{n}" for n in ("sum", "mean", "max", "min")}
    | {f"keras.ops.{n}" for n in ("sum", "mean", "max", "min")})


def _arg(call: ast.Call, i: int, *names: str) -> ast.expr | None:
    if len(call.args) > i:
        return call.args[i]
    return next((k.value for k in call.keywords if k.arg in names), None)


def _tile_spec(ctx: Context, node: ast.Call) -> tuple[ast.expr, ast.expr, set[int] | None] | None:
    """``(tiled, counts, repeated axes)`` of a tile or of a repeat that acts as one (the
    axes ``None`` when not known), else ``None``."""
    q = ctx.call_qualname(node)
    if q in TILE_CALLS:
        tiled, multiples = _arg(node, 0, "input", "x"), _arg(node, 1, "multiples")
        if tiled is None or multiples is None:
            return None
        repeated = None
        if type(multiples) in (ast.List, ast.Tuple):
            repeated = {i for i, e in enumerate(multiples.elts) if _literal_int(e) != 1}
        return tiled, multiples, repeated
    if q in _REPEAT_NEW_AXIS:
        tiled, n = _arg(node, 0, "x"), _arg(node, 1, "n")
        return (tiled, n, {1}) if tiled is not None and n is not None else None
    if q in _REPEAT_CALLS:
        tiled, n = _arg(node, 0, "input", "x"), _arg(node, 1, "repeats", "rep")
        axis = _literal_int(_arg(node, 2, "axis"))
        if tiled is None or n is None or axis is None or type(n) in (ast.List, ast.Tuple):
            return None  # no axis: repeat flattens; a list of counts: a real repetition
        return tiled, n, ({axis} if axis >= 0 else None)
    return None


def _flat_batch_tile(ctx: Context, node: ast.Call) -> str | None:
    """``tf.reshape(tf.tile(tf.reshape(x, [-1]), [n]), [n, ...])``: ``n`` stacked copies of
    ``x`` (a size-1 batch axis tiled, spelled through a flat vector) handed, directly or
    through one name, to a batch op that broadcasts batch axes: the message, else ``None``."""
    if ctx.call_qualname(node) not in TILE_CALLS:
        return None
    flat, multiples = _arg(node, 0, "input", "x"), _arg(node, 1, "multiples")
    if type(flat) is ast.Name:
        flat = assigned_value(ctx, flat)
    if type(flat) is not ast.Call or ctx.call_qualname(flat) not in _RESHAPE_CALLS:
        return None
    shape = _arg(flat, 1, "shape")
    if not (type(shape) in (ast.List, ast.Tuple) and len(shape.elts) == 1
            and _literal_int(shape.elts[0]) == -1):
        return None
    if type(multiples) in (ast.List, ast.Tuple):
        if len(multiples.elts) != 1:
            return None
        multiples = multiples.elts[0]
    outer: Any = ctx.parent(node)
    if type(outer) is not ast.Call or ctx.call_qualname(outer) not in _RESHAPE_CALLS \
            or _arg(outer, 0, "tensor") is not node:
        return None
    new_shape: Any = _arg(outer, 1, "shape")
    if type(new_shape) not in (ast.List, ast.Tuple) or len(new_shape.elts) < 3 \
            or multiples is None or ctx.source_of(new_shape.elts[0]) != ctx.source_of(multiples):
        return None
    uses: list[Any] = [outer]
    holder: Any = ctx.parent(outer)
    if type(holder) is ast.Assign and len(holder.targets) == 1 \
            and type(holder.targets[0]) is ast.Name:
        uses = loads_bound_by(ctx, ctx.scope_of(holder), holder.targets[0].id, outer)
    for use in uses:
        op: Any = ctx.parent(use)
        if type(op) is ast.Call and use in op.args[:2]:
            since = BATCH_BROADCASTING_OPS.get(ctx.qualname(op.func) or "")
            if since is not None and ctx.tf_newest >= since:
                return (f"tf.tile stacks copies of one tensor (a flat tile reshaped to a batch "
                        f"axis) that {ctx.source_of(op.func)} broadcasts: the tiled copy is "
                        "not needed")
    return None


def _transposed(ctx: Context, call: ast.AST | None, operand: ast.AST,
                repeated: set[int] | None) -> set[int] | None:
    """The repeated axes after ``call`` transposes ``operand`` by a literal permutation
    (``None`` if ``call`` is not such a transpose of it, or the axes are unknown)."""
    if type(call) is not ast.Call or repeated is None:
        return None
    t = transpose_of(ctx, call)
    if t is not None:
        if t.operand is not operand or not t.perm:
            return None
        perm = t.perm
    elif ctx.qualname(call.func) in _PERMUTE_CALLS and call.args and call.args[0] is operand:
        pattern = _arg(call, 1, "pattern")
        if type(pattern) not in (ast.List, ast.Tuple):
            return None
        entries = [_literal_int(e) for e in pattern.elts]
        if None in entries or sorted(entries) != list(range(len(entries))):  # type: ignore[type-var]
            return None
        perm = tuple(entries)  # type: ignore[arg-type]
    else:
        return None
    if max(repeated, default=-1) >= len(perm):
        return None
    return {j for j, old in enumerate(perm) if old in repeated}


def _reduced_keeping(ctx: Context, use: ast.AST, repeated: set[int] | None) -> bool:
    """``use`` is reduced over literal axes that are not repeated, and the result meets
    another (non-constant) tensor in arithmetic: broadcasting gives the same there."""
    call = ctx.parent(use)
    if repeated is None or type(call) is not ast.Call or not call.args \
            or call.args[0] is not use or ctx.qualname(call.func) not in _REDUCE_CALLS:
        return False
    axis = _arg(call, 1, "axis")
    axes = axis.elts if type(axis) in (ast.List, ast.Tuple) else [axis]
    values = [_literal_int(a) for a in axes]
    if not values or any(v is None or v < 0 or v in repeated for v in values):
        return False
    op = ctx.parent(call)
    if type(op) is not ast.BinOp or not isinstance(op.op, _ARITH):
        return False
    other = op.right if op.left is call else op.left
    return type(other) is not ast.Constant


def _repeat_message(ctx: Context, node: ast.Call) -> str | None:
    """The message for a repeat (the rule's own, which names tf.tile, for a tile)."""
    if ctx.call_qualname(node) in TILE_CALLS:
        return None
    return (f"{ctx.source_of(node.func)} repeats a tensor only to match the other operand of "
            "a broadcasting op: the repeated copy is not needed")


class TileBeforeBroadcast(Rule):
    code = "TFP403"
    name = "tile-before-broadcast"
    message = ("tf.tile only to match the other operand of a broadcasting op: the tiled copy "
               "is not needed")
    hint = "drop the tile and let the op broadcast (then profile: S11)"
    claims = ("S11",)
    group = "perf"
    node_types = (ast.Call,)
    callee_qualnames = TILE_CALLS | _REPEAT_NEW_AXIS | _REPEAT_CALLS
    docs = """\
## What it does
Finds `tf.tile(v, multiples)` (`K.tile`, `keras.ops.tile`, and the repeats that act as a tile:
`K.repeat(v, n)`, which inserts a new axis 1, and `tf.repeat(v, n, axis=a)` /
`K.repeat_elements`) whose result goes only into an op that broadcasts, possibly through a
transpose with a literal permutation (`K.permute_dimensions`: one more full-size copy), where
the tile only does what broadcasting would:
- an element-wise op (`+`, `*`, `tf.add`, `tf.maximum`...) whose other operand is the very
  tensor the multiples were computed from (`tf.shape(x)[0]`, `x.shape[0]`, `len(x)`,
  `K.int_shape(x)`): the tile only repeats `v` to `x`'s shape;
- or a tile that repeats only axes of size 1 (the axis `expand_dims` inserts, a `None` /
  `tf.newaxis` index, a literal 1 in a `reshape`) by counts the other operand is built from
  (`K` in `tf.reshape(e, [1, 1, 1, K, D])`), feeding an element-wise op;
- or a tile that repeats only size-1 batch axes (all but the last two) of an operand of
  `tf.matmul` (which broadcasts batch axes since TF 1.14) or `tf.linalg.triangular_solve`
  (since TF 2.2), whatever the counts: the copies either meet the other operand's batch
  extent, which broadcasting does, or make the op compute the same product once per copy
  (GPflow's KL term tiled a Cholesky factor `L` times before a triangular solve, with `L`
  read from a third tensor). The rule reads the targeted TensorFlow: silent when no release
  the project admits broadcasts (`tensorflow==2.1`, `tensorflow<2.2`); when its pin admits
  older and newer ones (`tensorflow>=2.1`), it reports and says from which release (GPflow's
  fix kept the tile behind a version test for the older ones).

The tiled copy may also be used a second time in a masked mean, `x *= m` then
`K.sum(x, axis) / K.sum(m, axis)`: a reduction over axes that are not repeated, whose result
meets another tensor in arithmetic, broadcasts just the same.

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
Tiles whose result is used elsewhere (other than the masked mean above), or whose counts
are not tied to the other operand (the tile then decides the output shape), tiles chosen by a
TensorFlow-version test (a workaround for an old release), and ops that do not broadcast
(`tf.linalg.solve`) are not reported. The masked-mean reading assumes the tensor the reduced
copy meets has the full extent on the repeated axes (a `[B, 1]` there would change the
result's shape); `keras.ops.repeat` and `tf.repeat` are taken as tiles only along a literal
axis whose count is read from the other operand's shape.
"""
    valid = (
        # The stacked copies are the result itself (no op that broadcasts them).
        Valid("""
            import tensorflow as tf
            def copies(grid, batch_size):
                flat = tf.reshape(grid, [-1])
                return tf.reshape(tf.tile(flat, [batch_size]), [batch_size, 4, -1])
        """, tf_version="2.1"),
        # Before TF 1.14 matmul does not broadcast batch axes: the copies are needed.
        Valid("""
            import tensorflow as tf
            def warp(grid, theta, batch_size):
                flat = tf.reshape(grid, [-1])
                grid = tf.reshape(tf.tile(flat, [batch_size]), [batch_size, 4, -1])
                return tf.matmul(theta, grid)
        """, tf_version="1.13"),
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
        # The tile sets the K axis: the other operand does not have it (bias of shape [D]).
        Valid("""
            import tensorflow as tf
            def f(z, bias, K):
                t = tf.tile(tf.expand_dims(z, -2), [1, K, 1])
                return t + bias
        """),
        # matrix_solve does not broadcast batch axes: the tile is needed.
        Valid("""
            import tensorflow as tf
            def f(scale, vec, M):
                v = tf.expand_dims(vec, 3)
                rsm = tf.tile(tf.expand_dims(scale, 1), (1, M, 1, 1))
                return tf.linalg.solve(rsm, v)
        """),
        # A workaround kept for TensorFlow releases that did not broadcast (GPflow's after).
        Valid("""
            import tensorflow as tf
            from packaging.version import Version
            def f(Lp, Lq, L):
                Lq = tf.reshape(Lq, [L, 4, 4])
                if Version(tf.__version__) >= Version("2.2"):
                    Lp_full = Lp
                else:
                    Lp_full = tf.tile(tf.expand_dims(Lp, 0), [L, 1, 1])
                return tf.linalg.triangular_solve(Lp_full, Lq)
        """),
        # The tile repeats a matrix axis of the solve, not a batch axis.
        Valid("""
            import tensorflow as tf
            def f(chol, rhs, n):
                return tf.linalg.triangular_solve(tf.tile(chol[:, None, :], [1, n, 1]), rhs)
        """),
        # Targeting TF 2.1 only (`tensorflow==2.1`): triangular_solve did not broadcast batch
        # axes yet.
        Valid("""
            import tensorflow as tf
            def f(chol, rhs, q):
                chol_b = tf.tile(tf.expand_dims(chol, 0), [tf.shape(q)[0], 1, 1])
                return tf.linalg.triangular_solve(chol_b, rhs)
        """, tf_version="2.1"),
        # A pin that stops before 2.2 (`tensorflow>=2.0,<2.2`): no admitted release broadcasts.
        Valid("""
            import tensorflow as tf
            def f(chol, rhs, q):
                chol_b = tf.tile(tf.expand_dims(chol, 0), [tf.shape(q)[0], 1, 1])
                return tf.linalg.triangular_solve(chol_b, rhs)
        """, tf_version=">=2.0,<2.2"),
        # The tiled batch is used twice (the copy serves another consumer).
        Valid("""
            import tensorflow as tf
            def f(w, x, q):
                w_b = tf.tile(w[None], [tf.shape(q)[0], 1, 1])
                return tf.matmul(w_b, x) + tf.reduce_sum(w_b)
        """),
        # K.repeat by a count that is not read from the other operand: it sets the shape.
        Valid("""
            from keras import backend as K
            def f(weights, x, n):
                w = K.repeat(weights, n)
                return x * w
        """),
        # A masked mean whose normaliser sums over the repeated axis: not what broadcasting
        # gives (the sum counts each step n times).
        Valid("""
            from keras import backend as K
            def f(seq, valid):
                valid = K.repeat(valid, K.int_shape(seq)[-1])
                valid = K.permute_dimensions(valid, [0, 2, 1])
                seq *= valid
                return K.sum(seq, axis=1) / K.sum(valid, axis=2)
        """),
        # tf.repeat without an axis flattens; with a list of counts it is a real repetition.
        Valid("""
            import tensorflow as tf
            def f(x, v, counts):
                a = tf.repeat(v, tf.shape(x)[0]) + x
                return a * tf.repeat(v, counts, axis=0)
        """),
        # The repeated axis is not of size 1 (a real repetition).
        Valid("""
            import tensorflow as tf
            def f(z, e, K):
                e = tf.reshape(e, [1, K, 8])
                return tf.tile(z, [1, K, 1]) - e
        """),
    )
    invalid = (
        # n copies stacked through a flat vector, then a batch matmul (DeepReg's warp_grid).
        Invalid("""
            import tensorflow as tf
            def warp(grid, theta, batch_size):
                flat = tf.reshape(grid, [-1])
                grid = tf.reshape(tf.tile(flat, [batch_size]), [batch_size, 4, -1])
                return tf.matmul(theta, grid)
        """, count=1, lines=(4,), tf_version="2.1"),
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
        # The shape of the VQ-VAE fix: a new axis repeated K times to meet [1, 1, 1, K, D].
        Invalid("""
            import tensorflow as tf
            def quantize(z_e, embeds, K, D):
                t = tf.tile(tf.expand_dims(z_e, -2), [1, 1, 1, K, 1])
                e = tf.reshape(embeds, [1, 1, 1, K, D])
                return tf.norm(t - e, axis=-1)
        """, count=1, lines=(3,)),
        # Batch axes of a triangular solve (it broadcasts them since TF 2.2), via reshape.
        Invalid("""
            import tensorflow as tf
            def f(cm, Z, N, M, D):
                vec = tf.reshape(Z, [1, M, M, D]) - 1.0
                cmr = tf.tile(tf.reshape(cm, [N, 1, 1, D, D]), [1, M, M, 1, 1])
                return tf.linalg.triangular_solve(cmr, tf.expand_dims(vec, 4))
        """, count=1, lines=(4,)),
        # The count read from a third tensor, not from the other operand (the shape of
        # GPflow's KL term): the solve broadcasts the batch axis whatever its extent.
        Invalid("""
            import tensorflow as tf
            def kl_trace(prior_chol, post_chol, means):
                n = tf.shape(means)[1]
                chol_b = prior_chol if len(prior_chol.shape) == 3 else tf.tile(
                    tf.expand_dims(prior_chol, 0), [n, 1, 1])
                return tf.reduce_sum(tf.square(
                    tf.linalg.triangular_solve(chol_b, post_chol, lower=True)))
        """, count=1, lines=(4,)),
        # A per-step weight repeated over the features and transposed to meet them, used for
        # the weighted sum and for its normaliser (the shape of a Keras masked pooling fix).
        Invalid("""
            from keras import backend as K
            def weighted_average(seq, step_weights):
                w = K.repeat(step_weights, K.int_shape(seq)[-1])
                w = K.permute_dimensions(w, (0, 2, 1))
                seq *= w
                return K.sum(seq, axis=1) / K.sum(w, axis=1)
        """, count=1, lines=(3,)),
        # tf.repeat along a new axis, by the other operand's extent.
        Invalid("""
            import tensorflow as tf
            def add_bias(x, bias):
                return x + tf.repeat(bias[None, :], tf.shape(x)[0], axis=0)
        """, count=1, lines=(3,)),
        # A pin from TF 2.1 on (`tensorflow>=2.1`): the solve broadcasts from 2.2, which the
        # project admits (the message says so; the fix keeps the tile behind a version test).
        Invalid("""
            import tensorflow as tf
            def kl_trace(chol, rhs, n):
                chol_b = tf.tile(tf.expand_dims(chol, 0), [n, 1, 1])
                return tf.reduce_sum(tf.linalg.triangular_solve(chol_b, rhs, lower=True))
        """, count=1, lines=(3,), tf_version=">=2.1"),
        # A batch axis added with `[None]` for a matmul, inside a conditional expression.
        Invalid("""
            import tensorflow as tf
            def f(w, x, batched, B):
                x = tf.reshape(x, [B, 3, 4])
                w_full = w if batched else tf.tile(w[None], [B, 1, 1])
                return tf.matmul(x, w_full)
        """, count=1, lines=(4,)),
    )

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Finding]:
        spec = _tile_spec(ctx, node)  # type: ignore[arg-type]
        if spec is None:
            return
        stacked = _flat_batch_tile(ctx, node)  # type: ignore[arg-type]
        if stacked is not None:
            yield self.finding(ctx, node, stacked)
            return
        tiled, multiples, repeated = spec
        if not (_shape_sources(ctx, multiples) or _names_in(multiples)) \
                or _version_guarded(ctx, node):
            return  # neither a count read from a shape nor one a name could tie to an operand
        use: ast.AST = node
        parent = ctx.parent(node)
        if type(parent) is ast.IfExp and node is not parent.test:
            use, parent = parent, ctx.parent(parent)  # `a if batched else tf.tile(...)`
        loads: list[ast.AST] = [use]
        while type(parent) is ast.Assign and len(parent.targets) == 1 \
                and type(parent.targets[0]) is ast.Name:
            name = parent.targets[0].id
            loads = loads_bound_by(ctx, ctx.scope_of(parent), name, use)  # type: ignore[assignment]
            if not loads or any(assigned_value(ctx, n) is not use for n in loads):
                return
            moved = _transposed(ctx, ctx.parent(loads[0]), loads[0], repeated) \
                if len(loads) == 1 else None
            if moved is None:
                break
            # A transpose of the tiled copy (one more full-size copy): follow its result.
            use, repeated = ctx.parent(loads[0]), moved  # type: ignore[assignment]
            parent = ctx.parent(use)
            loads = [use]
        direct = [u for u in loads if self._tied_use(ctx, u, multiples)]
        if len(loads) > 1:
            # The mask of a masked mean: `x *= m` and `sum(m, axis)`, where the reduction
            # keeps the repeated axes and its result meets another tensor in arithmetic.
            if direct and all(u in direct or _reduced_keeping(ctx, u, repeated)
                              for u in loads):
                yield self.finding(ctx, node, _repeat_message(ctx, node))  # type: ignore[arg-type]
            return
        use = loads[0]
        parent = ctx.parent(use)
        if direct:
            yield self.finding(ctx, node, _repeat_message(ctx, node))  # type: ignore[arg-type]
            return
        other = self._other_operand(ctx, parent, use)
        message = self._size_one_repeat(ctx, tiled, multiples, parent, use, other)
        if message:
            yield self.finding(ctx, node, message)

    def _tied_use(self, ctx: Context, use: ast.AST, multiples: ast.AST) -> bool:
        """``use`` is an operand of a broadcasting op whose other operand is the tensor the
        counts were read from."""
        other = self._other_operand(ctx, ctx.parent(use), use)
        return other is not None and ctx.source_of(other) in _shape_sources(ctx, multiples)

    @staticmethod
    def _size_one_repeat(ctx: Context, tiled: ast.AST, multiples: ast.AST,
                         op: ast.AST | None, use: ast.AST, other: ast.AST | None) -> str | None:
        """The message when the tile repeats only axes of size 1 that ``op`` broadcasts, by
        counts the other operand is built from (so it has those extents already)."""
        if type(multiples) not in (ast.List, ast.Tuple):
            return None
        entries = multiples.elts
        rank = len(entries)
        repeated = {i for i, e in enumerate(entries) if _literal_int(e) != 1}
        if not repeated or not repeated <= _size_one_axes(ctx, tiled, rank):
            return None
        what = "broadcasting op"
        if other is None and type(op) is ast.Call and len(op.args) >= 2 \
                and use in op.args[:2]:
            since = BATCH_BROADCASTING_OPS.get(ctx.qualname(op.func) or "")
            if since is None or ctx.tf_newest < since or max(repeated) >= rank - 2:
                return None
            # No tie to the other operand needed here: a size-1 batch axis repeated into a
            # batch op either meets the other operand's batch extent (broadcasting does it) or
            # makes the op compute the same product once per copy. Both waste the tile.
            if ctx.tf_version < since:  # the pin admits older releases too: say from when
                return (f"tf.tile repeats size-1 batch axes that {ctx.source_of(op.func)} "
                        f"broadcasts from TF {since[0]}.{since[1]}, which the project's pin "
                        "admits: the tiled copy is not needed there (keep the tile behind a "
                        "TensorFlow-version test for older releases)")
            return (f"tf.tile repeats size-1 batch axes that {ctx.source_of(op.func)} "
                    "broadcasts: the tiled copy is not needed")
        if other is None:
            return None
        counts: set[str] = set()
        for i in repeated:
            names = _names_in(entries[i])
            if not names:
                return None  # a literal count: nothing ties it to the other operand
            counts |= names
        known = _names_in(other)
        for n in [n for n in ast.walk(other) if type(n) is ast.Name]:
            value = assigned_value(ctx, n)
            if value is not None:
                known |= _names_in(value)
        if not counts <= known:
            return None
        return (f"tf.tile repeats size-1 axes that the {what} would broadcast: the tiled "
                "copy is not needed")

    @staticmethod
    def _other_operand(ctx: Context, op: ast.AST | None, use: ast.AST) -> ast.AST | None:
        if type(op) is ast.AugAssign and isinstance(op.op, _ARITH) and op.value is use:
            return op.target  # `x *= mask`
        if type(op) is ast.BinOp and isinstance(op.op, _ARITH):
            if op.left is use:
                return op.right
            if op.right is use:
                return op.left
            return None
        if type(op) is ast.Call and ctx.qualname(op.func) in BROADCASTING_OPS \
                and len(op.args) == 2 and use in op.args:
            return op.args[1] if op.args[0] is use else op.args[0]
        return None
