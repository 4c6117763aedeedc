"""TFP706: a TF1 queue-runner input pipeline (``tf.train.shuffle_batch`` and friends)."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from tfperf.core.findings import Finding
from tfperf.lint.analysis.callers import DEF_NODES, calls_of, resolve_def
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context

# The calls that batch examples from input queues, filled by queue-runner threads.
_QUEUE_BATCHES = frozenset(f"tensorflow.{p}train.{n}" for p in ("", "compat.v1.") for n in (
    "batch", "shuffle_batch", "batch_join", "shuffle_batch_join", "maybe_batch",
    "maybe_shuffle_batch", "maybe_batch_join", "maybe_shuffle_batch_join"))

# Per-example work a tf.data map would run in parallel: decoding, resizing or augmenting an
# image, an audio transform, Python run per example. Standardising an image, converting its
# dtype or cropping/padding it to a fixed box is as light as a cast or a slice. Without any
# of these (records decoded with decode_raw or decode_csv, parsed, reshaped, cast) the
# benchmark measured queues and tf.data even.
_WORK_PREFIXES = ("tensorflow.image.", "tensorflow.io.decode_", "tensorflow.signal.",
                  "tensorflow.contrib.signal.", "tensorflow.contrib.image.")
_WORK_CALLS = frozenset(f"tensorflow.{n}" for n in (
    "py_func", "py_function", "numpy_function", "decode_jpeg", "decode_png", "decode_image",
    "image_decode_jpeg"))
_LIGHT_IMAGE_OPS = frozenset({"per_image_standardization", "convert_image_dtype",
                              "resize_image_with_crop_or_pad", "crop_to_bounding_box",
                              "pad_to_bounding_box", "central_crop"})
_DECODE_LIGHT = frozenset({"tensorflow.io.decode_raw", "tensorflow.io.decode_csv",
                           "tensorflow.io.decode_base64", "tensorflow.io.decode_compressed",
                           "tensorflow.io.decode_json_example", "tensorflow.io.decode_proto"})
_V1 = "tensorflow.compat.v1."
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _is_work(ctx: Context, call: ast.Call) -> bool:
    q = ctx.call_qualname(call)
    if q is None:
        return False
    if q.startswith(_V1):  # `import tensorflow.compat.v1 as tf` spells every call so
        q = "tensorflow." + q[len(_V1):]
    if q in _DECODE_LIGHT:
        return False
    if q in _WORK_CALLS:
        return True
    return q.startswith(_WORK_PREFIXES) and q.rsplit(".", 1)[-1] not in _LIGHT_IMAGE_OPS


def _loads(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if type(n) is ast.Name and type(n.ctx) is ast.Load}


def _top_slice(ctx: Context, call: ast.AST) -> list[ast.AST]:
    """The module-level statements that compute what ``call`` (at top level) is given: its
    own statement and, walking back, each earlier one that binds a name still needed. A
    plain assignment rebinds its targets, so earlier bindings of them are not needed; a loop
    or block may not run, so it rebinds nothing. A notebook's cell that decodes images and
    writes them to TFRecords before another cell queues the records is not the queue's work."""
    body = list(getattr(ctx.tree, "body", ()))
    chain = {id(a) for a in (call, *ctx.ancestors(call))}
    at = next((i for i, b in enumerate(body) if id(b) in chain), None)
    if at is None:
        return []
    needed = _loads(call)
    out: list[ast.AST] = [body[at]]
    for earlier in reversed(body[:at]):
        if type(earlier) in _DEFINITIONS:
            continue
        bound = {n.id for n in ast.walk(earlier)
                 if type(n) is ast.Name and type(n.ctx) is ast.Store}
        if not bound & needed:
            continue
        out.append(earlier)
        if type(earlier) in (ast.Assign, ast.AnnAssign):  # `x += ...` keeps needing x
            needed -= bound
        needed |= _loads(earlier)
    return out


def _pipeline_code(ctx: Context, node: ast.AST) -> list[ast.AST]:
    """Where the batched examples are built: the ``def`` holding the batch call (lambdas
    climbed over), with its class's other methods and the defs that call it, and the
    module's defs these call, two levels deep. Module-level code (a top-level batch call, or
    a caller at top level) counts as the statements that compute what the call is given
    (:func:`_top_slice`), and the defs they call: not every function the module holds."""
    fn = next((f for f in ctx.enclosing_functions(node) if type(f) in DEF_NODES), None)
    roots: list[ast.AST] = [fn] if fn is not None else _top_slice(ctx, node)
    if fn is not None:
        cls = ctx.enclosing_class(fn)
        if cls is not None:
            roots += [m for m in cls.body if type(m) in DEF_NODES and m is not fn]
        for call in calls_of(ctx, fn):
            caller = next((f for f in ctx.enclosing_functions(call) if type(f) in DEF_NODES),
                          None)
            roots += [caller] if caller is not None else _top_slice(ctx, call)
    seen = {id(r) for r in roots}
    frontier = list(roots)
    for _ in range(2):
        nxt = []
        for root in frontier:
            for n in ast.walk(root):
                if type(n) is ast.Call:
                    d = resolve_def(ctx, n.func)
                    if d is not None and type(d) in DEF_NODES and id(d) not in seen:
                        seen.add(id(d))
                        nxt.append(d)
        roots += nxt
        frontier = nxt
    return roots


def _per_example_work(ctx: Context, node: ast.AST) -> bool:
    return any(type(n) is ast.Call and _is_work(ctx, n)
               for root in _pipeline_code(ctx, node) for n in ast.walk(root))


# What makes a stream of examples for queue runners: a producer's queue, a reader, a queue
# dequeued (each `_input_producer`, `*Reader`, `.dequeue*`, `read(queue)`, any spelling).
_SOURCE_LAST = ("input_producer", "Reader", "dequeue", "dequeue_many", "dequeue_up_to")
# A reader's `read(queue)`: given the queue (a file's `.read()` takes none).
_READS = ("read", "read_up_to")


def _one_fixed_example(ctx: Context, node: ast.AST) -> bool:
    """Nothing feeds the batch a stream: its pipeline code holds no producer, reader or
    dequeue, and the function around it reads none of its parameters (``main(_)`` that
    decodes one image file given by a flag). Each enqueue re-runs the same example (a
    one-image classify script's ``tf.train.batch(batch_size=1)``): nothing to overlap."""
    fn = next((f for f in ctx.enclosing_functions(node) if type(f) in DEF_NODES), None)
    if fn is not None:
        params = {a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs,
                                  fn.args.vararg, fn.args.kwarg) if a is not None}
        if (params - {"self", "cls"}) & _loads(fn):
            return False  # examples may come from the caller
    for root in _pipeline_code(ctx, node):
        for n in ast.walk(root):
            if type(n) is ast.Call:
                f = n.func
                last = f.attr if type(f) is ast.Attribute else getattr(f, "id", "")
                if last.endswith(_SOURCE_LAST) or (last in _READS and n.args):
                    return False
    return True


class QueueRunnerInput(Rule):
    code = "TFP706"
    name = "queue-runner-input"
    message = ("queue-runner input pipeline: examples go through queues filled by "
               "queue-runner threads; tf.data is faster when each example needs work")
    hint = ("build the input with tf.data: Dataset.from_tensor_slices/TFRecordDataset(files)"
            ".map(parse, num_parallel_calls=tf.data.AUTOTUNE).shuffle(n).batch(b).prefetch(1)")
    claims = ("S19",)
    group = "perf"
    node_types = (ast.Call,)
    # Every call `check` can report resolves to one of these: the engine hands it only
    # those (one dispatch per queue batch, not one per call of the module).
    callee_qualnames = _QUEUE_BATCHES
    requires_imports = frozenset({"tensorflow"})
    docs = """\
## What it does
Finds TF1 queue-based batching: `tf.train.batch`, `tf.train.shuffle_batch`, their `_join` and
`maybe_` forms (also under `tf.compat.v1.train`), which take examples from input queues
(`string_input_producer`, `slice_input_producer`, a reader's `read`) that queue-runner threads
fill (`tf.train.start_queue_runners`), when the examples get per-example work: the function
that batches them, its class's methods, the functions that call it (module-level code: its
statements outside any function) and the module's functions these call decode, resize or
augment an image (`tf.image`, `tf.io.decode_jpeg`...), run an audio transform (`tf.signal`)
or run Python per example (`tf.py_func`), under any spelling (`tf.compat.v1.io.decode_jpeg`
too).

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
image = tf.image.resize(tf.io.decode_jpeg(record), [128, 128])
images, labels = tf.train.shuffle_batch([image, label], batch_size=64, capacity=2000,
                                        min_after_dequeue=1000)
```

## Use instead
```python
ds = (tf.data.TFRecordDataset(files)
      .map(decode_and_resize, num_parallel_calls=tf.data.AUTOTUNE)
      .shuffle(1000).repeat().batch(64).prefetch(1))
images, labels = tf.compat.v1.data.make_one_shot_iterator(ds).get_next()
```

## Fix safety
No automatic fix: the reader, the parsing and the epoch handling (`num_epochs`,
`OutOfRangeError`) move into the dataset, and the coordinator code goes away.

## Known limitations
Queue pipelines whose per-example work is light cost about what tf.data costs (measured
above), so a pipeline that only decodes fixed-length or CSV records, parses, reshapes, casts,
standardises or crops to a fixed box is not reported. Per-example work that is none of the
image, audio or Python calls above (dequantising and padding long feature sequences, say) is
missed. At module level (a script, a notebook) the per-example work is what the
statements feeding the batch call compute, traced back through the names they bind: a cell
that decodes images once to write TFRecords is not the queue's work. Not reported where
nothing streams examples into the batch (no producer, reader or dequeue
in its pipeline code, and no parameter of the function around it read: one image decoded from
a file a flag names, batched by one). With several enqueue
threads the gap measured smaller: the finding is then minor
(the rule does not weigh `num_threads`). The measurement
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
        # Light per-example work (fixed-length records decoded, reshaped, cast, standardised):
        # the queue measured as fast as tf.data.
        Valid("""
            import tensorflow as tf
            def inputs(files, batch_size):
                queue = tf.train.string_input_producer(files)
                _, value = tf.FixedLengthRecordReader(record_bytes=3073).read(queue)
                raw = tf.decode_raw(value, tf.uint8)
                image = tf.cast(tf.reshape(raw[1:], [32, 32, 3]), tf.float32)
                image = tf.image.per_image_standardization(image)
                return tf.train.shuffle_batch([image, raw[0]], batch_size=batch_size,
                                              capacity=2000, min_after_dequeue=1000)
        """),
        # In-memory arrays sliced and batched as they are, and CSV lines decoded.
        Valid("""
            import tensorflow as tf
            x, y = tf.compat.v1.train.slice_input_producer([xs, ys])
            bx, by = tf.compat.v1.train.batch([x, y], batch_size=32)
            _, line = tf.TextLineReader().read(tf.train.string_input_producer(["a.csv"]))
            cols = tf.decode_csv(line, record_defaults=[[0.0]] * 4)
            feats = tf.train.shuffle_batch([tf.stack(cols[:3]), cols[3]], batch_size=10,
                                           capacity=100, min_after_dequeue=20)
        """),
        # Fixed-length records decoded through compat.v1 (tf.io.decode_raw): still light.
        Valid("""
            import tensorflow.compat.v1 as tf
            queue = tf.train.string_input_producer(files)
            _, value = tf.FixedLengthRecordReader(record_bytes=785).read(queue)
            pixels = tf.cast(tf.io.decode_raw(value, tf.uint8), tf.float32)
            batch = tf.train.batch([pixels], batch_size=100)
        """),
        # A light queue called from the script's top level; the image decode is in a function
        # of the module that neither the batching code nor its caller runs (a preview tool).
        Valid("""
            import tensorflow as tf
            def inputs(files):
                _, value = tf.TextLineReader().read(tf.train.string_input_producer(files))
                cols = tf.decode_csv(value, record_defaults=[[0.0]] * 5)
                return tf.train.batch([tf.stack(cols[:4]), cols[4]], batch_size=64)
            def show(path):
                return tf.image.decode_png(tf.io.read_file(path))
            features, labels = inputs(["train.csv"])
        """),
        # A notebook: one cell decodes and resizes each image once and writes the results to
        # TFRecords; a later cell queues the records, which only need decode_raw and reshape.
        Valid("""
            import tensorflow as tf
            writer = tf.io.TFRecordWriter("train.tfrecords")
            for path, label in zip(paths, labels):
                image = tf.image.decode_jpeg(tf.io.read_file(path))
                image = tf.image.resize(tf.image.rgb_to_grayscale(image), [250, 151])
                writer.write(to_example(sess.run(tf.cast(image, tf.uint8)), label))
            queue = tf.train.string_input_producer(["train.tfrecords"])
            _, serialized = tf.TFRecordReader().read(queue)
            features = tf.parse_single_example(serialized, features=spec)
            image = tf.reshape(tf.decode_raw(features["image"], tf.uint8), [250, 151, 1])
            label = tf.cast(features["label"], tf.string)
            batch = tf.train.shuffle_batch([image, label], batch_size=512, capacity=1546,
                                           min_after_dequeue=10)
        """),
        # Stop 46, wave 2 (precision round 15): one image, read from a file a flag names,
        # batched by one: no producer or reader, so each enqueue decodes the same bytes.
        Valid("""
            import tensorflow as tf
            def main(_):
                data = tf.gfile.FastGFile(FLAGS.image_file, "rb").read()
                image = tf.image.resize_images(tf.image.decode_jpeg(data, channels=3), [224, 224])
                images, labels = tf.train.batch([image, 0], batch_size=1, num_threads=1,
                                                capacity=5)
                logits = network_fn(images)
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
        # TF1 code run on TF2 through compat.v1: every call is spelled tf.compat.v1.*, the
        # JPEG decode (tf.io.decode_jpeg) and the spectrogram (tf.signal) included.
        Invalid("""
            import tensorflow.compat.v1 as tf
            def inputs(files):
                queue = tf.train.string_input_producer(files)
                _, record = tf.TFRecordReader().read(queue)
                image = tf.io.decode_jpeg(record)
                return tf.train.batch([image], batch_size=32)
            def audio(paths):
                path = tf.train.string_input_producer(paths).dequeue()
                wave, _ = tf.audio.decode_wav(tf.io.read_file(path))
                spec = tf.abs(tf.signal.stft(wave[:, 0], 256, 128))
                return tf.train.shuffle_batch([spec], 16, capacity=200, min_after_dequeue=50)
        """, count=2, lines=(6, 11)),
        # Sliced file names decoded and resized per example, aliased import.
        Invalid("""
            import tensorflow as tensorflow_alias
            path, y = tensorflow_alias.compat.v1.train.slice_input_producer([paths, ys])
            x = tensorflow_alias.image.decode_png(tensorflow_alias.io.read_file(path))
            x = tensorflow_alias.image.resize(x, [96, 96])
            bx, by = tensorflow_alias.compat.v1.train.batch([x, y], batch_size=32)
        """, count=1, lines=(5,)),
        # Top level: the name the batch gets was decoded, augmented and rebound on the way.
        Invalid("""
            import tensorflow as tf
            queue = tf.train.string_input_producer(files)
            _, record = tf.WholeFileReader().read(queue)
            image = tf.image.decode_jpeg(record, channels=3)
            image = tf.image.random_flip_left_right(image)
            image = tf.cast(image, tf.float32) / 255.0
            batch = tf.train.batch([image], batch_size=32, num_threads=2)
        """, count=1, lines=(7,)),
        # TF1's top-level spelling, several reader threads joined; the augmentation is in a
        # function of the module the batching function calls.
        Invalid("""
            import tensorflow as tf
            def augment(record):
                image = tf.image.decode_jpeg(record)
                return tf.image.random_flip_left_right(tf.random_crop(image, [64, 64, 3]))
            def read(files, reader):
                queue = tf.train.string_input_producer(files, num_epochs=10)
                examples = [[augment(reader.read(queue)[1])] for _ in range(4)]
                return tf.train.shuffle_batch_join(examples, batch_size=128, capacity=4096,
                                                   min_after_dequeue=1024)
        """, count=1, lines=(8,)),
        # Its twin with a stream: the files a producer queues, one image per dequeue.
        Invalid("""
            import tensorflow as tf
            def main(_):
                queue = tf.train.string_input_producer(tf.gfile.Glob(FLAGS.pattern))
                _, data = tf.WholeFileReader().read(queue)
                image = tf.image.resize_images(tf.image.decode_jpeg(data, channels=3), [224, 224])
                images, labels = tf.train.batch([image, 0], batch_size=1, num_threads=1,
                                                capacity=5)
                logits = network_fn(images)
        """, count=1, lines=(6,)),
        # The batching is in a helper; its caller does the per-example work.
        Invalid("""
            import tensorflow as tf
            def _batch(image, label, n):
                return tf.train.shuffle_batch([image, label], batch_size=n, num_threads=2,
                                              capacity=1000, min_after_dequeue=500)
            def distorted_inputs(image, label):
                image = tf.image.random_brightness(image, max_delta=63)
                return _batch(image, label, 128)
        """, count=1, lines=(3,)),
    )

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Finding]:
        func = node.func
        last = func.attr if type(func) is ast.Attribute else getattr(func, "id", None)
        if last is None or "batch" not in last:
            return  # a spelling the rule leaves alone (an alias without "batch")
        if ctx.call_qualname(node) in _QUEUE_BATCHES and _per_example_work(ctx, node) \
                and not _one_fixed_example(ctx, node):
            yield self.finding(ctx, node)
