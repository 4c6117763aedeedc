"""Stop 45 wave 2: a loop over an array's rows (``for x in arr``, ``for (a, b, c) in
pts[mask]``, ``for row in img: for px in row``) is the index loop ``for i in range(len(arr)):
x = arr[i]``, so the write and fold levers read it (round 16, development: a voxel count per
point, a count per row). Twins: rows of a name the loop rebinds, an iterable that is a call
(``zip``, ``d.items()``), rows of another length than the unpacking (the loop's own error)."""

from __future__ import annotations

import numpy as np
import pytest
from no_fallback import agrees, no_fallback

from tfperf.tune.levers import numpy_writes
from tfperf.tune.source import SourceEditError

HEAD = "import numpy as np\n\n\n"


def _load(text: str):
    ns: dict = {}
    exec(compile(text, "<rows>", "exec"), ns)
    return ns["f"]


CELLS = '''
def f(points, size):
    cells = (points / size).astype(int)
    inside = ((cells >= 0) & (cells < 8)).all(axis=1)
    grid = np.zeros((8, 8, 8), dtype=int)
    for (u, v, w) in cells[inside]:
        grid[u, v, w] += 1
    return grid
'''

SCALED = '''
def f(rows, k):
    out = np.empty(len(rows), dtype=rows.dtype)
    pos = 0
    for r in rows:
        out[pos] = r.sum() * k
        pos += 1
    return out
'''

PIXELS = '''
def f(img):
    total = np.zeros(256, dtype=np.int64)
    for line in img:
        for px in line:
            total[px] += 1
    return total
'''

FOLD = '''
def f(values, cut):
    big = 0
    for x in values:
        if x > cut:
            big += x
    return big
'''


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_count_per_unpacked_row_of_a_masked_array_is_one_scatter_add(dtype):
    pts = np.random.default_rng(0).normal(0.5, 0.3, (400, 3)).astype(dtype)
    new = agrees(CELLS, pts, dtype(1 / 8))
    assert "for (u, v, w)" in new  # the loop stays, as the fall-back
    agrees(CELLS, np.zeros((0, 3), dtype), dtype(1 / 8))  # no rows


def test_rows_of_another_length_run_the_loop_and_raise_as_it_does():
    new = numpy_writes.rewrite(HEAD + CELLS, "f")
    with pytest.raises(ValueError, match="too many values to unpack"):
        _load(new)(np.full((5, 4), 0.3), 1 / 8)


@pytest.mark.parametrize("dtype", [np.uint8, np.int32])
def test_rows_of_a_2d_image_then_its_pixels_are_a_two_axis_histogram(dtype):
    img = np.random.default_rng(1).integers(0, 256, (20, 30)).astype(dtype)
    agrees(PIXELS, img)


def test_a_fold_over_the_items_of_an_array_keeps_the_loop_order_and_kind():
    vals = np.random.default_rng(2).integers(-50, 50, 300)
    new = numpy_writes.rewrite(HEAD + FOLD, "f")
    want = _load(HEAD + FOLD)(vals, 10)
    got = _load(new)(vals, 10)
    assert got == want and type(got) is type(want)
    assert _load(no_fallback(new))(vals, 10) == want


def _why(text: str) -> str:
    found, why = numpy_writes.nests(HEAD + text, "f")
    assert not found
    return " ".join(why)


def test_twins_left_alone():
    # a counter carried across the iterations (`pos += 1`): not a per-row write
    assert "a statement other than a temporary's assignment" in _why(SCALED)
    rebinds = CELLS.replace("grid[u, v, w] += 1", "grid[u, v, w] += 1\n        cells = cells")
    assert "rebinds" in _why(rebinds)
    zipped = '''
def f(a, b):
    out = np.zeros(10)
    for x, y in zip(a, b):
        out[x] += y
    return out
'''
    assert "rows" in _why(zipped)
    items = zipped.replace("zip(a, b)", "a.items()")
    assert "rows" in _why(items)
    with pytest.raises(SourceEditError):
        numpy_writes.rewrite(HEAD + zipped, "f")


PAIRS = '''
def f(xs, ys, w):
    h = np.zeros((6, 5), dtype=DT)
    for i in range(len(xs)):
        h[xs[i], ys[i]] += w
    return h
'''


@pytest.mark.parametrize("dt, w", [("np.int64", 1), ("np.uint8", 7), ("np.float32", 1),
                                   ("np.int32", 2.5)])
def test_an_add_at_two_positions_is_one_entry_per_part_and_wraps_as_the_loop(dt, w):
    r = np.random.default_rng(3)
    xs, ys = r.integers(0, 6, 900), r.integers(0, 5, 900)
    text = PAIRS.replace("DT", dt)
    # np.int32 with 2.5: add.at casts each sum back as the loop's store does
    agrees(text, xs, ys, w)
    agrees(text, xs - 6, ys, w)  # negative positions count from the end, as the loop


def test_rows_of_the_written_array_or_of_another_name_for_it_are_not_batched_blindly():
    own = '''
def f(a):
    out = a.copy()
    for (p, q) in out[:3]:
        out[p, q] += 1
    return out
'''
    assert "the array it writes" in _why(own)
    other = '''
def f(a, view):
    out = a
    for (p, q) in view[:3]:
        out[p, q] += 1
    return out
'''
    new = numpy_writes.rewrite(HEAD + other, "f")
    a = np.array([[1, 0], [1, 0], [0, 0]])
    b = a.copy()
    want = _load(HEAD + other)(b, b)  # the rows change as the loop writes them
    c = a.copy()
    got = _load(new)(c, c)
    np.testing.assert_array_equal(got, want)
    with pytest.raises(AssertionError, match="fell back"):
        d = a.copy()
        _load(no_fallback(new))(d, d)


class _Held:
    def __init__(self, rows: list) -> None:
        self.rows = rows


def test_rows_of_an_attribute_that_is_a_list_of_tuples_run_the_loop():
    text = '''
def f(held, base):
    out = base.copy()
    for (k, v) in held.rows:
        out[k] += v
    return out
'''
    held = _Held([(0, 300), (2, 7)])
    base = np.array([1, 2, 3], dtype=np.int64)
    new = numpy_writes.rewrite(HEAD + text, "f")
    np.testing.assert_array_equal(_load(new)(held, base.copy()),
                                  _load(HEAD + text)(held, base.copy()))
    with pytest.raises(AssertionError, match="fell back"):  # a list of tuples: the loop runs
        _load(no_fallback(new))(held, base.copy())
    u8 = np.array([1, 2, 3], dtype=np.uint8)  # 1 + 300 raises in the loop (NumPy 2)
    with pytest.raises(OverflowError):
        _load(HEAD + text)(held, u8.copy())
    with pytest.raises(OverflowError):
        _load(new)(held, u8.copy())
