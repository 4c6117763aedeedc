"""TFP101: a Python loop that walks a tensor element by element."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from tfperf.core.findings import Finding
from tfperf.lint.analysis.dependence import loop_flow
from tfperf.lint.analysis.loops import (
    body_outside_sinks,
    does_tensor_work,
    element_loop,
    header_end,
    in_chunks,
    measures_list,
)
from tfperf.lint.analysis.tensors import surely_tensor
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context


class PythonLoopOverTensor(Rule):
    code = "TFP101"
    batches_loops = True
    name = "python-loop-over-tensor"
    message = "Python loop over tensor elements: one small op per element"
    hint = ("replace the loop by whole-tensor ops (broadcasting, tf.reduce_*, tf.einsum, "
            "tf.vectorized_map)")
    claims = ("S12", "S16")
    group = "perf"
    node_types = (ast.For, ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)
    needs_tf = True  # nothing to report where neither TF nor Keras is imported
    docs = """\
## What it does
Finds Python loops that visit a tensor one element (row, slice) at a time and do tensor work
per element: `for i in range(x.shape[0])`, `range(len(t))`, `range(tf.shape(t)[0])` with `t[i]`
in the body, or iterating a tensor directly (`for row in t`, `for i, row in enumerate(t)`)
outside `tf.function`. A nest
of such loops (rows, then columns) is one finding, on the outermost loop.

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
Not reported: loops over Python lists (`range(len(layers))`, the lists `tf.split`,
`tf.gradients` or `tf.trainable_variables()` return, `tf.unstack` along another axis than
the first: channels or a static RNN's time steps), over datasets, loops whose body only
indexes (to print, plot or convert each row) without tensor work or whose tensor work only
feeds a plot, a print or a file write (`plt.imshow(tf.reshape(images[i], (28, 28)))`, through
a name only those calls read), a `tf.range(len(paths))` counter over the indices of a Python
list (`paths[k]` loaded and predicted one by one), loops with a recurrence
(a value read before it is re-bound in the iteration and not a plain running sum/max: a
hand-unrolled RNN, `x = layer(x)`), and iterating a tensor inside `tf.function`, which
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
        # Lists of tensors that TF functions return: a few Python objects, not elements.
        Valid("""
            import tensorflow as tf
            def flatgrad(loss, var_list, clip_norm):
                grads = tf.gradients(loss, var_list)
                grads = [tf.clip_by_norm(g, clip_norm=clip_norm) for g in grads]
                for i in range(len(grads)):
                    grads[i] = tf.reshape(grads[i], [-1])
                return tf.concat(grads, axis=0)
        """),
        Valid("""
            import tensorflow as tf
            t_vars = tf.compat.v1.trainable_variables()
            assign_ops = {}
            for var in t_vars:
                pl = tf.compat.v1.placeholder(tf.float32, var.get_shape())
                assign_ops[var] = (var.assign(pl), pl)
            heads = tf.split(tf.ones([4, 8]), 4, axis=1)
            outs = [tf.nn.relu(h) for h in heads]
        """),
        # Unstacked along the time axis: a static RNN's step inputs, each a whole batch.
        Valid("""
            import tensorflow as tf
            def decoder_inputs(targets, steps):
                per_step = tf.unstack(targets, num=steps, axis=1)
                return [tf.expand_dims(t, axis=-1) for t in per_step]
        """),
        # A list of model outputs; a layer's weights.
        Valid("""
            import tensorflow as tf
            def losses(model, x, layer):
                outputs = model(x)
                total = [tf.reduce_mean(out) for out in outputs]
                for i in range(len(outputs)):
                    total.append(tf.reduce_max(outputs[i]))
                norms = [tf.norm(w) for w in layer.trainable_weights]
                return total, norms
        """),
        # A hand-unrolled RNN: step t needs the state of step t - 1.
        Valid("""
            import tensorflow as tf
            def rnn(x, cell, h):
                outputs = []
                for t in range(x.shape[1]):
                    out, h = cell(x[:, t], h)
                    outputs.append(tf.nn.relu(out))
                return tf.stack(outputs, axis=1)
        """),
        # A parameter that may hold a list of gradients; tf.range under a tf.function wrapper.
        Valid("""
            import tensorflow as tf
            from mylib import common
            @tf.function
            def cast_all(grad_vars):
                return [tf.cast(g, tf.bfloat16) for g in grad_vars]
            @common.function(autograph=True)
            def add_data(buffer):
                for i in tf.range(10, dtype=tf.int64):
                    buffer.add_batch(tf.ones((4,), dtype=tf.int64) * i)
        """),
        # `len()` of a parameter (a list of feature maps), even where one branch stacks it.
        Valid("""
            import tensorflow as tf
            def fuse(nodes, weights, method):
                if method == "stack":
                    nodes = tf.stack(nodes, axis=-1)
                    return tf.reduce_sum(nodes, -1)
                nodes = [nodes[i] * weights[i] for i in range(len(nodes))]
                return tf.add_n(nodes)
        """),
        # Chunks, not elements: a range with a step.
        Valid("""
            import tensorflow as tf
            def grads(alphas, x, batch_size, one_batch):
                out = []
                for start in tf.range(0, len(alphas), batch_size):
                    out.append(one_batch(alphas[start:start + batch_size]) * 2.0)
                for i in range(0, x.shape[0], batch_size):
                    out.append(tf.reduce_sum(x[i:i + batch_size], axis=0))
                return tf.concat(out, axis=0)
        """),
        # tf.scan with a list initializer returns a list of tensors.
        Valid("""
            import tensorflow as tf
            rets = tf.scan(lambda a, i: [a[0] + 1., a[1] * 2.], tf.range(5), [0., 1.])
            summaries = [tf.reduce_mean(r) for r in rets]
        """),
        # Rows visited only to print or plot them: no op to batch.
        Valid("""
            import tensorflow as tf
            attention = tf.random.normal([8, 5, 5])
            for head in range(attention.shape[0]):
                ax.matshow(attention[head][:-1, :])
                print([int(v) for v in attention[head][0]])
        """),
        # A tensor counter over a Python list's items (file paths): `range(len(paths))` in
        # another spelling; and ops whose results only go to a plot.
        Valid("""
            import os
            import matplotlib.pyplot as plt
            import tensorflow as tf
            paths = [os.path.join("img", f) for f in os.listdir("img")]
            for k in tf.range(len(paths)):
                show_and_predict(paths[tf.cast(k, tf.int64)])
            def grid(images):
                for i in range(images.shape[0]):
                    plt.subplot(4, 4, i + 1)
                    plt.imshow(tf.reshape(images[i], (28, 28)) * 255.0)
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
        # The article's §5.1 function: both loops walk the tensor element by element; one
        # finding, on the outer loop (one einsum replaces the nest).
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
        """, count=1, lines=(4,)),
        # A name re-bound inside the same iteration is not carried: still per-element work.
        Invalid("""
            import tensorflow as tf
            def f(x):
                out = []
                for i in range(x.shape[0]):
                    row = x[i]
                    row = tf.nn.relu(row) * 2.0
                    if row.shape[0] > 3:
                        scale = 0.5
                    else:
                        scale = 1.0
                    out.append(tf.reduce_sum(row) * scale)
                return out
        """, count=1, lines=(4,)),
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
        if not self._reported(ctx, node):
            return
        # Nested loops over one tensor's rows and columns are one place to change: the
        # outermost reported loop carries the finding, not each loop of the nest.
        if any(type(outer) in self.node_types and self._reported(ctx, outer)
               for outer in ctx.enclosing_loops(node)):
            return
        if type(node) is ast.For:
            yield self.finding(ctx, node, end_node=header_end(node))
        else:
            yield self.finding(ctx, node)

    def _reported(self, ctx: Context, node: ast.AST) -> bool:
        el = element_loop(ctx, node)
        if el is None:
            return False
        it = node.iter if type(node) is ast.For else node.generators[0].iter
        if in_chunks(ctx, it):
            return False  # `range(0, n, batch_size)`: one batch per iteration
        if el.kind == "iterate" and not self._surely_rows(ctx, node):
            return False
        if el.sized is not None and el.sized.how == "len" and measures_list(ctx, el.sized.obj):
            return False  # `range(len(nodes))` over a parameter: most often a list of tensors
        # Indexing alone (to print, plot or convert each row) launches no op worth batching,
        # nor do ops whose results only go to a plot, a print or a file write per item.
        if not does_tensor_work(ctx, body_outside_sinks(ctx, node)):
            return False
        # A recurrence (`h = cell(x[t], h)`): each iteration needs the previous one's result,
        # so the loop cannot become one whole-tensor op.
        return not (type(node) is ast.For and loop_flow(ctx, node).recurrent)

    @staticmethod
    def _surely_rows(ctx: Context, loop: ast.AST) -> bool:
        """What a loop iterates is surely one tensor (not a parameter that may hold a list of
        them), and not ``tf.range`` in a function decorated by some ``*function`` wrapper
        (``@common.function``): the AutoGraph idiom for a graph loop."""
        it = loop.iter if type(loop) is ast.For else loop.generators[0].iter
        if not surely_tensor(ctx, it):
            return False
        if ctx.is_call_to(it, "tensorflow.range"):
            fn = ctx.enclosing_function(loop)
            for d in getattr(fn, "decorator_list", ()):
                target = d.func if type(d) is ast.Call else d
                name = target.attr if type(target) is ast.Attribute else getattr(target, "id", "")
                if "function" in name:
                    return False
        return True
