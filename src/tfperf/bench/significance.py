"""Is one run slower than another? Tests on the raw per-round times, NumPy only.

- :func:`bootstrap_ratio`: the ratio of medians (current / baseline) with a percentile
  bootstrap interval (each side resampled apart), and the smallest change this pair of
  samples could have told from noise.
- :func:`bootstrap_paired`: the median of per-round ratios of two interleaved sides.

Rounds are resampled in **blocks** of consecutive rounds (a circular block bootstrap, blocks
of about √n rounds), not one by one: on a shared runner a burst of load lasts several rounds,
and resampling single rounds would treat those as independent and make the interval too
narrow (a false alarm in one self-comparison of twenty, measured, before blocks).
- :func:`mann_whitney_u`: the two-sided Mann-Whitney U test (normal approximation with a tie
  correction), reported beside the interval as a second opinion.

The verdict rule (significant *and* beyond the threshold) lives in :mod:`tfperf.bench.gate`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class RatioInterval:
    ratio: float  # median(current) / median(baseline)
    low: float
    high: float
    confidence: float
    #: the smallest relative change (0.05 = 5 %) whose interval would exclude "no change",
    #: given the spread of these samples
    detectable: float


def block_length(n: int) -> int:
    return max(1, round(math.sqrt(n)))


def block_indices(rng: np.random.Generator, n: int, resamples: int) -> np.ndarray:
    """(resamples, n) indices of a circular block bootstrap over ``n`` ordered samples."""
    length = block_length(n)
    blocks = -(-n // length)
    starts = rng.integers(0, n, (resamples, blocks))
    idx = (starts[:, :, None] + np.arange(length)) % n
    return idx.reshape(resamples, blocks * length)[:, :n]


def bootstrap_ratio(baseline: Sequence[float], current: Sequence[float], *,
                    confidence: float = 0.99, resamples: int = 2000,
                    seed: int = 0) -> RatioInterval:
    """Ratio of medians with a percentile bootstrap interval at ``confidence``.

    The samples are in the order they were timed. The seed is fixed so that the same
    samples always give the same verdict.
    """
    b = np.asarray(baseline, dtype=float)
    c = np.asarray(current, dtype=float)
    if b.size < 2 or c.size < 2:
        raise ValueError("the bootstrap needs at least two times on each side")
    if not (np.all(b > 0) and np.all(c > 0)):
        raise ValueError("times must be positive")
    rng = np.random.default_rng(seed)
    mb = np.median(b[block_indices(rng, b.size, resamples)], axis=1)
    mc = np.median(c[block_indices(rng, c.size, resamples)], axis=1)
    log_ratios = np.log(mc) - np.log(mb)
    alpha = (1.0 - confidence) / 2
    lo, hi = np.quantile(log_ratios, [alpha, 1 - alpha])
    point = float(np.median(c) / np.median(b))
    # Shifting the point estimate by d moves the interval with it (on the log scale): the
    # interval leaves 1 once d exceeds the larger of its two half-widths.
    half = max(math.log(point) - lo, hi - math.log(point), 0.0)
    return RatioInterval(point, float(math.exp(lo)), float(math.exp(hi)), confidence,
                         float(math.exp(half) - 1.0))


def bootstrap_paired(baseline: Sequence[float], current: Sequence[float], *,
                     confidence: float = 0.99, resamples: int = 2000,
                     seed: int = 0) -> RatioInterval:
    """Median of per-round ratios (current_i / baseline_i, timed side by side in round i)
    with a percentile bootstrap interval over rounds: drift that hits both sides of a round
    alike cancels out."""
    b = np.asarray(baseline, dtype=float)
    c = np.asarray(current, dtype=float)
    if b.size != c.size or b.size < 2:
        raise ValueError("paired samples need the same number (at least two) of rounds")
    if not (np.all(b > 0) and np.all(c > 0)):
        raise ValueError("times must be positive")
    log_r = np.log(c) - np.log(b)
    rng = np.random.default_rng(seed)
    boot = np.median(log_r[block_indices(rng, log_r.size, resamples)], axis=1)
    alpha = (1.0 - confidence) / 2
    lo, hi = np.quantile(boot, [alpha, 1 - alpha])
    point = float(np.median(log_r))
    half = max(point - lo, hi - point, 0.0)
    return RatioInterval(float(math.exp(point)), float(math.exp(lo)), float(math.exp(hi)),
                         confidence, float(math.exp(half) - 1.0))


def _normal_sf(z: float) -> float:
    return 0.5 * math.erfc(z / math.sqrt(2.0))


def mann_whitney_u(a: Sequence[float], b: Sequence[float]) -> tuple[float, float]:
    """(U of ``a``, two-sided p) by the normal approximation with tie correction."""
    x = np.asarray(a, dtype=float)
    y = np.asarray(b, dtype=float)
    n1, n2 = x.size, y.size
    if n1 == 0 or n2 == 0:
        raise ValueError("both samples must be non-empty")
    values = np.concatenate([x, y])
    order = np.argsort(values, kind="mergesort")
    ranks = np.empty(values.size)
    sorted_values = values[order]
    # average ranks of ties
    _, first, counts = np.unique(sorted_values, return_index=True, return_counts=True)
    avg = first + (counts + 1) / 2.0
    ranks[order] = np.repeat(avg, counts)
    u1 = float(ranks[:n1].sum() - n1 * (n1 + 1) / 2.0)
    n = n1 + n2
    tie = float(np.sum(counts**3 - counts)) / (n * (n - 1)) if n > 1 else 0.0
    var = n1 * n2 / 12.0 * ((n + 1) - tie)
    if var <= 0:
        return u1, 1.0
    z = (abs(u1 - n1 * n2 / 2.0) - 0.5) / math.sqrt(var)
    return u1, float(min(1.0, 2 * _normal_sf(max(z, 0.0))))


__all__ = ["RatioInterval", "block_indices", "block_length", "bootstrap_paired",
           "bootstrap_ratio", "mann_whitney_u"]
