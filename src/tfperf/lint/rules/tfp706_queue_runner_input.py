"""TFP706: a TF1 queue-runner input pipeline (``tf.train.shuffle_batch`` and friends)."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from tfperf.core.findings import Finding
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context

# The calls that batch examples from input queues, filled by queue-runner threads.
_QUEUE_BATCHES = frozenset(f"tensorflow.{p}train.{n}" for p in ("", "compat.v1.") for n in (
    "batch", "shuffle_batch", "batch_join", "shuffle_batch_join", "maybe_batch",
    "maybe_shuffle_batch", "maybe_batch_join", "maybe_shuffle_batch_join"))


class QueueRunnerInput(Rule):
    code = "TFP706"
    name = "queue-runner-input"
    message = ("queue-runner input pipeline: examples go through queues filled by "
               "queue-runner threads; tf.data is faster when each example needs work")
    hint = ("build the input with tf.data: Dataset.from_tensor_slices/TFRecordDataset(files)"
            ".map(parse, num_parallel_calls=tf.data.AUTOTUNE).shuffle(n).batch(b).prefetch(1)")
    claims = ("S19",)
    group = "preview"
    node_types = (ast.Call,)
    requires_imports = frozenset({"tensorflow"})
    docs = """\
## What it does
Finds TF1 queue-based batching: `tf.train.batch`, `tf.train.shuffle_batch`, their `_join` and
`maybe_` forms (also under `tf.compat.v1.train`), which take examples from input queues
(`string_input_producer`, `slice_input_producer`, a reader's `read`) that queue-runner threads
fill (`tf.train.start_queue_runners`).

## Why is this bad?
Each queue runner is a Python thread that calls `session.run` on its enqueue op over and over,
one example per run by default, with one thread per `shuffle_batch` unless `num_threads` says
otherwise; every example's parsing and augmentation runs in those runs. A `tf.data` pipeline
runs the same per-example work on TensorFlow's own threads, in parallel when asked
(`num_parallel_calls`, and TF ≥ 2.x parallelises stateless maps by itself), and overlaps it
with training (claim S19: the input pipeline's structure decides throughput). Measured here on
TF 2.21 CPU in graph mode (`benchmarks/bench_queue_runner_vs_data.py`, batches of 64,
interleaved rounds): with an image's per-example work (resize to 128x128, blur) the
queue-runner pipeline took 1.60–1.75x the time of the tf.data one (1.51x with tf.data's
automatic map parallelisation turned off, 1.24x against four enqueue threads,
`num_threads=4`); with almost no per-example work the two were even (0.91–0.99x). TF
deprecated queue runners in 1.x for tf.data, and a real fix in the recall set
(`fixes.csv` F036) reports training going from 2 h to 15 min after this change.

## Example
```python
filename_queue = tf.train.string_input_producer(files)
_, record = tf.TFRecordReader().read(filename_queue)
image, label = parse(record)
images, labels = tf.train.shuffle_batch([image, label], batch_size=64, capacity=2000,
                                        min_after_dequeue=1000)
```

## Use instead
```python
ds = (tf.data.TFRecordDataset(files)
      .map(parse, num_parallel_calls=tf.data.AUTOTUNE)
      .shuffle(1000).repeat().batch(64).prefetch(1))
images, labels = tf.compat.v1.data.make_one_shot_iterator(ds).get_next()
```

## Fix safety
No automatic fix: the reader, the parsing and the epoch handling (`num_epochs`,
`OutOfRangeError`) move into the dataset, and the coordinator code goes away.

## Known limitations
Queue pipelines whose per-example work is light cost about what tf.data costs (measured
above): the finding is then minor; so is a pipeline with several enqueue threads, where the
gap measured smaller. The rule cannot see how much work an example takes. The measurement
is on TF 2.21; code pinned to an old TF 1.x may see less of the gap (tf.data there did not
parallelise maps by itself).
"""
    valid = (
        # The tf.data form of the same pipeline.
        Valid("""
            import tensorflow as tf
            ds = tf.data.TFRecordDataset(['a.tfrecord']).map(
                lambda r: tf.io.parse_tensor(r, tf.float32), num_parallel_calls=tf.data.AUTOTUNE)
            ds = ds.shuffle(1000).repeat().batch(64)
        """),
        # Dataset.batch, not the queue-based tf.train.batch.
        Valid("""
            import tensorflow as tf
            ds = tf.data.Dataset.range(100).batch(32)
        """),
        # A user's own `train` module with a `batch` function.
        Valid("""
            import tensorflow as tf
            import train
            images = train.batch([1, 2, 3], 2)
        """),
    )
    invalid = (
        # The shape of a real fix: file queue, reader, shuffled batches.
        Invalid("""
            import tensorflow as tf
            def inputs(files, batch_size):
                file_queue = tf.compat.v1.train.string_input_producer(files)
                _, record = tf.compat.v1.TFRecordReader().read(file_queue)
                image = tf.io.decode_jpeg(record)
                return tf.compat.v1.train.shuffle_batch(
                    [image], batch_size=batch_size, capacity=2000, min_after_dequeue=1000)
        """, count=1, lines=(6,)),
        # Sliced arrays batched in order, aliased import.
        Invalid("""
            import tensorflow as tensorflow_alias
            x, y = tensorflow_alias.compat.v1.train.slice_input_producer([xs, ys])
            bx, by = tensorflow_alias.compat.v1.train.batch([x, y], batch_size=32)
        """, count=1, lines=(3,)),
        # TF1's top-level spelling, several reader threads joined.
        Invalid("""
            import tensorflow as tf
            def read(files, reader):
                queue = tf.train.string_input_producer(files, num_epochs=10)
                examples = [reader.read(queue) for _ in range(4)]
                return tf.train.shuffle_batch_join(examples, batch_size=128, capacity=4096,
                                                   min_after_dequeue=1024)
        """, count=1, lines=(5,)),
    )

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Finding]:
        func = node.func
        last = func.attr if type(func) is ast.Attribute else getattr(func, "id", None)
        if last is None or "batch" not in last:
            return  # cheap test first: every call of the module comes here
        if ctx.call_qualname(node) in _QUEUE_BATCHES:
            yield self.finding(ctx, node)
