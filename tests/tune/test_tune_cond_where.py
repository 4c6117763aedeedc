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
