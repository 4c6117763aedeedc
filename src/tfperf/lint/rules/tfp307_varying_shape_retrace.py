"""TFP307: a tf.function fed batches whose shapes vary: one trace per new shape."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from tfperf.core.findings import Finding
from tfperf.lint.analysis.pipelines import pipeline
from tfperf.lint.analysis.syntax import keyword
from tfperf.lint.analysis.tf_functions import tf_function_called, tf_function_callee_names
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context

# Options that make tf.function generalise shapes (or fix them) instead of tracing anew.
_SHAPE_OPTIONS = ("input_signature", "reduce_retracing", "experimental_relax_shapes")
# Dataset steps that batch; the last one decides the shapes the loop sees.
_BATCHING = frozenset({"batch", "padded_batch", "bucket_by_sequence_length", "ragged_batch",
                       "unbatch", "rebatch", "group_by_window"})


def _names(target: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(target) if type(n) is ast.Name}


def _static_shapes(expr: ast.AST | None) -> bool:
    """``padded_shapes`` written out with literal sizes only (no ``-1``/``None``)."""
    if expr is None:
        return False
    for n in ast.walk(expr):
        if type(n) is ast.Constant and n.value is None:
            return False
        if type(n) is ast.UnaryOp and type(n.op) is ast.USub:
            return False  # -1: padded to the longest element
        if type(n) is ast.Name or type(n) is ast.Attribute or type(n) is ast.Call:
            if type(n) is ast.Call and type(n.func) is ast.Attribute \
                    and n.func.attr == "TensorShape":
                continue
            if type(n) is ast.Attribute and n.attr == "TensorShape":
                continue
            if type(n) is ast.Name and n.id in ("tf", "tensorflow"):
                continue
            return False  # a value this rule cannot read
    return True


def _varying(step: ast.Call) -> str | None:
    """How the batches out of ``step`` vary in shape, for the message; ``None``: they do
    not (or the rule cannot tell)."""
    method = step.func.attr  # type: ignore[attr-defined]
    drop = keyword(step, "drop_remainder")
    if drop is None and len(step.args) >= (3 if method == "padded_batch" else 2):
        drop = step.args[-1]
    dropped = type(drop) is ast.Constant and drop.value is True
    if method == "padded_batch":
        shapes = keyword(step, "padded_shapes") or (step.args[1] if len(step.args) > 1 else None)
        if not _static_shapes(shapes):
            return "padded to each batch's longest element: one trace per new length"
        return None if dropped else "the last, smaller batch traces it once more"
    if method == "bucket_by_sequence_length":
        return "bucketed by length: one trace per bucket and batch length"
    if method == "batch":
        if drop is not None and not dropped:
            return None  # drop_remainder given as a variable: the author chose
        return None if dropped else "the last, smaller batch traces it once more"
    return None


class VaryingShapeRetrace(Rule):
    code = "TFP307"
    name = "varying-shape-retrace"
    message = "tf.function fed batches of varying shape: a new trace per shape"
    hint = ("give the tf.function an input_signature with None for the varying dimensions, "
            "or reduce_retracing=True; or batch with drop_remainder=True")
    claims = ("S13",)
    group = "preview"
    node_types = (ast.Call,)
    requires_imports = frozenset({"tensorflow"})
    docs = """\
## What it does
Finds a `tf.function` without `input_signature` or `reduce_retracing=True` called in a loop
over a `tf.data` pipeline whose batches change shape: `padded_batch` without fixed
`padded_shapes` (each batch is padded to its own longest element),
`bucket_by_sequence_length`, or `batch`/`padded_batch` without `drop_remainder=True` (the
last batch is smaller). The finding is at the `tf.function`, which is what to change.

## Why is this bad?
A `tf.function` traces one graph per input shape it has not seen (claim S13; TF's guide,
"Controlling retracing"). Padded batches of text or sequences take a new length almost every
step: measured here on TF 2.21, a loop over 15 padded batches of distinct lengths traced the
function 15 times, 3 times with `reduce_retracing=True`. A final partial batch costs one
extra trace (2 instead of 1), per function fed that way.

## Example
```python
ds = examples.padded_batch(64)
@tf.function
def train_step(inp, tar):
    ...
for inp, tar in ds:
    train_step(inp, tar)
```

## Use instead
```python
@tf.function(input_signature=[tf.TensorSpec([None, None], tf.int64),
                              tf.TensorSpec([None, None], tf.int64)])
def train_step(inp, tar):
    ...
```
or `@tf.function(reduce_retracing=True)`, or `batch(64, drop_remainder=True)` when only
the last batch differs.

## Fix safety
No automatic fix: the right signature (dtypes, which dimensions vary) needs a person, and
relaxed shapes make static shapes (`x.shape[1]`) `None` inside the function.

## Known limitations
Only loops of this module over a pipeline it builds (re-assignments followed) and calls that
pass the loop's elements are seen; `padded_shapes` held in a variable are taken as
unknown, a `drop_remainder` given as a variable as the author's choice, and a pipeline
repeated before it is batched as having no partial batch.
"""
    valid = (
        # An input_signature with None dimensions: one trace.
        Valid("""
            import tensorflow as tf
            ds = tf.data.Dataset.range(100).map(lambda n: tf.range(n)).padded_batch(8)
            @tf.function(input_signature=[tf.TensorSpec([None, None], tf.int64)])
            def step(x):
                return tf.reduce_sum(x)
            for x in ds:
                step(x)
        """),
        # Fixed padded shapes and the remainder dropped: every batch the same shape.
        Valid("""
            import tensorflow as tf
            ds = tf.data.Dataset.range(100).map(lambda n: tf.range(n % 10))
            ds = ds.padded_batch(8, padded_shapes=[10], drop_remainder=True)
            @tf.function
            def step(x):
                return tf.reduce_sum(x)
            for x in ds:
                step(x)
        """),
        # Repeated before batching: every batch is full.
        Valid("""
            import tensorflow as tf
            train = tf.data.Dataset.range(100).repeat().shuffle(64).batch(32).prefetch(1)
            @tf.function
            def step(x):
                return tf.reduce_sum(x)
            for i, x in enumerate(train.take(1000), 1):
                step(x)
        """),
        # reduce_retracing generalises the shapes.
        Valid("""
            import tensorflow as tf
            ds = tf.data.Dataset.range(100).batch(32)
            @tf.function(reduce_retracing=True)
            def step(x):
                return tf.reduce_sum(x)
            for epoch in range(10):
                for x in ds:
                    step(x)
        """),
        # A plain Python function: nothing is traced.
        Valid("""
            import tensorflow as tf
            ds = tf.data.Dataset.range(100).batch(32)
            def step(x):
                return tf.reduce_sum(x)
            for x in ds:
                step(x)
        """),
        # The loop's elements are not what the tf.function gets.
        Valid("""
            import tensorflow as tf
            ds = tf.data.Dataset.range(100).batch(32)
            @tf.function
            def tick():
                return tf.constant(1)
            for x in ds:
                tick()
        """),
    )
    invalid = (
        # The transformer tutorial's shape: padded batches of sentences.
        Invalid("""
            import tensorflow as tf
            train = tf.data.Dataset.range(1, 50).map(lambda n: (tf.range(n), tf.range(n)))
            train = train.shuffle(64).padded_batch(16, padded_shapes=([-1], [-1]))
            train = train.prefetch(tf.data.AUTOTUNE)
            @tf.function
            def train_step(inp, tar):
                return tf.reduce_sum(inp) + tf.reduce_sum(tar)
            for epoch in range(20):
                for (batch, (inp, tar)) in enumerate(train):
                    train_step(inp, tar)
        """, count=1, lines=(5,)),
        # The last partial batch, a method, tf.function with other options.
        Invalid("""
            import tensorflow as tf
            class Trainer:
                def __init__(self, xs):
                    self.ds = None
                    self.xs = xs
                @tf.function(jit_compile=True)
                def step(self, x):
                    return tf.reduce_sum(x * 2.0)
                def fit(self):
                    ds = tf.data.Dataset.from_tensor_slices(self.xs).batch(32)
                    for x in ds:
                        self.step(x)
        """, count=1, lines=(6,)),
        # Wrapped as f = tf.function(g); bucketing by length.
        Invalid("""
            import tensorflow as tf
            def g(x):
                return tf.reduce_mean(x)
            f = tf.function(g)
            ds = tf.data.Dataset.range(100).map(lambda n: tf.range(n))
            ds = ds.bucket_by_sequence_length(lambda x: tf.size(x), [10, 20], [8, 8, 8])
            for x in ds:
                f(x)
        """, count=1, lines=(4,)),
    )

    def applies_to(self, ctx: Context) -> bool:
        return ctx.spells_tf_function and ("batch" in ctx.source or "bucket" in ctx.source)

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Finding]:
        func = node.func  # type: ignore[attr-defined]
        name = func.id if type(func) is ast.Name else getattr(func, "attr", None)
        if name is None or name not in tf_function_callee_names(ctx) or not node.args:  # type: ignore[attr-defined]
            return
        loops = ctx.enclosing_loops(node)
        loop = next((lp for lp in loops if type(lp) in (ast.For, ast.AsyncFor)), None)
        if loop is None:
            return
        it, target = loop.iter, loop.target  # type: ignore[attr-defined]
        if type(it) is ast.Call and ctx.is_builtin(it.func, "enumerate") and it.args:  # type: ignore[attr-defined]
            it = it.args[0]  # type: ignore[attr-defined]
            if type(target) is ast.Tuple and len(target.elts) == 2:
                target = target.elts[1]
        elements = _names(target)
        passed = [a for a in [*node.args, *(k.value for k in node.keywords)]  # type: ignore[attr-defined]
                  if _names(a) & elements]
        if not passed:
            return
        chain = pipeline(ctx, it).steps
        steps = [i for i, s in enumerate(chain) if s.func.attr in _BATCHING]  # type: ignore[attr-defined]
        if not steps:
            return
        last = chain[steps[-1]]
        how = _varying(last)
        if how is None or (how.startswith("the last") and any(
                s.func.attr == "repeat" for s in chain[:steps[-1]])):  # type: ignore[attr-defined]
            return  # repeated before batching: no partial batch (or one, at the very end)
        target_fn = tf_function_called(ctx, func)
        if target_fn is None or any(o in target_fn.options for o in _SHAPE_OPTIONS):
            return
        yield self.finding(ctx, target_fn.creation,
                           f"tf.function fed batches of varying shape ({how})")
