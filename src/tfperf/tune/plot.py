"""A PNG of a tune run: one row per candidate, fastest first. Kept candidates are bars of
their median time per call with IQR whiskers, their speedup and break-even call count; the
pick is marked; rejected candidates are listed below the bars with their reason.

Drawn with bench's plot helpers (the same error when matplotlib is missing, the same PNG
writer, the same rule for a log axis).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tfperf.bench.plot import LOG_SCALE_SPREAD, PlotError, save_figure
from tfperf.core.measure import format_ratio, format_seconds

# The result's types are not imported (``TuneResult.plot`` imports this module): a
# ``TuneResult`` and its ``CandidateResult`` rows are read by attribute.
TuneResult = Any
CandidateResult = Any

#: A rejected candidate's reason is cut to this many characters in the figure.
REASON_CHARS = 90

_BASELINE, _KEPT, _PICK, _REJECTED = "#7f8c8d", "#2e86c1", "#27ae60", "#c0392b"


def _row_label(c: CandidateResult, best: str | None) -> str:
    return ("★ " if c.name == best else "") + c.name


def _cut(text: str) -> str:
    return text if len(text) <= REASON_CHARS else text[:REASON_CHARS - 1] + "…"


def build_figure(result: TuneResult, title: str | None = None) -> Any:
    """The matplotlib Figure (Agg canvas, no display needed) for ``result``."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise PlotError("--plot needs matplotlib: pip install 'tfperf[plot]'") from None
    base = result.baseline
    kept = sorted((c for c in result.candidates if c.kept), key=lambda c: c.median_s or 0.0)
    rejected = [c for c in result.candidates if not c.kept]
    # (label, median, quartiles, colour, annotation); the baseline first, then fastest first
    bars: list[tuple[str, float, list[float] | None, str, str]] = []
    if base.get("median_s") is not None:
        bars.append(("baseline", float(base["median_s"]), base.get("quartiles_s"), _BASELINE,
                     f"{format_seconds(base['median_s'])}  (first call "
                     f"{format_seconds(base.get('first_call_s'))})"))
    for c in kept:
        note = f"{format_seconds(c.median_s)}  {format_ratio(c.speedup)}"
        note += (f", pays back after {c.break_even_calls} calls" if c.break_even_calls
                 else ", never pays back" if (c.speedup or 0) > 1 else "")
        bars.append((_row_label(c, result.best_name), float(c.median_s or 0.0), c.quartiles_s,
                     _PICK if c.name == result.best_name else _KEPT, note))
    if not bars:
        raise PlotError("nothing to plot: no candidate has a time")
    rows = len(bars) + len(rejected)
    fig = Figure(figsize=(11.0, 1.2 + 0.34 * rows), dpi=100)
    ax = fig.add_subplot(1, 1, 1)
    ys = list(range(rows))[::-1]  # the first row at the top
    medians = [b[1] for b in bars]
    lower = [max(0.0, m - q[0]) if q else 0.0 for m, q in zip(medians, (b[2] for b in bars),
                                                             strict=True)]
    upper = [max(0.0, q[1] - m) if q else 0.0 for m, q in zip(medians, (b[2] for b in bars),
                                                             strict=True)]
    ax.barh(ys[:len(bars)], medians, xerr=[lower, upper], capsize=3,
            color=[b[3] for b in bars])
    positive = [m for m in medians if m > 0]
    log = bool(positive) and max(positive) / min(positive) > LOG_SCALE_SPREAD
    if log:
        ax.set_xscale("log")
    for y, b, up in zip(ys, bars, upper, strict=False):  # the text right of the whisker
        ax.annotate(b[4], (b[1] + up, y), xytext=(4, 0), textcoords="offset points",
                    va="center", fontsize=8)
    for y, c in zip(ys[len(bars):], rejected, strict=True):  # x in axes fractions
        ax.annotate("✗ " + _cut(c.rejected or "not timed"), (0.01, y),
                    xycoords=ax.get_yaxis_transform(), va="center", fontsize=7,
                    color=_REJECTED)
    ax.set_ylim(-0.7, rows - 0.3)
    ax.set_yticks(ys)
    ax.set_yticklabels([b[0] for b in bars] + [c.name for c in rejected], fontsize=8)
    for label, colour in zip(ax.get_yticklabels(), [b[3] for b in bars]
                             + [_REJECTED] * len(rejected), strict=True):
        label.set_color(colour if colour in (_PICK, _REJECTED) else "black")
    ax.set_xlabel("median time per call (s), IQR whiskers" + (", log scale" if log else ""))
    where = Path(result.path).name if result.in_file else (
        f"cell {result.cell}" if result.cell is not None else result.path)
    ax.set_title(title or f"tfperf tune {where}:{result.function} "
                          f"({len(kept)} kept, {len(rejected)} rejected)", fontsize=10)
    ax.margins(x=0.45)
    fig.tight_layout()
    return fig


def plot_result(result: TuneResult, path: Path, title: str | None = None) -> Path:
    return save_figure(build_figure(result, title), path)
