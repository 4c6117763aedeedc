"""The memory view's report: per-step peaks, what held the peak, the timeline, leaks.

``build_report`` judges what the runner gathered (allocation events of the capture, what
Python holds, the leak samples) into plain data and findings; ``MemoryReport`` renders it as
text and JSON. Exit status: 1 when the run raised or a finding warns (a leak), else 0.
"""

from __future__ import annotations

import os
import traceback
from dataclasses import dataclass, field
from typing import Any

from tfperf.core import render
from tfperf.core.findings import Finding, Status
from tfperf.memory.allocator import AllocatorState
from tfperf.memory.breakdown import CATEGORIES, Breakdown, breakdown
from tfperf.memory.leaks import LeakReport
from tfperf.memory.sites import SiteIndex
from tfperf.memory.timeline import StepPeak, step_peaks

TOP = 8
SPARK = "▁▂▃▄▅▆▇█"


def fmt_bytes(n: float | None) -> str:
    if n is None:
        return "–"
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if abs(n) >= size:
            return f"{n / size:.1f} {unit}"
    return f"{int(n)} B"


def _short(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return rel if not rel.startswith("..") else path


@dataclass
class DeviceView:
    """One device: its step peaks and the breakdown of the highest."""

    device: str
    steps: list[StepPeak]
    worst: StepPeak
    breakdown: Breakdown

    def to_dict(self) -> dict[str, Any]:
        return {"device": self.device, "allocator": self.worst.allocator,
                "steps": [{k: v for k, v in s.to_dict().items() if k != "timeline"}
                          for s in self.steps],
                "peak_step": self.worst.step, "peak_bytes": self.worst.peak_bytes,
                "breakdown": self.breakdown.to_dict(),
                "timeline": [[round(t, 9), b] for t, b in self.worst.timeline]}


@dataclass
class MemoryReport:
    target: str
    allocator: AllocatorState | None
    devices: list[DeviceView] = field(default_factory=list)
    leaks: LeakReport | None = None
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    error: BaseException | None = None
    logdir: str | None = None
    capture_note: str | None = None
    wall_s: float = 0.0
    own_s: float = 0.0  # tfperf's own time in the run (capture start/stop, sampling)

    def __str__(self) -> str:
        return self.text()

    def __repr__(self) -> str:
        peaks = ", ".join(f"{d.device} {fmt_bytes(d.worst.peak_bytes)}" for d in self.devices)
        return f"<MemoryReport {self.target}: peak {peaks or '–'}, {len(self.findings)} findings>"

    @property
    def exit_status(self) -> int:
        if self.error is not None:
            return 1
        return 1 if any(f.status in (Status.WARN, Status.FAIL) for f in self.findings) else 0

    def peak(self, device: str = "CPU") -> int | None:
        for d in self.devices:
            if d.device == device:
                return d.worst.peak_bytes
        return None

    def to_dict(self) -> dict[str, Any]:
        err = None
        if self.error is not None:
            err = {"type": type(self.error).__name__, "message": str(self.error),
                   "traceback": "".join(traceback.format_exception(self.error))}
        return {"target": self.target,
                "allocator": self.allocator.to_dict() if self.allocator else None,
                "devices": [d.to_dict() for d in self.devices],
                "leaks": self.leaks.to_dict() if self.leaks else None,
                "findings": [f.to_dict() for f in self.findings], "notes": self.notes,
                "logdir": self.logdir, "capture_note": self.capture_note,
                "wall_s": self.wall_s, "tfperf_s": self.own_s, "error": err}

    def to_json(self, indent: int | None = 2) -> str:
        return render.to_json(self.to_dict(), indent=indent)

    # -- text ------------------------------------------------------------------------------

    def text(self, color: bool = False) -> str:
        out = [render.style(f"tfperf profile --memory  {self.target}", "bold", color=color)]
        if self.allocator is not None:
            out.append(self.allocator.note)
        if not self.devices:
            out.append(f"no allocation events: {self.capture_note or 'nothing was allocated'}")
        for d in self.devices:
            out += ["", *self._device_text(d)]
        if self.leaks is not None:
            out += ["", *self._leak_text(self.leaks)]
        if self.findings:
            out.append("")
            for f in self.findings:
                where = (f"{_short(f.location.path)}:{f.location.line}: "
                         if f.location and f.location.path else "")
                out.append(f"{render.status_badge(f.status, color)} {where}{f.message}")
                if f.hint:
                    out.append(f"     → {f.hint}")
        out += [f"note: {n}" for n in self.notes]
        if self.logdir:
            out.append(f"capture: {self.logdir} (tensorboard --logdir {self.logdir}: "
                       "Profile → Memory Profile)")
        if self.error is not None:
            out += ["", "the run raised:",
                    "".join(traceback.format_exception(self.error)).rstrip()]
        return "\n".join(out)

    def _device_text(self, d: DeviceView) -> list[str]:
        lines = [f"Peak per step ({d.device}, allocator {d.worst.allocator})"]
        rows = [[s.step, fmt_bytes(s.start_bytes), fmt_bytes(s.peak_bytes),
                 fmt_bytes(s.end_bytes), f"{s.peak_time_s * 1e3:.1f} ms",
                 f"{s.duration_s * 1e3:.1f} ms"] for s in d.steps]
        lines.append(render.text_table(["step", "start", "peak", "end", "peak at", "step"],
                                       rows, "rrrrrr"))
        b = d.breakdown
        lines.append("")
        lines.append(f"What held the peak (step {d.worst.step}, {fmt_bytes(b.peak_bytes)}; "
                     f"{b.covered:.0%} named)")
        shares = [f"{k.replace('_', ' ')} {fmt_bytes(v)} ({v / b.peak_bytes:.0%})"
                  for k in CATEGORIES if (v := b.categories.get(k, 0)) and b.peak_bytes]
        lines.append("  " + " · ".join(shares))
        if b.largest_constant and b.categories.get("constants"):
            # a folded gradient is often exactly an input's size: say it is not the input
            op, shape, n = b.largest_constant
            lines.append(f"  constants: the traced graphs' own tensors, not the inputs (largest "
                         f"{op} {shape}, {fmt_bytes(n)}); inputs: the tensors the step takes "
                         "or captures")
        for title, groups in (("by layer", b.by_layer), ("by line", b.by_line),
                              ("by op", b.by_op)):
            if not groups:
                continue
            lines.append(f"Live tensors at the peak, {title}")
            rows = [[g.key if title != "by line" else _site(g.key), fmt_bytes(g.bytes), g.count,
                     ", ".join(g.shapes)] for g in groups[:TOP]]
            lines.append(render.text_table([title[3:], "bytes", "tensors", "shapes"], rows,
                                           "lrrl"))
        if d.worst.timeline:
            lines.append(f"Timeline of step {d.worst.step}: {sparkline(d.worst.timeline)}  "
                         f"{fmt_bytes(min(b for _, b in d.worst.timeline))} → "
                         f"{fmt_bytes(d.worst.peak_bytes)}")
        return lines

    def _leak_text(self, leaks: LeakReport) -> list[str]:
        n = len(leaks.samples)
        lines = [f"Across {n} steps ({leaks.warmup} warm-up left out)"]
        for name, t in leaks.trends.items():
            lines.append(f"  {name}: {fmt_bytes(t.slope)}/step, {t.reason}")
        lines += [f"  {note}" for note in leaks.notes]
        if not leaks.leaks and n > leaks.warmup + 3:
            lines.append("  no leak: every counter flat, memory within its noise")
        return lines


def _site(key: str) -> str:
    path, sep, line = key.rpartition(":")
    return f"{_short(path)}:{line}" if sep and line.isdigit() else key


def sparkline(points: list[tuple[float, int]], width: int = 40) -> str:
    if not points:
        return ""
    lo, hi = min(b for _, b in points), max(b for _, b in points)
    t_end = points[-1][0] or 1.0
    cells = [lo] * width
    for t, b in points:
        k = min(int(t / t_end * (width - 1)), width - 1) if t_end else 0
        cells[k] = max(cells[k], b)
    for k in range(1, width):  # a cell no event fell in keeps the level before it
        if cells[k] == lo and cells[k - 1] != lo:
            cells[k] = cells[k - 1]
    span = hi - lo or 1
    return "".join(SPARK[min(int((c - lo) / span * (len(SPARK) - 1)), len(SPARK) - 1)]
                   for c in cells)


# ---------------------------------------------------------------------------------------------
# judging what was gathered


def build_report(*, target: str, capture: Any, sites: SiteIndex | None,
                 state: AllocatorState | None, inputs: Any = (), leaks: LeakReport | None,
                 error: BaseException | None, own_s: float = 0.0, wall_s: float = 0.0,
                 notes: list[str] | None = None) -> MemoryReport:
    report = MemoryReport(target=target, allocator=state, leaks=leaks, error=error,
                          own_s=own_s, wall_s=wall_s, notes=list(notes or []))
    if capture is None:
        report.capture_note = "not captured"
    else:
        report.logdir = str(capture.logdir)
        if capture.xplane is None:
            report.capture_note = capture.error or "the profiler wrote no capture"
        else:
            _read(report, capture.xplane, sites, inputs)
    if leaks is not None:
        report.findings += leaks.findings
    return report


def _read(report: MemoryReport, path: Any, sites: SiteIndex | None, inputs: Any) -> None:
    from tfperf.memory.events import read_capture
    from tfperf.memory.holders import find_holders
    from tfperf.profile.read.xspace import CaptureFileError

    try:
        mem = read_capture(path)
    except CaptureFileError as exc:
        report.capture_note = f"capture unreadable: {exc}"
        return
    peaks = step_peaks(mem)
    if not peaks:
        report.capture_note = ("the capture holds no allocation events (the allocator keeps "
                               "no statistics, or nothing was allocated in the steps)")
        return
    for device in sorted({p.device for p in peaks}):
        steps = [p for p in peaks if p.device == device]
        worst = max(steps, key=lambda p: p.peak_bytes)
        kind = "GPU" if device.startswith("GPU") else "CPU"
        try:
            # a tensor the step captures is held like one it takes: both are *inputs*
            captured = sites.captured if sites is not None else []
            holders = find_holders((inputs, captured), device_kind=kind,
                                   variables=list(sites.variables.values())
                                   if sites is not None and sites.variables else None)
        except Exception as exc:  # TF not importable, or an odd object: no split
            holders = None
            report.notes.append(f"weights and inputs not told apart: {exc}")
        b = breakdown(worst, holders, sites)
        report.devices.append(DeviceView(device, steps, worst, b))


__all__ = ["DeviceView", "MemoryReport", "build_report", "fmt_bytes", "sparkline"]
