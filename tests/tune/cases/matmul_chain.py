"""A chain of small dense layers written as matmul + bias + relu."""

import tensorflow as tf

import tfperf

SMALL = {"batch": 32, "width": 64, "layers": 4}
FULL = {"batch": 256, "width": 512, "layers": 6}
CALLS = None
SIZE = dict(SMALL)


@tfperf.inputs
def make():
    g = tf.random.Generator.from_seed(4)
    ws = [g.normal([SIZE["width"], SIZE["width"]]) * 0.05 for _ in range(SIZE["layers"])]
    return g.normal([SIZE["batch"], SIZE["width"]]), ws


@tfperf.variant(baseline=True)
def mlp(x, ws):
    h = x
    for w in ws:
        h = tf.nn.relu(tf.matmul(h, w) + 0.1)
    return h


_graph = tf.function(mlp)
_xla = tf.function(mlp, jit_compile=True)


@tfperf.variant
def hand_tf_function(x, ws):
    return _graph(x, ws)


@tfperf.variant
def hand_xla(x, ws):
    return _xla(x, ws)
