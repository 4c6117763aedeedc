"""TFP101: a Python loop that walks a tensor element by element."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from tfperf.core.findings import Finding
from tfperf.lint.analysis.loops import element_loop, header_end
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context


class PythonLoopOverTensor(Rule):
    code = "TFP101"
    name = "python-loop-over-tensor"
    message = "Python loop over tensor elements: one small op per element"
    hint = ("replace the loop by whole-tensor ops (broadcasting, tf.reduce_*, tf.einsum, "
            "tf.vectorized_map)")
    claims = ("S12", "S16")
    group = "perf"
    node_types = (ast.For, ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)
    docs = """\
## What it does
Finds Python loops that visit a tensor one element (row, slice) at a time and do tensor work
per element: `for i in range(x.shape[0])`, `range(len(t))`, `range(tf.shape(t)[0])` with `t[i]`
in the body, or iterating a tensor directly (`for row in t`) outside `tf.function`.

## Why is this bad?
Each iteration dispatches a few tiny ops, each paying Python and kernel-launch overhead, and
none uses the hardware's parallelism. The article's §5.1 baseline (claim S16) is such a loop;
replacing Python loops of small ops by whole-tensor ops gains 10²–10³× (claim S12). Inside
`tf.function` a `range(x.shape[0])` loop is unrolled at trace time into a graph with one copy
of the body per element.

## Example
```python
results = []
for i in range(samples.shape[0]):
    results.append(tf.reduce_sum(samples[i] * weights, axis=0))
```

## Use instead
```python
results = tf.reduce_sum(samples * weights, axis=1)  # one op over the batch
```
Broadcasting, `tf.reduce_*` with `axis`, `tf.einsum`, `tf.tensordot`; when the body truly
cannot be vectorised by hand, `tf.vectorized_map` or `tf.map_fn` inside `tf.function`.

## Fix safety
No automatic fix: vectorising a loop needs to know what the body computes. TFP102 fixes the
simplest case (a running sum).

## Known limitations
Loops over Python lists (`range(len(layers))`), over datasets, and loops without per-element
tensor work are not reported; neither is iterating a tensor inside `tf.function`, which
AutoGraph turns into a graph loop.
"""
    valid = (
        # Whole-tensor op: nothing to report.
        Valid("""
            import tensorflow as tf
            def f(x, w):
                return tf.reduce_sum(x * w, axis=1)
        """),
        # A loop over a list of layers (its length is not a tensor's).
        Valid("""
            import tensorflow as tf
            def f(x, layers):
                for i in range(len(layers)):
                    x = layers[i](x)
                return x
        """),
        # Iterating a dataset is how tf.data is consumed.
        Valid("""
            import tensorflow as tf
            ds = tf.data.Dataset.range(10).batch(2)
            for batch in ds:
                print(tf.reduce_sum(batch))
        """),
        # Index loop without tensor work (pure Python bookkeeping on a NumPy array).
        Valid("""
            import numpy as np
            a = np.zeros((3, 4))
            names = []
            for i in range(a.shape[0]):
                names.append(str(i))
        """),
        # Iterating a tensor inside tf.function: AutoGraph makes it a graph loop.
        Valid("""
            import tensorflow as tf
            @tf.function
            def f(x):
                total = tf.constant(0.0)
                for row in x:
                    total += tf.reduce_max(row)
                return total
        """),
        # `tf` rebound to something else: not TensorFlow any more.
        Valid("""
            import tensorflow as tf
            tf = None
            def f(n, items):
                for i in range(len(items)):
                    items[i] = tf
        """),
    )
    invalid = (
        Invalid("""
            import tensorflow as tf
            def f(x, w):
                out = []
                for i in range(x.shape[0]):
                    out.append(tf.reduce_sum(x[i] * w))
                return out
        """, count=1, lines=(4,)),
        Invalid("""
            import tensorflow as tf
            t = tf.random.normal([100, 8])
            norms = [tf.norm(t[i]) for i in range(len(t))]
        """, count=1, lines=(3,)),
        Invalid("""
            import tensorflow as tf
            def f(x):
                acc = tf.zeros([4])
                for i in range(tf.shape(x)[0]):
                    acc = tf.maximum(acc, x[i])
                return acc
        """, count=1, lines=(4,)),
        Invalid("""
            import tensorflow as tf
            x = tf.ones([10, 3])
            total = 0.0
            for row in x:
                total = total + tf.reduce_sum(row)
        """, count=1, lines=(4,)),
        # The article's §5.1 function: both loops walk the tensor element by element.
        Invalid("""
            import tensorflow as tf
            def compute_feature_tf_slow(samples, weights):
                results = []
                for i in range(samples.shape[0]):
                    window_data = samples[i]
                    weighted_sum = tf.zeros([samples.shape[2]], dtype=tf.float32)
                    for j in range(samples.shape[1]):
                        weighted_sum = weighted_sum + window_data[j] * weights[j]
                    results.append(weighted_sum)
                return tf.stack(results)
        """, count=2, lines=(4, 7)),
        # Spelled through other import styles.
        Invalid("""
            from tensorflow import math as tfm
            import tensorflow.compat.v1 as v1
            def f(x: v1.Tensor):
                return [tfm.exp(x[k]) for k in range(len(x))]
        """, count=1),
    )

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Finding]:
        if not ctx.imports_tf:
            return  # nothing here can be a tensor
        el = element_loop(ctx, node)
        if el is None:
            return
        if type(node) is ast.For:
            yield self.finding(ctx, node, end_node=header_end(node))
        else:
            yield self.finding(ctx, node)
