"""``tfperf profile TARGET --html``: why it is slow (the causes, with their fixes), the step
timeline, top ops and lines, retraces and host syncs with the advice, from the profile's JSON
document; the per-step memory curve where the document carries one (``memory_steps``)."""

from __future__ import annotations

import os
from typing import Any

from tfperf.core.html.parts import (
    Bar,
    Cell,
    Column,
    Doc,
    clip,
    esc,
    findings,
    finite,
    hbars,
    header,
    meter,
    pre,
    raw,
    seconds,
    section,
    size,
    table,
    timeline,
)

KIND = "profile"
TOP = 15
STEP_ROWS = 600  # a long run's memory table stops here (the curve and the JSON keep all)


def title(doc: Doc) -> str:
    return f"tfperf profile: {doc.data.get('target') or 'a watched region'}"


def site(path: str | None, line: int | None) -> str:
    if not path:
        return ""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        rel = path
    shown = rel if not rel.startswith("..") else path
    return f"{shown}:{line}" if line is not None else shown


def body(doc: Doc) -> str:
    d = doc.data
    sub = f"{seconds(d['wall_s'])} observed" if finite(d.get("wall_s")) else ""
    if finite(d.get("tfperf_s")) and d["tfperf_s"] >= 1e-3:
        sub += f" (tfperf's own {seconds(d['tfperf_s'])} left out)"
    facts = d.get("facts") or {}
    if facts.get("tensorflow"):
        sub += f"; TF {facts['tensorflow']}"
    out = [header(title(doc), sub)]
    if d.get("error"):
        out.append(f'<p class="loud">The run raised {esc(str(d["error"].get("type")))}: '
                   f'{esc(str(d["error"].get("message")))} (the report covers what ran before '
                   "it; the traceback is at the end)</p>")
    out.append(causes(doc))
    out.append(steps(doc))
    out.append(memory(doc))
    out.append(functions(doc))
    for key, name, unit in (("host_syncs", "Host syncs (tensor → host), by line", "syncs"),
                            ("eager_ops", "Eager ops, by line", "ops")):
        out.append(lines(doc, key, name, unit, own=d.get(f"tf_own_{key.split('_')[-1]}")))
    out.append(ops(doc))
    out.append(replicas(doc))
    advice = findings(d.get("advice") or [])
    more = len(d.get("not_advice") or [])
    out.append(section("Advice", advice, f"{more} more below the advice thresholds or not the "
                       "line's own doing (the JSON lists them under not_advice)" if more else ""))
    if d.get("unavailable"):
        out.append(section("Not observed", "<ul>" + "".join(
            f"<li><b>{esc(k)}</b>: {esc(str(v))}</li>" for k, v in d["unavailable"].items())
            + "</ul>"))
    if d.get("error"):
        out.append(section("The run's error", pre(str(d["error"].get("traceback", "")))))
    return "\n".join(x for x in out if x)


def causes(doc: Doc) -> str:
    items = doc.data.get("causes") or []
    if not items:
        return ""
    cards = []
    numbers = {c["title"]: i for i, c in enumerate(items, 1)}
    for i, c in enumerate(items):
        p = f"causes.{i}"
        within = f", within {numbers[c['within']]}" if c.get("within") in numbers else ""
        rows = [[Cell(site(h.get("path"), h.get("line"))), doc.cell(f"{p}.lines.{j}.seconds", "s"),
                 Cell(f"{h['ops']:,} ops" if h.get("ops") else f"{h['syncs']:,} syncs"
                      if h.get("syncs") else "–", h.get("ops") or h.get("syncs") or 0, "r"),
                 raw(f"<code>{esc(clip(str(h.get('code', ''))))}</code>"
                     + (f" [{esc(str(h['internal']))}: internal]" if h.get("internal") else ""))]
                for j, h in enumerate(c.get("lines") or [])]
        lint = "".join(f"<li>lint: <code>{esc(site(f.get('path'), f.get('line')))}</code> "
                       f"<code>{esc(str(f.get('code')))}</code> {esc(str(f.get('message')))}</li>"
                       for f in c.get("lint") or [])
        auto = (" (automatic: <code>--try-fixes</code> applies it to a copy and measures it)"
                if c.get("automatic") and not c.get("measured") else "")
        measured = _measured(doc, f"{p}.measured", c.get("measured"))
        detail = f'<p class="note">{esc(c["detail"])}</p>' if c.get("detail") else ""
        hot = table(["line", "time", "events", "code"], rows, "lrrl") if rows else ""
        cards.append(
            f'<div class="card"><h3>{i + 1}. {esc(c["title"])}</h3>'
            f"<p>{meter(c.get('share'))}{doc.fig(f'{p}.seconds', 's')}, "
            f"{doc.fig(f'{p}.share', '%')} of the run{esc(within)}</p>{detail}"
            f"<details><summary>hot lines ({len(rows)})</summary>{hot}</details>"
            f"<ul>{lint}<li><b>fix:</b> {esc(str(c.get('fix')))}{auto}</li></ul>"
            f"{measured}</div>")
    return section("Why it is slow (causes, by share of the run)", "".join(cards))


def _measured(doc: Doc, at: str, m: dict[str, Any] | None) -> str:
    if not m:
        return ""
    if m.get("error") or not finite(m.get("speedup")):
        return (f"<p>measured ({esc(str(m.get('fix')))}): "
                f"{esc(str(m.get('error') or m.get('reason') or 'no figure'))}</p>")
    interval = m.get("interval") or [None, None]
    noise = ""
    if len(interval) == 2 and all(finite(v) for v in interval):
        within = interval[0] <= 1.0 <= interval[1]  # the rounds cannot tell the two apart
        noise = (f" (interval {doc.fig(f'{at}.interval.0', 'x')}–"
                 f"{doc.fig(f'{at}.interval.1', 'x')}"
                 f"{': no gain beyond the noise' if within else ''})")
    return (f"<p>measured ({esc(str(m.get('fix')))}): {doc.fig(f'{at}.before_step_s', 's')} → "
            f"{doc.fig(f'{at}.after_step_s', 's')} a step, {doc.fig(f'{at}.speedup', 'x')}"
            f"{noise}; results: {esc(str(m.get('results')))}</p>")


def steps(doc: Doc) -> str:
    d = doc.data
    out = []
    loop = d.get("steps") or {}
    if loop.get("durations_s"):
        cols = [Column([("step", s)], f"step {i + 1}: {seconds(s)}")
                for i, s in enumerate(loop["durations_s"])]
        out.append(f"<p>{esc(str(loop.get('source', '')))}: {doc.fig('steps.steps', 'n')} "
                   f"steps, median {doc.fig('steps.median_s', 's')}</p>"
                   + timeline(cols, {"step": "bar"}, seconds, "time of each step"))
    cap = d.get("capture") or {}
    windows = cap.get("step_windows_s") or []
    if windows:
        cols = [Column([("step", w)], f"step {i + 1}: {seconds(w)} (at +{seconds(at)})")
                for i, (at, w) in enumerate(windows)]
        # the capture has a median only for step markers: a dash read as a missing figure
        median = (f", median {doc.fig('capture.step_s', 's')}" if finite(cap.get("step_s"))
                  else "")
        out.append(f"<p>profiler capture: {doc.fig('capture.steps', 'n')} steps "
                   f"({esc(str(cap.get('step_source', '')))}){median}</p>"
                   + timeline(cols, {"step": "bar2"}, seconds, "time of each captured step"))
    return section("Step timeline", "".join(out)) if out else ""


def memory(doc: Doc) -> str:
    """The peak memory of each step, where the document has ``memory_steps``: a list of
    ``{"step": N, "peak_bytes": B}`` (what the memory view measures; absent, no section)."""
    series = [s for s in doc.data.get("memory_steps") or [] if isinstance(s, dict)]
    peaks = [float(s["peak_bytes"]) if finite(s.get("peak_bytes")) else 0.0 for s in series]
    if not series or max(peaks) <= 0:
        return ""
    names = [str(s.get("step", i + 1)) for i, s in enumerate(series)]
    cols = [Column([("peak", b)], f"step {n}: peak {size(b)}")
            for n, b in zip(names, peaks, strict=True)]
    worst = peaks.index(max(peaks))
    last = len(series) - 1
    summary = (f"<p>highest {doc.fig(f'memory_steps.{worst}.peak_bytes', 'B')} at step "
               f"{esc(names[worst])}; first step {doc.fig('memory_steps.0.peak_bytes', 'B')}, "
               f"last {doc.fig(f'memory_steps.{last}.peak_bytes', 'B')}</p>")
    rows = [[doc.cell(f"memory_steps.{i}.step", "n") if finite(series[i].get("step"))
             else Cell(names[i]),
             doc.cell(f"memory_steps.{i}.peak_bytes", "B")]
            for i in range(min(len(series), STEP_ROWS))]
    more = f" (the first {STEP_ROWS})" if len(series) > STEP_ROWS else ""
    every = (f"<details><summary>every step{more}</summary>"
             f"{table(['step', 'peak'], rows, 'rr')}</details>")
    return section("Memory per step", summary + timeline(cols, {"peak": "bar"}, size,
                                                         "peak memory of each step") + every)


def functions(doc: Doc) -> str:
    fns = doc.data.get("functions") or []
    if not fns:
        return section("tf.function calls", '<p class="note">none observed</p>')
    rows = []
    retraces = []
    for i, f in enumerate(fns):
        p = f"functions.{i}"
        traces = f.get("traces") or 0
        rows.append([raw(f"<code>{esc(f['name'])}</code>", f["name"]),
                     doc.cell(f"{p}.calls", "n"),
                     raw(doc.fig(f"{p}.traces", "n", cls="loud" if traces > 1 else ""), traces,
                         "r"),
                     doc.cell(f"{p}.trace_s", "s"), doc.cell(f"{p}.run_s", "s"),
                     Cell(site(f.get("path"), f.get("line")))])
        if f.get("variable_traces"):
            retraces.append(f"<li><code>{esc(f['name'])}</code>: its first call created "
                            f"variables, so TensorFlow traced it {f['variable_traces']} more "
                            "time(s) (not counted: not a retrace)</li>")
        for c in (f.get("retrace_causes") or [])[:3]:
            examples = ", ".join(str(e) for e in c.get("examples") or [])
            retraces.append(f"<li><code>{esc(f['name'])}</code>: {c.get('retraces')} "
                            f"retrace(s): {esc(str(c.get('kind')))} of "
                            f"<code>{esc(str(c.get('argument')))}</code> "
                            f"({c.get('distinct')} distinct: {esc(examples)})</li>")
    body = table(["function", "calls", "traces", "tracing", "running", "defined at"], rows,
                 "lrrrrl")
    if retraces:
        body += "<h3>Retraces and their cause</h3><ul>" + "".join(retraces) + "</ul>"
    return section("tf.function calls (retraces)", body)


# Syncs and ops TensorFlow ran for itself (a tf.function's first call creating its
# variables and checking them): shown, never charged to the user's line.
_OWN = ("TensorFlow's own, not counted (a tf.function's first call creating its variables "
        "and checking them)")


def lines(doc: Doc, key: str, name: str, unit: str,
          own: list[dict[str, Any]] | None = None) -> str:
    items = doc.data.get(key) or []
    notes = "".join(f"<li><code>{esc(site(o.get('path'), o.get('line')))}</code>: "
                    f"{o.get('count')} {esc(_OWN)}</li>" for o in own or [])
    notes = f'<ul class="note">{notes}</ul>' if notes else ""
    if not items:
        return section(name, '<p class="note">none observed</p>' + notes, open_=bool(notes))
    rows = []
    for i, s in enumerate(items[:TOP]):
        p = f"{key}.{i}"
        kinds = " ".join(f"{k['name']}×{k['count']}" for k in (s.get("top") or [])[:3])
        rows.append([Cell(site(s.get("path"), s.get("line"))), doc.cell(f"{p}.count", "n"),
                     doc.cell(f"{p}.total_s", "s"),
                     raw(meter(s.get("share")) + doc.fig(f"{p}.share", "%"), s.get("share"),
                         "r"),
                     Cell(kinds)])
    more = (f"the first {TOP} of {len(items)} lines; the JSON lists all"
            if len(items) > TOP else "")
    return section(name, table(["line", unit, "time", "of run", "top"], rows, "lrrrl") + notes,
                   more)


def ops(doc: Doc) -> str:
    d = doc.data
    cap = d.get("capture")
    if not cap:
        return section("Op time (profiler capture)",
                       f'<p class="note">{esc(str(d.get("capture_note") or "no capture"))}</p>')
    items = d.get("ops") or []
    where = "host only: no GPU in this capture" if cap.get("host_only") else \
        ", ".join(cap.get("devices") or [])
    bars = [Bar(o["name"], o.get("self_s"), f"{o['name']} ({o.get('type')}): self "
                f"{seconds(o.get('self_s'))} in {o.get('count')} calls", text=seconds(
                    o.get("self_s")) if finite(o.get("self_s")) else "",
                tone="bar2" if o.get("eager") else "bar")
            for o in items[:TOP]]
    rows = [[raw(f"<code>{esc(clip(o['name'], 48))}</code>", o["name"]), Cell(o.get("type")),
             Cell(str(o.get("where", "")) + (" eager" if o.get("eager") else "")),
             doc.cell(f"ops.{i}.count", "n"), doc.cell(f"ops.{i}.self_s", "s")]
            for i, o in enumerate(items[:TOP])]
    figures = (f"<p>host op time {doc.fig('capture.host_op_s', 's')}; eager share of op time "
               f"{doc.fig('capture.eager_share', '%')}; input wait "
               f"{doc.fig('capture.input_share', '%')} of step time</p>")
    logdir = d.get("logdir")
    tail = (f"capture: <code>{esc(str(cap.get('path')))}</code>"
            + (f"; open it: <code>tensorboard --logdir {esc(str(logdir))}</code>"
               if logdir else ""))
    legend = '<p class="note">bars: self time of the top ops (eager ops in the second colour)</p>'
    return section(f"Top ops (profiler capture, {where})",
                   figures + hbars(bars, seconds, "self time") + legend
                   + table(["op", "type", "where", "count", "self"], rows, "lllrr"), tail)


def replicas(doc: Doc) -> str:
    split = doc.data.get("replicas")
    if not split:
        return ""
    rows = [[Cell(r.get("short") or r.get("device")
                  + (" (slowest)" if r.get("device") == split.get("slowest") else "")),
             doc.cell(f"replicas.replicas.{i}.ops", "n"),
             doc.cell(f"replicas.replicas.{i}.compute_s", "s"),
             doc.cell(f"replicas.replicas.{i}.collective_s", "s"),
             doc.cell(f"replicas.replicas.{i}.collective_share", "%")]
            for i, r in enumerate(split.get("replicas") or [])]
    note = (f"step {doc.fig('replicas.step_s', 's')}; the slowest computes "
            f"{doc.fig('replicas.slowest_compute_s', 's')} against "
            f"{doc.fig('replicas.others_compute_s', 's')}, a gap of "
            f"{doc.fig('replicas.gap_s', 's')} a step")
    return section(f"Replicas ({len(rows)} devices; median per step)",
                   table(["device", "ops", "compute", "collective", "of step"], rows, "lrrrr")
                   + f"<p>{note}</p>")


__all__ = ["KIND", "body", "site", "title"]
