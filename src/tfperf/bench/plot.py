"""A PNG bar chart of a comparison: median time per variant, IQR whiskers, speedup on each bar."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from tfperf.core.measure import format_ratio, format_seconds

if TYPE_CHECKING:
    from tfperf.bench.result import CompareResult

#: Above this max/min ratio of medians, bars go on a log axis (else the fast ones vanish).
LOG_SCALE_SPREAD = 20.0


class PlotError(Exception):
    """The plot cannot be drawn (matplotlib missing, nothing measured, unwritable path)."""


def build_figure(result: CompareResult, title: str | None = None) -> Any:
    """The matplotlib Figure (Agg canvas, no display needed) for ``result``."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise PlotError("--plot needs matplotlib: pip install 'tfperf[plot]'") from None
    rows = [v for v in result.variants if v.median_s is not None]
    if not rows:
        raise PlotError("nothing to plot: no variant has a time")
    names = [v.name for v in rows]
    medians = [v.median_s or 0.0 for v in rows]
    # IQR whiskers from the lower to the upper quartile around the median.
    lower, upper = [], []
    for v in rows:
        m = v.measurement
        if m is not None and m.runs >= 2:
            s = sorted(m.times)
            q1 = s[int(0.25 * (len(s) - 1))] * v.scale
            q3 = s[round(0.75 * (len(s) - 1))] * v.scale
            median = v.median_s or 0.0
            lower.append(max(0.0, median - q1))
            upper.append(max(0.0, q3 - median))
        else:
            lower.append(0.0)
            upper.append(0.0)
    fig = Figure(figsize=(max(5.0, 1.3 * len(rows) + 2), 4.2), dpi=100)
    ax = fig.add_subplot(1, 1, 1)
    colours = ["#c0392b" if v.equivalent is False else
               ("#7f8c8d" if v.name == result.baseline else "#2e86c1") for v in rows]
    bars = ax.bar(names, medians, yerr=[lower, upper], capsize=4, color=colours)
    log = max(medians) / max(min(medians), 1e-12) > LOG_SCALE_SPREAD
    if log:
        ax.set_yscale("log")
    ax.set_ylabel("median time per call (s)" + (", log scale" if log else ""))
    ax.set_title(title or f"tfperf bench (baseline: {result.baseline})")
    for bar, v in zip(bars, rows, strict=True):
        label = format_seconds(v.median_s, 3)
        if v.speedup is not None and v.name != result.baseline:
            label += f"\n{format_ratio(v.speedup)}"
        if v.equivalent is False:
            label += "\nNOT EQUIV."
        if v.status == "slow":
            label += "\n(ran once)"
        ax.annotate(label, (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                    ha="center", va="bottom", fontsize=8, xytext=(0, 3),
                    textcoords="offset points")
    ax.margins(y=0.25)
    fig.tight_layout()
    return fig


def save_figure(fig: Any, path: Path) -> Path:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, format="png")
    except OSError as exc:
        raise PlotError(f"cannot write {path}: {exc.strerror or exc}") from None
    return path


def plot_result(result: CompareResult, path: Path, title: str | None = None) -> Path:
    return save_figure(build_figure(result, title), path)
