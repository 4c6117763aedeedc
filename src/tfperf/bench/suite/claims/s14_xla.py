"""S14: XLA fuses ops: 15–30 % on BERT-like layers, several-fold on matrix chains."""

from __future__ import annotations

from tfperf.bench.suite.common import Claim, Context, failed_variants, ratio_verdict, speedup


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
    s1 = speedup(r, "tf.function(jit_compile=True)")
    v1, w1 = ratio_verdict(s1, 1.15, "XLA over graph on a 9-op element-wise chain [1024²]",
                           failed_variants(r))

    def mats(a, b, c, d):
        return tf.matmul(tf.matmul(tf.matmul(a, b), c), d)

    n = 256
    ms = [tf.random.normal([n, n]) * 0.05 for _ in range(4)]
    r2 = ctx.compare("S14_matmul", {"tf.function": tf.function(mats),
                                    "tf.function(jit_compile=True)":
                                        tf.function(mats, jit_compile=True)},
                     ms, baseline="tf.function", rtol=1e-3)
    s2 = speedup(r2, "tf.function(jit_compile=True)")
    v2, w2 = ratio_verdict(s2, 2.0, f"XLA over graph on a chain of 3 matmuls [{n}²]",
                           failed_variants(r2))
    return [
        Claim("S14", "XLA fuses element-wise chains (BERT-like layers 15–30 % faster)",
              "15–30 %", (s1 - 1) * 100 if s1 else None, "% faster", v1, w1),
        Claim("S14b", "XLA speeds matrix chains several-fold", "several-fold", s2, "× speedup",
              v2, w2),
    ]
