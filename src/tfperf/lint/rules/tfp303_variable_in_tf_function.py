"""TFP303: a tf.Variable created inside a tf.function body."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from tfperf.core.findings import Finding
from tfperf.lint.analysis.tensors import VARIABLE_CLASSES, is_variable_call
from tfperf.lint.analysis.traced import traced_fn_of
from tfperf.lint.rule import Example, Rule
from tfperf.lint.semantic import Context

# Words in a condition that say "only the first time" (`if not self.built:`).
_ONCE_WORDS = ("built", "init", "created", "first", "ready")


def _once_guard(test: ast.AST) -> bool:
    """A condition that holds only until the variable exists: ``x is None``,
    ``not self.built``, ``hasattr(self, "v")``, ``"v" not in self.__dict__``..."""
    for n in ast.walk(test):
        t = type(n)
        if t is ast.Compare:
            if any(type(c) is ast.Constant and c.value is None for c in n.comparators) \
                    or any(type(op) in (ast.In, ast.NotIn) for op in n.ops):
                return True
        elif (t is ast.UnaryOp and type(n.op) is ast.Not) or (
                t is ast.Call and type(n.func) is ast.Name
                and n.func.id in ("hasattr", "getattr")):
            return True
        elif t is ast.Name or t is ast.Attribute:
            word = (n.id if t is ast.Name else n.attr).lower()
            if any(w in word for w in _ONCE_WORDS):
                return True
    return False


class VariableInTfFunction(Rule):
    code = "TFP303"
    name = "variable-in-tf-function"
    message = "tf.Variable created inside a tf.function: it fails, or is made again per trace"
    hint = ("create the variable once outside (in __init__/build, or at module level) and "
            "update it with .assign(); or guard it with `if self.v is None:`")
    claims = ("S13",)
    node_types = (ast.Call,)
    callee_qualnames = VARIABLE_CLASSES
    docs = """\
## What it does
Finds `tf.Variable(...)` calls in the body of a function that TensorFlow traces: decorated
with `tf.function`, wrapped as `f = tf.function(g)`, or a Keras `call`/`train_step`.

## Why is this bad?
A traced function runs its Python body once per trace, not once per call: a variable created
there is either made anew for each trace or, as TF 2 enforces, rejected with
`ValueError: tf.function only supports singleton tf.Variables created on the first call`.
Variables are state that must outlive the call; the article's advice on `tf.function`
(claim S13) and TF's guide both say to create them outside and only read or `.assign()` them
inside. In a Keras `call`, a new variable per call also escapes training: the optimizer never
sees it.

## Example
```python
@tf.function
def step(x):
    w = tf.Variable(tf.ones([3]))
    return x * w
```

## Use instead
```python
w = tf.Variable(tf.ones([3]))

@tf.function
def step(x):
    return x * w
```
(or, for a value that never changes, `tf.constant`).

## Fix safety
No automatic fix: where the variable should live depends on the code around it.

Not reported: creation guarded to run once (`if self.v is None:`, `if not self.built:`,
`hasattr(...)`), creation under `with tf.init_scope():` (lifted out of the graph), functions
run eagerly through `tf.py_function`, and Keras `build` methods.
"""
    valid = (
        # Created once outside, updated inside.
        "import tensorflow as tf\n"
        "w = tf.Variable(tf.ones([3]))\n"
        "@tf.function\n"
        "def step(x):\n"
        "    w.assign_add(x)\n"
        "    return w * 2.0\n",
        # The created-once guard TF's guide recommends.
        "import tensorflow as tf\n"
        "class Scale(tf.Module):\n"
        "    def __init__(self):\n"
        "        self.v = None\n"
        "    @tf.function\n"
        "    def __call__(self, x):\n"
        "        if self.v is None:\n"
        "            self.v = tf.Variable(tf.ones_like(x))\n"
        "        return self.v * x\n",
        # Keras creates weights in build, which is not traced.
        "import tensorflow as tf\n"
        "class Dense(tf.keras.layers.Layer):\n"
        "    def build(self, shape):\n"
        "        self.w = tf.Variable(tf.zeros([shape[-1], 4]))\n"
        "    def call(self, x):\n"
        "        return tf.matmul(x, self.w)\n",
        # Lifted out of the graph on purpose.
        "import tensorflow as tf\n"
        "@tf.function\n"
        "def f(x):\n"
        "    with tf.init_scope():\n"
        "        counter = tf.Variable(0)\n"
        "    return x\n",
        # A plain Python function: runs eagerly, once per call.
        "import tensorflow as tf\n"
        "def make_state():\n"
        "    return tf.Variable(tf.zeros([3]))\n",
        # Somebody else's Variable class.
        "import tensorflow as tf\n"
        "from sympy import Variable\n"
        "@tf.function\n"
        "def f(x):\n"
        "    v = Variable('v')\n"
        "    return x\n",
    )
    invalid = (
        Example(
            "import tensorflow as tf\n"
            "@tf.function\n"
            "def step(x):\n"
            "    w = tf.Variable(tf.ones([3]))\n"
            "    return x * w\n",
            count=1, lines=(4,)),
        # A Keras layer that makes a fresh variable on every call.
        Example(
            "import tensorflow as tf\n"
            "class Noisy(tf.keras.layers.Layer):\n"
            "    def call(self, x):\n"
            "        scale = tf.Variable(1.0)\n"
            "        return x * scale\n",
            count=1, lines=(4,)),
        # Aliased class, function wrapped elsewhere.
        Example(
            "import tensorflow as tf\n"
            "from tensorflow import Variable\n"
            "def body(x):\n"
            "    acc = Variable(tf.zeros_like(x))\n"
            "    acc.assign_add(x)\n"
            "    return acc\n"
            "fast_body = tf.function(body)\n",
            count=1, lines=(4,)),
        # Module alias and the compat.v1 class.
        Example(
            "import tensorflow as tensorflow_alias\n"
            "@tensorflow_alias.function(jit_compile=True)\n"
            "def f(x):\n"
            "    v = tensorflow_alias.compat.v1.Variable(x)\n"
            "    return v + 1\n",
            count=1, lines=(4,)),
    )

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Finding]:
        if not is_variable_call(ctx, node):
            return
        fn = traced_fn_of(ctx, node)
        if fn is None:
            return
        child = node
        for p in ctx.ancestors(node):
            if p is fn:
                break
            if type(p) in (ast.If, ast.IfExp) and child is not p.test and _once_guard(p.test):
                return  # either branch: `if self.v is not None: ... else: create`
            if type(p) in (ast.With, ast.AsyncWith) and any(
                    ctx.is_call_to(item.context_expr, "tensorflow.init_scope",
                                   "tensorflow.compat.v1.init_scope")
                    for item in p.items):
                return
            child = p
        yield self.finding(ctx, node)
