"""A candidate that only makes the code traceable runs the user's ops as they were: alone it
is never the pick, however its rounds came out (held-out round 13's c09: "traceable" was picked
and shown at 1.00× the user's own function, tf.function and XLA on top of it raising)."""

from __future__ import annotations

import types

import pytest

tf = pytest.importorskip("tensorflow")

from tfperf.tune import tune  # noqa: E402
from tfperf.tune.levers.tf_function import TfFunction  # noqa: E402
from tfperf.tune.levers.traceable import Traceable  # noqa: E402
from tfperf.tune.pick import Rounds, idle_enablers, not_faster, only_enables  # noqa: E402
from tfperf.tune.result import CandidateResult  # noqa: E402


def _live(levers, times, speedup):
    record = CandidateResult(name="+".join(lv.name for lv in levers), levers=[], speedup=speedup)
    return types.SimpleNamespace(levers=tuple(levers), record=record,
                                 rounds=[Rounds(0, tuple(times))])


def test_rounds_that_tell_it_apart_do_not_make_an_enabler_the_pick():
    # planted rounds: every one of 9 rounds 1 % faster than the baseline, which the sign
    # test tells apart; the same rounds for tf.function (or traceable + tf.function) pass
    base = _live([], [0.300] * 9, None)
    alone = _live([Traceable()], [0.297] * 9, 1.01)
    assert not_faster(alone, base) is None  # the rounds alone would have picked it
    why = only_enables(alone)
    assert why is not None and why.startswith("runs the user's ops as they were"), why
    for levers in ([TfFunction()], [Traceable(), TfFunction()]):
        assert only_enables(_live(levers, [0.297] * 9, 1.01)) is None


def test_an_enabler_stacked_on_a_lever_that_does_not_trace_is_not_the_pick():
    # round 14's c14 (stop 44): traceable + array writes measured faster than the array
    # writes alone by chance; with nothing tracing on top, the two run the same ops
    from tfperf.tune.levers.numpy_writes import NumpyWrites

    writes = _live([NumpyWrites()], [0.0005] * 9, 100.0)
    stacked = _live([Traceable(), NumpyWrites()], [0.00045] * 9, 110.0)
    why = idle_enablers(stacked, [stacked, writes])
    assert why is not None and "neither is on top" in why, why
    # twins: without the lone lever to fall back on, or with a trace on top, it stays
    assert idle_enablers(stacked, [stacked]) is None
    compiled = _live([Traceable(), NumpyWrites(), TfFunction()], [0.0004] * 9, 120.0)
    assert idle_enablers(compiled, [compiled, writes]) is None
    assert idle_enablers(writes, [stacked, writes]) is None


def test_the_search_does_not_pick_the_traceable_rewrite_alone(user_module):
    # unpacking a tensor (traceable's rewrite), then an if-expression whose branches differ
    # in dtype: tf.function raises on it with or without the rewrite
    mod = user_module("""
import tensorflow as tf


def f(pts, img):
    out = []
    for i in range(pts.shape[0]):
        r, c = pts[i]
        out.append(img[r, c] if r >= 0 else 0)
    return tf.stack(out)
""")
    g = tf.random.Generator.from_seed(4)
    args = (g.uniform([64, 2], 0, 16, tf.int32), g.normal([16, 16]))
    result = tune(mod.f, args, budget=20, levers=[Traceable(), TfFunction()])
    alone = next(c for c in result.candidates if c.name == Traceable.name)
    assert alone.equivalent is True, result.table()  # it ran and agreed: a real candidate
    assert (alone.rejected or "").startswith("runs the user's ops as they were"), result.table()
    assert result.best_name != Traceable.name, result.table()
