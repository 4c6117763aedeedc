"""S2: `tf.matmul` with fully static shapes is 10–20 % faster than with dynamic shapes."""

from __future__ import annotations

from tfperf.bench.suite.common import Claim, Context, failed_variants, ratio_verdict, speedup


def run(ctx: Context) -> list[Claim]:
    import tensorflow as tf

    n = 256
    a, b = tf.random.normal([n, n]), tf.random.normal([n, n])
    static = tf.function(tf.matmul, input_signature=[tf.TensorSpec([n, n]), tf.TensorSpec([n, n])])
    dynamic = tf.function(tf.matmul, input_signature=[tf.TensorSpec([None, None]),
                                                      tf.TensorSpec([None, None])])
    r = ctx.compare("S2", {"dynamic [None, None]": dynamic, f"static [{n}, {n}]": static},
                    (a, b), baseline="dynamic [None, None]")
    s = speedup(r, f"static [{n}, {n}]")
    pct = (s - 1) * 100 if s else None
    verdict, reason = ratio_verdict(s, 1.05, f"static-shape matmul [{n}×{n}] vs dynamic",
                                    failed_variants(r))
    return [Claim("S2", "static shapes make tf.matmul faster than dynamic (None) shapes",
                  "10–20 % faster", pct, "% faster (static over dynamic)", verdict, reason)]
