"""S14: XLA fuses ops: 15–30 % on BERT-like layers, several-fold on matrix chains."""

from __future__ import annotations

from tfperf.bench.suite.context import Context, speedup
from tfperf.bench.suite.verdict import Claim, Figure

CLAIMS = ("S14", "S14b")
FIGURE = Figure("15–30 %", value=(1.15, 1.30), bound=1.15)
FIGURE_B = Figure("several-fold (read as ≥ 2×)", bound=2.0)


def run(ctx: Context) -> list[Claim]:
    import tensorflow as tf

    def chain(x):  # element-wise ops XLA can fuse into one kernel
        y = x * 1.5 + 0.5
        y = tf.tanh(y) * tf.sigmoid(x)
        return y * y + tf.sin(x) - 0.25 * x

    x = tf.random.normal([1024, 1024])
    r = ctx.compare("S14_fusion", {"tf.function": tf.function(chain),
                                   "tf.function(jit_compile=True)":
                                       tf.function(chain, jit_compile=True)},
                    (x,), baseline="tf.function")

    def mats(a, b, c, d):
        return tf.matmul(tf.matmul(tf.matmul(a, b), c), d)

    n = 256
    ms = [tf.random.normal([n, n]) * 0.05 for _ in range(4)]
    r2 = ctx.compare("S14_matmul", {"tf.function": tf.function(mats),
                                    "tf.function(jit_compile=True)":
                                        tf.function(mats, jit_compile=True)},
                     ms, baseline="tf.function")
    return [
        ctx.claim("S14", "XLA fuses element-wise chains (BERT-like layers 15–30 % faster)",
                  FIGURE, speedup(r, "tf.function(jit_compile=True)"), "× (XLA over graph)",
                  "XLA over graph on a 9-op element-wise chain [1024²]", using=[r]),
        ctx.claim("S14b", "XLA speeds matrix chains several-fold", FIGURE_B,
                  speedup(r2, "tf.function(jit_compile=True)"), "× (XLA over graph)",
                  f"XLA over graph on a chain of 3 matmuls [{n}²]", using=[r2]),
    ]
