"""Check the speed-ups that some rows of fixes.csv claim, on this machine's TensorFlow.

    python benchmarks/lint_fixes/claims.py [--rows F006,F017] [--budget 4] [--small]

Each case rebuilds a row's before and after pattern with tensors of our own (no code from the
repositories) and times them with tfperf's comparison core (`tfperf.bench.comparison.compare`:
interleaved rounds, ratio of medians), in a `tf.function` (graph: Grappler runs) and eagerly,
because several rows' claims hold in one mode only. F008 is a correctness check: its after
side (`tf.vectorized_map` over a function that assigns a variable per element) is compared
with `tf.map_fn` on the same input.

Rows: F006 tile before a triangular solve; F008 vectorized_map with a per-element variable
assign; F017 attention by permute+reshape+batch matmul with a tiled mask vs einsum; F027 a
transpose into a LinearOperator matmul vs `adjoint_arg=True`; F049 `tf.nn.batch_normalization`
vs the fused kernel on a 4-D input; F025 samples folded into a batched triangular solve's
columns by transpose + reshape and back, vs a solve that broadcasts the factors (F025b: vs
`broadcast_to` the factors first); F062 two solves and a `matrix_transpose` vs one solve per
side and a reduction (F062t: only the transpose moved, the second solve kept).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import Any

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def _cases(tf: Any, small: bool) -> dict[str, tuple[Callable[..., Any], Callable[..., Any],
                                                   tuple[Any, ...]]]:
    s = 2 if small else 1
    out: dict[str, tuple[Callable[..., Any], Callable[..., Any], tuple[Any, ...]]] = {}

    # F006: one [M, M] Cholesky factor for L solves.
    n_l, m = 8 // s, 256 // s
    chol = tf.linalg.cholesky(tf.eye(m) * 2.0 + 0.01)
    rhs = tf.random.normal([n_l, m, m])

    def tile_solve(c: Any, b: Any) -> Any:
        return tf.linalg.triangular_solve(tf.tile(c[None], [tf.shape(b)[0], 1, 1]), b)

    def broadcast_solve(c: Any, b: Any) -> Any:
        return tf.linalg.triangular_solve(c, b)
    out["F006"] = (tile_solve, broadcast_solve, (chol, rhs))

    # F017: multi-head scores and outputs, heads moved next to the batch vs einsum.
    b, t, h, d = 8 // s, 256 // s, 8, 64
    q, k, v = (tf.random.normal([b, t, h, d]) for _ in range(3))
    mask = tf.cast(tf.random.uniform([b, t]) > 0.1, tf.float32)

    def permute_attend(q: Any, k: Any, v: Any, mask: Any) -> Any:
        qh, kh, vh = (tf.reshape(tf.transpose(x, [0, 2, 1, 3]), [-1, t, d]) for x in (q, k, v))
        scores = tf.matmul(qh, kh, transpose_b=True) / d ** 0.5
        keep = tf.reshape(tf.tile(mask[:, None, :], [1, h, 1]), [-1, 1, t])
        probs = tf.nn.softmax(scores - (1.0 - keep) * 1e9)
        return tf.transpose(tf.reshape(tf.matmul(probs, vh), [-1, h, t, d]), [0, 2, 1, 3])

    def einsum_attend(q: Any, k: Any, v: Any, mask: Any) -> Any:
        scores = tf.einsum("bjhd,bkhd->bhjk", q, k) / d ** 0.5
        probs = tf.nn.softmax(scores - (1.0 - mask[:, None, None, :]) * 1e9)
        return tf.einsum("bhjk,bkhd->bjhd", probs, v)
    out["F017"] = (permute_attend, einsum_attend, (q, k, v, mask))

    # F027: a LinearOperator times the transpose of a batch of matrices.
    n = 256 // s
    op = tf.linalg.LinearOperatorFullMatrix(tf.random.normal([32 // s, n, n]))
    x = tf.random.normal([32 // s, n, n])

    def transposed(x: Any) -> Any:
        return op.matmul(tf.linalg.matrix_transpose(x))

    def adjoint_arg(x: Any) -> Any:
        return op.matmul(x, adjoint_arg=True)
    out["F027"] = (transposed, adjoint_arg, (x,))

    # F049: inference batch norm of an NHWC activation.
    c = 128
    act = tf.random.normal([16 // s, 56, 56, c])
    mean, var = tf.random.normal([c]), tf.random.uniform([c]) + 0.5
    beta, gamma = tf.random.normal([c]), tf.random.normal([c])

    def composite(a: Any) -> Any:
        return tf.nn.batch_normalization(a, mean, var, beta, gamma, 1e-3)

    def fused(a: Any) -> Any:
        return tf.compat.v1.nn.fused_batch_norm(a, gamma, beta, mean=mean, variance=var,
                                                epsilon=1e-3, is_training=False)[0]
    out["F049"] = (composite, fused, (act,))

    # F025: a solve of n samples against a batch of B Cholesky factors: samples moved behind
    # the event axes and folded into the right-hand side's columns (transpose + reshape, and
    # back), against a solve that broadcasts the factors over the sample axis (TF >= 2.2).
    n_s, nb, ke = 32 // s, 8, 64 // s
    chols = tf.linalg.cholesky(tf.eye(ke, batch_shape=[nb]) * 2.0 + 0.01)
    samples = tf.random.normal([n_s, nb, ke, ke])

    def fold_solve(x: Any) -> Any:
        y = tf.reshape(tf.transpose(x, [1, 2, 3, 0]), [nb, ke, ke * n_s])
        y = tf.linalg.triangular_solve(chols, y)
        return tf.transpose(tf.reshape(y, [nb, ke, ke, n_s]), [3, 0, 1, 2])

    def broadcast_samples(x: Any) -> Any:
        return tf.linalg.triangular_solve(tf.broadcast_to(chols, tf.shape(x)), x)

    def broadcast_solve_only(x: Any) -> Any:
        return tf.linalg.triangular_solve(chols[None], x)
    out["F025"] = (fold_solve, broadcast_solve_only, (samples,))
    out["F025b"] = (fold_solve, broadcast_samples, (samples,))

    # F062: diag(K1z Kzz^-1 Kz2) with Kzz = L L^T: two solves against L and a
    # matrix_transpose of the result, against one solve per side and a reduction.
    mz, nx = 128 // s, 512 // s
    lz = tf.linalg.cholesky(tf.eye(mz) * float(mz) + tf.random.uniform([mz, mz]) * 0.01)
    k1z, k2z = tf.random.normal([nx, mz]), tf.random.normal([nx, mz])

    def two_solves(a: Any, b: Any) -> Any:
        inner = tf.linalg.triangular_solve(lz, tf.linalg.matrix_transpose(b))
        sol = tf.linalg.triangular_solve(lz, inner, adjoint=True)
        return tf.reduce_sum(a * tf.linalg.matrix_transpose(sol), axis=-1)

    def one_per_side(a: Any, b: Any) -> Any:
        sa = tf.linalg.triangular_solve(lz, tf.linalg.matrix_transpose(a))
        sb = tf.linalg.triangular_solve(lz, tf.linalg.matrix_transpose(b))
        return tf.reduce_sum(sa * sb, axis=-2)

    def transpose_only(a: Any, b: Any) -> Any:  # the second solve kept, the transpose moved
        inner = tf.linalg.triangular_solve(lz, tf.linalg.matrix_transpose(b))
        sol = tf.linalg.triangular_solve(lz, inner, adjoint=True)
        return tf.reduce_sum(tf.linalg.matrix_transpose(a) * sol, axis=-2)
    out["F062"] = (two_solves, one_per_side, (k1z, k2z))
    out["F062t"] = (two_solves, transpose_only, (k1z, k2z))
    return out


def _vectorized_assign(tf: Any) -> str:
    """F008: what tf.vectorized_map returns for a function that assigns a variable from its
    element and then reads it, against tf.map_fn."""
    var = tf.Variable(0.0)

    def per_event(row: Any) -> Any:
        var.assign(row[0])
        return row[1] * var

    events = tf.constant([[1.0, 10.0], [2.0, 10.0], [3.0, 10.0]])
    sequential = tf.map_fn(per_event, events).numpy().tolist()
    try:
        vectorized = tf.vectorized_map(per_event, events).numpy().tolist()
    except Exception as exc:  # a refusal is an answer too
        return f"map_fn {sequential}; vectorized_map raised {type(exc).__name__}"
    same = "the same" if vectorized == sequential else "DIFFERENT"
    return f"map_fn {sequential}; vectorized_map {vectorized} ({same})"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", default="F006,F008,F017,F027,F049")
    ap.add_argument("--budget", type=float, default=4.0, help="seconds of rounds per case")
    ap.add_argument("--small", action="store_true", help="smaller tensors (a quick look)")
    args = ap.parse_args(argv)
    import tensorflow as tf

    rows = [r.strip() for r in args.rows.split(",") if r.strip()]
    cases = _cases(tf, args.small)
    print(f"TensorFlow {tf.__version__}; ratio = before / after (above 1: the fix is faster)")
    for row in rows:
        if row == "F008":
            print(f"F008 {_vectorized_assign(tf)}")
            continue
        if row not in cases:
            print(f"{row}: no case here", file=sys.stderr)
            continue
        before, after, inputs = cases[row]
        print_before_after(tf, row, before, after, inputs, args.budget)
    return 0


def print_before_after(tf: Any, name: str, before: Callable[..., Any],
                       after: Callable[..., Any], inputs: Any, budget: float,
                       decimals: int = 2) -> None:
    """Time a row's before and after shapes in a ``tf.function`` and eagerly, through
    tfperf's comparison core (outputs checked equal), and print medians and the ratio."""
    from tfperf.bench.comparison import compare

    for mode in ("graph", "eager"):
        wrap = tf.function if mode == "graph" else (lambda f: f)
        report = compare({"before": wrap(before), "after": wrap(after)}, inputs,
                         baseline="after", budget=budget, rtol=1e-3, atol=1e-3)
        times = {v.name: v.median_s for v in report.variants}
        tb, ta = times.get("before"), times.get("after")
        if tb and ta:
            print(f"{name} {mode}: before {tb * 1e3:.{decimals}f} ms, after "
                  f"{ta * 1e3:.{decimals}f} ms, ratio {tb / ta:.2f}")
        else:
            print(f"{name} {mode}: {report.table()}")


if __name__ == "__main__":
    sys.exit(main())
