"""TFP408: ``tf.gather_nd`` over an index grid built from ``tf.range``: ``gather(batch_dims=1)``."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Any

from tfperf.core.findings import Finding
from tfperf.lint.analysis.callers import resolve_def
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context

_GATHER_ND = frozenset({"tensorflow.gather_nd", "tensorflow.compat.v1.gather_nd"})
_RANGE = frozenset({"tensorflow.range", "tensorflow.compat.v1.range", "numpy.arange"})
_STACK = frozenset({"tensorflow.stack", "tensorflow.compat.v1.stack", "numpy.stack"})
_CONCAT = frozenset({"tensorflow.concat", "tensorflow.compat.v1.concat", "numpy.concatenate"})
_WRAPPERS = frozenset({"tensorflow.cast", "tensorflow.expand_dims", "tensorflow.reshape",
                       "tensorflow.transpose", "tensorflow.identity", "numpy.expand_dims",
                       "tensorflow.compat.v1.cast"})
# A row range spread across the columns: ``tf.ones_like(idx) * r[:, None]``,
# ``tf.tile(r[:, None], [1, k])``, ``tf.broadcast_to(r[:, None], shape)``.
_SPREAD = frozenset({"tensorflow.tile", "tensorflow.broadcast_to", "numpy.tile",
                     "numpy.broadcast_to", "tensorflow.compat.v1.tile"})
_ONES = frozenset({"tensorflow.ones_like", "tensorflow.ones", "numpy.ones_like", "numpy.ones",
                   "tensorflow.zeros_like", "tensorflow.zeros", "numpy.zeros_like",
                   "numpy.zeros"})
_DEPTH = 6


def _value(ctx: Context, expr: Any, depth: int = 0) -> Any:
    """``expr``, or the value a local name was last assigned."""
    while type(expr) is ast.Name and depth < _DEPTH:
        b = ctx.binding(expr)
        if b is None or b.kind != "assign" or b.value is expr:
            break
        expr, depth = b.value, depth + 1
    return expr


def _unwrap(ctx: Context, expr: Any) -> Any:
    """Through casts, reshapes and ``expand_dims`` (they move no index)."""
    for _ in range(_DEPTH):
        expr = _value(ctx, expr)
        if type(expr) is ast.Call and ctx.call_qualname(expr) in _WRAPPERS and expr.args:
            expr = expr.args[0]
        else:
            break
    return expr


def _is_row_range(ctx: Context, expr: Any) -> bool:
    """``tf.range(n)`` (0 to n by 1), possibly cast or expanded: one index per row."""
    expr = _unwrap(ctx, expr)
    if type(expr) is ast.BinOp and type(expr.op) in (ast.Mult, ast.Add):
        # ones * rows (or zeros + rows): the row numbers broadcast to the index's shape
        sides = (expr.left, expr.right)
        filler = ("ones" if type(expr.op) is ast.Mult else "zeros")
        for row, other in (sides, sides[::-1]):
            o = _unwrap(ctx, other)
            if type(o) is ast.Call and (ctx.call_qualname(o) or "") in _ONES \
                    and filler in (ctx.call_qualname(o) or "") and _is_row_range(ctx, row):
                return True
        return False
    if type(expr) is ast.Call and ctx.call_qualname(expr) in _SPREAD and expr.args:
        return _is_row_range(ctx, expr.args[0])
    if type(expr) is not ast.Call or ctx.call_qualname(expr) not in _RANGE:
        return False
    args = expr.args
    if len(args) == 1:
        return True
    start_zero = type(args[0]) is ast.Constant and args[0].value == 0
    step_one = len(args) < 3 or (type(args[2]) is ast.Constant and args[2].value == 1)
    return start_zero and step_one


def _int(node: Any) -> int | None:
    if type(node) is ast.Constant and type(node.value) is int:
        return node.value
    if type(node) is ast.UnaryOp and type(node.op) is ast.USub:
        inner = _int(node.operand)
        return None if inner is None else -inner
    return None


def _grid(ctx: Context, indices: Any, depth: int = 0) -> bool:
    """``indices`` pairs each row number with a per-row index: ``tf.stack([tf.range(n),
    y], axis=1)``, ``tf.concat([r[:, None], y[:, None]], 1)`` with ``r = tf.range(n)``, the
    same transposed, or the two stacked from ``tf.meshgrid``'s first output; also what a
    helper of this module returns (``_to_nd_indices(idx)``)."""
    expr = _value(ctx, indices)
    if type(expr) is ast.Call and depth < 2:
        fn: Any = resolve_def(ctx, expr.func)
        if fn is not None and type(fn) is not ast.Lambda:
            returns = [n.value for n in ast.walk(fn) if type(n) is ast.Return and n.value]
            return bool(returns) and all(_grid(ctx, r, depth + 1) for r in returns)
    transposed = False
    if type(expr) is ast.Call and ctx.call_qualname(expr) == "tensorflow.transpose" \
            and expr.args:
        expr, transposed = _value(ctx, expr.args[0]), True
    if type(expr) is not ast.Call or not expr.args:
        return False
    q = ctx.call_qualname(expr)
    if q not in _STACK and q not in _CONCAT:
        return False
    parts = _value(ctx, expr.args[0])
    if type(parts) not in (ast.List, ast.Tuple) or len(parts.elts) != 2:
        return False
    axis = next((k.value for k in expr.keywords if k.arg == "axis"),
                expr.args[1] if len(expr.args) > 1 else None)
    last = _int(axis) in (1, -1)
    first_axis = axis is None or _int(axis) == 0
    if not (last or (transposed and first_axis and q in _STACK)):
        return False
    return _is_row_range(ctx, parts.elts[0]) and not _is_row_range(ctx, parts.elts[1])


class GatherNdIndexGrid(Rule):
    code = "TFP408"
    name = "gather-nd-index-grid"
    message = ("tf.gather_nd with an index grid built from tf.range: "
               "tf.gather(..., batch_dims=1) picks the same values without the grid")
    hint = "tf.gather(params, idx, batch_dims=1) (idx: the per-row indices, not stacked)"
    claims = ("S12",)
    group = "perf"  # issue 25: all judged true or minor (docs/lint.md); hits dev fixes
    node_types = (ast.Call,)
    callee_names = frozenset({"gather_nd"})
    needs_tf = True
    docs = """\
## What it does
Finds `tf.gather_nd(params, indices)` whose `indices` pair every row number with one
per-row index: `tf.stack([tf.range(n), idx], axis=1)` (or `axis=-1`, `tf.concat` of the two
columns, the two stacked on axis 0 and transposed), followed through names, casts and
`expand_dims`, and into a helper of the module that returns such a grid; the row numbers may
be spread over the columns (`tf.ones_like(idx) * tf.range(n)[:, None]`, `tf.tile`,
`tf.broadcast_to`). That picks `params[i, idx[i]]` for each row `i`.

## Why is this bad?
The grid is a new `[n, 2]` int tensor built per call (a range, a stack, often casts), and
`gather_nd` then reads two indices per row. `tf.gather(params, idx, batch_dims=1)` picks the
same values from `idx` alone, in one op: the Python loop-free equivalent with less work and
memory (claim S12's whole-tensor advice; `batch_dims` exists from TF 1.14).

## Example
```python
rows = tf.range(tf.shape(logits)[0])
picked = tf.gather_nd(logits, tf.stack([rows, labels], axis=1))
```

## Use instead
```python
picked = tf.gather(logits, labels, batch_dims=1)
```

## Fix safety
No automatic fix: `labels` must be the per-row index as an integer tensor of shape `[n]`
(the grid's second column), which the code may build differently.

## Known limitations
Only grids whose first column is `tf.range(n)` from 0 by 1 (a row number per row) and whose
second is something else; not reported on code targeting TF older than 1.14 (no
`batch_dims`).
"""
    valid = (
        # gather with batch_dims: what the rule asks for.
        Valid("""
            import tensorflow as tf
            def pick(logits, labels):
                return tf.gather(logits, labels, batch_dims=1)
        """, spelling="index: batch_dims"),
        # Arbitrary (row, column) pairs: a real gather_nd.
        Valid("""
            import tensorflow as tf
            def pick(params, rows, cols):
                return tf.gather_nd(params, tf.stack([rows, cols], axis=1))
        """, spelling="name"),
        # Every row with every column (a meshgrid of two ranges): a copy, not a lookup.
        Valid("""
            import tensorflow as tf
            def grid(params, n, m):
                idx = tf.stack([tf.range(n), tf.range(m)], axis=1)
                return tf.gather_nd(params, idx)
        """, spelling="loop: grid of ranges"),
        # TF 1.13 has no batch_dims.
        Valid("""
            import tensorflow as tf
            def pick(logits, labels):
                rows = tf.range(tf.shape(logits)[0])
                return tf.gather_nd(logits, tf.stack([rows, labels], axis=1))
        """, tf_version="1.13", spelling="index: stack axis 1"),
        Valid("""
            from helpers import pick
            import tensorflow as tf
            def loss(logits, labels):
                return -tf.reduce_mean(pick(logits, labels))
        """, files={"helpers.py": """
            import tensorflow as tf
            def pick(logits, labels):
                return tf.gather(logits, labels, batch_dims=1)
        """}, spelling="module"),
        Valid("""
            import tensorflow as tf
            q = tf.random.normal([8, 4])
            # %%
            a = tf.constant([0, 1, 2, 3, 0, 1, 2, 3])
            picked = tf.gather(q, a, batch_dims=1)
        """, notebook=True, spelling="notebook"),
        # A helper that pairs two per-row indices: no row range, a real gather_nd.
        Valid("""
            import tensorflow as tf
            def to_pairs(rows, cols):
                return tf.stack([rows, cols], axis=-1)
            def pick(params, rows, cols):
                return tf.gather_nd(params, to_pairs(rows, cols))
        """, spelling="name: helper pairs"),
    )
    invalid = (
        # The grid built by a helper of the module, its rows spread by ones_like * range.
        Invalid("""
            import tensorflow as tf
            def to_nd_indices(indices):
                rows = tf.ones_like(indices) * tf.expand_dims(tf.range(tf.shape(indices)[0]), 1)
                return tf.stack([rows, indices], axis=-1)
            def gather_per_row(inputs, indices):
                grid = to_nd_indices(tf.cast(indices, tf.int32))
                return tf.gather_nd(inputs, grid)
        """, count=1, lines=(7,), spelling="name: helper ones_like rows"),
        Invalid("""
            import tensorflow as tf
            def pick(p, idx, n, k):
                rows = tf.tile(tf.expand_dims(tf.range(n), 1), [1, k])
                return tf.gather_nd(p, tf.stack([rows, idx], axis=-1))
        """, count=1, lines=(4,), spelling="index: tiled rows"),
        Invalid("""
            import tensorflow as tf
            def pick(logits, labels):
                rows = tf.range(tf.shape(logits)[0])
                return tf.gather_nd(logits, tf.stack([rows, labels], axis=1))
        """, count=1, lines=(4,), spelling="index: stack axis 1"),
        # Through names and a cast; axis=-1.
        Invalid("""
            import tensorflow as tf
            def q_of_actions(q, actions, batch):
                idx = tf.stack([tf.range(batch), tf.cast(actions, tf.int32)], axis=-1)
                return tf.gather_nd(q, idx)
        """, count=1, lines=(4,), spelling="name"),
        # Two columns concatenated.
        Invalid("""
            import tensorflow as tf
            def pick(p, y, n):
                r = tf.expand_dims(tf.range(n), 1)
                idx = tf.concat([r, tf.expand_dims(y, 1)], 1)
                return tf.gather_nd(p, idx)
        """, count=1, lines=(5,), spelling="index: concat columns"),
        # Stacked on axis 0, then transposed.
        Invalid("""
            import tensorflow as tf
            def pick(p, y, n):
                return tf.gather_nd(p, tf.transpose(tf.stack([tf.range(n), y])))
        """, count=1, lines=(3,), spelling="index: transposed"),
        # Once per step in a training loop, in a helper module.
        Invalid("""
            from helpers import pick
            def loss_per_step(batches):
                for logits, labels, n in batches:
                    pick(logits, labels, n)
        """, files={"helpers.py": """
            import tensorflow as tf
            def pick(logits, labels, n):
                return tf.gather_nd(logits, tf.stack([tf.range(n), labels], axis=1))
        """}, count=1, spelling="module"),
        Invalid("""
            import tensorflow as tf
            q = tf.random.normal([8, 4])
            a = tf.constant([0, 1, 2, 3, 0, 1, 2, 3])
            # %%
            picked = tf.gather_nd(q, tf.stack([tf.range(8), a], axis=1))
        """, count=1, notebook=True, spelling="notebook"),
        Invalid("""
            import tensorflow as tf
            def per_row(p, ys, n):
                out = []
                for y in ys:
                    out.append(tf.gather_nd(p, tf.stack([tf.range(n), y], axis=1)))
                return out
        """, count=1, lines=(5,), spelling="loop: for"),
    )

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Finding]:
        if ctx.tf_newest < (1, 14) or ctx.tf_version < (1, 14):
            return
        if ctx.call_qualname(node) not in _GATHER_ND:
            return
        call: Any = node
        indices = call.args[1] if len(call.args) > 1 else next(
            (k.value for k in call.keywords if k.arg == "indices"), None)
        if indices is not None and not any(k.arg == "batch_dims" for k in call.keywords) \
                and _grid(ctx, indices):
            yield self.finding(ctx, node)
