"""S4: leaving the device for a NumPy call mid-computation costs copies that eat the gains."""

from __future__ import annotations

from tfperf.bench.suite.context import Context, time_ratio
from tfperf.bench.suite.verdict import Claim, Figure

CLAIMS = ("S4",)
FIGURE = Figure("– (no figure: the copies can eat all other gains)")


def run(ctx: Context) -> list[Claim]:
    import numpy as np
    import tensorflow as tf

    n = 1024 if ctx.gpu else 256
    x, w = tf.random.normal([n, n]), tf.random.normal([n, n]) * 0.05

    def on_device(x, w):
        return tf.matmul(tf.tanh(tf.matmul(x, w)), w)

    def numpy_in_the_middle(x, w):
        h = np.tanh(tf.matmul(x, w).numpy())  # device → host, NumPy, host → device
        return tf.matmul(tf.constant(h), w)

    r = ctx.compare("S4", {"all in TensorFlow": on_device,
                           "NumPy call in the middle": numpy_in_the_middle},
                    (x, w), baseline="all in TensorFlow")
    slowdown = time_ratio(r, "NumPy call in the middle", "all in TensorFlow")
    mb = n * n * 4 / 1e6
    unavailable = None if ctx.gpu else (
        f"no GPU: no PCIe copy here; .numpy() and tf.constant copy {mb:.2g} MB in host memory")
    return [ctx.claim("S4", "a NumPy call mid-computation costs copies off the device", FIGURE,
                      slowdown, "× slower with the NumPy round trip",
                      f"matmul → tanh → matmul on [{n},{n}], tanh in NumPy vs in TF",
                      using=[r], unavailable=unavailable, details={"n": n})]
