"""Array methods and attributes on what ``.numpy()`` returned (stop 42, wave 2; held-out
round 13's c06 ``x.numpy().squeeze()`` and c10 ``.astype``): each spelling and its rewrite give
equal results eagerly and traced, NumPy's own dtype reading of ``astype(float)`` included, and
a wrong mapping of the same shape is caught by the search's equivalence check."""

from __future__ import annotations

import pytest

tf = pytest.importorskip("tensorflow")

from tfperf.bench.equivalence import compare_outputs, snapshot  # noqa: E402
from tfperf.tune.levers.numpy_round_trip import NumpyRoundTrip, rewrite  # noqa: E402

SOURCE = """
import numpy as np
import tensorflow as tf


def f(x, v):
    xn, vn = x.numpy(), v.numpy()
    return tf.constant(CALL)
"""

# x [1, 4, 3, 2] and v [4, 3] (float32) on the host; each call is the NumPy spelling, the
# method names the rewrite must remove (None: an attribute a tensor has as it is).
CALLS = [
    ("xn.squeeze()", "squeeze"),
    ("xn.squeeze(0)", "squeeze"),
    ("xn.squeeze(axis=0)", "squeeze"),
    ("xn.squeeze().astype(np.float64)", "astype"),
    ("xn.astype(float)", "astype"),
    ("xn.astype(int)", "astype"),
    ("(vn > 0).astype(np.uint8)", "astype"),
    ("vn.astype(bool)", "astype"),
    ("xn.reshape(4, 6)", "reshape"),
    ("xn.reshape((-1, 2))", "reshape"),
    ("vn.T", None),
    ("xn.T", None),
    ("xn.transpose()", "transpose"),
    ("xn.transpose(0, 2, 1, 3)", "transpose"),
    ("xn.transpose((3, 1, 2, 0))", "transpose"),
    ("xn.sum(axis=1)", "sum"),
    ("xn.sum(2)", "sum"),
    ("xn.sum(axis=(1, 2), keepdims=True)", "sum"),
    ("vn.mean(axis=0)", "mean"),
    ("vn.mean(1)", "mean"),
    ("xn.max(axis=(-2, -1))", "max"),
    ("xn.max(3)", "max"),
    ("xn.min(axis=1)", "min"),
    ("vn.min()", "min"),
    ("vn.copy() * 2.0", "copy"),
    ("np.zeros(xn.shape, np.float32) + xn", None),
    ("np.float32(xn.ndim) + vn", None),
    ("vn.astype(xn.dtype) * (xn.shape[1] + vn.shape[0])", "astype"),
]


def _inputs():
    g = tf.random.Generator.from_seed(11)
    return g.normal([1, 4, 3, 2]), g.normal([4, 3])


def _function(text):
    ns: dict = {}
    exec(compile(text, "<methods>", "exec"), ns)
    return ns["f"]


@pytest.mark.parametrize("call,method", CALLS)
def test_the_method_rewrite_gives_numpys_result_eager_and_traced(call, method):
    text = SOURCE.replace("CALL", call)
    args = _inputs()
    new = rewrite(text, "f")
    assert ".numpy()" not in new, new
    if method is not None:
        body = new.split("def f(")[1]
        # a tensor has no such method: no value calls it any more
        assert all(f"{v}.{method}(" not in body for v in ("xn", "vn", ")")), new
    base = _function(text)(*args)
    for form, fn in (("eager", _function(new)), ("traced", tf.function(_function(new)))):
        mine = fn(*args)
        eq = compare_outputs(snapshot(base), snapshot(mine))
        assert eq.equivalent is True, f"{call} ({form}): {eq.reason}\n{new}"


def test_astype_of_pythons_float_is_numpys_float64_not_tfs_float32():
    new = rewrite(SOURCE.replace("CALL", "xn.astype(float)"), "f")
    assert "tf.cast(xn, tf.float64)" in new, new
    assert _function(new)(*_inputs()).dtype == tf.float64


@pytest.mark.parametrize("call", [
    "xn.sum(0, np.float64)",          # dtype by position: NumPy's own signature
    "xn.squeeze(*[0])",               # axes unpacked from a list
    "xn.transpose(axes=[0, 1, 3, 2])",  # NumPy's method takes no keyword: it raises there
    # one argument: a tuple of index arrays, not tf.where's [k, rank] tensor
    "len(np.where(vn > 0))",
])
def test_calls_outside_the_table_are_left_to_numpy(call):
    new = rewrite(SOURCE.replace("CALL", call + " + np.sum(vn)"), "f")
    assert call in new, new


def test_the_search_rejects_a_transpose_of_the_same_shape_in_the_wrong_order(user_module):
    # x [6, 6, 6]: NumPy's .transpose() reverses every axis; swapping the last two gives the
    # same shape and dtype and other values, which only the values check can tell apart
    from planted import Planted

    from tfperf.tune import tune

    mod = user_module("""
import numpy as np
import tensorflow as tf


def f(x):
    t = x.numpy().transpose()
    return tf.constant(t.squeeze().astype(float) * 2.0)
""")
    args = (tf.random.Generator.from_seed(2).normal([6, 6, 6]),)
    wrong = Planted("planted: matrix transpose for .transpose()", "x.numpy().transpose()",
                    "tf.linalg.matrix_transpose(x).numpy()")
    result = tune(mod.f, args, budget=20, levers=[NumpyRoundTrip(), wrong])
    bad = next(c for c in result.candidates if c.name == wrong.name)
    assert bad.rejected is not None and "disagrees" in bad.rejected, result.table()
    rt = next(c for c in result.candidates if c.name == NumpyRoundTrip.name)
    assert rt.rejected is None and rt.equivalent is True, result.table()
