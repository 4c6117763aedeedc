"""A chain of element-wise ops (a hand-written GELU and a residual): many small kernels."""

import tensorflow as tf

import tfperf

SMALL = {"rows": 64, "cols": 64}
FULL = {"rows": 512, "cols": 1024}
CALLS = None
SIZE = dict(SMALL)


@tfperf.inputs
def make():
    return (tf.random.Generator.from_seed(3).normal([SIZE["rows"], SIZE["cols"]]),)


@tfperf.variant(baseline=True)
def gelu_chain(x):
    y = 0.5 * x * (1.0 + tf.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))
    y = y * tf.sigmoid(y) + x
    return y / (1.0 + tf.abs(y))


_graph = tf.function(gelu_chain)
_xla = tf.function(gelu_chain, jit_compile=True)


@tfperf.variant
def hand_tf_function(x):
    return _graph(x)


@tfperf.variant
def hand_xla(x):
    return _xla(x)
