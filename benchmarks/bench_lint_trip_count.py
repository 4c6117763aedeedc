"""When does compiling a per-step call pay? The break-even trip count behind the loop-count
fact that TFP110/TFP111/TFP310 ask before reporting (docs/lint.md, "eighth pass, B").

    python benchmarks/bench_lint_trip_count.py [--rounds 5] [--calls 50]

For each case it times, in one process, the first call of a fresh ``tf.function`` (trace +
run), an eager call and a compiled call (medians over interleaved rounds), and prints the
break-even count: trace cost / (eager - compiled) per call. A loop that runs fewer times than
that loses by being compiled.

* dense2: a 2-layer Keras MLP on a batch of one (TFP111's model call per step).
* rnn: a small Keras LSTM on one sequence of 10 steps.
* ops6: six ops on a 5 x 12 matrix (k-means assignment; TFP310's eager ops per step).
* ops12, ops48: chains of 12 and 48 small elementwise ops on the same matrix.

Then TFP207's claim: a random batch drawn with NumPy and converted to a tensor against
``tf.random.uniform`` of the same shape, a large batch of images and small GAN noise
(medians of interleaved rounds, ratio NumPy / TensorFlow).
"""

from __future__ import annotations

import argparse
import functools
import statistics
import time
from collections.abc import Callable
from typing import Any


def _median_call(fn: Callable[[], Any], calls: int) -> float:
    t = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t) / calls


def _case(name: str, make: Callable[[], Callable[..., Any]], arg: Any, rounds: int,
          calls: int) -> None:
    import tensorflow as tf

    fn = make()
    fn(arg)  # build weights
    traces, eager, graph = [], [], []
    for _ in range(rounds):
        compiled = tf.function(fn)
        t = time.perf_counter()
        compiled(arg)
        traces.append(time.perf_counter() - t)
        eager.append(_median_call(lambda: fn(arg), calls))
        graph.append(_median_call(functools.partial(compiled, arg), calls))
    tr, e, g = (statistics.median(v) for v in (traces, eager, graph))
    saving = e - g
    even = f"{tr / saving:.0f}" if saving > 0 else "never"
    print(f"{name:8s} first call {tr * 1e3:8.2f} ms  eager {e * 1e3:7.3f} ms  "
          f"compiled {g * 1e3:7.3f} ms  eager/compiled {e / g:5.1f}x  break-even {even} calls")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--calls", type=int, default=50)
    a = ap.parse_args()
    import numpy as np
    import tensorflow as tf

    def dense2() -> Callable[..., Any]:
        return tf.keras.Sequential([tf.keras.layers.Dense(64, activation="relu"),
                                    tf.keras.layers.Dense(10)])

    def rnn() -> Callable[..., Any]:
        return tf.keras.Sequential([tf.keras.layers.LSTM(32), tf.keras.layers.Dense(1)])

    def ops6() -> Callable[..., Any]:
        centroids = tf.constant(np.random.rand(2, 12).astype(np.float32))

        def assign(x: Any) -> Any:
            d = tf.reduce_sum(tf.square(tf.subtract(tf.expand_dims(x, 0),
                                                    tf.expand_dims(centroids, 1))), 2)
            return tf.argmin(d, 0)
        return assign

    def chain(n: int) -> Callable[[], Callable[..., Any]]:
        def make() -> Callable[..., Any]:
            def f(x: Any) -> Any:
                for _ in range(n // 2):
                    x = tf.square(x) * 0.5
                return x
            return f
        return make

    _case("dense2", dense2, tf.constant(np.random.rand(1, 24).astype(np.float32)),
          a.rounds, a.calls)
    _case("rnn", rnn, tf.constant(np.random.rand(1, 10, 1).astype(np.float32)),
          a.rounds, a.calls)
    small = tf.constant(np.random.rand(5, 12).astype(np.float32))
    _case("ops6", ops6, small, a.rounds, a.calls)
    _case("ops12", chain(12), small, a.rounds, a.calls)
    _case("ops48", chain(48), small, a.rounds, a.calls)
    _random(max(a.rounds, 7))


def _random(rounds: int) -> None:
    import numpy as np
    import tensorflow as tf

    for shape in ((32, 224, 224, 3), (64, 100)):
        def host(shape: tuple[int, ...] = shape) -> Any:
            return tf.convert_to_tensor(np.random.uniform(-1, 1, size=shape).astype(np.float32))

        def device(shape: tuple[int, ...] = shape) -> Any:
            return tf.random.uniform(shape, -1, 1)

        host(), device()
        a: list[float] = []
        b: list[float] = []
        for _ in range(rounds):
            a.append(_median_call(host, 5))
            b.append(_median_call(device, 5))
        ha, db = statistics.median(a), statistics.median(b)
        print(f"random {shape}: numpy+convert {ha * 1e3:.3f} ms  tf.random {db * 1e3:.3f} ms  "
              f"ratio {ha / db:.1f}x")


if __name__ == "__main__":
    main()
