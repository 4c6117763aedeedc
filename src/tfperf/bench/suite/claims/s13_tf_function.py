"""S13: tf.function removes Python overhead (~4×); Python scalar arguments retrace per value,
and a retrace storm can be slower than eager. Traces are counted with TF's own counter
(``experimental_get_tracing_count``)."""

from __future__ import annotations

import logging

from tfperf.bench.suite.context import Context, speedup, time_ratio
from tfperf.bench.suite.verdict import Claim, Figure

CLAIMS = ("S13", "S13b")
FIGURE = Figure("~4×", value=4.0, bound=4.0)
FIGURE_B = Figure("– (no figure: can be slower than eager)")


def run(ctx: Context) -> list[Claim]:
    import tensorflow as tf

    def make_batch(seed_tensor, scale, step=0):
        # A small data-generation step: a dozen small ops, as in the article's example.
        # ``step`` is unused: as a Python int it only changes the trace cache key.
        x = tf.random.stateless_normal([32, 16], seed=tf.stack([seed_tensor, 0]))
        y = tf.nn.relu(x * scale + 0.5)
        z = tf.concat([y, tf.square(y), tf.sqrt(tf.abs(x) + 1e-3)], axis=1)
        z = (z - tf.reduce_mean(z, axis=0)) / (tf.math.reduce_std(z, axis=0) + 1e-6)
        return tf.clip_by_value(z, -3.0, 3.0)

    graph = tf.function(make_batch)
    seed = tf.constant(1, tf.int32)
    scale = tf.constant(2.0)
    r = ctx.compare("S13", {"eager": lambda: make_batch(seed, scale),
                            "tf.function": lambda: graph(seed, scale)}, baseline="eager")

    # Retrace storm: a new Python int each call is a new trace each call.
    storm_fn = tf.function(make_batch)
    calls = [0]

    def storm():
        calls[0] += 1
        return storm_fn(seed, scale, calls[0])

    tf_logger = tf.get_logger()
    level = tf_logger.level
    tf_logger.setLevel(logging.ERROR)  # TF warns about every retrace after the fifth
    try:
        r2 = ctx.compare("S13_retrace", {"eager": lambda: make_batch(seed, scale),
                                         "tf.function, new Python int each call": storm},
                         baseline="eager")
    finally:
        tf_logger.setLevel(level)
    traces = storm_fn.experimental_get_tracing_count()
    steady = graph.experimental_get_tracing_count()
    storm_failures = []
    if traces < calls[0]:
        storm_failures.append(f"the storm did not happen: {traces} traces for {calls[0]} calls")
    return [
        ctx.claim("S13", "tf.function removes Python overhead", FIGURE,
                  speedup(r, "tf.function"), "× speedup",
                  f"tf.function over eager on a 12-op data step ({steady} trace)", using=[r],
                  details={"traces": steady}),
        ctx.claim("S13b", "a retrace storm (Python scalar args) is slower than eager", FIGURE_B,
                  time_ratio(r2, "tf.function, new Python int each call", "eager"),
                  "× eager time (retrace storm)",
                  f"{calls[0]} calls with a new Python int, {traces} traces (TF's tracing "
                  "count)", using=[r2], failures=storm_failures,
                  details={"calls": calls[0], "traces": traces}),
    ]
