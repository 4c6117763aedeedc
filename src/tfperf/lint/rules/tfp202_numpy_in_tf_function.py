"""TFP202: ``.numpy()`` or a NumPy function applied to a tensor inside traced code."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from tfperf.core.findings import Finding
from tfperf.lint.analysis.imports import top_level_imports
from tfperf.lint.analysis.tensors import surely_tensor
from tfperf.lint.analysis.traced import eager_by_design, eager_guarded, traced
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context


class NumpyInTfFunction(Rule):
    code = "TFP202"
    name = "numpy-in-tf-function"
    message = (".numpy() inside tf.function: fails on a symbolic tensor, or freezes a "
               "trace-time value into the graph")
    hint = ("use TF ops (tf.math, tf.experimental.numpy) inside the graph; wrap code that "
            "truly needs NumPy in tf.numpy_function")
    claims = ("S4", "S13")
    group = "correctness"  # an error, not time; never judged (docs: Known limitations)
    docs = """\
## What it does
Finds `.numpy()` calls, and NumPy functions (`np.sum(x)`, `np.array(x)`, `np.mean(x)`...)
applied to tensors, in code TensorFlow traces into a graph: a `tf.function` (decorated or
wrapped), a Keras `call`/`train_step`/`test_step`, or a function given to `Dataset.map`.

## Why is this bad?
Inside a graph, tensors are symbolic: they have no value yet, so `.numpy()` raises
`AttributeError` and NumPy raises `NotImplementedError: Cannot convert a symbolic tf.Tensor
to a numpy array`. When it does not fail (on an eager tensor captured from outside), it runs
once, at trace time, and bakes that value into the graph as a constant: later calls silently
reuse a stale value, and every new value means a retrace (claim S13). Either way the
computation leaves the device for the host, which the article warns can eat every other gain
(claim S4).

## Example
```python
@tf.function
def normalise(x):
    return x / np.linalg.norm(x.numpy())
```

## Use instead
```python
@tf.function
def normalise(x):
    return x / tf.norm(x)
```
Host-only code goes through `tf.numpy_function(fn, [x], tf.float32)`, which runs on every
call (still a host round trip: keep it out of hot paths).

## Fix safety
No automatic fix: the TensorFlow equivalent of a NumPy call is not always one-to-one.

## Known limitations
Not reported: code in functions handed to `tf.py_function`/`tf.numpy_function` (eager
there), code guarded by `if tf.executing_eagerly():` or similar, and NumPy on Python values
(`np.sqrt(2.0)`, `np.prod(x.shape[1:])`: trace-time constants, fine). NumPy is recognised
through the module's top-level imports (`import numpy as np`, `from numpy import mean`).
NumPy applied to a parameter of a `tf.function` is reported only when the parameter surely
holds a tensor (an `input_signature`, a tensor annotation, a `Dataset.map` function, a Keras
`call`'s inputs), as a Python value there is legitimate. `float(t)`/`int(t)` are not
reported: AutoGraph turns them into `tf.cast`. Nor is eager-by-design code: under
`with tf.init_scope():` (lifted out of the graph), and Keras steps of a module that runs them
eagerly (`compile(..., run_eagerly=True)`, or `model.train_step(batch)` called by the module
itself and never `fit`).

In the `correctness` group (off by default; `--select correctness`): what it reports is an
error or a value frozen at trace time, a correctness problem rather than time lost, and it
printed nothing on the 39 user-style repositories judged so far (docs/lint.md, "Measured
precision and recall").
"""
    valid = (
        # Under tf.init_scope(): runs eagerly, once per trace (a lookup table's vocabulary).
        Valid("""
            import numpy as np
            import tensorflow as tf
            class Lookup(tf.Module):
                def __init__(self, keys):
                    self.keys = tf.constant(keys)
                    self.table = None
                @tf.function
                def __call__(self, ids):
                    if self.table is None:
                        with tf.init_scope():
                            vocab = np.unique(self.keys.numpy())
                            self.table = tf.constant(vocab)
                    return tf.gather(self.table, ids)
        """),
        # A Keras train_step this module calls itself, eagerly, and never through fit().
        Valid("""
            import tensorflow as tf
            class Model(tf.keras.Model):
                def train_step(self, data):
                    x, y = data
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_mean(tf.square(self(x) - y))
                    grads = tape.gradient(loss, self.trainable_variables)
                    self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
                    self.history_.append(float(loss.numpy()))
                    return {"loss": loss}
            def train(model, ds):
                for batch in ds:
                    model.train_step(batch)
        """),
        # TF ops only.
        Valid("""
            import tensorflow as tf
            @tf.function
            def normalise(x):
                return x / tf.norm(x)
        """),
        # NumPy on Python values and static shapes: trace-time constants.
        Valid("""
            import numpy as np
            import tensorflow as tf
            @tf.function
            def f(x):
                scale = np.sqrt(2.0)
                n = np.prod(x.shape[1:])
                return tf.reshape(x, [-1, n]) * scale
        """),
        # The eager body of a tf.py_function needs host values.
        Valid("""
            import numpy as np
            import tensorflow as tf
            def parse(line):
                def _decode(s):
                    return np.frombuffer(s.numpy(), dtype=np.uint8)
                return tf.py_function(_decode, [line], tf.uint8)
            ds = tf.data.TextLineDataset('f.txt').map(parse)
        """),
        # Eager code: .numpy() is fine outside traced functions (TFP201 covers loops).
        Valid("""
            import tensorflow as tf
            def report(x):
                return tf.reduce_mean(x).numpy()
        """),
        # Guarded: only runs when eager.
        Valid("""
            import tensorflow as tf
            @tf.function
            def f(x):
                if tf.executing_eagerly():
                    print(x.numpy())
                return x
        """),
        # A plain tf.function parameter may be a Python list: NumPy on it is legitimate.
        Valid("""
            import numpy as np
            import tensorflow as tf
            @tf.function
            def f(x, sizes):
                return tf.reshape(x, [np.sum(sizes)])
        """),
        # A user's own `numpy()` helper function is not a tensor method.
        Valid("""
            import tensorflow as tf
            def numpy(x):
                return x
            @tf.function
            def f(x):
                return numpy(x)
        """),
    )
    invalid = (
        Invalid("""
            import numpy as np
            import tensorflow as tf
            @tf.function
            def normalise(x):
                return x / np.linalg.norm(x.numpy())
        """, count=1, lines=(5,)),
        # Wrapped as f = tf.function(g); NumPy on a TF op's result.
        Invalid("""
            import numpy as np
            import tensorflow as tensorflow_alias
            def g(x):
                s = tensorflow_alias.reduce_sum(x)
                return np.log(s)
            f = tensorflow_alias.function(g)
        """, count=1, lines=(5,)),
        # A Keras layer's call; NumPy imported by name.
        Invalid("""
            from numpy import mean
            import tensorflow as tf
            class Centre(tf.keras.layers.Layer):
                def call(self, inputs):
                    return inputs - mean(inputs)
        """, count=1, lines=(5,)),
        # A Dataset.map function: .numpy() on the element; with an input_signature.
        Invalid("""
            from tensorflow import function, TensorSpec, data
            import numpy as np
            def prep(x):
                return x.numpy() * 2
            ds = data.Dataset.range(4).map(prep)
            @function(input_signature=[TensorSpec([None])])
            def g(v):
                return np.array(v)
        """, count=2, lines=(4, 8)),
    )

    def applies_to(self, ctx: Context) -> bool:
        return ctx.may_trace  # every finding is in traced code

    def check_module(self, ctx: Context) -> Iterator[Finding]:
        # One loop over the module's calls: most are neither `.numpy()` nor NumPy's, which
        # the syntax tells before any name is resolved.
        if not ctx.imports_tf:
            return
        np_names = top_level_imports(ctx, "numpy")
        if not np_names and "numpy" not in ctx.call_groups()[0]:
            return
        Attribute, Name = ast.Attribute, ast.Name
        for node in ctx.calls:
            func = node.func
            numpy_method = type(func) is Attribute and func.attr == "numpy" \
                and not node.args and not node.keywords
            if not numpy_method:  # the callee must start at a name imported from NumPy
                if not node.args or not np_names:
                    continue
                root = func
                while type(root) is Attribute:
                    root = root.value
                if type(root) is not Name or root.id not in np_names:
                    continue
            yield from self._check(node, ctx, numpy_method)

    def _check(self, node: ast.Call, ctx: Context, numpy_method: bool) -> Iterator[Finding]:
        func = node.func
        if not traced(ctx, node) or eager_guarded(ctx, node) or eager_by_design(ctx, node):
            return
        if numpy_method:
            if ctx.qualname(func) is not None:
                return  # a module attribute `pkg.numpy()`, not a tensor method
            yield self.finding(ctx, node)
            return
        q = ctx.qualname(func)
        if q is None or not q.startswith("numpy."):
            return
        args = [*node.args, *(k.value for k in node.keywords)]
        if any(surely_tensor(ctx, a) for a in args):
            short = "np." + q[len("numpy."):]
            yield self.finding(ctx, node, f"{short}() on a tensor inside tf.function: fails on "
                               "a symbolic tensor, or freezes a trace-time value into the graph")
