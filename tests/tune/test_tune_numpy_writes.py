"""Loops that write into a NumPy array (issue 26; held-out round 14's per-pixel gray image and
histogram): the write model says map or accumulation, the lever runs the body once on the
grid in NumPy, in place. Each rewrite is run against the loops on the same inputs: values,
dtype (uint8 stays uint8, a uint8 histogram wraps), shape and type (NumPy in, NumPy out).
Twins: loops whose iterations depend on each other are left alone, with the reason."""

from __future__ import annotations

import ast

import numpy as np
import pytest
from no_fallback import is_fallback, no_fallback

from tfperf.analysis.writes import NotAWrite, write_nest
from tfperf.tune.levers.numpy_writes import nests, rewrite
from tfperf.tune.source import SourceEditError

HEAD = "import numpy as np\n\n\n"

# A weighted channel sum per pixel written back into all three channels (a scalar into a
# row: the value broadcasts), read from the element it writes.
GRAY = HEAD + '''
def f(img):
    img = img.copy()
    rows, cols = img.shape[:2]
    for r in range(rows):
        for c in range(cols):
            b = img[r][c][0]
            g = img[r][c][1]
            img[r, c] = 0.2 * b + 0.7 * g + 0.1 * img[r, c, 2]
    return img
'''
# A histogram of uint8 values in a uint8 buffer (counts wrap at 256), indices repeat.
HIST = HEAD + '''
def f(img):
    counts = np.zeros(256, np.uint8)
    for i in range(img.shape[0]):
        for j in range(img.shape[1]):
            counts[img[i][j]] += 1
    return counts
'''
# Prefix reductions at the loop index: exclusive sums of uint8 counts (their sum is uint64),
# an inclusive running maximum of a 2-D array (no axis: over every axis of the prefix).
PREFIXES = HEAD + '''
def f(counts, rows):
    before = np.zeros(len(counts))
    top = np.zeros(len(rows), dtype=np.float32)
    for i in range(len(counts)):
        before[i] = counts[:i].sum()
    for k in range(len(rows)):
        top[k] = np.max(rows[:k + 1])
    return before, top
'''
# A maximum of no rows raises: an exclusive one is not a prefix (a slice at the index).
EMPTY_MAX = HEAD + '''
def f(x):
    out = np.zeros(len(x))
    for i in range(1, len(x)):
        out[i] = x[:i].max()
    return out
'''
# Windows and reductions of per-iteration values (over their own axes, not the grid's); a
# reduction of a loop-invariant array (the mean of all of x) stays whole.
WINDOWS = HEAD + '''
def f(x, w):
    k = len(w)
    out = np.zeros((len(x) - k + 1, x.shape[1]), dtype=x.dtype)
    for i in range(len(x) - k + 1):
        part = x[i:i + k]
        out[i] = np.sum(part * w[:, None], axis=0) - x.mean(axis=0)
    return out
'''
ROW_STATS = HEAD + '''
def f(x):
    out = np.zeros(len(x))
    for i, row in enumerate(x):
        out[i] = row.max() - np.mean(row)
    return out
'''
# Weighted and negative indices into a float buffer: np.add.at (Python's negative index).
SCORES = HEAD + '''
def f(labels, weights, bias):
    out = np.zeros(5)
    for i in range(len(labels)):
        out[labels[i] - 2] += weights[i] * bias
    return out
'''
# Indices in index arithmetic and a transposed write: the grid is broadcast aranges.
TRANSPOSED = HEAD + '''
def f(x, w):
    out = np.empty((x.shape[1], x.shape[0]), dtype=np.float32)
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            out[j, i] = x[i, j] * w[i // 2] - w[j % 3]
    return out
'''
# A Python int index promotes weakly (float32 * i is float32), an int64 index array not.
INDEX_IN_ARITHMETIC = HEAD + '''
def f(x):
    out = np.zeros_like(x)
    for i in range(len(x)):
        out[i] = x[i] * i
    return out
'''
# enumerate over rows, an element-wise ufunc, a lookup table indexed by the value.
LOOKUP = HEAD + '''
def f(x, table):
    out = np.zeros(len(x), dtype=np.int16)
    for i, v in enumerate(x):
        out[i] = table[np.clip(v, 0, 9)]
    return out
'''
# Twins: each iteration depends on another's write, or the body is not element-wise.
RECURRENCE = HEAD + '''
def f(x):
    out = np.zeros(len(x))
    out[0] = x[0]
    for i in range(1, len(x)):
        out[i] = out[i - 1] * 0.5 + x[i]
    return out
'''
GROWING = HEAD + '''
def f(x):
    out = np.zeros(len(x) // 2)
    for i in range(len(x) // 2):
        out[i] = np.sum(x[i:2 * i])
    return out
'''
CARRIED = HEAD + '''
def f(x):
    out = np.zeros(len(x))
    for i in range(len(x)):
        if i:
            prev = out[i]
        out[i] = x[i] + 1
    return out
'''
LAST_VALUE_READ = HEAD + '''
def f(x):
    out = np.zeros(len(x))
    for i in range(len(x)):
        v = x[i] * 2
        out[i] = v
    return out, v
'''
ITEM_READ_AFTER = HEAD + '''
def f(x):
    out = np.zeros(len(x))
    for i, v in enumerate(x):
        out[i] = v * 2
    return out, v
'''
WHILE_STEP_TWO = HEAD + '''
def f(x):
    out = np.zeros(len(x))
    i = 0
    while i < len(x):
        out[i] = x[i] * 2
        i += 2
    return out
'''
COLUMN_AFTER_SLICE = HEAD + '''
def f(x):
    out = np.zeros_like(x)
    for i in range(x.shape[1]):
        out[:, i] = x[:, i] * 2
    return out
'''
SAME_ELEMENT_TWICE = HEAD + '''
def f(x):
    out = np.zeros(3)
    for i in range(len(x)):
        out[0] = x[i]
    return out
'''


def _run(text: str, *args):
    ns: dict = {}
    exec(compile(text, "<writes>", "exec"), ns)
    return ns["f"](*(a.copy() if isinstance(a, np.ndarray) else a for a in args))


def _loops_left(new: str) -> list[ast.For | ast.While]:
    """The loops of ``f`` outside the rewrite's helpers (which loop over axes, not data) and
    outside the handler that runs the original loop when a guard says so."""
    fn = next(n for n in ast.parse(new).body if isinstance(n, ast.FunctionDef))
    skip = {id(m) for n in ast.walk(fn) if n is not fn and (
        (isinstance(n, ast.FunctionDef) and n.name.startswith("_tfperf"))
        or is_fallback(n)) for m in ast.walk(n)}
    return [n for n in ast.walk(fn) if isinstance(n, (ast.For, ast.While)) and id(n) not in skip]


def _agrees(text: str, *args) -> str:
    new = rewrite(text, "f")
    assert not _loops_left(new), new
    want, got = _run(text, *args), _run(no_fallback(new), *args)  # the batched rows' answer
    assert type(got) is type(want) and got.dtype == want.dtype and got.shape == want.shape, new
    np.testing.assert_array_equal(got, want)
    return new


def _grid(new: str) -> list[bool]:
    """Each grid axis as a slice (True) or an arange (False), from the rewrite's rows."""
    return [r.rstrip(")").endswith("True") for r in new.splitlines()
            if "= _tfperf_axis(" in r]


def test_a_per_pixel_scalar_fills_the_row_it_is_written_to_and_stays_uint8():
    img = np.random.default_rng(0).integers(0, 256, (13, 17, 3)).astype(np.uint8)
    new = _agrees(GRAY, img)
    assert _grid(new) == [True, True]  # indices lead every subscript: views, no gather


@pytest.mark.filterwarnings("ignore:overflow encountered")  # the loop's own uint8 wrap
def test_a_histogram_with_repeated_bins_accumulates_and_wraps_like_the_loop():
    img = np.random.default_rng(1).integers(0, 4, (40, 30)).astype(np.uint8)  # 300 per bin
    assert nests(HIST, "f")[0][0].kind == "accumulate"
    new = _agrees(HIST, img)
    assert "bincount" in new  # an int constant into an int buffer: counted


def test_prefix_reductions_are_rows_of_one_cumulative_op():
    r = np.random.default_rng(5)
    counts = r.integers(0, 256, 256).astype(np.uint8)
    rows = r.normal(size=(40, 3)).astype(np.float32)
    new = rewrite(PREFIXES, "f")
    assert not _loops_left(new), new
    want, got = _run(PREFIXES, counts, rows), _run(new, counts, rows)
    for a, b in zip(want, got, strict=True):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_windows_and_per_iteration_reductions_reduce_their_own_axes(dtype):
    r = np.random.default_rng(6)
    x = r.normal(size=(60, 3)).astype(dtype)
    new = _agrees_close(WINDOWS, x, r.normal(size=5).astype(dtype))
    assert "sliding_window_view" in new and "x.mean(axis=0)" in new
    _agrees_close(ROW_STATS, x)


def _agrees_close(text: str, *args) -> str:
    """As ``_agrees``, values to float rounding: a reduction of a strided batch may add in
    another order than one of each slice."""
    new = rewrite(text, "f")
    assert not _loops_left(new), new
    want, got = _run(text, *args), _run(no_fallback(new), *args)
    assert type(got) is type(want) and got.dtype == want.dtype and got.shape == want.shape, new
    np.testing.assert_allclose(got, want, rtol=1e-5 if want.dtype == np.float32 else 1e-12)
    return new


def test_weighted_and_negative_indices_into_a_float_buffer_add_every_repeat():
    r = np.random.default_rng(4)
    labels = r.integers(0, 7, 200)  # -2..4 once shifted: Python's negative indices
    _agrees(SCORES, labels, r.normal(size=200).astype(np.float32), 0.5)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32])
def test_index_arithmetic_in_subscripts_and_a_transposed_write_broadcast_over_the_grid(dtype):
    x = np.random.default_rng(2).normal(size=(5, 7)).astype(dtype)
    new = _agrees(TRANSPOSED, x, np.linspace(0.5, 2.0, 7).astype(dtype))
    assert _grid(new) == [False, False]  # broadcast aranges


def test_enumerate_and_a_lookup_keep_the_buffer_dtype():
    x = np.random.default_rng(3).integers(-3, 13, 50)
    _agrees(LOOKUP, x, np.arange(10, dtype=np.int64) * 7)


@pytest.mark.parametrize("text,why", [
    (RECURRENCE, "other than at the element it writes"),
    (GROWING, "inside a slice"),
    (CARRIED, "loop index 'i' in arithmetic"),  # stop 45: a branch is read; its test is not
    (CARRIED.replace("prev = out[i]", "print(x[i])"), "does more than bind temporaries"),
    (LAST_VALUE_READ, "read after the loop"),
    (ITEM_READ_AFTER, "read after the loop"),
    (WHILE_STEP_TWO, "stepped by 1"),
    (COLUMN_AFTER_SLICE, "after a slice"),
    (SAME_ELEMENT_TWICE, "each loop index once"),
    (INDEX_IN_ARITHMETIC, "in arithmetic"),
    (EMPTY_MAX, "inside a slice"),
])
def test_loops_the_model_cannot_batch_are_left_alone_with_the_reason(text, why):
    with pytest.raises(SourceEditError, match=why):
        rewrite(text, "f")


def test_the_model_answers_for_the_nest_not_the_spelling():
    fn = ast.parse(GRAY).body[1]
    assert isinstance(fn, ast.FunctionDef)
    loop = fn.body[2]
    assert isinstance(loop, ast.For)
    nest = write_nest(loop, [])
    assert (nest.kind, nest.slices, [a.index for a in nest.axes]) == ("map", True, ["r", "c"])
    with pytest.raises(NotAWrite):
        write_nest(loop, [ast.Expr(ast.Name("b", ast.Load()))])  # a temporary read after
