"""Bench file for the article's §5 case study: `tfperf bench case_study_bench.py [--quick]`.

The variants are the article's own code (S16–S18): the nested Python loop, the vectorised
broadcast-and-reduce, the same under tf.function and under XLA, and a single einsum. The
loop is the baseline; it takes tens of seconds on a small CPU, so under --quick it runs on
4 of the 64 samples and its time is scaled up ×16 (the table says so).
"""

import tensorflow as tf

import tfperf.bench as bench
from tfperf.examples.case_study_fixed import (
    compute_feature_tf_einsum,
    compute_feature_tf_vec,
    compute_feature_tf_xla,
)
from tfperf.examples.case_study_slow import compute_feature_tf_slow

NUM_SAMPLES, WINDOW, DIM = 64, 500, 128


@bench.inputs
def make_inputs():
    g = tf.random.Generator.from_seed(0)
    samples = g.normal([NUM_SAMPLES, WINDOW, DIM])
    weights = g.normal([WINDOW])
    return samples, weights


@bench.variant(name="loop", baseline=True, quick_batch=4)
def loop(samples, weights):
    return compute_feature_tf_slow(samples, weights)


@bench.variant(name="vectorised")
def vectorised(samples, weights):
    return compute_feature_tf_vec(samples, weights)


_vec_graph = tf.function(compute_feature_tf_vec)


@bench.variant(name="tf.function")
def graph(samples, weights):
    return _vec_graph(samples, weights)


@bench.variant(name="xla")
def xla(samples, weights):
    return compute_feature_tf_xla(samples, weights)


@bench.variant(name="einsum")
def einsum(samples, weights):
    return compute_feature_tf_einsum(samples, weights)
