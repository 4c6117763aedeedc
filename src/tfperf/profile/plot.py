"""``--plot out.png``: the hottest eager-op lines and the top ops as horizontal bar charts."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

TOP = 10


def _op_label(op: Any) -> str:
    kind = "" if op.type == op.name else f" ({op.type})"
    return f"{op.name}{kind} [{op.where}{' eager' if op.eager else ''}]"


def plot_report(report: Any, path: str | Path) -> Path:
    """Write a PNG with up to two panels: eager-op time by line, op self time by op."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels: list[tuple[str, list[str], list[float]]] = []
    lines = report.obs.sorted_lines("eager_ops")[:TOP]
    if lines:
        panels.append(("eager ops by line (time, s)",
                       [f"{os.path.basename(s.path)}:{s.line} ({s.count:,} ops)" for s in lines],
                       [s.total_s for s in lines]))
    if report.capture is not None and report.capture.ops:
        ops = report.capture.ops[:TOP]
        panels.append(("top ops by self time (s, profiler capture)",
                       [_op_label(o) for o in ops], [o.self_s for o in ops]))
    syncs = report.obs.sorted_lines("host_syncs")[:TOP]
    if syncs:
        panels.append(("host syncs by line (time, s)",
                       [f"{os.path.basename(s.path)}:{s.line} ({s.count:,})" for s in syncs],
                       [s.total_s for s in syncs]))
    if not panels:
        panels.append(("nothing observed", ["(none)"], [0.0]))
    height = 2.2 + 0.45 * sum(len(p[1]) for p in panels)
    fig, axes = plt.subplots(len(panels), 1, figsize=(9, height), squeeze=False)
    for ax, (title, labels, values) in zip(axes[:, 0], panels, strict=True):
        ax.barh(range(len(values))[::-1], values, color="#4477aa")
        ax.set_yticks(range(len(values))[::-1], labels, fontsize=8)
        ax.set_title(title, fontsize=10)
        ax.tick_params(axis="x", labelsize=8)
    fig.suptitle(f"tfperf profile: {report.target or ''}", fontsize=11)
    fig.tight_layout()
    out = Path(path)
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return out
