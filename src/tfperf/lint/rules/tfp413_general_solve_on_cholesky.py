"""TFP413: a general (LU) solve of a Cholesky factor, or of the matrix whose factor is at hand."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Any

from tfperf.core.findings import Finding
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context

_CHOLESKY = frozenset({"tensorflow.linalg.cholesky", "tensorflow.cholesky",
                       "tensorflow.compat.v1.cholesky", "tensorflow.compat.v1.linalg.cholesky"})
# General solves: an LU factorisation of the matrix on every call.
_SOLVE = frozenset({"tensorflow.linalg.solve", "tensorflow.matrix_solve",
                    "tensorflow.compat.v1.matrix_solve", "tensorflow.compat.v1.linalg.solve"})
# Transposes of a lower factor give an upper one (still triangular).
_ADJOINT = frozenset({"tensorflow.linalg.adjoint", "tensorflow.linalg.matrix_transpose",
                      "tensorflow.matrix_transpose", "tensorflow.compat.v1.matrix_transpose",
                      "tensorflow.transpose"})
# Value-preserving wrappers a factor passes through unchanged.
_PASS = frozenset({"tensorflow.stop_gradient", "tensorflow.identity", "tensorflow.cast"})
_DEPTH = 6


def _self_value(ctx: Context, expr: ast.Attribute) -> ast.expr | None:
    """The value of ``self.x`` when its class assigns ``self.x = value`` exactly once."""
    if type(expr.value) is not ast.Name or expr.value.id != "self":
        return None
    cls = ctx.enclosing_class(expr)
    if cls is None:
        return None
    # Every store to `self.x` in the class (`self.x, y = ...`, `self.x += ...`, a loop
    # target too): only one plain `self.x = value` is followed.
    stores = [t for t in ast.walk(cls) if type(t) is ast.Attribute and type(t.ctx) is ast.Store
              and t.attr == expr.attr and type(t.value) is ast.Name and t.value.id == "self"]
    if len(stores) != 1:
        return None
    assign = ctx.parent(stores[0])
    if type(assign) is ast.Assign and assign.targets == [stores[0]]:
        return assign.value
    return None


def cholesky_factor(ctx: Context, expr: Any, depth: int = 0) -> ast.Call | None:
    """The ``tf.linalg.cholesky(...)`` call whose factor (or its transpose, one batch member
    of it) ``expr`` is, through names assigned once, ``self`` attributes and casts; else
    ``None``."""
    if expr is None or depth > _DEPTH:
        return None
    t = type(expr)
    if t is ast.Name:
        b = ctx.binding(expr)
        if b is None or b.kind != "assign" or b.value is expr:
            return None
        return cholesky_factor(ctx, b.value, depth + 1)
    if t is ast.Attribute:
        return cholesky_factor(ctx, _self_value(ctx, expr), depth + 1)
    if t is ast.Subscript:
        # `L[i]`: one matrix of a batch of factors (a solve would fail on a row).
        index = expr.slice
        if type(index) in (ast.Slice, ast.Tuple):
            return None
        return cholesky_factor(ctx, expr.value, depth + 1)
    if t is not ast.Call or not expr.args:
        return None
    q = ctx.call_qualname(expr)
    if q in _CHOLESKY:
        return expr
    if q in _ADJOINT:
        # `tf.transpose` only without a permutation (a matrix) keeps it triangular.
        if q == "tensorflow.transpose" and (len(expr.args) > 1 or expr.keywords):
            return None
        return cholesky_factor(ctx, expr.args[0], depth + 1)
    if q in _PASS:
        return cholesky_factor(ctx, expr.args[0], depth + 1)
    return None


def _same_value(ctx: Context, a: ast.expr, b: ast.expr) -> bool:
    """``a`` and ``b`` are the same expression over the same bindings (a name not rebound
    between them)."""
    if ctx.source_of(a) != ctx.source_of(b):
        return False
    names_a = [n for n in ast.walk(a) if type(n) is ast.Name]
    names_b = [n for n in ast.walk(b) if type(n) is ast.Name]
    return all(ctx.binding(x) is ctx.binding(y) for x, y in zip(names_a, names_b, strict=True))


def _factor_of_matrix(ctx: Context, solve: ast.Call, matrix: ast.expr) -> ast.Call | None:
    """A ``cholesky(matrix)`` of the same function (or module) as ``solve``: the factor of
    the very matrix the solve factorises again."""
    fn = ctx.enclosing_function(solve)
    for call in ctx.calls:
        if call.args and ctx.enclosing_function(call) is fn \
                and ctx.call_qualname(call) in _CHOLESKY \
                and _same_value(ctx, call.args[0], matrix) and _before_on_path(ctx, call, solve) \
                and not _tests_factor(ctx, call, solve):
            return call
    return None


def _tests_factor(ctx: Context, factor: ast.Call, solve: ast.Call) -> bool:
    """``solve`` runs under a test that reads the factor (``if tf.reduce_any(
    tf.math.is_nan(L)):``): the general solve is the fallback for a factor that failed
    (a GPU Cholesky gives NaN on a matrix that is not positive definite)."""
    stmt = ctx.parent(factor)
    names = {t.id for t in getattr(stmt, "targets", ()) for t in ast.walk(t)
             if type(t) is ast.Name}
    for a in ctx.ancestors(solve):
        if a is stmt or type(a) in (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda):
            break
        if type(a) in (ast.If, ast.IfExp, ast.While) and any(
                type(n) is ast.Name and n.id in names for n in ast.walk(a.test)):
            return True
    return False


def _before_on_path(ctx: Context, first: ast.AST, then: ast.AST) -> bool:
    """``first`` runs before ``then`` on every path to it: its statement comes earlier in a
    block that holds ``then`` (not in another branch of an ``if``)."""
    stmt: Any = first
    while stmt is not None and not isinstance(stmt, ast.stmt):
        stmt = ctx.parent(stmt)
    if stmt is None:
        return False
    block = ctx.parent(stmt)
    later = [a for a in ctx.ancestors(then) if ctx.parent(a) is block and a is not stmt]
    if not later or not isinstance(later[0], ast.stmt):
        return False
    body = next((b for b in (getattr(block, f, None) for f in ("body", "orelse", "finalbody"))
                 if isinstance(b, list) and stmt in b and later[0] in b), None)
    return body is not None and body.index(stmt) < body.index(later[0])


class GeneralSolveOnCholesky(Rule):
    code = "TFP413"
    name = "general-solve-on-cholesky"
    message = ("a general solve (an LU factorisation on every call) where a Cholesky factor is "
               "at hand")
    hint = ("solve with the factor: tf.linalg.solve(L, B) -> tf.linalg.triangular_solve(L, B, "
            "lower=True); tf.linalg.solve(A, B) with L = cholesky(A) -> "
            "tf.linalg.cholesky_solve(L, B)")
    claims = ("S12",)
    group = "preview"  # new (stop 43, recall round 13's F006 shape): waits for judged findings
    node_types = (ast.Call,)
    needs_tf = True
    callee_qualnames = _SOLVE
    docs = """\
## What it does
Finds a general linear solve (`tf.linalg.solve`, TF1's `tf.matrix_solve`) whose matrix is
- a Cholesky factor (`L = tf.linalg.cholesky(K)`, directly, through names, a `self`
  attribute, a cast, one member `L[i]` of a batch, or its transpose/adjoint): a triangular
  matrix the solve factorises again with LU and pivoting;
- or the very matrix whose factor the same function has computed (`L = cholesky(K)` then
  `tf.linalg.solve(K, b)`).

## Why is this bad?
A general solve runs an O(n³) LU factorisation on every call; with the factor, a triangular
solve is O(n²) per right-hand side, and `cholesky_solve` two of them. Measured on TF 2.21 CPU
(`benchmarks/lint_fixes/rule_claims.py --cases TFP413,TFP413b`, a 512×512 factor, 16
right-hand sides, two loaded cores): solve on the factor vs `triangular_solve` 14.8× in a
`tf.function`, 37× eagerly; solve on the matrix vs `cholesky_solve` with its factor 10.6×,
17×.

## Example
```python
L = tf.linalg.cholesky(K)
A = tf.linalg.solve(L, Kxs)
```

## Use instead
```python
L = tf.linalg.cholesky(K)
A = tf.linalg.triangular_solve(L, Kxs, lower=True)
```

## Fix safety
No automatic fix: a transposed factor needs `lower=False` (or `adjoint=True`), and the
factor of the matrix is `cholesky_solve`, not `triangular_solve`.

## Known limitations
`tf.linalg.inv` of a factor is not reported (not measured); a factor built by hand
(`band_part`) or returned by another module's function is not recognised; a matrix whose
factor is computed in another function is not matched.
"""
    valid = (
        Valid("""
            import tensorflow as tf
            def posterior(K, Kxs):
                L = tf.linalg.cholesky(K)
                return tf.linalg.triangular_solve(L, Kxs, lower=True)
        """, spelling="name: triangular"),
        # No factor anywhere: a general solve is what it takes.
        Valid("""
            import tensorflow as tf
            def solve_all(A, b):
                return tf.linalg.solve(A, b)
        """, spelling="index: plain"),
        # The factor is of another matrix than the one solved.
        Valid("""
            import tensorflow as tf
            def f(K, M, b):
                L = tf.linalg.cholesky(K)
                return tf.linalg.solve(M, b) + tf.linalg.cholesky_solve(L, b)
        """, spelling="name: other matrix"),
        # The matrix is rebuilt between the factorisation and the solve.
        Valid("""
            import tensorflow as tf
            def f(K, b):
                L = tf.linalg.cholesky(K)
                K = K + tf.eye(3)
                return tf.linalg.solve(K, b), L
        """, spelling="name: rebound"),
        # The factor is taken in another branch than the general solve.
        Valid("""
            import tensorflow as tf
            def matrix_solve(matrix, rhs, method="default"):
                if method == "cholesky":
                    return tf.cholesky_solve(tf.cholesky(matrix), rhs)
                elif method == "default":
                    return tf.matrix_solve(matrix, rhs)
        """, spelling="name: another branch"),
        Valid("""
            import tensorflow as tf
            def solve_each(Ks, b):
                for K in Ks:
                    L = tf.linalg.cholesky(K)
                    yield tf.linalg.cholesky_solve(L, b)
        """, spelling="loop: for"),
        # Review 43: the general solve is the fallback for a factor that failed (NaN).
        Valid("""
            import tensorflow as tf
            def solve_psd(K, b):
                L = tf.linalg.cholesky(K)
                if tf.reduce_any(tf.math.is_nan(L)):
                    return tf.linalg.solve(K, b)
                return tf.linalg.cholesky_solve(L, b)
        """, spelling="name: fallback of a failed factor"),
        # Review 43: a method rebinds the attribute to another matrix (through a tuple).
        Valid("""
            import tensorflow as tf
            class GP:
                def __init__(self, K):
                    self.chol = tf.linalg.cholesky(K)
                def update(self, K2):
                    self.chol, self.aux = K2, None
                def mean(self, y):
                    return tf.linalg.solve(self.chol, y)
        """, spelling="name: self attribute rebound"),
        # `tf.transpose` with a permutation of a batch is not a matrix transpose.
        Valid("""
            import tensorflow as tf
            def f(K, b):
                L = tf.linalg.cholesky(K)
                return tf.linalg.solve(tf.transpose(L, [1, 0, 2]), b)
        """, spelling="index: permuted"),
        Valid("""
            from gp import predict
            def run(K, Kxs):
                return predict(K, Kxs)
        """, files={"gp.py": """
            import tensorflow as tf
            def predict(K, Kxs):
                L = tf.linalg.cholesky(K)
                return tf.linalg.triangular_solve(L, Kxs)
        """}, spelling="module"),
        Valid("""
            import tensorflow as tf
            K = tf.eye(4) * 2.0
            b = tf.ones([4, 1])
            # %%
            L = tf.linalg.cholesky(K)
            x = tf.linalg.cholesky_solve(L, b)
        """, notebook=True, spelling="notebook"),
    )
    invalid = (
        Invalid("""
            import tensorflow as tf
            def posterior(K, Kxs, f):
                L = tf.linalg.cholesky(K)
                A = tf.linalg.solve(L, Kxs)
                v = tf.linalg.solve(L, f[..., tf.newaxis])
                return A, v
        """, count=2, lines=(4, 5), spelling="name: factor"),
        Invalid("""
            import tensorflow as tf
            def f(K, b):
                L = tf.linalg.cholesky(K)
                return tf.linalg.solve(K, b), L
        """, count=1, lines=(4,), spelling="name: matrix"),
        Invalid("""
            import tensorflow as tf
            def f(K, b):
                return tf.linalg.solve(tf.linalg.adjoint(tf.linalg.cholesky(K)), b)
        """, count=1, lines=(3,), spelling="index: adjoint"),
        Invalid("""
            import tensorflow as tf
            def f(Ks, b):
                Ls = tf.linalg.cholesky(Ks)
                return tf.linalg.solve(Ls[0], b)
        """, count=1, lines=(4,), spelling="index: batch member"),
        Invalid("""
            import tensorflow as tf
            def solve_each(Ks, b):
                for K in Ks:
                    L = tf.linalg.cholesky(K)
                    yield tf.linalg.solve(L, b)
        """, count=1, lines=(5,), spelling="loop: for"),
        Invalid("""
            import tensorflow as tf
            class GP:
                def __init__(self, K):
                    self.chol = tf.linalg.cholesky(K)
                def mean(self, y):
                    return tf.linalg.solve(self.chol, y)
        """, count=1, lines=(6,), spelling="name: self attribute"),
        Invalid("""
            import tensorflow.compat.v1 as tf
            def f(K, b):
                L = tf.cholesky(K)
                return tf.matrix_solve(L, b)
        """, count=1, lines=(4,), spelling="name: tf1"),
        Invalid("""
            from gp import predict
            def run(K, Kxs):
                return predict(K, Kxs)
        """, files={"gp.py": """
            import tensorflow as tf
            def predict(K, Kxs):
                L = tf.linalg.cholesky(K)
                return tf.linalg.solve(L, Kxs)
        """}, count=1, spelling="module"),
        Invalid("""
            import tensorflow as tf
            K = tf.eye(4) * 2.0
            b = tf.ones([4, 1])
            # %%
            L = tf.linalg.cholesky(K)
            x = tf.linalg.solve(L, b)
        """, count=1, notebook=True, spelling="notebook"),
    )

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Finding]:
        assert type(node) is ast.Call
        if ctx.call_qualname(node) not in _SOLVE:
            return
        matrix = node.args[0] if node.args else next(
            (k.value for k in node.keywords if k.arg == "matrix"), None)
        if matrix is None:
            return
        if cholesky_factor(ctx, matrix) is not None:
            yield self.finding(ctx, node, message=(
                "a general solve on a Cholesky factor: the LU factorisation redoes what the "
                "triangular factor already gives"),
                hint="tf.linalg.triangular_solve(L, B, lower=True) (lower=False for its "
                     "transpose)")
        elif _factor_of_matrix(ctx, node, matrix) is not None:
            yield self.finding(ctx, node, message=(
                "a general solve of a matrix whose Cholesky factor this function has "
                "computed: the LU factorisation is done again"),
                hint="tf.linalg.cholesky_solve(L, B) with that factor")
