"""Stop 46 wave 2: group loops (``for uid in np.unique(uids)``) reducing ``x[uids == uid]``
→ ``np.unique(return_inverse)`` + ``np.bincount``, the loop then over the groups with the
precomputed values (its dict, list or array written as before). Ints, counts, dict keys
and types exactly; float sums within a sum's reordering; twins run the loop or are refused."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from no_fallback import load

from tfperf.tune.levers import numpy_groups
from tfperf.tune.source import SourceEditError

HEAD = "import numpy as np\n\n\n"


def close(got, want) -> None:
    assert type(got) is type(want), (type(got), type(want))
    if isinstance(want, dict):
        assert [type(a) for a in got] == [type(b) for b in want]
        np.testing.assert_array_equal(np.array(list(got)), np.array(list(want)))  # NaN keys
        for a, b in zip(got.values(), want.values(), strict=True):
            close(a, b)
    elif isinstance(want, (list, tuple)):
        assert len(got) == len(want)
        for a, b in zip(got, want, strict=True):
            close(a, b)
    elif isinstance(want, (np.ndarray, np.generic)) and want.dtype.kind == "f":
        assert got.dtype == want.dtype and np.shape(got) == np.shape(want)
        np.testing.assert_allclose(got, want, rtol=1e-6 if want.dtype == np.float32 else 1e-12)
    elif isinstance(want, np.ndarray):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    else:
        assert got == want, (got, want)


def batched(text: str, *args, grouped: bool = True) -> str:
    """The rewrite agrees with the loop; ``grouped``: the groups' values were precomputed
    (the user's loop, with its np.unique, did not run)."""
    new = numpy_groups.rewrite(HEAD + text, "f")
    close(load(new)(*copy.deepcopy(args)), load(HEAD + text)(*copy.deepcopy(args)))
    calls: list[int] = []
    real = np.unique

    def counting(*a, **k):
        calls.append(len(k))
        return real(*a, **k)
    np.unique = counting  # type: ignore[assignment]
    try:
        load(new)(*copy.deepcopy(args))
    finally:
        np.unique = real  # type: ignore[assignment]
    assert (calls == [1]) is grouped, calls  # one np.unique(.., return_inverse=True)
    return new


ACCURACY = '''
def f(uids, correct):
    acc = {}
    for uid in np.unique(uids):
        idx = np.where(uids == uid)
        acc[uid] = np.mean(correct[idx])
    return acc
'''


@pytest.mark.parametrize("dtype", [bool, np.int64, np.float64, np.float32])
def test_accuracy_per_user_in_a_dict(dtype):
    r = np.random.default_rng(1)
    uids = r.integers(0, 30, 500)
    batched(ACCURACY, uids, (r.random(500) < 0.7).astype(dtype))


@pytest.mark.parametrize("sel,red", [
    ("uids == uid", "np.sum(x[m])"), ("uid == uids", "x[m].sum()"),
    ("np.where(uids == uid)[0]", "x[m].mean() + len(m)"),
    ("np.flatnonzero(uids == uid)", "np.sum(x[m]) / len(x[m])"),
    ("uids == uid", "np.sum(m) * 2 + np.mean(x[m])")])
def test_selection_and_reduction_spellings(sel, red):
    code = f'''
def f(uids, x):
    out = []
    for uid in np.unique(uids):
        m = {sel}
        out.append((uid, {red}))
    return out
'''
    r = np.random.default_rng(2)
    batched(code, r.integers(-5, 5, 200), r.integers(0, 100, 200))
    batched(code, np.array(["b", "a", "b", "c"]), np.array([1.5, 2.0, 3.0, 4.0]))


def test_an_array_indexed_by_the_key():
    code = '''
def f(labels, w):
    total = np.zeros(labels.max() + 1)
    for c in np.unique(labels):
        total[c] = w[labels == c].sum() / np.count_nonzero(labels == c)
    return total
'''
    r = np.random.default_rng(3)
    batched(code, r.integers(0, 9, 100), r.standard_normal(100))


def test_keys_with_nan_run_the_loop():
    """Twin: NaN == NaN is never true (the loop's NaN group is empty), np.unique folds NaNs."""
    with np.errstate(all="ignore"), pytest.warns(RuntimeWarning):
        batched(ACCURACY, np.array([1.0, np.nan, 1.0, 2.0]), np.ones(4), grouped=False)


def test_a_2d_value_array_runs_the_loop():
    r = np.random.default_rng(4)
    batched(ACCURACY, r.integers(0, 3, 10), r.random((10, 2)), grouped=False)


def test_values_shorter_than_the_keys_raise_as_the_loop_does():
    new = numpy_groups.rewrite(HEAD + ACCURACY.replace("np.where(uids == uid)",
                                                       "uids == uid"), "f")
    with pytest.raises(IndexError):
        load(new)(np.array([0, 1, 1]), np.ones(2))


@pytest.mark.parametrize("body", [
    "        m = uids == uid\n        x[m] = 0\n        out.append(x[m].sum())",
    "        m = uids == uid\n        out.append(np.median(x[m]))\n        out.append(m)",
    "        m = uids == uid\n        out.append(g(x[m].sum()))",
])
def test_valid_bodies_the_group_model_refuses(body):
    """Twins: a write into the reduced array, the mask itself kept, an unknown call."""
    code = f"def f(uids, x, g=None):\n    out = []\n    for uid in np.unique(uids):\n{body}\n" \
           "    return out\n"
    with pytest.raises(SourceEditError):
        numpy_groups.rewrite(HEAD + code, "f")


def test_a_loop_not_over_unique_is_left_alone():
    code = "def f(x):\n    s = 0\n    for v in np.sort(x):\n        s += v\n    return s\n"
    with pytest.raises(SourceEditError, match=r"np\.unique"):
        numpy_groups.rewrite(HEAD + code, "f")


def test_an_unlifted_reduction_still_runs_per_group():
    """``np.max`` is no lifted reduction: it runs per group beside the lifted mean."""
    code = '''
def f(uids, x):
    out = {}
    for uid in np.unique(uids):
        out[uid] = (np.mean(x[uids == uid]), np.max(x[uids == uid]))
    return out
'''
    r = np.random.default_rng(5)
    batched(code, r.integers(0, 4, 50), r.standard_normal(50))
