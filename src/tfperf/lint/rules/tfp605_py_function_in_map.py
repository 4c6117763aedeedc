"""TFP605: tf.py_function / tf.numpy_function inside a tf.data map function."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from tfperf.core.findings import Finding
from tfperf.lint.analysis.traced import PY_FUNCTIONS
from tfperf.lint.rule import Example, Rule
from tfperf.lint.semantic import Context


class PyFunctionInMap(Rule):
    code = "TFP605"
    name = "py-function-in-map"
    message = "Python function in a tf.data map: runs under the GIL, one element at a time"
    hint = ("express it with TF ops (tf.io, tf.image, tf.strings...); if impossible, batch "
            "first so the Python function runs once per batch")
    claims = ("S19", "S4")
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
        "import tensorflow as tf\n"
        "ds = tf.data.Dataset.list_files('*.png').map(\n"
        "    lambda p: tf.io.decode_png(tf.io.read_file(p)),\n"
        "    num_parallel_calls=tf.data.AUTOTUNE)\n",
        # A py_function outside any dataset map.
        "import tensorflow as tf\n"
        "def f(x):\n"
        "    return tf.py_function(lambda v: v * 2, [x], tf.float32)\n",
        # Python's map.
        "import tensorflow as tf\n"
        "out = list(map(lambda v: tf.numpy_function(abs, [v], tf.float32), [tf.ones(2)]))\n",
        # A user's own py_function.
        "import tensorflow as tf\n"
        "def py_function(f, inp, tout):\n"
        "    return f(*inp)\n"
        "ds = tf.data.Dataset.range(3).map(lambda x: py_function(tf.square, [x], tf.int64))\n",
    )
    invalid = (
        Example(
            "import numpy as np\n"
            "import tensorflow as tf\n"
            "def load(path):\n"
            "    return np.load(path.numpy().decode())\n"
            "ds = tf.data.Dataset.list_files('*.npy')\n"
            "ds = ds.map(lambda p: tf.py_function(load, [p], tf.float32))\n",
            count=1, lines=(6,)),
        # A named map function, aliased module.
        Example(
            "import tensorflow as tensorflow_alias\n"
            "def parse(x):\n"
            "    y = tensorflow_alias.numpy_function(lambda v: v + 1, [x],\n"
            "                                        tensorflow_alias.int64)\n"
            "    return y\n"
            "ds = tensorflow_alias.data.Dataset.range(8).map(parse)\n",
            count=1, lines=(3,)),
        # `from tensorflow import py_function`, in interleave.
        Example(
            "from tensorflow import py_function, string\n"
            "def expand(ds):\n"
            "    return ds.interleave(lambda p: py_function(read, [p], string), cycle_length=2)\n",
            count=1, lines=(3,)),
    )

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Finding]:
        if ctx.call_qualname(node) in PY_FUNCTIONS and ctx.in_dataset_map_fn(node):
            yield self.finding(ctx, node)
