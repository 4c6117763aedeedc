"""The explainer behind ``tfperf explain``: known causes and fixes for a TensorFlow GPU log.

Each line is matched against the knowledge base's error patterns (first pattern wins; the
table lists specific patterns before general ones). Recognised lines come back most
important first: errors, then warnings, then information, harmless noise last; within a
level, in log order. Repeats of the same message are folded into one match with a count.
The doctor runs :func:`explain_text` over TensorFlow's own import log.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

from tfperf import __version__

EXPLAIN_SCHEMA_VERSION = 1
_MAX_SHOWN = 240  # characters of a log line to show

# "2021-05-20 10:00:00.123456: W tensorflow/stream_executor/.../dso_loader.cc:64] msg" and the
# absl form "I0000 00:00:1796224777.809957    5394 cpu_feature_guard.cc:227] msg"
_PREFIX = re.compile(r"^.*?\b(?P<origin>[\w./-]+\.(?:cc|cpp|h|py):\d+)\]\s?(?P<msg>.*)$")


@dataclass(frozen=True)
class Match:
    id: str
    cause: str
    fix: str
    line: str  # the message, its log prefix removed
    line_number: int  # 1-based, first occurrence
    severity: str  # error | warning | info
    benign: bool
    source: str = ""
    origin: str | None = None  # the TF source file:line the log prefix names
    count: int = 1
    line_numbers: tuple[int, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["line_numbers"] = list(self.line_numbers)
        return d


def _split(line: str) -> tuple[str | None, str]:
    m = _PREFIX.match(line)
    if m:
        return m.group("origin").rsplit("/", 1)[-1], m.group("msg").strip()
    return None, line.strip()


def _rank(m: Match) -> tuple[int, int, int]:
    from tfperf.doctor.knowledge import SEVERITY_ORDER

    return (1 if m.benign else 0, SEVERITY_ORDER.get(m.severity, 9), m.line_number)


def explain_text(text: str) -> list[Match]:
    """Recognised lines of ``text``, most important first (empty list: nothing known)."""
    from tfperf.doctor.knowledge import error_patterns

    patterns = error_patterns()
    found: dict[tuple[str, str], Match] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        for p in patterns:
            if not p.regex.search(raw):
                continue
            origin, msg = _split(raw)
            key = (p.id, "" if p.benign else msg)  # harmless noise folds into one entry
            prev = found.get(key)
            if prev is not None:
                found[key] = Match(**{**prev.__dict__, "count": prev.count + 1,
                                      "line_numbers": (*prev.line_numbers, number)})
            else:
                shown = msg if len(msg) <= _MAX_SHOWN else msg[:_MAX_SHOWN - 1] + "…"
                found[key] = Match(id=p.id, cause=p.cause, fix=p.fix, line=shown,
                                   line_number=number, severity=p.severity, benign=p.benign,
                                   source=p.source, origin=origin, line_numbers=(number,))
            break
    return sorted(found.values(), key=_rank)


def problems(matches: list[Match]) -> list[Match]:
    """The matches that are not harmless noise."""
    return [m for m in matches if not m.benign]


# ---------------------------------------------------------------------------------------------
# rendering


def _summary(matches: list[Match], n_lines: int) -> str:
    if n_lines == 0:
        return "the log is empty: nothing to explain"
    if not matches:
        return (f"no known TensorFlow/CUDA message recognised in {n_lines} line"
                f"{'s' if n_lines != 1 else ''}: this log is not in tfperf's knowledge base")
    bad, harmless = len(problems(matches)), len(matches) - len(problems(matches))
    return (f"{bad} problem{'s' if bad != 1 else ''} and {harmless} harmless message"
            f"{'s' if harmless != 1 else ''} recognised in {n_lines} lines")


def explain_report_text(matches: list[Match], n_lines: int, color: bool = False) -> str:
    from tfperf.core.render import style

    colours = {"error": "red", "warning": "yellow", "info": "cyan"}
    out = [style(_summary(matches, n_lines), "bold", color=color)]
    for m in matches:
        tag = "HARMLESS" if m.benign else m.severity.upper()
        where = f"line {m.line_number}" + (f" (+{m.count - 1} more)" if m.count > 1 else "")
        badge = style(tag, "green" if m.benign else colours[m.severity], "bold", color=color)
        out += ["", f"{badge} {where} [{m.id}]: {m.line}"]
        out.append(f"  {style('cause:', 'dim', color=color)} {m.cause}")
        if not m.benign or m.fix:
            out.append(f"  {style('fix:', 'cyan', color=color)}   {m.fix}")
        out.append(f"  {style('source:', 'dim', color=color)} {m.source}")
    return "\n".join(out)


def explain_json(matches: list[Match], n_lines: int) -> str:
    from tfperf.core.render import to_json

    bad = problems(matches)
    return to_json({
        "tfperf": __version__, "schema": EXPLAIN_SCHEMA_VERSION, "lines": n_lines,
        "recognised": bool(matches), "summary": {
            "problems": len(bad), "harmless": len(matches) - len(bad),
            "errors": sum(m.severity == "error" for m in bad),
            "warnings": sum(m.severity == "warning" for m in bad)},
        "message": _summary(matches, n_lines),
        "matches": [m.to_dict() for m in matches],
        "exit_status": 1 if bad else 0})


def explain_markdown(matches: list[Match], n_lines: int) -> str:
    from tfperf.core.render import markdown_table

    out = ["## tfperf explain", "", f"**{_summary(matches, n_lines)}**"]
    if matches:
        out += ["", markdown_table(
            ["", "line", "message", "cause", "fix"],
            [("harmless" if m.benign else m.severity, m.line_number, f"`{m.line}`", m.cause,
              m.fix) for m in matches])]
    return "\n".join(out) + "\n"
