"""How a comparison and the article suite are shown: text table, Markdown, plots.

The data (:mod:`tfperf.bench.result`, :mod:`tfperf.bench.suite.result`) knows nothing of
this module. :class:`CompareReport` and :class:`SuiteReport` are those data classes plus
their renderings; ``compare()`` and ``run_suite()`` return them, so ``result.table()``,
``result.to_markdown()`` and ``result.plot(path)`` work on what the Python API hands back.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from tfperf.bench.machine import machine_line
from tfperf.bench.result import CompareResult, VariantResult
from tfperf.bench.suite.result import SuiteResult
from tfperf.bench.suite.verdict import NOT_MEASURED, Claim
from tfperf.core import render
from tfperf.core.measure import format_ratio, format_seconds

_HEADERS = ("variant", "median", "± IQR/2", "runs", "first call", "speedup", "equivalent",
            "tol used")
_ALIGN = "lrrrrrlr"


def _with_memory(headers: tuple[str, ...], rows: list[list[str]], align: str,
                 variants: list[Any]) -> tuple[tuple[str, ...], list[list[str]], str]:
    """The table with a peak-memory column, when some variant's peak was measured."""
    if not any(v.memory.get("peak_bytes") is not None for v in variants):
        return headers, rows, align
    cells = [_fmt_bytes(v.memory["peak_bytes"]) if v.memory.get("peak_bytes") is not None
             else "–" for v in variants]
    return (*headers, "peak mem"), [[*r, c] for r, c in zip(rows, cells, strict=True)], \
        align + "r"


class CompareReport(CompareResult):
    """A :class:`CompareResult` with its renderings."""

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
            used = v.equivalence.tolerance_used if v.equivalence else None
            rows.append([
                name,
                format_seconds(v.median_s, max(2, min(fig, 4))),
                format_seconds(iqr / 2, 2) if iqr is not None else "–",
                runs_s,
                _fmt_s(v.first_call_s),
                format_ratio(v.speedup),
                _equiv_cell(v),
                _pct(used),
            ])
        return rows

    def _footnotes(self) -> list[tuple[bool, str]]:
        """(loud, text) per note; loud ones are failures the exit status reflects."""
        notes: list[tuple[bool, str]] = []
        # The same reason for every variant is said once (it was a line per variant)
        unmeasured = {v.memory.get("source") for v in self.variants
                      if v.memory.get("peak_bytes") is None}
        shared = next(iter(unmeasured)) if len(unmeasured) == 1 and len(self.variants) > 1 \
            and all(v.memory.get("peak_bytes") is None for v in self.variants) else None
        for v in self.variants:
            if v.error:
                notes.append((True, f"{v.name}: {v.status}: {v.error}"))
            if v.equivalent is False:
                notes.append((True, f"{v.name}: NOT EQUIVALENT to {self.baseline}: "
                                    f"{v.equivalence_note}"))
            elif v.unchecked and not v.error:
                accepted = " (accepted: --allow-unchecked)" if self.allow_unchecked else \
                    " (exit status 1; --allow-unchecked accepts it)"
                notes.append((True, f"{v.name}: NOT CHECKED, equivalence unknown: "
                                    f"{v.equivalence_note}{accepted}"))
            notes.extend((False, f"{v.name}: {n}") for n in v.notes)
            m = v.measurement
            if m is not None and v.status == "ok" and m.warning:
                notes.append((False, f"{v.name}: {m.warning}"))
            if v.memory.get("peak_bytes") is not None:
                notes.append((False, f"{v.name}: peak memory {_fmt_bytes(v.memory['peak_bytes'])}"
                                     f" ({v.memory.get('source')})"))
            elif v.memory.get("source") and not shared:  # could not measure it: say why
                notes.append((False, f"{v.name}: peak memory not measured: "
                                     f"{v.memory['source']}"))
            notes.extend((False, f"{v.name}: {line}") for line in _roofline_lines(v))
        if shared:
            notes.append((False, f"peak memory not measured: {shared}"))
        tolerances = sorted({v.equivalence.tolerance for v in self.variants
                             if v.equivalence and v.equivalence.tolerance})
        if tolerances:
            ref = " against the float64 reference" if self.settings.get("reference") else ""
            notes.append((False, f"equivalence{ref}, per element: " + "; ".join(tolerances)))
        if self.settings.get("grad"):
            notes.append((False, "gradients (of the sum of each output, with respect to the "
                                 "trainable inputs) checked by the same rule"))
        return notes

    def table(self, color: bool = False) -> str:
        lines = [render.style("tfperf bench", "bold", color=color) + "  " +
                 machine_line(self.machine)]
        if self.settings.get("quick"):
            lines.append("quick mode: fewer runs, shorter budget; see notes for scaled variants")
        lines += ["", render.text_table(*_with_memory(_HEADERS, self._rows(), _ALIGN,
                                                       self.variants))]
        if self.peaks:
            lines.append(f"\nmachine peaks ({self.peaks.get('device')}): "
                         f"{self.peaks['bandwidth_gbs']:.3g} GB/s, "
                         f"{self.peaks['matmul_gflops']:.3g} GFLOP/s matmul"
                         f"{' (cached)' if self.peaks.get('cached') else ''}")
        notes = self._footnotes()
        if notes:
            lines.append("")
            for loud, n in notes:
                lines.append(render.style("! " + n, "red", "bold", color=color) if loud
                             else "  " + n)
        lines.append("\n" + self.speedup_legend())
        return "\n".join(lines)

    def speedup_legend(self) -> str:
        methods = {v.ratio_method for v in self.variants if v.ratio_method
                   and v.ratio_method != "baseline"}
        how = "; ".join(sorted(methods)) or "no ratio"
        return (f"speedup = baseline time / variant time ({how}); tol used = the worst "
                "element's |a−b| over the tolerance it is allowed (≤ 100 % passes)")

    def to_markdown(self) -> str:
        out = [f"**Machine:** {machine_line(self.machine)}", "",
               render.markdown_table(*_with_memory(_HEADERS, self._rows(), _ALIGN,
                                                   self.variants))]
        notes = self._footnotes()
        if notes:
            out += [""] + [f"- {'**' + n + '**' if loud else n}" for loud, n in notes]
        out += ["", self.speedup_legend()]
        return "\n".join(out) + "\n"

    def plot(self, path: str | Path) -> Path:
        from tfperf.bench.plot import plot_result

        return plot_result(self, Path(path))

    # IPython and Jupyter show a report through these (``display(report)``): the table as
    # HTML in a notebook front end, as text in a terminal.
    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(self.table())

    def _repr_html_(self) -> str:
        from tfperf.core.html import report_fragment

        return report_fragment("bench", self.to_json())

    def to_html(self) -> str:
        """The report as one self-contained HTML page (``tfperf bench --html``)."""
        from tfperf.core.html import report_page

        return report_page("bench", self.to_json())


class SuiteReport(SuiteResult):
    """A :class:`SuiteResult` with its renderings."""

    _HEADERS = ("id", "claim", "article", "measured here", "verdict", "reason")

    def _rows(self) -> list[list[str]]:
        return [[c.id, c.claim, c.article, measured_text(c), c.verdict, c.reason]
                for c in self.claims]

    def _preamble(self) -> list[str]:
        lines = [f"machine: {machine_line(self.machine)}",
                 "'article' is the article's claim, quoted; 'measured here' is this machine; "
                 "'holds' needs the article's own figure (its lower bound), 'direction holds' "
                 "the same direction only."]
        if self.quick:
            lines.append("quick mode (scaled down): " + ("; ".join(self.scaled) or "fewer runs"))
        return lines

    def table(self, color: bool = False) -> str:
        head = render.style("tfperf bench --suite article", "bold", color=color)
        body = render.text_table(self._HEADERS[:5], [r[:5] for r in self._rows()])
        reasons = []
        for c in self.claims:
            line = f"  {c.id}: {c.reason}"
            reasons.append(render.style(line, "red", "bold", color=color)
                           if c.verdict == NOT_MEASURED else line)
        out = [head, *self._preamble(), "", body, "", "why:", *reasons]
        roofline = self.roofline_rows()
        if roofline:
            out += ["", "roofline (FLOPs counted on each variant's traced graph; the roof of "
                        "its precision and engine):",
                    render.text_table(("comparison", "variant", "GFLOP/s", "of roof", "roof",
                                       "bound"), roofline, "llrrll")]
        out += [render.style(f"! {e}", "red", color=color) for e in self.errors]
        counts = self.verdict_counts()
        summary = ", ".join(f"{n} {verdict}" for verdict, n in counts.items() if n)
        out.append(f"\n{len(self.claims)} claims in {self.elapsed_s:.0f} s: {summary}")
        return "\n".join(out)

    def roofline_rows(self) -> list[list[str]]:
        """Per variant of every comparison that measured its roofline (``--roofline``)."""
        rows = []
        for key, res in self.comparisons.items():
            for v in res.variants:
                judged = (v.roofline or {}).get("roof") or {}
                if not v.roofline:
                    continue
                if judged.get("error"):
                    rows.append([key, v.name, "–", "ERROR", judged["error"], ""])
                elif judged.get("fraction") is not None:
                    roof = judged["roof"]
                    rate = (f"{judged['flop_per_s'] / 1e9:.3g}" if judged["flop_per_s"]
                            else f"({judged['byte_per_s'] / 1e9:.3g} GB/s)")
                    bw = (roof.get("bandwidth") or roof["value"]) / 1e9
                    where = (f"{roof['precision']} {roof['engine']}"
                             if judged["bound"] == "compute" else f"memory ({bw:.3g} GB/s)")
                    rows.append([key, v.name, rate, f"{100 * judged['fraction']:.1f} %",
                                 where, judged["bound"]])
                else:
                    rows.append([key, v.name, "–", "–",
                                 str(v.roofline.get("flops_source") or "")[:60], ""])
        return rows

    def to_markdown(self) -> str:
        return "\n".join([*self._preamble(), "",
                          render.markdown_table(self._HEADERS, self._rows())]) + "\n"

    def to_html(self) -> str:
        """The suite as one self-contained HTML page (``--suite article --html``)."""
        from tfperf.core.html import report_page

        return report_page("suite", self.to_json())

    def _repr_html_(self) -> str:
        from tfperf.core.html import report_fragment

        return report_fragment("suite", self.to_json())

    def plot(self, folder: Path) -> list[Path]:
        from tfperf.bench.plot import plot_result

        return [plot_result(res, folder / f"{key}.png", title=f"{key} (tfperf suite)")
                for key, res in self.comparisons.items()
                if any(v.median_s is not None for v in res.variants)]


def measured_text(c: Claim) -> str:
    if c.measured is None or (isinstance(c.measured, float) and math.isnan(c.measured)):
        return "–"
    x = c.measured
    text = f"{x:,.0f}" if abs(x) >= 1000 else f"{x:.3g}"
    return f"{text} {c.unit}"


def _pct(x: float | None) -> str:
    if x is None or math.isnan(x):
        return "–"
    if math.isinf(x):
        return "∞"
    return f"{100 * x:.0f} %" if x < 10 else f"{x:.3g}×"


def _fmt_s(x: float | None) -> str:
    return format_seconds(x, 3) if x is not None and not math.isnan(x) else "–"


def _fmt_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.3g} {unit}"
        n /= 1024
    return f"{n:.3g} GiB"


def _roofline_lines(v: VariantResult) -> list[str]:
    r = v.roofline
    judged = r.get("roof") or {}
    if judged.get("error"):
        return [f"roofline: {judged['error']}"]
    if judged.get("fraction") is not None and judged.get("roof"):
        from tfperf.roofline.call import roof_text

        return [roof_text(judged, r.get("flops_source"))]
    if not r.get("gb_per_s"):
        return []
    pct = r.get("pct_peak_bandwidth")
    pct_s = f", {pct:.0f} % of peak" if pct is not None else ""
    extra = ""
    if r.get("gflop_per_s"):
        pf = r.get("pct_peak_flops")
        extra = f"; {r['gflop_per_s']:.3g} GFLOP/s" + (f" ({pf:.0f} % of peak)"
                                                          if pf is not None else "")
    return [f"≥ {r['gb_per_s']:.3g} GB/s moved{pct_s}{extra}"]


def _equiv_cell(v: VariantResult) -> str:
    eq = v.equivalent
    if eq is None:
        return "CANNOT CHECK" if v.unchecked else "–"
    return "yes" if eq else "NO ✗"


__all__ = ["CompareReport", "SuiteReport", "measured_text"]
