"""TFP309: a tf.function fed a pipeline's last, smaller batch: one more trace."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from tfperf.core.findings import Finding
from tfperf.lint.analysis.pipelines import batches_into_tf_function, static_padded_shapes
from tfperf.lint.analysis.syntax import keyword
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context


def _partial_last_batch(step: ast.Call, before: list[ast.Call], ctx: Context) -> bool:
    """``batch``/``padded_batch`` without ``drop_remainder=True`` on a pipeline that is not
    repeated before it (a repeated one has its only partial batch at the very end)."""
    method = step.func.attr
    if method not in ("batch", "padded_batch") \
            or (method == "padded_batch" and not static_padded_shapes(step, ctx)):
        return False  # lengths that vary per batch: TFP307's
    drop = keyword(step, "drop_remainder")
    if drop is None and len(step.args) >= (3 if method == "padded_batch" else 2):
        drop = step.args[-1]
    if drop is not None:
        return type(drop) is ast.Constant and drop.value is False  # a variable: the author chose
    return not any(s.func.attr == "repeat" for s in before)


class PartialBatchRetrace(Rule):
    code = "TFP309"
    name = "partial-batch-retrace"
    message = ("tf.function fed batches without drop_remainder: the last, smaller batch traces "
               "it once more")
    hint = ("batch(..., drop_remainder=True) if the remainder can go, or give the tf.function "
            "an input_signature with None for the batch dimension (or reduce_retracing=True)")
    claims = ("S13",)
    group = "preview"
    node_types = (ast.Call,)
    requires_imports = frozenset({"tensorflow"})
    docs = """\
## What it does
Finds a `tf.function` without `input_signature` or `reduce_retracing=True` called in a loop
over a `tf.data` pipeline that ends in `batch`/`padded_batch` without `drop_remainder=True`
(and is not repeated before it): the last batch of each pass is smaller than the others.
The finding is at the `tf.function`.

## Why is this bad?
A `tf.function` traces one graph per new input shape (claim S13): the smaller last batch
traces and optimises the whole function a second time. Measured here on TF 2.21: 12
elements batched by 5 traced the function twice, once with `drop_remainder=True`. The cost is
one extra trace per function, not per epoch: it matters for large steps, XLA-compiled ones
(`jit_compile=True` compiles again) and short runs.

## Example
```python
ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(64)
@tf.function
def train_step(x, y):
    ...
for x, y in ds:
    train_step(x, y)
```

## Use instead
```python
ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(64, drop_remainder=True)
```
or `@tf.function(input_signature=[tf.TensorSpec([None, 28, 28], tf.float32), ...])`, or
`@tf.function(reduce_retracing=True)`.

## Fix safety
No automatic fix: dropping the remainder drops data, and a signature needs the dtypes and
shapes.

## Known limitations
Only loops of this module over a pipeline it builds (re-assignments followed) and calls that
pass the loop's elements are seen; a `drop_remainder` given as a variable is taken as the
author's choice, and a pipeline repeated before it is batched as having no partial batch.
"""
    valid = (
        # The remainder dropped: every batch the same shape.
        Valid("""
            import tensorflow as tf
            ds = tf.data.Dataset.range(100).batch(32, drop_remainder=True)
            @tf.function
            def step(x):
                return tf.reduce_sum(x)
            for x in ds:
                step(x)
        """),
        # Repeated before batching: every batch is full.
        Valid("""
            import tensorflow as tf
            train = tf.data.Dataset.range(100).repeat().shuffle(64).batch(32).prefetch(1)
            @tf.function
            def step(x):
                return tf.reduce_sum(x)
            for i, x in enumerate(train.take(1000), 1):
                step(x)
        """),
        # A signature with a None batch dimension: one trace.
        Valid("""
            import tensorflow as tf
            ds = tf.data.Dataset.range(100).batch(32)
            @tf.function(input_signature=[tf.TensorSpec([None], tf.int64)])
            def step(x):
                return tf.reduce_sum(x)
            for x in ds:
                step(x)
        """),
        # The loop's elements are not what the tf.function gets.
        Valid("""
            import tensorflow as tf
            ds = tf.data.Dataset.range(100).batch(32)
            @tf.function
            def tick():
                return tf.constant(1)
            for x in ds:
                tick()
        """),
    )
    invalid = (
        Invalid("""
            import tensorflow as tf
            ds = tf.data.Dataset.range(100).shuffle(100).batch(32)
            @tf.function
            def step(x):
                return tf.reduce_sum(x)
            for epoch in range(5):
                for x in ds:
                    step(x)
        """, count=1, lines=(3,)),
        # A method, tf.function with other options.
        Invalid("""
            import tensorflow as tf
            class Trainer:
                def __init__(self, xs):
                    self.xs = xs
                @tf.function(jit_compile=True)
                def step(self, x):
                    return tf.reduce_sum(x * 2.0)
                def fit(self):
                    ds = tf.data.Dataset.from_tensor_slices(self.xs).batch(32)
                    for x in ds:
                        self.step(x)
        """, count=1, lines=(5,)),
        # Wrapped as f = tf.function(g); drop_remainder=False spelled out.
        Invalid("""
            import tensorflow as tf
            def g(x):
                return tf.reduce_mean(x)
            f = tf.function(g)
            for x in tf.data.Dataset.range(10).batch(3, drop_remainder=False):
                f(x)
        """, count=1, lines=(4,)),
    )

    def applies_to(self, ctx: Context) -> bool:
        return ctx.spells_tf_function and "batch" in ctx.source

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Finding]:
        fed = batches_into_tf_function(ctx, node)  # type: ignore[arg-type]
        if fed is None:
            return
        batches, target = fed
        if _partial_last_batch(batches.batching, batches.before, ctx):
            yield self.finding(ctx, target.creation)
