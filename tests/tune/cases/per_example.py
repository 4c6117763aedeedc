"""A per-example loop over a batch: one small matvec per example, then stacked."""

import tensorflow as tf

import tfperf

SMALL = {"batch": 16, "features": 32, "units": 8}
FULL = {"batch": 256, "features": 128, "units": 64}
CALLS = None
SIZE = dict(SMALL)


@tfperf.inputs
def make():
    g = tf.random.Generator.from_seed(1)
    return g.normal([SIZE["batch"], SIZE["features"]]), g.normal([SIZE["features"],
                                                                  SIZE["units"]])


@tfperf.variant(baseline=True)
def per_example(x, w):
    out = []
    for i in range(x.shape[0]):
        h = tf.tanh(tf.linalg.matvec(w, x[i], transpose_a=True))
        out.append(h * 2.0)
    return tf.stack(out)


@tfperf.variant
def hand_batched(x, w):
    return tf.tanh(tf.matmul(x, w)) * 2.0


_batched_graph = tf.function(hand_batched)


@tfperf.variant
def hand_batched_tf_function(x, w):
    return _batched_graph(x, w)
