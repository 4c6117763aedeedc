"""The five verdict words, the article's figure as a bound, and the rule that joins them.

A claim's verdict comes from :func:`judge` only, from figures of this run:

- ``not measured``: a variant the claim relies on raised, timed out, disagreed with the
  baseline or could not be checked (the reason names it, with its error); or no figure came
  out. The suite's exit status is then 1.
- ``not applicable here``: the machine or build lacks what the claim is about (a GPU, for a
  claim about PCIe copies); the reason says what, and still gives what was measured.
- ``holds``: the measured figure reaches the article's own figure (its lower bound, in the
  claim's direction). For a claim without a figure, the direction beyond the noise margin.
- ``direction holds``: the same direction as the article (beyond the noise margin), short of
  its figure; the reason gives both numbers.
- ``does not hold``: the other way, or no effect beyond the noise margin.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tfperf.core.measure import format_ratio

HOLDS = "holds"
DIRECTION_HOLDS = "direction holds"
DOES_NOT_HOLD = "does not hold"
NOT_APPLICABLE = "not applicable here"
NOT_MEASURED = "not measured"
VERDICTS = (HOLDS, DIRECTION_HOLDS, DOES_NOT_HOLD, NOT_APPLICABLE, NOT_MEASURED)

#: A ratio within this fraction of "no effect" (1×) is no effect: noise on a shared machine.
NOISE_MARGIN = 0.05


@dataclass(frozen=True)
class Figure:
    """What the article says, in the unit of the measured figure.

    ``text``: the article's words, quoted. ``value``: its figure (a number, a (low, high)
    range, or None when it gives none). ``bound``: what ``holds`` needs (the figure's lower
    end in the claim's direction; for a claim without a figure, None: the direction suffices).
    ``neutral``: the no-effect value (1 for ratios, 0 for percentages). ``higher``: whether
    the claim says the figure is high (a speedup) or low (a time growth that stays flat).
    """

    text: str
    value: float | tuple[float, float] | None = None
    bound: float | None = None
    neutral: float = 1.0
    higher: bool = True
    margin: float = NOISE_MARGIN
    directional: bool = True  # False: an absolute figure (a time), nothing to hold or not

    @property
    def direction_threshold(self) -> float:
        """The smallest figure (largest, if ``higher`` is False) showing the direction."""
        if self.neutral == 0:
            return self.margin * 100 if self.higher else -self.margin * 100
        return self.neutral * (1 + self.margin) if self.higher else self.neutral * (1 - self.margin)

    @property
    def threshold(self) -> float | None:
        """What ``holds`` needs; None for an absolute figure."""
        if self.bound is not None:
            return self.bound
        return self.direction_threshold if self.directional else None

    def reaches(self, x: float, limit: float) -> bool:
        return x >= limit if self.higher else x <= limit

    def to_dict(self) -> dict[str, Any]:
        value: Any = list(self.value) if isinstance(self.value, tuple) else self.value
        return {"text": self.text, "value": value, "threshold": self.threshold,
                "direction": "at least" if self.higher else "at most"}


@dataclass
class Claim:
    """One row: the article's figure (a claim, quoted), the figure measured here, a verdict."""

    id: str
    claim: str
    figure: Figure
    measured: float | None
    unit: str
    verdict: str
    reason: str
    variants: list[dict[str, Any]] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"{self.id}: verdict {self.verdict!r} is not one of {VERDICTS}")

    @property
    def article(self) -> str:
        return self.figure.text

    def to_dict(self) -> dict[str, Any]:
        value = self.figure.value
        return {"id": self.id, "claim": self.claim, "article": self.figure.text,
                "article_value": list(value) if isinstance(value, tuple) else value,
                "threshold": self.figure.threshold,
                "direction": "at least" if self.figure.higher else "at most",
                "measured": self.measured, "unit": self.unit, "verdict": self.verdict,
                "reason": self.reason, "variants": self.variants, "details": self.details}


def show(x: float, unit: str, beside: tuple[float, ...] = ()) -> str:
    """A figure in its unit: ``×`` ratios as ``3.99×``, others as ``12.3 ms``. With
    ``beside`` (thresholds), enough digits that none prints like ``x``."""
    digits = 3
    while digits < 6 and any(x != t and f"{x:.{digits}g}" == f"{t:.{digits}g}"
                             for t in beside):
        digits += 1
    if unit.startswith("×"):
        return format_ratio(x) if digits == 3 else f"{x:.{digits}g}×"
    text = f"{x:,.0f}" if abs(x) >= 1000 else f"{x:.{digits}g}"
    return f"{text} {unit.split(' (')[0]}".strip()


def judge(figure: Figure, measured: float | None, unit: str, what: str, *,
          failures: list[str] | None = None, unavailable: str | None = None) -> tuple[str, str]:
    """(verdict, reason) for ``measured`` against ``figure``; see the module docstring.

    ``what`` says what was measured (``"tf.function over eager on a 12-op step"``).
    ``failures``: variants that raised, disagreed or could not be checked (→ not measured).
    ``unavailable``: what this machine lacks for the claim (→ not applicable here).
    """
    if failures:
        return NOT_MEASURED, f"{what}: not measured: " + "; ".join(failures)
    if measured is None:
        return NOT_MEASURED, f"{what}: no figure came out of the run"
    limits = tuple(t for t in (figure.threshold, figure.direction_threshold) if t is not None)
    here = f"{what}: {show(measured, unit, limits)} here"
    if unavailable:
        return NOT_APPLICABLE, f"{unavailable}; {here}"
    if figure.threshold is None:
        return NOT_APPLICABLE, f"{here}; the article's {figure.text} is an absolute figure"
    said = f"the article says {figure.text}"
    sign = "≥" if figure.higher else "≤"
    if figure.bound is not None:
        if figure.reaches(measured, figure.bound):
            return HOLDS, f"{here}, {sign} {show(figure.bound, unit)} ({said})"
        if figure.reaches(measured, figure.direction_threshold):
            return DIRECTION_HOLDS, (f"{here}: the same direction, short of the article's "
                                     f"{show(figure.bound, unit)} ({said})")
        return DOES_NOT_HOLD, (f"{here}: not beyond the noise margin of "
                               f"{show(figure.direction_threshold, unit)} ({said})")
    if figure.reaches(measured, figure.direction_threshold):
        return HOLDS, (f"{here}, {sign} {show(figure.direction_threshold, unit)} "
                       f"(the article gives no figure; the direction is the claim)")
    return DOES_NOT_HOLD, (f"{here}: not beyond the noise margin of "
                           f"{show(figure.direction_threshold, unit)} "
                           "(the article gives no figure; the direction is the claim)")


__all__ = ["DIRECTION_HOLDS", "DOES_NOT_HOLD", "HOLDS", "NOISE_MARGIN", "NOT_APPLICABLE",
           "NOT_MEASURED", "VERDICTS", "Claim", "Figure", "judge", "show"]
