"""TFP607: a pipeline that reads and decodes its data again every epoch, with no ``cache()``."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Any

from tfperf.core.findings import Finding
from tfperf.lint.analysis.data_defaults import mapped_function_state
from tfperf.lint.analysis.pipelines import (
    Pipeline,
    across_functions,
    from_tfds,
    map_function,
    map_function_flags,
    pipeline,
)
from tfperf.lint.analysis.syntax import body_nodes
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context

# Sources that read files: every pass reads them again.
_FILE_SOURCES = frozenset({
    "tensorflow.data.TFRecordDataset", "tensorflow.data.TextLineDataset",
    "tensorflow.data.FixedLengthRecordDataset", "tensorflow.data.Dataset.list_files",
})
# What a map does that costs per element and gives the same result every pass: reading
# and decoding, then transforms of what was read.
_READ_PREFIXES = ("tensorflow.io.decode", "tensorflow.io.parse", "tensorflow.image.decode",
                  "tensorflow.audio.decode", "tensorflow.io.read_file", "tensorflow.decode_",
                  "tensorflow.parse_", "tensorflow.read_file", "tensorflow.compat.v1.parse")
# ... and what reads files inside a map or interleave (`interleave(lambda f: TextLineDataset(f))`)
_READS = (*_READ_PREFIXES, *_FILE_SOURCES,
          *(q.replace("tensorflow.", "tensorflow.compat.v1.", 1) for q in _FILE_SOURCES))
_COSTLY_PREFIXES = (*_READ_PREFIXES, "tensorflow.image.resize", "tensorflow.signal.",
                    "tensorflow.strings.")
# Sources of tensors already in memory (NumPy arrays, keras.datasets loads): a pass reads
# nothing again, so only a map that reads or decodes (sliced file paths) makes cache() pay.
# A resize of in-memory images alone is left alone: issue 25's precision round 3 (CIFAR-10
# resized to 227 per epoch, where cache() after the resize would hold ~31 GB).
_IN_MEMORY_SOURCES = frozenset({"tensorflow.data.Dataset.from_tensor_slices",
                                "tensorflow.data.Dataset.from_tensors",
                                "tensorflow.data.Dataset.range"})
# Steps that make the rest of the pipeline depend on the pass, or end it.
_BATCHING = frozenset({"batch", "padded_batch", "bucket_by_sequence_length"})
_EPOCHS_MIN = 2
# TFDS caches small datasets itself from tensorflow-datasets 2.1.0 (February 2020, after
# TF 2.1); code that targets TF 2.0 or older ran a TFDS that decoded every record again on
# every pass unless the pipeline cached.
_TFDS_AUTOCACHE_TF = (2, 1)
_TFDS_MESSAGE = ("the TFDS pipeline reads and decodes its records again every epoch (TFDS "
                 "caches small datasets itself only from 2.1.0, after this TF): no cache()")
_TFDS_HINT = ("add .cache() before this step (after the deterministic maps), or load with "
              "in_memory=True")
# Steps that keep a TFDS pipeline's elements the same every pass: cache() may follow them.
_KEEPS_ELEMENTS = frozenset({"map", "filter"})


def _costly_map(ctx: Context, step: ast.Call) -> str | None:
    """A ``map`` whose function decodes, parses, reads or resizes, deterministically: what
    it calls that costs, named for the message."""
    fn = map_function(ctx, step)
    if fn is None:
        return None
    state = mapped_function_state(ctx, fn, map_function_flags(ctx, step))
    if state.stateful:
        return None  # random augmentation: must run every pass
    return _calls(ctx, step, _COSTLY_PREFIXES)


def _calls(ctx: Context, step: ast.Call, prefixes: tuple[str, ...]) -> str | None:
    """The first call of the map's function (seen here) whose name starts with one of
    ``prefixes``, spelled ``tf.``."""
    fn = map_function(ctx, step)
    n: Any
    for n in body_nodes(fn) if fn is not None else ():
        if type(n) is ast.Call:
            q = ctx.qualname(n.func) or ""
            if q.startswith(prefixes):
                return q.replace("tensorflow.", "tf.", 1)
    return None


def _epochs(ctx: Context, call: Any) -> bool:
    """``model.fit(ds, epochs=E)`` with ``E`` not a literal below 2."""
    for k in call.keywords:
        if k.arg == "epochs":
            v = k.value
            return not (type(v) is ast.Constant and type(v.value) is int
                        and v.value < _EPOCHS_MIN)
    return False


def _reread(ctx: Context, use: Any) -> bool:
    """``use`` (the pipeline as read) is read once per epoch: iterated by a ``for`` that
    runs inside another loop, or handed to ``fit`` with several epochs."""
    p: Any = ctx.parent(use)
    if type(p) in (ast.For, ast.AsyncFor) and p.iter is use:
        return bool(ctx.enclosing_loops(p))
    if type(p) is ast.Call and p.args and p.args[0] is use and type(p.func) is ast.Attribute \
            and p.func.attr == "fit":
        return _epochs(ctx, p)
    return False


def _endless_stream(ctx: Context, use: Any, pipe: Pipeline) -> bool:
    """``fit(ds.repeat(), steps_per_epoch=n)``: Keras keeps one iterator over the endless
    dataset across its epochs, so a Keras epoch is ``n`` steps, not a pass over the data:
    whether any element is read twice depends on sizes this code does not show."""
    p: Any = ctx.parent(use)
    return "repeat" in pipe.methods() and type(p) is ast.Call \
        and any(k.arg == "steps_per_epoch" for k in p.keywords)


class PipelineNotCached(Rule):
    code = "TFP607"
    name = "pipeline-not-cached"
    message = ("the pipeline reads and decodes its data again every epoch: no cache() after "
               "the deterministic steps")
    hint = ("add .cache() after the last deterministic map (before shuffle, random "
            "augmentation and batch); .cache(filename) when it does not fit in memory")
    claims = ("S19",)
    group = "perf"  # judged: 7 true, 3 minor, 0 false on dev and held-out: docs/lint.md
    node_types = ()
    needs_tf = True
    docs = """\
## What it does
Finds a `tf.data` pipeline read once per epoch (a `for` over it inside an epoch loop, or
`model.fit(ds, epochs=E)`) that reads files (`TFRecordDataset`, `TextLineDataset`,
`list_files`...) or whose `map` decodes, parses, reads or resizes (`tf.io.decode_*`,
`tf.io.parse_*`, `tf.io.read_file`, `tf.image.decode_*`, `tf.image.resize`) without random
operations, and that has no `cache()` anywhere. A pipeline over tensors already in memory
(`from_tensor_slices`/`from_tensors` of arrays, a `keras.datasets` load) is reported only
when a map reads or decodes (sliced file paths): a resize of in-memory images reads
nothing again, and its output may be far larger than the arrays. The finding is on the
last such map, where `cache()` belongs. Pipelines followed through names and through a
factory of the module (`ds = make_dataset(files)`, one level, one `return`), through an
attribute the class assigns once from a pipeline built in a method (`self.ds =
ds.map(...).batch(32)` in `build()`, read per epoch in `train()`; a `self.ds` given from
outside is the caller's), `functools.partial` and `self.method` map functions seen through.

## Why is this bad?
Every epoch the pipeline reads the same files and decodes the same bytes into the same
tensors again. `cache()` keeps the decoded elements after the first pass (in memory, or in a
file with `cache(filename)`), so later epochs only run what must change per epoch (shuffle,
augmentation). TF's data-performance guide: "cache a dataset ... to save some operations
(like file opening and data reading) from being executed during each epoch" (claim S19's
pipeline advice).

## Example
```python
ds = tf.data.TFRecordDataset(files).map(parse).shuffle(1000).batch(64)
model.fit(ds, epochs=20)
```

## Use instead
```python
ds = tf.data.TFRecordDataset(files).map(parse).cache().shuffle(1000).batch(64)
```

## Fix safety
No automatic fix: the decoded dataset must fit where it is cached (memory, or a file), and
`cache()` must come before random steps.

## Known limitations
Not reported: pipelines read once (no epoch loop, `epochs=1`), an endless stream handed to
`fit` with `steps_per_epoch` (`ds.repeat()`: Keras keeps one iterator across its epochs, so
an epoch of n steps need not be a pass over the data), maps with a random op (they
must run every epoch; the deterministic part before them could still be cached, which the
rule does not see), pipelines from `tfds.load` where the code targets TF 2.1 or later
(`tensorflow-datasets` caches small datasets itself from its 2.1.0, February 2020; before
it, a TFDS pipeline is reported at the first step `cache()` must precede), and maps
whose function is not visible here. The rule cannot tell whether the decoded data fits in
memory.
"""
    valid = (
        Valid("""
            import tensorflow as tf
            def parse(r):
                return tf.io.parse_single_example(r, {"x": tf.io.FixedLenFeature([], tf.string)})
            ds = tf.data.TFRecordDataset(files).map(parse).cache().shuffle(1000).batch(64)
            model.fit(ds, epochs=20)
        """, spelling="loop: fit epochs"),
        # A new pipeline per fold: each is read once.
        Valid("""
            import tensorflow as tf
            def parse(r):
                return tf.io.parse_single_example(r, {"x": tf.io.FixedLenFeature([], tf.string)})
            for fold in folds:
                ds = tf.data.TFRecordDataset(fold).map(parse).batch(64)
                for batch in ds:
                    step(batch)
        """, spelling="loop: pipeline per fold"),
        # Read once.
        Valid("""
            import tensorflow as tf
            def parse(r):
                return tf.io.parse_single_example(r, {"x": tf.io.FixedLenFeature([], tf.string)})
            ds = tf.data.TFRecordDataset(files).map(parse).batch(64)
            model.evaluate(ds)
        """, spelling="name"),
        # A random map must run every epoch.
        Valid("""
            import tensorflow as tf
            def augment(x):
                return tf.image.random_flip_left_right(tf.io.decode_jpeg(x))
            ds = tf.data.TFRecordDataset(files).map(augment).batch(64)
            for epoch in range(10):
                for batch in ds:
                    step(batch)
        """, spelling="loop: for in for"),
        Valid("""
            import tensorflow as tf
            def load(path):
                return tf.image.decode_png(tf.io.read_file(path))
            ds = tf.data.Dataset.from_tensor_slices(paths).map(load).cache().batch(8)
            model.fit(ds, epochs=5)
        """, spelling="index: from_tensor_slices of paths"),
        Valid("""
            from data import make
            model.fit(make(files), epochs=20)
        """, files={"data.py": """
            import tensorflow as tf
            def parse(r):
                return tf.io.parse_single_example(r, {"x": tf.io.FixedLenFeature([], tf.string)})
            def make(files):
                return tf.data.TFRecordDataset(files).map(parse).cache().batch(64)
        """}, spelling="module"),
        Valid("""
            import tensorflow as tf
            def parse(r):
                return tf.io.parse_single_example(r, {"x": tf.io.FixedLenFeature([], tf.string)})
            # %%
            ds = tf.data.TFRecordDataset(files).map(parse).cache().batch(64)
            model.fit(ds, epochs=20)
        """, notebook=True, spelling="notebook"),
        # TFDS 2.1.0 and later cache a small dataset themselves (TF 2.1 was out before it).
        Valid("""
            import tensorflow as tf
            import tensorflow_datasets as tfds
            train = tfds.load("mnist", split="train", as_supervised=True)
            ds = train.map(lambda x, y: (tf.cast(x, tf.float32) / 255, y)).shuffle(1000).batch(64)
            model.fit(ds, epochs=12)
        """, tf_version="2.4", spelling="name: tfds auto-cached"),
        Valid("""
            import tensorflow as tf
            import tensorflow_datasets as tfds
            train = tfds.load("mnist", split="train", as_supervised=True)
            ds = train.map(lambda x, y: (tf.cast(x, tf.float32) / 255, y)).cache()
            ds = ds.shuffle(1000).batch(64)
            model.fit(ds, epochs=12)
        """, tf_version="2.0", spelling="name: tfds cached"),
        Valid("""
            import tensorflow_datasets as tfds
            train = tfds.load("mnist", split="train", as_supervised=True, in_memory=True)
            model.fit(train.shuffle(1000).batch(64), epochs=12)
        """, tf_version="1.14", spelling="name: tfds in memory"),
        # Arrays in memory (keras.datasets), resized per epoch: nothing is read again, and
        # the resized set may not fit where cache() would keep it.
        Valid("""
            import tensorflow as tf
            (x_train, y_train), _ = tf.keras.datasets.cifar10.load_data()
            def process(image, label):
                return tf.image.resize(tf.image.per_image_standardization(image), (227, 227)), label
            ds = tf.data.Dataset.from_tensor_slices((x_train, y_train)).map(process).batch(32)
            model.fit(ds, epochs=50)
        """, spelling="name: in-memory arrays"),
        # A factory's endless stream: Keras keeps one iterator across its epochs of
        # steps_per_epoch steps, so an epoch is not a pass over the data.
        Valid("""
            import tensorflow as tf
            def parse(r):
                return tf.io.parse_single_example(r, {"x": tf.io.FixedLenFeature([], tf.string)})
            def make_stream(files):
                return tf.data.TFRecordDataset(files).map(parse).repeat().batch(64)
            def train(model, files):
                ds = make_stream(files)
                model.fit(ds, epochs=20, steps_per_epoch=500)
        """, spelling="name: factory stream"),
    )
    invalid = (
        # A factory of the module builds it (`ds = make_dataset(files)`); each of the 20
        # epochs is a full pass (no repeat).
        Invalid("""
            import tensorflow as tf
            def parse(r):
                return tf.io.parse_single_example(r, {"x": tf.io.FixedLenFeature([], tf.string)})
            def make_dataset(files, batch_size=64):
                ds = tf.data.TFRecordDataset(files)
                ds = ds.map(parse)
                return ds.shuffle(1000).batch(batch_size)
            def train(model, files):
                ds = make_dataset(files)
                model.fit(ds, epochs=20)
        """, count=1, lines=(6,), spelling="name: factory stream"),
        # TFDS before its auto-caching: every epoch decodes every PNG record again.
        Invalid("""
            import tensorflow as tf
            import tensorflow_datasets as tfds
            train = tfds.load("mnist", split="train", as_supervised=True)
            ds = train.map(lambda x, y: (tf.cast(x, tf.float32) / 255, y)).shuffle(1000).batch(64)
            model.fit(ds, epochs=12)
        """, count=1, lines=(4,), tf_version="2.0", spelling="name: tfds fit epochs"),
        Invalid("""
            import tensorflow as tf
            import tensorflow_datasets as tfds
            def normalize(image, label):
                return tf.cast(image, tf.float32) / 255, label
            # %%
            dataset, info = tfds.load("fashion_mnist", as_supervised=True, with_info=True)
            train, test = dataset["train"], dataset["test"]
            train = train.map(normalize)
            # %%
            train = train.repeat().shuffle(60000).batch(32)
            # %%
            model.fit(train, epochs=10, steps_per_epoch=1875)
        """, count=1, lines=(1,), notebook=True, tf_version="1.14", spelling="notebook: tfds"),
        Invalid("""
            import tensorflow as tf
            def parse(r):
                return tf.io.parse_single_example(r, {"x": tf.io.FixedLenFeature([], tf.string)})
            ds = tf.data.TFRecordDataset(files).map(parse).shuffle(1000).batch(64)
            model.fit(ds, epochs=20)
        """, count=1, lines=(4,), spelling="loop: fit epochs"),
        # Iterated in an epoch loop, built through names.
        Invalid("""
            import tensorflow as tf
            def load(path):
                return tf.image.decode_png(tf.io.read_file(path))
            ds = tf.data.Dataset.from_tensor_slices(paths)
            ds = ds.map(load, num_parallel_calls=tf.data.AUTOTUNE)
            ds = ds.batch(8)
            for epoch in range(10):
                for images in ds:
                    step(images)
        """, count=1, lines=(5,), spelling="loop: for in for"),
        # A while loop over epochs.
        Invalid("""
            import tensorflow as tf
            def parse(line):
                return tf.io.decode_csv(line, [0.0, 0.0])
            ds = tf.data.TextLineDataset(["a.csv"]).map(parse).batch(32)
            epoch = 0
            while epoch < 50:
                for batch in ds:
                    step(batch)
                epoch += 1
        """, count=1, lines=(4,), spelling="loop: while"),
        # The map function through functools.partial; fit's epochs held in a name.
        Invalid("""
            import functools
            import tensorflow as tf
            def load(path, size):
                return tf.image.resize(tf.image.decode_jpeg(tf.io.read_file(path)), size)
            ds = tf.data.Dataset.from_tensor_slices(paths).map(
                functools.partial(load, size=(224, 224))).batch(32)
            model.fit(ds, epochs=n_epochs)
        """, count=1, lines=(5,), spelling="name"),
        # The pipeline is built in another module; the fit in this one.
        Invalid("""
            from data import make
            ds = make(files)
            model.fit(ds, epochs=20)
        """, files={"data.py": """
            import tensorflow as tf
            def parse(r):
                return tf.io.parse_single_example(r, {"x": tf.io.FixedLenFeature([], tf.string)})
            def make(files):
                ds = tf.data.TFRecordDataset(files).map(parse).batch(64)
                model.fit(ds, epochs=3)
                return ds
        """}, count=1, spelling="module"),
        Invalid("""
            import tensorflow as tf
            def parse(r):
                return tf.io.parse_single_example(r, {"x": tf.io.FixedLenFeature([], tf.string)})
            # %%
            ds = tf.data.TFRecordDataset(files).map(parse).batch(64)
            # %%
            model.fit(ds, epochs=20)
        """, count=1, notebook=True, spelling="notebook"),
    )

    # Stop 39, pass B: the pipeline built in one method (kept on `self`) and read every
    # epoch in another; its map function a method of the class.
    valid = (  # type: ignore[assignment]
        *valid,
        Valid("""
            import tensorflow as tf
            class Trainer:
                def __init__(self, files):
                    self.files = files
                def build(self):
                    ds = tf.data.Dataset.from_tensor_slices(self.files)
                    self.ds = ds.map(self.load).cache().batch(32)
                def load(self, path):
                    return tf.image.resize(tf.io.decode_jpeg(tf.io.read_file(path)), [64, 64])
                def train(self, model, epochs):
                    for epoch in range(epochs):
                        for x in self.ds:
                            model.train_on_batch(x, x)
        """, spelling="name: self.ds cached"),
        Valid("""
            import tensorflow as tf
            class Trainer:
                def __init__(self, dataset):
                    self.ds = dataset
                def train(self, model, epochs):
                    for epoch in range(epochs):
                        for x in self.ds:
                            model.train_on_batch(x, x)
        """, spelling="name: self.ds given from outside"),
    )
    invalid = (  # type: ignore[assignment]
        *invalid,
        Invalid("""
            import tensorflow as tf
            class Trainer:
                def __init__(self, files):
                    self.files = files
                def build(self):
                    ds = tf.data.Dataset.from_tensor_slices(self.files)
                    self.ds = ds.map(self.load).batch(32)
                def load(self, path):
                    return tf.image.resize(tf.io.decode_jpeg(tf.io.read_file(path)), [64, 64])
                def train(self, model, epochs):
                    for epoch in range(epochs):
                        for x in self.ds:
                            model.train_on_batch(x, x)
        """, count=1, lines=(7,), spelling="name: self.ds built in one method, read in another"),
    )

    def check_module(self, ctx: Context) -> Iterator[Finding]:
        if "map" not in ctx.source:
            return
        by_attr, _ = ctx.call_groups()
        reported: set[int] = set()
        uses: list[ast.AST] = [c.args[0] for c in by_attr.get("fit", ()) if c.args]
        loops: list[Any] = ctx.nodes_of(ast.For, ast.AsyncFor)
        uses += [f.iter for f in loops]
        for use in uses:
            if not _reread(ctx, use):
                continue
            here = pipeline(ctx, use)
            pipe = across_functions(ctx, here)  # `ds = make_dataset(files)`
            if pipe is not here and _endless_stream(ctx, use, pipe):
                # A factory's endless stream: its size and the steps asked of it are set
                # apart, so whether an element is read twice is not seen. (Where the whole
                # pipeline is in view, `repeat().batch(32)` with `steps_per_epoch=1875` of
                # 60,000 examples is one pass per epoch: dev F030, reported as before.)
                continue
            p: Any = ctx.parent(use)
            if type(p) in (ast.For, ast.AsyncFor) and any(
                    loop in ctx.enclosing_loops(p) for loop in ctx.enclosing_loops(pipe.source)):
                continue  # built anew in the epoch loop (a fold, a sweep): each read is a first
            where = self._where(ctx, pipe)
            if where is not None and id(where) not in reported:
                reported.add(id(where))
                if from_tfds(ctx, pipe.source):
                    yield self.finding(ctx, where, _TFDS_MESSAGE, hint=_TFDS_HINT)
                else:
                    yield self.finding(ctx, where)

    @staticmethod
    def _where(ctx: Context, pipe: Pipeline) -> ast.Call | None:
        """The last deterministic costly map before any batching, when the pipeline has no
        ``cache()``, is not from TFDS and reads files or decodes."""
        methods = pipe.methods()
        if "cache" in methods or "take" in methods:
            return None
        if from_tfds(ctx, pipe.source):
            return _tfds_where(ctx, pipe) if ctx.tf_version < _TFDS_AUTOCACHE_TF else None
        if not pipe.known:
            return None
        source = (ctx.qualname(getattr(pipe.source, "func", None)) or "").replace(
            "tensorflow.compat.v1.", "tensorflow.")
        files = source in _FILE_SOURCES
        in_memory = source in _IN_MEMORY_SOURCES
        last = None
        read = False  # a map of the chain reads or decodes
        for step in pipe.steps:
            method = step.func.attr
            if method in _BATCHING:
                break
            if method in ("map", "interleave", "flat_map") and step.args:
                costly = _costly_map(ctx, step)
                if costly is not None or (files and method == "map"
                                          and _deterministic(ctx, step)):
                    last = step
                    read = read or _calls(ctx, step, _READS) is not None
                elif method == "map" and not _deterministic(ctx, step):
                    break  # random from here on: cache() would freeze it
        if in_memory and not read:
            return None  # arrays in memory, transformed but never read again
        return last


def _tfds_where(ctx: Context, pipe: Pipeline) -> ast.Call | None:
    """A TFDS pipeline (decoded by TFDS on every pass before its auto-caching): the first
    step that ``cache()`` must come before (shuffle, repeat, batch, a random map), after any
    deterministic maps and filters."""
    if "in_memory" in ctx.source:  # tfds.load(..., in_memory=True) keeps it in RAM
        return None
    for step in pipe.steps:
        method = step.func.attr
        if method in _KEEPS_ELEMENTS and (method == "filter" or _deterministic(ctx, step)):
            continue
        return step
    return None


def _deterministic(ctx: Context, step: ast.Call) -> bool:
    fn = map_function(ctx, step)
    if fn is None:
        return False
    state = mapped_function_state(ctx, fn, map_function_flags(ctx, step))
    return state.known and not state.stateful
