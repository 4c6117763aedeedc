"""TFP114: tf.map_fn of a TensorFlow op that already takes a batch (matrices, rows, images)."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from tfperf.core.findings import Finding
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.rules.tfp106_map_fn_per_example import (
    MAP_FN_CALLS,
    mapped_function,
    passed_functions,
    reports_mapped,
    signature_blocks,
    vectorized_alternative,
)
from tfperf.lint.semantic import Context

_TF = ("tensorflow.", "tensorflow.compat.v1.")
# Ops on the last two axes that take any number of batch axes in front ([..., M, N]).
_MATRIX = frozenset(
    {f"{p}linalg.{n}" for p in _TF for n in (
        "det", "logdet", "slogdet", "inv", "cholesky", "diag_part", "trace",
        "matrix_transpose", "adjoint", "eigh", "eigvalsh", "svd", "qr", "expm", "sqrtm",
        "band_part", "diag", "set_diag", "pinv", "tridiagonal_matmul")}
    | {f"{p}{n}" for p in _TF for n in (
        "matrix_determinant", "matrix_inverse", "cholesky", "matrix_diag_part", "trace",
        "matrix_transpose", "self_adjoint_eig", "self_adjoint_eigvals", "svd", "qr",
        "matrix_band_part", "matrix_diag", "matrix_set_diag", "log_matrix_determinant")})
# TF1's `tf.diag_part` / `tf.diag` are not batched, but mapped over a batch of matrices
# (vectors) they do what the batched op does once.
_UNBATCHED_TWIN = {f"{p}{n}": twin for p in _TF for n, twin in (
    ("diag_part", "tf.linalg.diag_part (tf.matrix_diag_part)"),
    ("diag", "tf.linalg.diag (tf.matrix_diag)"))}
# Ops on the last axis (softmax over the row), only without an axis argument.
_ROWS = frozenset({f"{p}{n}" for p in _TF for n in (
    "nn.softmax", "nn.log_softmax", "math.softmax", "math.log_softmax")})
# Image ops that take [..., H, W, C] (TF 2: some TF 1 releases wanted one image).
_IMAGES = frozenset({f"tensorflow.image.{n}" for n in (
    "per_image_standardization", "rgb_to_grayscale", "grayscale_to_rgb", "rgb_to_hsv",
    "hsv_to_rgb", "rgb_to_yuv", "yuv_to_rgb", "flip_left_right", "flip_up_down", "rot90",
    "transpose", "adjust_brightness", "adjust_contrast", "adjust_gamma", "adjust_saturation",
    "adjust_hue", "resize")})
_AXIS_ARGS = frozenset({"axis", "dim"})


def _batched_api(ctx: Context, q: str | None) -> str | None:
    """The batched op to call once for ``q`` mapped per element, or ``None``."""
    if q is None:
        return None
    if q in _MATRIX or q in _ROWS:
        return q.replace("tensorflow.compat.v1.", "tf.").replace("tensorflow.", "tf.")
    if q in _UNBATCHED_TWIN:
        return _UNBATCHED_TWIN[q]
    if q in _IMAGES and ctx.tf_newest >= (2, 0):
        return q.replace("tensorflow.", "tf.")
    return None


def _draws(ctx: Context, call: ast.Call) -> bool:
    """``call`` draws a random number (TensorFlow's, NumPy's or Python's): mapped, each
    element gets its own draw; one batched call would share one."""
    q = ctx.call_qualname(call) or ""
    return q.startswith("random.") or ".random" in q or q.rsplit(".", 1)[-1].startswith(
        ("random_", "stateless_random"))


def batched_op(ctx: Context, fn: ast.AST | str) -> str | None:
    """``fn`` is a batched op itself (``tf.linalg.det``), or a lambda / one-line function
    that returns one call of such an op on its element, the other arguments not read from
    the element (and, for a softmax, no axis): the op to call once, else ``None``."""
    if isinstance(fn, str):
        return _batched_api(ctx, fn)
    if type(fn) is ast.Lambda:
        expr: ast.AST = fn.body
        args = fn.args
    elif type(fn) in (ast.FunctionDef, ast.AsyncFunctionDef):
        body = [s for s in fn.body
                if not (type(s) is ast.Expr and type(s.value) is ast.Constant)]
        if len(body) != 1 or type(body[0]) is not ast.Return or body[0].value is None:
            return None
        expr, args = body[0].value, fn.args
    else:
        return None
    params = [a.arg for a in (*args.posonlyargs, *args.args)]
    if len(params) != 1 or args.vararg or args.kwarg or type(expr) is not ast.Call \
            or not expr.args or type(expr.args[0]) is not ast.Name \
            or expr.args[0].id != params[0]:
        return None
    rest = [*expr.args[1:], *(k.value for k in expr.keywords)]
    if any(type(n) is ast.Name and n.id == params[0] for r in rest for n in ast.walk(r)):
        return None  # the other arguments depend on the element
    if any(type(n) is ast.Call and _draws(ctx, n) for r in rest for n in ast.walk(r)):
        return None  # a random argument drawn per element (`rot90(im, k=random...)`)
    q = ctx.call_qualname(expr)
    if q in _ROWS and (len(expr.args) > 1 or any(k.arg in _AXIS_ARGS for k in expr.keywords)):
        return None  # an axis of the element is another axis of the batch
    if q in _MATRIX and q.endswith(("band_part", "set_diag", "tridiagonal_matmul")):
        return None  # per-element operands (bands, diagonals) may differ
    return _batched_api(ctx, q)


class MapFnOfBatchedOp(Rule):
    code = "TFP114"
    name = "map-fn-of-batched-op"
    message = ("tf.map_fn runs an op that already takes a batch one element at a time: call it "
               "once on the whole tensor")
    hint = "call the op on the whole tensor (it works on the last axes, any batch in front)"
    claims = ("S12",)
    group = "preview"  # new (stop 43, recall round 13's F008 shape): waits for judged findings
    node_types = (ast.Call,)
    callee_names = frozenset({"map_fn"})
    needs_tf = True
    docs = """\
## What it does
Finds `tf.map_fn(fn, elems)` where `fn` is a TensorFlow op that takes a batch in front of
the axes it works on, or a lambda / one-line function that returns one call of such an op on
its element (the op's other arguments not read from the element):
- matrix ops on the last two axes (`tf.linalg.det`, `logdet`, `inv`, `cholesky`,
  `diag_part`, `trace`, `matrix_transpose`, `eigh`, `svd`, `qr`, `expm`..., and TF1's
  `tf.matrix_determinant`, `tf.matrix_inverse`, `tf.matrix_diag_part`...); TF1's unbatched
  `tf.diag_part`/`tf.diag` mapped over a batch is what `tf.matrix_diag_part`/`matrix_diag`
  does once;
- a softmax or log-softmax over the last axis (no `axis` given);
- image ops that take `[..., H, W, C]` on TensorFlow 2 (`per_image_standardization`,
  colour conversions, flips, `rot90`, `adjust_*`, `resize`).
Also when `fn` comes in through a parameter and every caller of this module passes such an
op. A map TFP106 reports (an elementwise op, or a lambda / def of such an op that it reads
as batchable) is left to it: one finding per map. Not reported when another argument of the
op is a random draw (`rot90(im, k=tf.random.uniform(...))`): mapped, each element gets its
own draw, batched all would share one.

## Why is this bad?
`tf.map_fn` is a `tf.while_loop`: one small kernel per element, one after the other; the op
itself runs the whole batch in one kernel. Measured on TF 2.21 CPU
(`benchmarks/lint_fixes/rule_claims.py --cases TFP114diag,TFP114det,TFP114softmax,TFP114image`,
in a `tf.function`; eagerly, where `map_fn` runs its loop op by op): diagonals of 1,024
16×16 matrices 51×; 8,100×, log-determinants of 1,024 16×16 matrices 12×; 230×, softmax of
4,096 rows of 100 117×; 22,000×, standardising 64 64×64×3 images 1.8×; 125×.

## Example
```python
diag = tf.map_fn(tf.diag_part, L)
```

## Use instead
```python
diag = tf.linalg.diag_part(L)     # TF1: tf.matrix_diag_part(L)
```

## Fix safety
No automatic fix: the batched op's name differs in TF1 for some (`tf.matrix_diag_part`).

## Known limitations
Ops with per-element operands (`band_part`, `set_diag`), a softmax over an explicit axis,
functions of more than one call, functions passed from another module, and image ops on
TensorFlow 1 are not reported.
"""
    valid = (
        # Review 43: a lambda or one-line def of the op is TFP106's (a default rule): one
        # finding per map, not two.
        Valid("""
            import tensorflow as tf
            def f(x):
                return tf.map_fn(lambda row: tf.nn.softmax(row), x)
        """, spelling="index: lambda (TFP106's)"),
        Valid("""
            import tensorflow as tf
            def standardize(image):
                return tf.image.per_image_standardization(image)
            def f(images):
                return tf.map_fn(standardize, images)
        """, spelling="name: a def (TFP106's)"),
        # Review 43: a random argument per element: batched, all would share one draw.
        Valid("""
            import numpy as np
            import tensorflow as tf
            def gamma(images):
                return tf.map_fn(
                    lambda im: tf.image.adjust_gamma(im, np.random.uniform(0.8, 1.2)), images)
        """, spelling="index: a draw per element"),
        Valid("""
            import tensorflow as tf
            def logdets(L):
                return 2.0 * tf.reduce_sum(tf.math.log(tf.linalg.diag_part(L)), -1)
        """, spelling="name: batched"),
        # A softmax over an axis of the element: another axis of the batch.
        Valid("""
            import tensorflow as tf
            def f(x):
                return tf.map_fn(lambda r: tf.nn.softmax(r, axis=0), x)
        """, spelling="index: axis"),
        # The other argument is read from the element.
        Valid("""
            import tensorflow as tf
            def f(images):
                return tf.map_fn(lambda im: tf.image.resize(im, tf.shape(im)[:2] * 2), images)
        """, spelling="index: size from the element"),
        # TensorFlow 1: image ops took one image in some releases.
        Valid("""
            import tensorflow as tf
            def f(images):
                return tf.map_fn(tf.image.per_image_standardization, images)
        """, tf_version="1.12", spelling="name: tf1 images"),
        # Two ops: the function is a composition (TFP106 judges those).
        Valid("""
            import tensorflow as tf
            def f(mats):
                for m in mats:
                    yield tf.map_fn(lambda a: tf.linalg.det(a) + tf.linalg.trace(a), m)
        """, spelling="loop: composition"),
        # A caller passes a function only a loop can run.
        Valid("""
            import tensorflow as tf
            def apply(h, X):
                return tf.map_fn(h, X)
            def run(X):
                a = apply(tf.linalg.det, X)
                b = apply(lambda x: tf.py_function(len, [x], tf.int32), X)
                return a, b
        """, spelling="name: a caller's loop-only function"),
        Valid("""
            from ops import logdet_all
            def run(L):
                return logdet_all(L)
        """, files={"ops.py": """
            import tensorflow as tf
            def logdet_all(L):
                return tf.linalg.logdet(L)
        """}, spelling="module"),
        Valid("""
            import tensorflow as tf
            L = tf.eye(3, batch_shape=[8])
            # %%
            d = tf.linalg.diag_part(L)
        """, notebook=True, spelling="notebook"),
    )
    invalid = (
        Invalid("""
            import tensorflow as tf
            def _chollogdet(L):
                l = tf.map_fn(tf.diag_part, L)
                return 2. * tf.reduce_sum(tf.log(l))
        """, count=1, lines=(3,), tf_version="1.0", spelling="name: tf1 diag_part"),
        Invalid("""
            import tensorflow as tf
            def f(x):
                return tf.map_fn(tf.nn.softmax, x[:, 1:])
        """, count=1, lines=(3,), spelling="index: a slice mapped"),
        Invalid("""
            import tensorflow as tf
            def f(batches):
                out = []
                for b in batches:
                    out.append(tf.map_fn(tf.linalg.det, b))
                return out
        """, count=1, lines=(5,), spelling="loop: for"),
        Invalid("""
            import tensorflow as tf
            def activation(h=lambda X: X):
                def build(X):
                    return tf.map_fn(h, X)
                return build
            def apply(h, X):
                return tf.map_fn(h, X)
            y = apply(tf.linalg.inv, tf.eye(3, batch_shape=[4]))
        """, count=1, lines=(7,), spelling="name: a parameter"),
        Invalid("""
            from ops import logdet_all
            def run(L):
                return logdet_all(L)
        """, files={"ops.py": """
            import tensorflow as tf
            def logdet_all(L):
                return tf.map_fn(tf.linalg.logdet, L)
        """}, count=1, spelling="module"),
        Invalid("""
            import tensorflow as tf
            L = tf.eye(3, batch_shape=[8])
            # %%
            d = tf.map_fn(tf.linalg.diag_part, L)
        """, count=1, notebook=True, spelling="notebook"),
    )

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Finding]:
        assert type(node) is ast.Call
        if ctx.call_qualname(node) not in MAP_FN_CALLS:
            return
        fn_arg = node.args[0] if node.args else next(
            (k.value for k in node.keywords if k.arg == "fn"), None)
        if fn_arg is None or signature_blocks(ctx, node) or vectorized_alternative(ctx, node):
            return
        fn = mapped_function(ctx, fn_arg)
        if fn is not None:
            if reports_mapped(ctx, fn):
                return  # TFP106 reports this map already (a lambda of the op)
            op = batched_op(ctx, fn)
            if op is not None:
                yield self.finding(ctx, node, hint=f"call {op} once on the whole tensor")
            return
        passed = passed_functions(ctx, fn_arg)
        ops = [batched_op(ctx, f) for _, f in passed]
        if ops and all(ops) and not all(reports_mapped(ctx, f) for _, f in passed):
            line = ctx.location(passed[0][0]).line
            yield self.finding(ctx, node, f"{self.message} (the op passed in as "
                               f"{ctx.source_of(fn_arg)} at line {line})",
                               hint=f"call {ops[0]} once on the whole tensor")
