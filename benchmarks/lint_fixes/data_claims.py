"""Time the tf.data shapes behind three recall questions of issue 18, with tensors of our own,
through tfperf's comparison core (interleaved rounds, ratio of medians):

    python benchmarks/lint_fixes/data_claims.py [--budget 6] [--cases cheap,heavy,prefetch,spiky]

* ``cheap``: a map doing only a cast, a scale and a one-hot (MNIST-sized elements), run
  sequentially vs ``num_parallel_calls=AUTOTUNE``, with ``map_parallelization`` off (what TF
  before 2.6 does): does TFP602 have a case on cheap maps?
* ``heavy``: the same with real per-element work (a resize and random flips/brightness on
  64x64x3 images): the shape TFP602 keeps.
* ``prefetch`` and ``spiky``: F043's shape, a parallel map whose per-element latency
  varies (``prefetch``: most elements 0.2 ms, one in 20 sleeps 15 ms; ``spiky``: one in 80
  sleeps 60 ms, so producer and consumer are balanced on average and only a deeper buffer
  absorbs the spikes), batched, consumed by a step of fixed length (a host sleep, as an
  accelerator step looks to the input pipeline), ending in ``prefetch(1)`` vs
  ``prefetch(AUTOTUNE)``.

Each variant iterates a whole (finite) pipeline and returns the number of batches, so the
outputs are compared for equality only.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def _options(tf: Any) -> Any:
    opts = tf.data.Options()
    opts.experimental_optimization.map_parallelization = False  # TF < 2.6
    return opts


def _drain(ds: Any, step_s: float = 0.0) -> int:
    n = 0
    for _ in ds:
        if step_s:
            time.sleep(step_s)
        n += 1
    return n


def cheap(tf: Any, parallel: bool) -> int:
    images = tf.zeros([20000, 28, 28], tf.uint8)
    labels = tf.zeros([20000], tf.int64)

    def scale(x: Any, y: Any) -> Any:
        return tf.cast(x, tf.float32) / 255.0, tf.one_hot(y, 10)

    ds = tf.data.Dataset.from_tensor_slices((images, labels))
    ds = ds.map(scale, num_parallel_calls=tf.data.AUTOTUNE) if parallel else ds.map(scale)
    return _drain(ds.batch(128).with_options(_options(tf)))


def heavy(tf: Any, parallel: bool) -> int:
    images = tf.zeros([2000, 64, 64, 3], tf.uint8)

    def augment(x: Any) -> Any:
        x = tf.image.resize(tf.cast(x, tf.float32), [96, 96])
        x = tf.image.random_flip_left_right(x)
        return tf.image.random_brightness(x, 0.2)

    ds = tf.data.Dataset.from_tensor_slices(images)
    ds = ds.map(augment, num_parallel_calls=tf.data.AUTOTUNE) if parallel else ds.map(augment)
    return _drain(ds.batch(64).with_options(_options(tf)))


def prefetch(tf: Any, autotune: bool, every: int = 20, spike_s: float = 0.015) -> int:
    def slow(i: Any) -> Any:
        # every `every`-th element sleeps `spike_s`: a latency spike (a slow read, a big image)
        time.sleep(spike_s if int(i) % every == 0 else 0.0002)
        return i

    def load(i: Any) -> Any:
        return tf.py_function(slow, [i], tf.int64)

    ds = tf.data.Dataset.range(16 * 40).map(load, num_parallel_calls=4).batch(16)
    ds = ds.prefetch(tf.data.AUTOTUNE if autotune else 1)
    return _drain(ds, step_s=0.012)


CASES = {
    "cheap": (cheap, "sequential", "parallel"),
    "heavy": (heavy, "sequential", "parallel"),
    "prefetch": (prefetch, "prefetch(1)", "prefetch(AUTOTUNE)"),
    "spiky": (lambda tf, a: prefetch(tf, a, every=80, spike_s=0.06), "prefetch(1)",
              "prefetch(AUTOTUNE)"),
}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget", type=float, default=6.0, help="seconds of rounds per case")
    ap.add_argument("--cases", default=",".join(CASES))
    args = ap.parse_args(argv)
    import tensorflow as tf

    from tfperf.bench.comparison import compare
    print(f"TensorFlow {tf.__version__}, {os.cpu_count()} CPUs")
    for name in args.cases.split(","):
        fn, before, after = CASES[name]
        report = compare({before: lambda fn=fn: fn(tf, False),
                          after: lambda fn=fn: fn(tf, True)},
                         baseline=after, budget=args.budget)
        times = {v.name: v.median_s for v in report.variants}
        print(f"{name}: {before} {times[before] * 1e3:.1f} ms, {after} {times[after] * 1e3:.1f}"
              f" ms, ratio {times[before] / times[after]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
