"""Functions that work by side effect (stop 44): a function that returns None, or hands back
an argument it was given, is judged by what it leaves in its arguments (NumPy arrays,
tf.Variables, lists), each candidate on its own copies of the user's inputs. Before, any
candidate that did not raise was accepted (``None == None``)."""

from __future__ import annotations

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

from planted import Planted  # noqa: E402  (tests/tune/planted.py)

from tfperf.tune import tune  # noqa: E402

FILL = """
def fill(out, x):
    for i in range(len(x)):
        out[i] = x[i] * 2.0
"""

LOOP = "    for i in range(len(x)):\n        out[i] = x[i] * 2.0\n"


def _by(result):
    return {c.name: c for c in result.candidates}


def test_a_wrong_write_into_out_is_rejected_and_a_right_one_kept(user_module):
    mod = user_module(FILL)
    out, x = np.zeros(6), np.arange(6, dtype=np.float64)
    right = Planted("planted: batched", LOOP, "    out[:] = x * 2.0\n")
    wrong = Planted("planted: wrong factor", LOOP, "    out[:] = x * 3.0\n")
    lost = Planted("planted: writes nothing", LOOP, "    pass\n")
    result = tune(mod.fill, (out, x), budget=3, levers=[right, wrong, lost])
    by = _by(result)
    assert by["planted: wrong factor"].equivalent is False
    assert "writes different values into argument 'out'" in by["planted: wrong factor"].rejected
    assert "argument 'out'" in by["planted: writes nothing"].rejected
    assert by["planted: batched"].equivalent is True  # kept (a time verdict may still reject)
    assert "writes different values into argument 'out'" in result.table()
    assert not out.any()  # each call wrote into its own copy, never into the user's array


STEP = """
import tensorflow as tf


def step(v, x):
    v.assign_add(tf.reduce_sum(x, axis=0))
"""


def test_a_variable_step_is_judged_by_the_variable_after_it(user_module):
    mod = user_module(STEP)
    v = tf.Variable(tf.zeros([3]))
    x = tf.constant(np.arange(12, dtype=np.float32).reshape(4, 3))
    wrong = Planted("planted: mean", "tf.reduce_sum(x, axis=0)", "tf.reduce_mean(x, axis=0)")
    right = Planted("planted: matmul", "tf.reduce_sum(x, axis=0)",
                    "tf.linalg.matvec(x, tf.ones([4]), transpose_a=True)")
    result = tune(mod.step, (v, x), budget=3, levers=[wrong, right])
    by = _by(result)
    assert "writes different values into argument 'v'" in by["planted: mean"].rejected
    assert by["planted: matmul"].equivalent is True
    assert not v.numpy().any()  # the user's Variable is left as it was


COLLECT = """
def collect(acc, x):
    for row in x:
        acc.append(float(row.sum()))
"""


def test_a_list_appended_to_is_compared_item_by_item(user_module):
    mod = user_module(COLLECT)
    acc: list[float] = []
    x = np.arange(12, dtype=np.float64).reshape(4, 3)
    body = "    for row in x:\n        acc.append(float(row.sum()))\n"
    once = Planted("planted: one total", body, "    acc.append(float(x.sum()))\n")
    right = Planted("planted: extend", body, "    acc.extend(x.sum(axis=1).tolist())\n")
    result = tune(mod.collect, (acc, x), budget=3, levers=[once, right])
    by = _by(result)
    assert "argument 'acc'" in by["planted: one total"].rejected
    assert by["planted: extend"].equivalent is True
    assert acc == []


NOOP = """
def check(x):
    y = x * 2.0
    assert y.shape == x.shape
"""


def test_nothing_returned_and_nothing_changed_says_so(user_module):
    mod = user_module(NOOP)
    x = np.ones(4)
    quiet = Planted("planted: same", "    y = x * 2.0\n", "    y = x + x\n")
    writes = Planted("planted: writes x", "    y = x * 2.0\n", "    x[0] = 5.0\n    y = x\n")
    result = tune(mod.check, (x,), budget=3, levers=[quiet, writes])
    by = _by(result)
    assert by["planted: same"].equivalent is True
    assert any("nothing to compare: the function returns None and changes no argument" in n
               for n in by["planted: same"].notes)
    assert "changes an argument the baseline leaves as it was" in by["planted: writes x"].rejected


SCALE = """
def scale(out, x):
    out[:] = x * 2.0
    return float(x.sum())
"""


def test_twin_a_function_that_returns_a_value_is_judged_by_its_returns(user_module):
    """Returns a value of its own: judged as before, by the returns only (its writes are not
    compared; a wrong return is still rejected)."""
    mod = user_module(SCALE)
    out, x = np.zeros(4), np.arange(4, dtype=np.float64)
    wrong = Planted("planted: wrong total", "return float(x.sum())", "return float(x.max())")
    result = tune(mod.scale, (out, x), budget=3, levers=[wrong])
    by = _by(result)
    assert by["planted: wrong total"].rejected.startswith("disagrees with the baseline")
    assert "argument" not in by["planted: wrong total"].rejected
    assert not out.any()  # it writes into ``out``: each call had its own copy


def test_effects_parts_copies_labels_and_verdicts():
    """The pieces, without a search: copies that share nothing, objects named as not looked
    into, a dtype change and a length change rejected, a tolerance-sized difference kept."""
    from tfperf.tune import effects

    def f(out, pair, acc, model=None):
        return None

    out, pair, acc = np.zeros(3), (np.ones(2), 1.0), [1.0]
    args, kwargs = effects.own_copies((out, pair, acc), {"model": object()})
    assert args[0] is not out and args[1][0] is not pair[0] and args[2] is not acc
    names = effects.labels(f, args, kwargs)
    assert names == ["out", "pair", "acc"]
    assert effects.unseen(args, kwargs, names) == ["model"]
    before = effects.state(args, kwargs, names)
    assert set(before) == {"out", "pair", "acc"}
    args[0][:] = 2.0
    args[2].append(2.0)
    after = effects.state(args, kwargs, names)
    assert effects.changed(before, after) == ["out", "acc"]
    assert effects.compare(before, after, before, after).equivalent is True
    near = {**after, "out": after["out"] + 1e-12}
    assert effects.compare(before, after, before, near).equivalent is True
    f32 = {**after, "out": after["out"].astype(np.float32)}
    assert effects.compare(before, after, before, f32).equivalent is False
    short = {**after, "acc": [1.0]}
    verdict = effects.compare(before, after, before, short)
    assert verdict.equivalent is False and "'acc'" in verdict.reason
    other_start = {**before, "out": np.ones(3)}
    assert effects.compare(before, after, other_start, after).equivalent is None
