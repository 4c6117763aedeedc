"""np.mean and ``.mean()`` of integers or bools are float64 means in NumPy (int32 [1, 2] →
1.5) where tf.reduce_mean of them is an integer one (1): the round trip's rewrite goes
through ``_tfperf_np_float`` (integers and bools cast to float64, floats as they are), so it
gives NumPy's value and dtype for each input dtype, eager and traced (stop 42: the table
mapped the mean without a cast; only an output that showed it was rejected)."""

from __future__ import annotations

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

from tfperf.tune.levers.numpy_round_trip import rewrite  # noqa: E402

SOURCE = """
import numpy as np
import tensorflow as tf


def f(x):
    xn = x.numpy()
    return tf.constant(CALL)
"""

CALLS = [
    "np.mean(xn)", "np.mean(xn, axis=1)", "np.mean(xn, axis=0, keepdims=True)",
    "np.mean(xn, 1)", "xn.mean()", "xn.mean(1)", "xn.mean(axis=-1, keepdims=True)",
]
# x [3, 4]; each row's mean has a fraction where the dtype is an integer one
VALUES = np.array([[1, 2, 2, 2], [0, 1, 0, 0], [3, 4, 4, 6]])
DTYPES = ["int32", "int64", "uint8", "bool", "float32", "float64"]


def _f(text):
    ns: dict = {}
    exec(compile(text, "<mean>", "exec"), ns)
    return ns["f"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("call", CALLS)
def test_the_mean_rewrite_gives_numpys_value_and_dtype(call, dtype):
    text = SOURCE.replace("CALL", call)
    x = tf.constant(VALUES.astype(dtype))
    want = _f(text)(x).numpy()  # NumPy's own mean, on the host
    assert want.dtype == (np.float64 if dtype in ("int32", "int64", "uint8", "bool")
                          else np.dtype(dtype))
    new = rewrite(text, "f")
    # still a tf.reduce_mean call: the loop and window levers read it
    assert "tf.reduce_mean(_tfperf_np_float(xn)" in new and "np.mean(" not in new, new
    for how, fn in (("eager", _f(new)), ("traced", tf.function(_f(new)))):
        got = fn(x)
        assert got.dtype.as_numpy_dtype == want.dtype, (how, got.dtype, want.dtype, new)
        assert got.shape == want.shape, (how, got.shape, want.shape)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6, err_msg=f"{how}\n{new}")


def test_an_integer_mean_feeding_an_argmax_keeps_its_fraction():
    # rows [1, 1] and [1, 2]: integer means tie (1, 1) and argmax says 0; NumPy's 1.0 and
    # 1.5 say 1. The function's output is an int64 index either way: only the value shows it
    text = SOURCE.replace("CALL", "np.argmax(xn.mean(axis=1))")
    x = tf.constant([[1, 1], [1, 2]], tf.int32)
    new = rewrite(text, "f")
    assert int(_f(text)(x)) == 1
    assert int(_f(new)(x)) == 1, new
