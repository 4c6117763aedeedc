"""TFP104: a tensor grown with ``tf.concat`` inside a loop (quadratic copying)."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from tfperf.core.findings import Finding
from tfperf.lint.analysis.assignments import leaves_after
from tfperf.lint.analysis.dependence import read_elsewhere
from tfperf.lint.analysis.dependence import ref_name as _ref
from tfperf.lint.analysis.imports import top_level_imports
from tfperf.lint.analysis.loops import (
    iterates_dataset,
    iterates_tensor,
    range_args,
    small_literal_range,
)
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context

# Concatenations taking a list of pieces as first argument (or `values=`).
CONCAT_CALLS = frozenset({
    "tensorflow.concat", "tensorflow.compat.v1.concat", "keras.ops.concatenate",
    "keras.backend.concatenate", "tensorflow.experimental.numpy.concatenate",
    "tensorflow.experimental.numpy.vstack", "tensorflow.experimental.numpy.hstack",
    # The libraries' own spellings (their sources import these modules directly).
    "tensorflow.python.ops.array_ops.concat", "keras.src.ops.concatenate",
    "keras.src.ops.numpy.concatenate",
})
# Appends taking the grown array first: `append(arr, values)`.
APPEND_CALLS = frozenset({"keras.ops.append", "tensorflow.experimental.numpy.append"})
_LAST_PARTS = frozenset(q.rsplit(".", 1)[1] for q in CONCAT_CALLS | APPEND_CALLS)


def _grown_piece(call: ast.Call, target: str) -> ast.expr | None:
    """The argument of ``call`` that is ``target`` itself (the tensor being grown), read
    syntactically: the first argument of an append, or an item of the list of pieces."""
    first = call.args[0] if call.args else next(
        (k.value for k in call.keywords if k.arg in ("values", "xs", "tensors", "arrays", "tup")),
        None)
    if first is None:
        return None
    if _ref(first) == target:  # `append(x, piece)`
        return first
    if type(first) in (ast.List, ast.Tuple):
        for e in first.elts:
            if _ref(e) == target:
                return e
    return None


def _grows(ctx: Context, call: ast.Call, piece: ast.expr) -> bool:
    """``call`` (whose argument ``piece`` is the grown tensor) is a TF concatenation."""
    q = ctx.call_qualname(call)
    if q in APPEND_CALLS:
        return call.args[0] is piece if call.args else False
    return q in CONCAT_CALLS and piece is not (call.args[0] if call.args else None)


def _imported_concats(ctx: Context) -> frozenset[str]:
    """Local names given to TF's concatenations by ``from ... import concat as join``."""
    def compute() -> frozenset[str]:
        names = {**top_level_imports(ctx, "tensorflow"), **top_level_imports(ctx, "keras")}
        return frozenset(n for n, q in names.items() if q.rsplit(".", 1)[-1] in _LAST_PARTS)
    return ctx.cached("tfp104_imported_concats", compute)


def _long_loop(ctx: Context, loop: ast.AST) -> bool:
    """A loop that may run many times: ``while``, a ``range`` without a small literal bound,
    over a tensor or a dataset. Loops over Python lists (layers, a few branches, files) are
    left alone: growing a tensor once per layer is how DenseNet-style blocks work."""
    if type(loop) is ast.While:
        return True
    if type(loop) not in (ast.For, ast.AsyncFor):
        return False
    if range_args(ctx, loop.iter) is not None:
        return not small_literal_range(ctx, loop)
    return iterates_tensor(ctx, loop) or iterates_dataset(ctx, loop)


def _reset_before(loop: ast.AST, stmt: ast.stmt, target: str) -> bool:
    """``target`` is re-bound unconditionally earlier in the same iteration, to a value that
    does not derive from it: each iteration starts afresh, nothing grows across them."""
    body = getattr(loop, "body", [])
    for s in body:
        if s is stmt or any(n is stmt for n in ast.walk(s)):
            return False
        if type(s) in (ast.Assign, ast.AnnAssign):
            targets = s.targets if type(s) is ast.Assign else [s.target]
            if any(_ref(t) == target for t in targets) and s.value is not None \
                    and not any(_ref(n) == target for n in ast.walk(s.value)):
                return True
    return False


def _growths(ctx: Context, loop: ast.AST, target: str) -> list[ast.AST]:
    """The statements in ``loop`` that grow ``target`` by a concatenation."""
    out: list[ast.AST] = []
    for s in ast.walk(loop):
        if type(s) is not ast.Assign or len(s.targets) != 1 or _ref(s.targets[0]) != target:
            continue
        value = s.value.orelse if type(s.value) is ast.IfExp else s.value
        if type(value) is ast.Call and _grown_piece(value, target) is not None:
            out.append(s)
    return out


class ConcatGrownInLoop(Rule):
    code = "TFP104"
    batches_loops = True
    name = "concat-grown-in-loop"
    message = "tensor grown with tf.concat in a loop: every iteration copies all of it again"
    hint = ("append the pieces to a list and tf.concat once after the loop, compute them in "
            "one op, or write into a tf.TensorArray inside tf.function")
    claims = ("S12",)
    group = "pedantic"
    node_types = (ast.Assign,)
    needs_tf = True  # nothing to report where neither TF nor Keras is imported
    docs = """\
## What it does
Finds `x = tf.concat([x, piece], axis)` (or `[piece, x]`, `keras.ops.concatenate`,
`keras.ops.append(x, piece)`) inside a `while` loop, a `range` loop, or a loop over a tensor or
a dataset: a tensor that grows by one piece per iteration.

## Why is this bad?
Tensors are immutable (claim S5): `tf.concat` allocates a new tensor and copies both inputs
into it. Growing a tensor piece by piece therefore copies 1 + 2 + … + n pieces, O(n²) memory
traffic for O(n) data, on top of one small op per iteration (claim S12: whole-tensor ops beat
Python loops of small ops by orders of magnitude). Inside `tf.function` it also needs
`shape_invariants`, as the shape changes each iteration.

## Example
```python
out = tf.zeros([0, 16])
for i in range(n):
    out = tf.concat([out, step(i)], axis=0)
```

## Use instead
```python
pieces = [step(i) for i in range(n)]
out = tf.concat(pieces, axis=0)          # one copy
```
Better still, compute all pieces with one batched op; inside `tf.function`, write them into a
`tf.TensorArray` and `stack()` it once.

## Fix safety
No automatic fix: collecting the pieces changes where the tensor exists during the loop,
which the code after the loop may rely on.

## Known limitations
Not reported: loops over a Python list (`for layer in self.layers`: a DenseNet block
concatenates once per layer by design), `range` loops with a small literal bound (≤ 8), a
variable re-assigned earlier in the same iteration, a concat followed by `return` or
`break` (nothing grows across iterations), and a tensor that the loop body reads besides
growing it (autoregressive decoding `tokens = concat([tokens, step(tokens)])`, a dense block
`x = concat([x, conv(x)])`): each iteration needs all of it, so collecting the pieces in a
list would not remove the copy. Reads of its shape (`x.shape[1] < n`) and of a fixed-size
tail (`tokens[:, -1:]`, which the last piece gives) do not count.
"""
    valid = (
        # One concat of a collected list, after the loop.
        Valid("""
            import tensorflow as tf
            def f(xs):
                parts = [tf.square(x) for x in xs]
                return tf.concat(parts, axis=0)
        """),
        # DenseNet block: features concatenated once per layer of a Python list.
        Valid("""
            import tensorflow as tf
            def dense_block(x, layers):
                for layer in layers:
                    x = tf.concat([x, layer(x)], axis=-1)
                return x
        """),
        # Autoregressive decoding: each step reads the whole sequence grown so far.
        Valid("""
            import tensorflow as tf
            def generate(step, tokens, max_len):
                while tokens.shape[1] < max_len:
                    nxt = step(tokens)
                    tokens = tf.concat([tokens, nxt], 1)
                return tokens
        """),
        # A dense block over a range: each layer convolves every feature map so far.
        Valid("""
            import tensorflow as tf
            def dense_block(x, n_layers, growth):
                for i in range(n_layers):
                    y = tf.keras.layers.Conv2D(growth, 3, padding="same")(x)
                    x = tf.concat([x, y], axis=-1)
                return x
        """),
        # A handful of iterations with a literal bound.
        Valid("""
            import tensorflow as tf
            def f(x):
                for _ in range(3):
                    x = tf.concat([x, x], axis=0)
                return x
        """),
        # Reset at the start of each iteration: nothing grows across iterations.
        Valid("""
            import tensorflow as tf
            def f(xs, n):
                for i in range(n):
                    row = xs[i]
                    row = tf.concat([row, tf.zeros([1])], axis=0)
                    tf.print(row)
        """),
        # NumPy's concatenate is not TensorFlow's (a user's own lookalike).
        Valid("""
            import numpy as np
            import tensorflow as tf
            def f(n):
                out = np.zeros((0, 3))
                for i in range(n):
                    out = np.concatenate([out, np.ones((1, 3))], axis=0)
                return tf.constant(out)
        """),
        # Concatenating two different tensors in a loop does not grow anything.
        Valid("""
            import tensorflow as tf
            def f(a, b, n):
                for i in range(n):
                    c = tf.concat([a, b], axis=0)
                    tf.print(c)
        """),
    )
    invalid = (
        Invalid("""
            import tensorflow as tf
            def f(n):
                out = tf.zeros([0, 4])
                for i in range(n):
                    out = tf.concat([out, tf.fill([1, 4], float(i))], axis=0)
                return out
        """, count=1, lines=(5,)),
        # Only the last token goes back in: the pieces could be collected in a list.
        Invalid("""
            import tensorflow as tf
            def greedy(step, tokens, n):
                for _ in range(n):
                    nxt = step(tokens[:, -1:])
                    tokens = tf.concat([tokens, nxt], axis=1)
                return tokens
        """, count=1, lines=(5,)),
        # Generated samples collected by growing a tensor (read only for its shape).
        Invalid("""
            import tensorflow as tf
            def sample(step, max_len):
                samples = tf.zeros([0, 8])
                while samples.shape[0] < max_len:
                    samples = tf.concat([samples, step()], 0)
                return samples
        """, count=1, lines=(5,)),
        # Predictions grown batch after batch over a dataset.
        Invalid("""
            import tensorflow
            def predict(model, ds):
                preds = None
                for batch in ds:
                    p = model(batch)
                    preds = p if preds is None else tensorflow.concat([preds, p], axis=0)
                return preds
        """, count=1, lines=(6,)),
        # Imported under another name; an attribute grown in a loop over a tensor's rows.
        Invalid("""
            from tensorflow import concat as join
            import tensorflow as tf
            class Buffer:
                def fill(self, rows):
                    for r in tf.unstack(rows):
                        self.data = join([self.data, r[None]], axis=0)
        """, count=1, lines=(6,)),
        Invalid("""
            import tensorflow as tensorflow_alias
            from keras import ops
            def f(x, n):
                acc = x[:0]
                i = 0
                while i < n:
                    acc = ops.concatenate([acc, x[i:i + 1]], axis=0)
                    acc = tensorflow_alias.concat(values=[x[i:i + 1], acc], axis=0)
                    i += 1
                return acc
        """, count=2, lines=(7, 8)),
    )

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Finding]:
        value = node.value
        if type(value) is ast.IfExp:  # `x = p if x is None else tf.concat([x, p], 0)`
            value = value.orelse
        if type(value) is not ast.Call or len(node.targets) != 1:
            return
        # Cheap, syntactic tests first (this runs for every assignment): the callee's name,
        # then the target among its arguments.
        func = value.func
        if type(func) is ast.Attribute:
            if func.attr not in _LAST_PARTS:
                return
        elif type(func) is not ast.Name or (func.id not in _LAST_PARTS
                                            and func.id not in _imported_concats(ctx)):
            return
        target = _ref(node.targets[0])
        piece = _grown_piece(value, target) if target is not None else None
        if piece is None:
            return
        if not ctx.imports_tf or not _grows(ctx, value, piece):
            return
        loops = ctx.enclosing_loops(node)
        if not loops or type(loops[0]) not in (ast.For, ast.AsyncFor, ast.While):
            return
        loop = loops[0]
        if (not _long_loop(ctx, loop)
                or _reset_before(loop, node, target)  # type: ignore[arg-type]
                or leaves_after(ctx, node)):  # type: ignore[arg-type]
            return
        # Each iteration reads what was grown (autoregressive decoding feeds the sequence
        # back, a dense block convolves all features so far): a list cannot replace it.
        if read_elsewhere(ctx, loop, target, _growths(ctx, loop, target)):  # type: ignore[arg-type]
            return
        yield self.finding(ctx, node)
