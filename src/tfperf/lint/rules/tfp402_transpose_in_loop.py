"""TFP402: tf.transpose inside a loop, on a tensor the loop does not change or per element."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from tfperf.core.findings import Finding
from tfperf.lint.analysis.assignments import assigned_value
from tfperf.lint.analysis.loops import element_loop, indexes_with
from tfperf.lint.analysis.sessions import graph_mode_module
from tfperf.lint.analysis.transposes import TRANSPOSE_CALLS, transpose_of
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context, returns_tensor

_INVARIANT_MSG = ("tf.transpose of a tensor the loop does not change: the same full copy "
                  "every iteration")
_ELEMENT_MSG = ("tf.transpose of one element per iteration: transpose the whole tensor "
                "once")


def _stored_in(loop: ast.AST, names: set[str]) -> bool:
    return any(type(n) is ast.Name and n.id in names and type(n.ctx) is not ast.Load
               for n in ast.walk(loop))


class TransposeInLoop(Rule):
    code = "TFP402"
    name = "transpose-in-loop"
    message = _INVARIANT_MSG
    hint = "transpose once, before the loop (or fold the layout into the op: data_format)"
    claims = ("S10", "S12")
    group = "preview"  # judged 0/7 on real code (loops that run once)
    node_types = (ast.Call,)
    callee_qualnames = TRANSPOSE_CALLS
    docs = """\
## What it does
Finds `tf.transpose` calls in a Python loop (or comprehension) that either transpose the same
immutable tensor on every iteration (its name is bound to a TensorFlow op's result outside
the loop and the loop does not rebind it), or transpose one element `x[i]` per iteration of
a loop that walks the tensor `x` element by element.

## Why is this bad?
A transpose copies every element (claim S10). Inside a loop the copy is paid per iteration:
for a loop-invariant tensor it is the same copy again and again; for `x[i]` it is one small
copy and one kernel launch per element where one transpose of `x` would do them all at once
(claim S12).

## Example
```python
w = tf.random.normal([256, 128])
for batch in batches:
    out = tf.matmul(batch, tf.transpose(w))
```

## Use instead
```python
w_t = tf.transpose(w)          # or tf.matmul(batch, w, transpose_b=True): no copy at all
for batch in batches:
    out = tf.matmul(batch, w_t)
```

## Fix safety
No automatic fix: hoisting changes where the code runs (and what a reader expects), and the
best replacement is often a `transpose_a/transpose_b` flag or `data_format`, which the rule
cannot choose.

## Known limitations
In `preview` (not on by default): judged 0 of 7 true on the repositories picked for it; at
both code sites the loop runs once (a spectral-norm power iteration whose count defaults to
1, a retry loop that breaks after its first pass), which a static rule cannot see
(docs/lint.md, "Rules that rarely fire").

The same transpose repeated in traced code (`tf.function`, a Keras `call`, a TF1 graph) is
not reported: Grappler merges identical ops with the same input, so the unrolled copies
become one. Transposes of values the loop changes (`x = tf.transpose(layer(x))` over a list
of layers, or one tensor per file) are not reported: each is a different tensor. Variables
and plain parameters are not reported either: they may change between iterations.
"""
    valid = (
        # Each iteration transposes a different tensor: nothing to hoist.
        Valid("""
            import tensorflow as tf
            def f(x, layers):
                for layer in layers:
                    x = tf.transpose(layer(x), [0, 2, 1])
                return x
        """),
        # A transpose before the loop, as advised.
        Valid("""
            import tensorflow as tf
            w = tf.random.normal([4, 3])
            w_t = tf.transpose(w)
            for b in range(10):
                y = tf.matmul(tf.ones([2, 3]), w_t)
        """),
        # A Variable changes between iterations (the optimizer updates it).
        Valid("""
            import tensorflow as tf
            w = tf.Variable(tf.zeros([4, 3]))
            for step in range(10):
                y = tf.matmul(tf.ones([2, 3]), tf.transpose(w))
                w.assign_add(tf.ones([4, 3]))
        """),
        # NumPy's transpose is a view, not a copy.
        Valid("""
            import numpy as np
            w = np.ones((4, 3))
            for i in range(3):
                y = np.transpose(w)
        """),
        # The same transpose in a traced loop: the unrolled copies are identical ops with the
        # same input, which Grappler merges into one (common subexpression elimination).
        Valid("""
            import tensorflow as tf
            @tf.function
            def f(n):
                m = tf.eye(8)
                acc = tf.zeros([8, 8])
                i = 0
                while i < 5:
                    acc = acc + tf.transpose(m)
                    i += 1
                return acc
        """),
        # Tensors from a list of files: one transpose each.
        Valid("""
            import tensorflow as tf
            def load(paths):
                return [tf.transpose(tf.io.parse_tensor(tf.io.read_file(p), tf.float32))
                        for p in paths]
        """),
    )
    invalid = (
        Invalid("""
            import tensorflow as tf
            w = tf.random.normal([4, 3])
            for batch in range(10):
                y = tf.matmul(tf.ones([2, 3]), tf.transpose(w))
        """, count=1, lines=(4,)),
        # Aliased module, in a comprehension.
        Invalid("""
            import tensorflow as tensorflow_alias
            def f(xs):
                k = tensorflow_alias.ones([3, 3])
                return [tensorflow_alias.matmul(x, tensorflow_alias.transpose(k, [1, 0]))
                        for x in xs]
        """, count=1, lines=(4,)),
        # `from tensorflow import transpose`, element by element.
        Invalid("""
            from tensorflow import transpose
            import tensorflow as tf
            def f(x):
                out = []
                for i in range(x.shape[0]):
                    out.append(transpose(x[i]))
                return tf.stack(out)
        """, count=1, lines=(6,)),
        # Element by element inside tf.function: the unrolled loop keeps one transpose per
        # element (Grappler merges identical ops, not different slices).
        Invalid("""
            import tensorflow as tf
            @tf.function
            def f(x):
                out = []
                for i in range(x.shape[0]):
                    out.append(tf.transpose(x[i]))
                return tf.stack(out)
        """, count=1, lines=(6,)),
    )

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Finding]:
        if not ctx.imports_tf or ctx.call_qualname(node) not in TRANSPOSE_CALLS:
            return
        loops = ctx.enclosing_loops(node)
        if not loops:
            return
        t = transpose_of(ctx, node)
        operand = t.operand if t is not None else (node.args[0] if node.args else None)
        if operand is None:
            return
        for loop in loops:
            el = element_loop(ctx, loop)
            if el is not None and el.kind == "index" and indexes_with(operand, el.var):
                yield self.finding(ctx, node, _ELEMENT_MSG,
                                   hint="transpose the whole tensor once, outside the loop "
                                        "(shift the permutation by one axis)")
                return
        if t is not None and self._invariant_tensor(ctx, operand, loops[0]) \
                and not ctx.in_graph(node) and not graph_mode_module(ctx):
            # (in a graph, Grappler merges the identical transposes of an unrolled loop)
            yield self.finding(ctx, node)

    @staticmethod
    def _invariant_tensor(ctx: Context, operand: ast.AST, loop: ast.AST) -> bool:
        """A name bound, outside the loop that repeats it, to an immutable tensor."""
        if type(operand) is not ast.Name:
            return False
        value = assigned_value(ctx, operand)
        if type(value) is not ast.Call:
            return False
        q = ctx.qualname(value.func)
        if not q or not returns_tensor(q) or q.endswith("Variable"):
            return False
        start, end = loop.lineno, loop.end_lineno or loop.lineno
        if start <= value.lineno <= end:
            return False  # bound inside the loop: a fresh tensor per iteration
        return not _stored_in(loop, {operand.id})
