"""S9: prefer tf.constant over tf.Variable for fixed tables: a constant is folded at trace time,
a variable's derived values are recomputed every call."""

from __future__ import annotations

from tfperf.bench.suite.context import Context, speedup
from tfperf.bench.suite.verdict import Claim, Figure

CLAIMS = ("S9",)
FIGURE = Figure("– (no figure: constants fold)")


def run(ctx: Context) -> list[Claim]:
    import numpy as np
    import tensorflow as tf

    rng = np.random.default_rng(0)
    table = rng.uniform(-1, 1, size=(512, 512)).astype(np.float32)  # a fixed kernel/table
    variable = tf.Variable(table)
    x = tf.random.normal([8, 512])

    @tf.function
    def from_variable(x):
        return tf.matmul(x, tf.exp(variable) * 0.5 + 1.0)

    @tf.function
    def from_constant(x):
        # tf.constant inside the function is a Const node: Grappler folds exp(…)·0.5 + 1.
        return tf.matmul(x, tf.exp(tf.constant(table)) * 0.5 + 1.0)

    r = ctx.compare("S9", {"tf.Variable table": from_variable,
                           "tf.constant table": from_constant},
                    (x,), baseline="tf.Variable table")
    return [ctx.claim("S9", "a fixed table as tf.constant beats tf.Variable (constant folding)",
                      FIGURE, speedup(r, "tf.constant table"), "× (constant over variable)",
                      "x[8,512] @ (exp(table[512,512])·0.5 + 1) in a tf.function", using=[r])]
