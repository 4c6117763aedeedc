"""The pick: which agreeing candidate becomes the patch, by the noise of the run that timed it.

A speedup is a median of per-round ratios from one interleaved run (bench's ``compare``, or
the alternating rounds of isolated processes). How far those ratios spread is the noise of
that run on this machine at that moment: on a shared 2-core machine a 15 % gain can be
noise, on a quiet one 3 % is not. So no fixed margin decides; the rounds do.

**The gap** between two candidates timed in the same run is the median of their per-round
ratios with its distribution-free interval (:func:`median_interval`: order statistics, the
sign test's binomial, ``CONFIDENCE``). It is exact for any spread, where the percentile
bootstrap of a median (``bench.significance.bootstrap_paired``) is not with this few
rounds: on equal candidates with 3-25 rounds it claimed a difference in 12-32 % of
simulated runs. A run needs ``MIN_ROUNDS`` rounds before its interval can exclude 1 (at 95 %:
6 rounds, all on one side); with fewer, or with no run that timed both, the gap is taken
as ``UNPAIRED`` either way, the factor the search already calls too close to tell by one
call.

1. **Faster than the baseline**: the gap's interval lies above 1 (else the candidate is
   rejected as ``not told apart from the baseline``).
2. **The fastest, unless the run cannot tell**: every candidate whose gap to the fastest
   contains 1 (the run that timed both cannot tell them apart) is its equal; a candidate
   the run told apart from it loses, whatever lint says of either. Held-out round 14's c10:
   a fixed band (1.25× of the fastest, the fewest lint findings in it) picked
   ``loops→vectorized_map + jit_compile`` over plain ``jit_compile``, measured faster.
   A candidate never timed in the same run is nobody's equal.
3. **The smallest patch of the equals**: no precision change, then fewer levers, then fewer
   lint findings in the patched file (a Python loop left in a ``tf.function`` is unrolled
   into its graph; its first call, measured, is weighed apart), then the faster.

Each decision that is not simply "the fastest" is noted on the picked candidate's record.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

#: Confidence of a gap's interval.
CONFIDENCE = 0.95
#: The gap assumed where a run cannot measure one: fewer than ``MIN_ROUNDS`` rounds, or no
#: run that timed both (the search's ``CLOSE``: what one call against another cannot tell).
UNPAIRED = 1.5
#: Rounds a timing run is asked for: at 95 % the median's interval then leaves out the most
#: extreme round on each side (9 rounds: the 2nd and 8th of them), so one disturbed round
#: cannot decide.
ROUNDS = 9


@dataclass(frozen=True)
class Rounds:
    """A candidate's time per round (seconds per call) in one interleaved run, in order; a
    candidate keeps one per run it took part in."""

    run: int  # which run: ratios pair only within one
    times: tuple[float, ...]


@dataclass(frozen=True)
class Gap:
    """How many times faster one candidate ran than another: ``ratio`` (the median of the
    per-round ratios), its interval, and over how many ``rounds``; ``measured`` False when
    the interval is ``UNPAIRED`` either way (too few rounds, or none shared)."""

    ratio: float
    low: float
    high: float
    rounds: int
    measured: bool

    def describe(self) -> str:
        if self.measured:
            return (f"×{self.low:.2f}–×{self.high:.2f} over {self.rounds} rounds of one run "
                    f"({CONFIDENCE:.0%})")
        if self.rounds:
            return (f"{self.rounds} rounds of one run, too few to measure its noise (it "
                    f"takes {MIN_ROUNDS}): ×{UNPAIRED:g} either way")
        return f"not timed in the same rounds: ×{UNPAIRED:g} either way"


def median_interval(values: Sequence[float],
                    confidence: float = CONFIDENCE) -> tuple[float, float]:
    """The distribution-free interval of the median of ``values``: the ``k``-th smallest and
    largest, ``k`` the most the binomial(n, ½) tails allow at ``confidence`` (the sign
    test); ``(-inf, inf)`` when even the extremes are not enough."""
    x = sorted(values)
    n, alpha = len(x), (1.0 - confidence) / 2
    k, tail = 0, 0.0
    while k < n and tail + math.comb(n, k) / 2**n <= alpha:
        tail += math.comb(n, k) / 2**n
        k += 1
    if k == 0:
        return -math.inf, math.inf
    return x[k - 1], x[n - k]


def _min_rounds() -> int:
    n = 1
    while median_interval([0.0] * n) == (-math.inf, math.inf):
        n += 1
    return n


#: Fewest rounds whose interval can exclude 1 at ``CONFIDENCE`` (6 at 95 %).
MIN_ROUNDS = _min_rounds()


def gap(a: Any, b: Any) -> Gap | None:
    """How many times faster ``a`` ran than ``b`` (objects with ``rounds``, a list of
    :class:`Rounds`) in the latest run that timed both; None when no run did."""
    mine = {r.run: r for r in getattr(a, "rounds", None) or ()}
    for theirs in reversed(getattr(b, "rounds", None) or ()):
        ours = mine.get(theirs.run)
        if ours is None:
            continue
        n = len(ours.times)
        if n != len(theirs.times) or n == 0 or min(ours.times + theirs.times) <= 0:
            return None
        logs = [math.log(t / o) for o, t in zip(ours.times, theirs.times, strict=True)]
        ratio = math.exp(statistics.median(logs))
        lo, hi = median_interval(logs)
        if n < MIN_ROUNDS:
            return Gap(ratio, ratio / UNPAIRED, ratio * UNPAIRED, n, measured=False)
        return Gap(ratio, math.exp(lo), math.exp(hi), n, measured=True)
    return None


def told_apart(a: Any, b: Any) -> bool:
    """``a`` is faster than ``b`` by more than the noise of the run that timed both."""
    g = gap(a, b)
    return g is not None and g.low > 1.0


def equal(a: Any, b: Any) -> bool:
    """The same run timed both and cannot tell either from the other."""
    g = gap(a, b)
    return g is not None and g.low <= 1.0 <= g.high


def not_faster(cand: Any, base: Any) -> str | None:
    """None when ``cand`` is faster than the baseline beyond the noise; else why not (for
    the table), or "" when it is simply not faster (nothing to say)."""
    speed = cand.record.speedup or 0.0
    g = gap(cand, base)
    if g is None:  # never timed beside the baseline: its speedup against ×UNPAIRED
        g = Gap(speed, speed / UNPAIRED, speed * UNPAIRED, 0, measured=False)
    elif g.measured:
        cand.record.speedup_interval = [round(g.low, 4), round(g.high, 4)]
    if g.low > 1.0:
        return None
    if speed <= 1.0:
        return ""
    return f"not told apart from the baseline: ×{speed:.2f}, but {g.describe()}"


def only_enables(cand: Any) -> str | None:
    """Why a candidate made only of levers that run the user's ops as they were
    (``Lever.enables_only``: the code made traceable, nothing compiled on top) is no pick,
    however its rounds came out; None for any other candidate. Held-out round 13's c09: such
    a candidate was picked and shown at 1.00× the user's own function."""
    levers = tuple(getattr(cand, "levers", ()))
    if not levers or not all(getattr(lv, "enables_only", False) for lv in levers):
        return None
    speed = cand.record.speedup or 0.0
    return (f"runs the user's ops as they were (it only lets tf.function or XLA trace them): "
            f"×{speed:.2f} alone is no gain to pick")


def idle_enablers(cand: Any, kept: Sequence[Any]) -> str | None:
    """Why a candidate whose ``enables_only`` levers have nothing that traces on top (no
    tf.function, no XLA) is no pick when the candidate of its other levers alone was also
    kept: the enablers only let a trace happen, so the two run the same ops and a gap between
    them is the run's noise (stop 44: round 14's c14 picked ``traceable + array writes``
    over the array writes alone). None for any other candidate."""
    levers = tuple(getattr(cand, "levers", ()))
    enablers = [lv for lv in levers if getattr(lv, "enables_only", False)]
    if not enablers or len(enablers) == len(levers) \
            or any(getattr(lv, "traces", False) for lv in levers):
        return None
    rest = [lv.name for lv in levers if not getattr(lv, "enables_only", False)]
    twin = next((c for c in kept if c is not cand
                 and [lv.name for lv in getattr(c, "levers", ())] == rest), None)
    if twin is None:
        return None
    return (f"{' + '.join(lv.name for lv in enablers)} only lets tf.function or XLA trace "
            f"the code and neither is on top: the same ops as {' + '.join(rest)} alone")


def break_tie(tied: Sequence[Any], lint_counts: Sequence[int]) -> Any:
    """The pick among candidates that beat the baseline (``tied[i].record``, ``.levers``,
    ``.rounds``, with ``lint_counts[i]`` findings in its patched file): steps 2 and 3 of the
    module docstring."""
    speed = [c.record.speedup or 0.0 for c in tied]
    fastest = max(range(len(tied)), key=lambda i: speed[i])
    equals = [i for i in range(len(tied))
              if i == fastest or equal(tied[fastest], tied[i])]
    pick = min(equals, key=lambda i: (_precision(tied[i]), len(tied[i].record.levers),
                                      lint_counts[i], -speed[i], i != fastest))
    if pick != fastest:
        g = gap(tied[fastest], tied[pick])
        assert g is not None  # equal() held
        if _precision(tied[fastest]) > _precision(tied[pick]):
            what = "no precision change"
        elif len(tied[fastest].record.levers) > len(tied[pick].record.levers):
            what = "fewer levers"
        else:
            what = "lint flags it less"
        tied[pick].record.notes.append(
            f"picked over {tied[fastest].record.name} ({speed[fastest]:.2f}×): this run "
            f"cannot tell them apart (its speed over this one's ×{g.ratio:.2f}, "
            f"{g.describe()}); {what}")
    return tied[pick]


def _precision(live: Any) -> int:
    """1 when the candidate computes in a reduced dtype (a change of its numbers)."""
    return int(any(getattr(lv, "reduced_precision", False) for lv in getattr(live, "levers", ())))
