"""Stop 45 wave 2: a window at every loop index, ``img[y:y + k, x:x + k]`` in a nest of two
loops (round 16's median filter, development), is element ``[y, x]`` of the 2-D sliding windows;
``np.median`` of it reduces its own axes. Twins: loops that run past the last whole window
(the loop's slice is cut short: the loop runs), windows of the array the loop writes, a window
that does not start at the index (refused)."""

from __future__ import annotations

import numpy as np
import pytest
from no_fallback import HEAD
from no_fallback import agrees as _agrees

from tfperf.tune.levers import numpy_writes

SMOOTH = '''
def f(img, k):
    out = img.copy()
    for r in range(img.shape[0] - STOP):
        for c in range(img.shape[1] - STOP):
            patch = img[r:r + k, c:c + k]
            out[r, c] = REDUCE(patch)
    return out
'''


@pytest.mark.parametrize("dtype", [np.uint8, np.float32, np.int64])
@pytest.mark.parametrize("reduce", ["np.median", "np.max", "np.mean"])
def test_a_window_at_each_pixel_is_one_sliding_view(dtype, reduce):
    img = np.random.default_rng(0).integers(0, 200, (14, 17)).astype(dtype)
    for k, stop in ((3, "k + 1"), (2, "k - 1"), (4, "k")):
        new = _agrees(SMOOTH.replace("STOP", stop).replace("REDUCE", reduce), img, k)
        assert "sliding_window_view" in new


def test_loops_past_the_last_whole_window_run_the_loop():
    img = np.random.default_rng(1).integers(0, 200, (9, 8)).astype(np.float64)
    _agrees(SMOOTH.replace("STOP", "1").replace("REDUCE", "np.median"), img, 3, batched=False)


def _why(text: str) -> str:
    found, why = numpy_writes.nests(HEAD + text, "f")
    assert not found
    return " ".join(why)


def test_twins_windows_of_the_written_array_or_not_at_the_index():
    own = SMOOTH.replace("STOP", "k").replace("REDUCE", "np.median").replace(
        "patch = img[r:r + k", "patch = out[r:r + k")
    assert "the array the loop writes" in _why(own)
    centred = SMOOTH.replace("STOP", "k").replace("REDUCE", "np.median").replace(
        "img[r:r + k, c:c + k]", "img[r - 1:r + k, c:c + k]")
    assert "a loop index inside a slice" in _why(centred)
