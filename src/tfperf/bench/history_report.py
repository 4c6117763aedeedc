"""The trend of one variant over saved runs: a text table and a PNG line plot."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tfperf.bench.counters import COUNTERS
from tfperf.bench.plot import PlotError
from tfperf.bench.storage import HistoryPoint
from tfperf.core import render
from tfperf.core.measure import format_seconds

_SHORT = {"traces": "traces", "host_syncs": "syncs", "eager_ops": "eager ops",
          "graph_ops": "graph ops", "xla_compilations": "XLA"}


def _cell(x: int | None) -> str:
    return "–" if x is None else str(x)


def history_rows(points: list[HistoryPoint]) -> list[list[str]]:
    rows = []
    first = next((p.median_s for p in points if p.median_s), None)
    for p in points:
        vs_first = f"{p.median_s / first:.2f}×" if p.median_s and first else "–"
        rows.append([p.created, p.label or "", p.machine_key[-10:], format_seconds(p.median_s),
                     format_seconds(p.iqr_s), vs_first,
                     *(_cell(p.counter(c)) for c in COUNTERS)])
    return rows


HEADERS = ("created", "label", "machine", "median", "IQR", "vs first",
           *(_SHORT[c] for c in COUNTERS))


def history_text(variant: str, points: list[HistoryPoint], notes: list[str]) -> str:
    machines = sorted({p.machine_key for p in points})
    out = [f"{variant}: {len(points)} saved runs on {len(machines)} machine(s)",
           render.text_table(HEADERS, history_rows(points), "lllrrr" + "r" * len(COUNTERS))]
    if len(machines) > 1:
        out.append("times from different machines are not comparable: read each machine's "
                   "rows apart")
    out += [f"note: {n}" for n in notes]
    return "\n".join(out)


def history_json(variant: str, points: list[HistoryPoint]) -> str:
    rows: list[dict[str, Any]] = [
        {"file": str(p.path), "created": p.created, "label": p.label,
         "machine_key": p.machine_key, "median_s": p.median_s, "iqr_s": p.iqr_s,
         "counters": {c: p.counter(c) for c in COUNTERS}} for p in points]
    return render.to_json({"variant": variant, "runs": rows})


def plot_history(variant: str, points: list[HistoryPoint], path: str | Path) -> Path:
    """Median (with IQR band) per run, one line per machine; traces and syncs beneath."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise PlotError("--plot needs matplotlib: pip install 'tfperf[plot]'") from None
    timed = [p for p in points if p.median_s is not None]
    if not points:
        raise PlotError("nothing to plot: no saved run has this variant")
    fig = Figure(figsize=(8, 5.5))
    ax_t, ax_c = fig.subplots(2, 1, sharex=True, gridspec_kw={"height_ratios": [2, 1]})
    index = {id(p): i for i, p in enumerate(points)}
    for key in sorted({p.machine_key for p in timed}):
        mine = [p for p in timed if p.machine_key == key]
        xs = [index[id(p)] for p in mine]
        med = [p.median_s * 1e3 for p in mine if p.median_s is not None]
        iqr = [(p.iqr_s or 0.0) * 1e3 for p in mine]
        ax_t.plot(xs, med, marker="o", label=key[-10:])
        ax_t.fill_between(xs, [m - q / 2 for m, q in zip(med, iqr, strict=True)],
                          [m + q / 2 for m, q in zip(med, iqr, strict=True)], alpha=0.2)
    ax_t.set_ylabel("median per call (ms)")
    ax_t.set_title(f"tfperf bench history: {variant}")
    if timed:
        ax_t.legend(title="machine", fontsize="small")
    for counter in ("traces", "host_syncs", "graph_ops"):
        ys = [p.counter(counter) for p in points]
        if any(y is not None for y in ys):
            ax_c.step(range(len(points)), [y if y is not None else float("nan") for y in ys],
                      where="mid", label=_SHORT[counter])
    ax_c.set_ylabel("count")
    ax_c.legend(fontsize="small")
    ax_c.set_xticks(range(len(points)))
    ax_c.set_xticklabels([p.label or p.created[:16] for p in points], rotation=30,
                         ha="right", fontsize="small")
    fig.tight_layout()
    path = Path(path)
    try:
        fig.savefig(path, dpi=100)
    except OSError as exc:
        raise PlotError(f"cannot write {path}: {exc}") from None
    return path


__all__ = ["history_json", "history_rows", "history_text", "plot_history"]
