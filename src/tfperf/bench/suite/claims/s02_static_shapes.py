"""S2: `tf.matmul` with fully static shapes is 10–20 % faster than with dynamic shapes."""

from __future__ import annotations

from tfperf.bench.suite.context import Context, speedup
from tfperf.bench.suite.verdict import Claim, Figure

CLAIMS = ("S2",)
FIGURE = Figure("10–20 % faster", value=(1.10, 1.20), bound=1.10)


def run(ctx: Context) -> list[Claim]:
    import tensorflow as tf

    n = 256
    a, b = tf.random.normal([n, n]), tf.random.normal([n, n])
    static = tf.function(tf.matmul, input_signature=[tf.TensorSpec([n, n]), tf.TensorSpec([n, n])])
    dynamic = tf.function(tf.matmul, input_signature=[tf.TensorSpec([None, None]),
                                                      tf.TensorSpec([None, None])])
    r = ctx.compare("S2", {"dynamic [None, None]": dynamic, f"static [{n}, {n}]": static},
                    (a, b), baseline="dynamic [None, None]")
    return [ctx.claim("S2", "static shapes make tf.matmul faster than dynamic (None) shapes",
                      FIGURE, speedup(r, f"static [{n}, {n}]"), "× (static over dynamic)",
                      f"tf.function matmul [{n}×{n}], static over dynamic signature",
                      using=[r])]
