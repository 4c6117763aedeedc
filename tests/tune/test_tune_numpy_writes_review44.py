"""Review 44 of the array-writes and scans levers: rewrites that changed results on ordinary
code, each now batched right, refused by the model, or (stop 45) answered by the original loop
where a run-time guard sees the hazard (it raised there before, in the user's applied code on a
later call). Twins: the same loops without the hazard still batch and agree."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from tfperf.tune.levers import numpy_scans, numpy_writes
from tfperf.tune.source import SourceEditError

HEAD = "import numpy as np\n\n\n"


def _load(text: str):
    ns: dict = {}
    exec(compile(text, "<review44>", "exec"), ns)
    return ns["f"]


def _both(text: str, rewrite, *args):
    new = rewrite(HEAD + text, "f")
    a, b = copy.deepcopy(args), copy.deepcopy(args)
    return _load(HEAD + text)(*a), _load(new), b


def _agrees(text: str, *args, rewrite=numpy_writes.rewrite) -> None:
    want, fn, b = _both(text, rewrite, *args)
    got = fn(*b)
    assert type(got) is type(want) and np.asarray(got).dtype == np.asarray(want).dtype
    np.testing.assert_array_equal(got, want)


def _raises(text: str, *args, rewrite=numpy_writes.rewrite) -> None:
    _, fn, b = _both(text, rewrite, *args)
    with pytest.raises((IndexError, ValueError, TypeError), match="tfperf"):
        fn(*b)


def _falls_back(text: str, *args) -> None:
    """The guard sees the hazard: the original loop runs (its answer, not the grid's, which
    differs on these inputs), and the batched rows are what runs on the twins."""
    assert f"except {numpy_writes.CAUGHT}:" in numpy_writes.rewrite(HEAD + text, "f")
    _agrees(text, *args)


BACKWARDS = '''
def f(x):
    out = np.zeros(len(x))
    for i in range(len(x) - 1, -1, -1):
        out[i] = x[i] * 2
    return out
'''


def test_a_backwards_range_writes_every_element():
    # range(n - 1, -1, -1) was slice(n - 1, -1, -1): empty, nothing written
    _agrees(BACKWARDS, np.arange(1.0, 7.0))
    _agrees(BACKWARDS.replace("len(x) - 1, -1, -1", "len(x) - 1, 0, -2"), np.arange(1.0, 8.0))


@pytest.mark.parametrize("loop", ["range(-3, 0)", "range(-len(x), len(x))"])
def test_negative_positions_are_not_batched(loop):
    # range(-3, 0) was slice(-3, 0) (empty); range(-n, n) writes each element twice
    _falls_back(BACKWARDS.replace("range(len(x) - 1, -1, -1)", loop)
            .replace("x[i] * 2", "out[i] + x[i]"), np.arange(1.0, 7.0))


ALIAS = '''
def f(x):
    y = x
    for i in range(1, len(x)):
        x[i] = y[i - 1] + 1.0
    return x
'''


def test_a_buffer_read_under_another_name_is_not_batched():
    _falls_back(ALIAS, np.arange(6.0))  # a recurrence through y: the batched grid disagreed
    _agrees(ALIAS.replace("y = x", "y = x.copy()"), np.arange(6.0))  # twin: a copy


def test_two_parameters_given_one_array_are_not_batched():
    text = '''
def f(out, x):
    for i in range(1, len(x)):
        out[i] = x[i - 1] + 1.0
    return out
'''
    a = np.arange(6.0)
    new = _load(numpy_writes.rewrite(HEAD + text, "f"))
    # the user's later call with one array for both: the loop's answer, no error
    np.testing.assert_array_equal(new(a.copy(), a.copy()), _load(HEAD + text)(a.copy(), a.copy()))
    b = a.copy()
    np.testing.assert_array_equal(new(b, b), _load(HEAD + text)(a, a))
    np.testing.assert_array_equal(new(np.zeros(6), a), _load(HEAD + text)(np.zeros(6), a))


def test_a_buffer_never_read_after_the_loop_is_refused():
    # written in place and returned to no one: tune compares returns, None == None
    text = BACKWARDS.replace("def f(x):\n    out = np.zeros(len(x))", "def f(out, x):") \
        .replace("    return out\n", "")
    with pytest.raises(SourceEditError, match="not read after the loop"):
        numpy_writes.rewrite(HEAD + text, "f")
    twin = text + "    return out.sum()\n"
    _agrees(twin, np.zeros(6), np.arange(6.0))


def test_a_prefix_of_the_buffer_is_a_recurrence():
    text = '''
def f(x):
    out = np.zeros(len(x))
    for i in range(len(x)):
        out[i] = out[:i].sum() + x[i]
    return out
'''
    with pytest.raises(SourceEditError, match="prefix of 'out'"):
        numpy_writes.rewrite(HEAD + text, "f")
    _agrees(text.replace("out[:i]", "x[:i]"), np.arange(1.0, 6.0))  # twin: another array
    # a window ahead of i reads rows not yet written: the grid reads the same
    _agrees(text.replace("out = np.zeros(len(x))", "out = x.copy()")
            .replace("range(len(x))", "range(len(x) - 2)")
            .replace("out[:i].sum() + x[i]", "np.sum(out[i:i + 2])"), np.arange(1.0, 6.0))


SUM_ROWS = '''
def f(x, acc):
    for row in x:
        acc += row
    return acc
'''


def test_an_in_place_running_sum_keeps_the_array_and_its_dtype():
    x = np.arange(15.0).reshape(5, 3) / 7
    # float32 acc += float64 rows rounds to float32 each step: not a float64 cumsum
    _raises(SUM_ROWS, x, np.zeros(3, np.float32), rewrite=numpy_scans.rewrite)
    acc = np.ones(3)
    new = _load(numpy_scans.rewrite(HEAD + SUM_ROWS, "f"))
    got = new(x, acc)
    assert got is acc  # the caller's array is the one updated, as the loop did
    np.testing.assert_array_equal(acc, _load(HEAD + SUM_ROWS)(x, np.ones(3)))
    # twin: acc = acc + row rebinds, promoting to float64 as the scan does
    _agrees(SUM_ROWS.replace("acc += row", "acc = acc + row"), x, np.zeros(3, np.float32),
            rewrite=numpy_scans.rewrite)


LIST_READ = '''
def f(img, offs):
    out = np.zeros(len(img), np.int32)
    for i in range(len(img)):
        out[i] = img[i] + offs[i]
    return out
'''


@pytest.mark.filterwarnings("ignore:overflow encountered")  # the loop's own uint8 wrap
def test_a_python_list_read_item_by_item_keeps_its_weak_promotion():
    # uint8 + a Python int wraps in uint8 (250 + 10 = 4); uint8 + the list as an array is
    # int64 (260): the batched grid answered 260 where the loop answered 4
    _falls_back(LIST_READ, np.array([250, 3], np.uint8), [10, 1])
    _falls_back(LIST_READ.replace("offs[i]", "v").replace("range(len(img))", "enumerate(offs)")
            .replace("for i in", "for i, v in"), np.array([250, 3], np.uint8), [10, 1])
    # twins: the same list beside int64/float64 arrays promotes alike, and an array of offsets
    _agrees(LIST_READ, np.array([250, 3], np.int64), [10, 1])
    _agrees(LIST_READ, np.array([250, 3], np.uint8), np.array([10, 1], np.uint8))


def test_while_tune_measures_a_fall_back_is_a_rejection(user_module):
    # stop 45: in applied code the guard runs the loop; while tune measures it raises, so the
    # candidate is rejected with its reason instead of timing the user's loop as a rewrite
    from tfperf.tune.strict_batches import VARIABLE, strict

    text = HEAD + '''
def f(out, x):
    for i in range(1, len(x)):
        out[i] = x[i - 1] + 1.0
    return out
'''
    a = np.arange(6.0)
    with strict():
        new = _load(numpy_writes.rewrite(text, "f"))  # a candidate of this search
        with pytest.raises(Exception, match="shares memory"):
            new(a, a)
    assert VARIABLE not in __import__("os").environ
    want = _load(text)(a.copy(), a.copy())
    np.testing.assert_array_equal(new(a.copy(), a.copy()), want)  # applied: the loop's
    with strict():  # a later search measuring the applied code (its baseline): the loop's
        b, c = np.array([5.0, 1, 7, 2]), np.array([5.0, 1, 7, 2])
        np.testing.assert_array_equal(new(b, b), _load(text)(c, c))  # [5, 6, 7, 8]
    pytest.importorskip("tensorflow")
    from tfperf.tune import tune

    mod = user_module(text)
    result = tune(mod.f, (a, a), budget=3, levers=[numpy_writes.NumpyWrites()])
    by = {c.name: c for c in result.candidates}
    assert "shares memory" in (by["array writes→NumPy on the grid"].rejected or ""), result.table()
