"""Growth or noise: a robust trend test over per-step memory samples.

Memory sampled once per step is noisy (the allocator keeps freed pages, threads grow their
arenas, a first call warms caches) and steps along in pages. The test:

1. **Slope**: Theil–Sen, the median of the slopes of every pair of samples: a few jumps (an
   arena grown once) move it little, where least squares would follow them.
2. **Noise**: the median absolute deviation of the residuals around that line, scaled to a
   standard deviation (×1.4826).
3. **Growth** over the window is the slope × its span. It is a leak only when it is
   * beyond the noise: ``growth ≥ NOISE_FACTOR × noise`` and at least ``min_bytes``;
   * consistent: at least ``CONSISTENCY`` of the pairs with different values go up;
   * persistent: the second half of the window still grows (Theil–Sen slope of its samples ≥
     ``PERSIST`` × the whole window's): a warm-up that flattens out is not a leak.
"""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

NOISE_FACTOR = 6.0
CONSISTENCY = 0.7
PERSIST = 0.3
#: below this over the window, growth is not reported as a leak: glibc and TF's allocators
#: move RSS by a few hundred KiB on steady loops (a Keras fit per call grows ~28 KiB a call
#: here on TF 2.21); a leak this small needs more steps to tell
MIN_GROWTH_BYTES = 2 << 20


def theil_sen(xs: Sequence[float], ys: Sequence[float]) -> tuple[float, float]:
    """(slope, intercept) of the Theil–Sen line through the points."""
    slopes = [(ys[j] - ys[i]) / (xs[j] - xs[i])
              for i in range(len(xs)) for j in range(i + 1, len(xs)) if xs[j] != xs[i]]
    if not slopes:
        return 0.0, float(statistics.median(ys)) if ys else 0.0
    slope = statistics.median(slopes)
    intercept = statistics.median(y - slope * x for x, y in zip(xs, ys, strict=False))
    return slope, intercept


@dataclass(frozen=True)
class Trend:
    slope: float  # bytes per step
    growth: float  # over the window
    noise: float  # robust standard deviation of the residuals
    consistency: float  # share of unequal pairs that go up
    late_slope: float  # slope of the window's second half
    steps: int
    leak: bool
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"slope_bytes_per_step": self.slope, "growth_bytes": self.growth,
                "noise_bytes": self.noise, "consistency": self.consistency,
                "late_slope_bytes_per_step": self.late_slope, "steps": self.steps,
                "leak": self.leak, "reason": self.reason}


def consistency(ys: Sequence[float]) -> float:
    up = down = 0
    for i in range(len(ys)):
        for j in range(i + 1, len(ys)):
            if ys[j] > ys[i]:
                up += 1
            elif ys[j] < ys[i]:
                down += 1
    return up / (up + down) if up + down else 0.0


def trend(samples: Sequence[float], min_bytes: float = MIN_GROWTH_BYTES) -> Trend:
    """Judge samples taken once per step (warm-up already left out)."""
    n = len(samples)
    xs = list(range(n))
    if n < 4:
        return Trend(0.0, 0.0, 0.0, 0.0, 0.0, n, False, f"{n} steps: too few to tell")
    slope, intercept = theil_sen(xs, samples)
    residuals = [y - (slope * x + intercept) for x, y in zip(xs, samples, strict=False)]
    noise = 1.4826 * statistics.median(abs(r) for r in residuals)
    growth = slope * (n - 1)
    cons = consistency(samples)
    half = n // 2
    late, _ = theil_sen(xs[half:], samples[half:])
    floor = max(NOISE_FACTOR * noise, min_bytes)
    if growth < floor:
        why = (f"growth {_kib(growth)} over {n} steps is within "
               f"{'the noise' if NOISE_FACTOR * noise >= min_bytes else 'the floor'} "
               f"({_kib(floor)})")
        return Trend(slope, growth, noise, cons, late, n, False, why)
    if cons < CONSISTENCY:
        return Trend(slope, growth, noise, cons, late, n, False,
                     f"only {cons:.0%} of step pairs go up: jumps, not a steady climb")
    if late < PERSIST * slope:
        return Trend(slope, growth, noise, cons, late, n, False,
                     "the growth flattens in the second half: a warm-up, not a leak")
    return Trend(slope, growth, noise, cons, late, n, True,
                 f"grows {_kib(slope)} per step ({_kib(growth)} over {n} steps, noise "
                 f"{_kib(noise)})")


def rises(values: Sequence[int], share: float = 0.6) -> bool:
    """An exact counter that climbs: up on at least ``share`` of the steps, never down
    overall, and by at least half the steps in all."""
    if len(values) < 3:
        return False
    ups = sum(b > a for a, b in itertools.pairwise(values))
    return ups >= share * (len(values) - 1) and values[-1] - values[0] >= (len(values) - 1) / 2


def _kib(n: float) -> str:
    if abs(n) >= 1 << 20:
        return f"{n / (1 << 20):.1f} MiB"
    return f"{n / 1024:.0f} KiB"


__all__ = ["Trend", "consistency", "rises", "theil_sen", "trend"]
