"""TFP405: a transpose whose only use is an operand of a matmul that can read it transposed."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from tfperf.core.findings import Finding, Fix
from tfperf.lint.analysis.assignments import assigned_value, loads_bound_by
from tfperf.lint.analysis.syntax import keywords_of
from tfperf.lint.analysis.transposes import (
    ADJOINT_CALLS,
    MATRIX_TRANSPOSE_CALLS,
    TRANSPOSE_CALLS,
    MatrixTranspose,
    matrix_transpose_of,
)
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context

MATMUL_CALLS = frozenset(f"tensorflow.{p}{n}" for p in ("", "compat.v1.")
                         for n in ("matmul", "linalg.matmul"))
MATVEC_CALLS = frozenset({"tensorflow.linalg.matvec", "tensorflow.compat.v1.linalg.matvec"})
# LinearOperator methods whose argument may be read adjoint (``adjoint_arg=True``).
_OPERATOR_METHODS = frozenset({"matmul", "solve"})
_FLAGS = {0: ("transpose_a", "adjoint_a"), 1: ("transpose_b", "adjoint_b")}


class TransposeIntoMatmul(Rule):
    code = "TFP405"
    name = "transpose-into-matmul"
    message = "a transposed copy made only to be multiplied: matmul can read the operand transposed"
    hint = "drop the transpose and pass transpose_a/transpose_b=True (adjoint_arg=True on a " \
           "LinearOperator), or write the contraction as tf.einsum"
    claims = ("S10",)
    # perf: all 27 findings on the user-style corpus judged true or true-but-minor
    # (SVM kernels, Gram matrices, a GPT decoder, hand-written back-prop; notes/lint-layout)
    group = "perf"
    node_types = (ast.Call,)
    callee_qualnames = TRANSPOSE_CALLS | MATRIX_TRANSPOSE_CALLS | ADJOINT_CALLS
    fixable = True
    docs = """\
## What it does
Finds a transpose of the last two axes (`tf.transpose(b)` of a matrix,
`tf.transpose(b, [0, 2, 1])`, `tf.linalg.matrix_transpose(b)`, `tf.linalg.adjoint(b)`) whose
result is used once, as an operand of `tf.matmul` / `tf.linalg.matmul` / `tf.linalg.matvec`,
of `@`, or as the argument of a `LinearOperator`'s `matmul`/`solve`.

## Why is this bad?
A transpose copies every element into a new buffer (claim S10), a full read and write of the
operand plus a temporary the size of it, and one more kernel launch. The matmul kernels read
either operand transposed for free: `transpose_a`/`transpose_b` (`adjoint_a`/`adjoint_b` for
the conjugate transpose), `adjoint_arg` on a `LinearOperator`. `tf.einsum` does the same for
any layout of the axes.

## Example
```python
scores = tf.matmul(q, tf.transpose(k, [0, 2, 1]))
```

## Use instead
```python
scores = tf.matmul(q, k, transpose_b=True)   # or tf.einsum("bij,bkj->bik", q, k)
```

## Fix safety
The fix drops the transpose and sets the flag (`transpose_b=True`, `adjoint_a=True`,
`adjoint_arg=True`). It is **unsafe**: the matmul kernel may sum in another order when it
reads an operand transposed (results can differ in the last bits), and `adjoint_arg`
conjugates (the same as a transpose only for real dtypes). No fix is offered for
`tf.transpose(b)` without `perm` (it reverses every axis: a matrix transpose only for rank 2),
when the call already sets a flag for that operand, for `@` (it would become a call), or when
the transposed value is bound to a name.

## Known limitations
Transposes used more than once (the copy then serves several consumers), permutations known
only at run time, and Keras backend `K.dot`/`batch_dot` (no transpose flags) are not reported.
"""
    valid = (
        Valid("""
            import tensorflow as tf
            def f(q, k):
                return tf.matmul(q, k, transpose_b=True)
        """),
        # The transposed copy is used twice.
        Valid("""
            import tensorflow as tf
            def f(a, b):
                bt = tf.transpose(b)
                return tf.matmul(a, bt) + tf.reduce_sum(bt)
        """),
        # A permutation that moves a batch axis: not a matrix transpose.
        Valid("""
            import tensorflow as tf
            def f(a, b):
                return tf.matmul(a, tf.transpose(b, [1, 0, 2]))
        """),
        # NumPy's transpose is a view.
        Valid("""
            import numpy as np
            def f(a, b):
                return np.matmul(a, np.transpose(b))
        """),
        # Transposed result of a matmul: not an operand.
        Valid("""
            import tensorflow as tf
            def f(a, b):
                return tf.transpose(tf.matmul(a, b))
        """),
    )
    invalid = (
        Invalid("""
            import tensorflow as tf
            def f(q, k):
                return tf.matmul(q, tf.transpose(k, perm=[0, 2, 1]))
        """, count=1, lines=(3,), fixed="""
            import tensorflow as tf
            def f(q, k):
                return tf.matmul(q, k, transpose_b=True)
        """),
        # The shape of the real fix in GPflow: no perm, so reported, not fixed.
        Invalid("""
            import tensorflow as tf
            def K(X, X2, v, b):
                return tf.matmul((v * X), tf.transpose(X2)) + b
        """, count=1, lines=(3,)),
        # A LinearOperator reading its argument adjoint (tensorflow_probability's fix).
        Invalid("""
            import tensorflow as tf
            def f(linop, cov):
                return linop.matmul(tf.linalg.matrix_transpose(linop.matmul(cov)))
        """, count=1, lines=(3,), fixed="""
            import tensorflow as tf
            def f(linop, cov):
                return linop.matmul(linop.matmul(cov), adjoint_arg=True)
        """),
        # Through a name used once, and with `@`.
        Invalid("""
            import tensorflow as tf
            def f(a, b):
                at = tf.linalg.adjoint(a)
                return at @ b
        """, count=1, lines=(3,)),
        # The first operand, TF1 spelling.
        Invalid("""
            import tensorflow.compat.v1 as tf
            def f(a, b):
                return tf.matmul(tf.matrix_transpose(a), b)
        """, count=1, lines=(3,), fixed="""
            import tensorflow.compat.v1 as tf
            def f(a, b):
                return tf.matmul(a, b, transpose_a=True)
        """),
    )

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Finding]:
        if not ctx.imports_tf:
            return
        t = matrix_transpose_of(ctx, node)
        if t is None:
            return
        use: ast.AST = node
        parent = ctx.parent(node)
        named = False
        if type(parent) is ast.Assign and parent.value is node and len(parent.targets) == 1 \
                and type(parent.targets[0]) is ast.Name:
            loads = loads_bound_by(ctx, ctx.scope_of(parent), parent.targets[0].id, node)
            if len(loads) != 1 or assigned_value(ctx, loads[0]) is not node:
                return
            use, parent, named = loads[0], ctx.parent(loads[0]), True
        if type(parent) is ast.BinOp and type(parent.op) is ast.MatMult:
            yield self.finding(ctx, node)
            return
        if type(parent) is not ast.Call or use is parent.func:
            return
        fix = self._fix(ctx, t, parent, use, named)
        if fix is not False:
            yield self.finding(ctx, node, fix=fix if isinstance(fix, Fix) else None)

    def _fix(self, ctx: Context, t: MatrixTranspose, call: ast.Call, use: ast.AST,
             named: bool) -> Fix | bool | None:
        """The fix for the matmul ``call`` reading ``use`` (``None``: report only;
        ``False``: ``call`` is not a matmul that could read it transposed)."""
        if any(k.arg is None for k in call.keywords) or any(
                type(a) is ast.Starred for a in call.args):
            return False
        kws = keywords_of(call)
        q = ctx.qualname(call.func)
        if q in MATMUL_CALLS or q in MATVEC_CALLS:
            side = next((i for i, a in enumerate(call.args[:2]) if a is use), None)
            if side is None:
                side = next((i for i, k in enumerate(("a", "b")) if kws.get(k) is use), None)
            if side is None or (q in MATVEC_CALLS and side == 1):
                return False
            flags = _FLAGS[side]
            if any(f in kws for f in flags):
                return None
            flag = flags[1] if t.adjoint else flags[0]
        elif q is None and type(call.func) is ast.Attribute \
                and call.func.attr in _OPERATOR_METHODS and call.args and call.args[0] is use:
            if "adjoint_arg" in kws:
                return None
            flag = "adjoint_arg"
        else:
            return False
        if not t.exact or named:
            return None
        last: ast.AST = max([*call.args, *call.keywords],
                            key=lambda n: (getattr(n, "end_lineno", 0) or 0,
                                           getattr(n, "end_col_offset", 0) or 0))
        return self.unsafe_fix(ctx.replace(t.call, ctx.source_of(t.operand)),
                               ctx.insert_after(last, f", {flag}=True"),
                               description=f"drop the transpose, pass {flag}=True")
