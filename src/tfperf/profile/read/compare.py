"""`tfperf profile --compare A B`: two captures (before and after a change) side by side.

The article's habit (S22): profile, change one thing, profile again. Step time, its breakdown
and each op's time per step are put side by side, the ops that moved most first. Op times
are per step so that captures of different lengths compare.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

from tfperf.core.findings import Finding, Status
from tfperf.profile.read.report import ReadReport, read
from tfperf.profile.read.summary import CATEGORIES, ReadSummary

TOP = 15


@dataclass
class OpChange:
    name: str
    type: str
    where: str
    a_s: float  # self time per step in A
    b_s: float

    @property
    def delta_s(self) -> float:
        return self.b_s - self.a_s

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "type": self.type, "where": self.where,
                "a_s_per_step": self.a_s, "b_s_per_step": self.b_s, "delta_s": self.delta_s}


@dataclass
class Comparison:
    a: ReadReport
    b: ReadReport
    rows: list[tuple[str, float | None, float | None]] = field(default_factory=list)
    ops: list[OpChange] = field(default_factory=list)
    fed: bool = False  # a step's time includes the input wait before its marker

    @property
    def broken(self) -> list[Finding]:
        return [f for r in (self.a, self.b) for f in r.diagnosis if f.status is Status.FAIL]

    @property
    def exit_status(self) -> int:
        return 1 if self.broken or not (self.a.summaries and self.b.summaries) else 0

    @property
    def speedup(self) -> float | None:
        for name, a, b in self.rows:
            if name == "step (median)" and a and b:
                return a / b
        return None

    def to_dict(self) -> dict[str, Any]:
        return {"a": self.a.path, "b": self.b.path, "speedup": self.speedup,
                "rows": [{"what": n, "a": a, "b": b} for n, a, b in self.rows],
                "step_includes_input_before": self.fed,
                "ops": [o.to_dict() for o in self.ops[:TOP]],
                "diagnosis": {"a": [f.to_dict() for f in self.a.diagnosis],
                              "b": [f.to_dict() for f in self.b.diagnosis]}}

    def to_json(self) -> str:
        from tfperf.core.render import to_json

        return to_json(self.to_dict())

    def text(self, color: bool = False) -> str:
        from tfperf.core.measure import format_seconds as fs
        from tfperf.core.render import findings_text, style, text_table

        parts = [style(f"tfperf profile --compare {self.a.path} {self.b.path}", "bold",
                       color=color)]
        if self.broken or not (self.a.summaries and self.b.summaries):
            for label, r in (("A", self.a), ("B", self.b)):
                if r.diagnosis:
                    parts.append(f"{label}:\n" + findings_text(r.diagnosis, color=color))
            return "\n\n".join(parts)

        def ratio(a: float | None, b: float | None) -> str:
            return f"{a / b:.2f}×" if a and b else "–"

        parts.append(text_table(["", "A", "B", "A/B"],
                                [[n, fs(a), fs(b), ratio(a, b)] for n, a, b in self.rows],
                                "lrrr"))
        if self.ops:
            parts.append("Ops that moved most (self time per step)\n" + text_table(
                ["op", "where", "A", "B", "B−A"],
                [[o.name[:48], o.where, fs(o.a_s), fs(o.b_s),
                  ("+" if o.delta_s > 0 else "") + fs(o.delta_s)] for o in self.ops[:TOP]],
                "llrrr"))
        if self.fed:
            parts.append("a step includes the input wait before its marker (an eager loop's "
                         "`for batch in dataset`), as in --read's breakdown")
        s = self.speedup
        if s:
            how = f"{s:.2f}× faster" if s >= 1 else f"{1 / s:.2f}× slower"
            parts.append(f"B's median step is {how} than A's" if abs(s - 1) > 0.005
                         else "same median step time")
        return "\n\n".join(parts)


def _per_step(s: ReadSummary) -> dict[tuple[str, str], tuple[str, float]]:
    n = max(s.steps, 1)
    return {(o.name, o.where): (o.type, o.self_s / n) for o in s.ops}


def compare(path_a: str, path_b: str) -> Comparison:
    out = Comparison(read(path_a), read(path_b))
    if not (out.a.summaries and out.b.summaries):
        return out
    sa, sb = out.a.summaries[0], out.b.summaries[0]
    # a step with the input wait fetched before its marker (an eager loop's batch), as the
    # breakdown rows below count it: a faster pipeline shows in the step, not only in "input"
    fa, fb = sa.fed_step_times, sb.fed_step_times
    out.fed = bool(fa or fb)
    out.rows.append(("step (median)", statistics.median(fa) if fa else sa.step_s,
                     statistics.median(fb) if fb else sb.step_s))
    out.rows.append(("step (mean)", statistics.fmean(fa) if fa else sa.mean_step_s,
                     statistics.fmean(fb) if fb else sb.mean_step_s))
    bda = {b.where: b for b in sa.breakdowns}
    for bb in sb.breakdowns:
        ba = bda.get(bb.where)
        for c in CATEGORIES:
            out.rows.append((f"{bb.where} {c}", ba.mean(f"{c}_s") if ba else None,
                             bb.mean(f"{c}_s")))
    pa, pb = _per_step(sa), _per_step(sb)
    for key in set(pa) | set(pb):
        t = (pa.get(key) or pb.get(key) or ("", 0.0))[0]
        out.ops.append(OpChange(key[0], t, key[1], pa.get(key, ("", 0.0))[1],
                                pb.get(key, ("", 0.0))[1]))
    out.ops.sort(key=lambda o: -abs(o.delta_s))
    return out
