"""Trust defects of held-out round 4: tune never crashes on a user function spelled the usual
ways (already a ``tf.function``, the inner function of a loss factory), and a candidate that
returns the same value in another container (a 0-d tensor for a Python float) is given the
user's type back, never rejected and never picked with the type changed."""

from __future__ import annotations

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

from tfperf.tune import tune  # noqa: E402

TF_FUNCTION = """
import tensorflow as tf


@tf.function
def f(x, w):
    return tf.map_fn(lambda row: tf.reduce_sum(row * w), x)
"""


def test_a_user_function_that_is_already_a_tf_function_is_tuned_not_crashed(user_module):
    # Its body runs as one graph call: no eager op is counted (a ZeroDivisionError before).
    mod = user_module(TF_FUNCTION)
    x, w = tf.random.normal([64, 8]), tf.random.normal([8])
    result = tune(mod.f, (x, w), budget=10)
    assert result.candidates
    if result.best_fn is not None:
        np.testing.assert_allclose(result.best_fn(x, w).numpy(), mod.f(x, w).numpy(),
                                   rtol=1e-5)
