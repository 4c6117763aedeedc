"""The article's §5.1 baseline (S16), as written there: a nested Python loop of small ops.

samples: [num_samples, window, dim] float32, weights: [window] float32 → [num_samples, dim].
`tfperf lint` flags this file (TFP101, TFP102, TFP103); `case_study_fixed.py` is the cure.
"""

import tensorflow as tf


def compute_feature_tf_slow(samples, weights):
    # samples: [num_samples, window, dim]
    results = []
    for i in range(samples.shape[0]):
        window_data = samples[i]
        weighted_sum = tf.zeros([samples.shape[2]], dtype=tf.float32)
        for j in range(samples.shape[1]):
            weighted_sum = weighted_sum + window_data[j] * weights[j]
        results.append(weighted_sum)
    return tf.stack(results)
