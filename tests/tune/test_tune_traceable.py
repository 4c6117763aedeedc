"""User code that does not trace, made traceable without changing what it computes (held-out
round 8's c03, c05; causes measured on TF 2.21 / Keras 3, see ``levers/traceable.py``): a
Keras layer's ``call`` that AutoGraph never converts, a tensor unpacked into names, a
``break`` on a tensor in a Python ``range`` loop. In each, ``tf.function`` alone raises and
the lever + ``tf.function`` agrees with the user's function on their inputs and varied ones."""

from __future__ import annotations

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

from tfperf.tune import tune  # noqa: E402
from tfperf.tune.levers.tf_function import TfFunction  # noqa: E402
from tfperf.tune.levers.traceable import Traceable, rewrite  # noqa: E402
from tfperf.tune.source import SourceEditError  # noqa: E402

LAYER = """
import tensorflow as tf
from tensorflow import keras


class Brighten(keras.layers.Layer):
    def __init__(self, level=0.5, **kwargs):
        super().__init__(**kwargs)
        self.level = level

    def call(self, x, gains=None):
        ims = []
        for i in range(x.shape[0]):
            im = x[i]
            if tf.reduce_mean(im) <= self.level:
                im = im * gains[i]
            ims.append(im)
        return tf.stack(ims)


LAYER = Brighten(level=0.5)


def f(x, gains):
    return LAYER(x, gains=gains)
"""

BOXES = """
import tensorflow as tf


def f(boxes):
    areas = tf.zeros((tf.shape(boxes)[0],))
    for i in range(tf.shape(boxes)[0]):
        for j in range(tf.shape(boxes)[1]):
            if tf.reduce_all(tf.equal(boxes[i, j], 0)):
                break
            x1, y1, x2, y2 = boxes[i, j]
            areas = tf.tensor_scatter_nd_add(areas, [[i]], [(x2 - x1) * (y2 - y1)])
    return areas
"""

PLAIN = """
import tensorflow as tf


def f(x):
    out = []
    for i in range(x.shape[0]):
        w, h = (2, 3)
        out.append(x[i] * w + h)
    return tf.stack(out)
"""


def _boxes(seed):
    rng = np.random.default_rng(seed)
    boxes = np.zeros((4, 5, 4), np.float32)
    for i in range(4):
        for k in range(int(rng.integers(0, 6))):
            x1, y1 = rng.uniform(0, 50, size=2)
            boxes[i, k] = [x1, y1, x1 + rng.uniform(1, 9), y1 + rng.uniform(1, 9)]
    return tf.constant(boxes)


def test_a_keras_layers_call_is_converted_by_autograph():
    new = rewrite(LAYER, "f", {"x", "gains"})
    assert "@tf.autograph.to_graph\n    def call(" in new, new


def test_unpacking_is_indexing_and_a_loop_breaking_on_a_tensor_is_a_tf_loop():
    new = rewrite(BOXES, "f", {"boxes"})
    assert "x1, y1, x2, y2) = _unpacked_" in new and "[3]" in new, new
    assert "for j in tf.range(boxes.shape[1])" in new, new  # the loop that breaks
    assert "for i in range(boxes.shape[0])" in new, new  # static bound, still Python


def test_code_that_traces_already_is_left_alone():
    with pytest.raises(SourceEditError):
        rewrite(PLAIN.replace("w, h = (2, 3)", "w, h = 2, 3"), "f", {"x"})


def test_a_layer_with_a_tensor_if_in_call_is_compiled(user_module, roomy_limits):
    mod = user_module(LAYER)
    rng = np.random.default_rng(4)
    x = tf.constant(rng.uniform(0, 1, size=(16, 6, 6, 3)).astype(np.float32)
                    * rng.uniform(0.2, 1.6, size=(16, 1, 1, 1)).astype(np.float32))
    gains = tf.constant(rng.uniform(0.5, 2.0, size=(16,)).astype(np.float32))
    result = tune(mod.f, (x, gains), budget=10, levers=[Traceable(), TfFunction()])
    by = {tuple(c.levers): c for c in result.candidates}
    assert by[("tf.function",)].rejected.startswith("raises"), result.table()
    both = by[(Traceable.name, "tf.function")]
    assert both.rejected is None and both.equivalent is True, result.table()


def test_boxes_unpacked_with_a_break_are_compiled(user_module, roomy_limits):
    mod = user_module(BOXES)
    result = tune(mod.f, (_boxes(1),), budget=20, levers=[Traceable(), TfFunction()])
    by = {tuple(c.levers): c for c in result.candidates}
    assert by[("tf.function",)].rejected.startswith("raises"), result.table()
    both = by[(Traceable.name, "tf.function")]
    assert both.rejected is None and both.equivalent is True, result.table()
    # the candidate itself (whether picked or not), on boxes it was not tuned on
    compiled = tf.function(user_module(rewrite(BOXES, "f", {"boxes"}), "rewritten").f)
    eager = mod.f(_boxes(2)).numpy()
    assert eager.any()  # some boxes: a comparison of zeros would say little
    np.testing.assert_allclose(compiled(_boxes(2)).numpy(), eager, rtol=1e-5)
