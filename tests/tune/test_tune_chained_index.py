"""Stop 46: ``a[p][q]`` is ``a[p, q]`` only where ``p`` picks one position per iteration. With
a loop-invariant mask or index array (``a[keep][i]``: row ``i`` of the kept rows) the merged
``a[keep, i]`` pairs ``keep``'s positions with ``i``: a wrong answer, silently, when the
shapes broadcast. The chain stays as written there (equal on the grid: the rows are picked
once, then gathered), and a comparison inside a chain is refused."""

from __future__ import annotations

import ast

import numpy as np
import pytest
from no_fallback import agrees

from tfperf.analysis.writes import NotAWrite, merge_chains
from tfperf.tune.levers import numpy_writes
from tfperf.tune.source import SourceEditError

KEPT_ROWS = '''
def f(a, keep):
    out = np.zeros((int(keep.sum()), a.shape[1]), dtype=a.dtype)
    for i in range(len(out)):
        out[i] = a[keep][i] + 1
    return out
'''

KEPT_CELLS = '''
def f(a, keep):
    out = np.zeros((int(keep.sum()), a.shape[1]), dtype=a.dtype)
    for i in range(len(out)):
        for j in range(a.shape[1]):
            out[i, j] = a[keep][i][j] * 2
    return out
'''

ORDERED = '''
def f(a, order):
    out = np.empty((len(order), a.shape[1]), dtype=a.dtype)
    for i in range(len(order)):
        for j in range(a.shape[1]):
            out[i, j] = a[order][i][j]
    return out
'''


def _rows(dtype):
    # 4 kept rows of 4 columns: a[keep, i] broadcasts and gives a wrong answer, no error
    return np.arange(20).reshape(5, 4).astype(dtype), np.array([True, False, True, True, True])


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.uint8])
def test_rows_of_a_masked_array_stay_a_chain_and_agree(dtype):
    new = agrees(KEPT_ROWS, *_rows(dtype))
    assert "a[keep][" in new, new
    new = agrees(KEPT_CELLS, *_rows(dtype))
    assert "a[keep][" in new and "a[keep, " not in new, new


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_rows_of_an_index_array_stay_a_chain_and_agree(dtype):
    a = np.arange(12).reshape(3, 4).astype(dtype)
    new = agrees(ORDERED, a, np.array([2, 0, 1]))
    assert "a[order][" in new, new


def test_valid_loop_indices_still_merge():
    # the twin: each inner part moves with the loop (an index, an index's expression, a
    # constant): one position per iteration, merged as before (the in-place write needs it)
    for line, want in [("out[i][j] = a[i][j]", "out[i, j] = a[i, j]"),
                       ("out[i][j] = a[i - 1][0]", "out[i, j] = a[i - 1, 0]"),
                       ("out[i][j] = a[-1][j]", "out[i, j] = a[-1, j]")]:
        got = ast.unparse(merge_chains(ast.parse(line).body[0], {"i", "j"}))
        assert got == want


def test_valid_a_loop_invariant_name_is_not_merged():
    got = ast.unparse(merge_chains(ast.parse("v = a[n][i]").body[0], {"i"}))
    assert got == "v = a[n][i]"


def test_a_comparison_inside_a_chain_is_refused():
    with pytest.raises(NotAWrite, match="mask"):
        merge_chains(ast.parse("v = a[x[i] > 0][j]").body[0], {"i", "j"})
    text = '''import numpy as np


def f(a, x):
    out = np.zeros(3)
    for i in range(3):
        out[i] = a[x[i] > 0][0]
    return out
'''
    with pytest.raises(SourceEditError):
        numpy_writes.rewrite(text, "f")
