"""TFP612: many TFRecord files read one after another (no ``num_parallel_reads``, or
``flat_map(TFRecordDataset)`` where a parallel ``interleave`` reads several at once)."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from typing import Any

from tfperf.core.findings import Finding
from tfperf.lint.analysis.assignments import assigned_value
from tfperf.lint.analysis.callers import bound_arguments, calls_of
from tfperf.lint.analysis.consumption import discarded, only_peeked
from tfperf.lint.analysis.pipelines import map_function
from tfperf.lint.analysis.syntax import keyword, method_call
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context

READERS = frozenset({"tensorflow.data.TFRecordDataset",
                     "tensorflow.compat.v1.data.TFRecordDataset"})
# Calls that give a list of many file names.
_GLOBS = frozenset({"glob.glob", "glob.iglob", "tensorflow.io.gfile.glob",
                    "tensorflow.gfile.Glob", "tensorflow.compat.v1.gfile.Glob",
                    "tensorflow.io.gfile.listdir", "os.listdir",
                    "tensorflow.data.Dataset.list_files",
                    "tensorflow.compat.v1.data.Dataset.list_files"})
_SLICES = frozenset({"tensorflow.data.Dataset.from_tensor_slices",
                     "tensorflow.compat.v1.data.Dataset.from_tensor_slices"})
# Wrappers that keep a list a list.
_KEEP = frozenset({"sorted", "list", "tuple"})
# Parameter names that say "several files" (``filenames``, ``train_files``, ``file_list``).
_MANY_NAME = re.compile(r"(^|_)(filenames|files|file_list|file_names|paths|tfrecords|"
                        r"records_files|shards)$")


def many_files(ctx: Context, expr: Any, depth: int = 0) -> bool:
    """``expr`` surely names several files: a glob or listing (also sorted or listed), a
    comprehension, a literal list of two or more, ``list_files``, or a name bound to one."""
    if expr is None or depth > 4:
        return False
    t = type(expr)
    if t in (ast.List, ast.Tuple):
        return len(expr.elts) >= 2 or any(type(e) is ast.Starred for e in expr.elts)
    if t in (ast.ListComp, ast.GeneratorExp):
        return True
    if t is ast.Call:
        if type(expr.func) is ast.Name and expr.func.id in _KEEP and expr.args:
            return many_files(ctx, expr.args[0], depth + 1)
        q = ctx.qualname(expr.func)
        if q in _GLOBS:
            return True
        if q in _SLICES:
            return bool(expr.args) and many_files(ctx, expr.args[0], depth + 1)
        if type(expr.func) is ast.Attribute and expr.func.attr in ("shuffle", "repeat") \
                and q is None:
            return many_files(ctx, expr.func.value, depth + 1)
        return False
    if t is ast.Name:
        b = ctx.binding(expr)
        if b is not None and b.kind == "assign" and b.value is not None \
                and b.value is not expr:
            return many_files(ctx, b.value, depth + 1)
        if b is not None and b.kind == "param":
            return _many_through_callers(ctx, expr, depth)
    return False


def _in_file_order(ctx: Context, call: ast.Call) -> bool:
    """Review 39 (9): files read one by one from a list put in order on purpose
    (``from_tensor_slices(sorted(files))``, ``list_files(..., shuffle=False)``) with no
    ``shuffle`` before or after: the records are wanted in file order (an export lined up
    with the files), which a parallel read would change."""
    from tfperf.lint.analysis.pipelines import pipeline

    pipe = pipeline(ctx, call.func.value)
    node: Any = call
    after: list[str] = []
    while type(p := ctx.parent(node)) is ast.Attribute and type(ctx.parent(p)) is ast.Call:
        after.append(p.attr)
        node = ctx.parent(p)
    if "shuffle" in pipe.methods() or "shuffle" in after:
        return False
    source: Any = pipe.source
    if type(source) is not ast.Call:
        return False
    q = ctx.call_qualname(source)
    if q is not None and q.endswith("list_files"):
        order = keyword(source, "shuffle")
        return type(order) is ast.Constant and order.value is False
    if q not in _SLICES or not source.args:
        return False
    files: Any = source.args[0]
    if type(files) is ast.Name:
        files = assigned_value(ctx, files)
    return type(files) is ast.Call and type(files.func) is ast.Name \
        and files.func.id in ("sorted", "natsorted")


def _many_through_callers(ctx: Context, name: ast.Name, depth: int) -> bool:
    """A parameter holds several files: a call here passes it a list of them, or no call
    here says and its name is plural (``filenames``, ``train_files``)."""
    fn = ctx.enclosing_function(name)
    if fn is None:
        return False
    passed = [bound_arguments(fn, c) for c in calls_of(ctx, fn)]
    known = [v[name.id] for v in passed if v is not None and name.id in v]
    if known:
        return any(many_files(ctx, v, depth + 1) for v in known)
    fn_name = str(getattr(fn, "name", ""))
    if fn_name in ctx.cached("tfp612.passed", lambda: _passed_names(ctx)) \
            or "reader" in fn_name.lower():
        return False  # a reader handed to a library (reader=fn): it is given one file a call
    return bool(_MANY_NAME.search(name.id.lower()))


def _passed_names(ctx: Context) -> set[str]:
    """Names passed as arguments of some call of the module (``reader=_gzip_reader_fn``,
    ``ds.interleave(read)``): functions that others call, maybe one file at a time."""
    out: set[str] = set()
    for call in ctx.calls:
        for a in (*call.args, *(k.value for k in call.keywords)):
            if type(a) is ast.Name:
                out.add(a.id)
    return out


def _opens_records(ctx: Context, fn: Any) -> ast.Call | None:
    """The ``TFRecordDataset`` call a ``flat_map`` function makes (the reader class itself,
    a lambda, or a ``def`` that returns it)."""
    if fn is None:
        return None
    if type(fn) is ast.Lambda:
        body = fn.body
        return body if type(body) is ast.Call and ctx.call_qualname(body) in READERS else None
    if type(fn) in (ast.FunctionDef, ast.AsyncFunctionDef):
        for n in ast.walk(fn):
            if type(n) is ast.Return and type(n.value) is ast.Call \
                    and ctx.call_qualname(n.value) in READERS:
                return n.value
    return None


class SerialRecordReads(Rule):
    code = "TFP612"
    name = "serial-record-reads"
    message = ("many TFRecord files read one after another: no read overlaps another, "
               "one core decompresses")
    hint = ("read several files at once: TFRecordDataset(files, num_parallel_reads="
            "tf.data.AUTOTUNE), or files.interleave(tf.data.TFRecordDataset, "
            "num_parallel_calls=tf.data.AUTOTUNE)")
    claims = ("S19",)
    group = "preview"  # new (issue 25, stop 38's serial-reader misses): waits for judged findings
    node_types = (ast.Call,)
    callee_names = frozenset({"TFRecordDataset", "flat_map", "interleave"})
    needs_tf = True
    docs = """\
## What it does
Finds `tf.data.TFRecordDataset(files)` given several files (a glob or listing, a
comprehension, a literal list of two or more, `list_files`, or a name bound to one; a
parameter that a call in the module passes such a list, or, where no call here says, a
parameter named in the plural: `filenames`, `train_files`, `file_list`, `paths`) without
`num_parallel_reads`, and `files.flat_map(tf.data.TFRecordDataset)` or
`files.interleave(tf.data.TFRecordDataset, cycle_length=n)` without `num_parallel_calls`
(the class itself, a lambda or a function of the module that returns a reader).

## Why is this bad?
Without `num_parallel_reads` a `TFRecordDataset` opens its files one at a time, and
`flat_map` reads one file to its end before the next: one thread reads and decompresses,
and every read waits on the one before. The tf.data performance guide's "Parallelizing data
extraction" advises `interleave(..., num_parallel_calls=tf.data.AUTOTUNE)`; the reader's
`num_parallel_reads` does the same. The gain is largest where a read waits (network or
cloud storage) or decompresses (`compression_type="GZIP"`); from files in the page cache
the reading is cheap and the gain small. Measured with `benchmarks/lint_fixes/rule_claims.py
--cases TFP612` on TF 2.21 CPU here (2 busy cores, 16 local files of 1024 records of 4 KiB):
see docs/lint.md "Stop 39, pass A".

## Example
```python
files = tf.io.gfile.glob("data/train-*.tfrecord")
ds = tf.data.TFRecordDataset(files).map(parse, num_parallel_calls=tf.data.AUTOTUNE)
```

## Use instead
```python
ds = tf.data.TFRecordDataset(files, num_parallel_reads=tf.data.AUTOTUNE)
ds = ds.map(parse, num_parallel_calls=tf.data.AUTOTUNE)
```

## Fix safety
No automatic fix: parallel reads interleave the files' records, so the order of elements
changes (set `deterministic` or shuffle as before, as the pipeline needs).

## Known limitations
Preview. Judged by the rule's author (stop 39, `preview_judged.csv`): 26 findings on user
code, 24 true and 2 minor (23 of them one course repository's copies of 8 input functions
reading `gs://` shards), above the bar for the default group; it stays in preview because
the gain measured here, on local files, is small or negative for `num_parallel_reads` (see
docs/lint.md "Stop 39, pass A"): the hint pays where reads wait (remote storage) or the
files are many, and the code does not say where its files are. Silent where the file list
comes from a function the rule does not read or is a parameter whose callers here pass one
file, on one file, and on pipelines thrown away or only peeked at. The parameter and
`interleave` forms were added after the judged findings above.
Review 39 (9): a `flat_map`/`interleave` over a file list put in order on purpose
(`from_tensor_slices(sorted(files))`, `list_files(..., shuffle=False)`) with no `shuffle`
before or after is left alone: a parallel read reorders the records, and such reads export
rows that must line up with the files (calico/basenji `bin/tfr_qc.py`, `bin/tfr_hdf5.py`).
The direct form (`TFRecordDataset(sorted(files))`) is still reported: there
`num_parallel_reads` reorders too; check the order is not needed before taking the hint.
"""
    valid = (
        Valid("""
            import tensorflow as tf
            files = tf.io.gfile.glob("data/train-*.tfrecord")
            ds = tf.data.TFRecordDataset(files, num_parallel_reads=tf.data.AUTOTUNE)
            model.fit(ds.map(parse).batch(32), epochs=10)
        """, spelling="name: the files through a name"),
        Valid("""
            import tensorflow as tf
            ds = tf.data.TFRecordDataset("data/train.tfrecord")
            model.fit(ds.map(parse).batch(32), epochs=10)
        """, spelling="index: one file"),
        Valid("""
            import tensorflow as tf
            files = tf.data.Dataset.list_files("data/*.tfrecord")
            ds = files.interleave(tf.data.TFRecordDataset, cycle_length=4,
                                  num_parallel_calls=tf.data.AUTOTUNE)
            for epoch in range(10):
                for batch in ds.map(parse).batch(32):
                    train(batch)
        """, spelling="loop: interleave"),
        Valid("""
            import tensorflow as tf
            from readers import records
            model.fit(records("data").batch(32), epochs=10)
        """, files={"readers.py": """
            import glob
            import tensorflow as tf
            def records(root):
                files = sorted(glob.glob(root + "/*.tfrecord"))
                return tf.data.TFRecordDataset(files, num_parallel_reads=8)
        """}, spelling="module"),
        Valid("""
            import tensorflow as tf
            # %%
            ds = tf.data.TFRecordDataset(["a.tfrecord", "b.tfrecord"], None, None, 4)
            model.fit(ds.map(parse).batch(32), epochs=10)
        """, notebook=True, spelling="notebook"),
        # A parameter its caller gives one file.
        Valid("""
            import tensorflow as tf
            def make(path):
                return tf.data.TFRecordDataset(path).map(parse).batch(32)
            model.fit(make("data/train.tfrecord"), epochs=10)
        """, spelling="name: a parameter"),
        # A reader function handed to a library, which calls it per file in parallel (a
        # function named as a reader is taken as one, even where it is handed over elsewhere).
        Valid("""
            import tensorflow as tf
            def gzip_reader(filenames):
                return tf.data.TFRecordDataset(filenames, compression_type="GZIP")
            ds = tf.data.experimental.make_batched_features_dataset(
                "data/*.gz", 32, spec, reader=gzip_reader, reader_num_threads=8)
        """),
        # Counting the records once: read once, its speed cannot matter.
        Valid("""
            import tensorflow as tf
            files = tf.io.gfile.glob("data/*.tfrecord")
            tf.data.TFRecordDataset(files)
        """),
    )
    invalid = (
        Invalid("""
            import tensorflow as tf
            files = tf.io.gfile.glob("data/train-*.tfrecord")
            ds = tf.data.TFRecordDataset(files)
            model.fit(ds.map(parse).batch(32), epochs=10)
        """, count=1, lines=(3,), spelling="name: the files through a name"),
        Invalid("""
            import tensorflow as tf
            ds = tf.data.TFRecordDataset(["data/a.tfrecord", "data/b.tfrecord"])
            model.fit(ds.map(parse).batch(32), epochs=10)
        """, count=1, lines=(2,), spelling="index: a list of files"),
        Invalid("""
            import tensorflow as tf
            files = tf.data.Dataset.list_files("data/*.tfrecord")
            ds = files.flat_map(tf.data.TFRecordDataset)
            for epoch in range(10):
                for batch in ds.map(parse).batch(32):
                    train(batch)
        """, count=1, lines=(3,), spelling="loop: flat_map"),
        Invalid("""
            import tensorflow as tf
            def read(name):
                return tf.data.TFRecordDataset(name, compression_type="GZIP")
            files = tf.data.Dataset.list_files("data/*.tfrecord.gz")
            ds = files.flat_map(read).map(parse).batch(32)
            model.fit(ds, epochs=10)
        """, count=1, lines=(5,), spelling="name: flat_map of a function"),
        Invalid("""
            import tensorflow as tf
            def input_fn(filenames, batch_size=32):
                ds = tf.data.TFRecordDataset(filenames)
                return ds.map(parse).shuffle(1000).repeat().batch(batch_size)
            estimator.train(lambda: input_fn(tf.io.gfile.glob("gs://b/train-*")), steps=10000)
        """, count=1, lines=(3,), spelling="name: a parameter"),
        Invalid("""
            import tensorflow as tf
            files = tf.data.Dataset.list_files("data/*.tfrecord")
            ds = files.interleave(tf.data.TFRecordDataset, cycle_length=4)
            model.fit(ds.map(parse).batch(32), epochs=10)
        """, count=1, lines=(3,), spelling="loop: interleave without parallel calls"),
        Invalid("""
            import tensorflow as tf
            from readers import records
            model.fit(records("data").batch(32), epochs=10)
        """, files={"readers.py": """
            import glob
            import tensorflow as tf
            def records(root):
                files = sorted(glob.glob(root + "/*.tfrecord"))
                return tf.data.TFRecordDataset(files)
        """}, count=1, spelling="module"),
        Invalid("""
            import tensorflow as tf
            # %%
            ds = tf.data.TFRecordDataset([f"data/{i}.tfrecord" for i in range(8)])
            model.fit(ds.map(parse).batch(32), epochs=10)
        """, count=1, notebook=True, spelling="notebook"),
    )
    # Review 39 (9): records exported in file order (sorted files, or list_files with
    # shuffle=False): a parallel read would reorder them.
    valid = (  # type: ignore[assignment]
        *valid,
        Valid("""
            import glob
            import numpy as np
            import tensorflow as tf
            def export_labels(pattern):
                names = sorted(glob.glob(pattern))
                ds = tf.data.Dataset.from_tensor_slices(names).flat_map(tf.data.TFRecordDataset)
                np.save("labels.npy", np.array([r.numpy() for r in ds]))
        """, spelling="loop: flat_map in file order"),
        Valid("""
            import tensorflow as tf
            files = tf.data.Dataset.list_files("shards/*.tfrecord", shuffle=False)
            for rec in files.flat_map(tf.data.TFRecordDataset):
                write_row(rec)
        """, spelling="name: list_files without shuffle"),
    )

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Finding]:
        call: Any = node
        func = call.func
        if method_call(node, "interleave"):
            # interleave(reader, cycle_length) with no num_parallel_calls: round robin, one
            # thread, one read at a time.
            if len(call.args) >= 4 or keyword(call, "num_parallel_calls") is not None:
                return
            fn = call.args[0] if call.args else keyword(call, "map_func")
            reader = fn if fn is not None and ctx.qualname(fn) in READERS else \
                _opens_records(ctx, map_function(ctx, call))
            if reader is None or not ctx.is_dataset(func.value):
                return
        elif method_call(node, "flat_map"):
            fn = call.args[0] if call.args else None
            reader = fn if fn is not None and ctx.qualname(fn) in READERS else \
                _opens_records(ctx, map_function(ctx, call))
            if reader is None or not ctx.is_dataset(func.value):
                return
        elif ctx.call_qualname(node) in READERS:
            if len(call.args) >= 4 or keyword(call, "num_parallel_reads") is not None:
                return
            files = call.args[0] if call.args else keyword(call, "filenames")
            if not many_files(ctx, files):
                return
        else:
            return
        if discarded(ctx, call) or only_peeked(ctx, call):
            return  # thrown away or read once: its speed cannot matter
        if type(func) is ast.Attribute and func.attr in ("flat_map", "interleave") \
                and _in_file_order(ctx, call):
            return
        yield self.finding(ctx, node)
