"""A tf.data pipeline with a slow per-element map, consumed by a loop: batch-before-map is the
lever (lint's TFP601/TFP602 stay quiet on TF >= 2.12, which prefetches and parallelises this
stateless map by itself); tune measures it against the hand-written variants."""

import tensorflow as tf

import tfperf

SMALL = {"elements": 256, "length": 2048, "batch": 32}
FULL = {"elements": 2048, "length": 4096, "batch": 64}
CALLS = None
SIZE = dict(SMALL)


@tfperf.inputs
def make():
    return (tf.random.Generator.from_seed(7).normal([SIZE["elements"], SIZE["length"]]),)


def features(x):
    # An FFT per element (row-wise, so it also runs on a batch): the map is the slow part.
    spec = tf.abs(tf.signal.rfft(x))
    return tf.math.log1p(spec) * tf.reduce_mean(spec, axis=-1, keepdims=True)


@tfperf.variant(baseline=True)
def epoch(x):
    ds = tf.data.Dataset.from_tensor_slices(x).map(features).batch(SIZE["batch"])
    total = tf.constant(0.0)
    for batch in ds:
        total += tf.reduce_sum(batch)
    return total


@tfperf.variant
def hand_parallel(x):
    ds = tf.data.Dataset.from_tensor_slices(x).map(
        features, num_parallel_calls=tf.data.AUTOTUNE).batch(SIZE["batch"]).prefetch(
        tf.data.AUTOTUNE)
    total = tf.constant(0.0)
    for batch in ds:
        total += tf.reduce_sum(batch)
    return total


@tfperf.variant
def hand_batch_then_map(x):
    ds = tf.data.Dataset.from_tensor_slices(x).batch(SIZE["batch"]).map(features).prefetch(
        tf.data.AUTOTUNE)
    total = tf.constant(0.0)
    for batch in ds:
        total += tf.reduce_sum(batch)
    return total
