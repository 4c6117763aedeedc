"""Running maxima/minima/sums carried through a loop over an array's items (issue 26; held-out
round 14's maximum drawdown) become NumPy scans of the whole array. Each rewrite is run against
the loop on the same inputs: value, type and dtype (a float32 sum stays float32 and is summed
in the loop's order), the empty array (the first values come back). Twins: a value read before
its update (a recurrence: an exponential average), a name updated twice, are left alone."""

from __future__ import annotations

import ast

import numpy as np
import pytest

from tfperf.tune.levers.numpy_scans import rewrite
from tfperf.tune.source import SourceEditError

HEAD = "import numpy as np\n\n\n"

DRAWDOWN = HEAD + '''
def f(values):
    worst, peak = 0, 0
    for v in values:
        peak = max(peak, v)
        worst = max((peak - v) / peak, worst)
    return -worst
'''
RUNNING_SUM = HEAD + '''
def f(xs):
    total, low = 0, 10**6
    for x in xs:
        total += x * 2
        low = min(low, total)
    return total, low
'''
PRODUCT = HEAD + '''
def f(rates):
    growth = 1.0
    for r in rates:
        step = 1.0 + r
        growth *= step
    return growth
'''
EMA = HEAD + '''
def f(xs):
    avg = 0.0
    for x in xs:
        avg = 0.9 * avg + 0.1 * x
    return avg
'''
TWICE = HEAD + '''
def f(xs):
    top = 0.0
    for x in xs:
        top = max(top, x)
        top = max(top, -x)
    return top
'''
STALE = HEAD + '''
def f(xs):
    best, prev = 0.0, 0.0
    for x in xs:
        best = max(best, x - prev)
        prev = max(prev, x)
    return best
'''


def _run(text: str, *args):
    ns: dict = {}
    exec(compile(text, "<scans>", "exec"), ns)
    return ns["f"](*args)


def _same(a, b) -> None:
    if isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _same(x, y)
        return
    assert type(a) is type(b), (type(a), type(b))
    np.testing.assert_array_equal(a, b)


def _agrees(text: str, *args) -> str:
    new = rewrite(text, "f")
    fn = next(n for n in ast.parse(new).body if isinstance(n, ast.FunctionDef))
    helpers = [n for n in fn.body if isinstance(n, ast.FunctionDef)]  # loops over axes only
    assert not [n for s in fn.body if s not in helpers for n in ast.walk(s)
                if isinstance(n, ast.For)], new
    _same(_run(text, *args), _run(new, *args))
    return new


def test_a_drawdown_is_a_running_maximum_and_one_reduction():
    vals = 100.0 * np.exp(np.cumsum(np.random.default_rng(0).normal(0, 0.01, 500)))
    new = _agrees(DRAWDOWN, vals)
    assert "accumulate" in new and "_tfperf_last('maximum'" in new


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_a_running_sum_read_by_a_running_minimum_keeps_the_dtype_and_the_order(dtype):
    xs = (np.random.default_rng(1).normal(size=300) * 100).astype(dtype)
    new = _agrees(RUNNING_SUM, xs)
    assert "cumsum" in new


def test_a_product_through_a_temporary():
    _agrees(PRODUCT, np.random.default_rng(2).normal(0, 0.01, 200))


def test_no_items_give_back_the_first_values():
    _agrees(RUNNING_SUM, np.zeros(0, np.float32))
    _agrees(PRODUCT, np.zeros(0))


@pytest.mark.parametrize("text,why", [(EMA, "before this iteration binds it"),
                                      (TWICE, "bound twice"),
                                      (STALE, "before this iteration binds it")])
def test_a_value_read_before_its_update_is_a_recurrence_and_left_alone(text, why):
    with pytest.raises(SourceEditError, match=why):
        rewrite(text, "f")
