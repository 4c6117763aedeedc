"""What a comparison found, as data: per-variant outcomes and the run's exit status.

Rendering (text table, Markdown, plot) lives in :mod:`tfperf.bench.report`; this module knows
nothing of it, so data flows one way: comparison → result → report.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tfperf.bench.counters import Counters
from tfperf.bench.equivalence import Equivalence
from tfperf.core import render
from tfperf.core.measure import Measurement


@dataclass
class VariantResult:
    """One variant's outcome. ``status``: ok | slow (ran once) | error | timeout.

    ``equivalence``: its outputs against the baseline's (or the float64 reference's);
    ``gradient``: the same check on its gradients (``grad=True``). Both None for the baseline
    and when the check was not made (``not_checked`` says why).
    """

    name: str
    status: str = "ok"
    measurement: Measurement | None = None
    first_call_s: float | None = None
    ratio_to_baseline: float | None = None
    speedup: float | None = None
    ratio_method: str = ""
    equivalence: Equivalence | None = None
    gradient: Equivalence | None = None
    not_checked: str = ""
    error: str | None = None
    scale: float = 1.0
    notes: list[str] = field(default_factory=list)
    memory: dict[str, Any] = field(default_factory=dict)
    roofline: dict[str, Any] = field(default_factory=dict)
    counters: Counters | None = None  # with compare(counters=True)

    @property
    def checks(self) -> list[Equivalence]:
        return [e for e in (self.equivalence, self.gradient) if e is not None]

    @property
    def equivalent(self) -> bool | None:
        """False if any check failed; None if none was made or one could not compare."""
        checks = self.checks
        if not checks:
            return None
        if any(e.equivalent is False for e in checks):
            return False
        if any(e.equivalent is None for e in checks):
            return None
        return True

    @property
    def unchecked(self) -> bool:
        """A check was attempted and could not compare (not: deliberately not made)."""
        return any(e.equivalent is None for e in self.checks) and self.equivalent is not False

    @property
    def equivalence_note(self) -> str:
        """Why the variant is not equivalent or not checked; empty when it agrees."""
        parts = [f"{label}{e.reason}" for label, e in (("", self.equivalence),
                                                       ("gradients: ", self.gradient))
                 if e is not None and e.reason]
        return "; ".join(parts) or self.not_checked

    @property
    def max_abs_err(self) -> float | None:
        return self.equivalence.max_abs_err if self.equivalence else None

    @property
    def max_rel_err(self) -> float | None:
        return self.equivalence.max_rel_err if self.equivalence else None

    @property
    def median_s(self) -> float | None:
        if self.measurement is None or not self.measurement.times:
            return None
        return self.measurement.median * self.scale

    @property
    def iqr_s(self) -> float | None:
        if self.measurement is None or self.measurement.runs < 2:
            return None
        return self.measurement.iqr * self.scale

    def to_dict(self) -> dict[str, Any]:
        m = self.measurement
        e = self.equivalence
        return {
            "name": self.name,
            "status": self.status,
            "median_s": self.median_s,
            "iqr_s": self.iqr_s,
            "min_s": m.min * self.scale if m and m.times else None,
            "runs": m.runs if m else 0,
            "number": m.number if m else 0,
            "first_call_s": self.first_call_s,
            "ratio_to_baseline": self.ratio_to_baseline,
            "speedup": self.speedup,
            "ratio_method": self.ratio_method,
            "equivalent": self.equivalent,
            "max_abs_err": e.to_dict()["max_abs_err"] if e else None,
            "max_rel_err": e.to_dict()["max_rel_err"] if e else None,
            "equivalence_note": self.equivalence_note,
            "equivalence": e.to_dict() if e else None,
            "gradient_equivalence": self.gradient.to_dict() if self.gradient else None,
            "error": self.error,
            "scale": self.scale,
            "warning": m.warning if m and self.status == "ok" else None,
            "notes": list(self.notes),
            "memory": self.memory,
            "roofline": self.roofline,
            "counters": self.counters.to_dict() if self.counters else None,
        }


@dataclass
class CompareResult:
    machine: dict[str, Any]
    baseline: str
    variants: list[VariantResult]
    settings: dict[str, Any] = field(default_factory=dict)
    peaks: dict[str, Any] | None = None
    yardstick_s: list[float] | None = None  # per round, with compare(yardstick=...)

    def __getitem__(self, name: str) -> VariantResult:
        for v in self.variants:
            if v.name == name:
                return v
        raise KeyError(name)

    @property
    def mismatches(self) -> list[VariantResult]:
        return [v for v in self.variants if v.equivalent is False]

    @property
    def unchecked(self) -> list[VariantResult]:
        """Variants whose outputs could not be compared (``equivalent`` null)."""
        return [v for v in self.variants if v.unchecked and not v.error]

    @property
    def errors(self) -> list[VariantResult]:
        return [v for v in self.variants if v.error]

    @property
    def allow_unchecked(self) -> bool:
        return bool(self.settings.get("allow_unchecked"))

    @property
    def exit_status(self) -> int:
        """1 when a variant failed, computes something else, or could not be checked (unless
        ``allow_unchecked``), else 0."""
        if self.mismatches or self.errors:
            return 1
        return 1 if self.unchecked and not self.allow_unchecked else 0

    def to_dict(self) -> dict[str, Any]:
        return {"machine": self.machine, "baseline": self.baseline,
                "variants": [v.to_dict() for v in self.variants],
                "settings": self.settings, "peaks": self.peaks}

    def to_json(self, indent: int | None = 2) -> str:
        return render.to_json(self.to_dict(), indent=indent)


__all__ = ["CompareResult", "VariantResult"]
