"""S12: a Python loop of small ops → one whole-tensor op gains 10²–10³×."""

from __future__ import annotations

from tfperf.bench.suite.common import Claim, Context, failed_variants, ratio_verdict, speedup


def run(ctx: Context) -> list[Claim]:
    import tensorflow as tf

    batch, dim = 500, 64
    x = tf.random.normal([batch, dim])

    def loop_norms(x):
        return tf.stack([tf.norm(x[i]) for i in range(batch)])

    r = ctx.compare("S12", {"Python loop of tf.norm": loop_norms,
                            "one tf.norm(axis=1)": lambda x: tf.norm(x, axis=1)},
                    (x,), baseline="Python loop of tf.norm")
    s = speedup(r, "one tf.norm(axis=1)")
    verdict, reason = ratio_verdict(s, 100, f"one tf.norm over [{batch},{dim}] vs {batch} calls",
                                    failed_variants(r))
    return [Claim("S12", "whole-tensor op instead of a Python loop of small ops", "10²–10³×",
                  s, "× speedup", verdict, reason)]
