"""Held-out round 7's functions that raise when traced (c04, c09): a loop over
``range(tf.shape(x)[0])`` (directly, through a name, ``len(x)`` of a tensor) inside the
function or a Keras layer's ``call`` is symbolic under tracing, so ``tf.function`` and
``jit_compile`` raised and nothing compiled was tried. The static-bounds lever gives the loop
a Python trip count from the static shape, and the compile rungs stack on it. (``range(len(x))``
in a plain function traces already: autograph reads ``len`` of a tensor; it is rewritten
only as a spelling of the same bound.)"""

from __future__ import annotations

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

from tfperf.tune import tune  # noqa: E402
from tfperf.tune.levers.static_bounds import StaticLoopBounds, rewrite  # noqa: E402
from tfperf.tune.levers.tf_function import TfFunction  # noqa: E402
from tfperf.tune.source import SourceEditError  # noqa: E402

DIRECT = """
import tensorflow as tf


def f(x):
    out = []
    for i in range(tf.shape(x)[0]):
        out.append(tf.reduce_sum(x[i] * x[i]))
    return tf.stack(out)
"""
THROUGH_A_NAME = DIRECT.replace("    for i in range(tf.shape(x)[0]):",
                                "    n = tf.shape(x)[0]\n    for i in range(n):")
BY_LEN = DIRECT.replace("range(tf.shape(x)[0])", "range(len(x))")
COMPREHENSION = """
import tensorflow as tf


def f(x):
    return tf.stack([tf.reduce_sum(x[i] * x[i]) for i in range(tf.shape(x)[0])])
"""
LAYER = """
import tensorflow as tf
from tensorflow.keras import layers


class Norms(layers.Layer):
    def call(self, x):
        batch_size = tf.shape(x)[0]
        out = []
        for i in range(batch_size):
            out.append(tf.reduce_sum(x[i] * x[i]))
        return tf.stack(out)


NORMS = Norms()


def f(x):
    return NORMS(x)
"""


@pytest.mark.parametrize("source", [DIRECT, THROUGH_A_NAME, BY_LEN, COMPREHENSION, LAYER],
                         ids=["direct", "through-a-name", "len", "comprehension", "layer"])
def test_each_spelling_gets_a_static_trip_count(source):
    out = rewrite(source, "f", {"x"})
    assert "range(x.shape[0])" in out, out
    assert "tf.shape(x)[0])" not in out.split("range(", 1)[1].split(")")[0]


def test_len_of_a_list_and_static_loops_are_left_alone():
    with pytest.raises(SourceEditError):
        rewrite(BY_LEN, "f", set())  # x not known to be a tensor: len() may be a list's
    with pytest.raises(SourceEditError):
        rewrite(DIRECT.replace("range(tf.shape(x)[0])", "range(x.shape[0])"), "f", {"x"})


@pytest.mark.parametrize("source", [DIRECT, THROUGH_A_NAME, COMPREHENSION, LAYER],
                         ids=["direct", "through-a-name", "comprehension", "layer"])
def test_the_compiled_loop_is_tried_and_agrees_where_tracing_raised(user_module, source,
                                                                    roomy_limits):
    mod = user_module(source)
    x = tf.constant(np.random.default_rng(3).normal(size=(48, 16)).astype(np.float32))
    result = tune(mod.f, (x,), budget=8, levers=[StaticLoopBounds(), TfFunction()])
    by = {tuple(c.levers): c for c in result.candidates}
    alone = by[("tf.function",)]
    assert alone.rejected and alone.rejected.startswith("raises"), result.table()
    stacked = by[("loop bounds from static shapes", "tf.function")]
    assert stacked.equivalent is True, result.table()
    assert not (stacked.rejected or "").startswith(("raises", "disagrees", "changes"))


def test_a_trace_that_raises_says_why_in_the_table(user_module):
    # Held-out round 7's tables said only "raises: TypeError: in user code:" (autograph's
    # header); the error's own line is what tells the reader why tracing failed.
    mod = user_module(LAYER)
    x = tf.ones([4, 3])
    result = tune(mod.f, (x,), budget=4, levers=[TfFunction()])
    why = next(c.rejected for c in result.candidates if c.levers == ["tf.function"])
    assert why.startswith("raises: TypeError: 'SymbolicTensor' object cannot be interpreted "
                          "as an integer (while tracing, File "), why


def test_an_expression_keeps_its_parentheses():
    # `tf.shape(a + b)[0]` spelt `a + b.shape[0]` would add a to b's first dimension
    source = DIRECT.replace("def f(x):", "def f(x, y):").replace("tf.shape(x)", "tf.shape(x + y)")
    out = rewrite(source, "f", set())
    assert "range((x + y).shape[0])" in out, out


def test_a_name_bound_before_its_tensor_is_rebound_is_left_alone():
    # `n = tf.shape(x)[0]; x = x[:3]; range(n)` is the old x's length, not the new one's
    rebound = THROUGH_A_NAME.replace("    for i in range(n):",
                                     "    x = x[:3]\n    for i in range(n):")
    with pytest.raises(SourceEditError):
        rewrite(rebound, "f", set())
    after = THROUGH_A_NAME.replace("    return tf.stack(out)",
                                   "    x = tf.stack(out)\n    return x")
    assert "range(x.shape[0])" in rewrite(after, "f", set())  # rebound after the loop: fine
    in_a_loop = THROUGH_A_NAME.replace("    for i in range(n):\n", "    for _ in range(2):\n"
                                       "     for i in range(n):\n").replace(
        "    return tf.stack(out)", "     x = x[1:]\n    return tf.stack(out)")
    with pytest.raises(SourceEditError):  # the second pass reads the rebound x
        rewrite(in_a_loop, "f", set())


def test_a_bound_spread_over_lines_is_rewritten():
    source = DIRECT.replace("range(tf.shape(x)[0])", "range(tf.shape(\n            x)[0])")
    out = rewrite(source, "f", set())
    assert "range(x.shape[0])" in out, out
