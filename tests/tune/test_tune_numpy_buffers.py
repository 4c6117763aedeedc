"""A NumPy buffer filled row by row with TensorFlow ops (stop 40; held-out round 10's c05:
``out = np.ndarray(X.shape); for row in range(X.shape[0]): out[row] =
tf.nn.batch_normalization(X[row], ...)``, no pick before): the loop model reads the buffer as
the loop's collector, the body runs once on the batch and the buffer is that batch as an
array of the buffer's dtype (NumPy's item assignment converts each row the same way). Only a
buffer made from the shape of the tensor whose rows the loop reads, every row of it: a loop
over fewer rows, rows of another tensor, or a buffer read in its own loop stay as written
(VALID twins). Each rewrite is run against the spelling (no timing)."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

sys.path.insert(0, str(Path(__file__).parent))
from rewrites import lever_context, loops_left  # noqa: E402

from tfperf.tune.levers.loop_model import LoopsBatched  # noqa: E402
from tfperf.tune.source import SourceEditError  # noqa: E402

_RNG = np.random.default_rng(8)
X = _RNG.normal(size=(40, 6)) * _RNG.uniform(0.5, 9.0, size=6) + 3.0
M, S = X.mean(axis=0), X.std(axis=0)
Y = _RNG.normal(size=(40, 6)).astype(np.float32)


def _module(body: str) -> str:
    return "import numpy as np\nimport tensorflow as tf\n\n\n" + textwrap.dedent(body)


def _run(text: str, args: tuple):
    ns: dict = {}
    exec(compile(text, "<m>", "exec"), ns)
    return ns["f"](*args)


SPELLINGS = {
    "ndarray_of_the_shape": ("""
        def f(X, m, s):
            out = np.ndarray(X.shape)
            for row in range(X.shape[0]):
                out[row] = tf.nn.batch_normalization(X[row], mean=m, variance=s**2,
                                                     offset=None, scale=None,
                                                     variance_epsilon=1e-8)
            return out
        """, (X, M, S)),
    "zeros_like_softmax": ("""
        def f(x):
            probs = np.zeros_like(x)
            for i in range(len(x)):
                probs[i] = tf.nn.softmax(x[i])
            return probs
        """, (Y,)),
    "empty_with_a_dtype": ("""
        def f(x):
            out = np.empty((x.shape[0], 1), dtype=np.float32)
            for i in range(x.shape[0]):
                out[i] = tf.reduce_sum(tf.square(x[i]), keepdims=True)
            return out
        """, (Y,)),
    "zeros_rows_of_an_enumerate": ("""
        def f(x):
            out = np.zeros(x.shape)
            for i, r in enumerate(x):
                out[i] = tf.tanh(r) * 2.0
            return out
        """, (Y,)),
}


@pytest.mark.parametrize("name", sorted(SPELLINGS))
def test_a_numpy_buffer_filled_per_row_is_the_op_on_the_batch(name):
    body, args = SPELLINGS[name]
    text = _module(body)
    ctx = lever_context(text, args, "m.py")
    lever = LoopsBatched(True)
    assert lever.applies(ctx) is None
    new = lever.build(text, ctx)
    assert loops_left(new) == 0 and ".asarray(" in new, new
    want, got = _run(text, args), _run(new, args)
    assert isinstance(got, np.ndarray) and got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("body", [
    # fewer rows than the buffer holds: the rest keep their zeros
    """
    def f(x):
        out = np.zeros(x.shape)
        for i in range(x.shape[0] // 2):
            out[i] = tf.nn.softmax(x[i])
        return out
    """,
    # rows of another tensor than the one the buffer is shaped by
    """
    def f(x):
        out = np.zeros(x[:10].shape)
        y = x[:10] * 2.0
        for i in range(y.shape[0]):
            out[i] = tf.nn.softmax(y[i])
        return out
    """,
    # the buffer read in its own loop: each row depends on the one before
    """
    def f(x):
        out = np.zeros(x.shape)
        for i in range(x.shape[0]):
            out[i] = tf.nn.softmax(x[i]) + out[i - 1]
        return out
    """,
])
def test_valid_a_buffer_not_filled_as_one_batch_stays(body):
    text = _module(body)
    ctx = lever_context(text, (Y,), "m.py")
    try:
        new = LoopsBatched(True).build(text, ctx)
    except SourceEditError:
        return
    np.testing.assert_allclose(_run(new, (Y,)), _run(text, (Y,)), rtol=1e-6)


@pytest.mark.parametrize("body", [
    # one scalar per row fills the row (out[i] = scalar broadcasts in NumPy)
    """
    def f(x):
        out = np.zeros((x.shape[0], 3))
        for i in range(x.shape[0]):
            out[i] = tf.reduce_sum(x[i])
        return out
    """,
    # a row of the buffer's last axis, repeated along a middle axis
    """
    def f(x):
        out = np.zeros((x.shape[0], 2, x.shape[1]), np.float32)
        for i in range(x.shape[0]):
            out[i] = tf.nn.softmax(x[i])
        return out
    """,
])
def test_a_row_value_of_another_shape_is_broadcast_into_the_buffer(body):
    # Review 40: the buffer's trailing shape was not compared with the row value's: the
    # batch of scalars was returned as (n,) where the loop fills (n, 3).
    text = _module(body)
    ctx = lever_context(text, (Y,), "m.py")
    new = LoopsBatched(True).build(text, ctx)
    assert loops_left(new) == 0, new
    for x in (Y, Y[:3], Y[:1]):
        want, got = _run(text, (x,)), _run(new, (x,))
        assert isinstance(got, np.ndarray) and got.dtype == want.dtype
        assert got.shape == want.shape, (got.shape, want.shape)
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
