"""Shared fixtures of the bench tests: one small comparison made once, a private cache dir."""

from __future__ import annotations

import time

import pytest


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory, monkeypatch):
    # The roofline cache must never touch the user's ~/.cache from a test.
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "xdg-cache"))


def sleepy_loop(seconds: float) -> None:
    """A Python loop of short sleeps: a too-slow variant a time limit can interrupt."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        time.sleep(0.005)


@pytest.fixture(scope="session")
def case_result():
    """The case study on small inputs, with an axis bug, a raising, a slow and a runaway variant."""
    tf = pytest.importorskip("tensorflow")
    from tfperf.bench import Variant, compare
    from tfperf.examples.case_study_fixed import compute_feature_tf_einsum, compute_feature_tf_vec
    from tfperf.examples.case_study_slow import compute_feature_tf_slow

    g = tf.random.Generator.from_seed(1)
    samples, weights = g.normal([2, 30, 16]), g.normal([30])

    def axis_bug(s, w):  # the article's S20 pitfall: reduces the wrong axis
        return tf.reduce_sum(s * tf.reshape(w, [-1, 1]), axis=2)

    def raises(s, w):
        raise ValueError("this variant is broken")

    def slow(s, w):
        time.sleep(0.8)
        return compute_feature_tf_vec(s, w)

    def runaway(s, w):
        sleepy_loop(60.0)
        return compute_feature_tf_vec(s, w)

    t0 = time.perf_counter()
    result = compare([
        Variant("loop", compute_feature_tf_slow),
        Variant("vectorised", compute_feature_tf_vec),
        Variant("raises", raises),
        Variant("runaway", runaway),
        Variant("einsum", compute_feature_tf_einsum),
        Variant("axis_bug", axis_bug),
        Variant("slow", slow),
    ], (samples, weights), baseline="loop", budget=1.5, call_limit=2.0, slow_after=0.5)
    result.settings["wall_s"] = time.perf_counter() - t0
    return result
