"""What every claim module of the article suite is handed: settings, comparisons, verdicts.

A claim module (``tfperf/bench/suite/claims/*.py``) compares variants through
:meth:`Context.compare` and turns its figure into a :class:`Claim` through
:meth:`Context.claim`, which alone decides the verdict: a variant of the comparisons the
claim *uses* that raised, timed out, disagreed with its baseline or could not be checked
makes the claim ``not measured``, whatever the module computed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tfperf.bench.comparison import Variant, compare
from tfperf.bench.report import CompareReport
from tfperf.bench.result import CompareResult
from tfperf.bench.suite.verdict import Claim, Figure, judge


@dataclass
class Context:
    """Settings for one suite run, and the comparisons it made (for plots and JSON).

    ``inject``: extra variants per comparison key, added to that comparison as they are (a
    test's way to put a raising or a wrong variant into a real claim).
    ``workdir``: a private folder for files a claim writes (S19's records), removed after.
    """

    quick: bool
    gpu: bool
    budget: float
    workdir: Path | None = None
    inject: Mapping[str, Mapping[str, Callable[..., Any]]] = field(default_factory=dict)
    comparisons: dict[str, CompareReport] = field(default_factory=dict)
    scaled: list[str] = field(default_factory=list)  # what --quick scaled down, said aloud
    roofline: bool = False  # --roofline: each variant's FLOPs counted, against the right roof

    def compare(self, key: str, variants: Mapping[str, Any] | Sequence[Variant],
                args: Sequence[Any] = (), baseline: str | None = None, *,
                expect_different: Iterable[str] = (), budget: float | None = None,
                **kw: Any) -> CompareReport:
        """``tfperf.bench.compare`` with the suite's budget (or ``budget``, for a claim whose
        calls are long); ``expect_different`` names variants that are meant to compute
        something else (S20's wrong axis)."""
        listed: list[Any] = (list(variants.items()) if isinstance(variants, Mapping)
                             else list(variants))
        listed += list(self.inject.get(key, {}).items())
        as_variants = [v if isinstance(v, Variant) else Variant(v[0], v[1]) for v in listed]
        kw.setdefault("roofline", self.roofline)
        result = compare(as_variants, args, baseline=baseline, budget=budget or self.budget,
                         quick=self.quick, **kw)
        result.settings["suite_key"] = key
        result.settings["expect_different"] = sorted(expect_different)
        self.comparisons[key] = result
        return result

    def claim(self, id: str, claim: str, figure: Figure, measured: float | None, unit: str,
              what: str, *, using: Sequence[CompareResult] = (), unavailable: str | None = None,
              failures: Sequence[str] = (), details: dict[str, Any] | None = None) -> Claim:
        """The claim row with its verdict (see :func:`~tfperf.bench.suite.verdict.judge`).

        ``using``: the comparisons the figure comes from; each of their variants must have
        run and agreed. ``failures``: further reasons the figure is not valid.
        """
        bad = [*failures, *(f for r in using for f in variant_failures(r))]
        verdict, reason = judge(figure, measured, unit, what, failures=bad,
                                unavailable=unavailable)
        return Claim(id, claim, figure, measured, unit, verdict, reason,
                     variants=[summary for r in using for summary in variant_summaries(r)],
                     details=details or {})


def variant_failures(result: CompareResult) -> list[str]:
    """Why a comparison's figures are not valid: failed, disagreeing, unchecked variants."""
    expected = set(result.settings.get("expect_different") or ())
    out = []
    for v in result.variants:
        if v.error:
            out.append(f"{v.name!r} {v.status}: {v.error}")
        elif v.name in expected:
            if v.equivalent is not False:
                out.append(f"{v.name!r} was meant to differ from {result.baseline!r} but "
                           f"{'agrees' if v.equivalent else 'could not be checked'}")
        elif v.equivalent is False:
            out.append(f"{v.name!r} disagrees with {result.baseline!r}: "
                       f"{v.equivalence_note}")
        elif v.unchecked:
            out.append(f"{v.name!r} could not be checked: {v.equivalence_note}")
    return out


def variant_summaries(result: CompareResult) -> list[dict[str, Any]]:
    """What a reader needs to recompute a verdict: per variant, its time and its agreement."""
    key = result.settings.get("suite_key")
    return [{"comparison": key, "name": v.name, "baseline": v.name == result.baseline,
             "status": v.status, "median_s": v.median_s, "speedup": v.speedup,
             "equivalent": v.equivalent, "equivalence": v.equivalence_note or None,
             "error": v.error} for v in result.variants]


def speedup(result: CompareResult, name: str) -> float | None:
    """Baseline time over ``name``'s time, or None when either failed."""
    v = result[name]
    return v.speedup if not v.error else None


def time_ratio(result: CompareResult, slow: str, fast: str) -> float | None:
    """``slow``'s median time over ``fast``'s, or None when either has no time."""
    a, b = result[slow].median_s, result[fast].median_s
    return a / b if a and b else None


__all__ = ["Context", "speedup", "time_ratio", "variant_failures", "variant_summaries"]
