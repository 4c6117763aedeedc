"""Stop 45: counts and sums kept in Python names inside an index loop (round 15's c09 share of
predictions one class low, c04's perplexity ``loss += -log(p[i, y[i]])``, c06's counts under
nested ifs): the terms the loop's branches took, folded at once in the loop's order
(``ufunc.accumulate``: the same roundings), Python ints exact and unbounded, Python floats and
ints kept Python scalars. Twins: a name read in the loop, folded twice, or of a list's items."""

from __future__ import annotations

import numpy as np
import pytest
from no_fallback import agrees

from tfperf.tune.levers import numpy_writes
from tfperf.tune.source import SourceEditError

HEAD = "import numpy as np\n\n\n"


def _load(text: str):
    ns: dict = {}
    exec(compile(text, "<folds>", "exec"), ns)
    return ns["f"]


COUNT = '''
def f(truth, guess):
    hits = 0
    for n in range(len(truth)):
        if guess[n] + 1 == truth[n]:
            hits += 1
    return hits / len(truth)
'''


@pytest.mark.parametrize("dtype", [np.int64, np.uint8, np.float32])
def test_a_count_under_a_branch_is_the_number_of_true_conditions(dtype):
    r = np.random.default_rng(0)
    y = r.integers(0, 5, 300).astype(dtype)
    agrees(COUNT, y, np.clip(y + r.integers(-1, 2, 300), 0, 4).astype(dtype))
    agrees(COUNT.replace(" / len(truth)", ""), y[:0], y[:0])  # no iteration: 0, an int


def test_a_sum_of_gathered_logs_folds_in_the_loops_order():
    text = '''
def f(p, y):
    nll = 0.0
    for i in range(y.size):
        nll += -np.log(p[i, y[i]])
    return nll / p.shape[0], p.shape[0]
'''
    r = np.random.default_rng(1)
    z = np.exp(r.normal(size=(400, 7)))
    agrees(text, z / z.sum(axis=1, keepdims=True), r.integers(0, 7, 400))
    # float32 terms into a Python float stay float32 (NEP 50), rounded each step
    agrees(text, (z / z.sum(axis=1, keepdims=True)).astype(np.float32), r.integers(0, 7, 400))


def test_nested_branches_with_several_counters():
    text = '''
def f(y_true, y_pred):
    tp, fp, total = 0.0, 0.0, 0.0
    for i in range(len(y_true)):
        if y_pred[i] == 1:
            if y_true[i] == 1:
                tp += 1
            else:
                fp += 1
        elif y_true[i] == 1:
            total += 1
        else:
            pass
    return tp, fp, total
'''
    r = np.random.default_rng(2)
    agrees(text, r.integers(0, 2, 200), r.integers(0, 2, 200))


def test_a_branchs_own_temporary_before_a_fold_needs_no_pick():
    text = '''
def f(x):
    total = 0.0
    for i in range(len(x)):
        if x[i] > 0.5:
            w = x[i] * 2
        else:
            z = x[i] - 1
        total += x[i]
    return total
'''
    agrees(text, np.random.default_rng(6).random(40))


def test_products_and_differences_over_a_grid_in_loop_order():
    text = '''
def f(x):
    p = 1.0
    s = 0
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            v = x[i, j] * 0.5
            p *= v + 1
            s -= v
    return p, s
'''
    agrees(text, np.random.default_rng(3).random((6, 5)))


def test_a_numpy_scalar_name_keeps_its_dtype_with_python_scalar_terms():
    text = '''
def f(x):
    acc = np.float32(0)
    n = 0
    for i in range(len(x)):
        if x[i] > 0.3:
            acc += 0.1
            n -= 1
    return acc, n
'''
    agrees(text, np.random.default_rng(5).random(50).astype(np.float32))


def test_a_fold_of_a_python_lists_items_and_of_a_vector_run_the_loop():
    text = '''
def f(xs):
    total = 0
    for i in range(len(xs)):
        total += xs[i] * 3
    return total
'''
    agrees(text, [2 ** 70, 5, 7], batched=False)  # Python ints, unbounded: no int64 array
    agrees(text, np.arange(5))  # twin: an array
    agrees(text, np.arange(6).reshape(3, 2), batched=False)  # total becomes an array


@pytest.mark.parametrize("body, why", [
    ("acc += acc * x[i]", "read in the loop"),
    ("acc += x[i]\n        acc += 1", "folded twice"),
    ("if acc > 3:\n            acc += 1", "read in the loop"),
    ("acc += x[i]\n        print(acc)", "as folds into names: the innermost statements are "
                                         "not folds"),
])
def test_folds_that_read_the_name_are_left_alone(body, why):
    text = f'''
def f(x):
    acc = 0.0
    for i in range(len(x)):
        {body}
    return acc
'''
    with pytest.raises(SourceEditError, match=why):
        numpy_writes.rewrite(HEAD + text, "f")
