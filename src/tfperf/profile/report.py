"""One profile report: observation + capture + advice → JSON and terminal text."""

from __future__ import annotations

import contextlib
import os
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from tfperf.core import render
from tfperf.core.findings import Finding, Location, Status
from tfperf.core.interrupts import interrupt_name, interrupt_status
from tfperf.profile import advice, replicas, retrace
from tfperf.profile import causes as causes_mod
from tfperf.profile.observation import Observation
from tfperf.profile.placement import short_device
from tfperf.profile.xplane import CaptureSummary

TOP_LINES = 10
TOP_OPS = 15
CAUSE_LINES = 4  # hot lines shown per cause


def _clip(code: str, width: int = 60) -> str:
    return code if len(code) <= width else code[:width - 1] + "…"


def _short(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return rel if not rel.startswith("..") else path


def _secs(s: float | None) -> str:
    if s is None:
        return "–"
    if s >= 1:
        return f"{s:.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.1f} ms"
    return f"{s * 1e6:.0f} µs"


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f} %"


@dataclass
class ProfileReport:
    """What ``tfperf profile`` found. ``to_dict()`` is the ``--json`` document."""

    obs: Observation
    capture: CaptureSummary | None = None
    capture_note: str | None = None  # why there is no capture, or what part of the run it holds
    logdir: str | None = None
    error: BaseException | None = None
    target: str | None = None
    script: bool = False  # a script ran (its sys.exit(N) is its exit status, not an error)
    findings: list[Finding] = field(default_factory=list)
    # Causes seen but not advice (under the share threshold, or made inside a library): data
    not_advice: list[Finding] = field(default_factory=list)
    # The capture split per device (MirroredStrategy replicas), when ops ran on two or more
    replicas: replicas.ReplicaSplit | None = None
    # How a (file, line) site is named in text; default ``path:line``. Notebooks name cells
    # (``cell 12, line 4``) since a cell's file name means nothing to its reader.
    site_label: Callable[[str, int], str] | None = None
    # Why the run was slow: causes joined from the hot lines and the code (causes.py)
    causes: list[causes_mod.Cause] = field(default_factory=list)

    def site(self, path: str, line: int) -> str:
        if self.site_label is not None:
            return self.site_label(path, line)
        return f"{_short(path)}:{line}"

    def __repr__(self) -> str:
        return (f"<ProfileReport {len(self.obs.functions)} functions, "
                f"{sum(s.count for s in self.obs.host_syncs.values())} host syncs, "
                f"{self.obs.eager_op_count} eager ops, {len(self.findings)} findings>")

    def __str__(self) -> str:
        return self.text()

    @property
    def exit_status(self) -> int:
        """1 when the run raised or advice warns (the CLI contract: found → 1), else 0; an
        interrupted script's run: the signal's status (130 Ctrl-C, 143 SIGTERM)."""
        if isinstance(self.error, KeyboardInterrupt):
            return interrupt_status(self.error)
        if self.error is not None:
            return 1
        return 1 if any(f.status in (Status.WARN, Status.FAIL) for f in self.findings) else 0

    def error_dict(self) -> dict[str, Any] | None:
        if self.error is None:
            return None
        tb = "".join(traceback.format_exception(type(self.error), self.error,
                                                _users_part(self.error.__traceback__)))
        return {"type": type(self.error).__name__, "message": str(self.error),
                "traceback": tb}

    def to_dict(self) -> dict[str, Any]:
        wall = self.obs.wall_s
        cap = self.capture.to_dict(top=TOP_OPS) if self.capture else None
        ops = cap.pop("top_ops") if cap else []
        return {
            "target": self.target,
            "wall_s": wall,
            "tfperf_s": self.obs.overhead_s,
            "functions": [f.to_dict() for f in
                          sorted(self.obs.functions, key=lambda f: (-f.traces, -f.total_s))],
            "host_syncs": [s.to_dict(wall) for s in self.obs.sorted_lines("host_syncs")],
            "tf_own_syncs": [{"path": p, "line": n, "count": c}
                             for (p, n), c in sorted(self.obs.tf_own_syncs.items())],
            "eager_ops": [s.to_dict(wall) for s in self.obs.sorted_lines("eager_ops")],
            "tf_own_ops": [{"path": p, "line": n, "count": c}
                           for (p, n), c in sorted(self.obs.tf_own_ops.items())],
            "ops": ops,
            "capture": cap,
            "capture_note": self.capture_note,
            "replicas": self.replicas.to_dict() if self.replicas else None,
            "facts": quick_facts(),
            "steps": self.obs.steps.to_dict() if self.obs.steps else None,
            "causes": [c.to_dict() for c in self.causes],
            "advice": [f.to_dict() for f in self.findings],
            "not_advice": [f.to_dict() for f in self.not_advice],
            "logdir": self.logdir,
            "unavailable": dict(self.obs.unavailable),
            "error": self.error_dict(),
        }

    def random_ops(self) -> list[str]:
        """Random ops run inside the steps (eager and tf.function draw different streams)."""
        steps = self.obs.steps
        sites = steps.eager_ops if steps is not None else self.obs.eager_ops
        return sorted({op for site in sites for op in self.obs.eager_ops[site].kinds
                       if site in self.obs.eager_ops and "Random" in op
                       and not op.startswith("Stateless")})

    def to_json(self) -> str:
        return render.to_json(self.to_dict())

    def to_html(self) -> str:
        """The report as one self-contained HTML page (``tfperf profile --html``)."""
        from tfperf.core.html import report_page

        return report_page("profile", self.to_json())

    def _repr_html_(self) -> str:
        from tfperf.core.html import report_fragment

        return report_fragment("profile", self.to_json())

    # -- text ------------------------------------------------------------------------------

    def text(self, color: bool = False) -> str:
        b = lambda s: render.style(s, "bold", color=color)  # noqa: E731
        wall = self.obs.wall_s
        own = self.obs.overhead_s
        out = [b(f"tfperf profile{': ' + self.target if self.target else ''}") +
               f" — {_secs(wall)} observed"
               + (f" (tfperf's own {_secs(own)} left out)" if own >= 1e-3 else "")]
        out += self._causes_text(b)
        out += self._functions_text(b)
        out += self._lines_text(b, "host_syncs", "Host syncs (tensor → host), by line",
                                "syncs", "via")
        for (path, line), n in sorted(self.obs.tf_own_syncs.items()):
            out.append(f"  {self.site(path, line)}: {n} TensorFlow's own, not counted (a "
                       "tf.function's first call creating its variables and checking them)")
        out += self._lines_text(b, "eager_ops", "Eager ops, by line", "ops", "top ops")
        for (path, line), n in sorted(self.obs.tf_own_ops.items()):
            out.append(f"  {self.site(path, line)}: {n} TensorFlow's own, not counted (a "
                       "tf.function's first call creating its variables and checking them)")
        out += self._capture_text(b)
        out += self._replicas_text(b)
        if self.obs.unavailable:
            out += ["", b("Not observed")]
            out += [f"  {k}: {v}" for k, v in self.obs.unavailable.items()]
        out += ["", b("Advice")]
        out.append(render.findings_text(self._shown_findings(), color=color) if self.findings
                   else "  nothing above the thresholds")
        if self.not_advice:
            out.append(f"  ({len(self.not_advice)} more below the advice thresholds or not the "
                       f"line's own doing: --json lists them under not_advice)")
        if self.script and isinstance(self.error, SystemExit):  # its status, not a crash
            frames = traceback.extract_tb(self.error.__traceback__)
            where = f" at {frames[-1].filename}:{frames[-1].lineno}" if frames else ""
            code = self.error.code  # sys.exit("message"): Python prints it, status 1
            status = code if isinstance(code, int) else f"1: {code}"
            out += ["", render.style(f"The script exited with status {status} "
                                     f"(sys.exit{where}); the report covers what ran before "
                                     f"it.", "bold", color=color)]
        elif isinstance(self.error, KeyboardInterrupt):
            from tfperf.profile.attribution import is_user_file

            users = [f for f in traceback.extract_tb(self.error.__traceback__)
                     if is_user_file(f.filename) and "runpy" not in f.filename]
            where = f" at {users[-1].filename}:{users[-1].lineno}" if users else ""
            out += ["", render.style(f"The run was interrupted ({interrupt_name(self.error)})"
                                     f"{where}; the report covers what ran before it.",
                                     "bold", color=color)]
        elif self.error is not None:
            out += ["", render.style("The run raised an error (the report covers what ran "
                                     "before it):", "red", "bold", color=color)]
            out.append(self.error_dict()["traceback"].rstrip())  # type: ignore[index]
        return "\n".join(out)

    def _shown_findings(self) -> list[Finding]:
        if self.site_label is None:
            return self.findings
        out = []
        for f in self.findings:
            loc = f.location
            if loc is not None and loc.path and loc.line is not None:
                f = replace(f, location=Location(path=self.site(loc.path, loc.line)))
            out.append(f)
        return out

    def _causes_text(self, b: Any) -> list[str]:
        if not self.causes:
            return []
        facts = quick_facts()
        where = ""
        if facts.get("tensorflow"):
            gpus = facts.get("gpus")
            where = f"; TF {facts['tensorflow']}, " + (
                "no GPU visible to TensorFlow (tfperf doctor says why)" if gpus == 0 else
                f"{gpus} GPU(s)" if gpus else "devices unknown")
        out = ["", b(f"Why it is slow (causes, by share of the run{where})")]
        number = {c.title: i for i, c in enumerate(self.causes, 1)}
        for i, c in enumerate(self.causes, 1):
            within = f", within {number[c.within]}" if c.within in number else ""
            out.append(f"  {i}. {c.title}: {_secs(c.seconds)}, {_pct(c.share)} of the run"
                       f"{within}")
            if c.detail:
                out.append(f"     {c.detail}")
            rows = [[self.site(h.path, h.line), _secs(h.seconds),
                     f"{h.ops:,} ops" if h.ops else f"{h.syncs:,} syncs" if h.syncs else "–",
                     _clip(h.code) + (f"  [{h.internal}: internal]" if h.internal else "")]
                    for h in c.lines[:CAUSE_LINES]]
            if rows:
                out.append(_indent(render.text_table(["line", "time", "events", "code"], rows,
                                                     "lrrl"), "     "))
            if len(c.lines) > CAUSE_LINES:
                out.append(f"     … and {len(c.lines) - CAUSE_LINES} more lines")
            for f in c.lint[:2]:
                loc = f.location
                where = self.site(loc.path, loc.line) if loc and loc.path and loc.line else ""
                out.append(f"     lint: {where} {f.code} {f.message}")
            auto = " (automatic: --try-fixes applies it to a copy and measures it)" \
                if c.automatic and c.trial is None else ""
            if c.kind == "discarded-op-result":
                auto = " (never applied automatically: it changes what the code computes)"
            out.append(f"     fix: {c.fix}{auto}")
            if c.trial is not None:
                out.append(f"     measured ({c.trial.patch.name}): {c.trial.summary()}")
                if c.trial.copy:
                    out.append(f"     patched copy: {c.trial.copy}")
        return out

    def _functions_text(self, b: Any) -> list[str]:
        fns = sorted(self.obs.functions, key=lambda f: (-f.traces, -f.total_s))
        if not fns:
            return ["", b("tf.function calls"), "  none observed"]
        rows = [[f.name, f.calls, f.traces, _secs(f.trace_s), _secs(f.run_s)] for f in fns]
        out = ["", b("tf.function calls"),
               _indent(render.text_table(["function", "calls", "traces", "tracing", "running"],
                                         rows, "lrrrr"))]
        for f in fns:
            for c in f.to_dict()["retrace_causes"][:3]:
                how = retrace.summarise_kind(c["kind"], c["argument"], c["distinct"])
                examples = ", ".join(c["examples"])
                out.append(f"  {f.name}: {c['retraces']} retrace(s): {how} ({examples})")
            if f.variable_traces:
                out.append(f"  {f.name}: its first call created variables, so TensorFlow "
                           f"traced it {f.variable_traces} more time(s) (not counted: not a "
                           "retrace)")
        return out

    def _lines_text(self, b: Any, which: str, title: str, unit: str, extra: str) -> list[str]:
        lines = self.obs.sorted_lines(which)
        if not lines:
            return ["", b(title), "  none observed"]
        wall = self.obs.wall_s
        rows = []
        for s in lines[:TOP_LINES]:
            kinds = " ".join(f"{k}×{n}" for k, n in s.kinds.most_common(3))
            rows.append([self.site(s.path, s.line), f"{s.count:,}", _secs(s.total_s),
                         _pct(s.total_s / wall if wall else None), kinds])
        out = ["", b(title), _indent(render.text_table(
            ["line", unit, "time", "of run", extra], rows, "lrrrl"))]
        if len(lines) > TOP_LINES:
            out.append(f"  … and {len(lines) - TOP_LINES} more lines (--json lists all)")
        return out

    def _capture_text(self, b: Any) -> list[str]:
        if self.capture is None:
            return ["", b("Op time (profiler capture)"), f"  {self.capture_note or 'no capture'}"]
        c = self.capture
        where = "host only: no GPU in this capture" if c.host_only else ", ".join(c.devices)
        out = ["", b(f"Op time (profiler capture, {where})"), f"  capture: {c.path}"]
        if self.capture_note:  # a bounded capture: what part of the run it holds
            out.append(f"  {self.capture_note}")
        rows = [[o.name, o.type, o.where + (" eager" if o.eager else ""), o.count,
                 _secs(o.self_s)] for o in c.ops[:TOP_OPS]]
        if rows:
            out.append(_indent(render.text_table(
                ["top ops by self time", "type", "where", "count", "self"], rows, "lllrr")))
        types = sorted(c.by_type.items(), key=lambda kv: -kv[1])[:8]
        if types:
            out.append("  by type: " + ", ".join(f"{k} {_secs(v)}" for k, v in types))
        out.append(f"  steps: {c.steps} ({c.step_source})"
                   + (f", median step {_secs(c.step_s)}" if c.step_s is not None else ""))
        out.append(f"  host op time {_secs(c.host_op_s)}; device op time "
                   f"{_secs(c.device_op_s) if not c.host_only else 'n/a (no device)'}")
        out.append(f"  eager share of op time {_pct(c.eager_share)}; input wait "
                   f"{_pct(c.input_share)} of step time")
        if not c.host_only:
            out.append(f"  kernel launches per step {c.launches_per_step or 0:.0f}; "
                       f"host→device copies {_secs(c.h2d_s)}, device→host {_secs(c.d2h_s)} "
                       f"({c.copies} copies)")
        if self.logdir:
            out.append(f"  open it: tensorboard --logdir {self.logdir}  (Profile tab, XProf)")
        return out


    def _replicas_text(self, b: Any) -> list[str]:
        split = self.replicas
        if split is None:
            return []
        step = split.step_s
        slow = split.slowest
        rows = [[short_device(r.device) + (" (slowest)" if r is slow else ""), f"{r.ops:,}",
                 _secs(r.compute_s), _secs(r.collective_s),
                 _pct(r.collective_s / step if step else None)] for r in split.replicas]
        what = "host op events" if split.where == "host" else "device kernels"
        out = ["", b(f"Replicas ({len(split.replicas)} devices, {what}; median per step)"),
               _indent(render.text_table(
                   ["device", "ops", "compute", "collective", "of step"], rows, "lrrrr"))]
        ratio = f" ({split.ratio:.2f}×)" if split.ratio else ""
        out.append(f"  step {_secs(step)}; slowest {short_device(slow.device)}: compute "
                   f"{_secs(slow.compute_s)} against {_secs(split.others_compute_s)}{ratio}, "
                   f"a gap of {_secs(split.gap_s)} a step")
        if split.unattributed_s > 0:
            out.append(f"  on no known device: {_secs(split.unattributed_s)} of op time a step "
                       f"({_pct(1 - (split.attributed_share or 0.0))})")
        return out


def _users_part(tb: Any) -> Any:
    """The traceback from the first frame that is not tfperf's own running machinery (the
    runner, runpy): the user's script is where it starts; all of it when none is theirs."""
    from tfperf.profile.attribution import is_user_file

    start = tb
    while start is not None:
        name = start.tb_frame.f_code.co_filename
        if is_user_file(name) and "runpy" not in name:
            return start
        start = start.tb_next
    return tb


def quick_facts() -> dict[str, Any]:
    """The TensorFlow this run used and the GPUs it saw (TF already loaded; nothing else is
    probed: ``tfperf doctor`` gathers the full facts)."""
    import sys

    tf = sys.modules.get("tensorflow")
    if tf is None:
        return {}
    facts: dict[str, Any] = {"tensorflow": getattr(tf, "__version__", None), "gpus": None}
    with contextlib.suppress(Exception):  # a TF that cannot say: unknown, not zero
        facts["gpus"] = len(tf.config.list_physical_devices("GPU"))
    return facts


def _indent(text: str, pad: str = "  ") -> str:
    return "\n".join(pad + line for line in text.splitlines())


def build_report(obs: Observation, *, error: BaseException | None = None,
                 capture: CaptureSummary | None = None, capture_note: str | None = None,
                 logdir: str | None = None, target: str | None = None) -> ProfileReport:
    rep = ProfileReport(obs=obs, capture=capture, capture_note=capture_note, logdir=logdir,
                        error=error, target=target)
    if capture is not None:
        rep.replicas = replicas.split(capture, obs.placement)
    partial = capture is not None and capture_note is not None  # a bounded capture's note
    found = advice.advise(obs, capture, rep.replicas, partial=partial)
    rep.findings = [f for f in found if f.data.get("advice", True)]
    rep.not_advice = [f for f in found if not f.data.get("advice", True)]
    rep.causes = causes_mod.explain(obs, rep.findings, capture=capture)
    rep.findings = [_in_its_cause(f, rep.causes) for f in rep.findings]
    return rep


def _in_its_cause(finding: Finding, causes: list[causes_mod.Cause]) -> Finding:
    """Eager-op advice at a line that a cause explains otherwise (a training step's line,
    Keras run eagerly, a predict, a compiled call: anything but a Python loop), and the
    capture's eager share when such a cause leads, get that cause's fix: vectorising is not
    the remedy for ops a training step runs."""
    if finding.code not in ("profile.eager_ops", "profile.eager_share"):
        return finding
    loc = finding.location
    if finding.code == "profile.eager_ops":  # any cause but a Python loop's has its own fix
        cause = next((c for c in causes if c.kind != "python-loop" and loc is not None and any(
            (h.path, h.line) == (loc.path, loc.line) for h in c.lines)), None)
    else:
        cause = next((c for c in causes if c.kind in _OWN_FIX), None)
    if cause is None:
        return finding
    rule = "TFP306" if cause.kind == "eager-training-step" else None
    data = dict(finding.data, cause=cause.title, rule=rule)
    message = finding.message
    if finding.code == "profile.eager_ops":
        see = f" (see {rule})" if rule else ""
        message = f"{message.split(' (see ', 1)[0]}: part of the {cause.title}{see}"
    return replace(finding, message=message, hint=cause.fix, data=data)


# causes whose fix replaces the capture's eager-share advice when they lead
_OWN_FIX = frozenset({"eager-training-step", "keras-eager", "predict-per-item",
                      "predict-per-call", "model-call-per-item", "weight-loop", "eager-update",
                      "fit-per-call"})
