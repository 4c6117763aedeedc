"""Stop 45: a recurrence through the buffer's elements (round 15's c10 wealth path, a running
sum or product written ``a[i] = a[i - 1] * f``): one cumulative op over the factors, which
multiplies (adds) left to right as the loop does, so the same roundings, bit for bit. The run
falls back to the loop where the step's dtype is not the buffer's (the loop rounds each step
to it) or the recurrence reads before the array. Twins left alone: an affine step, a lag of 2,
a division. Also: ``x[i - 1]`` reads on a one-loop grid become shifted slices (views)."""

from __future__ import annotations

import numpy as np
import pytest
from no_fallback import agrees

from tfperf.tune.levers import numpy_writes
from tfperf.tune.source import SourceEditError

HEAD = "import numpy as np\n\n\n"


def _load(text: str):
    ns: dict = {}
    exec(compile(text, "<recurrences>", "exec"), ns)
    return ns["f"]


GROWTH = '''
def f(price, rate, step):
    bal = np.empty_like(price)
    bal[0] = 100.0
    share = np.linspace(0.9, 0.2, len(price))
    for k in range(1, len(price)):
        bal[k] = bal[k-1] * (share[k] * (price[k] / price[k-1]) + (1 - share[k]) * (1 + rate*step))
    return bal
'''


@pytest.mark.parametrize("n", [2, 3, 500])
def test_a_running_product_through_the_buffer_is_one_cumprod_bit_for_bit(n):
    S = 100 * np.exp(np.cumsum(np.random.default_rng(n).normal(0, 0.02, n)))
    new = agrees(GROWTH, S, 0.03, 0.01)
    assert "_tfperf_shifted(price" in new  # price[k - 1] is a shifted slice, not a gather
    agrees(GROWTH.replace("bal[k-1] * (", "(").replace(")\n    return", ") * bal[k - 1]"
                                                      "\n    return"), S, 0.03, 0.01)


SUM = '''
def f(x, a0):
    a = np.zeros(len(x), x.dtype)
    a[0] = a0
    for i in range(1, len(x)):
        a[i] = a[i - 1] + x[i]
    return a
'''


@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.float32, np.float64])
@pytest.mark.filterwarnings("ignore:overflow encountered")  # the loop's own uint8 wrap
def test_running_sums_and_differences_keep_the_dtype_and_its_wrap(dtype):
    x = (np.random.default_rng(3).random(60) * 100).astype(dtype)
    agrees(SUM, x, 7)
    agrees(SUM.replace("a[i - 1] + x[i]", "a[i - 1] - x[i]"), x, 7)
    agrees(SUM.replace("a[i - 1] + x[i]", "0.5 * x[i] + a[i - 1]"), x.astype(np.float32), 7)


def test_a_python_scalar_factor_stays_weak_and_a_wider_step_runs_the_loop():
    text = '''
def f(x, g):
    a = x.copy()
    for i in range(1, len(a)):
        a[i] = g * a[i - 1]
    return a
'''
    x = np.linspace(1, 2, 40, dtype=np.float32)
    agrees(text, x, 1.01)  # float32 * a Python float stays float32: batched
    # float32 buffer, float64 factor: the loop rounds to float32 every step; one float64
    # cumprod would not
    agrees(text, x, np.float64(1.01), batched=False)


def test_a_recurrence_that_starts_at_zero_reads_the_last_element_and_runs_the_loop():
    agrees(SUM.replace("range(1, len(x))", "range(len(x))"), np.arange(1.0, 9.0), 3,
            batched=False)


@pytest.mark.parametrize("factor", ["f[i]", "(f[i] * 2)", "0.5"])
def test_rows_through_the_buffer(factor):
    text = f'''
def f(a, f):
    a = a.copy()
    for i in range(1, len(a)):
        a[i] = a[i - 1] * {factor}
    return a
'''
    r = np.random.default_rng(4)
    agrees(text, r.random((9, 4)), r.random(9))  # a factor per row
    if factor != "0.5":
        agrees(text, r.random((9, 4)), r.random((9, 4)))  # a factor per element


@pytest.mark.parametrize("step", ["a[i - 1] * r + x[i]", "a[i - 2] * x[i]", "a[i - 1] / x[i]",
                                  "x[i] - a[i - 1]", "a[i - 1] * a[i - 1]",
                                  # (a * x) * 2 rounds twice: not a * (x * 2)
                                  "a[i - 1] * x[i] * 2"])
def test_other_recurrences_are_left_alone(step):
    text = f'''
def f(x, r):
    a = np.ones(len(x))
    for i in range(2, len(x)):
        a[i] = {step}
    return a
'''
    with pytest.raises(SourceEditError, match="other than at the element it writes"):
        numpy_writes.rewrite(HEAD + text, "f")


def test_shifted_reads_are_slices_and_reads_before_the_array_run_the_loop():
    text = '''
def f(x):
    d = np.zeros(len(x))
    for i in range(1, len(x) - 1):
        d[i] = (x[i + 1] - x[i - 1]) / 2
    return d
'''
    x = np.random.default_rng(5).random(30)
    new = agrees(text, x)
    assert "_tfperf_axis(1, len(x) - 1, 1, True)" in new  # a slice grid, no gather
    agrees(text.replace("range(1, len(x) - 1)", "range(0, len(x) - 1)"), x, batched=False)
