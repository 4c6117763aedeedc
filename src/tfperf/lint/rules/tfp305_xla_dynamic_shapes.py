"""TFP305: XLA (jit_compile=True) fed with shapes that change: one compile per shape."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from tfperf.core.findings import Finding
from tfperf.lint.analysis.tf_functions import (
    is_tf_function_call,
    tf_function_called,
    tf_function_callee_names,
)
from tfperf.lint.analysis.varying import varies_in
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context

TENSOR_SPECS = frozenset({"tensorflow.TensorSpec", "tensorflow.compat.v1.TensorSpec",
                          "tensorflow.RaggedTensorSpec"})
# Calls whose first argument is a shape.
SHAPE_FIRST = frozenset({
    "tensorflow.zeros", "tensorflow.ones", "tensorflow.fill", "tensorflow.random.normal",
    "tensorflow.random.uniform", "tensorflow.random.truncated_normal",
    "tensorflow.random.stateless_normal", "tensorflow.random.stateless_uniform",
})


def _warmed_up(ctx: Context, call: ast.AST, loop: ast.AST) -> bool:
    """The same call, spelled the same, runs twice in one iteration of ``loop``: a warm-up
    that compiles the new shape, then the run that is timed or used (a benchmark over
    sizes). The compile per shape is what the author chose to pay."""
    text = ctx.source_of(call)
    body = getattr(loop, "body", None)
    if type(body) is not list:
        return False
    return sum(1 for stmt in body for n in ast.walk(stmt)
               if type(n) is ast.Call and n is not call and ctx.source_of(n) == text) >= 1


def jit_on(options: dict[str, ast.expr]) -> bool:
    """``jit_compile=True`` (or its old name ``experimental_compile=True``)."""
    for key in ("jit_compile", "experimental_compile"):
        v = options.get(key)
        if type(v) is ast.Constant and v.value is True:
            return True
    return False


def _spec_shape(ctx: Context, spec: ast.AST) -> ast.AST | None:
    """The shape given to a ``tf.TensorSpec(...)``, if it has unknown parts (``None`` in a
    literal shape, or ``shape=None``: unknown rank); else ``None``."""
    if type(spec) is not ast.Call or ctx.qualname(spec.func) not in TENSOR_SPECS:
        return None
    shape = spec.args[0] if spec.args else None
    for k in spec.keywords:
        if k.arg == "shape":
            shape = k.value
    if shape is None:
        return None  # TensorSpec() without a shape: a scalar spec... or unknown; stay quiet
    if type(shape) is ast.Constant and shape.value is None:
        return shape
    if type(shape) in (ast.List, ast.Tuple) and any(
            type(e) is ast.Constant and e.value is None for e in shape.elts):
        return shape
    return None


def _varying_shape(ctx: Context, arg: ast.AST, loops: list[ast.AST]) -> bool:
    """``x[:n]``, ``x[i:j]``, ``tf.zeros([n, 8])`` where the bound changes per iteration."""
    if type(arg) is ast.Subscript:
        parts = arg.slice.elts if type(arg.slice) is ast.Tuple else [arg.slice]
        for part in parts:
            if type(part) is ast.Slice:
                bounds = [b for b in (part.lower, part.upper) if b is not None]
                if bounds and any(varies_in(ctx, b, loops) for b in bounds) \
                        and not _same_width(part):
                    return True
        return False
    if type(arg) is ast.Call and arg.args and ctx.qualname(arg.func) in SHAPE_FIRST:
        shape = arg.args[0]
        return type(shape) in (ast.List, ast.Tuple) and varies_in(ctx, shape, loops)
    return False


def _same_width(part: ast.Slice) -> bool:
    """``x[i:i + 32]``: a sliding window of fixed width, the shape does not change."""
    lo, up = part.lower, part.upper
    if lo is None or type(up) is not ast.BinOp or type(up.op) is not ast.Add:
        return False
    return ast.unparse(up.left) == ast.unparse(lo) and type(up.right) is ast.Constant


class XlaDynamicShapes(Rule):
    code = "TFP305"
    name = "xla-dynamic-shapes"
    message = "jit_compile=True with shapes that change: XLA compiles again for every new shape"
    hint = ("pad or bucket inputs to a few fixed shapes (tf.pad, padded_batch) and give a "
            "fully static input_signature; or drop jit_compile for this function")
    claims = ("S14", "S20")
    group = "preview"  # never fired on 153 repositories: not measurable yet
    node_types = (ast.Call,)
    requires_imports = frozenset({"tensorflow"})  # every finding needs a TF API
    docs = """\
## What it does
Finds XLA-compiled functions (`tf.function(jit_compile=True)`) that will see many shapes:
- an `input_signature` with `None` dimensions (or `shape=None`);
- without a signature, a call inside a loop whose argument's shape changes each iteration:
  a slice with a moving bound (`x[:n]`, `x[start:end]`), or `tf.zeros([n, ...])`-like
  constructors whose shape uses a loop variable.

## Why is this bad?
XLA compiles a kernel for one concrete shape. Every new shape triggers a new compilation,
which takes far longer than running the ops (claim S14: "dynamic shapes and long compiles
limit it"). The article's pitfall (claim S20): XLA with `None` dimensions "recompiled
constantly and was slower than no XLA until inputs were padded to fixed length".

## Example
```python
@tf.function(jit_compile=True,
             input_signature=[tf.TensorSpec([None, None], tf.float32)])
def encode(tokens):
    ...
```

## Use instead
```python
MAX_LEN = 128
@tf.function(jit_compile=True,
             input_signature=[tf.TensorSpec([32, MAX_LEN], tf.float32)])
def encode(tokens):
    ...
# pad every batch to [32, MAX_LEN] before calling (padded_batch, tf.pad)
```

## Fix safety
No automatic fix: choosing the padded shapes is a modelling decision.

## Known limitations
In `preview` (not on by default): it never fired on the 153 repositories judged so far, so
its precision on real code is unknown; a default rule needs at least 5 judged findings at 80
% or better (docs/lint.md, "Rules that rarely fire").

Not reported: `jit_compile` off, fully static signatures, a sliding window of fixed width
(`x[i:i + 32]`), calls whose shapes come from a batched dataset (the shape changes only
for the last, partial batch), and a benchmark over sizes that warms each shape up (the same
call twice in one iteration: the compile per shape is paid on purpose).
"""
    valid = (
        # A benchmark over sizes: warm-up call, then the timed one.
        Valid("""
            import time
            import tensorflow as tf
            @tf.function(jit_compile=True)
            def apply(x):
                return x * 2.0
            data = tf.ones([512, 8])
            for n in [16, 64, 256]:
                apply(data[:n])
                t0 = time.time()
                apply(data[:n])
                print(n, time.time() - t0)
        """),
        # Fully static signature.
        Valid("""
            import tensorflow as tf
            @tf.function(jit_compile=True, input_signature=[tf.TensorSpec([32, 128], tf.float32)])
            def f(x):
                return tf.reduce_sum(x * x, axis=1)
        """),
        # None dimensions but no XLA: one generic graph serves every shape.
        Valid("""
            import tensorflow as tf
            @tf.function(input_signature=[tf.TensorSpec([None, None], tf.float32)])
            def f(x):
                return tf.reduce_sum(x, axis=1)
        """),
        # A sliding window of fixed width: one shape.
        Valid("""
            import tensorflow as tf
            @tf.function(jit_compile=True)
            def f(x):
                return x * 2.0
            signal = tf.zeros([1000])
            for i in range(900):
                f(signal[i:i + 32])
        """),
        # Batches from a dataset: same shape except maybe the last one.
        Valid("""
            import tensorflow as tf
            @tf.function(jit_compile=True)
            def step(x):
                return tf.reduce_mean(x)
            for batch in tf.data.Dataset.range(100).batch(10):
                step(batch)
        """),
        # A plain Python function called on growing slices: no XLA.
        Valid("""
            import tensorflow as tf
            def f(x):
                return x * 2.0
            x = tf.zeros([100])
            for n in range(1, 100):
                f(x[:n])
        """),
    )
    invalid = (
        Invalid("""
            import tensorflow as tf
            @tf.function(jit_compile=True,
                         input_signature=[tf.TensorSpec([None, None], tf.float32)])
            def encode(tokens):
                return tf.reduce_sum(tokens, axis=1)
        """, count=1, lines=(3,)),
        Invalid("""
            import tensorflow as tf
            @tf.function(jit_compile=True)
            def f(x):
                return tf.reduce_sum(x * x)
            x = tf.random.normal([1000, 8])
            for n in range(1, 1000):
                f(x[:n])
        """, count=1, lines=(7,)),
        # Wrapped with an alias, shape from a loop variable.
        Invalid("""
            import tensorflow as tensorflow_alias
            def g(x):
                return x + 1.0
            fast = tensorflow_alias.function(g, jit_compile=True)
            def run(lengths):
                for length in lengths:
                    fast(tensorflow_alias.zeros([length, 16]))
        """, count=1, lines=(7,)),
        # Old keyword name, unknown rank, through `from tensorflow import ...`.
        Invalid("""
            from tensorflow import TensorSpec, function
            @function(experimental_compile=True, input_signature=[TensorSpec(shape=None)])
            def f(x):
                return x
        """, count=1, lines=(2,)),
        # A varying start, then a varying end, in a while loop.
        Invalid("""
            import tensorflow as tf
            @tf.function(jit_compile=True)
            def score(chunk):
                return tf.reduce_max(chunk)
            def scan(x, cuts):
                start = 0
                while cuts:
                    end = cuts.pop()
                    score(x[start:end])
                    start = end
        """, count=1, lines=(9,)),
    )

    def applies_to(self, ctx: Context) -> bool:
        # a tf.function(...) call, or a call of a tf.function of this module
        return ctx.spells_tf_function

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Finding]:
        if not ctx.imports_tf:
            return
        if is_tf_function_call(ctx, node):
            options = {k.arg: k.value for k in node.keywords if k.arg}
            sig = options.get("input_signature")
            if sig is None or not jit_on(options) or type(sig) not in (ast.List, ast.Tuple):
                return
            for spec in sig.elts:
                if _spec_shape(ctx, spec) is not None:
                    yield self.finding(
                        ctx, spec, "jit_compile=True with None dimensions in input_signature: "
                                   "XLA compiles again for every new shape")
            return
        args = [*node.args, *(k.value for k in node.keywords)]
        if not args or not any(type(a) in (ast.Subscript, ast.Call) for a in args):
            return  # cheap tests first
        func = node.func
        if type(func) is ast.Name:
            if func.id not in tf_function_callee_names(ctx):
                return
        elif type(func) is ast.Attribute:
            if func.attr not in tf_function_callee_names(ctx):
                return
        elif type(func) is not ast.Call:  # `tf.function(g)(x)`
            return
        loops = ctx.enclosing_loops(node)
        if not loops or not any(_varying_shape(ctx, a, loops) for a in args):
            return
        if _warmed_up(ctx, node, loops[0]):
            return  # compiled per shape on purpose: a warm-up call, then the measured one
        target = tf_function_called(ctx, node.func)
        if target is None or not jit_on(target.options) or "input_signature" in target.options:
            return
        yield self.finding(ctx, node, "jit_compile=True function called with a new shape each "
                                      "iteration: XLA compiles again for every shape")
