"""What a comparison found, and its renderings: text table, JSON, Markdown, plot."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tfperf.bench.machine import machine_line
from tfperf.core import render
from tfperf.core.measure import Measurement, format_seconds


@dataclass
class VariantResult:
    """One variant's outcome. ``status``: ok | slow (ran once) | error | timeout."""

    name: str
    status: str = "ok"
    measurement: Measurement | None = None
    first_call_s: float | None = None
    ratio_to_baseline: float | None = None
    speedup: float | None = None
    ratio_method: str = ""
    equivalent: bool | None = None
    max_abs_err: float | None = None
    max_rel_err: float | None = None
    equivalence_note: str = ""
    error: str | None = None
    scale: float = 1.0
    notes: list[str] = field(default_factory=list)
    memory: dict[str, Any] = field(default_factory=dict)
    roofline: dict[str, Any] = field(default_factory=dict)

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
            "max_abs_err": self.max_abs_err,
            "max_rel_err": self.max_rel_err,
            "equivalence_note": self.equivalence_note,
            "error": self.error,
            "scale": self.scale,
            "warning": m.warning if m and self.status == "ok" else None,
            "notes": list(self.notes),
            "memory": self.memory,
            "roofline": self.roofline,
        }


@dataclass
class CompareResult:
    machine: dict[str, Any]
    baseline: str
    variants: list[VariantResult]
    settings: dict[str, Any] = field(default_factory=dict)
    peaks: dict[str, Any] | None = None

    def __getitem__(self, name: str) -> VariantResult:
        for v in self.variants:
            if v.name == name:
                return v
        raise KeyError(name)

    @property
    def mismatches(self) -> list[VariantResult]:
        return [v for v in self.variants if v.equivalent is False]

    @property
    def errors(self) -> list[VariantResult]:
        return [v for v in self.variants if v.error]

    @property
    def exit_status(self) -> int:
        """1 when a variant computes something else or failed, else 0."""
        return 1 if self.mismatches or self.errors else 0

    def to_dict(self) -> dict[str, Any]:
        return {"machine": self.machine, "baseline": self.baseline,
                "variants": [v.to_dict() for v in self.variants],
                "settings": self.settings, "peaks": self.peaks}

    def to_json(self, indent: int | None = 2) -> str:
        return render.to_json(self.to_dict(), indent=indent)

    # -- tables -------------------------------------------------------------------------------

    _HEADERS = ("variant", "median", "± IQR/2", "runs", "first call", "speedup", "equivalent",
                "max rel err")
    _ALIGN = "lrrrrrll"

    def _rows(self) -> list[list[str]]:
        rows = []
        for v in self.variants:
            fig = v.measurement.significant_figures if v.measurement else 3
            name = v.name + (" (baseline)" if v.name == self.baseline else "")
            if v.error:
                rows.append([name, v.status.upper(), "", "", _fmt_s(v.first_call_s), "", "",
                             ""])
                continue
            runs = v.measurement.runs if v.measurement else 0
            runs_s = f"{runs}×{v.measurement.number}" if v.measurement and runs else "0"
            if v.status == "slow":
                runs_s = "1 (slow)"
            iqr = v.iqr_s
            rows.append([
                name,
                format_seconds(v.median_s, max(2, min(fig, 4))),
                format_seconds(iqr / 2, 2) if iqr is not None else "–",
                runs_s,
                _fmt_s(v.first_call_s),
                format_ratio(v.speedup),
                _equiv_cell(v),
                f"{v.max_rel_err:.1e}" if v.max_rel_err is not None else "–",
            ])
        return rows

    def _footnotes(self) -> list[str]:
        notes = []
        for v in self.variants:
            if v.error:
                notes.append(f"{v.name}: {v.status}: {v.error}")
            if v.equivalent is False:
                notes.append(f"{v.name}: NOT EQUIVALENT to {self.baseline}: "
                             f"{v.equivalence_note}")
            notes.extend(f"{v.name}: {n}" for n in v.notes)
            m = v.measurement
            if m is not None and v.status == "ok" and m.warning:
                notes.append(f"{v.name}: {m.warning}")
            if v.memory.get("peak_bytes") is not None:
                notes.append(f"{v.name}: peak memory {_fmt_bytes(v.memory['peak_bytes'])} "
                             f"({v.memory.get('source')})")
            r = v.roofline
            if r.get("gb_per_s"):
                pct = r.get("pct_peak_bandwidth")
                pct_s = f", {pct:.0f} % of peak" if pct is not None else ""
                extra = ""
                if r.get("gflop_per_s"):
                    pf = r.get("pct_peak_flops")
                    extra = f"; {r['gflop_per_s']:.3g} GFLOP/s" + (
                        f" ({pf:.0f} % of peak)" if pf is not None else "")
                notes.append(f"{v.name}: ≥ {r['gb_per_s']:.3g} GB/s moved{pct_s}{extra}")
        return notes

    def table(self, color: bool = False) -> str:
        lines = [render.style("tfperf bench", "bold", color=color) + "  " +
                 machine_line(self.machine)]
        if self.settings.get("quick"):
            lines.append("quick mode: fewer runs, shorter budget; see notes for scaled variants")
        lines += ["", render.text_table(self._HEADERS, self._rows(), self._ALIGN)]
        if self.peaks:
            lines.append(f"\nmachine peaks ({self.peaks.get('device')}): "
                         f"{self.peaks['bandwidth_gbs']:.3g} GB/s, "
                         f"{self.peaks['matmul_gflops']:.3g} GFLOP/s matmul"
                         f"{' (cached)' if self.peaks.get('cached') else ''}")
        notes = self._footnotes()
        if notes:
            lines.append("")
            for n in notes:
                loud = "NOT EQUIVALENT" in n or ": error:" in n or ": timeout:" in n
                lines.append(render.style("! " + n, "red", "bold", color=color) if loud
                             else "  " + n)
        lines.append("\n" + self.speedup_legend())
        return "\n".join(lines)

    def speedup_legend(self) -> str:
        methods = {v.ratio_method for v in self.variants if v.ratio_method
                   and v.ratio_method != "baseline"}
        how = "; ".join(sorted(methods)) or "no ratio"
        return f"speedup = baseline time / variant time ({how})"

    def to_markdown(self) -> str:
        out = [f"**Machine:** {machine_line(self.machine)}", "",
               render.markdown_table(self._HEADERS, self._rows(), self._ALIGN)]
        notes = self._footnotes()
        if notes:
            out += [""] + [f"- {n}" for n in notes]
        out += ["", self.speedup_legend()]
        return "\n".join(out) + "\n"

    def plot(self, path: str | Path) -> Path:
        from tfperf.bench.plot import plot_result

        return plot_result(self, Path(path))


def format_ratio(x: float | None) -> str:
    """``5673.2`` → ``"5673×"``, ``12.34`` → ``"12.3×"``, ``0.0123`` → ``"0.0123×"``."""
    if x is None or math.isnan(x) or x <= 0:
        return "–"
    if x >= 100:
        return f"{x:.0f}×"
    if x >= 1:
        return f"{x:.3g}×"
    return f"{x:.2g}×"


def _fmt_s(x: float | None) -> str:
    return format_seconds(x, 3) if x is not None and not math.isnan(x) else "–"


def _fmt_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.3g} {unit}"
        n /= 1024
    return f"{n:.3g} GiB"


def _equiv_cell(v: VariantResult) -> str:
    if v.equivalent is None:
        return "–" if v.equivalence_note == "" else "n/a"
    return "yes" if v.equivalent else "NO ✗"
