"""TFP101: a Python loop that walks a tensor element by element."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from tfperf.core.findings import Finding
from tfperf.lint.analysis.loops import element_loop, header_end
from tfperf.lint.rule import Example, Rule
from tfperf.lint.semantic import Context


class PythonLoopOverTensor(Rule):
    code = "TFP101"
    name = "python-loop-over-tensor"
    message = "Python loop over tensor elements: one small op per element"
    hint = ("replace the loop by whole-tensor ops (broadcasting, tf.reduce_*, tf.einsum, "
            "tf.vectorized_map)")
    claims = ("S12", "S16")
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

Loops over Python lists (`range(len(layers))`), over datasets, and loops without per-element
tensor work are not reported; neither is iterating a tensor inside `tf.function`, which
AutoGraph turns into a graph loop.
"""
    valid = (
        # Whole-tensor op: nothing to report.
        "import tensorflow as tf\n"
        "def f(x, w):\n"
        "    return tf.reduce_sum(x * w, axis=1)\n",
        # A loop over a list of layers (its length is not a tensor's).
        "import tensorflow as tf\n"
        "def f(x, layers):\n"
        "    for i in range(len(layers)):\n"
        "        x = layers[i](x)\n"
        "    return x\n",
        # Iterating a dataset is how tf.data is consumed.
        "import tensorflow as tf\n"
        "ds = tf.data.Dataset.range(10).batch(2)\n"
        "for batch in ds:\n"
        "    print(tf.reduce_sum(batch))\n",
        # Index loop without tensor work (pure Python bookkeeping on a NumPy array).
        "import numpy as np\n"
        "a = np.zeros((3, 4))\n"
        "names = []\n"
        "for i in range(a.shape[0]):\n"
        "    names.append(str(i))\n",
        # Iterating a tensor inside tf.function: AutoGraph makes it a graph loop.
        "import tensorflow as tf\n"
        "@tf.function\n"
        "def f(x):\n"
        "    total = tf.constant(0.0)\n"
        "    for row in x:\n"
        "        total += tf.reduce_max(row)\n"
        "    return total\n",
        # `tf` rebound to something else: not TensorFlow any more.
        "import tensorflow as tf\n"
        "tf = None\n"
        "def f(n, items):\n"
        "    for i in range(len(items)):\n"
        "        items[i] = tf\n",
    )
    invalid = (
        Example(
            "import tensorflow as tf\n"
            "def f(x, w):\n"
            "    out = []\n"
            "    for i in range(x.shape[0]):\n"
            "        out.append(tf.reduce_sum(x[i] * w))\n"
            "    return out\n",
            count=1, lines=(4,)),
        Example(
            "import tensorflow as tf\n"
            "t = tf.random.normal([100, 8])\n"
            "norms = [tf.norm(t[i]) for i in range(len(t))]\n",
            count=1, lines=(3,)),
        Example(
            "import tensorflow as tf\n"
            "def f(x):\n"
            "    acc = tf.zeros([4])\n"
            "    for i in range(tf.shape(x)[0]):\n"
            "        acc = tf.maximum(acc, x[i])\n"
            "    return acc\n",
            count=1, lines=(4,)),
        Example(
            "import tensorflow as tf\n"
            "x = tf.ones([10, 3])\n"
            "total = 0.0\n"
            "for row in x:\n"
            "    total = total + tf.reduce_sum(row)\n",
            count=1, lines=(4,)),
        # The article's §5.1 function: both loops walk the tensor element by element.
        Example(
            "import tensorflow as tf\n"
            "def compute_feature_tf_slow(samples, weights):\n"
            "    results = []\n"
            "    for i in range(samples.shape[0]):\n"
            "        window_data = samples[i]\n"
            "        weighted_sum = tf.zeros([samples.shape[2]], dtype=tf.float32)\n"
            "        for j in range(samples.shape[1]):\n"
            "            weighted_sum = weighted_sum + window_data[j] * weights[j]\n"
            "        results.append(weighted_sum)\n"
            "    return tf.stack(results)\n",
            count=2, lines=(4, 7)),
        # Spelled through other import styles.
        Example(
            "from tensorflow import math as tfm\n"
            "import tensorflow.compat.v1 as v1\n"
            "def f(x: v1.Tensor):\n"
            "    return [tfm.exp(x[k]) for k in range(len(x))]\n",
            count=1),
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
