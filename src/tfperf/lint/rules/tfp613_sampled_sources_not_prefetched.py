"""TFP613: file-reading datasets mixed by ``sample_from_datasets``/``choose_from_datasets``
with no prefetch of their own."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Any

from tfperf.core.findings import Finding
from tfperf.lint.analysis.pipelines import across_functions, pipeline
from tfperf.lint.analysis.syntax import own_nodes
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import DATASET_METHODS, Context

_SAMPLERS = frozenset({"sample_from_datasets", "choose_from_datasets"})
# File readers: each source's reads wait in turn on the mixing iterator's thread.
_READERS = ("TFRecordDataset", "TextLineDataset", "FixedLengthRecordDataset")
_DEPTH = 4


def _sampler(ctx: Context, call: ast.Call) -> bool:
    f = call.func
    name = f.attr if type(f) is ast.Attribute else getattr(f, "id", "")
    q = ctx.call_qualname(call) or ""
    return name in _SAMPLERS and (q.startswith("tensorflow.") or q.startswith("tf."))


def _function_of(ctx: Context, call: ast.Call) -> ast.AST | None:
    """The module's function or method ``call`` runs: ``make(...)``, ``self.make(...)``."""
    f = call.func
    if type(f) is ast.Name:
        b = ctx.binding(f)
        return b.value if b is not None and b.kind == "def" else None
    if type(f) is ast.Attribute and type(f.value) is ast.Name and f.value.id == "self":
        cls = ctx.enclosing_class(call)
        seen = 0
        while cls is not None and seen < _DEPTH:  # the class, then its bases of this module
            seen += 1
            for node in cls.body:
                if type(node) in (ast.FunctionDef, ast.AsyncFunctionDef) \
                        and node.name == f.attr:
                    return node
            base = cls.bases[0] if cls.bases and type(cls.bases[0]) is ast.Name else None
            b = ctx.binding(base) if base is not None else None
            cls = b.value if b is not None and type(b.value) is ast.ClassDef else None
    return None


def _elements(ctx: Context, expr: Any, depth: int = 0) -> list[ast.expr]:
    """The datasets a list expression holds: a literal's items, a comprehension's element,
    what a loop appends to a name bound to ``[]``, what a helper of the module returns."""
    if depth > _DEPTH:
        return []
    if type(expr) in (ast.List, ast.Tuple):
        return list(expr.elts)
    if type(expr) is ast.ListComp:
        return [expr.elt]
    if type(expr) is ast.Name:
        b = ctx.binding(expr)
        if b is None or b.kind != "assign" or b.value is expr:
            return []
        scope = ctx.scope_of(expr)  # `out = []` (or a helper's list), then `out.append(ds)`
        appended = [c.args[0] for c in ctx.calls
                    if type(c.func) is ast.Attribute and c.func.attr == "append" and c.args
                    and type(c.func.value) is ast.Name and c.func.value.id == expr.id
                    and ctx.scope_of(c) is scope]
        return _elements(ctx, b.value, depth + 1) + appended
    if type(expr) is ast.Call:
        fn = _function_of(ctx, expr)
        if fn is None:
            return []
        out: list[ast.expr] = []
        for node in own_nodes(fn):
            if type(node) is ast.Return and node.value is not None:
                out += _elements(ctx, node.value, depth + 1)
        return out
    return []


# A source's own steps that keep its file reads off the mixer's path: a buffer filled by a
# thread of its own, parallel reads, or a cache (its files are read once; from the second
# epoch on the mixer pulls from memory, review 40).
_OWN_BUFFER = frozenset({"prefetch", "interleave", "cache"})


def _unprefetched_reader(ctx: Context, element: ast.expr, depth: int = 0) -> ast.AST | None:
    """Where ``element``'s dataset is read from files, with no prefetch (or parallel
    interleave) in its pipeline: the reader call; else None."""
    pipe = across_functions(ctx, pipeline(ctx, element))
    source = pipe.source
    if type(source) is ast.Name:  # rebound under `if`s (`if shuffle: ds = ds.shuffle(n)`)
        return _reader_of_name(ctx, source, depth)
    if type(source) is not ast.Call:
        return None
    q = ctx.call_qualname(source) or ""
    if q.endswith("Dataset.zip") and source.args and depth < _DEPTH:
        if _OWN_BUFFER & set(pipe.methods()):
            return None
        zipped = source.args[0]  # `zip((examples, labels))`: the readers inside
        parts = zipped.elts if type(zipped) in (ast.Tuple, ast.List) else [zipped]
        for part in parts:
            found = _unprefetched_reader(ctx, part, depth + 1)
            if found is not None:
                return found
        return None
    if not q.startswith("tensorflow.") or not q.endswith(_READERS):
        return None
    if _OWN_BUFFER & set(pipe.methods()):
        return None
    for k in source.keywords:  # several files read in parallel already
        if k.arg == "num_parallel_reads" and not (type(k.value) is ast.Constant
                                                  and k.value.value in (None, 1)):
            return None
    return source


def _chain(value: ast.AST) -> tuple[ast.AST, list[str]]:
    """``ds.shuffle(n).repeat()`` → (``ds``, [shuffle, repeat]): the method calls written
    in one expression, not followed through names."""
    methods: list[str] = []
    while type(value) is ast.Call and type(value.func) is ast.Attribute \
            and value.func.attr in DATASET_METHODS:
        methods.append(value.func.attr)
        value = value.func.value
    return value, methods[::-1]


def _reader_of_name(ctx: Context, name: ast.Name, depth: int) -> ast.AST | None:
    """A name every binding of which in its scope is the name's own pipeline extended
    (``ds = ds.shuffle(n)``) or one reader: that reader, unless some binding prefetches."""
    if depth >= _DEPTH:
        return None
    readers = []
    for b in ctx.scope_bindings(name):
        if b.kind != "assign" or type(b.value) is not ast.Call:
            return None
        root, methods = _chain(b.value)  # this binding's own chain only
        if _OWN_BUFFER & set(methods):
            return None
        if type(root) is ast.Name and root.id == name.id:
            continue
        found = _unprefetched_reader(ctx, b.value, depth + 1)
        if found is None:
            return None
        readers.append(found)
    return readers[0] if len(readers) == 1 else None


class SampledSourcesNotPrefetched(Rule):
    code = "TFP613"
    name = "sampled-sources-not-prefetched"
    message = ("a file-reading dataset mixed by sample_from_datasets/choose_from_datasets "
               "with no prefetch of its own: the mixer pulls each source in turn, so the "
               "sources' reads run one after another on the one thread that runs the mixer "
               "(the consumer's, or a prefetch's after the mix)")
    hint = ("prefetch each source (ds.prefetch(1) or AUTOTUNE) before mixing, or read the "
            "files with interleave(..., num_parallel_calls=AUTOTUNE)")
    claims = ("S19",)
    group = "preview"  # new (stop 40, round 10's F002/F027): waits for judged findings
    node_types = (ast.Call,)
    callee_names = _SAMPLERS
    docs = """\
## What it does
Finds `tf.data.Dataset.sample_from_datasets(sources)` and `choose_from_datasets(sources,
...)` (also `tf.data.experimental.*`) where a source is read from files
(`TFRecordDataset`, `TextLineDataset`, `FixedLengthRecordDataset`) and its pipeline has no
`prefetch` or `interleave`. The sources are followed through a list literal or
comprehension, a name bound to `[]` and appended in a loop, and a helper or method of the
module that builds and returns them (`self.construct_class_datasets()`). The finding is
placed where the source is made: the list's element where it calls a helper, else the
reader call.

## Why is this bad?
The mixing dataset asks one source for its next element at a time, on its own iterator:
with no buffer in a source, that source's file reads and parsing run only when it is
picked, one after another, on the consumer's critical path. A `prefetch` on each source
lets every source read ahead in the background (meta-dataset's per-class readers); one
dataset that `interleave`s the files with `num_parallel_calls` reads several at once.

## Example
```python
sources = [tf.data.TFRecordDataset(f).map(parse) for f in files_per_class]
ds = tf.data.Dataset.sample_from_datasets(sources)
```

## Use instead
```python
sources = [tf.data.TFRecordDataset(f).map(parse).prefetch(1) for f in files_per_class]
```

## Fix safety
No automatic fix: each prefetch buffer holds elements per source (memory grows with the
number of sources).

## Known limitations
In `preview`: not measured on this machine (local page-cached files on two shared cores
show little; the gain is where reads wait: remote storage, many sources). Sources built
in another module, or passed in as a parameter, are not followed.
"""
    valid = (
        Valid("""
            import tensorflow as tf
            def mix(files):
                sources = []
                for f in files:
                    sources.append(tf.data.TFRecordDataset(f).map(parse).prefetch(1))
                return tf.data.Dataset.sample_from_datasets(sources)
        """, spelling="loop: each source prefetched"),
        Valid("""
            import tensorflow as tf
            def mix(files, weights):
                ds = [tf.data.Dataset.from_tensor_slices(f) for f in files]
                return tf.data.Dataset.sample_from_datasets(ds, weights)
        """, spelling="index: in-memory sources"),
        Valid("""
            import tensorflow as tf
            def reader(path):
                ds = tf.data.TFRecordDataset(path)
                ds = ds.map(parse)
                return ds.prefetch(tf.data.AUTOTUNE)
            sources = [reader(p) for p in paths]
            mixed = tf.data.experimental.sample_from_datasets(sources)
        """, spelling="name: a helper that prefetches"),
        Valid("""
            from mix import mixed
            for x in mixed(["a.tfrecord", "b.tfrecord"]):
                pass
        """, files={"mix.py": """
            import tensorflow as tf
            def mixed(files):
                return tf.data.Dataset.choose_from_datasets(
                    [tf.data.TFRecordDataset(f).prefetch(2) for f in files],
                    tf.data.Dataset.range(2).repeat())
        """}, spelling="module"),
        Valid("""
            import tensorflow as tf
            # %%
            sources = [tf.data.TFRecordDataset(f).prefetch(1) for f in files]
            ds = tf.data.Dataset.sample_from_datasets(sources)
        """, notebook=True, spelling="notebook"),
    )
    invalid = (
        Invalid("""
            import tensorflow as tf
            class Reader:
                def construct_class_datasets(self, files):
                    class_datasets = []
                    for f in files:
                        ds = tf.data.TFRecordDataset(f, buffer_size=2 ** 20)
                        ds = ds.shuffle(100)
                        class_datasets.append(ds)
                    return class_datasets
                def pipeline(self, files, choices):
                    class_datasets = self.construct_class_datasets(files)
                    return tf.data.Dataset.choose_from_datasets(class_datasets, choices)
        """, count=1, lines=(6,), spelling="loop: appended per class, mixed in another method"),
        Invalid("""
            import tensorflow as tf
            class Reader:
                def class_datasets(self, files):
                    out = []
                    for i, f in enumerate(files):
                        examples = tf.data.TFRecordDataset(f).repeat()
                        labels = tf.data.Dataset.from_tensors(i).repeat()
                        out.append(tf.data.Dataset.zip((examples, labels)))
                    return out
            class EpisodeReader(Reader):
                def pipeline(self, files, choices):
                    sources = self.class_datasets(files)
                    sources.append(tf.data.Dataset.from_tensors(("", -1)).repeat())
                    return tf.data.Dataset.choose_from_datasets(sources, choices)
        """, count=1, lines=(6,), spelling="name: zipped with labels, a base class's method"),
        Invalid("""
            import tensorflow as tf
            def mix(files):
                ds = tf.data.experimental.sample_from_datasets(
                    [tf.data.TFRecordDataset(files[i]).map(parse) for i in range(len(files))])
                return ds.batch(32)
        """, count=1, lines=(4,), spelling="index: a comprehension over indices"),
        Invalid("""
            import tensorflow.compat.v1 as tf
            def tf_record_dataset(name, n):
                data = tf.data.TFRecordDataset(filenames=[name], num_parallel_reads=1)
                return data.window(n, shift=n).flat_map(lambda w: w.batch(n))
            def generic_data(bucket, n):
                data = [tf_record_dataset(f"gs://{bucket}/test.tfrecord", n)]
                return tf.data.experimental.sample_from_datasets(data).batch(8)
        """, count=1, lines=(6,), spelling="name: a list through a name, a helper's reader"),
        Invalid("""
            from mix import mixed
            for x in mixed(["a.tfrecord", "b.tfrecord"]):
                pass
        """, files={"mix.py": """
            import tensorflow as tf
            def mixed(files):
                return tf.data.Dataset.choose_from_datasets(
                    [tf.data.TFRecordDataset(f) for f in files],
                    tf.data.Dataset.range(2).repeat())
        """}, count=1, spelling="module"),
        Invalid("""
            import tensorflow as tf
            # %%
            sources = [tf.data.TextLineDataset(f).skip(1) for f in csv_files]
            ds = tf.data.Dataset.sample_from_datasets(sources)
        """, count=1, lines=(1,), notebook=True, spelling="notebook"),
    )

    # Review 40: every unprefetched source, each reported; cached sources are read once.
    invalid = (  # type: ignore[assignment]
        *invalid,
        Invalid("""
            import tensorflow as tf
            def mixed(train_files, extra_files):
                main = tf.data.TextLineDataset(train_files).map(tokenize)
                extra = tf.data.TextLineDataset(extra_files).map(tokenize)
                return tf.data.Dataset.sample_from_datasets([main, extra], [0.8, 0.2])
        """, count=2, lines=(3, 4), spelling="name: two listed sources, each unprefetched"),
    )
    valid = (  # type: ignore[assignment]
        *valid,
        Valid("""
            import tensorflow as tf
            def mixed(train_files, extra_files):
                main = tf.data.TextLineDataset(train_files).map(tokenize).cache()
                extra = tf.data.TextLineDataset(extra_files).map(tokenize).cache()
                return tf.data.Dataset.sample_from_datasets(
                    [main.repeat(), extra.repeat()], [0.8, 0.2]).batch(64).prefetch(2)
        """, spelling="name: cached sources, read once"),
    )

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Finding]:
        call: Any = node
        if not _sampler(ctx, call):
            return
        arg = call.args[0] if call.args else next(
            (k.value for k in call.keywords if k.arg == "datasets"), None)
        if arg is None:
            return
        seen: set[int] = set()
        for element in _elements(ctx, arg):
            reader = _unprefetched_reader(ctx, element)
            if reader is not None:
                where = element if type(element) is ast.Call \
                    and _function_of(ctx, element) is not None else reader
                if id(where) not in seen:  # every source unprefetched, each once
                    seen.add(id(where))
                    yield self.finding(ctx, where)
