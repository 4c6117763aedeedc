"""TFP205: tf.py_function whose Python function only wants NumPy arrays."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from tfperf.core.findings import Finding
from tfperf.lint.analysis.callers import resolve_def
from tfperf.lint.analysis.traced import is_py_function_call
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context, returns_tensor

_PY_FUNCTIONS = frozenset({"tensorflow.py_function", "tensorflow.compat.v1.py_function"})


def _is_numpy_call(node: ast.AST, name: str) -> bool:
    """``name.numpy()``."""
    return type(node) is ast.Call and not node.args and not node.keywords \
        and type(node.func) is ast.Attribute and node.func.attr == "numpy" \
        and type(node.func.value) is ast.Name and node.func.value.id == name


def _numpy_only(ctx: Context, fn: ast.AST) -> bool:
    """Every read of every parameter of ``fn`` converts it with ``.numpy()``, directly
    (``x.numpy()``) or element by element (``[a.numpy() for a in args]``), and there is at
    least one: the function wants host arrays, not tensors. Reads of a name re-bound to
    the converted values (``xs = [x.numpy() for x in xs]``) are reads of host arrays."""
    args = fn.args
    params = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
    if args.vararg is not None:
        params.add(args.vararg.arg)
    params.discard("self")
    if not params:
        return False
    body = fn.body if type(fn) is not ast.Lambda else [fn.body]
    converted = 0
    ok_reads: set[int] = set()
    for stmt in body:
        for n in ast.walk(stmt):
            if type(n) is ast.Call and type(n.func) is ast.Attribute \
                    and n.func.attr == "numpy" and type(n.func.value) is ast.Name \
                    and n.func.value.id in params and not n.args:
                ok_reads.add(id(n.func.value))
                converted += 1
            elif type(n) in (ast.ListComp, ast.GeneratorExp, ast.SetComp) \
                    and len(n.generators) == 1:
                gen = n.generators[0]
                if type(gen.iter) is ast.Name and gen.iter.id in params \
                        and type(gen.target) is ast.Name and not gen.ifs \
                        and _is_numpy_call(n.elt, gen.target.id):
                    ok_reads.add(id(gen.iter))
                    converted += 1
    if not converted:
        return False
    for stmt in body:
        for n in ast.walk(stmt):
            if type(n) is ast.Call:
                q = ctx.qualname(n.func)
                if q is not None and returns_tensor(q):
                    return False  # fn runs TF ops: py_function's eager context serves them
    for stmt in body:
        for n in ast.walk(stmt):
            if type(n) is ast.Name and n.id in params and id(n) not in ok_reads \
                    and type(n.ctx) is ast.Load:
                b = ctx.binding(n)
                if b is None or b.kind == "param":
                    return False  # the input itself, used as a tensor
    return True


class PyFunctionNumpyArgs(Rule):
    code = "TFP205"
    name = "py-function-numpy-args"
    message = ("tf.py_function whose function converts every input with .numpy(): "
               "tf.numpy_function hands it NumPy arrays directly")
    hint = ("use tf.numpy_function(fn, inp, Tout) and drop the .numpy() calls in fn: no "
            "EagerTensor wrapping, no eager context per call")
    claims = ("S1", "S4")
    group = "perf"
    node_types = (ast.Call,)
    callee_names = frozenset({"py_function"})
    requires_imports = frozenset({"tensorflow"})
    docs = """\
## What it does
Finds `tf.py_function(fn, inp, Tout)` where `fn` (a `def` or lambda of this module) reads
its inputs only to convert them to NumPy: `x.numpy()`, or `[a.numpy() for a in args]`.

## Why is this bad?
`tf.py_function` wraps each input in an `EagerTensor` and runs `fn` under an eager context
(with gradient recording), so that `fn` can use TF ops; a function that first turns every
input back into a NumPy array pays for that and gains nothing. `tf.numpy_function` hands
`fn` the NumPy arrays directly. Measured here (CPU, TF 2.21, 8 small inputs, a machine at
load 10; `benchmarks/bench_py_function.py`): called eagerly, 4.9 ms per `py_function` call
against 0.11 ms per `numpy_function` call (45x); from inside a `tf.function`, 1.23 against
1.06 ms (1.2x). TF-Agents measured about 2x faster environment steps from this change
(commit d89a2f5 of tensorflow/agents): host work in a per-step loop (claims S1 and S4).

## Example
```python
def _step_py(*actions):
    actions = [a.numpy() for a in actions]
    return env.step(actions)

out = tf.py_function(_step_py, flat_actions, dtypes)
```

## Use instead
```python
def _step_py(*actions):
    return env.step(list(actions))

out = tf.numpy_function(_step_py, flat_actions, dtypes)
```

## Fix safety
No automatic fix: `fn`'s `.numpy()` calls must go too (NumPy arrays have none), and
`tf.numpy_function` is not differentiable, which `fn` already was not once it left TF.

## Known limitations
Only functions visible in this module are read; one input used as a tensor anywhere in
`fn` (`tf.shape(x)`, passed on) and nothing is reported, nor functions that call TensorFlow
ops of their own (`tf.io.read_file`, `tf.one_hot`): those need `py_function`'s eager
context.
"""
    valid = (
        # Already numpy_function.
        Valid("""
            import tensorflow as tf
            def _load(path):
                return open(path, 'rb').read()
            ds = tf.data.Dataset.list_files('*.bin').map(
                lambda p: tf.numpy_function(_load, [p], tf.string))
        """),
        # The function uses TF ops on its inputs: py_function is the right tool.
        Valid("""
            import tensorflow as tf
            def _augment(image):
                if tf.reduce_mean(image) > 0.5:
                    image = tf.image.flip_left_right(image)
                return image
            out = tf.py_function(_augment, [tf.ones([4, 4, 3])], tf.float32)
        """),
        # The inputs are converted, but fn runs TF ops of its own (decoding a file named by
        # the input): py_function's eager context is what lets them run.
        Valid("""
            import tensorflow as tf
            def _load_pair(name):
                stem = name.numpy().decode()
                left = tf.image.decode_png(tf.io.read_file(stem + "_l.png"))
                right = tf.image.decode_png(tf.io.read_file(stem + "_r.png"))
                return tf.concat([left, right], axis=-1)
            ds = tf.data.Dataset.list_files("*_l.png").map(
                lambda n: tf.py_function(_load_pair, [n], tf.uint8))
        """),
        # One input converted, another used as a tensor.
        Valid("""
            import tensorflow as tf
            def _mix(a, b):
                return a.numpy() * 2 + tf.reduce_sum(b).numpy()
            out = tf.py_function(_mix, [tf.ones([2]), tf.ones([2])], tf.float32)
        """),
    )
    invalid = (
        # The TF-Agents shape: varargs converted in a comprehension.
        Invalid("""
            import tensorflow as tf
            class Env:
                def step(self, actions):
                    def _step_py(*flattened_actions):
                        flattened_actions = [x.numpy() for x in flattened_actions]
                        return self._env.step(flattened_actions)
                    return tf.py_function(_step_py, tf.nest.flatten(actions), [tf.float32])
        """, count=1, lines=(7,)),
        # A module-level function, keyword arguments.
        Invalid("""
            import numpy as np
            import tensorflow as tf
            def _decode(raw, n):
                return np.frombuffer(raw.numpy(), dtype=np.uint8)[: n.numpy()]
            out = tf.py_function(func=_decode, inp=[tf.constant(b'abc'), 2], Tout=tf.uint8)
        """, count=1, lines=(5,)),
        # A lambda.
        Invalid("""
            import tensorflow as tf
            out = tf.py_function(lambda s: s.numpy().decode().upper(), [tf.constant('a')],
                                 tf.string)
        """, count=1, lines=(2,)),
    )

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Finding]:
        if not is_py_function_call(ctx, node) or ctx.call_qualname(node) not in _PY_FUNCTIONS:
            return
        fn_expr = node.args[0] if node.args else next(
            (k.value for k in node.keywords if k.arg == "func"), None)
        if fn_expr is None:
            return
        fn = resolve_def(ctx, fn_expr)
        if fn is None:
            return
        if _numpy_only(ctx, fn):
            yield self.finding(ctx, node)
