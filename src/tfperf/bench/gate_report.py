"""The gate's verdicts as text, JSON, Markdown (a pull-request comment) or GitHub annotations."""

from __future__ import annotations

from tfperf.bench.gate import (
    BY_RAW_MEDIANS,
    BY_ROUND_PAIRS,
    BY_YARDSTICK,
    IMPROVEMENT,
    INCONCLUSIVE,
    NOT_COMPARABLE,
    NOT_MEASURED,
    REGRESSION,
    CounterChange,
    GateResult,
    TimeVerdict,
    percent,
)
from tfperf.core import render
from tfperf.core.measure import format_seconds

FORMATS = ("text", "json", "markdown", "github")
_MARK = {REGRESSION: "✗", IMPROVEMENT: "✓", NOT_COMPARABLE: "?", INCONCLUSIVE: "?"}

# The judged ratio's column is named for how it was judged, so that no figure in the table
# means something other than its header says (the raw medians' ratio has its own column).
_JUDGED_HEADER = {BY_YARDSTICK: "÷ yardstick", BY_ROUND_PAIRS: "per-round ratio"}


def _x(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}×"


def _interval(t: TimeVerdict) -> str:
    if t.ratio is None:
        return "–"
    return f"{t.ratio:.3f}× [{t.low:.3f}, {t.high:.3f}]"


def _detectable_cell(t: TimeVerdict, fail_over: float) -> str:
    if t.detectable is None:
        return "–"
    return f"±{max(t.detectable, fail_over):.1%}"


def _methods(res: GateResult) -> list[str]:
    return sorted({t.method for t in res.times if t.method})


def _time_table(res: GateResult) -> tuple[list[str], list[list[str]]]:
    """Headers and rows. ``now/baseline`` is always the ratio of the two medians shown; the
    ratio the verdict rests on gets its own column unless it is that same ratio."""
    methods = _methods(res)
    only_raw = methods in ([], [BY_RAW_MEDIANS])
    judged = _JUDGED_HEADER.get(methods[0], "judged ratio") if len(methods) == 1 else \
        "judged ratio"
    yardstick = any(t.yardstick_ratio is not None for t in res.times)
    conf = percent(res.confidence)
    headers = ["variant", "baseline", "now",
               f"now/baseline [{conf} interval]" if only_raw else "now/baseline"]
    headers += ["yardstick now/baseline"] if yardstick else []
    headers += [] if only_raw else [f"{judged} [{conf} interval]"]
    headers += ["detectable", "p (MWU)", "verdict"]
    rows = []
    for t in res.times:
        row = [t.variant, format_seconds(t.baseline_median_s),
               format_seconds(t.current_median_s),
               _interval(t) if only_raw else _x(t.raw_ratio)]
        row += [_x(t.yardstick_ratio)] if yardstick else []
        row += [] if only_raw else [_interval(t) if t.method != BY_RAW_MEDIANS else
                                    f"{_interval(t)} (raw)"]
        row += [_detectable_cell(t, res.fail_over),
                f"{t.p_value:.2g}" if t.p_value is not None else "–",
                f"{_MARK.get(t.verdict, '')} {t.verdict}".strip()]
        rows.append(row)
    return headers, rows


def _legend(res: GateResult) -> list[str]:
    """What each ratio column means, for the columns this table has."""
    methods = _methods(res)
    out = ["now/baseline: median now / median baseline of the raw times (the two columns "
           "before it)"]
    if any(t.yardstick_ratio is not None for t in res.times):
        out.append("yardstick now/baseline: the same for the yardstick, a fixed piece of CPU "
                   "work timed in every round: how the machine's speed moved between the runs")
    if BY_YARDSTICK in methods:
        out.append("÷ yardstick: median now / median baseline once each round is divided by "
                   "the yardstick timed in it (normalised for the machine's speed); the "
                   "verdict rests on it")
    if BY_ROUND_PAIRS in methods:
        out.append("per-round ratio: the median over rounds of now / baseline timed side by "
                   "side in one run (interleaved); the verdict rests on it")
    out.append(f"interval: bootstrap at {percent(res.confidence)}; regression when the "
               f"interval lies above 1 and the ratio is above +{res.fail_over:.0%}; "
               "detectable: the smallest change this run could tell from noise")
    if res.inconclusive:
        out.append("inconclusive: separate runs whose own figures say the machine changed "
                   "between them (see the warning); not a failure")
    return out


def _machine_warnings(res: GateResult) -> list[str]:
    out = []
    for t in res.times:
        if not t.machine_changes:
            continue
        why = "; ".join(t.machine_changes)
        if t.verdict == NOT_MEASURED:
            out.append(f"warning: {t.variant}: time not measured ({t.reason}), and the machine "
                       f"changed between the runs ({why}), which may be why. Rerun both on a "
                       "quiet machine or with a larger budget")
        elif t.verdict == INCONCLUSIVE:
            out.append(f"warning: {t.variant}: time inconclusive, the machine changed between "
                       f"the runs ({why}); the times alone say {t.strict_verdict} "
                       f"({_x(t.ratio)}). Rerun both on a quiet machine, time both in one run "
                       "with --interleave-with, or judge them anyway with --strict")
        else:
            out.append(f"warning: {t.variant}: judged although the machine changed between "
                       f"the runs ({why}) (--strict)")
    return out


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
    if res.inconclusive:
        n = len(res.inconclusive)
        return (f"INCONCLUSIVE: no regression found against {res.baseline_source}, but "
                f"{n} time{'s' if n > 1 else ''} could not be judged: the machine changed")
    if not res.comparable and res.times and not res.counters_only:
        # the times were not judged: "no regression" would claim more than was compared
        return (f"no counter regression against {res.baseline_source}; times not compared "
                "(another machine)")
    return f"no regression against {res.baseline_source}"


def _machine_note(res: GateResult) -> str | None:
    if res.comparable:
        return None
    diffs = "; ".join(f"{k}: {a!r} → {b!r}" for k, a, b in res.differences)
    return (f"times not comparable: the baseline was measured on another machine ({diffs}); "
            "counters are still compared")


def to_text(res: GateResult, color: bool = False) -> str:
    tone = "red" if res.regressions else "yellow" if res.inconclusive else "green"
    out = [render.style(_headline(res), "bold", tone, color=color)]
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
        out.append(render.text_table(*_time_table(res)))
        out += [f"  {line}" for line in _legend(res)]
        out += [render.style(w, "yellow", color=color) for w in _machine_warnings(res)]
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
        out.append(render.markdown_table(*_time_table(res)))
        out += [""] + [f"- {line}" for line in _legend(res)]
        warnings = _machine_warnings(res)
        out += [""] + [f"> {w}" for w in warnings] if warnings else []
    out += [f"- ✗ {f}" for f in res.failures]
    out += [f"- {n}" for n in res.notes]
    return "\n".join(out)


_escape, _prop = render.github_data, render.github_property


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
        if t.verdict in (REGRESSION, IMPROVEMENT, NOT_COMPARABLE, INCONCLUSIVE):
            level = {REGRESSION: "error", IMPROVEMENT: "notice"}.get(t.verdict, "warning")
            title = _prop(f"tfperf: time {t.verdict}")
            out.append(f"::{level} title={title}::{_escape(f'{t.variant}: {t.reason}')}")
    for f in res.failures:
        out.append(f"::error title={_prop('tfperf: variant fails')}::{_escape(f)}")
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
