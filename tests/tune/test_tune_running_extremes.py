"""Stop 46: a running min or max kept by a branch (``if v < best: best = v; i, j = x, y``;
rounds 13 and 16: Otsu's threshold, template matching's position) folded at once: the
extreme of the grid's values in the loop's order, the first position for a strict
comparison and the last for ``<=``/``>=``, NaN never taken, the carried names at that
position (Python ints stay Python ints), the names as they were if nothing beat ``best``."""

from __future__ import annotations

import numpy as np
import pytest
from no_fallback import agrees

from tfperf.tune.levers import numpy_writes
from tfperf.tune.source import SourceEditError

HEAD = "import numpy as np\n\n\n"

MATCH = '''
def f(img, tpl):
    H, W = img.shape
    h, w = tpl.shape
    best = 255 * H * W
    bi, bj = -1, -1
    for y in range(0, H - h):
        for x in range(0, W - w):
            s = np.sum((img[y:y + h, x:x + w] - tpl) ** 2)
            if s < best:
                best = s
                bi, bj = x, y
    return bi, bj, best
'''


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_template_matching_keeps_the_first_smallest_window(dtype):
    r = np.random.default_rng(1)
    img = (r.random((18, 21)) * 200).astype(dtype)
    tpl = img[6:10, 3:8].copy()
    img[11:15, 12:17] = tpl  # the same window twice: the strict < keeps the first
    new = agrees(MATCH, img, tpl)
    assert "sliding_window_view" in new, new
    ns: dict = {}
    exec(new, ns)
    got = ns["f"](img, tpl)  # the first copy: x = 3, y = 6, a sum of 0
    assert got[:2] == (3, 6) and type(got[0]) is int and got[2] == 0


ARGMAX = '''
def f(x, w):
    top = {init}
    at = -1
    for i in range(len(x)):
        if {test}:
            top = x[i] * w
            at = i
    return top, at
'''


@pytest.mark.parametrize("test", ["x[i] * w > top", "x[i] * w >= top", "top < x[i] * w",
                                  "top <= x[i] * w", "x[i] * w < top", "x[i] * w <= top"])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8])
def test_each_comparison_keeps_the_loops_position(test, dtype):
    x = np.array([3, 9, 1, 9, 1, 4], dtype=dtype)
    init = "0" if ">" in test.replace("top <", ">") else "1000"
    agrees(ARGMAX.replace("{init}", init).replace("{test}", test), x, 2)


def test_nothing_beats_the_start_and_the_names_stay_as_they_were():
    text = ARGMAX.replace("{init}", "100.0").replace("{test}", "x[i] * w > top")
    agrees(text, np.array([1.0, 2.0, 3.0]), 2.0)  # top stays the Python float 100.0
    agrees(text, np.zeros(0), 2.0)


def test_nan_is_never_taken_as_the_loop_never_takes_it():
    text = ARGMAX.replace("{init}", "-np.inf").replace("{test}", "x[i] * w > top")
    agrees(text, np.array([1.0, np.nan, 5.0, np.nan]), 1.0)
    agrees(text, np.array([np.nan, np.nan]), 1.0)
    start_nan = ARGMAX.replace("{init}", "np.nan").replace("{test}", "x[i] * w > top")
    agrees(start_nan, np.array([1.0, 2.0]), 1.0)  # nothing compares above NaN


UNDER_IF = '''
def f(score, valid):
    best = -1.0
    pos = None
    for i in range(len(score)):
        if valid[i]:
            if score[i] > best:
                best = score[i]
                pos = i
    return best, pos
'''


def test_a_running_max_under_a_condition_takes_only_the_taken_iterations():
    score = np.array([0.2, 0.9, 0.5, 0.7], np.float32)
    agrees(UNDER_IF, score, np.array([True, False, True, True]))
    agrees(UNDER_IF, score, np.zeros(4, bool))  # pos stays None


def test_a_carried_element_keeps_its_numpy_type():
    text = '''
def f(sig, th):
    best, t = 0.0, 0
    for k in range(len(sig)):
        if sig[k] > best:
            best, t = sig[k], th[k]
    return best, t
'''
    agrees(text, np.array([0.1, 0.8, 0.3]), np.array([10, 20, 30], np.uint8))


# VALID twins: what the fold must not read as a running extreme

def test_valid_an_else_branch_is_not_a_running_extreme():
    text = '''
def f(x):
    best, at = 0.0, -1
    for i in range(len(x)):
        if x[i] > best:
            best, at = x[i], i
        else:
            at = -2
    return best, at
'''
    with pytest.raises(SourceEditError):
        numpy_writes.rewrite(HEAD + text, "f")


def test_valid_a_value_that_reads_what_the_branch_sets_is_refused():
    text = '''
def f(x):
    best, at = 0.0, 0
    for i in range(len(x)):
        if x[i] > best:
            best = x[i]
            at = at + 1
    return best, at
'''
    with pytest.raises(SourceEditError):
        numpy_writes.rewrite(HEAD + text, "f")


def test_valid_best_read_elsewhere_in_the_loop_is_refused():
    text = '''
def f(x):
    best, at = 0.0, 0
    for i in range(len(x)):
        d = x[i] - best
        if d > best:
            best = d
            at = i
    return best, at
'''
    with pytest.raises(SourceEditError):
        numpy_writes.rewrite(HEAD + text, "f")


def test_valid_a_per_iteration_array_runs_the_loop():
    text = '''
def f(rows):
    best, at = None, -1
    for i in range(len(rows)):
        v = rows[i]
        if v.sum() > 3 and at < 0:
            at = i
    return at
'''
    with pytest.raises(SourceEditError):
        numpy_writes.rewrite(HEAD + text, "f")
    text = '''
def f(rows):
    best, at = -1.0, -1
    for i in range(len(rows)):
        if rows[i] > best:
            best = rows[i]
            at = i
    return best, at
'''
    # rows of a 2-D array: each comparison is an array, the loop raises; so does the rewrite
    with pytest.raises(ValueError):
        agrees(text, np.ones((3, 2)), batched=None)
    agrees(text, np.array([0.5, 2.0, 1.0]))
