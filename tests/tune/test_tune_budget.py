"""Where the search's time escaped its budget, each planted so the outcome is certain (the
budget's clock stands still in tests: conftest's ``frozen_budget``): the roofline's trace of
a slow eager baseline after the search, an XLA compile of an unrolled loop (a compile cannot
be interrupted: the call limit fires only when it returns), a float64 run of a slow baseline."""

from __future__ import annotations

import pytest

tf = pytest.importorskip("tensorflow")

from tfperf.tune import tune  # noqa: E402
from tfperf.tune.levers.tf_function import JitCompile, TfFunction  # noqa: E402

SLOW_BASE = """
import time

import tensorflow as tf


def slow(x):
    time.sleep(SLEEP)  # the eager Python a trace runs again, op by op
    return tf.reduce_sum(x * x, axis=1)
"""

MANY_OPS = """
import tensorflow as tf


def many(x):
    y = x
    for _ in range(STEPS):
        y = y * 0.99 + 0.01
    return y
"""


def test_the_roofline_does_not_trace_a_baseline_past_the_budget(user_module):
    # A baseline call of 0.6 s: its trace for the FLOP count costs about TRACE_CALLS of them,
    # past what a 1.5 s budget has left after the search (before: traced all the same).
    mod = user_module(SLOW_BASE.replace("SLEEP", "0.6"))
    result = tune(mod.slow, (tf.ones([4, 3]),), budget=1.5, levers=[])
    from tfperf.tune.search import TRACE_CALLS

    assert TRACE_CALLS * 0.6 > 1.5
    assert (result.baseline["roofline"] or "").startswith(
        "roofline: not counted (tracing it would")


def test_the_roofline_is_still_counted_when_its_trace_fits(user_module):
    mod = user_module(SLOW_BASE.replace("SLEEP", "0.0"))
    result = tune(mod.slow, (tf.ones([4, 3]),), budget=4, levers=[])
    assert "not counted (tracing" not in (result.baseline["roofline"] or "")


def test_an_xla_compile_of_an_unrolled_loop_is_not_started(user_module):
    # 400 eager ops: tracing them fits the first call's limit, compiling them with XLA (30 ms
    # an op, twice) does not; before, jit_compile was started and its compile overran the
    # limit (39 s against 5 s on a 512-step loop).
    mod = user_module(MANY_OPS.replace("STEPS", "200"))
    result = tune(mod.many, (tf.ones([8]),), budget=4, levers=[TfFunction(), JitCompile()])
    by = {c.name: c for c in result.candidates}
    assert by["jit_compile"].rejected is not None
    assert by["jit_compile"].rejected.startswith("not tried: XLA would compile 400 eager ops")
    assert not (by["tf.function"].rejected or "").startswith("not tried")


def test_no_float64_run_of_a_baseline_that_leaves_no_time_for_it(user_module, frozen_budget):
    from tfperf.tune.device import DeviceFacts
    from tfperf.tune.levers.precision import ReducedPrecision

    # A 0.6 s baseline, 0.3 s of search left: a float64 run of it is not started (the
    # candidate's own calls have the 1 s floor of the call limit).
    frozen_budget(search_s=0.3)
    mod = user_module(SLOW_BASE.replace("SLEEP", "0.6"))
    facts = DeviceFacts(cpu_flags=frozenset({"avx512_bf16"}))
    result = tune(mod.slow, (tf.ones([4, 3]),), budget=2, levers=[ReducedPrecision("bfloat16")],
                  facts=facts)
    (cand,) = result.candidates
    said = (cand.rejected or "") + " ".join(cand.notes)
    assert "no time left for a float64 run of the baseline" in said


def test_a_candidate_as_slow_as_the_budget_is_not_timed_in_rounds(user_module, monkeypatch):
    # A planted candidate of 0.8 s a call against 2.4 s of final timing (budget 3, the
    # final share 0.2 frozen, 0.9 of it): compare would run its warm-up and a round past the
    # budget. It keeps its one-call estimate; before, it was handed to compare.
    from planted import Planted

    from tfperf.bench import comparison
    from tfperf.tune.search import OVERSHOOT_CALLS

    timed: list[list[str]] = []
    real = comparison.compare

    def spy(variants, **kw):
        timed.append([v.name for v in variants])
        return real(variants, **kw)

    monkeypatch.setattr(comparison, "compare", spy)
    mod = user_module(SLOW_BASE.replace("SLEEP", "0.0"))
    slow = Planted("planted: slow", "    time.sleep(0.0)", "    time.sleep(0.8)")
    result = tune(mod.slow, (tf.ones([4, 3]),), budget=3, levers=[slow])
    assert OVERSHOOT_CALLS * 0.8 > 0.9 * 0.2 * 3
    assert not any("planted: slow" in names for names in timed)
    (cand,) = result.candidates
    assert cand.median_s is not None and cand.median_s >= 0.8  # its one call stands for it
