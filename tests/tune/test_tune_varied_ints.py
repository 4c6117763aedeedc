"""Integer arguments in the equivalence check's varied inputs (tune/varied.py): a rewrite that
bakes the measured ``k`` into a shape, a slice or a range is right only at that ``k`` (review
40: ``range(k)`` over ``x[i]`` batched as ``x``, right only where ``k`` is the row count), so
the varied call moves each integer argument by one and such a rewrite disagrees there. Where
the user's function itself refuses the other value, the integers are kept, with a note."""

from __future__ import annotations

import numpy as np
import pytest

from tfperf.tune.varied import other_int, vary_inputs

tf = pytest.importorskip("tensorflow")

from planted import Planted  # noqa: E402  (tests/tune/planted.py)

from tfperf.tune import tune  # noqa: E402

FIRST_K = """
import tensorflow as tf


def first_sums(x, k):
    out = []
    for i in range(k):
        out.append(tf.reduce_sum(x[i]))
    return tf.stack(out)
"""

LOOP = ("    out = []\n    for i in range(k):\n        out.append(tf.reduce_sum(x[i]))\n"
        "    return tf.stack(out)\n")


def test_a_rewrite_right_only_at_the_given_int_is_rejected(user_module):
    mod = user_module(FIRST_K)
    x = tf.random.Generator.from_seed(5).normal([8, 3])
    wrong = Planted("planted: every row", LOOP, "    return tf.reduce_sum(x, axis=1)\n")
    honest = Planted("planted: first k rows", LOOP,
                     "    return tf.reduce_sum(x[:k], axis=1)\n")
    result = tune(mod.first_sums, (x, 8), budget=4, levers=[wrong, honest])
    by = {c.name: c for c in result.candidates}
    # VALID on the user's inputs (k == rows): only the varied k tells them apart
    assert by["planted: every row"].equivalent is False
    assert by["planted: every row"].rejected.startswith(
        "disagrees with the baseline on varied inputs"), by["planted: every row"].rejected
    assert by["planted: first k rows"].equivalent is True, by["planted: first k rows"].rejected
    assert "integer arguments #1: 8 -> 7" in result.baseline["varied_inputs"]


def test_a_keyword_int_baked_into_a_reshape_is_rejected(user_module):
    mod = user_module("""
import tensorflow as tf


def rows(x, *, width=4):
    return tf.reshape(x, [-1, width])
""")
    wrong = Planted("planted: baked width", "[-1, width]", "[-1, 4]")
    honest = Planted("planted: same", "    return", "    return")
    x = tf.range(24.0)
    result = tune(mod.rows, (x,), {"width": 4}, budget=4, levers=[wrong, honest])
    by = {c.name: c for c in result.candidates}
    # the varied width 3 still divides 24: 8 rows of 3, where the baked 4 gives 6 of 4
    assert by["planted: baked width"].equivalent is False, by["planted: baked width"]
    assert by["planted: same"].equivalent is True
    assert "width: 4 -> 3" in result.baseline["varied_inputs"]


def test_ints_are_kept_with_a_note_where_the_function_refuses_the_other_value(user_module):
    # k must equal the row count here (a reshape by it): k - 1 raises in the user's own
    # function, so the ints are kept and the tensors are still varied.
    mod = user_module("""
import tensorflow as tf


def per_row(x, k):
    return tf.reduce_max(tf.reshape(x, [k, -1]), axis=1)
""")
    honest = Planted("planted: same", "    return", "    return")
    wrong = Planted("planted: batch max", "tf.reduce_max(tf.reshape(x, [k, -1]), axis=1)",
                    "tf.fill([k], tf.reduce_max(x))")
    images = np.random.default_rng(2).uniform(0, 1, (4, 5)).astype(np.float32)
    images[:, 0] = 1.0  # every row's max is the batch max: only varied tensors tell
    result = tune(mod.per_row, (tf.constant(images), 4), budget=4, levers=[honest, wrong])
    note = result.baseline["varied_inputs"]
    assert note.startswith("also checked on varied inputs"), note
    assert "integer arguments kept (#1: 4 -> 3 raised in the function itself" in note, note
    by = {c.name: c for c in result.candidates}
    assert by["planted: same"].equivalent is True
    assert by["planted: batch max"].rejected.startswith(
        "disagrees with the baseline on varied inputs"), by["planted: batch max"].rejected


@pytest.mark.parametrize("value, expected", [
    (8, 7), (2, 1), (1, 2), (-3, -2), (-1, -2), (0, None), (True, None), (False, None),
    (np.int64(5), np.int64(4)), (2.0, None), ("3", None)])
def test_other_int_keeps_type_and_sign(value, expected):
    got = other_int(value)
    assert got == expected if expected is not None else got is None
    if expected is not None:
        assert type(got) is type(value)


def test_an_int_subclass_is_kept_and_never_raises():
    """An ``IntEnum`` (or any int subclass) cannot be rebuilt from another value
    (``Mode(2)`` raises for a missing member): review 41's raw traceback. Only exact ``int``
    and NumPy integers are varied; a subclass is kept as it is."""
    import enum

    class Mode(enum.IntEnum):
        FAST = 3

    assert other_int(Mode.FAST) is None
    args, kwargs, changed = vary_inputs((Mode.FAST,), {"mode": Mode.FAST, "n": 3})
    assert args == (Mode.FAST,) and kwargs == {"mode": Mode.FAST, "n": 2}
    assert changed == ["n: 3 -> 2"]


def test_a_scalar_int_tensor_is_varied_and_arrays_as_before():
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    args, kwargs, changed = vary_inputs((x, tf.constant(5, tf.int32)), {"n": 3, "flag": True})
    assert int(args[1].numpy()) == 4 and args[1].dtype == tf.int32
    assert kwargs == {"n": 2, "flag": True}
    assert changed == ["#1: 5 -> 4", "n: 3 -> 2"]
    assert args[0].shape == x.shape and not np.array_equal(args[0], x)  # the array varied
    args, kwargs, changed = vary_inputs((x, 5), {"n": 3}, ints=False)
    assert args[1] == 5 and kwargs == {"n": 3} and changed == []


ISOLATED_SEARCH_S = 600.0  # as test_tune_isolate.py: every child starts on a loaded machine


def test_isolated_children_vary_the_ints_too(user_module, frozen_budget):
    frozen_budget(search_s=ISOLATED_SEARCH_S, final_s=2.0)
    mod = user_module(FIRST_K)
    x = tf.random.Generator.from_seed(5).normal([8, 3])
    wrong = Planted("planted: every row", LOOP, "    return tf.reduce_sum(x, axis=1)\n")
    result = tune(mod.first_sums, (x, 8), budget=20, levers=[wrong], isolate=True)
    (cand,) = result.candidates
    assert cand.equivalent is False
    assert cand.rejected.startswith("disagrees with the baseline on varied inputs"), cand
    assert "integer arguments #1: 8 -> 7" in result.baseline["varied_inputs"]


def test_isolated_ints_are_kept_where_the_function_refuses_them(user_module, frozen_budget):
    frozen_budget(search_s=ISOLATED_SEARCH_S, final_s=2.0)
    mod = user_module("""
import tensorflow as tf


def per_row(x, k):
    return tf.reduce_max(tf.reshape(x, [k, -1]), axis=1)
""")
    honest = Planted("planted: same", "    return", "    return")
    x = tf.constant(np.random.default_rng(2).uniform(0, 1, (4, 5)).astype(np.float32))
    result = tune(mod.per_row, (x, 4), budget=20, levers=[honest], isolate=True)
    note = result.baseline["varied_inputs"]
    assert note.startswith("also checked on varied inputs"), note
    assert "integer arguments kept (#1: 4 -> 3 raised" in note, note
    (cand,) = result.candidates
    assert cand.equivalent is True, cand.rejected
