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
# Makers whose first argument is the array's shape.
_SHAPED_MAKERS = frozenset({"zeros", "ones", "empty", "full"})
# At most this many elements is a small literal (a truth table, a 2x3 fake batch): copying
# it costs the feed's fixed overhead, not a data copy worth moving into the graph.
_SMALL_LITERAL = 256


def _int_value(ctx: Context, expr: ast.AST, depth: int = 0) -> int | None:
    """An int literal, a name bound to one, or ``d['k']`` of a dict literal ``d``."""
    if depth > 3:
        return None
    if type(expr) is ast.Constant and type(expr.value) is int:
        return expr.value
    if type(expr) is ast.Name:
        value = assigned_value(ctx, expr)
        return None if value is None else _int_value(ctx, value, depth + 1)
    if type(expr) is ast.Subscript and type(expr.slice) is ast.Constant:
        table = assigned_value(ctx, expr.value)
        if type(table) is ast.Dict:
            for k, v in zip(table.keys, table.values, strict=True):
                if type(k) is ast.Constant and k.value == expr.slice.value:
                    return _int_value(ctx, v, depth + 1)
    return None


def _literal_size(ctx: Context, expr: ast.AST, depth: int = 0) -> int | None:
    """How many numbers a nested list/tuple literal of constants (or a name bound to one)
    holds, else ``None``."""
    if depth > 8:
        return None
    if type(expr) is ast.Name:
        value = assigned_value(ctx, expr)
        return None if value is None else _literal_size(ctx, value, depth + 1)
    if type(expr) in (ast.List, ast.Tuple):
        sizes = [_literal_size(ctx, e, depth + 1) for e in expr.elts]
        return None if None in sizes else sum(sizes)  # type: ignore[arg-type]
    if type(expr) is ast.UnaryOp:
        expr = expr.operand
    return 1 if type(expr) is ast.Constant and type(expr.value) in (int, float, bool) else None


def _small_literal(ctx: Context, call: ast.Call, maker: str) -> bool:
    """``np.array([[0, 0], [0, 1], ...])`` or ``np.ones((2, 3))``: a handful of numbers."""
    if not call.args:
        return False
    first = call.args[0]
    if maker in ("array", "asarray"):
        size = _literal_size(ctx, first)
    elif maker in _SHAPED_MAKERS:
        dims = first.elts if type(first) in (ast.List, ast.Tuple) else [first]
        ints = [_int_value(ctx, d) for d in dims]
        size = None
        if None not in ints:
            size = 1
            for n in ints:
                size *= n  # type: ignore[operator]
    else:
        return False
    return size is not None and size <= _SMALL_LITERAL


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
        maker = q.rsplit(".", 1)[-1]
        return q.startswith("numpy.") and maker in _NUMPY_ARRAY_MAKERS \
            and not _small_literal(ctx, expr, maker)
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
literals (`keep_prob: 1.0`, a truth table `np.array([[0, 0], [0, 1], ...])`, `np.ones((2,
3))`: at most 256 numbers), arrays the loop rebinds (mini-batches), and feeds into a
placeholder the loop itself creates (a new graph per iteration, as in tests) are not
reported.
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
        # A small literal (the XOR truth table) fed each step: the copy is a few bytes.
        Valid("""
            import numpy as np
            import tensorflow as tf
            rows = [[0, 0], [0, 1], [1, 0], [1, 1]]
            table_in = np.array(rows, dtype=np.float32)
            sizes = {'n': 2, 'd': 3}
            fake = np.ones((sizes['n'], sizes['d']))
            sess = tf.Session()
            for step in range(5000):
                sess.run(train, feed_dict={x: table_in, z: fake})
        """),
        # A placeholder built in the loop: each iteration feeds a new graph.
        Valid("""
            import numpy as np
            import tensorflow as tf
            lengths = np.load('lengths.npy')
            for width in (1, 4, 8):
                n = tf.placeholder(tf.int32, [None])
                with tf.Session() as sess:
                    sess.run(out_for(n, width), feed_dict={n: lengths})
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
            for key, value in zip(feed.keys, feed.values, strict=True):
                if key is not None and _stored_in(loops[0], {n.id for n in ast.walk(key)
                                                             if type(n) is ast.Name}):
                    continue  # a placeholder made anew each iteration: a new graph each time
                names = {n.id for n in ast.walk(value) if type(n) is ast.Name
                         and getattr(ctx.binding(n), "kind", None) != "import"}
                if not names or _stored_in(loops[0], names):
                    continue  # a literal, or changed by the loop
                if _data_array(ctx, value):
                    yield self.finding(ctx, value)
