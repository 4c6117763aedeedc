"""Frames spelled as ``tf.map_fn`` of a lambda over ``tf.range(a, b)`` (held-out round 8's
c07: the frames lever read loops, not maps of lambdas), a frame being one slice or a
``tf.concat`` of slices that move with the position: one gather of every frame."""

from __future__ import annotations

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

from tfperf.tune import tune  # noqa: E402
from tfperf.tune.levers.frames import FramesToGather  # noqa: E402

NEIGHBOURS = """
import tensorflow as tf

HALF = 3


def f(x):
    padded = tf.pad(x, [[0, 0], [HALF, HALF]])
    return tf.map_fn(
        lambda t: tf.concat([padded[:, t - HALF:t], padded[:, t + 1:t + 1 + HALF]], axis=1),
        tf.range(HALF, HALF + x.shape[1]), fn_output_signature=tf.float32)
"""

ONE_SLICE = """
import tensorflow as tf


def f(x):
    return tf.map_fn(lambda s: x[:, s:s + 5], tf.range(0, x.shape[1] - 5, 2),
                     fn_output_signature=tf.float32)
"""


@pytest.mark.parametrize("source", [NEIGHBOURS, ONE_SLICE], ids=["concat", "one-slice"])
def test_a_map_fn_of_moving_slices_is_one_gather(user_module, source):
    mod = user_module(source)
    x = tf.constant(np.random.default_rng(8).normal(size=(16, 160)).astype(np.float32))
    result = tune(mod.f, (x,), budget=10, levers=[FramesToGather()])
    lever = {c.name: c for c in result.candidates}["frame slices→one gather"]
    assert lever.rejected is None and lever.equivalent is True, result.table()
    added = [line for line in lever.patch.splitlines()
             if line.startswith("+") and not line.startswith("+++")]
    assert not any("map_fn" in line for line in added), lever.patch
    assert any("_tfperf_frames(" in line for line in added), lever.patch
    assert result.best_name == lever.name, result.table()  # 160 eager maps → one gather
    y = tf.constant(np.random.default_rng(9).normal(size=(16, 160)).astype(np.float32))
    np.testing.assert_allclose(result.best_fn(y).numpy(), mod.f(y).numpy(), rtol=1e-6)
