"""TFP602: Dataset.map / interleave without num_parallel_calls (one element at a time)."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from tfperf.core.findings import Finding, Fix
from tfperf.lint.analysis.pipelines import is_random_op, is_tf_dataset, map_function
from tfperf.lint.analysis.syntax import body_nodes, keyword
from tfperf.lint.analysis.traced import PY_FUNCTIONS
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context

# Method → positional index of its num_parallel_calls argument.
PARALLEL_ARG = {"map": 1, "interleave": 3}
# TF calls with effects whose order parallel calls could change.
STATEFUL = frozenset({"tensorflow.print", "tensorflow.summary", "tensorflow.Variable",
                      "tensorflow.compat.v1.assign", "tensorflow.compat.v1.assign_add"})


def _pure_tf(ctx: Context, fn: ast.AST) -> bool:
    """Every call in ``fn`` is a TensorFlow/Keras-ops function without state or randomness:
    running it on several elements at once gives the same elements."""
    for n in body_nodes(fn):
        if type(n) is not ast.Call:
            continue
        q = ctx.qualname(n.func)  # type: ignore[attr-defined]
        if q is None or not q.startswith(("tensorflow.", "keras.ops.")):
            return False
        if q in PY_FUNCTIONS or is_random_op(q) or q in STATEFUL \
                or q.startswith(("tensorflow.summary.", "tensorflow.compat.v1.")):
            return False
    return True


class SequentialMap(Rule):
    code = "TFP602"
    name = "sequential-map"
    message = "Dataset.map/interleave without num_parallel_calls: one element at a time"
    hint = "pass num_parallel_calls=tf.data.AUTOTUNE"
    claims = ("S19",)
    group = "preview"
    node_types = (ast.Call,)
    callee_names = frozenset(PARALLEL_ARG)
    fixable = True
    docs = """\
## What it does
Finds `ds.map(fn)` and `ds.interleave(fn, ...)` on a `tf.data` dataset without
`num_parallel_calls`, where `fn` does some work (a lambda that only picks or reorders
components, such as `lambda x, y: x`, is not reported).

## Why is this bad?
Without `num_parallel_calls` tf.data runs `fn` on one element at a time, on one thread: the
input pipeline uses one core while the others idle, and the model waits for it (claim S19;
TF guide "Better performance with the tf.data API": parallelise data transformation and data
extraction). `tf.data.AUTOTUNE` lets the runtime pick the parallelism.

## Example
```python
ds = files.interleave(tf.data.TFRecordDataset, cycle_length=4)
ds = ds.map(parse_and_augment)
```

## Use instead
```python
ds = files.interleave(tf.data.TFRecordDataset, cycle_length=4,
                      num_parallel_calls=tf.data.AUTOTUNE)
ds = ds.map(parse_and_augment, num_parallel_calls=tf.data.AUTOTUNE)
```

## Fix safety
The fix adds `num_parallel_calls=tf.data.AUTOTUNE`. Output order is kept: parallel `map` and
`interleave` are deterministic unless `deterministic=False` is passed or the dataset's
options say otherwise. The fix is **safe** when the function is visible here and calls only
stateless TensorFlow ops: then each element is the same as before. It is **unsafe** when the
function cannot be seen or uses random ops (`tf.random.*`, `tf.image.random_*`: elements draw
from the shared random state in a different order, so the augmentations differ), a
`py_function` (runs concurrently, holding the GIL), `tf.print` or other state; and whenever
the pipeline sets `deterministic=False`. No fix without a module-level `tensorflow` alias.
"""
    valid = (
        Valid("""
            import tensorflow as tf
            ds = tf.data.Dataset.range(8).map(lambda x: x * 2, num_parallel_calls=tf.data.AUTOTUNE)
        """),
        # Positional num_parallel_calls.
        Valid("""
            import tensorflow as tf
            ds = tf.data.Dataset.range(8).map(lambda x: tf.square(x), tf.data.AUTOTUNE)
        """),
        # Only restructuring: nothing to parallelise.
        Valid("""
            import tensorflow as tf
            ds = tf.data.Dataset.from_tensor_slices(({'a': [1, 2]}, [0, 1]))
            ds = ds.map(lambda feats, label: (feats['a'], label))
        """),
        # Python's map and a pandas-like object are not datasets.
        Valid("""
            import tensorflow as tf
            xs = list(map(tf.square, [tf.ones(2)]))
            def f(frame):
                return frame.map(str.upper)
        """),
    )
    invalid = (
        Invalid("""
            import tensorflow as tf
            def scale(x):
                return tf.cast(x, tf.float32) / 255.0
            ds = tf.data.Dataset.range(8).map(scale)
        """, count=1, lines=(4,), fixed="""
            import tensorflow as tf
            def scale(x):
                return tf.cast(x, tf.float32) / 255.0
            ds = tf.data.Dataset.range(8).map(scale, num_parallel_calls=tf.data.AUTOTUNE)
        """),
        # Aliased; interleave keeps its other arguments; the function is not visible.
        Invalid("""
            import tensorflow as tensorflow_alias
            files = tensorflow_alias.data.Dataset.list_files('*.tfrecord')
            ds = files.interleave(tensorflow_alias.data.TFRecordDataset, cycle_length=4)
        """, count=1, lines=(3,), fixed="""
            import tensorflow as tensorflow_alias
            files = tensorflow_alias.data.Dataset.list_files('*.tfrecord')
            ds = files.interleave(tensorflow_alias.data.TFRecordDataset, cycle_length=4, num_parallel_calls=tensorflow_alias.data.AUTOTUNE)
        """),  # noqa: E501 (the fixed line is as long as the fix makes it)
        # Random augmentation: fixed only as an unsafe fix (see Fix safety).
        Invalid("""
            import tensorflow as tf
            def train_ds(ds: tf.data.Dataset):
                return ds.map(
                    lambda img, y: (tf.image.random_flip_left_right(img), y),
                )
        """, count=1, lines=(3,), fixed="""
            import tensorflow as tf
            def train_ds(ds: tf.data.Dataset):
                return ds.map(
                    lambda img, y: (tf.image.random_flip_left_right(img), y), num_parallel_calls=tf.data.AUTOTUNE,
                )
        """),  # noqa: E501 (the fixed line is as long as the fix makes it)
        # `from tensorflow.data import Dataset`: no `tf` alias for the fix.
        Invalid("""
            from tensorflow.data import Dataset
            import numpy as np
            ds = Dataset.range(4).map(lambda x: x + np.int64(1))
        """, count=1, lines=(3,)),
    )

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Finding]:
        func = getattr(node, "func", None)
        if type(func) is not ast.Attribute or func.attr not in PARALLEL_ARG \
                or not ctx.imports_tf:
            return
        call: ast.Call = node  # type: ignore[assignment]
        if keyword(call, "num_parallel_calls") is not None \
                or len(call.args) > PARALLEL_ARG[func.attr] \
                or any(k.arg is None for k in call.keywords) or not call.args \
                or not is_tf_dataset(ctx, func.value):
            return
        fn = map_function(ctx, call)
        if fn is not None and not any(type(n) is ast.Call for n in body_nodes(fn)):
            return  # picks or reorders components only
        message = f"Dataset.{func.attr} without num_parallel_calls: one element at a time"
        yield self.finding(ctx, node, message, fix=self._fix(ctx, call, fn))

    def _fix(self, ctx: Context, call: ast.Call, fn: ast.AST | None) -> Fix | None:
        tf = ctx.module_alias("tensorflow")
        if tf is None:
            return None
        given = call.args + [k.value for k in call.keywords]
        last = max(given, key=lambda n: (n.end_lineno or 0, n.end_col_offset or 0))
        edit = ctx.insert_after(last, f", num_parallel_calls={tf}.data.AUTOTUNE")
        deterministic = keyword(call, "deterministic")
        safe = fn is not None and _pure_tf(ctx, fn) and not (
            type(deterministic) is ast.Constant and deterministic.value is False)
        make = self.safe_fix if safe else self.unsafe_fix
        return make(edit, description="run the function in parallel, order kept")
