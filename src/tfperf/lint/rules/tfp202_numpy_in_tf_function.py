"""TFP202: ``.numpy()`` or a NumPy function applied to a tensor inside traced code."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from tfperf.core.findings import Finding
from tfperf.lint.analysis.imports import top_level_imports
from tfperf.lint.analysis.tensors import surely_tensor
from tfperf.lint.analysis.traced import eager_guarded, traced
from tfperf.lint.rule import Example, Rule
from tfperf.lint.semantic import Context


class NumpyInTfFunction(Rule):
    code = "TFP202"
    name = "numpy-in-tf-function"
    message = (".numpy() inside tf.function: fails on a symbolic tensor, or freezes a "
               "trace-time value into the graph")
    hint = ("use TF ops (tf.math, tf.experimental.numpy) inside the graph; wrap code that "
            "truly needs NumPy in tf.numpy_function")
    claims = ("S4", "S13")
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

Not reported: code in functions handed to `tf.py_function`/`tf.numpy_function` (eager
there), code guarded by `if tf.executing_eagerly():` or similar, and NumPy on Python values
(`np.sqrt(2.0)`, `np.prod(x.shape[1:])`: trace-time constants, fine). NumPy is recognised
through the module's top-level imports (`import numpy as np`, `from numpy import mean`).
NumPy applied to a parameter of a `tf.function` is reported only when the parameter surely
holds a tensor (an `input_signature`, a tensor annotation, a `Dataset.map` function, a Keras
`call`'s inputs), as a Python value there is legitimate. `float(t)`/`int(t)` are not
reported: AutoGraph turns them into `tf.cast`.
"""
    valid = (
        # TF ops only.
        "import tensorflow as tf\n"
        "@tf.function\n"
        "def normalise(x):\n"
        "    return x / tf.norm(x)\n",
        # NumPy on Python values and static shapes: trace-time constants.
        "import numpy as np\n"
        "import tensorflow as tf\n"
        "@tf.function\n"
        "def f(x):\n"
        "    scale = np.sqrt(2.0)\n"
        "    n = np.prod(x.shape[1:])\n"
        "    return tf.reshape(x, [-1, n]) * scale\n",
        # The eager body of a tf.py_function needs host values.
        "import numpy as np\n"
        "import tensorflow as tf\n"
        "def parse(line):\n"
        "    def _decode(s):\n"
        "        return np.frombuffer(s.numpy(), dtype=np.uint8)\n"
        "    return tf.py_function(_decode, [line], tf.uint8)\n"
        "ds = tf.data.TextLineDataset('f.txt').map(parse)\n",
        # Eager code: .numpy() is fine outside traced functions (TFP201 covers loops).
        "import tensorflow as tf\n"
        "def report(x):\n"
        "    return tf.reduce_mean(x).numpy()\n",
        # Guarded: only runs when eager.
        "import tensorflow as tf\n"
        "@tf.function\n"
        "def f(x):\n"
        "    if tf.executing_eagerly():\n"
        "        print(x.numpy())\n"
        "    return x\n",
        # A plain tf.function parameter may be a Python list: NumPy on it is legitimate.
        "import numpy as np\n"
        "import tensorflow as tf\n"
        "@tf.function\n"
        "def f(x, sizes):\n"
        "    return tf.reshape(x, [np.sum(sizes)])\n",
        # A user's own `numpy()` helper function is not a tensor method.
        "import tensorflow as tf\n"
        "def numpy(x):\n"
        "    return x\n"
        "@tf.function\n"
        "def f(x):\n"
        "    return numpy(x)\n",
    )
    invalid = (
        Example(
            "import numpy as np\n"
            "import tensorflow as tf\n"
            "@tf.function\n"
            "def normalise(x):\n"
            "    return x / np.linalg.norm(x.numpy())\n",
            count=1, lines=(5,)),
        # Wrapped as f = tf.function(g); NumPy on a TF op's result.
        Example(
            "import numpy as np\n"
            "import tensorflow as tensorflow_alias\n"
            "def g(x):\n"
            "    s = tensorflow_alias.reduce_sum(x)\n"
            "    return np.log(s)\n"
            "f = tensorflow_alias.function(g)\n",
            count=1, lines=(5,)),
        # A Keras layer's call; NumPy imported by name.
        Example(
            "from numpy import mean\n"
            "import tensorflow as tf\n"
            "class Centre(tf.keras.layers.Layer):\n"
            "    def call(self, inputs):\n"
            "        return inputs - mean(inputs)\n",
            count=1, lines=(5,)),
        # A Dataset.map function: .numpy() on the element; with an input_signature.
        Example(
            "from tensorflow import function, TensorSpec, data\n"
            "import numpy as np\n"
            "def prep(x):\n"
            "    return x.numpy() * 2\n"
            "ds = data.Dataset.range(4).map(prep)\n"
            "@function(input_signature=[TensorSpec([None])])\n"
            "def g(v):\n"
            "    return np.array(v)\n",
            count=2, lines=(4, 8)),
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
                    root = root.value  # type: ignore[attr-defined]
                if type(root) is not Name or root.id not in np_names:  # type: ignore[attr-defined]
                    continue
            yield from self._check(node, ctx, numpy_method)

    def _check(self, node: ast.Call, ctx: Context, numpy_method: bool) -> Iterator[Finding]:
        func = node.func
        if not traced(ctx, node) or eager_guarded(ctx, node):
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
