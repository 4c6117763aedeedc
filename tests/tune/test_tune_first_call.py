"""Traces that take time: a candidate whose first call is slow (a trace of an unrolled loop,
an XLA compile) is measured, not dropped by the call limit, which holds for the calls after
it; its first call is weighed with the calls the user is taken to make. Planted with sleeps
far apart, so the outcome does not depend on how busy the machine is."""

from __future__ import annotations

import pytest

tf = pytest.importorskip("tensorflow")

from planted import Planted  # noqa: E402  (tests/tune/planted.py)

from tfperf.tune import tune  # noqa: E402
from tfperf.tune.search import EXPECTED_CALLS  # noqa: E402

SLOW = """
import time

import tensorflow as tf


def f(x):
    time.sleep(BASE_S)
    return x * 2.0
"""

#: The first call of the planted candidate sleeps longer than the steady-state call limit
#: (3 s at this budget), once; its later calls do not sleep at all.
FIRST_S = 3.5


def _warm(base_s: str) -> Planted:
    return Planted("planted: slow first call", f"    time.sleep({base_s})\n",
                   "    if not hasattr(f, 'warm'):\n"
                   "        f.warm = True\n"
                   f"        time.sleep({FIRST_S})\n")


def _x():
    return (tf.ones([4]),)


def test_a_slow_first_call_is_measured_and_picked_when_it_pays_back(user_module):
    base = "0.02"
    mod = user_module(SLOW.replace("BASE_S", base))
    result = tune(mod.f, _x(), budget=20, levers=[_warm(base)])
    (cand,) = result.candidates
    assert cand.rejected is None, cand.rejected
    assert cand.first_call_s is not None and cand.first_call_s >= FIRST_S
    # 3.5 s over 20 ms a call: paid back after a few hundred calls, fewer than expected.
    assert cand.break_even_calls is not None and 1 < cand.break_even_calls <= EXPECTED_CALLS
    assert result.best_name == "planted: slow first call"


def test_a_first_call_not_paid_back_by_the_calls_expected_is_not_picked(user_module,
                                                                        monkeypatch):
    from tfperf.tune import search

    monkeypatch.setattr(search, "EXPECTED_CALLS", 100)
    base = "0.0005"
    mod = user_module(SLOW.replace("BASE_S", base))
    result = tune(mod.f, _x(), budget=20, levers=[_warm(base)])
    (cand,) = result.candidates
    assert cand.first_call_s is not None and cand.first_call_s >= FIRST_S
    # 3.5 s over at most 0.5 ms (plus load) a call: thousands of calls to pay back, not 100.
    assert cand.rejected is not None and cand.rejected.startswith("not paid back"), \
        cand.rejected
    assert result.best is None
