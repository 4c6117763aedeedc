"""Stop 45 wave 2: a per-element ``int(...)``/``float(...)`` in a loop body (round 16's local
binary code, development) is one exact cast of the batch, where the Python scalars meet only
constants, other such scalars and the store. Twins: a cast that meets an array (a Python int
is weak, its int64 batch is not), a cast in an accumulation; run-time fall-backs: a NaN, a
value past int64, a store whose dtype would wrap."""

from __future__ import annotations

import numpy as np
import pytest
from no_fallback import HEAD, no_fallback
from no_fallback import agrees as _agrees
from no_fallback import load as _load

from tfperf.tune.levers import numpy_writes
from tfperf.tune.source import SourceEditError

CODES = '''
def f(img):
    code = np.zeros(img.shape, dtype=DT)
    for r in range(1, img.shape[0] - 1):
        for c in range(1, img.shape[1] - 1):
            mid = img[r, c]
            up = int(img[r - 1, c] > mid)
            left = int(img[r, c - 1] >= mid)
            down = int(img[r + 1, c] < mid)
            code[r, c] = up * 4 + left * 2 - down + 1
    return code
'''

TRUNC = '''
def f(x, scale):
    out = np.zeros(len(x))
    for i in range(len(x)):
        out[i] = int(x[i] * scale) - 0.5 * float(x[i])
    return out
'''


@pytest.mark.parametrize("dt", ["np.float64", "np.int64", "np.uint8", "np.int16"])
@pytest.mark.parametrize("img_dtype", [np.uint8, np.float32])
def test_comparisons_cast_to_int_and_weighted_are_one_batch(dt, img_dtype):
    img = np.random.default_rng(0).integers(0, 256, (12, 15)).astype(img_dtype)
    # the check bounds |value| only: an unsigned store of a signed expression runs the loop
    _agrees(CODES.replace("DT", dt), img, batched=dt != "np.uint8")


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32])
def test_int_truncates_toward_zero_and_float_widens_as_the_loop(dtype):
    x = np.random.default_rng(1).normal(0, 40, 200).astype(dtype)
    _agrees(TRUNC, x, 3)


def test_a_nan_or_a_value_past_int64_runs_the_loop():
    new = numpy_writes.rewrite(HEAD + TRUNC, "f")
    with pytest.raises(ValueError):  # the loop's own int(nan)
        _load(new)(np.array([1.0, np.nan]), 1)
    _agrees(TRUNC, np.array([1.0, 3e18]), 4.0, batched=False)  # Python ints grow past 2**63


def test_a_store_that_would_wrap_runs_the_loop():
    text = CODES.replace("DT", "np.uint8").replace("- down + 1", "- down * 300")
    new = numpy_writes.rewrite(HEAD + text, "f")
    img = np.random.default_rng(2).integers(0, 256, (8, 8)).astype(np.uint8)
    with pytest.raises(AssertionError, match="fell back"):
        _load(no_fallback(new))(img)
    try:
        want = _load(HEAD + text)(img.copy())
    except OverflowError:  # NumPy 2 refuses a Python int outside uint8
        with pytest.raises(OverflowError):
            _load(new)(img.copy())
    else:
        np.testing.assert_array_equal(_load(new)(img.copy()), want)


def _why(text: str) -> str:
    found, why = numpy_writes.nests(HEAD + text, "f")
    assert not found
    return " ".join(why)


def test_twins_a_cast_that_meets_an_array_or_accumulates_is_left_alone():
    meets = '''
def f(x, y):
    out = np.zeros(len(x), dtype=np.uint8)
    for i in range(len(x)):
        out[i] = int(x[i] > 3) + y[i]
    return out
'''
    assert "meets an array" in _why(meets)
    bound = meets.replace("out[i] = int(x[i] > 3) + y[i]",
                          "k = int(x[i])\n        out[i] = k + y[i]")
    assert "meets an array" in _why(bound)
    acc = '''
def f(x):
    h = np.zeros(10)
    for i in range(len(x)):
        h[x[i] % 10] += int(x[i] > 2)
    return h
'''
    assert "accumulation" in _why(acc)
    with pytest.raises(SourceEditError):
        numpy_writes.rewrite(HEAD + meets, "f")


STENCIL = '''
def f(x):
    out = np.zeros(x.shape[:2], dtype=x.dtype)
    for r in range(LO, x.shape[0] - 1):
        for c in range(1, x.shape[1] - 1):
            out[r, c] = x[r - 1, c + 1, 0] + x[r + 1, c, 1] * 2 - x[r, c - 1, 2]
    return out
'''


@pytest.mark.parametrize("dtype", [np.float32, np.int16, np.uint8])
def test_neighbour_reads_on_a_two_loop_grid_are_shifted_slices(dtype):
    x = np.random.default_rng(4).integers(0, 90, (9, 11, 3)).astype(dtype)
    new = _agrees(STENCIL.replace("LO", "1"), x)
    assert "_tfperf_shifts(" in new  # views, not the arange grid's gathers
    # r - 1 at r = 0 reads the last row in the loop: the shifted slice would not, so it runs
    _agrees(STENCIL.replace("LO", "0"), x, batched=False)
