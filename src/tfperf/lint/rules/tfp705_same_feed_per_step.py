"""TFP705: the same NumPy array fed to session.run in every iteration of a loop."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from tfperf.core.findings import Finding
from tfperf.lint.analysis.assignments import assigned_value
from tfperf.lint.analysis.sessions import session_runs
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context

_LOOPS = (ast.For, ast.AsyncFor, ast.While)
# Attributes that name a whole split of a dataset object (``mnist.test.images``).
_DATA_ATTRS = frozenset({"images", "labels", "data", "target", "targets", "features"})
# NumPy calls that return an array the size of their input (not a scalar or a shape).
_NUMPY_ARRAY_MAKERS = frozenset({
    "array", "asarray", "load", "loadtxt", "genfromtxt", "fromfile", "concatenate", "stack",
    "vstack", "hstack", "transpose", "reshape", "expand_dims", "eye", "zeros", "ones",
    "linspace", "arange", "column_stack", "squeeze"})


def _root(expr: ast.AST) -> ast.AST:
    while type(expr) in (ast.Subscript, ast.Attribute):
        expr = expr.value
    return expr


def _stored_in(loop: ast.AST, names: set[str]) -> bool:
    """The loop rebinds one of ``names`` or writes into it (``a[i] = v``, ``a.x = v``)."""
    for n in ast.walk(loop):
        if type(n) in (ast.Name, ast.Subscript, ast.Attribute) \
                and type(n.ctx) is not ast.Load:
            root = _root(n)
            if type(root) is ast.Name and root.id in names:
                return True
        elif type(n) is ast.Call and type(n.func) is ast.Attribute \
                and n.func.attr in ("append", "extend", "fill", "resize", "sort", "shuffle") \
                and type(_root(n.func.value)) is ast.Name \
                and _root(n.func.value).id in names:
            return True
    return False


def _data_array(ctx: Context, expr: ast.AST, depth: int = 0) -> bool:
    """``expr`` is surely a data array: a NumPy array-making call, a dataset split
    attribute (``mnist.test.images``), a name bound to one, or a subscript of one."""
    if depth > 3:
        return False
    if type(expr) is ast.Subscript:
        return _data_array(ctx, expr.value, depth + 1)
    if type(expr) is ast.Attribute:
        return expr.attr in _DATA_ATTRS and type(expr.value) is ast.Attribute
    if type(expr) is ast.Call:
        q = ctx.qualname(expr.func) or ""
        return q.startswith("numpy.") and q.rsplit(".", 1)[-1] in _NUMPY_ARRAY_MAKERS
    if type(expr) is ast.Name:
        value = assigned_value(ctx, expr)
        return value is not None and _data_array(ctx, value, depth + 1)
    return False


class SameFeedPerStep(Rule):
    code = "TFP705"
    name = "same-feed-per-step"
    message = ("the same array fed to session.run in every iteration: feed_dict copies it "
               "into the runtime on each run")
    hint = ("put data that does not change into the graph once (tf.constant, a Variable "
            "loaded once) or stream it with tf.data")
    claims = ("S9",)
    group = "preview"
    node_types = ()
    requires_imports = frozenset({"tensorflow"})
    docs = """\
## What it does
In TF1 graph code, finds a `session.run` in a loop whose `feed_dict` feeds a value the loop
never changes and that is surely a data array: a NumPy array (`np.array`, `np.load`,
`np.transpose(...)` of the data), a dataset split (`mnist.test.images`), a name bound to one
outside the loop, or a slice of one.

## Why is this bad?
`feed_dict` converts and copies every fed value into the runtime on every run (to the GPU
when the graph runs there): feeding the whole training or test set on each step moves the
same bytes again and again, and the copy is on the critical path of the step. Data that does
not change belongs in the graph once; data that does is better streamed by `tf.data`, which
prepares the next batch while the current one runs.

## Example
```python
for step in range(1000):
    sess.run(train, feed_dict={x: x_train, y: y_train})        # full-batch, every step
```

## Use instead
```python
x_c, y_c = tf.constant(x_train), tf.constant(y_train)          # copied once
loss = model_loss(x_c, y_c)
for step in range(1000):
    sess.run(train)
```

## Fix safety
No automatic fix: where the data should live depends on its size and on the graph.

## Known limitations
Values whose kind is not known (a parameter, a function's result), scalars and small
literals (`keep_prob: 1.0`), and arrays the loop rebinds (mini-batches) are not reported.
"""
    valid = (
        # A new mini-batch each step.
        Valid("""
            import numpy as np
            import tensorflow as tf
            x_vals = np.load('x.npy')
            with tf.Session() as sess:
                for step in range(100):
                    idx = np.random.choice(len(x_vals), 32)
                    batch = x_vals[idx]
                    sess.run(train, feed_dict={x: batch})
        """),
        # Scalars fed each step.
        Valid("""
            import tensorflow as tf
            sess = tf.Session()
            for step in range(100):
                sess.run(train, feed_dict={keep_prob: 0.5, lr: 0.01})
        """),
        # Fed once, outside any loop.
        Valid("""
            import numpy as np
            import tensorflow as tf
            x_test = np.load('x_test.npy')
            sess = tf.Session()
            print(sess.run(acc, feed_dict={x: x_test}))
        """),
        # Written into by the loop (a latent code edited per frame).
        Valid("""
            import numpy as np
            import tensorflow as tf
            latent = np.zeros((3, 3), dtype=np.int32)
            sess = tf.Session()
            for f in range(30):
                latent[f % 3, 0] = f
                frames.append(sess.run(gen, feed_dict={z: latent[None]}))
        """),
        # Bound by the loop.
        Valid("""
            import tensorflow as tf
            sess = tf.Session()
            for xb, yb in batches:
                sess.run(train, feed_dict={x: xb, y: yb})
        """),
    )
    invalid = (
        Invalid("""
            import numpy as np
            import tensorflow as tf
            x_vals_test = np.load('x_test.npy')
            y_vals_test = np.load('y_test.npy')
            sess = tf.Session()
            for i in range(500):
                sess.run(train_step, feed_dict={x: batch_x(i)})
                test_loss = sess.run(loss, feed_dict={x: x_vals_test,
                                                      y: np.transpose([y_vals_test])})
        """, count=2, lines=(8, 9)),
        Invalid("""
            import tensorflow as tf
            with tf.Session() as sess:
                for epoch in range(20):
                    acc = sess.run(accuracy, feed_dict={X: mnist.test.images,
                                                        Y: mnist.test.labels})
        """, count=2, lines=(4, 5)),
        # Full-batch training on a file's data (hunkim/DeepLearningZeroToAll lab 4).
        Invalid("""
            import numpy as np
            import tensorflow as tf
            xy = np.loadtxt('data.csv', delimiter=',', dtype=np.float32)
            x_data, y_data = xy[:, 0:-1], xy[:, [-1]]
            sess = tf.Session()
            for step in range(2001):
                cost_val, _ = sess.run([cost, train], feed_dict={X: xy[:, 0:-1]})
        """, count=1, lines=(7,)),
    )

    def check_module(self, ctx: Context) -> Iterator[Finding]:
        for run in session_runs(ctx):
            feed = run.feed
            if type(feed) is ast.Name:
                feed = assigned_value(ctx, feed)
            if type(feed) is not ast.Dict:
                continue
            loops = [lp for lp in ctx.enclosing_loops(run.call) if type(lp) in _LOOPS]
            if not loops:
                continue
            for value in feed.values:
                names = {n.id for n in ast.walk(value) if type(n) is ast.Name
                         and getattr(ctx.binding(n), "kind", None) != "import"}
                if not names or _stored_in(loops[0], names):
                    continue  # a literal, or changed by the loop
                if _data_array(ctx, value):
                    yield self.finding(ctx, value)
