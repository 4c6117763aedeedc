"""The article's §5 case study: tune starts from the nested loop (case_study_slow.py); the
hand variants are those of examples/case_study_bench.py (S16–S18)."""

import tensorflow as tf

import tfperf
from tfperf.examples.case_study_fixed import (
    compute_feature_tf_einsum,
    compute_feature_tf_vec,
    compute_feature_tf_xla,
)
from tfperf.examples.case_study_slow import compute_feature_tf_slow

TUNE = compute_feature_tf_slow
# Few loop steps, long rows: the eager loop stays short, and a call computes far more than it
# dispatches (at 8×40×16 a tf.function call's overhead alone outlasts the vectorised code).
SMALL = {"samples": 8, "window": 50, "dim": 16384}
FULL = {"samples": 64, "window": 500, "dim": 128}
# The eager loop at full size takes 5–50 s a call (by the machine's load); the search needs
# a few of those and room for the rungs after.
FULL_BUDGET = 240
CALLS = None
SIZE = dict(SMALL)


@tfperf.inputs
def make():
    g = tf.random.Generator.from_seed(0)
    return g.normal([SIZE["samples"], SIZE["window"], SIZE["dim"]]), g.normal([SIZE["window"]])


@tfperf.variant(name="loop", baseline=True)
def loop(samples, weights):
    return compute_feature_tf_slow(samples, weights)


@tfperf.variant(name="vectorised")
def vectorised(samples, weights):
    return compute_feature_tf_vec(samples, weights)


_vec_graph = tf.function(compute_feature_tf_vec)


@tfperf.variant(name="tf.function")
def graph(samples, weights):
    return _vec_graph(samples, weights)


@tfperf.variant(name="xla")
def xla(samples, weights):
    return compute_feature_tf_xla(samples, weights)


@tfperf.variant(name="einsum")
def einsum(samples, weights):
    return compute_feature_tf_einsum(samples, weights)
