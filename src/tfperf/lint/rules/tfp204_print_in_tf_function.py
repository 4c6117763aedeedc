"""TFP204: Python ``print`` of a tensor inside traced code (prints once, at trace time)."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from tfperf.core.findings import Finding, Fix
from tfperf.lint.analysis.tensors import surely_tensor
from tfperf.lint.analysis.traced import (
    eager_by_design,
    eager_guarded,
    in_py_function,
    once_guarded,
    traced,
)
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context

_STREAMS = frozenset({"sys.stdout", "sys.stderr"})


def _tensor(ctx: Context, expr: ast.AST) -> bool:
    # `surely_tensor` adds the parameters of Dataset.map functions (always tensors).
    return ctx.is_tensor_like(expr) or surely_tensor(ctx, expr)


def _mentions_tensor(ctx: Context, expr: ast.AST) -> bool:
    """A tensor is printed: the argument is one, or an f-string / ``%`` / ``.format``
    formats one."""
    if _tensor(ctx, expr):
        return True
    t = type(expr)
    if t is ast.JoinedStr:
        return any(type(v) is ast.FormattedValue and _tensor(ctx, v.value)
                   for v in expr.values)
    if t is ast.BinOp and type(expr.op) is ast.Mod and type(expr.left) is ast.Constant:
        right = expr.right
        items = right.elts if type(right) is ast.Tuple else [right]
        return any(_tensor(ctx, e) for e in items)
    if t is ast.Call and type(expr.func) is ast.Attribute and expr.func.attr == "format" \
            and type(expr.func.value) is ast.Constant:
        return any(_tensor(ctx, a) for a in expr.args)
    return False


def _trace_logging(call: ast.Call) -> bool:
    """``print("Tracing with", x)``: printing at trace time on purpose, as TF's guide does to
    show when a function retraces."""
    first = call.args[0] if call.args else None
    if type(first) is ast.JoinedStr:
        first = next((v for v in first.values if type(v) is ast.Constant), None)
    return type(first) is ast.Constant and type(first.value) is str \
        and "trac" in first.value.lower()


class PrintInTfFunction(Rule):
    code = "TFP204"
    name = "print-in-tf-function"
    message = "print() of a tensor inside tf.function runs once, at trace time: use tf.print"
    hint = "tf.print(...) prints the values on every call"
    claims = ("S13",)
    group = "preview"  # judged 0/2 on the corpus (both deliberate book demos): waits here
    node_types = (ast.Call,)
    needs_tf = True  # nothing to report where neither TF nor Keras is imported
    callee_names = frozenset({"print"})
    fixable = True
    docs = """\
## What it does
Finds the builtin `print(...)` with a tensor among its arguments (directly, or formatted in an
f-string, `%` or `.format`) inside code TensorFlow traces: a `tf.function`, a Keras
`call`/`train_step`, a `Dataset.map` function.

## Why is this bad?
`tf.function` runs the Python body only while tracing (claim S13): `print` runs once (and
again on each retrace), and shows the symbolic tensor (`Tensor("x:0", shape=(None,),
dtype=float32)`), never a value. The graph that runs on later calls contains no print at all.
`tf.print` is an op in the graph: it prints the values on every call.

## Example
```python
@tf.function
def step(x):
    loss = tf.reduce_mean(x)
    print("loss", loss)
    return loss
```

## Use instead
```python
@tf.function
def step(x):
    loss = tf.reduce_mean(x)
    tf.print("loss", loss)
    return loss
```

## Fix safety
The fix turns `print(a, b, sep=..., end=...)` into `tf.print(a, b, sep=..., end=...)`, and
`file=sys.stdout`/`sys.stderr` into `output_stream=...`. It is **unsafe** because changing
behaviour is its purpose: the new code prints on every call instead of once per trace, prints
values instead of symbolic descriptions, summarises large tensors (first and last 3 items
per axis), and, as `tf.print` writes to standard error by default, `output_stream=sys.stdout`
is added to keep the output on standard output when the module imports `sys` (otherwise
the output moves to standard error). No fix when a tensor is formatted into a string (the
f-string would still be built at trace time), with `flush=` or another `file=`, or when the
module has no `import tensorflow` name to write.

## Known limitations
Not reported: `print` of Python values only, `print("Tracing with", x)` (a message about
tracing: printing at trace time on purpose), code guarded by `if tf.executing_eagerly():`,
`tf.py_function` bodies, code under `with tf.init_scope():` (eager, once per trace), and
code under a once-only guard (`if self._table is None: ...` that sets `self._table`).
"""
    valid = (
        # A once-only guard: built (and announced) on the first trace, on purpose.
        Valid("""
            import tensorflow as tf
            class Embed(tf.Module):
                def __init__(self):
                    self.table = None
                @tf.function
                def __call__(self, ids):
                    if self.table is None:
                        self.table = tf.Variable(tf.random.normal([100, 8]))
                        print("built table", self.table.shape, ids)
                    return tf.gather(self.table, ids)
        """),
        # Under tf.init_scope(): eager, once per trace, on purpose.
        Valid("""
            import tensorflow as tf
            @tf.function
            def f(x):
                with tf.init_scope():
                    print("initial scale", tf.ones([2]))
                return x * 2
        """),
        Valid("""
            import tensorflow as tf
            @tf.function
            def step(x):
                loss = tf.reduce_mean(x)
                tf.print('loss', loss)
                return loss
        """),
        # Trace-time logging on purpose (TF's guide does this to show retracing).
        Valid("""
            import tensorflow as tf
            @tf.function
            def f(x):
                print('Tracing with', x)
                return x * 2
        """),
        # Printing a Python value (a config flag) inside tf.function.
        Valid("""
            import tensorflow as tf
            @tf.function
            def f(x, verbose=True):
                print('verbose is', verbose)
                return x + 1
        """),
        # Eager code: print shows values.
        Valid("""
            import tensorflow as tf
            def f(x):
                y = tf.reduce_sum(x)
                print(y)
                return y
        """),
        # A user's own print function.
        Valid("""
            import tensorflow as tf
            from rich import print
            @tf.function
            def f(x):
                print(x)
                return x
        """),
    )
    invalid = (
        Invalid("""
            import tensorflow as tf
            @tf.function
            def step(x):
                loss = tf.reduce_mean(x)
                print('loss', loss, sep=': ', end='\\n')
                return loss
        """, count=1, lines=(5,), fixed="""
            import tensorflow as tf
            @tf.function
            def step(x):
                loss = tf.reduce_mean(x)
                tf.print('loss', loss, sep=': ', end='\\n')
                return loss
        """),
        # sys imported: keep the output on stdout; file=sys.stderr carried over.
        Invalid("""
            import sys
            import tensorflow as tensorflow_alias
            def g(x):
                y = tensorflow_alias.nn.relu(x)
                print(y)
                print(y, file=sys.stderr)
                return y
            f = tensorflow_alias.function(g)
        """, count=2, lines=(5, 6), fixed="""
            import sys
            import tensorflow as tensorflow_alias
            def g(x):
                y = tensorflow_alias.nn.relu(x)
                tensorflow_alias.print(y, output_stream=sys.stdout)
                tensorflow_alias.print(y, output_stream=sys.stderr)
                return y
            f = tensorflow_alias.function(g)
        """),
        # A Keras layer's call; an f-string: reported, not fixed.
        Invalid("""
            import tensorflow as tf
            class Probe(tf.keras.layers.Layer):
                def call(self, inputs):
                    print(f'mean {tf.reduce_mean(inputs)}')
                    return inputs
        """, count=1, lines=(4,)),
        # `from tensorflow import function`: no `tf` name to write, so no fix.
        Invalid("""
            from tensorflow import function, reduce_max
            @function
            def f(x):
                m = reduce_max(x)
                print(m)
                return m
        """, count=1, lines=(5,)),
    )

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Finding]:
        func = node.func
        if type(func) is not ast.Name or func.id != "print" or not ctx.imports_tf:
            return
        if not ctx.is_builtin(func, "print"):
            return
        args = node.args
        if not any(_mentions_tensor(ctx, a.value if type(a) is ast.Starred else a)
                   for a in args) or _trace_logging(node):  # type: ignore[arg-type]
            return
        if not traced(ctx, node) or eager_guarded(ctx, node) or in_py_function(ctx, node) \
                or eager_by_design(ctx, node) or once_guarded(ctx, node):
            return
        yield self.finding(ctx, node, fix=self._fix(ctx, node))  # type: ignore[arg-type]

    def _fix(self, ctx: Context, node: ast.Call) -> Fix | None:
        tf = ctx.module_alias("tensorflow")
        if tf is None:
            return None
        for a in node.args:
            if type(a) is ast.JoinedStr or (type(a) is not ast.Starred
                                           and _mentions_tensor(ctx, a)
                                           and not _tensor(ctx, a)):
                return None  # a tensor formatted into a string at trace time
        parts = [ctx.source_of(a) for a in node.args]
        stream = None
        for k in node.keywords:
            if k.arg in ("sep", "end"):
                parts.append(f"{k.arg}={ctx.source_of(k.value)}")
            elif k.arg == "file" and ctx.qualname(k.value) in _STREAMS:
                stream = ctx.source_of(k.value)
            else:
                return None  # flush=, another file=, **kwargs: no tf.print equivalent
        if stream is None:
            sys_name = ctx.module_alias("sys")
            stream = f"{sys_name}.stdout" if sys_name else None
        if stream is not None:
            parts.append(f"output_stream={stream}")
        return self.unsafe_fix(ctx.replace(node, f"{tf}.print({', '.join(parts)})"),
                               description="print on every call, with tf.print")
