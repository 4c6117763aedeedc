"""``tfperf profile --read PATH --html``: the cause of an empty or odd capture first, then per
capture the step timeline split by what the step waited on, the breakdown, top ops and the
verdicts, from the read report's JSON document."""

from __future__ import annotations

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
    raw,
    seconds,
    section,
    table,
    timeline,
)

KIND = "profile-read"
CATEGORIES = ("compute", "input", "collectives", "host", "idle")
TONES = {"compute": "bar", "input": "warn", "collectives": "bar2", "host": "good",
         "idle": "skip"}


def title(doc: Doc) -> str:
    return f"tfperf profile --read {doc.data.get('path', '')}"


def body(doc: Doc) -> str:
    d = doc.data
    files = d.get("files") or []
    out = [header(title(doc), f"{len(files)} capture file(s)")]
    if d.get("diagnosis"):
        out.append(section("What is wrong with the capture", findings(d["diagnosis"])))
    for i, cap in enumerate(d.get("captures") or []):
        out.append(capture(doc, i, cap))
    verdicts = d.get("verdicts") or []
    out.append(section("Verdicts", findings(verdicts) if verdicts
                       else '<p class="note">nothing to flag</p>'))
    return "\n".join(out)


def capture(doc: Doc, i: int, cap: dict[str, Any]) -> str:
    p = f"captures.{i}"
    hosts = ", ".join(cap.get("hostnames") or []) or "?"
    where = "host only" if cap.get("host_only") else "devices: " + ", ".join(
        cap.get("devices") or [])
    parts = [f"<p>host {esc(hosts)}; {doc.fig(f'{p}.events', 'n')} events, "
             f"{doc.fig(f'{p}.op_events', 'n')} op events; {esc(where)}; "
             f"{doc.fig(f'{p}.duration_s', 's')} captured</p>"]
    if cap.get("events"):
        parts.append(f"<p>{doc.fig(f'{p}.steps', 'n')} step(s) from "
                     f"{esc(str(cap.get('step_source')))}: median {doc.fig(f'{p}.step_s', 's')},"
                     f" mean {doc.fig(f'{p}.mean_step_s', 's')}</p>")
    for where_, rows in (cap.get("per_step") or {}).items():
        cols = [Column([(c, r.get(f"{c}_s") or 0.0) for c in CATEGORIES],
                       f"step {r.get('step')}: {seconds(r.get('duration_s'))} ("
                       + ", ".join(f"{c} {seconds(r.get(f'{c}_s') or 0.0)}" for c in CATEGORIES)
                       + ")") for r in rows]
        parts.append(f"<h3>Step timeline: {esc(where_)}</h3>"
                     + timeline(cols, TONES, seconds, "each step's time, by what it spent it on"))
    breakdown = cap.get("breakdown") or []
    if breakdown:
        rows = []
        for j, b in enumerate(breakdown):
            step = b.get("duration_s")
            row: list[Any] = [Cell(b.get("where")), doc.cell(f"{p}.breakdown.{j}.duration_s", "s")]
            for c in CATEGORIES:
                v = b.get(f"{c}_s")
                share = v / step if finite(v) and finite(step) and step else None
                row.append(raw(meter(share) + (f"{100 * share:.1f} %" if share is not None
                                               else "–"), share, "r"))
            rows.append(row)
        parts.append("<h3>Step-time breakdown (mean per step)</h3>"
                     + table(["where", "step", *CATEGORIES], rows, "lrrrrrr"))
    ops = cap.get("top_ops") or []
    if ops:
        bars = [Bar(o["name"], o.get("self_s"), f"{o['name']} ({o.get('type')}, "
                    f"{o.get('kind')}): self {seconds(o.get('self_s'))} in {o.get('count')} "
                    "calls", text=seconds(o["self_s"]) if finite(o.get("self_s")) else "")
                for o in ops]
        rows = [[raw(f"<code>{esc(clip(o['name'], 48))}</code>", o["name"]),
                 Cell(clip(str(o.get("type")), 28)), Cell(o.get("where")), Cell(o.get("kind")),
                 doc.cell(f"{p}.top_ops.{j}.count", "n"),
                 doc.cell(f"{p}.top_ops.{j}.self_s", "s"),
                 doc.cell(f"{p}.top_ops.{j}.total_s", "s"), Cell(o.get("source") or "")]
                for j, o in enumerate(ops)]
        parts.append("<h3>Top ops by self time</h3>" + hbars(bars, seconds, "self time")
                     + table(["op", "type", "where", "kind", "count", "self", "total", "source"],
                             rows, "llllrrrl"))
    costs = (doc.data.get("op_costs") or {}).get(cap.get("path")) or []
    if costs:
        rows = [[raw(f"<code>{esc(clip(str(c.get('name')), 48))}</code>", c.get("name")),
                 Cell(c.get("bound")), raw(meter(c.get("fraction")) + esc(
                     f"{100 * c['fraction']:.1f} %" if finite(c.get("fraction")) else "–"),
                     c.get("fraction"), "r")] for c in costs]
        parts.append("<h3>FLOPs and the roof</h3>" + table(["op", "bound", "of roof"], rows,
                                                           "llr"))
    return section(f"Capture {cap.get('path')}", "".join(parts))
