"""What every claim module of the article suite shares: the claim row, verdicts, a context."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tfperf.bench.comparison import compare
from tfperf.bench.result import CompareResult

HOLDS = "holds"
DOES_NOT_HOLD = "does not hold"
NOT_APPLICABLE = "not applicable here"
VERDICTS = (HOLDS, DOES_NOT_HOLD, NOT_APPLICABLE)


@dataclass
class Claim:
    """One row: the article's figure (a claim, quoted), the figure measured here, a verdict."""

    id: str
    claim: str
    article: str
    measured: float | None
    unit: str
    verdict: str
    reason: str
    details: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"{self.id}: verdict {self.verdict!r} is not one of {VERDICTS}")

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "claim": self.claim, "article": self.article,
                "measured": self.measured, "unit": self.unit, "verdict": self.verdict,
                "reason": self.reason, "details": self.details}


@dataclass
class Context:
    """Settings for one suite run, and the comparisons it made (for plots)."""

    quick: bool
    gpu: bool
    budget: float
    comparisons: dict[str, CompareResult] = field(default_factory=dict)
    scaled: list[str] = field(default_factory=list)  # what --quick scaled down, said aloud

    def compare(self, key: str, variants: Any, args: Sequence[Any] = (),
                baseline: str | None = None, **kw: Any) -> CompareResult:
        result = compare(variants, args, baseline=baseline, budget=self.budget,
                         quick=self.quick, **kw)
        self.comparisons[key] = result
        return result


def speedup(result: CompareResult, name: str) -> float | None:
    """Baseline time over ``name``'s time, or None when either failed."""
    v = result[name]
    return v.speedup if not v.error else None


def failed_variants(result: CompareResult) -> str:
    bad = [f"{v.name}: {v.error}" for v in result.variants if v.error]
    bad += [f"{v.name}: not equivalent ({v.equivalence_note})" for v in result.variants
            if v.equivalent is False]
    return "; ".join(bad)


def _ratio(x: float) -> str:
    return f"{x:,.0f}×" if x >= 1000 else f"{x:.3g}×"


def ratio_verdict(measured: float | None, at_least: float, what: str,
                  failure: str = "") -> tuple[str, str]:
    """``holds`` when ``measured ≥ at_least``; the reason quotes both."""
    if measured is None:
        return NOT_APPLICABLE, f"could not be measured: {failure or 'a variant failed'}"
    if measured >= at_least:
        return HOLDS, f"{what}: {_ratio(measured)} (≥ {at_least:g}× counts as holding)"
    return DOES_NOT_HOLD, f"{what}: {_ratio(measured)} (< {at_least:g}× needed)"
