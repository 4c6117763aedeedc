"""The trend test: growth told from noise, a warm-up and one jump (pure, no TensorFlow)."""

from __future__ import annotations

import random

from tfperf.memory.trend import MIN_GROWTH_BYTES, consistency, rises, theil_sen, trend

MIB = 1 << 20


def test_theil_sen_follows_the_line_not_an_outlier():
    xs = list(range(10))
    ys = [3.0 * x + 7 for x in xs]
    assert theil_sen(xs, ys) == (3.0, 7.0)
    ys[4] = 1000.0  # one wild sample: least squares would follow it
    slope, _ = theil_sen(xs, ys)
    assert abs(slope - 3.0) < 0.5


def test_noise_alone_is_not_a_leak():
    rng = random.Random(1)
    samples = [500 * MIB + rng.uniform(-400_000, 400_000) for _ in range(16)]
    t = trend(samples)
    assert not t.leak, t.reason


def test_steady_growth_is_a_leak_with_its_slope():
    rng = random.Random(2)
    samples = [500 * MIB + k * MIB + rng.uniform(-100_000, 100_000) for k in range(16)]
    t = trend(samples)
    assert t.leak, t.reason
    assert abs(t.slope - MIB) < 0.1 * MIB


def test_a_warm_up_that_flattens_is_not_a_leak():
    samples = [min(k, 6) * MIB for k in range(16)]  # grows 6 steps, then flat
    assert not trend(samples).leak
    samples = [min(k, 9) * MIB for k in range(16)]  # grows over half the window, then stops
    t = trend(samples)
    assert not t.leak and "flattens" in t.reason, t.reason


def test_one_jump_is_not_a_steady_climb():
    samples = [0.0] * 8 + [8.0 * MIB] * 8  # an arena grown once
    t = trend(samples)
    assert not t.leak, t.reason


def test_growth_under_the_floor_is_not_reported():
    samples = [k * 20_000.0 for k in range(16)]  # 20 KB per step, clean
    t = trend(samples)
    assert not t.leak and t.growth < MIN_GROWTH_BYTES


def test_too_few_steps_say_so():
    assert "too few" in trend([1.0, 2.0, 3.0]).reason


def test_counters_that_climb():
    assert rises(list(range(10)))
    assert not rises([3] * 10)
    assert not rises([0] * 5 + [5] * 5)  # one jump: up on one step of nine
    assert consistency([1, 2, 3, 4]) == 1.0
