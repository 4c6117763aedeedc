"""Time TFP107's claim (a loop-invariant op re-run in every iteration vs hoisted before the loop)
on this machine's TensorFlow, eagerly and inside `tf.function` (where Grappler may merge the
duplicate ops), with tensors of our own.

    python benchmarks/lint_fixes/tfp107_claim.py [--budget 3] [--iters 16]

Cases (before: the op inside the loop; after: computed once before it):
- scalar_cast: `clip *= tf.cast(eta, x.dtype)` per iteration next to an elementwise update of
  a [256, 1024] tensor (the shape of fixes.csv row F054);
- expand_dims: `tf.expand_dims(idx, 1)` per item feeding a scatter update of a [4096, 64] state
  (row F028's shape);
- reduce_any: `tf.reduce_any(tf.not_equal(reward, 0.0))` of a [65536] vector per item next to
  a count_nonzero of the item (row F055's shape);
- transpose: `tf.transpose(w)` of a [512, 512] matrix per power iteration, the matmul by it kept
  (an invariant op on a real tensor).
Ratios are before / after medians from tfperf's comparison core (interleaved rounds). The
trace line gives what the duplicates cost inside `tf.function`: graph ops and the median time
to trace a fresh function (`get_concrete_function`, 5 tries each).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import Any

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

Case = tuple[Callable[..., Any], Callable[..., Any], tuple[Any, ...]]


def _cases(tf: Any, n: int) -> dict[str, Case]:
    out: dict[str, Case] = {}

    x = tf.random.normal([256, 1024])
    eta = tf.constant(0.9, tf.float64)

    def cast_in_loop(x: Any, eta: Any) -> Any:
        clip = tf.constant(1.0)
        for _ in range(n):
            x = tf.clip_by_value(x, -clip, clip)
            clip *= tf.cast(eta, x.dtype)
        return x

    def cast_hoisted(x: Any, eta: Any) -> Any:
        clip = tf.constant(1.0)
        e = tf.cast(eta, x.dtype)
        for _ in range(n):
            x = tf.clip_by_value(x, -clip, clip)
            clip *= e
        return x
    out["scalar_cast"] = (cast_in_loop, cast_hoisted, (x, eta))

    states = [tf.random.normal([4096, 64]) for _ in range(n)]
    updates = [tf.random.normal([512, 64]) for _ in range(n)]
    idx = tf.range(0, 4096, 8)

    def expand_in_loop(idx: Any, states: Any, updates: Any) -> Any:
        return [tf.tensor_scatter_nd_update(s, tf.expand_dims(idx, 1), u)
                for s, u in zip(states, updates, strict=True)]

    def expand_hoisted(idx: Any, states: Any, updates: Any) -> Any:
        i = tf.expand_dims(idx, 1)
        return [tf.tensor_scatter_nd_update(s, i, u) for s, u in zip(states, updates, strict=True)]
    out["expand_dims"] = (expand_in_loop, expand_hoisted, (idx, states, updates))

    reward = tf.random.normal([65536])
    deltas = [tf.random.normal([64, 64]) for _ in range(n)]

    def any_in_loop(reward: Any, deltas: Any) -> Any:
        out = []
        for d in deltas:
            out.append(tf.logical_and(tf.equal(tf.math.count_nonzero(d), 0),
                                      tf.reduce_any(tf.not_equal(reward, 0.0))))
        return tf.stack(out)

    def any_hoisted(reward: Any, deltas: Any) -> Any:
        nonzero = tf.reduce_any(tf.not_equal(reward, 0.0))
        return tf.stack([tf.logical_and(tf.equal(tf.math.count_nonzero(d), 0), nonzero)
                         for d in deltas])
    out["reduce_any"] = (any_in_loop, any_hoisted, (reward, deltas))

    w = tf.random.normal([512, 512])
    u0 = tf.random.normal([1, 512])

    def transpose_in_loop(w: Any, u: Any) -> Any:
        for _ in range(n):
            v = tf.matmul(u, tf.transpose(w))
            u = tf.matmul(v / tf.norm(v), w)
        return u

    def transpose_hoisted(w: Any, u: Any) -> Any:
        wt = tf.transpose(w)
        for _ in range(n):
            v = tf.matmul(u, wt)
            u = tf.matmul(v / tf.norm(v), w)
        return u
    out["transpose"] = (transpose_in_loop, transpose_hoisted, (w, u0))
    return out


def _trace(tf: Any, fn: Callable[..., Any], inputs: tuple[Any, ...]) -> tuple[int, float]:
    import statistics
    import time

    times, ops = [], 0
    for _ in range(5):
        start = time.perf_counter()
        concrete = tf.function(fn).get_concrete_function(*inputs)
        times.append(time.perf_counter() - start)
        ops = len(concrete.graph.get_operations())
    return ops, statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--budget", type=float, default=3.0, help="seconds of rounds per case")
    ap.add_argument("--iters", type=int, default=16, help="loop iterations (items) per call")
    ap.add_argument("--cases", default="scalar_cast,expand_dims,reduce_any,transpose")
    args = ap.parse_args(argv)
    import tensorflow as tf
    from claims import print_before_after

    cases = _cases(tf, args.iters)
    print(f"TensorFlow {tf.__version__}; {args.iters} iterations; "
          "ratio = before / after (above 1: hoisting is faster)")
    for name in (c.strip() for c in args.cases.split(",") if c.strip()):
        if name not in cases:
            print(f"{name}: no such case", file=sys.stderr)
            continue
        before, after, inputs = cases[name]
        (ob, tb_), (oa, ta_) = _trace(tf, before, inputs), _trace(tf, after, inputs)
        print(f"{name} trace: before {ob} ops {tb_ * 1e3:.1f} ms, after {oa} ops "
              f"{ta_ * 1e3:.1f} ms, ratio {tb_ / ta_:.2f}")
        print_before_after(tf, name, before, after, inputs, args.budget, decimals=3)
    return 0


if __name__ == "__main__":
    sys.exit(main())
