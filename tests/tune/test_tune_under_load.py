"""What a busy machine must not change (stop 38, second wave): a load spike on the one call
that times a candidate, or a call on the varied inputs cut short by its limit, decided a
pick or called a correct rewrite "not equivalent" when the suite ran beside two busy loops."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

tf = pytest.importorskip("tensorflow")
pytestmark = [pytest.mark.tf, pytest.mark.slow]

from planted import Planted  # noqa: E402

from tfperf.tune import tune  # noqa: E402
from tfperf.tune.result import CandidateResult  # noqa: E402
from tfperf.tune.screen import Screen, screen  # noqa: E402

LOOP = """
import time

import tensorflow as tf

PLANTED = [False]


def total(x):
    y = x
    for _ in range(200):
        y = y + x
    return y
"""

#: What a busy machine's spike added to the one call that timed a candidate (its second).
SPIKE_S = 1.6


def test_a_load_spike_on_the_one_timed_call_does_not_decide_the_pick(user_module,
                                                                      monkeypatch):
    # Planted: one op instead of 200 eager adds (far faster), and a 1.6 s spike on the one
    # call the screen times (its second_call_s), too long for the rounds: before, that one
    # call stood for its speed and nothing was picked. The spike is added to what the screen
    # measured, not slept in the n-th call, so a change in the screen's call order (a
    # retried first call, a warm-up) cannot move it off the timed look (review 38b item 6).
    import tfperf.tune.search as search_module

    real_screen, spiked_once = search_module.screen, []

    def screen_with_a_spike(fn, args, kwargs, namespace, **options):
        out = real_screen(fn, args, kwargs, namespace, **options)
        if namespace.get("PLANTED", [False])[0] and out.second_call_s is not None \
                and not spiked_once:
            spiked_once.append(out.second_call_s)
            out.second_call_s += SPIKE_S
        return out

    monkeypatch.setattr(search_module, "screen", screen_with_a_spike)
    mod = user_module(LOOP)
    spiked = Planted("planted: one op, spiked", "    y = x\n    for _ in range(200):\n"
                     "        y = y + x\n", "    PLANTED[0] = True\n    y = x * 201.0\n")
    result = tune(mod.total, (tf.ones([64, 64]),), budget=20, levers=[spiked])
    cand = next(c for c in result.candidates if c.name == spiked.name)
    assert spiked_once, result.table()  # the planted candidate's screen timed a call
    assert any("a load spike" in n and "second call took 1.6 s" in n for n in cand.notes), \
        result.table()
    assert result.best is not None and result.best.name == spiked.name, result.table()
    assert result.best.equivalent is True and result.best.speedup > 3, result.table()


def test_a_candidate_slower_by_its_calls_is_not_rescued_by_another_look(user_module):
    # Its twin: every call of the rewrite is slow (a sleep on each), so another look
    # changes nothing and the rewrite is not picked.
    mod = user_module(LOOP)
    slow = Planted("planted: one op, slow", "    y = x\n    for _ in range(200):\n"
                   "        y = y + x\n", "    time.sleep(0.5)\n    y = x * 201.0\n")
    result = tune(mod.total, (tf.ones([64, 64]),), budget=20, levers=[slow])
    cand = next(c for c in result.candidates if c.name == slow.name)
    assert not any("a load spike" in n for n in cand.notes), result.table()
    assert result.best is None, result.table()


def test_the_varied_call_gets_the_first_calls_limit():
    # An eager tf.vectorized_map converts its body on every call: a call on new values is
    # as slow as a first call. Planted: 0.6 s on inputs it has not seen, under a 0.2 s
    # steady limit and a 3 s first-call limit.
    seen: set[float] = set()

    def fn(x):
        key = float(tf.reduce_sum(x))
        if key not in seen:
            seen.add(key)
            import time

            time.sleep(0.6)
        return x * 2.0

    x = tf.ones([3])
    s = screen(fn, (x,), {}, {}, limit=0.2, first_limit=3.0, varied=((x + 1.0,), {}))
    assert s.error is None and s.varied_error is None, s
    assert s.varied_output is not None


def test_a_varied_call_cut_short_is_no_verdict_of_disagreement():
    # The limit, not the output, ended the call: the candidate is unchecked, not "NO".
    from tfperf.tune.search import Search

    record = CandidateResult("planted", ["planted"])
    live = SimpleNamespace(record=record, screen=Screen(
        varied_error="a call did not finish within 3 s", varied_timed_out=True))
    Search._check_varied(SimpleNamespace(varied_base=[1.0], ints_base=None), live, None)
    assert record.equivalent is None
    assert record.rejected.startswith("not checked on varied inputs"), record.rejected
    failed = CandidateResult("planted", ["planted"])
    live = SimpleNamespace(record=failed, screen=Screen(varied_error="ValueError: shapes"))
    Search._check_varied(SimpleNamespace(varied_base=[1.0], ints_base=None), live, None)
    assert failed.equivalent is False  # an error is still a failure
