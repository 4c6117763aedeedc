"""TFP609: ``prefetch`` placed before ``batch``, and nothing prefetches the batches."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Any

from tfperf.core.findings import Finding
from tfperf.lint.analysis.pipelines import pipeline
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context

_BATCHING = frozenset({"batch", "padded_batch"})
# From TF 2.12 ``inject_prefetch`` appends prefetch(AUTOTUNE) after the last step itself.
_INJECTED_FROM = (2, 12)


def _prefetched_later(ctx: Context, batch: ast.Call) -> bool:
    """A ``prefetch`` applied after ``batch``: chained on it, or any ``.prefetch(...)``
    later in the same function (or module) that builds it (a name re-assigned, another
    branch: not told apart, so not reported)."""
    p: Any = ctx.parent(batch)
    while type(p) is ast.Attribute:
        outer: Any = ctx.parent(p)
        if type(outer) is not ast.Call:
            break
        if p.attr == "prefetch":
            return True
        p = ctx.parent(outer)
    scope: Any = ctx.enclosing_function(batch) or ctx.tree
    end = getattr(batch, "end_lineno", batch.lineno)
    n: Any
    for n in ast.walk(scope):
        if type(n) is ast.Call and type(n.func) is ast.Attribute and n.func.attr == "prefetch" \
                and n.lineno > end:
            return True
    return False


class PrefetchBeforeBatch(Rule):
    code = "TFP609"
    name = "prefetch-before-batch"
    message = ("prefetch() before batch(): it buffers single elements, and each batch is "
               "still assembled while the model waits")
    hint = "move the prefetch to the end of the pipeline: .batch(n).prefetch(tf.data.AUTOTUNE)"
    claims = ("S19",)
    group = "perf"
    node_types = (ast.Call,)
    callee_names = frozenset(_BATCHING)
    needs_tf = True
    docs = """\
## What it does
Finds a `tf.data` pipeline whose `prefetch` comes before its `batch` (or `padded_batch`),
with no `prefetch` after the batch, where the targeted TensorFlow does not append one by
itself (before 2.12). The finding is on the chain that holds the misplaced `prefetch`.

## Why is this bad?
`prefetch` overlaps the work *before* it with the consumer. Placed before `batch`, it keeps
single elements ready, but `batch` (copying every element into the batch, and any step
after it) still runs on demand, while the training step waits. The TF data-performance
guide ends the pipeline with the prefetch: "add `prefetch` at the end of your input
pipeline" (claim S19). Development row F066 (DeepReg: "batch first then prefetch").

## Example
```python
ds = ds.shuffle(1000).prefetch(tf.data.AUTOTUNE).batch(32)
```

## Use instead
```python
ds = ds.shuffle(1000).batch(32).prefetch(tf.data.AUTOTUNE)
```

## Fix safety
No automatic fix: moving the prefetch is safe (same elements, same order) but the rule
does not rewrite chains spread over several statements.

## Known limitations
Not reported where the code targets TF 2.12 or later (`inject_prefetch` adds the final
prefetch), nor where any `prefetch` follows the batch in the same function (even in
another branch). A caller in another module that prefetches the returned batches is not
seen.
"""
    valid = (
        Valid("""
            import tensorflow as tf
            ds = tf.data.TFRecordDataset(files).map(parse).shuffle(1000)
            ds = ds.batch(32).prefetch(tf.data.experimental.AUTOTUNE)
            for epoch in range(5):
                for batch in ds:
                    step(batch)
        """, tf_version="2.4", spelling="loop: for in for"),
        # Prefetched twice: elements and batches.
        Valid("""
            import tensorflow as tf
            ds = tf.data.TFRecordDataset(files).map(parse)
            ds = ds.prefetch(64).padded_batch(32, padded_shapes=[None])
            ds = ds.prefetch(2)
            model.fit(ds, epochs=10)
        """, tf_version="2.4", spelling="index: padded_batch"),
        # TF 2.12 appends the final prefetch itself.
        Valid("""
            import tensorflow as tf
            def make(files, batch_size):
                ds = tf.data.TFRecordDataset(files).map(parse)
                ds = ds.prefetch(tf.data.AUTOTUNE)
                return ds.batch(batch_size)
        """, tf_version="2.12", spelling="name"),
        Valid("""
            from data import make
            model.fit(make(files, 32), epochs=10)
        """, files={"data.py": """
            import tensorflow as tf
            def make(files, batch_size):
                ds = tf.data.TFRecordDataset(files).map(parse)
                return ds.batch(batch_size).prefetch(tf.data.AUTOTUNE)
        """}, tf_version="2.4", spelling="module"),
        Valid("""
            import tensorflow as tf
            ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(1000)
            # %%
            ds = ds.batch(64).prefetch(1)
            model.fit(ds, epochs=3)
        """, notebook=True, tf_version="2.3", spelling="notebook"),
    )
    invalid = (
        Invalid("""
            import tensorflow as tf
            ds = tf.data.TFRecordDataset(files).map(parse).shuffle(1000)
            ds = ds.prefetch(tf.data.experimental.AUTOTUNE).batch(32)
            for epoch in range(5):
                for batch in ds:
                    step(batch)
        """, count=1, lines=(3,), tf_version="2.4", spelling="loop: for in for"),
        Invalid("""
            import tensorflow as tf
            ds = tf.data.TFRecordDataset(files).map(parse)
            ds = ds.prefetch(64).padded_batch(32, padded_shapes=[None])
            model.fit(ds, epochs=10)
        """, count=1, lines=(3,), tf_version="2.4", spelling="index: padded_batch"),
        # Through names, in a builder that returns the batches (DeepReg's shape, F066).
        Invalid("""
            import tensorflow as tf
            def make(files, batch_size, training):
                ds = tf.data.TFRecordDataset(files).map(parse)
                if training:
                    ds = ds.shuffle(1000).repeat()
                ds = ds.prefetch(tf.data.experimental.AUTOTUNE)
                ds = ds.batch(batch_size=batch_size, drop_remainder=training)
                return ds
        """, count=1, lines=(7,), tf_version="2.2", spelling="name"),
        Invalid("""
            from data import make
            model.fit(make(files, 32), epochs=10)
        """, files={"data.py": """
            import tensorflow as tf
            def make(files, batch_size):
                ds = tf.data.TFRecordDataset(files).map(parse)
                return ds.prefetch(tf.data.AUTOTUNE).batch(batch_size)
        """}, count=1, tf_version=">=2.4", spelling="module"),
        Invalid("""
            import tensorflow as tf
            ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(1000)
            # %%
            ds = ds.prefetch(1).batch(64)
            model.fit(ds, epochs=3)
        """, count=1, lines=(1,), notebook=True, tf_version="2.3", spelling="notebook"),
    )

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Finding]:
        if ctx.tf_version >= _INJECTED_FROM:
            return
        call: Any = node
        func = call.func
        if type(func) is not ast.Attribute or func.attr not in _BATCHING:
            return
        steps = pipeline(ctx, func.value).steps
        at = max((i for i, s in enumerate(steps) if s.func.attr == "prefetch"), default=-1)
        if at < 0 or any(s.func.attr in _BATCHING or s.func.attr == "unbatch"
                         for s in steps[at + 1:]):
            return
        if _prefetched_later(ctx, call):
            return
        yield self.finding(ctx, node)
