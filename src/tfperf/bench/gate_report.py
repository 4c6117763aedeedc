"""The gate's verdicts as text, JSON, Markdown (a pull-request comment) or GitHub annotations."""

from __future__ import annotations

from tfperf.bench.gate import (
    IMPROVEMENT,
    NOT_COMPARABLE,
    REGRESSION,
    CounterChange,
    GateResult,
    TimeVerdict,
    percent,
)
from tfperf.core import render
from tfperf.core.measure import format_seconds

FORMATS = ("text", "json", "markdown", "github")
_MARK = {REGRESSION: "✗", IMPROVEMENT: "✓", NOT_COMPARABLE: "?"}


def _ratio_cell(t: TimeVerdict) -> str:
    if t.ratio is None:
        return "–"
    return f"{t.ratio:.3f}× [{t.low:.3f}, {t.high:.3f}]"


def _detectable_cell(t: TimeVerdict, fail_over: float) -> str:
    if t.detectable is None:
        return "–"
    return f"±{max(t.detectable, fail_over):.1%}"


def _time_rows(res: GateResult) -> list[list[str]]:
    return [[t.variant, format_seconds(t.baseline_median_s), format_seconds(t.current_median_s),
             _ratio_cell(t), _detectable_cell(t, res.fail_over),
             f"{t.p_value:.2g}" if t.p_value is not None else "–",
             f"{_MARK.get(t.verdict, '')} {t.verdict}".strip()] for t in res.times]


_TIME_HEADERS = ("variant", "baseline", "now", "ratio [interval]", "detectable", "p (MWU)",
                 "verdict")


def _line_text(row: dict) -> str:
    where = f"{row['path']}:{row['line']}" if row.get("path") else "(unknown line)"
    detail = f" — {row['detail']}" if row.get("detail") else ""
    return f"{where}: {row['before']} → {row['after']}{detail}"


def _counter_lines(c: CounterChange) -> list[str]:
    return [_line_text(r) for r in c.lines[:5]]


def _headline(res: GateResult) -> str:
    regs = res.regressions
    if regs:
        return f"REGRESSION: {len(regs)} found against {res.baseline_source}"
    return f"no regression against {res.baseline_source}"


def _machine_note(res: GateResult) -> str | None:
    if res.comparable:
        return None
    diffs = "; ".join(f"{k}: {a!r} → {b!r}" for k, a, b in res.differences)
    return (f"times not comparable: the baseline was measured on another machine ({diffs}); "
            "counters are still compared")


def to_text(res: GateResult, color: bool = False) -> str:
    out = [render.style(_headline(res), "bold", "red" if res.regressions else "green",
                        color=color)]
    note = _machine_note(res)
    if note:
        out.append(note)
    if res.counters:
        out.append("")
        out.append("counters:")
        for c in res.counters:
            out.append(f"  {_MARK[c.verdict]} {c.verdict}: {c.message}")
            out += [f"      {line}" for line in _counter_lines(c)]
    else:
        out.append("counters: unchanged")
    if res.times:
        out.append("")
        out.append(render.text_table(_TIME_HEADERS, _time_rows(res)))
        out.append(f"(ratio: median now / median baseline, bootstrap interval at "
                   f"{percent(res.confidence)}; regression when significant and above "
                   f"+{res.fail_over:.0%}; detectable: the smallest change this run could "
                   "tell from noise)")
    elif res.counters_only:
        out.append("times: not compared (--counters-only)")
    for f in res.failures:
        out.append(f"✗ {f}")
    out += [f"note: {n}" for n in res.notes]
    return "\n".join(out)


def to_markdown(res: GateResult) -> str:
    out = [f"### tfperf regression gate: {_headline(res)}", ""]
    note = _machine_note(res)
    if note:
        out += [f"> {note}", ""]
    if res.counters:
        out += ["| variant | counter | baseline | now | verdict | lines |",
                "|---|---|---:|---:|---|---|"]
        for c in res.counters:
            lines = "<br>".join(f"`{line}`" for line in _counter_lines(c)) or "–"
            out.append(f"| {c.variant} | {c.counter} | {c.before} | {c.after} | "
                       f"{_MARK[c.verdict]} {c.verdict} | {lines} |")
        out.append("")
    else:
        out += ["Counters unchanged.", ""]
    if res.times:
        out.append(render.markdown_table(_TIME_HEADERS, _time_rows(res)))
        out += ["", f"Regression: bootstrap interval ({percent(res.confidence)}) of the ratio of "
                    f"medians above 1 and ratio above +{res.fail_over:.0%}."]
    out += [f"- ✗ {f}" for f in res.failures]
    out += [f"- {n}" for n in res.notes]
    return "\n".join(out)


def _escape(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _prop(s: str) -> str:
    return _escape(s).replace(":", "%3A").replace(",", "%2C")


def to_github(res: GateResult) -> str:
    """GitHub Actions workflow commands: an annotation per counter change on its line, one per
    time verdict that matters, then the text report for the log."""
    out = []
    for c in res.counters:
        level = "error" if c.verdict == REGRESSION else "notice"
        where = c.lines[0] if c.lines and c.lines[0].get("path") else None
        props = []
        if where:
            props += [f"file={_prop(str(where['path']))}", f"line={where['line']}"]
        props.append(f"title={_prop(f'tfperf: {c.counter} {c.verdict}')}")
        detail = f" ({where['detail']})" if where and where.get("detail") else ""
        out.append(f"::{level} {','.join(props)}::{_escape(c.message + detail)}")
    for t in res.times:
        if t.verdict in (REGRESSION, IMPROVEMENT, NOT_COMPARABLE):
            level = {REGRESSION: "error", IMPROVEMENT: "notice"}.get(t.verdict, "warning")
            title = _prop(f"tfperf: time {t.verdict}")
            out.append(f"::{level} title={title}::{_escape(f'{t.variant}: {t.reason}')}")
    for f in res.failures:
        out.append(f"::error title=tfperf: variant fails::{_escape(f)}")
    out.append(to_text(res))
    return "\n".join(out)


def render_gate(res: GateResult, fmt: str, color: bool = False) -> str:
    if fmt == "json":
        return render.to_json(res.to_dict())
    if fmt == "markdown":
        return to_markdown(res)
    if fmt == "github":
        return to_github(res)
    return to_text(res, color=color)


__all__ = ["FORMATS", "render_gate", "to_github", "to_markdown", "to_text"]
