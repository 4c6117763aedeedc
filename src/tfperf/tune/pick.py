"""The pick: which agreeing candidate becomes the patch, by the noise of the run that timed it.

A speedup is a median of per-round ratios from one interleaved run (bench's ``compare``, or
the alternating rounds of isolated processes). How far those ratios spread is the noise of
that run on this machine at that moment: on a shared 2-core machine a 15 % gain can be
noise, on a quiet one 3 % is not. So no fixed margin decides; the rounds do:

1. **Faster than the baseline**: the bootstrap interval (:func:`tfperf.bench.significance.
   bootstrap_paired`, ``CONFIDENCE``) of the candidate's per-round speedup lies above 1.
   A candidate never timed in the same rounds as the baseline (a slow baseline, timed by
   one call) has no such interval: it must be ``UNPAIRED`` times faster, the factor the
   search already calls too close to tell by one call.
2. **Lint first** (``TIE``): among those within ``TIE`` of the fastest, the one whose patched
   file lint flags least, the fastest of those: a Python loop left in a ``tf.function`` is
   unrolled into its graph, whose trace time grows with the batch. A preference, not noise.
3. **The safest of the equals**: every candidate the same run cannot tell apart from that
   one (the interval of their per-round ratio contains 1), lint flagging it no more, is its
   equal; among equals the patch that changes least wins: no precision change, then fewer
   levers, then the faster. A candidate not timed in the same rounds is nobody's equal.

Each decision that is not simply "the fastest" is noted on the picked candidate's record.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tfperf.bench.significance import RatioInterval, bootstrap_paired

#: Confidence of the bootstrap interval of a per-round ratio.
CONFIDENCE = 0.95
#: Within this factor of the fastest, the candidate lint flags least is preferred.
TIE = 1.25
#: Without interleaved rounds beside the baseline, a candidate must be this much faster
#: (the search's ``CLOSE``: what one call against another cannot tell apart).
UNPAIRED = 1.5


@dataclass(frozen=True)
class Rounds:
    """A candidate's time per round (seconds per call) in one interleaved run, in order; a
    candidate keeps one per run it took part in."""

    run: int  # which run: ratios pair only within one
    times: tuple[float, ...]


def faster(a: Any, b: Any) -> tuple[RatioInterval, int] | None:
    """How many times faster ``a`` ran than ``b`` (objects with ``rounds``, a list of
    :class:`Rounds`) in the latest run that timed both: the median of ``b_i / a_i`` over its
    rounds with its interval, and the number of rounds; None when no run timed both in at
    least two rounds."""
    mine = {r.run: r for r in getattr(a, "rounds", None) or ()}
    for theirs in reversed(getattr(b, "rounds", None) or ()):
        ours = mine.get(theirs.run)
        if ours is None:
            continue
        n = len(ours.times)
        if n != len(theirs.times) or n < 2 or min(ours.times + theirs.times) <= 0:
            return None
        return bootstrap_paired(ours.times, theirs.times, confidence=CONFIDENCE), n
    return None


def told_apart(a: Any, b: Any) -> bool:
    """``a`` is faster than ``b`` by more than the noise of the run that timed both."""
    got = faster(a, b)
    return got is not None and got[0].low > 1.0


def equal(a: Any, b: Any) -> bool:
    """The same run timed both and cannot tell either from the other."""
    got = faster(a, b)
    return got is not None and got[0].low <= 1.0 <= got[0].high


def describe(iv: RatioInterval, n: int) -> str:
    return f"×{iv.low:.2f}–×{iv.high:.2f} over {n} rounds of one run ({iv.confidence:.0%})"


def not_faster(cand: Any, base: Any) -> str | None:
    """None when ``cand`` is faster than the baseline beyond the noise; else why not (for
    the table), or "" when it is simply not faster (nothing to say)."""
    speed = cand.record.speedup or 0.0
    got = faster(cand, base)
    if got is not None:
        iv, n = got
        cand.record.speedup_interval = [round(iv.low, 4), round(iv.high, 4)]
        if iv.low > 1.0:
            return None
        if speed <= 1.0:
            return ""
        return f"not told apart from the baseline: ×{speed:.2f}, but {describe(iv, n)}"
    if speed >= UNPAIRED:
        return None
    if speed <= 1.0:
        return ""
    return (f"not told apart from the baseline: ×{speed:.2f} without interleaved rounds "
            f"beside it; one call against another must differ by ×{UNPAIRED:g}")


def break_tie(tied: Sequence[Any], lint_counts: Sequence[int]) -> Any:
    """The pick among candidates that beat the baseline (``tied[i].record``, ``.levers``,
    ``.rounds``, with ``lint_counts[i]`` findings in its patched file): steps 2 and 3 of the
    module docstring."""
    speed = [c.record.speedup or 0.0 for c in tied]
    fastest = max(range(len(tied)), key=lambda i: speed[i])
    window = [i for i in range(len(tied)) if speed[i] * TIE >= speed[fastest]]
    best = min(window, key=lambda i: (lint_counts[i], -speed[i]))
    if best != fastest:
        tied[best].record.notes.append(f"picked among {len(window)} candidates within "
                                       f"{TIE:.2f}× of the fastest: lint flags it least")
    equals = [i for i in range(len(tied)) if i == best or (
        lint_counts[i] <= lint_counts[best] and equal(tied[best], tied[i]))]
    safest = min(equals, key=lambda i: (_precision(tied[i]), len(tied[i].record.levers),
                                        lint_counts[i], -speed[i]))
    if safest != best:
        got = faster(tied[best], tied[safest])
        assert got is not None  # equal() held
        what = "no precision change" if _precision(tied[best]) > _precision(tied[safest]) \
            else "fewer levers"
        tied[safest].record.notes.append(
            f"picked over {tied[best].record.name} ({speed[best]:.2f}×): this run cannot tell "
            f"them apart (its speed over this one's {describe(*got)}); {what}")
    return tied[safest]


def _precision(live: Any) -> int:
    """1 when the candidate computes in a reduced dtype (a change of its numbers)."""
    return int(any(getattr(lv, "reduced_precision", False) for lv in getattr(live, "levers", ())))
