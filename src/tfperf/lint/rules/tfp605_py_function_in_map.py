"""TFP605: tf.py_function / tf.numpy_function inside a tf.data map function."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from tfperf.core.findings import Finding
from tfperf.lint.analysis.traced import PY_FUNCTIONS
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context


class PyFunctionInMap(Rule):
    code = "TFP605"
    name = "py-function-in-map"
    message = "Python function in a tf.data map: runs under the GIL, one element at a time"
    hint = ("express it with TF ops (tf.io, tf.image, tf.strings...); if impossible, batch "
            "first so the Python function runs once per batch")
    claims = ("S19", "S4")
    group = "preview"
    node_types = (ast.Call,)
    callee_qualnames = PY_FUNCTIONS
    docs = """\
## What it does
Finds `tf.py_function`, `tf.numpy_function` and `tf.compat.v1.py_func` called inside a
function (or lambda) given to `Dataset.map`, `interleave`, `filter` or `flat_map`.

## Why is this bad?
tf.data runs map functions as graphs on its own thread pool; a Python function inside one
has to take Python's global interpreter lock, so `num_parallel_calls` cannot run it on more
than one core at a time, and each call copies its inputs to NumPy and back (claim S4's
round trips; S19: the article's fast pipeline keeps the data in TF ops end to end). The
function also cannot be serialised with the dataset, and graph optimisations stop at it.

## Example
```python
def load(path):
    return np.load(path.numpy().decode())
ds = paths.map(lambda p: tf.py_function(load, [p], tf.float32))
```

## Use instead
```python
ds = paths.map(lambda p: tf.io.parse_tensor(tf.io.read_file(p), tf.float32),
               num_parallel_calls=tf.data.AUTOTUNE)
```
Or convert the files once to TFRecord; or, when only a Python library can do the work, batch
first and call it once per batch.

## Fix safety
No automatic fix: the TF replacement depends on what the Python function does. The rule
reports every such call, because the cost is real even when no TF op can replace it: then
treat the finding as a note and keep the Python part as small and as batched as possible.
"""
    valid = (
        Valid("""
            import tensorflow as tf
            ds = tf.data.Dataset.list_files('*.png').map(
                lambda p: tf.io.decode_png(tf.io.read_file(p)),
                num_parallel_calls=tf.data.AUTOTUNE)
        """),
        # A py_function outside any dataset map.
        Valid("""
            import tensorflow as tf
            def f(x):
                return tf.py_function(lambda v: v * 2, [x], tf.float32)
        """),
        # Python's map.
        Valid("""
            import tensorflow as tf
            out = list(map(lambda v: tf.numpy_function(abs, [v], tf.float32), [tf.ones(2)]))
        """),
        # A user's own py_function.
        Valid("""
            import tensorflow as tf
            def py_function(f, inp, tout):
                return f(*inp)
            ds = tf.data.Dataset.range(3).map(lambda x: py_function(tf.square, [x], tf.int64))
        """),
    )
    invalid = (
        Invalid("""
            import numpy as np
            import tensorflow as tf
            def load(path):
                return np.load(path.numpy().decode())
            ds = tf.data.Dataset.list_files('*.npy')
            ds = ds.map(lambda p: tf.py_function(load, [p], tf.float32))
        """, count=1, lines=(6,)),
        # A named map function, aliased module.
        Invalid("""
            import tensorflow as tensorflow_alias
            def parse(x):
                y = tensorflow_alias.numpy_function(lambda v: v + 1, [x],
                                                    tensorflow_alias.int64)
                return y
            ds = tensorflow_alias.data.Dataset.range(8).map(parse)
        """, count=1, lines=(3,)),
        # `from tensorflow import py_function`, in interleave.
        Invalid("""
            from tensorflow import py_function, string
            def expand(ds):
                return ds.interleave(lambda p: py_function(read, [p], string), cycle_length=2)
        """, count=1, lines=(3,)),
    )

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Finding]:
        if ctx.call_qualname(node) in PY_FUNCTIONS and ctx.in_dataset_map_fn(node):
            yield self.finding(ctx, node)
