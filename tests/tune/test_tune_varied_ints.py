"""Integer arguments in the equivalence check's varied inputs (tune/varied.py): a rewrite that
bakes the measured ``k`` into a shape, a slice or a range is right only at that ``k`` (review
40: ``range(k)`` over ``x[i]`` batched as ``x``, right only where ``k`` is the row count), so
a second varied call moves each integer argument by one and such a rewrite disagrees there.
That set never replaces the tensor-varied one (review 41: ``k -> k - 1`` may empty the
output, where every rewrite agrees): it is compared only where the baseline's output there is
non-empty and finite, and where the user's function refuses the other value it is skipped,
with a note naming the value."""

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
    assert "integer arguments changed (#1: 8 -> 7)" in result.baseline["varied_inputs"]


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
    assert "integer arguments changed (width: 4 -> 3)" in result.baseline["varied_inputs"]


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
    assert "integer arguments not varied (#1: 4 -> 3: the function itself raised there" \
        in note, note
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


ROW_MAX = """
import tensorflow as tf


def row_max(x, n):
    return tf.reduce_max(x, axis=1, keepdims=True) * tf.ones([1, n - 1])
"""
ROW_MAX_BODY = "tf.reduce_max(x, axis=1, keepdims=True)"


def _row_max_planted():
    images = np.random.default_rng(2).uniform(0, 1, (4, 5)).astype(np.float32)
    images[:, 0] = 1.0  # every row's max is the batch max: only varied tensors tell
    wrong = Planted("planted: batch max", ROW_MAX_BODY,
                    "tf.fill([x.shape[0], 1], tf.reduce_max(x))")
    honest = Planted("planted: same", "    return", "    return")
    return tf.constant(images), [wrong, honest]


def test_an_int_whose_change_empties_the_output_keeps_the_tensor_check(user_module):
    """Review 41: with ``n = 2`` the changed ``n = 1`` gives an empty output where every
    rewrite agrees; one call with both changes lost the tensor variation that catches a
    batch max for each row's max. The tensor-varied set stands on its own; the empty integer
    set is skipped with a note naming the value."""
    mod = user_module(ROW_MAX)
    x, levers = _row_max_planted()
    result = tune(mod.row_max, (x, 2), budget=4, levers=levers)
    by = {c.name: c for c in result.candidates}
    assert by["planted: batch max"].equivalent is False
    assert by["planted: batch max"].rejected.startswith(
        "disagrees with the baseline on varied inputs"), by["planted: batch max"].rejected
    assert by["planted: same"].equivalent is True, by["planted: same"].rejected
    note = result.baseline["varied_inputs"]
    assert note.startswith("also checked on varied inputs"), note
    assert "integer arguments not varied (#1: 2 -> 1: the baseline's output there is empty" \
        in note, note


def test_an_int_whose_change_gives_nan_is_named_and_the_tensors_still_varied(user_module):
    """The changed int makes the user's output non-finite (``0 / (k - 2)`` at ``k = 2``): the
    integer set is skipped with the value named, the tensor set still judges."""
    mod = user_module("""
import tensorflow as tf


def row_max(x, n):
    return tf.reduce_max(x, axis=1, keepdims=True) / tf.cast(n - 2, tf.float32)
""")
    x, levers = _row_max_planted()
    result = tune(mod.row_max, (x, 3), budget=4, levers=levers)
    by = {c.name: c for c in result.candidates}
    assert by["planted: batch max"].equivalent is False, by["planted: batch max"]
    assert by["planted: same"].equivalent is True, by["planted: same"].rejected
    note = result.baseline["varied_inputs"]
    assert note.startswith("also checked on varied inputs"), note
    assert "integer arguments not varied (#1: 3 -> 2: the baseline returns non-finite" in note


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
    assert "integer arguments changed (#1: 8 -> 7)" in result.baseline["varied_inputs"]


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
    assert "integer arguments not varied (#1: 4 -> 3: the function itself raised" in note, note
    (cand,) = result.candidates
    assert cand.equivalent is True, cand.rejected


def test_isolated_an_emptied_int_set_keeps_the_tensor_check(user_module, frozen_budget):
    frozen_budget(search_s=ISOLATED_SEARCH_S, final_s=2.0)
    mod = user_module(ROW_MAX)
    x, levers = _row_max_planted()
    result = tune(mod.row_max, (x, 2), budget=20, levers=levers, isolate=True)
    by = {c.name: c for c in result.candidates}
    assert by["planted: batch max"].equivalent is False, by["planted: batch max"]
    assert by["planted: same"].equivalent is True, by["planted: same"].rejected
    assert "#1: 2 -> 1: the baseline's output there is empty" in result.baseline["varied_inputs"]


def test_a_function_returning_none_says_nothing_is_compared(user_module):
    """Review 41 (M2): a function that returns None has no output to compare; the note said
    its quick first call was 'over an eighth of the budget'. It now says what is checked."""
    mod = user_module("""
import tensorflow as tf


def side(x, n):
    tf.reduce_sum(x[:n])
    return None
""")
    honest = Planted("planted: same", "    return", "    return")
    result = tune(mod.side, (tf.ones([4, 3]), 2), budget=4, levers=[honest])
    note = result.baseline["varied_inputs"]
    assert note.startswith("nothing to compare: the function returns None"), note
    assert "eighth of the budget" not in note


@pytest.mark.parametrize("fields, why", [
    ({"ints_error": "a call did not finish within 2 s", "ints_timed_out": True},
     "cut by its limit there: a call did not finish within 2 s"),
    ({"ints_error": "ValueError: no"}, "the function itself raised there: ValueError: no"),
    ({"ints_output": np.zeros((4, 0), np.float32)}, "the baseline's output there is empty"),
    ({"ints_output": np.array([1.0, np.nan], np.float32)},
     "the baseline returns non-finite values there"),
])
def test_the_integer_set_skipped_says_which_value_and_why(fields, why):
    from types import SimpleNamespace

    from tfperf.tune.screen import Screen
    from tfperf.tune.search import Search

    search = SimpleNamespace(ints_varied=((), {}), ints_changed=["k: 2 -> 1"], ints_base=None,
                             varied_note="also checked on varied inputs (…)")
    s = Screen(outputs=[np.ones(3, np.float32)], varied_called=True, **fields)
    Search._settle_ints(search, s)  # type: ignore[arg-type]
    assert search.varied_note.endswith(f"; integer arguments not varied (k: 2 -> 1: {why}") \
        or f"(k: 2 -> 1: {why}" in search.varied_note, search.varied_note
    assert search.ints_varied is None and search.ints_base is None
    good = SimpleNamespace(ints_varied=((), {}), ints_changed=["k: 2 -> 1"], ints_base=None,
                           varied_note="")
    Search._settle_ints(good, Screen(outputs=[np.ones(3)], ints_output=np.ones(2)))
    assert good.ints_base is not None and "integer arguments changed (k: 2 -> 1)" in \
        good.varied_note
