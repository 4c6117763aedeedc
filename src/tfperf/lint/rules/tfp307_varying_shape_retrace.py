"""TFP307: a tf.function fed batches whose shapes vary: one trace per new shape."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import TYPE_CHECKING

from tfperf.core.findings import Finding
from tfperf.lint.analysis.pipelines import batches_into_tf_function, static_padded_shapes
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context

if TYPE_CHECKING:
    from tfperf.analysis.project import Project


def _varying_lengths(step: ast.Call, ctx: Context | None = None) -> str | None:
    """How the batches out of ``step`` vary in more than their first dimension, for the
    message; ``None``: they do not (or the rule cannot tell)."""
    method = step.func.attr
    if method == "padded_batch":
        if not static_padded_shapes(step, ctx):
            return "padded to each batch's longest element: one trace per new length"
    elif method == "bucket_by_sequence_length":
        return "bucketed by length: one trace per bucket and batch length"
    return None


def _relax_hint(tf: list[int]) -> str:
    """What helps on the TensorFlow the module targets (the oldest release its pin admits):
    ``reduce_retracing`` exists from TF 2.9, ``experimental_relax_shapes`` before it."""
    oldest = tuple(tf[:2]) if len(tf) >= 2 else (2, 99)
    relax = "reduce_retracing=True" if oldest >= (2, 9) else "experimental_relax_shapes=True"
    return ("give the tf.function an input_signature with None for the leading dimension "
            f"(tf.TensorSpec([None, ...])), or {relax}; or pad to a few fixed sizes")


class VaryingShapeRetrace(Rule):
    code = "TFP307"
    name = "varying-shape-retrace"
    message = "tf.function fed batches of varying shape: a new trace per shape"
    hint = ("give the tf.function an input_signature with None for the varying dimensions, "
            "or reduce_retracing=True")
    claims = ("S13",)
    group = "perf"
    node_types = (ast.Call,)
    requires_imports = frozenset({"tensorflow"})
    docs = """\
## What it does
Finds a `tf.function` without `input_signature` or `reduce_retracing=True` called in a loop
over a `tf.data` pipeline whose batches change length from batch to batch: `padded_batch`
without fixed `padded_shapes` (each batch is padded to its own longest element) or
`bucket_by_sequence_length`. The finding is at the `tf.function`, which is what to change.
(A last, smaller batch alone costs one extra trace: TFP309.)

## Why is this bad?
A `tf.function` traces one graph per input shape it has not seen (claim S13; TF's guide,
"Controlling retracing"). Padded batches of text or sequences take a new length almost every
step: measured here on TF 2.21, a loop over 15 padded batches of distinct lengths traced the
function 15 times, 3 times with `reduce_retracing=True`.

## Example
```python
ds = examples.padded_batch(64)
@tf.function
def train_step(inp, tar):
    ...
for inp, tar in ds:
    train_step(inp, tar)
```

## Use instead
```python
@tf.function(input_signature=[tf.TensorSpec([None, None], tf.int64),
                              tf.TensorSpec([None, None], tf.int64)])
def train_step(inp, tar):
    ...
```
or `@tf.function(reduce_retracing=True)`, or fixed `padded_shapes` when the lengths are
bounded.

## Fix safety
No automatic fix: the right signature (dtypes, which dimensions vary) needs a person, and
relaxed shapes make static shapes (`x.shape[1]`) `None` inside the function.

## Known limitations
Only loops of this module over a pipeline it builds (re-assignments followed) and calls that
pass the loop's elements are seen. `padded_shapes` through names are read where each name
is assigned once (`MAX_LEN = 40`, `SHAPES = ([MAX_LEN], [MAX_LEN])`); a parameter or an
attribute is taken as unknown (padded to each batch's longest).
"""
    valid = (
        # An input_signature with None dimensions: one trace.
        Valid("""
            import tensorflow as tf
            ds = tf.data.Dataset.range(100).map(lambda n: tf.range(n)).padded_batch(8)
            @tf.function(input_signature=[tf.TensorSpec([None, None], tf.int64)])
            def step(x):
                return tf.reduce_sum(x)
            for x in ds:
                step(x)
        """),
        # Fixed padded shapes and the remainder dropped: every batch the same shape.
        Valid("""
            import tensorflow as tf
            ds = tf.data.Dataset.range(100).map(lambda n: tf.range(n % 10))
            ds = ds.padded_batch(8, padded_shapes=[10], drop_remainder=True)
            @tf.function
            def step(x):
                return tf.reduce_sum(x)
            for x in ds:
                step(x)
        """),
        # Plain batches: only the last one may be smaller (one more trace, TFP309's).
        Valid("""
            import tensorflow as tf
            ds = tf.data.Dataset.range(100).batch(32)
            @tf.function
            def step(x):
                return tf.reduce_sum(x)
            for x in ds:
                step(x)
        """),
        # reduce_retracing generalises the shapes.
        Valid("""
            import tensorflow as tf
            ds = tf.data.Dataset.range(100).batch(32)
            @tf.function(reduce_retracing=True)
            def step(x):
                return tf.reduce_sum(x)
            for epoch in range(10):
                for x in ds:
                    step(x)
        """),
        # A plain Python function: nothing is traced.
        Valid("""
            import tensorflow as tf
            ds = tf.data.Dataset.range(100).batch(32)
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
        # The transformer tutorial's shape: padded batches of sentences.
        Invalid("""
            import tensorflow as tf
            train = tf.data.Dataset.range(1, 50).map(lambda n: (tf.range(n), tf.range(n)))
            train = train.shuffle(64).padded_batch(16, padded_shapes=([-1], [-1]))
            train = train.prefetch(tf.data.AUTOTUNE)
            @tf.function
            def train_step(inp, tar):
                return tf.reduce_sum(inp) + tf.reduce_sum(tar)
            for epoch in range(20):
                for (batch, (inp, tar)) in enumerate(train):
                    train_step(inp, tar)
        """, count=1, lines=(5,)),
        # A method, tf.function with other options, padded without padded_shapes.
        Invalid("""
            import tensorflow as tf
            class Trainer:
                def __init__(self, texts):
                    self.texts = texts
                @tf.function(jit_compile=True)
                def step(self, x):
                    return tf.reduce_sum(x * 2)
                def fit(self):
                    ds = tf.data.Dataset.from_generator(self.texts, output_signature=None)
                    for x in ds.padded_batch(32, drop_remainder=True):
                        self.step(x)
        """, count=1, lines=(5,)),
        # Wrapped as f = tf.function(g); bucketing by length.
        Invalid("""
            import tensorflow as tf
            def g(x):
                return tf.reduce_mean(x)
            f = tf.function(g)
            ds = tf.data.Dataset.range(100).map(lambda n: tf.range(n))
            ds = ds.bucket_by_sequence_length(lambda x: tf.size(x), [10, 20], [8, 8, 8])
            for x in ds:
                f(x)
        """, count=1, lines=(4,)),
        # Stop 39 wave 2: padded_shapes through names, padded to each batch's longest.
        Invalid("""
            import tensorflow as tf
            LONGEST = None
            SHAPES = ([LONGEST], [LONGEST])
            ds = pairs.padded_batch(64, padded_shapes=SHAPES, drop_remainder=True)
            @tf.function
            def train_step(src, tgt):
                return tf.reduce_sum(src) + tf.reduce_sum(tgt)
            for src, tgt in ds:
                train_step(src, tgt)
        """, count=1, lines=(5,)),
    )
    valid = (  # type: ignore[assignment]
        *valid,
        # Stop 39 wave 2 (held-out precision round 9, a seq2seq trainer): fixed padded_shapes
        # through a module constant, the remainder dropped: one batch shape, one trace.
        Valid("""
            import tensorflow as tf
            MAX_LENGTH = 40
            @tf.function
            def train_step(src, tgt):
                return tf.reduce_sum(src) + tf.reduce_sum(tgt)
            def main(pairs):
                ds = pairs.padded_batch(64, padded_shapes=([MAX_LENGTH + 2], [MAX_LENGTH + 2]),
                                        drop_remainder=True)
                for src, tgt in ds:
                    train_step(src, tgt)
        """),
        Valid("""
            import tensorflow as tf
            MAX_LEN = 40
            SHAPES = ([MAX_LEN], [MAX_LEN])
            ds = pairs.padded_batch(64, padded_shapes=SHAPES, drop_remainder=True)
            @tf.function
            def train_step(src, tgt):
                return tf.reduce_sum(src) + tf.reduce_sum(tgt)
            for src, tgt in ds:
                train_step(src, tgt)
        """),
    )

    # Issue 25: tensors whose leading size changes per iteration (rows picked by a mask, a
    # growing buffer, a moving slice), also across modules and in a notebook.
    valid = (  # type: ignore[assignment]
        *valid,
        Valid("""
            import numpy as np
            import tensorflow as tf
            @tf.function(input_signature=[tf.TensorSpec([None], tf.float64)])
            def replay(batch):
                return tf.reduce_mean(batch)
            def train(env):
                buffer = []
                done = False
                while not done:
                    obs, done = env.step()
                    buffer.append(obs)
                    replay(np.array(buffer))
        """, spelling="loop: while, a growing buffer"),
        Valid("""
            import tensorflow as tf
            @tf.function
            def group_loss(x):
                return tf.reduce_mean(x)
            def losses(x, groups, n):
                for g in groups:
                    rows = tf.gather(x, tf.range(n))
                    group_loss(rows)
        """, spelling="name: the same rows each time"),
        Valid("""
            import tensorflow as tf
            @tf.function(reduce_retracing=True)
            def centroid(points):
                return tf.reduce_mean(points, axis=0)
            def centroids(x, labels, k):
                return [centroid(x[labels == c]) for c in range(k)]
        """, spelling="index: a mask, relaxed"),
        Valid("""
            import tensorflow as tf
            @tf.function
            def step(batch):
                return tf.reduce_sum(batch)
            def run(x, n):
                for i in range(0, n, 32):
                    step(x[i:i + 32])
        """, spelling="index: fixed-width slices"),
        Valid("""
            from model import fit_batch
            import numpy as np
            memory = []
            for t in range(1000):
                memory.append(t)
                fit_batch(np.array(memory[-64:]))
        """, files={"model.py": """
            import tensorflow as tf
            @tf.function(input_signature=[tf.TensorSpec([None], tf.float64)])
            def fit_batch(batch):
                return tf.reduce_mean(batch)
        """}, spelling="module"),
        Valid("""
            import tensorflow as tf
            @tf.function(reduce_retracing=True)
            def total(x):
                return tf.reduce_sum(x)
            # %%
            for t in range(1, 100):
                total(tf.range(t))
        """, notebook=True, spelling="notebook"),
    )
    invalid = (  # type: ignore[assignment]
        *invalid,
        Invalid("""
            import numpy as np
            import tensorflow as tf
            @tf.function
            def replay(batch):
                return tf.reduce_mean(batch)
            def train(env):
                buffer = []
                done = False
                while not done:
                    obs, done = env.step()
                    buffer.append(obs)
                    replay(np.array(buffer))
        """, count=1, lines=(4,), spelling="loop: while, a growing buffer"),
        Invalid("""
            import tensorflow as tf
            @tf.function
            def centroid(points):
                return tf.reduce_mean(points, axis=0)
            def centroids(x, labels, k):
                return [centroid(x[labels == c]) for c in range(k)]
        """, count=1, lines=(3,), spelling="index: a mask"),
        Invalid("""
            import tensorflow as tf
            @tf.function
            def encode(prefix):
                return tf.reduce_sum(prefix, axis=0)
            def prefixes(seq, n):
                out = []
                for t in range(1, n):
                    out.append(encode(seq[:t]))
                return out
        """, count=1, lines=(3,), spelling="index: a moving slice"),
        Invalid("""
            import tensorflow as tf
            @tf.function
            def group_loss(x):
                return tf.reduce_mean(x)
            def losses(x, groups):
                for g in groups:
                    rows = tf.boolean_mask(x, tf.equal(groups, g))
                    group_loss(rows)
        """, count=1, lines=(3,), spelling="name: tf.boolean_mask"),
        Invalid("""
            from model import fit_batch
            import numpy as np
            memory = []
            for t in range(1000):
                memory.append(t)
                fit_batch(np.array(memory))
        """, files={"model.py": """
            import tensorflow as tf
            @tf.function
            def fit_batch(batch):
                return tf.reduce_mean(batch)
        """}, count=1, lines=(), spelling="module"),
        Invalid("""
            import tensorflow as tf
            @tf.function
            def total(x):
                return tf.reduce_sum(x)
            # %%
            x = tf.random.normal([100])
            for t in range(1, 100):
                total(x[:t])
        """, count=1, notebook=True, spelling="notebook"),
    )

    def applies_to(self, ctx: Context) -> bool:
        return ctx.spells_tf_function and ("padded_batch" in ctx.source
                                           or "bucket_by" in ctx.source)

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Finding]:
        fed = batches_into_tf_function(ctx, node)  # type: ignore[arg-type]
        if fed is None:
            return
        batches, target = fed
        how = _varying_lengths(batches.batching, ctx)
        if how is None:
            return
        yield self.finding(ctx, target.creation,
                           f"tf.function fed batches of varying shape ({how})")

    def check_project(self, project: Project) -> Iterator[Finding]:
        """A ``tf.function`` (of any module) called per iteration of an eager loop with a
        tensor whose leading size changes per iteration: rows picked by a mask or a
        condition, a slice whose bound moves, a buffer grown by the loop."""
        reported: set[tuple[str, str]] = set()
        for site, (module, fn) in project.sites():
            call = site.call
            if call.traced or call.guarded or not call.loop or call.star:
                continue
            if fn.traced not in ("decorated", "wrapped") or fn.signature or fn.relaxed:
                continue
            growing = [a for a in call.args if a.leading]
            key = (module.path, fn.qualname)
            if not growing or key in reported:
                continue
            reported.add(key)
            text = ", ".join(a.text for a in growing)
            yield self.project_finding(
                module.path, fn.pos,
                f"tf.function fed tensors whose leading size changes per iteration ({text} at "
                f"{project.where(site)}): a new trace per size",
                hint=_relax_hint(module.tf))

