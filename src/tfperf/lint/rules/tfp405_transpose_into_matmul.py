"""TFP405: a transpose whose only use is an operand of a matmul that can read it transposed."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from tfperf.core.findings import Finding, Fix
from tfperf.lint.analysis.assignments import assigned_value, loads_bound_by
from tfperf.lint.analysis.syntax import keywords_of
from tfperf.lint.analysis.traced import surely_eager
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
    # preview: reported in eager code only (graph code has Grappler fold the transpose); the
    # eager findings judged on the corpus were teaching demos (benchmarks/lint_fixes/judged.csv)
    group = "preview"
    node_types = (ast.Call,)
    callee_qualnames = TRANSPOSE_CALLS | MATRIX_TRANSPOSE_CALLS | ADJOINT_CALLS
    fixable = True
    docs = """\
## What it does
Finds a transpose of the last two axes (`tf.transpose(b)` of a matrix,
`tf.transpose(b, [0, 2, 1])`, `tf.linalg.matrix_transpose(b)`, `tf.linalg.adjoint(b)`) whose
result is used once, as an operand of `tf.matmul` / `tf.linalg.matmul` / `tf.linalg.matvec`,
of `@`, or as the argument of a `LinearOperator`'s `matmul`/`solve`.

Only code that surely runs eagerly is reported: module-level code (a notebook cell, a
script) or a top-level function this module calls only from there, in a module that does
not build TF1 graphs. In a graph (`tf.function`, a Keras model's `call`, a TF1 session),
Grappler's arithmetic optimizer folds a transpose that feeds a matmul into the matmul's
flags by itself (`FoldTransposeIntoMatMul`): there the code costs nothing extra.

## Why is this bad?
Eagerly, a transpose copies every element into a new buffer (claim S10), a full read and
write of the operand plus a temporary the size of it, and one more kernel launch. The matmul
kernels read either operand transposed for free: `transpose_a`/`transpose_b`
(`adjoint_a`/`adjoint_b` for the conjugate transpose), `adjoint_arg` on a `LinearOperator`.

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
Code in functions called from elsewhere is not reported (it may well be traced). Transposes
used more than once (the copy then serves several consumers), permutations known
only at run time, and Keras backend `K.dot`/`batch_dot` (no transpose flags) are not reported.
"""
    valid = (
        Valid("""
            import tensorflow as tf
            q = tf.ones([2, 3, 4])
            scores = tf.matmul(q, q, transpose_b=True)
        """),
        # Traced: Grappler folds the transpose into the matmul.
        Valid("""
            import tensorflow as tf
            @tf.function
            def attention(q, k):
                return tf.matmul(q, tf.transpose(k, [0, 2, 1]))
        """),
        # A helper a traced function calls (the Gram matrix of a style-transfer notebook).
        Valid("""
            import tensorflow as tf
            def gram_matrix(x):
                features = tf.reshape(x, (tf.shape(x)[0], -1))
                return tf.matmul(features, tf.transpose(features))
            @tf.function
            def step(img):
                return tf.reduce_sum(gram_matrix(img))
        """),
        # TF1 graph code: the session runs the graph Grappler optimised.
        Valid("""
            import tensorflow.compat.v1 as tf
            X = tf.placeholder(tf.float32, [None, 3])
            d_w = tf.matmul(tf.transpose(X), X)
            with tf.Session() as sess:
                sess.run(d_w, feed_dict={X: data})
        """),
        # The transposed copy is used twice.
        Valid("""
            import tensorflow as tf
            b = tf.ones([3, 4])
            bt = tf.transpose(b)
            out = tf.matmul(b, bt) + tf.reduce_sum(bt)
        """),
        # A permutation that moves a batch axis: not a matrix transpose.
        Valid("""
            import tensorflow as tf
            a = tf.ones([2, 3, 4])
            out = tf.matmul(a, tf.transpose(a, [1, 0, 2]))
        """),
        # NumPy's transpose is a view.
        Valid("""
            import numpy as np
            a = np.ones((3, 4))
            out = np.matmul(a, np.transpose(a))
        """),
    )
    invalid = (
        Invalid("""
            import tensorflow as tf
            q = tf.ones([2, 3, 4])
            k = tf.ones([2, 5, 4])
            scores = tf.matmul(q, tf.transpose(k, perm=[0, 2, 1]))
        """, count=1, lines=(4,), fixed="""
            import tensorflow as tf
            q = tf.ones([2, 3, 4])
            k = tf.ones([2, 5, 4])
            scores = tf.matmul(q, k, transpose_b=True)
        """),
        # A helper the notebook calls eagerly (the shape of GPflow's fix): no perm, no fix.
        Invalid("""
            import tensorflow as tf
            def linear_kernel(X, X2, v, b):
                return tf.matmul((v * X), tf.transpose(X2)) + b
            K = linear_kernel(tf.ones([4, 2]), tf.ones([5, 2]), 0.5, 1.0)
        """, count=1, lines=(3,)),
        # A LinearOperator reading its argument adjoint (tensorflow_probability's fix).
        Invalid("""
            import tensorflow as tf
            linop = tf.linalg.LinearOperatorFullMatrix(tf.eye(3))
            cov = tf.ones([3, 3])
            out = linop.matmul(tf.linalg.matrix_transpose(linop.matmul(cov)))
        """, count=1, lines=(4,), fixed="""
            import tensorflow as tf
            linop = tf.linalg.LinearOperatorFullMatrix(tf.eye(3))
            cov = tf.ones([3, 3])
            out = linop.matmul(linop.matmul(cov), adjoint_arg=True)
        """),
        # Through a name used once, and with `@`, in an eager loop.
        Invalid("""
            import tensorflow as tf
            for a, b in pairs:
                at = tf.linalg.adjoint(a)
                out = at @ b
        """, count=1, lines=(3,)),
        # The first operand, compat.v1 spelling, eager (no graph built).
        Invalid("""
            import tensorflow.compat.v1 as tf
            a = tf.ones([3, 2])
            b = tf.ones([3, 4])
            out = tf.matmul(tf.matrix_transpose(a), b)
        """, count=1, lines=(4,), fixed="""
            import tensorflow.compat.v1 as tf
            a = tf.ones([3, 2])
            b = tf.ones([3, 4])
            out = tf.matmul(a, b, transpose_a=True)
        """),
    )

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Finding]:
        if not ctx.imports_tf:
            return
        t = matrix_transpose_of(ctx, node)
        if t is None or not surely_eager(ctx, node):
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
