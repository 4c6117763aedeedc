"""`tfperf profile --read`: gather (locate, index, summarise) → judge (diagnose, advice) →
render (text, JSON). The cause of an empty or odd capture comes first, then the figures."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tfperf.core.findings import Finding, Status
from tfperf.profile.read import diagnose
from tfperf.profile.read.costs import OpCost, costs_text, op_costs
from tfperf.profile.read.locate import Located, locate
from tfperf.profile.read.summary import CATEGORIES, HOST_PREFIX, ReadSummary, summarise_capture
from tfperf.profile.read.xspace import Capture, CaptureFileError
from tfperf.profile.xplane import CaptureSummary, OpRow

TOP = 15


@dataclass
class ReadReport:
    path: str
    located: Located | None = None
    files: list[str] = field(default_factory=list)
    summaries: list[ReadSummary] = field(default_factory=list)
    diagnosis: list[Finding] = field(default_factory=list)
    verdicts: list[Finding] = field(default_factory=list)
    costs: dict[str, list[OpCost]] = field(default_factory=dict)  # per file, ops with FLOPs

    @property
    def findings(self) -> list[Finding]:
        return self.diagnosis + self.verdicts

    @property
    def exit_status(self) -> int:
        return 1 if any(f.status in (Status.FAIL, Status.WARN) for f in self.findings) else 0

    def to_dict(self, top: int = TOP) -> dict[str, Any]:
        return {"path": self.path, "files": self.files,
                "captures": [summary_dict(s, top) for s in self.summaries],
                "diagnosis": [f.to_dict() for f in self.diagnosis],
                "verdicts": [f.to_dict() for f in self.verdicts],
                "op_costs": {f: [c.to_dict() for c in cs] for f, cs in self.costs.items()}
                or None}

    def to_json(self) -> str:
        from tfperf.core.render import to_json

        return to_json(self.to_dict())

    def to_html(self) -> str:
        """The report as one self-contained HTML page (``tfperf profile --read --html``)."""
        from tfperf.core.html import report_page

        return report_page("profile-read", self.to_json())

    def _repr_html_(self) -> str:
        from tfperf.core.html import report_fragment

        return report_fragment("profile-read", self.to_json())

    def text(self, color: bool = False) -> str:
        from tfperf.core.render import findings_text, style

        parts = [style(f"tfperf profile --read {self.path}", "bold", color=color)]
        if self.diagnosis:
            parts.append(findings_text(self.diagnosis, color=color))
        for s in self.summaries:
            parts.append(summary_text(s))
            parts.append(costs_text(self.costs.get(s.path, [])))
        if self.verdicts:
            parts.append("Verdicts\n" + findings_text(self.verdicts, color=color))
        elif self.summaries:
            parts.append("Verdicts: nothing to flag.")
        return "\n\n".join(p for p in parts if p)


def read(path: str | Path, top: int = TOP) -> ReadReport:
    """Read the capture(s) at ``path``. Raises FileNotFoundError when ``path`` is missing."""
    report = ReadReport(path=str(path))
    found = locate(path)
    report.located = found
    report.diagnosis += diagnose.layout_findings(found)
    for f in found.captures:
        report.files.append(str(f))
        try:
            with Capture(f) as cap:
                summary = summarise_capture(cap)
                costs = op_costs(cap, summary)
        except CaptureFileError as exc:
            report.diagnosis += diagnose.file_findings(str(f), exc)
            continue
        report.summaries.append(summary)
        if costs:
            report.costs[str(f)] = costs
        report.diagnosis += diagnose.content_findings(summary)
        report.verdicts += verdicts(summary)
    # The cause first: what breaks the capture, then what makes it odd, then notes.
    rank = {Status.FAIL: 0, Status.WARN: 1}
    report.diagnosis.sort(key=lambda f: rank.get(f.status, 2))
    return report


def as_capture_summary(s: ReadSummary, top: int = 50) -> CaptureSummary:
    """The figures tfperf's own captures are judged on, so `--read` gives the same verdicts."""
    out = CaptureSummary(path=s.path, devices=list(s.devices), duration_s=s.duration_s,
                         steps=max(s.steps, 1), step_s=s.step_s if s.step_source ==
                         "step markers" else None, step_source=s.step_source,
                         host_op_s=s.host_op_ps / 1e12, eager_s=s.eager_ps / 1e12,
                         graph_s=s.graph_ps / 1e12, input_s=s.input_ps / 1e12)
    if s.step_source != "step markers" and s.step_windows:
        out.step_s = sum(e - b for b, e in s.step_windows) / len(s.step_windows) / 1e12
    out.step_windows = list(s.step_windows)
    hosts = [b for b in s.breakdowns if b.where.startswith(HOST_PREFIX) and b.steps]
    if hosts:  # the input share on the breakdown's basis: the table and the verdict agree
        out.input_fed_s = sum(r.input_s for b in hosts for r in b.steps)
        out.steps_wall_s = sum(r.duration_s for b in hosts for r in b.steps)
    if s.devices:
        out.device_op_s = s.device_op_ps / 1e12
        out.h2d_s, out.d2h_s, out.copies = s.h2d_ps / 1e12, s.d2h_ps / 1e12, s.copies
        out.sixteen_bit_s = s.sixteen_bit_ps / 1e12
        out.kernel_launches = s.kernel_launches
        out.launch_s = s.launch_ps / 1e12 if s.launch_ps else None
    out.ops = [OpRow(o.name, o.type, "device" if o.where.startswith("/device") else "host",
                     o.kind == "eager", o.count, o.self_s, o.total_s) for o in s.ops[:top]]
    by_type: dict[str, float] = {}
    for o in s.ops:
        by_type[o.type] = by_type.get(o.type, 0.0) + o.self_s
    out.by_type = by_type
    return out


def verdicts(s: ReadSummary) -> list[Finding]:
    """The verdicts tfperf gives its own captures (input-bound, eager share, launch-bound,
    16-bit share), and retraces where the capture records them."""
    from tfperf.profile import advice

    if not s.events:
        return []
    out = [f for f in advice.capture_findings(as_capture_summary(s), any_tf=True)
           if f.code != "profile.capture"]  # host-only is said once, by the diagnosis
    for name, traced in sorted(s.traced_calls.items()):
        if traced > advice.RETRACE_MIN:
            calls = s.tf_function_calls.get(name, traced)
            out.append(Finding(
                code="profile.retrace", name="retrace", status=Status.WARN,
                message=f"`{name}` traced {traced} times in {calls} calls during the capture "
                        f"(the capture's tf_function_call stat); the cause is not in a capture: "
                        f"run `tfperf profile` on the script to name the argument",
                hint="pass tensors, not Python numbers; or input_signature / "
                     "reduce_retracing=True (TFP301, TFP305)",
                data={"rule": "TFP301", "function": name, "traces": traced, "calls": calls,
                      "threshold": f"more than {advice.RETRACE_MIN} retraces"}))
    return out


# -- rendering ---------------------------------------------------------------------------------


def summary_dict(s: ReadSummary, top: int = TOP) -> dict[str, Any]:
    return {
        "path": s.path, "hostnames": s.hostnames, "planes": s.planes, "devices": s.devices,
        "host_only": s.host_only, "duration_s": s.duration_s, "events": s.events,
        "op_events": s.op_events, "steps": s.steps, "step_source": s.step_source,
        "step_s": s.step_s, "mean_step_s": s.mean_step_s,
        "breakdown": [b.to_dict() for b in s.breakdowns],
        "per_step": {b.where: [r.to_dict() for r in b.steps] for b in s.breakdowns},
        "eager_share": (s.eager_ps / (s.eager_ps + s.graph_ps)
                        if s.eager_ps + s.graph_ps else None),
        "input_s": s.input_ps / 1e12, "host_op_s": s.host_op_ps / 1e12,
        "device_op_s": s.device_op_ps / 1e12 if s.devices else None,
        "tf_function_calls": s.tf_function_calls, "traced_calls": s.traced_calls,
        "recorded_errors": s.recorded_errors, "hlo_modules": s.hlo_modules,
        "top_ops": [o.to_dict() for o in s.ops[:top]],
    }


def _pct(part: float | None, whole: float | None) -> str:
    if part is None or not whole:
        return "–"
    return f"{100 * part / whole:.1f} %"


def summary_text(s: ReadSummary, top: int = TOP) -> str:
    from tfperf.core.measure import format_seconds as fs
    from tfperf.core.render import text_table

    hosts = ", ".join(s.hostnames) or "?"
    lines = [f"Capture {s.path}", f"  host {hosts}; {s.events} events, {s.op_events} op events; "
             f"{'host only' if s.host_only else 'devices: ' + ', '.join(s.devices)}; "
             f"{fs(s.duration_s)} captured"]
    if not s.events:
        return "\n".join(lines)
    lines.append(f"  {s.steps} step(s) from {s.step_source}: median {fs(s.step_s)}, "
                 f"mean {fs(s.mean_step_s)}")
    if fed := s.fed_step_times:  # the breakdown's basis, said beside the markers' own
        lines.append(f"  with the input wait before each step: median "
                     f"{fs(statistics.median(fed))}, mean {fs(statistics.fmean(fed))}")
    rows = []
    for b in s.breakdowns:
        step = b.mean("duration_s")
        rows.append([b.where, fs(step)] + [_pct(b.mean(f"{c}_s"), step) for c in CATEGORIES])
    if rows:
        lines.append("")
        lines.append("Step-time breakdown (mean per step; ops summed over threads and streams)")
        lines.append(text_table(["where", "step", *CATEGORIES], rows, "lr" + "r" * 5))
        before = sum(r.input_before_s for b in s.breakdowns for r in b.steps)
        if before:
            lines.append(f"  a step here includes the input wait before it ({fs(before)} in all): "
                         f"its batch was fetched outside the step's marker (an eager loop's "
                         f"`for batch in dataset`)")
    if s.ops:
        lines.append("")
        lines.append(f"Top ops by self time (of {len(s.ops)})")
        lines.append(text_table(
            ["op", "type", "where", "kind", "count", "self", "total", "source"],
            [[o.name[:48], o.type[:28], o.where, o.kind, o.count, fs(o.self_s), fs(o.total_s),
              o.source or ""] for o in s.ops[:top]], "llllrrrl"))
    return "\n".join(lines)
