"""S12: a Python loop of small ops → one whole-tensor op gains 10²–10³×."""

from __future__ import annotations

from tfperf.bench.suite.context import Context, speedup
from tfperf.bench.suite.verdict import Claim, Figure

CLAIMS = ("S12",)
FIGURE = Figure("10²–10³×", value=(100.0, 1000.0), bound=100.0)


def run(ctx: Context) -> list[Claim]:
    import tensorflow as tf

    batch, dim = 500, 64
    x = tf.random.normal([batch, dim])

    def loop_norms(x):
        return tf.stack([tf.norm(x[i]) for i in range(batch)])

    r = ctx.compare("S12", {"Python loop of tf.norm": loop_norms,
                            "one tf.norm(axis=1)": lambda x: tf.norm(x, axis=1)},
                    (x,), baseline="Python loop of tf.norm")
    return [ctx.claim("S12", "whole-tensor op instead of a Python loop of small ops", FIGURE,
                      speedup(r, "one tf.norm(axis=1)"), "× speedup",
                      f"one tf.norm over [{batch},{dim}] vs {batch} calls", using=[r])]
