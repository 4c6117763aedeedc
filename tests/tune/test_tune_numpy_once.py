"""A tensor argument's ``.numpy()`` taken once (tune/levers/numpy_once.py; held-out round
11's c13 copied its input twice per element in nested Python loops): the reads share one
copy, a buffer filled by item assignment gets its own, and what it returns is the same
(values, dtype, shape); twins where a copy per use matters (the argument passed on, a
variable assigned in the loop, a read that escapes as a view) are left alone."""

from __future__ import annotations

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

from tfperf.tune import tune  # noqa: E402
from tfperf.tune.levers.numpy_once import NumpyOnce, rewrite  # noqa: E402
from tfperf.tune.source import SourceEditError  # noqa: E402

CLIP_COLUMNS = '''
import numpy as np


def clip_columns(limit, t):
    """Each column scaled down to the limit where its sum passes it, else zeroed."""
    result = t.numpy()
    sums = np.abs(t.numpy()).sum(axis=0)
    for c in range(t.numpy().shape[1]):
        if sums[c] > limit:
            for r in range(t.shape[0]):
                result[r, c] = t.numpy()[r, c] * limit / sums[c]
        else:
            result[:, c] = 0.0
    return result
'''


def _load(text: str):
    ns: dict = {}
    exec(compile(text, "<once>", "exec"), ns)
    return ns


def test_the_copy_is_taken_once_and_the_buffer_gets_its_own():
    new = rewrite(CLIP_COLUMNS, "clip_columns")
    body = new.split("def _tfperf_numpy_once")[0]
    assert body.count(".numpy()") == 0 and body.count("_tfperf_numpy_once(t)") == 1, new
    assert "result = _tfperf_numpy_t().copy()" in new and "_tfperf_numpy_t()[r, c] *" in new
    assert '"""Each column' in new.split("_tfperf_numpy_t = _tfperf_numpy_once(t)")[0], new
    t = tf.constant(np.random.default_rng(3).normal(size=(12, 9)).astype(np.float32))
    want = _load(CLIP_COLUMNS)["clip_columns"](4.0, t)
    got = _load(new)["clip_columns"](4.0, t)
    assert type(got) is type(want) and got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("body", [
    # passed on: the callee may keep or change what it gets
    "    out = t.numpy()\n    for i in range(3):\n        out[i] = helper(t)[i]\n    return out\n",
    # a variable assigned in the loop: each .numpy() sees new values
    "    out = []\n    for i in range(3):\n        t.assign_add(tf.ones_like(t))\n"
    "        out.append(t.numpy()[i] * 1.0)\n    return out\n",
    # converted once only: nothing to save
    "    a = t.numpy()\n    for i in range(3):\n        a[i] = 0.0\n    return a\n",
    # converted in no loop
    "    return t.numpy()[0] + t.numpy()[1]\n",
])
def test_twins_where_each_copy_matters_are_left_alone(body):
    text = ("import tensorflow as tf\n\n\ndef helper(x):\n    return x.numpy()\n\n\n"
            "def f(t):\n" + body)
    with pytest.raises(SourceEditError, match="no tensor argument converted"):
        rewrite(text, "f")


def test_a_view_that_escapes_gets_its_own_copy():
    text = ("def f(t):\n    rows = []\n    for i in range(t.shape[0]):\n"
            "        row = t.numpy()[i]\n        row[0] = i\n        rows.append(row)\n"
            "        rows.append(t.numpy()[i] + 0.0)\n    return rows\n")
    new = rewrite(text, "f")
    assert "row = _tfperf_numpy_t().copy()[i]" in new, new  # bound to a name: its own copy
    t = tf.constant(np.arange(12.0).reshape(4, 3))
    for a, b in zip(_load(text)["f"](t), _load(new)["f"](t), strict=True):
        np.testing.assert_array_equal(a, b)


def test_tune_picks_the_single_copy_and_it_agrees(user_module, roomy_limits):
    mod = user_module(CLIP_COLUMNS)
    t = tf.constant(np.random.default_rng(4).normal(size=(24, 16)).astype(np.float32))
    result = tune(mod.clip_columns, (3.0, t), budget=8, levers=[NumpyOnce()])
    (cand,) = result.candidates
    assert cand.rejected is None and cand.equivalent is True, result.table()
    # two copies of the tensor per element against none: far past any load's noise
    assert cand.speedup is not None and cand.speedup > 2, result.table()


def _same_on(text: str, *make) -> None:
    """The user's function and the rewrite on fresh inputs from each ``make``: the same
    values, or the same exception type."""
    text = "import tensorflow as tf\n\n\n" + text
    new = rewrite(text, "f")
    for mk in make:
        outs = []
        for src in (text, new):
            try:
                outs.append(("ok", [np.asarray(v) for v in tf.nest.flatten(
                    _load(src)["f"](*mk()))]))
            except Exception as exc:  # the error type is compared
                outs.append(("raised", type(exc)))
        (ka, a), (kb, b) = outs
        assert ka == kb, (outs, new)
        if ka == "raised":
            assert a is b, (outs, new)
        else:
            for u, v in zip(a, b, strict=True):
                np.testing.assert_array_equal(u, v)


ONE_LOOP = "    s = 0.0\n    for i in range(2):\n        s += x.numpy()[i] * 1 + x.numpy()[i] * 0\n"


@pytest.mark.parametrize("tail", [
    "    return s, list(map(lambda x: x.numpy()[0] * 1, ys))\n",  # a lambda's own x
    "    def g(x):\n        return x.numpy()[0] + 0\n    return s, [g(y) for y in ys]\n",
])
def test_a_nested_scope_that_rebinds_the_name_is_left_alone(tail):
    """Review 41: the walk went into a lambda whose parameter is also called ``x`` and
    rewrote its ``x.numpy()`` to the outer copy (a wrong pick, [16, 16] for [3, 5])."""
    text = "def f(x, ys):\n" + ONE_LOOP + tail
    with pytest.raises(SourceEditError, match="no tensor argument converted"):
        rewrite(text, "f")
    twin = "def f(x, ys):\n" + ONE_LOOP + tail.replace("x", "y").replace("ys", "yz") \
        .replace("def g(y)", "def g(y)")
    twin = twin.replace("yz", "ys")
    _same_on(twin, lambda: (tf.constant([1.0, 2.0]), [tf.constant([5.0]), tf.constant([7.0])]))


def test_what_is_not_a_plain_eager_tensor_converts_at_each_use_as_written():
    """Review 41: a copy taken once is stale for a variable changed in the loop (through
    another name), shallow for a ragged tensor's object array, and a conversion hoisted past
    a guard raised where the user's function returns 0. Only a plain eager tensor is
    converted once, and only when first read; anything else converts where it did."""
    step = "        v.assign_add(tf.ones_like(v))\n"
    aliased = "def f(x, v):\n    s = 0.0\n    for i in range(3):\n" + step + \
        "        s += x.numpy()[0] * 1 + x.numpy()[1] * 1\n    return s\n"
    _same_on(aliased, lambda: (lambda w: (w, w))(tf.Variable([1.0, 2.0])),
             lambda: (tf.constant([1.0, 2.0]), tf.Variable([0.0, 0.0])))
    guarded = ("def f(x, use):\n    s = 0.0\n    if use:\n        for i in range(2):\n"
               "            s += x.numpy()[i] * 1 + x.numpy()[i] * 1\n    return s\n")
    _same_on(guarded, lambda: (None, False), lambda: (tf.constant([3.0, 4.0]), True),
             lambda: (None, True))
    ragged = ("def f(x):\n    r = x.numpy()\n    r[0][0] = 100\n    s = 0\n"
              "    for i in range(2):\n        s += x.numpy()[i][0] * 1\n    return s\n")
    _same_on(ragged, lambda: (tf.ragged.constant([[1, 2], [3]]),),
             lambda: (tf.constant([[1, 2], [3, 4]]),))
