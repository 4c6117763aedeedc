"""TFP604: cache() after random augmentation, or shuffle() after batch()."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from tfperf.core.findings import Finding
from tfperf.lint.analysis.assignments import assigned_value
from tfperf.lint.analysis.pipelines import is_random_op, is_tf_dataset, map_function, pipeline
from tfperf.lint.analysis.syntax import body_nodes, keyword, method_call
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context

SEQUENTIAL = frozenset({"keras.Sequential", "keras.models.Sequential"})


def _random_layer(ctx: Context, value: ast.AST | None) -> bool:
    """``keras.layers.RandomFlip(...)`` or a ``keras.Sequential([...])`` holding one."""
    if type(value) is not ast.Call:
        return False
    q = ctx.qualname(value.func)
    if is_random_op(q):
        return True
    if q in SEQUENTIAL:
        layers = value.args[0] if value.args else keyword(value, "layers")
        return type(layers) is ast.List and any(_random_layer(ctx, e) for e in layers.elts)
    return False


def augments_randomly(ctx: Context, fn: ast.AST) -> bool:
    """``fn`` calls a stateful random op or a Keras random-augmentation layer."""
    for n in body_nodes(fn):
        if type(n) is not ast.Call:
            continue
        if is_random_op(ctx.qualname(n.func)):
            return True
        if type(n.func) is ast.Name and _random_layer(ctx, assigned_value(ctx, n.func)):
            return True
    return False


_BATCHING = ("batch", "padded_batch", "bucket_by_sequence_length", "group_by_window",
             "ragged_batch")


def _batched_again(ctx: Context, shuffle: ast.Call) -> bool:
    """The shuffled elements are batched later (``ds.batch(101).map(split).shuffle(10000)
    .batch(64)``, in one chain or through names): the first ``batch`` cut the examples
    (sequences of a text, windows of a series), and shuffling them is the right order."""
    by_attr, _ = ctx.call_groups()
    for attr in _BATCHING:
        for call in by_attr.get(attr, ()):
            if type(call.func) is not ast.Attribute:
                continue
            steps = pipeline(ctx, call.func.value).steps
            at = next((i for i, step in enumerate(steps) if step is shuffle), None)
            # `.unbatch().batch(13)` re-batches the same batches (a test batch): not examples
            if at is not None and not any(step.func.attr in ("unbatch", "rebatch")
                                          for step in steps[at + 1:]):
                return True
    return False


class PipelineOrder(Rule):
    code = "TFP604"
    name = "pipeline-order"
    message = "cache() after a random augmentation map: every epoch replays the first epoch's draws"
    hint = "cache before the random map; shuffle before batch"
    claims = ("S19",)
    group = "correctness"  # precise, but costs model quality, not time (docs: Known limitations)
    node_types = (ast.Call,)
    callee_names = frozenset({"cache", "shuffle"})
    docs = """\
## What it does
In a `tf.data` pipeline, finds `cache()` placed after a `map` whose function draws random
numbers (`tf.random.*`, `tf.image.random_*`, Keras `Random*` layers), and `shuffle()`
placed after `batch()` when nothing was shuffled before the batch.

## Why is this bad?
`cache()` stores the elements of the first pass and replays them: a random augmentation
before it runs once, and every later epoch sees the same "random" images, which defeats the
augmentation (and hides that the expensive decode could have been cached instead). The TF
guide's order is: read, decode, `cache`, then augment randomly, `shuffle`, `batch`,
`prefetch` (claim S19). `shuffle` after `batch` only reorders whole batches: the same examples
share a batch in every epoch.

## Example
```python
ds = ds.map(decode).map(random_augment).cache().batch(32)
ds = ds.batch(32).shuffle(1000)
```

## Use instead
```python
ds = ds.map(decode).cache().map(random_augment).batch(32)
ds = ds.shuffle(1000).batch(32)
```

## Fix safety
No automatic fix: moving `cache()` changes what is stored (and its memory), and moving
`shuffle` changes the buffer's meaning (elements instead of batches).

## Known limitations
Shuffling batches is not reported when the shuffled elements are batched again (the first
`batch` cut a text into sequences or a series into windows: the TF text-generation idiom
`ds.batch(seq_len + 1, drop_remainder=True).map(split).shuffle(n).batch(64)`), when
elements were shuffled before batching too, or after `padded_batch` and
bucketing (where it is the usual idiom); stateless random ops (same draw for a given seed)
are not random augmentation here.

In the `correctness` group (off by default; `--select correctness`) although precise (12 of
14 findings true or minor on the judged repositories, both false ones now left out): a
frozen augmentation and batches that always hold the same examples cost model quality, not
time, so it does not belong in the `perf` group (docs/lint.md, "Measured precision and
recall").
"""
    valid = (
        Valid("""
            import tensorflow as tf
            def make(ds: tf.data.Dataset):
                ds = ds.cache()
                ds = ds.map(lambda x: tf.image.random_flip_left_right(x))
                return ds.shuffle(100).batch(8)
        """),
        # Deterministic preprocessing before cache is the point of cache.
        Valid("""
            import tensorflow as tf
            def decode(x):
                return tf.io.decode_png(x)
            def make(ds: tf.data.Dataset):
                return ds.map(decode).cache()
        """),
        # Batches shuffled on purpose after shuffling the elements.
        Valid("""
            import tensorflow as tf
            ds = tf.data.Dataset.range(100).shuffle(100).batch(10).shuffle(10)
        """),
        # Text cut into sequences by batch(), the sequences shuffled, then batched: the
        # text-generation idiom (in one chain, and through names across cells).
        Valid("""
            import tensorflow as tf
            ids = tf.data.Dataset.from_tensor_slices(tf.range(10000))
            seqs = ids.batch(101, drop_remainder=True).map(lambda s: (s[:-1], s[1:]))
            ds = seqs.shuffle(10000).batch(64, drop_remainder=True)
            chunks = ids.batch(41, drop_remainder=True)
            chunks = chunks.shuffle(500)
            train = chunks.batch(32)
        """),
        # (Batches shuffled, then unbatched and batched again for a test batch: still
        # reported, see the INVALID examples.)
        # Bucketed batches are often shuffled.
        Valid("""
            import tensorflow as tf
            ds = tf.data.Dataset.range(100).padded_batch(10).shuffle(10)
        """),
        # Stateless random ops repeat for a seed: not augmentation that cache would freeze.
        Valid("""
            import tensorflow as tf
            ds = tf.data.Dataset.range(4).map(
                lambda x: tf.random.stateless_uniform([2], seed=[1, 2])).cache()
        """),
        # NumPy's shuffle and a user's own cache.
        Valid("""
            import numpy as np
            import tensorflow as tf
            x = np.arange(10)
            np.random.shuffle(x)
            def cache(v):
                return v
        """),
    )
    invalid = (
        # Whole batches shuffled; a later `unbatch().batch(13)` only takes a test batch.
        Invalid("""
            import tensorflow as tf
            train = tf.data.Dataset.range(1000).batch(256, drop_remainder=True).cache()
            train = train.shuffle(50)
            probe = next(iter(train.unbatch().batch(13)))
        """, count=1, lines=(3,)),
        Invalid("""
            import tensorflow as tf
            def augment(img):
                return tf.image.random_brightness(img, 0.2)
            def make(ds: tf.data.Dataset):
                return ds.map(augment).cache().batch(32)
        """, count=1, lines=(5,)),
        Invalid("""
            import tensorflow as tensorflow_alias
            ds = tensorflow_alias.data.Dataset.range(100).batch(10)
            ds = ds.shuffle(1000)
        """, count=1, lines=(3,)),
        # A Keras augmentation model used in the map; `from tensorflow.keras import layers`.
        Invalid("""
            import tensorflow as tf
            from tensorflow.keras import layers
            aug = tf.keras.Sequential([layers.RandomFlip('horizontal'), layers.RandomZoom(0.1)])
            def make(ds: tf.data.Dataset):
                ds = ds.map(lambda x, y: (aug(x, training=True), y))
                ds = ds.cache()
                return ds
        """, count=1, lines=(6,)),
    )

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Finding]:
        if not method_call(node, "cache", "shuffle") or not ctx.imports_tf \
                or not is_tf_dataset(ctx, node.func.value):
            return
        steps = pipeline(ctx, node).steps
        if not steps or steps[-1] is not node:
            return
        before = steps[:-1]
        if node.func.attr == "cache":
            for step in before:
                if step.func.attr == "map":
                    fn = map_function(ctx, step)
                    if fn is not None and augments_randomly(ctx, fn):
                        yield self.finding(ctx, node)
                        return
            return
        names = [s.func.attr for s in before]
        batching = [i for i, n in enumerate(names)
                    if n in ("batch", "padded_batch", "bucket_by_sequence_length",
                             "group_by_window", "ragged_batch", "unbatch", "rebatch")]
        if not batching or names[batching[-1]] != "batch" or "shuffle" in names:
            return
        if _batched_again(ctx, node):
            return  # the first batch() made the examples (text cut into sequences)
        yield self.finding(ctx, node, "shuffle() after batch(): reorders whole batches, the "
                                      "same examples stay together every epoch",
                           hint="shuffle the elements before batch()")
