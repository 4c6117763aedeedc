"""What an article-suite run found, as data: the claims with their verdicts, the run's status.

Rendering lives in :mod:`tfperf.bench.report` (``SuiteReport``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tfperf.bench.result import CompareResult
from tfperf.bench.suite.verdict import NOT_MEASURED, VERDICTS, Claim
from tfperf.core import render


@dataclass
class SuiteResult:
    machine: dict[str, Any]
    claims: list[Claim]
    quick: bool
    elapsed_s: float
    comparisons: Mapping[str, CompareResult] = field(default_factory=dict)
    scaled: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def not_measured(self) -> list[Claim]:
        return [c for c in self.claims if c.verdict == NOT_MEASURED]

    @property
    def exit_status(self) -> int:
        """1 when a claim module crashed or a claim is ``not measured``, else 0."""
        return 1 if self.errors or self.not_measured else 0

    def verdict_counts(self) -> dict[str, int]:
        return {v: sum(c.verdict == v for c in self.claims) for v in VERDICTS}

    def to_dict(self) -> dict[str, Any]:
        return {"machine": self.machine, "quick": self.quick, "elapsed_s": self.elapsed_s,
                "scaled_down": self.scaled, "errors": self.errors,
                "verdicts": self.verdict_counts(),
                "claims": [c.to_dict() for c in self.claims],
                "roofline": {key: {v.name: v.roofline for v in res.variants if v.roofline}
                             for key, res in self.comparisons.items()
                             if any(v.roofline for v in res.variants)} or None}

    def to_json(self, indent: int | None = 2) -> str:
        return render.to_json(self.to_dict(), indent=indent)


__all__ = ["SuiteResult"]
