"""Held-out round 7's trust defect (c06): a pick returned a list of tensors where the user's
function returns a list of NumPy arrays, and tune's check called it equivalent (bench's
snapshot makes every leaf NumPy). The contract now compares each leaf's kind, and a candidate
is given the user's kinds back where one conversion at the return does it."""

from __future__ import annotations

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

from planted import Planted  # noqa: E402  (tests/tune/planted.py)

from tfperf.tune import tune  # noqa: E402
from tfperf.tune.kinds import compare_kinds, kind_of, leaf_kinds  # noqa: E402
from tfperf.tune.returns import keep_return_types, return_conversion  # noqa: E402


@pytest.mark.parametrize(("base", "cand", "why"), [
    ([np.ones(2)], [tf.ones(2)], "output[0]: a tensor, the baseline returns a NumPy array"),
    ((np.ones(2), 1.5), (np.ones(2), tf.constant(1.5)),
     "output[1]: a tensor, the baseline returns a Python float"),
    ({"a": np.ones(2)}, {"a": tf.ones(2)}, "output['a']: a tensor"),
    (np.float32(1.0), 1.0, "output: a Python float, the baseline returns a NumPy float32"),
    (np.float32(1.0), np.array(1.0, np.float32), "output: a NumPy array, the baseline returns a"),
    (1.0, np.float64(1.0), "output: a NumPy float64, the baseline returns a Python float"),
    (tf.ones(2), np.ones(2), "output: a NumPy array, the baseline returns a tensor"),
    (3, 3.0, "output: a Python float, the baseline returns a Python int"),
])
def test_each_leaf_kind_is_part_of_the_contract(base, cand, why):
    got = compare_kinds(leaf_kinds(base), leaf_kinds(cand))
    assert got is not None and got.startswith(why), got
    assert compare_kinds(leaf_kinds(base), leaf_kinds(base)) is None


def test_kinds_of_scalars_arrays_and_tensors():
    assert kind_of(np.float32(1)) == "NumPy float32"
    assert kind_of(np.array(1.0)) == "NumPy array"  # a 0-d array is not a scalar
    assert kind_of(True) == "Python bool"
    assert kind_of(tf.constant(1.0)) == "tensor"
    assert kind_of(tf.Variable(1.0)) == "tensor"  # a trace returns its value as a tensor


SOURCE = """
import numpy as np
import tensorflow as tf


def f(x):
    return RESULT
"""


@pytest.mark.parametrize(("base", "result"), [
    ([np.ones(2), np.zeros(2)], "[x, x * 2.0]"),
    ((np.ones(2),), "(x,)"),
    ({"a": np.ones(2), "b": np.ones(3)}, "{'a': x, 'b': x}"),
    (np.ones(2), "x * 2.0"),
    (np.float32(1.0), "tf.reduce_sum(x)"),
    ([np.float32(1.0), np.float32(2.0)], "[tf.reduce_sum(x), tf.reduce_max(x)]"),
    (1.5, "tf.reduce_sum(x)"),
    ([1.5, 2.5], "[tf.reduce_sum(x), tf.reduce_max(x)]"),
])
def test_the_users_kinds_are_given_back_at_the_return(base, result):
    conversion = return_conversion([leaf_kinds(base), leaf_kinds(base)])
    assert conversion is not None
    text = keep_return_types(SOURCE.replace("RESULT", result), "f", conversion)
    namespace: dict = {}
    exec(compile(text, "<patched>", "exec"), namespace)
    got = namespace["f"](tf.constant([1.0, 2.0]))
    assert compare_kinds(leaf_kinds(base), leaf_kinds(got)) is None, (text, got)
    assert type(got) is type(base)


def test_leaves_of_several_kinds_or_calls_that_differ_get_no_conversion():
    mixed = leaf_kinds((np.ones(2), 1.5))
    assert return_conversion([mixed]) is None
    assert return_conversion([leaf_kinds(1.5), leaf_kinds(2)]) is None
    assert return_conversion([leaf_kinds(tf.ones(2))]) is None  # tensors need none


PER_ROW = """
import numpy as np
import tensorflow as tf


def rows(x):
    out = []
    for i in range(x.shape[0]):
        a = tf.exp(x[i]) * 2.0
        out.append(a.numpy())
    return out
"""
ROW_LOOP = ("    out = []\n    for i in range(x.shape[0]):\n        a = tf.exp(x[i]) * 2.0\n"
            "        out.append(a.numpy())\n    return out\n")


def test_a_pick_returning_tensors_for_the_users_arrays_returns_arrays(user_module):
    # c06's shape: the NumPy round trip removed, the list now holds tensors. Before the
    # fix it was picked and returned tensors (its check compared values only).
    mod = user_module(PER_ROW)
    batched = Planted("planted: batched", ROW_LOOP,
                      "    return tf.unstack(tf.exp(x) * 2.0)\n")
    x = tf.random.normal([96, 8], seed=1)
    result = tune(mod.rows, (x,), budget=6, levers=[batched])
    cand = next(c for c in result.candidates if c.name == "planted: batched")
    assert cand.equivalent is True, result.table()
    assert result.best_fn is not None, result.table()
    got = result.best_fn(x)
    assert type(got) is list and all(type(a) is np.ndarray for a in got), [type(a) for a in got]
    np.testing.assert_allclose(np.stack(got), np.stack(mod.rows(x)), rtol=1e-5)
    assert "map_structure(np.asarray, _rows_value(x))" in result.patch


MIXED = """
import numpy as np
import tensorflow as tf


def stats(x):
    top = -1e30
    for i in range(x.shape[0]):
        top = max(top, float(tf.reduce_max(x[i])))
    return x.numpy() * 2.0, top
"""
MIXED_LOOP = ("    top = -1e30\n    for i in range(x.shape[0]):\n"
              "        top = max(top, float(tf.reduce_max(x[i])))\n"
              "    return x.numpy() * 2.0, top\n")


def test_a_candidate_whose_leaves_change_kind_is_rejected_when_no_conversion_fits(user_module):
    mod = user_module(MIXED)
    tensors = Planted("planted: tensors", MIXED_LOOP,
                      "    return x * 2.0, float(tf.reduce_max(x))\n")
    x = tf.random.normal([64, 8], seed=2)
    result = tune(mod.stats, (x,), budget=6, levers=[tensors])
    cand = next(c for c in result.candidates if c.name == "planted: tensors")
    assert cand.equivalent is False
    assert cand.rejected == ("changes the function's contract: output[0]: a tensor, the "
                             "baseline returns a NumPy array"), cand.rejected
    assert result.best is None or result.best.name != "planted: tensors"


def test_the_same_tensors_kept_where_the_user_returns_tensors(user_module):
    # No conversion where none is needed: the planted batched form is picked as it is.
    mod = user_module(MIXED.replace("x.numpy() * 2.0, top", "x * 2.0, top"))
    same = Planted("planted: max", MIXED_LOOP.replace("x.numpy() * 2.0, top", "x * 2.0, top"),
                   "    return x * 2.0, float(tf.reduce_max(x))\n")
    x = tf.random.normal([64, 8], seed=2)
    result = tune(mod.stats, (x,), budget=6, levers=[same])
    cand = next(c for c in result.candidates if c.name == "planted: max")
    assert cand.equivalent is True, result.table()
