"""The article's §5.2 (S17) and §5.3 (S18) versions: whole-tensor ops, then XLA-fused.

Both compute exactly what ``case_study_slow.compute_feature_tf_slow`` computes.
"""

import tensorflow as tf


def compute_feature_tf_vec(samples, weights):
    # samples: [num_samples, window, dim]; weights: [window]
    weights = tf.reshape(weights, [-1, 1])  # [window, 1]
    weighted = samples * weights  # broadcast multiply: [num_samples, window, dim]
    return tf.reduce_sum(weighted, axis=1)  # [num_samples, dim]


@tf.function(jit_compile=True)
def compute_feature_tf_xla(samples, weights):
    weights = tf.reshape(weights, [-1, 1])
    weighted = samples * weights
    return tf.reduce_sum(weighted, axis=1)


def compute_feature_tf_einsum(samples, weights):
    # One contraction, no [num_samples, window, dim] intermediate.
    return tf.einsum("swd,w->sd", samples, weights)
