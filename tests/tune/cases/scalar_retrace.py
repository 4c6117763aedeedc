"""A tf.function called with a Python int that changes every iteration: one trace per value.
Ranked by one call (a script that runs it once): the traces are the cost."""

import tensorflow as tf

import tfperf

SMALL = {"n": 128, "steps": 12}
FULL = {"n": 1024, "steps": 24}
CALLS = 1
SIZE = dict(SMALL)


@tfperf.inputs
def make():
    return (tf.random.Generator.from_seed(2).normal([SIZE["n"]]),)


@tf.function
def scale(x, k):
    return x * tf.cast(k, x.dtype) + tf.sin(x)


@tfperf.variant(baseline=True)
def run(x):
    total = tf.zeros_like(x)
    for k in range(SIZE["steps"]):
        total = total + scale(x, k)
    return total


@tf.function
def _scale_by_hand(x, k):
    return x * tf.cast(k, x.dtype) + tf.sin(x)


@tfperf.variant
def hand_tensor_argument(x):
    total = tf.zeros_like(x)
    for k in range(SIZE["steps"]):
        total = total + _scale_by_hand(x, tf.constant(k))
    return total
