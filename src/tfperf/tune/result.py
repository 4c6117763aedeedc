"""What a tune run found, as data: every candidate (kept or rejected, with why), the best one,
and the patch. Rendering is the table here and JSON; nothing in it holds a live function, so
a result read back from the cache is the same object."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tfperf.core import render
from tfperf.core.measure import format_ratio, format_seconds


@dataclass
class CandidateResult:
    """One candidate. ``rejected``: why it cannot be picked (None: it ran and agrees)."""

    name: str
    levers: list[str]
    median_s: float | None = None
    first_call_s: float | None = None
    speedup: float | None = None
    break_even_calls: int | None = None
    equivalent: bool | None = None
    max_rel_err: float | None = None
    rejected: str | None = None
    round: str = "single"  # single | combination
    patch: str = ""
    notes: list[str] = field(default_factory=list)
    # Lower and upper quartile of a call's time, when it was timed in interleaved rounds.
    quartiles_s: list[float] | None = None
    # The speedup's interval (tune.pick.CONFIDENCE) from the per-round ratios of the latest
    # run that timed it beside the baseline; None when no run did.
    speedup_interval: list[float] | None = None

    @property
    def kept(self) -> bool:
        return self.rejected is None and self.median_s is not None

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        for key in ("median_s", "first_call_s", "speedup", "max_rel_err"):
            v = out[key]
            if isinstance(v, float) and not math.isfinite(v):
                out[key] = None
        return out


@dataclass
class TuneResult:
    """``best``: the picked candidate (None when nothing beat the baseline); ``patch``: its
    unified diff against the user's file (empty without a pick)."""

    function: str
    path: str
    machine: dict[str, Any]
    baseline: dict[str, Any]
    candidates: list[CandidateResult]
    best_name: str | None
    patch: str
    search_s: float
    budget_s: float
    device: dict[str, Any] = field(default_factory=dict)
    cache: str = "off"  # off | miss | hit
    patched_source: str = ""  # the whole file after the patch (for --apply; not in JSON)
    original_source: str = ""
    in_file: bool = True  # False: a function typed in a notebook cell (no file to patch)
    cell: int | None = None  # that cell's execution count, when IPython knows it
    # The picked function itself, live (None when read back from the cache).
    best_fn: Callable[..., Any] | None = field(default=None, repr=False, compare=False)

    @property
    def best(self) -> CandidateResult | None:
        return next((c for c in self.candidates if c.name == self.best_name), None)

    @property
    def rejected(self) -> list[CandidateResult]:
        return [c for c in self.candidates if c.rejected]

    def to_dict(self) -> dict[str, Any]:
        return {
            "function": self.function,
            "path": self.path,
            "machine": self.machine,
            "device": self.device,
            "baseline": self.baseline,
            "candidates": [c.to_dict() for c in self.candidates],
            "best": self.best_name,
            "patch": self.patch,
            "search_s": self.search_s,
            "budget_s": self.budget_s,
            "cache": self.cache,
            "in_file": self.in_file,
            "cell": self.cell,
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, allow_nan=False)

    def to_html(self) -> str:
        """The result as one self-contained HTML page (``tfperf tune --html``)."""
        from tfperf.core.html import report_page

        return report_page("tune", self.to_json())

    def _repr_html_(self) -> str:
        from tfperf.core.html import report_fragment

        return report_fragment("tune", self.to_json())

    def plot(self, path: str | Path, title: str | None = None) -> Path:
        """A PNG of the candidates (median and IQR per call, speedup and break-even calls;
        rejected ones with their reason); needs matplotlib (the ``plot`` extra), else
        :class:`tfperf.bench.plot.PlotError`."""
        from tfperf.tune.plot import plot_result

        return plot_result(self, Path(path), title)

    @classmethod
    def from_dict(cls, data: dict[str, Any], *, patched_source: str = "",
                  original_source: str = "") -> TuneResult:
        fields = CandidateResult.__dataclass_fields__
        cands = [CandidateResult(**{k: v for k, v in c.items() if k in fields})
                 for c in data["candidates"]]
        return cls(data["function"], data["path"], data["machine"], data["baseline"], cands,
                   data["best"], data["patch"], data["search_s"], data["budget_s"],
                   data.get("device", {}), data.get("cache", "off"), patched_source,
                   original_source, data.get("in_file", True), data.get("cell"))

    def table(self) -> str:
        """The candidates, best first, rejected last with their reason."""
        base = self.baseline
        rows = [["baseline", "-", format_seconds(base.get("median_s")),
                 "1×", format_seconds(base.get("first_call_s")), "-", "-", "-", ""]]
        kept = sorted((c for c in self.candidates if c.kept),
                      key=lambda c: -(c.speedup or 0.0))
        for c in kept + [c for c in self.candidates if not c.kept]:
            mark = "* " if c.name == self.best_name else ""
            rows.append([
                mark + c.name, str(len(c.levers)),
                format_seconds(c.median_s), format_ratio(c.speedup),
                format_seconds(c.first_call_s),
                "-" if c.break_even_calls is None else str(c.break_even_calls),
                {True: "yes", False: "NO", None: "-"}[c.equivalent],
                "-" if c.max_rel_err is None else f"{c.max_rel_err:.2g}",
                c.rejected or "",
            ])
        head = ["candidate", "levers", "median", "speedup", "first call", "break-even",
                "equivalent", "max rel err", "why rejected"]
        where = self.path if self.in_file else (
            f"cell {self.cell}" if self.cell is not None else self.path)
        lines = [f"tune {where}:{self.function}  ({self.search_s:.1f} s of a "
                 f"{self.budget_s:g} s budget{', cached' if self.cache == 'hit' else ''})",
                 render.text_table(head, rows)]
        best = self.best
        if best is None:
            lines.append("no candidate beat the baseline and agreed with it: nothing to change")
        else:
            lines.append(f"best: {best.name} ({format_ratio(best.speedup)} the baseline's speed"
                         + (f"; pays back its first call after {best.break_even_calls} calls"
                            if best.break_even_calls else "") + ")")
            # Why this one and what its figure rests on (`picked over X (93.48×): this run
            # cannot tell them apart …`): docs/tune.md promises these notes in the table;
            # only the roofline one was shown, and a faster row stood unexplained above it.
            lines += [f"  {n}" for n in best.notes if not n.startswith("roofline:")]
        if self.baseline.get("roofline"):
            lines.append(f"baseline {self.baseline['roofline']}")
        if self.baseline.get("varied_inputs"):
            lines.append(f"equivalence: {self.baseline['varied_inputs']}")
        if best is not None:
            lines += [f"{best.name} {n}" for n in best.notes if n.startswith("roofline:")]
        n_rej = len(self.rejected)
        if n_rej:
            lines.append(f"{n_rej} rejected (the last column says why)")
        return "\n".join(lines)


def quartiles(variant: Any) -> list[float] | None:
    """``[q1, q3]`` of one call's time from a timed variant (bench's ``VariantResult``)."""
    m = getattr(variant, "measurement", None)
    times = sorted(getattr(m, "times", ()) or ())
    if len(times) < 2:
        return None
    import statistics

    q1, _, q3 = statistics.quantiles(times, n=4, method="inclusive")
    scale = getattr(variant, "scale", 1.0)
    return [q1 * scale, q3 * scale]
