"""S13: tf.function removes Python overhead (~4×); Python scalar arguments retrace per value,
and a retrace storm can be slower than eager."""

from __future__ import annotations

import logging

from tfperf.bench.suite.common import (
    DOES_NOT_HOLD,
    HOLDS,
    NOT_APPLICABLE,
    Claim,
    Context,
    failed_variants,
    ratio_verdict,
    speedup,
)


def run(ctx: Context) -> list[Claim]:
    import tensorflow as tf

    def make_batch(seed_tensor, scale):
        # A small data-generation step: a dozen small ops, as in the article's example.
        x = tf.random.stateless_normal([32, 16], seed=tf.stack([seed_tensor, 0]))
        y = tf.nn.relu(x * scale + 0.5)
        z = tf.concat([y, tf.square(y), tf.sqrt(tf.abs(x) + 1e-3)], axis=1)
        z = (z - tf.reduce_mean(z, axis=0)) / (tf.math.reduce_std(z, axis=0) + 1e-6)
        return tf.clip_by_value(z, -3.0, 3.0)

    graph = tf.function(make_batch)
    seed = tf.constant(1, tf.int32)
    scale_t = tf.constant(2.0)
    r = ctx.compare("S13", {"eager": lambda: make_batch(seed, scale_t),
                            "tf.function": lambda: graph(seed, scale_t)}, baseline="eager")
    s = speedup(r, "tf.function")
    v1, w1 = ratio_verdict(s, 2.0, "tf.function over eager on a 12-op data step",
                           failed_variants(r))

    # Retrace storm: a new Python float each call means a new trace each call.
    storm_fn = tf.function(make_batch)
    counter = [0]

    def storm():
        counter[0] += 1
        return storm_fn(seed, 1.0 + counter[0] * 1e-3)

    tf_logger = tf.get_logger()
    level = tf_logger.level
    tf_logger.setLevel(logging.ERROR)  # TF warns about every retrace after the fifth
    try:
        r2 = ctx.compare("S13_retrace", {"eager": lambda: make_batch(seed, 2.0),
                                         "tf.function, new Python float each call": storm},
                         baseline="eager", check_equivalence=False)
    finally:
        tf_logger.setLevel(level)
    storm_res = r2["tf.function, new Python float each call"]
    slowdown = 1 / storm_res.speedup if storm_res.speedup else None
    traces = counter[0]
    if slowdown is None:
        v2, w2 = NOT_APPLICABLE, f"could not be measured: {failed_variants(r2)}"
    else:
        v2 = HOLDS if slowdown > 1 else DOES_NOT_HOLD
        w2 = (f"{traces} calls, one trace each: {slowdown:.3g}× the eager time per call")
    return [
        Claim("S13", "tf.function removes Python overhead", "~4×", s, "× speedup", v1, w1),
        Claim("S13b", "a retrace storm (Python scalar args) is slower than eager", "–",
              slowdown, "× eager time (retrace storm)", v2, w2),
    ]
