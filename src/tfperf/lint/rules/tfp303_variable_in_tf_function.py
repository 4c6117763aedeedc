"""TFP303: a tf.Variable created inside a tf.function body."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from tfperf.core.findings import Finding
from tfperf.lint.analysis.tensors import VARIABLE_CLASSES, is_variable_call
from tfperf.lint.analysis.traced import traced_fn_of
from tfperf.lint.rule import Invalid, Rule, Valid
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


# Context managers that expect the code in them to raise (unittest, pytest, TF's tests).
_RAISES = frozenset({"assert_raises", "assertRaises", "assertRaisesRegex",
                     "assertRaisesRegexp", "assertRaisesOpError", "raises"})
# Exceptions that catch the ValueError TF raises for a non-singleton variable.
_CATCHES = frozenset({"ValueError", "Exception", "BaseException"})


def _expects_failure(ctx: Context, call: ast.AST) -> bool:
    """``call`` runs where the module expects an error: under ``with assert_raises(...)``,
    ``pytest.raises``, ``self.assertRaises``, or in a ``try`` that catches ValueError."""
    child = call
    for p in ctx.ancestors(call):
        if type(p) in (ast.With, ast.AsyncWith):
            for item in p.items:
                e = item.context_expr
                f = e.func if type(e) is ast.Call else None
                name = f.id if type(f) is ast.Name else f.attr if type(f) is ast.Attribute \
                    else None
                if name in _RAISES:
                    return True
        elif type(p) is ast.Try and child in p.body:
            for h in p.handlers:
                kinds = h.type.elts if type(h.type) is ast.Tuple else [h.type]
                if h.type is None or any(getattr(k, "id", getattr(k, "attr", None))
                                         in _CATCHES for k in kinds):
                    return True
        elif type(p) in (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda):
            return False
        child = p
    return False


def _only_expected_to_fail(ctx: Context, fn: ast.AST) -> bool:
    """Every call of the traced function ``fn`` in this module expects it to fail: the
    module demonstrates the error (a guide, a test), it does not pay for it."""
    name = getattr(fn, "name", None)
    if name is None:
        return False
    _, by_name = ctx.call_groups()
    calls = []
    for c in by_name.get(name, ()):
        b = ctx.binding(c.func) if type(c.func) is ast.Name else None
        if b is not None and b.value is fn:  # this def, not another `f` of the notebook
            calls.append(c)
    return bool(calls) and all(_expects_failure(ctx, c) for c in calls)


class VariableInTfFunction(Rule):
    code = "TFP303"
    name = "variable-in-tf-function"
    message = "tf.Variable created inside a tf.function: it fails, or is made again per trace"
    hint = ("create the variable once outside (in __init__/build, or at module level) and "
            "update it with .assign(); or guard it with `if self.v is None:`")
    claims = ("S13",)
    group = "preview"  # judged 0/3 held-out; an error, not time (docs: Known limitations)
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

## Known limitations
Not reported: a function that this module only calls where it expects the error (under
`with assert_raises(ValueError):`, `pytest.raises`, `self.assertRaises`, or in a `try` that
catches `ValueError`): a guide or a test showing the mistake, not paying for it; creation
guarded to run once (`if self.v is None:`, `if not self.built:`,
`hasattr(...)`), creation under `with tf.init_scope():` (lifted out of the graph), functions
run eagerly through `tf.py_function`, and Keras `build` methods.

In `preview` (not on by default): all 3 of its findings on held-out code were false (the
tf.function guide shows the mistake on purpose; the one under `assert_raises` is now left
out), and its usual cost is the `ValueError`, an error rather than time lost (docs/lint.md,
"Measured precision and recall").
"""
    valid = (
        # Created once outside, updated inside.
        Valid("""
            import tensorflow as tf
            w = tf.Variable(tf.ones([3]))
            @tf.function
            def step(x):
                w.assign_add(x)
                return w * 2.0
        """),
        # The created-once guard TF's guide recommends.
        Valid("""
            import tensorflow as tf
            class Scale(tf.Module):
                def __init__(self):
                    self.v = None
                @tf.function
                def __call__(self, x):
                    if self.v is None:
                        self.v = tf.Variable(tf.ones_like(x))
                    return self.v * x
        """),
        # Keras creates weights in build, which is not traced.
        Valid("""
            import tensorflow as tf
            class Dense(tf.keras.layers.Layer):
                def build(self, shape):
                    self.w = tf.Variable(tf.zeros([shape[-1], 4]))
                def call(self, x):
                    return tf.matmul(x, self.w)
        """),
        # Lifted out of the graph on purpose.
        Valid("""
            import tensorflow as tf
            @tf.function
            def f(x):
                with tf.init_scope():
                    counter = tf.Variable(0)
                return x
        """),
        # A plain Python function: runs eagerly, once per call.
        Valid("""
            import tensorflow as tf
            def make_state():
                return tf.Variable(tf.zeros([3]))
        """),
        # The mistake shown on purpose: every call expects the ValueError (a guide cell, a
        # test), in the three spellings.
        Valid("""
            import pytest
            import tensorflow as tf
            @tf.function
            def f(x):
                v = tf.Variable(1.0)
                return v * x
            with assert_raises(ValueError):
                f(1.0)
            def test_f():
                with pytest.raises(ValueError):
                    f(2.0)
            try:
                f(3.0)
            except ValueError as e:
                print(e)
        """),
        # Somebody else's Variable class.
        Valid("""
            import tensorflow as tf
            from sympy import Variable
            @tf.function
            def f(x):
                v = Variable('v')
                return x
        """),
    )
    invalid = (
        Invalid("""
            import tensorflow as tf
            @tf.function
            def step(x):
                w = tf.Variable(tf.ones([3]))
                return x * w
        """, count=1, lines=(4,)),
        # A Keras layer that makes a fresh variable on every call.
        Invalid("""
            import tensorflow as tf
            class Noisy(tf.keras.layers.Layer):
                def call(self, x):
                    scale = tf.Variable(1.0)
                    return x * scale
        """, count=1, lines=(4,)),
        # Called once where an error is expected and once for real: the real call pays.
        Invalid("""
            import tensorflow as tf
            @tf.function
            def f(x):
                v = tf.Variable(1.0)
                return v * x
            try:
                f(1.0)
            except KeyError:
                pass
            f(2.0)
        """, count=1, lines=(4,)),
        # Aliased class, function wrapped elsewhere.
        Invalid("""
            import tensorflow as tf
            from tensorflow import Variable
            def body(x):
                acc = Variable(tf.zeros_like(x))
                acc.assign_add(x)
                return acc
            fast_body = tf.function(body)
        """, count=1, lines=(4,)),
        # Module alias and the compat.v1 class.
        Invalid("""
            import tensorflow as tensorflow_alias
            @tensorflow_alias.function(jit_compile=True)
            def f(x):
                v = tensorflow_alias.compat.v1.Variable(x)
                return v + 1
        """, count=1, lines=(4,)),
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
        if _only_expected_to_fail(ctx, fn):
            return
        yield self.finding(ctx, node)
