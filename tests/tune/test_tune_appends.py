"""Stop 46: values appended to a list in an index or rows loop (``out.append(v)``, under
``if``s or not; round 16's c10 majority vote, round 15's c07 misclassified samples) folded at
once: the grid's values in the loop's order, extended after every guard has passed (Python
ints stay ints, rows stay arrays). With them: ``np.bincount`` of one row per element (the
same length in every row, else the loop runs) and ``np.argmax``/``np.argmin`` of a
per-iteration value. And a defect of stop 45's folds: a name was rebound before a later
fold's guard raised, so the fall-back loop folded into it a second time."""

from __future__ import annotations

import numpy as np
import pytest
from no_fallback import HEAD, agrees

from tfperf.tune.levers import numpy_writes
from tfperf.tune.source import SourceEditError

VOTE = '''
def f(preds):
    final = []
    arr = np.array(preds).T
    for row in arr:
        counts = np.bincount(row, minlength=2)
        winner = np.argmax(counts)
        final.append(winner)
    return final
'''


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint8, bool])
def test_a_majority_vote_per_row_is_one_count_and_one_argmax(dtype):
    r = np.random.default_rng(1)
    preds = [r.integers(0, 2, 60).astype(dtype) for _ in range(7)]
    new = agrees(VOTE, preds)
    assert "_tfperf_bincount(" in new and "'argmax'" in new, new


def test_rows_whose_counts_differ_in_length_run_the_loop():
    # a row with a 3: its counts are 4 long, the others' 2: no one array holds them
    preds = [np.array([0, 1, 1]), np.array([1, 1, 3]), np.array([0, 0, 1])]
    agrees(VOTE, preds, batched=False)
    negative = [np.array([0, -1]), np.array([1, 1])]
    with pytest.raises(ValueError):  # the loop's own error, from the loop
        agrees(VOTE, negative, batched=None)


WRONG = '''
def f(x, y, p):
    bad_x, bad_y, bad_p = [], [], []
    for i in range(len(x)):
        t = y[i]
        q = np.argmax(p[i])
        if q != t:
            bad_x.append(x[i])
            bad_y.append(t)
            bad_p.append(q)
    return bad_x, bad_y, bad_p
'''


@pytest.mark.parametrize("dtype", [np.uint8, np.int64])
def test_filtered_appends_keep_the_loops_items_in_order(dtype):
    r = np.random.default_rng(2)
    x = r.integers(0, 255, (40, 4, 4)).astype(np.uint8)
    y = r.integers(0, 3, 40).astype(dtype)
    p = r.random((40, 3)).astype(np.float32)
    agrees(WRONG, x, y, p)  # rows as arrays, labels as NumPy scalars of their dtype
    agrees(WRONG, x, np.argmax(p, axis=1).astype(dtype), p)  # nothing appended


def test_appended_positions_stay_python_ints():
    text = '''
def f(x, start):
    out = list(start)
    for i in range(2, len(x)):
        if x[i] > 0.5:
            out.append(i * 2)
    return out
'''
    agrees(text, np.array([0.9, 0.1, 0.7, 0.2, 0.8]), [7])


def test_argmin_of_a_per_iteration_matrix_is_its_flat_position():
    text = '''
def f(m):
    out = np.zeros(len(m), dtype=np.int64)
    for i in range(len(m)):
        out[i] = np.argmin(m[i])
    return out
'''
    agrees(text, np.random.default_rng(3).random((6, 3, 4)))


# VALID twins

def test_valid_two_appends_to_one_list_are_refused():
    text = '''
def f(x):
    out = []
    for i in range(len(x)):
        out.append(x[i])
        out.append(-x[i])
    return out
'''
    with pytest.raises(SourceEditError):
        numpy_writes.rewrite(HEAD + text, "f")


def test_valid_a_list_read_in_its_loop_is_refused():
    text = '''
def f(x):
    out = []
    for i in range(len(x)):
        v = x[i] + len(out)
        out.append(v)
    return out
'''
    with pytest.raises(SourceEditError):
        numpy_writes.rewrite(HEAD + text, "f")


def test_valid_an_append_to_something_else_runs_the_loop():
    text = '''
def f(x, out):
    for i in range(len(x)):
        out.append(x[i])
    return out
'''
    import collections

    got = agrees(text, np.arange(3.0), collections.deque(), batched=False)
    assert "_tfperf_appended(" in got


def test_a_fold_whose_guard_raises_leaves_the_names_for_the_loop():
    # stop 45 wrote `total = fold(...)` before the second fold's guard raised (a row per
    # iteration): the fall-back loop then added x into total again (12.0 for 6.0)
    text = '''
def f(x, rows):
    total = 0.0
    acc = 0.0
    for i in range(len(x)):
        total += x[i]
        acc += rows[i]
    return total, acc
'''
    agrees(text, np.arange(4.0), np.ones((4, 2)), batched=False)
    agrees(text, np.arange(4.0), np.ones(4))


def test_tensors_appended_or_kept_run_the_loop_and_stay_tensors():
    # the grid of a tensor read through slices is a tensor; np.asarray of it would hand back
    # NumPy values where the loop appended (or kept) tensors: the loop runs instead
    tf = pytest.importorskip("tensorflow")
    text = '''
def f(x):
    out = []
    best, at = -1.0, -1
    for i in range(len(x)):
        out.append(x[i] * 2.0)
    for i in range(len(x)):
        if x[i] > best:
            best = x[i]
            at = i
    return out, best, at
'''
    x = tf.constant([1.0, 3.0, 2.0])
    new = numpy_writes.rewrite(HEAD + text, "f")
    ns: dict = {}
    exec(new, ns)
    out, best, at = ns["f"](x)
    assert all(isinstance(v, tf.Tensor) for v in [*out, best]) and at == 1
    np.testing.assert_array_equal([float(v) for v in out], [2.0, 6.0, 4.0])


def test_appended_rows_can_be_written_as_the_loops_can():
    text = '''
def f(x):
    out = []
    for i in range(len(x)):
        out.append(x[i])
    return out
'''
    x = np.arange(12.0).reshape(4, 3)
    new = agrees(text, x)
    ns: dict = {}
    exec(new, ns)
    rows = ns["f"](x)
    rows[1][0] = -1.0  # a view of x, as the loop's x[1] is
    assert x[1, 0] == -1.0 and all(r.flags.writeable for r in rows)
