"""Is one prediction per example slow in graph mode (TF 1.x / sessions)? The claim behind
TFP110 reporting, on TF 1.x too, ``model.predict`` on one example of the loop's own data
(docs/lint.md, "ninth pass").

    python benchmarks/bench_lint_graph_predict.py [--rounds 5] [--n 64]

TF 1.x cannot be installed here; TF 1.x Keras's ``predict`` ran, per call, Python input
checks and at least one ``Session.run`` of the prebuilt graph. This times the floor of that
cost on TF 2.21's v1 graph mode (eager execution off, a session): ``n`` examples fed one per
``Session.run`` (each a batch of one, as ``x[i:i+1]``) against one run over all ``n``, for a
small dense network and a small convolutional one on 80 x 80 x 4 frames (an Atari/Flappy
Bird state). Medians of interleaved rounds; the ratio is per-example / batched. Keras's own
per-call Python (input standardisation, its batching loop) comes on top of the per-example
side only, so the real ratio is larger.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any


def _build(tf: Any, kind: str) -> tuple[Any, Any, tuple[int, ...]]:
    v1 = tf.compat.v1
    if kind == "dense":
        shape: tuple[int, ...] = (64,)
        x = v1.placeholder(tf.float32, (None, *shape))
        h = x
        for width in (256, 256, 16):
            w = v1.Variable(v1.random_normal([int(h.shape[-1]), width], stddev=0.05))
            h = tf.nn.relu(tf.matmul(h, w))
        return x, h, shape
    shape = (80, 80, 4)
    x = v1.placeholder(tf.float32, (None, *shape))
    h = x
    for k, cin, cout, stride in ((8, 4, 32, 4), (4, 32, 64, 2), (3, 64, 64, 1)):
        w = v1.Variable(v1.random_normal([k, k, cin, cout], stddev=0.05))
        h = tf.nn.relu(tf.nn.conv2d(h, w, strides=stride, padding="SAME"))
    h = tf.reshape(h, [-1, 10 * 10 * 64])
    w = v1.Variable(v1.random_normal([10 * 10 * 64, 2], stddev=0.05))
    return x, tf.matmul(h, w), shape


def _case(tf: Any, np: Any, kind: str, n: int, rounds: int) -> None:
    graph = tf.Graph()
    with graph.as_default():
        x, out, shape = _build(tf, kind)
        init = tf.compat.v1.global_variables_initializer()
    data = np.random.rand(n, *shape).astype("float32")
    with tf.compat.v1.Session(graph=graph) as sess:
        sess.run(init)
        sess.run(out, {x: data})  # warm both shapes once
        sess.run(out, {x: data[:1]})
        per, batched = [], []
        for _ in range(rounds):
            t = time.perf_counter()
            for i in range(n):
                sess.run(out, {x: data[i:i + 1]})
            per.append(time.perf_counter() - t)
            t = time.perf_counter()
            sess.run(out, {x: data})
            batched.append(time.perf_counter() - t)
    p, b = statistics.median(per), statistics.median(batched)
    print(f"{kind:6s} n={n}: one run per example {p * 1e3:8.2f} ms, one batched run "
          f"{b * 1e3:7.2f} ms, ratio {p / b:5.1f}x")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--n", type=int, default=64)
    args = ap.parse_args()
    import numpy as np
    import tensorflow as tf

    tf.compat.v1.disable_eager_execution()
    for kind in ("dense", "conv"):
        _case(tf, np, kind, args.n, args.rounds)


if __name__ == "__main__":
    main()
