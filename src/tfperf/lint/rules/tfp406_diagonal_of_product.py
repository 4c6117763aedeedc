"""TFP406: the diagonal (or trace) of a matrix product: the whole product for N numbers."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from tfperf.core.findings import Finding
from tfperf.lint.analysis.assignments import assigned_value, loads_bound_by
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context

DIAG_CALLS = frozenset(f"tensorflow.{p}{n}" for p in ("", "compat.v1.")
                       for n in ("linalg.diag_part", "matrix_diag_part", "diag_part"))
TRACE_CALLS = frozenset(f"tensorflow.{p}{n}" for p in ("", "compat.v1.")
                        for n in ("linalg.trace", "trace"))
MATMUL_CALLS = frozenset(f"tensorflow.{p}{n}" for p in ("", "compat.v1.")
                         for n in ("matmul", "linalg.matmul"))


def _is_product(ctx: Context, expr: ast.AST | None) -> bool:
    if type(expr) is ast.BinOp and type(expr.op) is ast.MatMult:
        return True
    if type(expr) is not ast.Call or ctx.qualname(expr.func) not in MATMUL_CALLS:
        return False
    # matmul of sparse or banded operands has its own kernels: only the plain form.
    return all(k.arg in ("transpose_a", "transpose_b", "adjoint_a", "adjoint_b", "name")
               for k in expr.keywords)


class DiagonalOfProduct(Rule):
    code = "TFP406"
    name = "diagonal-of-product"
    message = "the diagonal of a matrix product: the whole N×N product is computed for N numbers"
    hint = ("compute only the diagonal: tf.reduce_sum(a * tf.linalg.matrix_transpose(b), -1) "
            "or tf.einsum('ij,ji->i', a, b) (for a trace, sum that)")
    claims = ("S10",)
    group = "perf"
    node_types = (ast.Call,)
    callee_names = frozenset({"diag_part", "matrix_diag_part", "trace"})
    docs = """\
## What it does
Finds `tf.linalg.diag_part` (`tf.matrix_diag_part`) or `tf.linalg.trace` applied to a matrix
product (`a @ b`, `tf.matmul(a, b)`, chains of them), directly or through a name used only
there.

## Why is this bad?
For `a` of shape `[N, K]` and `b` of `[K, N]` the product costs N·N·K multiply-adds and an
N×N buffer, and all but N of its entries are thrown away. The diagonal alone is
`sum_k a[i, k] * b[k, i]`: N·K multiply-adds and no N×N buffer, as
`tf.reduce_sum(a * tf.linalg.matrix_transpose(b), -1)` or `tf.einsum('ij,ji->i', a, b)`
(batch axes work the same: `'...ij,...ji->...i'`). GPflow made this change to its posterior
variances (`diag_part(Knm @ Qinv @ Kmn)` became one einsum).

## Example
```python
var = tf.linalg.diag_part(Knm @ Qinv @ Kmn)
```

## Use instead
```python
var = tf.einsum("ij,jk,ki->i", Knm, Qinv, Kmn)
```

## Fix safety
No automatic fix: the rewrite depends on the operands' ranks and transposes, and sums in a
different order.

## Known limitations
A product also used elsewhere (the full matrix is needed anyway) is not reported.
"""
    valid = (
        Valid("""
            import tensorflow as tf
            def f(a, b):
                return tf.einsum('ij,ji->i', a, b)
        """),
        # The full product is used too.
        Valid("""
            import tensorflow as tf
            def f(a, b):
                p = tf.matmul(a, b)
                return tf.linalg.diag_part(p), tf.reduce_max(p)
        """),
        # The diagonal of a matrix that is not a product.
        Valid("""
            import tensorflow as tf
            def f(k):
                return tf.linalg.diag_part(tf.linalg.cholesky(k))
        """),
        # NumPy's diagonal is not TensorFlow's.
        Valid("""
            import numpy as np
            def f(a, b):
                return np.diag(a @ b)
        """),
    )
    invalid = (
        # GPflow's posterior variance.
        Invalid("""
            import tensorflow as tf
            def var(Knn, Knm, Qinv, Kmn):
                return Knn - tf.linalg.diag_part(Knm @ Qinv @ Kmn)
        """, count=1, lines=(3,)),
        # Through a name (the distances of a nearest-neighbour tutorial).
        Invalid("""
            import tensorflow as tf
            def dist(first, sub):
                second = tf.matmul(first, tf.transpose(sub, perm=[0, 2, 1]))
                return tf.sqrt(tf.matrix_diag_part(second))
        """, count=1, lines=(4,)),
        Invalid("""
            import tensorflow.compat.v1 as tf
            def f(a, b):
                return tf.trace(tf.matmul(a, b, transpose_b=True))
        """, count=1, lines=(3,)),
    )

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Finding]:
        q = ctx.call_qualname(node)
        if q not in DIAG_CALLS and q not in TRACE_CALLS:
            return
        args = node.args
        arg = args[0] if args else next((k.value for k in node.keywords
                                         if k.arg in ("input", "x")), None)
        if type(arg) is ast.Name:
            value = assigned_value(ctx, arg)
            parent = ctx.parent(value) if value is not None else None
            if value is None or type(parent) is not ast.Assign or len(loads_bound_by(
                    ctx, ctx.scope_of(parent), arg.id, value)) != 1:
                return
            arg = value
        if _is_product(ctx, arg):
            what = "trace" if q in TRACE_CALLS else "diagonal"
            yield self.finding(ctx, node, f"the {what} of a matrix product: the whole N×N "
                                          "product is computed for N numbers")
