"""TFP407: tf.gather of consecutive indices: a slice reads the same window without an index."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from tfperf.core.findings import Finding
from tfperf.lint.analysis.assignments import assigned_value
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context

GATHER_CALLS = frozenset(f"tensorflow.{p}gather" for p in ("", "compat.v1."))
RANGE_CALLS = frozenset({"tensorflow.range", "tensorflow.compat.v1.range"})


def _is_python_range(ctx: Context, call: ast.AST) -> bool:
    return type(call) is ast.Call and type(call.func) is ast.Name \
        and call.func.id == "range" and ctx.binding(call.func) is None \
        and 1 <= len(call.args) <= 2 and not call.keywords


def _unit_step(ctx: Context, call: ast.AST) -> bool:
    """``range(a, b)`` / ``tf.range(a, b)`` with no step (or a literal step of 1)."""
    if _is_python_range(ctx, call):
        return True
    if type(call) is not ast.Call or ctx.qualname(call.func) not in RANGE_CALLS:
        return False
    args = list(call.args)
    kws = {k.arg: k.value for k in call.keywords}
    step = args[2] if len(args) > 2 else kws.get("delta")
    if set(kws) - {"start", "limit", "delta", "dtype", "name"} or len(args) > 3:
        return False
    return step is None or (type(step) is ast.Constant and step.value == 1)


def _consecutive(ctx: Context, expr: ast.AST | None) -> bool:
    """Indices that are surely consecutive and increasing: a unit-step range (``tf.range``,
    ``range``, ``list(range(...))``), or ``[start + i for i in range(n)]``."""
    if expr is None:
        return False
    if _unit_step(ctx, expr):
        return True
    if type(expr) is ast.Call and type(expr.func) is ast.Name and expr.func.id == "list" \
            and ctx.binding(expr.func) is None and len(expr.args) == 1:
        return _is_python_range(ctx, expr.args[0])
    if type(expr) is ast.ListComp and len(expr.generators) == 1:
        gen = expr.generators[0]
        if gen.ifs or type(gen.target) is not ast.Name or not _is_python_range(ctx, gen.iter):
            return False
        i = gen.target.id
        elt = expr.elt
        if type(elt) is ast.Name:
            return elt.id == i
        # start + i (+ offset ...): a sum where `i` appears once, added, never scaled.
        terms: list[ast.AST] = []
        stack: list[ast.AST] = [elt]
        while stack:
            n = stack.pop()
            if type(n) is ast.BinOp and type(n.op) is ast.Add:
                stack += [n.left, n.right]
            else:
                terms.append(n)
        plain = [t for t in terms if type(t) is ast.Name and t.id == i]
        others = [t for t in terms if t not in plain]
        return len(plain) == 1 and not any(
            type(n) is ast.Name and n.id == i for t in others for n in ast.walk(t))
    return False


class GatherContiguousRange(Rule):
    code = "TFP407"
    name = "gather-contiguous-range"
    message = ("tf.gather of consecutive indices: a slice reads the same window without "
               "building and reading an index tensor")
    hint = "slice instead: x[:, start:start + n] (or tf.slice)"
    claims = ("S10",)
    group = "perf"
    node_types = (ast.Call,)
    callee_names = frozenset({"gather"})
    docs = """\
## What it does
Finds `tf.gather(params, indices)` whose indices are surely consecutive and increasing: a
unit-step `tf.range(a, b)` or `range(a, b)`, `list(range(...))`, or a list comprehension
`[start + i for i in range(n)]`, directly or through a name.

## Why is this bad?
A gather reads an index tensor and copies element by element through it (an indirect read
per row); its indices have to be built first: a list comprehension of tensors becomes one
`Pack` of n scalar tensors, each an op, every time the code runs (in a decode loop, every
step). A strided slice of the same window is one op with the bounds as arguments.
tensor2tensor's Evolved Transformer made this change in its decoding loop.

## Example
```python
idx = [step + i for i in range(width)]
window = tf.gather(states, idx, axis=1)
```

## Use instead
```python
window = states[:, step:step + width]
```

## Fix safety
No automatic fix: a gather clips or raises on out-of-range indices differently from a slice
(which silently shortens the window), and the slice's form depends on `axis`.

## Known limitations
Indices that are consecutive only at run time (a tensor computed elsewhere) are not
reported.
"""
    valid = (
        Valid("""
            import tensorflow as tf
            def f(x, ids):
                return tf.gather(x, ids)
        """),
        # Every other index: not a contiguous window.
        Valid("""
            import tensorflow as tf
            def f(x, n):
                return tf.gather(x, tf.range(0, n, 2))
        """),
        Valid("""
            import tensorflow as tf
            def f(x, n):
                return tf.gather(x, [2 * i for i in range(n)], axis=1)
        """),
        # Reversed order.
        Valid("""
            import tensorflow as tf
            def f(x, n):
                return tf.gather(x, [n - i for i in range(n)])
        """),
        # NumPy's take.
        Valid("""
            import numpy as np
            def f(x, n):
                return np.take(x, range(n), axis=1)
        """),
    )
    invalid = (
        # tensor2tensor's decoding window.
        Invalid("""
            import tensorflow as tf
            def window(hidden_state, decode_loop_step, pad):
                idx = [decode_loop_step + i for i in range(pad + 1)]
                return tf.gather(hidden_state, idx, axis=1)
        """, count=1, lines=(4,)),
        Invalid("""
            import tensorflow as tf
            def heads(prob, num_joints):
                return tf.gather(prob, tf.range(num_joints), axis=3)
        """, count=1, lines=(3,)),
        Invalid("""
            import tensorflow.compat.v1 as tf
            def f(x, a, b):
                return tf.gather(x, list(range(a, b)))
        """, count=1, lines=(3,)),
    )

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Finding]:
        if ctx.call_qualname(node) not in GATHER_CALLS:
            return
        call: ast.Call = node  # type: ignore[assignment]
        kws = {k.arg: k.value for k in call.keywords}
        if "batch_dims" in kws or "validate_indices" in kws:
            return
        indices = call.args[1] if len(call.args) > 1 else kws.get("indices")
        if type(indices) is ast.Name:
            indices = assigned_value(ctx, indices)
        if _consecutive(ctx, indices):
            yield self.finding(ctx, node)
