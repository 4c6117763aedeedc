"""A ``tf.cond`` in a per-example body (held-out round 8's c01: a ``tf.map_fn`` of a lambda
whose ``tf.cond`` returns 1 or 0) is read as ``tf.where`` by the loop levers, so the body is
batched: one comparison over the batch instead of one cond per row."""

from __future__ import annotations

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

from tfperf.tune import tune  # noqa: E402
from tfperf.tune.levers.loop_model import LoopsBatched, conds_as_wheres  # noqa: E402

SHARE = """
import tensorflow as tf


def f(scores, weights):
    one = tf.constant(1.0)
    zero = tf.constant(0.0)
    hits = tf.map_fn(lambda r: tf.cond(tf.reduce_max(r) > 0.5, lambda: one, lambda: zero),
                     scores * weights)
    return tf.reduce_mean(hits)
"""

RANDOM = """
import tensorflow as tf


def f(x):
    return tf.map_fn(lambda r: tf.cond(r[0] > 0, lambda: tf.random.uniform([]),
                                       lambda: r[1]), x)
"""


def test_a_cond_of_plain_branches_in_a_body_is_a_where():
    new = conds_as_wheres(SHARE, "f", "tf")
    assert "tf.where(tf.reduce_max(r) > 0.5, one, zero)" in new and "tf.cond" not in new, new


def test_a_cond_with_a_random_branch_stays():
    assert conds_as_wheres(RANDOM, "f", "tf") == RANDOM


def test_a_per_row_cond_is_batched(user_module):
    # (a cond choosing between rows by a per-row test is not batched yet: the where's
    # condition would need the row's axes lined up after it)
    lever = LoopsBatched(axes=True)
    mod = user_module(SHARE)
    rng = np.random.default_rng(11)
    scores = tf.constant(rng.normal(size=(512, 6)).astype(np.float32))
    weights = tf.constant(rng.uniform(0.2, 1.5, size=(512, 6)).astype(np.float32))
    result = tune(mod.f, (scores, weights), budget=10, levers=[lever])
    found = {c.name: c for c in result.candidates}[lever.name]
    assert found.rejected is None and found.equivalent is True, result.table()
    assert result.best_name == lever.name, result.table()  # 512 eager conds → a few ops


GUARDED_LOG = """
import tensorflow as tf


def f(x):
    return tf.map_fn(lambda r: tf.cond(r > 0.0, lambda: tf.math.log(r),
                                       lambda: tf.constant(0.0)), x)
"""

USER_BRANCH = """
import tensorflow as tf

counts = tf.Variable(0.0)


def update_counts(r):
    counts.assign_add(1.0)
    return r


def f(x):
    return tf.map_fn(lambda r: tf.cond(r > 0.0, lambda: update_counts(r), lambda: r), x)
"""

DIVIDED = """
import tensorflow as tf


def f(x):
    return tf.map_fn(lambda r: tf.cond(tf.abs(r) > 0.0, lambda: 1.0 / r, lambda: r / 2), x)
"""


@pytest.mark.parametrize("source", [GUARDED_LOG, USER_BRANCH, DIVIDED],
                         ids=["guarded-log", "user-function", "division-by-data"])
def test_a_cond_whose_branch_is_not_total_stays(source):
    # both branches of a where run: log(0), 1/0 or a user's assignment on the excluded side
    assert conds_as_wheres(source, "f", "tf") == source


def test_a_cond_of_total_ops_and_a_constant_division_is_a_where():
    source = DIVIDED.replace("1.0 / r", "tf.maximum(r, 0.0) * 3").replace("tf.abs(r)", "r")
    assert "tf.where(r > 0.0, tf.maximum(r, 0.0) * 3, r / 2)" in conds_as_wheres(
        source, "f", "tf")


def test_the_gradient_check_sees_nan_through_a_where_of_a_guarded_log():
    from tfperf.tune.gradient_check import finite_gradient_lost

    def guarded(x):
        return tf.map_fn(lambda r: tf.cond(r > 0.0, lambda: tf.math.log(r),
                                           lambda: tf.constant(0.0)), x)

    def where(x):
        return tf.where(x > 0.0, tf.math.log(x), 0.0)

    x = tf.constant([0.0, 1.5, -2.0, 3.0])
    assert np.array_equal(guarded(x).numpy(), where(x).numpy())  # forward: the same
    why = finite_gradient_lost(guarded, where, (x,), {})
    assert why is not None and "NaN or Inf" in why, why
    assert finite_gradient_lost(guarded, guarded, (x,), {}) is None


def test_the_search_rejects_a_where_whose_gradient_is_nan(user_module):
    from planted import Planted

    old = "tf.cond(r > 0.0, lambda: tf.math.log(r),\n                                       " \
          "lambda: tf.constant(0.0))"
    assert old in GUARDED_LOG
    lever = Planted("planted where", old, "tf.where(r > 0.0, tf.math.log(r), 0.0)")
    mod = user_module(GUARDED_LOG)
    x = tf.constant(np.linspace(-2.0, 2.0, 65).astype(np.float32))  # with 0: 1/0
    result = tune(mod.f, (x,), budget=10, levers=[lever])
    found = {c.name: c for c in result.candidates}["planted where"]
    assert found.rejected is not None and "gradient" in found.rejected, result.table()
    assert result.best_name != "planted where"
