"""``tfperf doctor --html``: the chain as facts → verdicts → fixes, from the doctor's JSON
document (its ``facts`` read back as the text report reads them)."""

from __future__ import annotations

import json
from typing import Any

from tfperf.core.html.parts import (
    Cell,
    Doc,
    badge,
    esc,
    header,
    raw,
    section,
    table,
)
from tfperf.doctor.facts import Facts
from tfperf.doctor.report import GROUPS, fact_lines, group_of, short_id

KIND = "doctor"
RANK = {"fail": 3, "warn": 2, "pass": 1, "skip": 0, "info": 0}
TONE = {"fail": "bad", "warn": "warn", "pass": "good", "skip": "skip", "info": "skip"}


def title(doc: Doc) -> str:
    return f"tfperf doctor {doc.data.get('tfperf', '')}"


def _groups(checks: list[dict[str, Any]]) -> list[tuple[str, list[int]]]:
    order = [t for t, _ in GROUPS] + ["Other checks"]
    buckets: dict[str, list[int]] = {t: [] for t in order}
    for i, c in enumerate(checks):
        buckets[group_of(c["id"])].append(i)
    return [(t, ix) for t, ix in buckets.items() if ix]


def body(doc: Doc) -> str:
    d = doc.data
    checks: list[dict[str, Any]] = d.get("checks") or []
    groups = _groups(checks)
    summary = d.get("summary") or {}
    verdict = "problems found" if d.get("exit_status") else "no failing check"
    counts = ", ".join(f"{doc.fig(f'summary.{s}', 'n')} {esc(s)}" for s, n in summary.items()
                       if n)
    out = [header(title(doc), verdict), f"<p>checks: {counts}</p>" if counts else "",
           chain(checks, groups)]
    facts = Facts.from_dict(d.get("facts") or {})
    rows = [[Cell(label), Cell(value)] for label, value in fact_lines(facts, full=True)]
    out.append(section("Facts", table(["fact", "value"], rows, sortable=False),
                       "what the probes found on this machine; every fact is in the JSON "
                       "embedded in this file"))
    for name, ix in groups:
        rows = []
        for i in ix:
            c = checks[i]
            status = str(c.get("status"))
            data = c.get("data") or {}
            facts_cell = (f"<details><summary>{len(data)} figure(s)</summary><pre>"
                          f"{esc(json.dumps(data, indent=1, ensure_ascii=False, default=str))}"
                          "</pre></details>") if data else "–"
            fix = c.get("fix") if status in ("fail", "warn", "skip") else None
            rows.append([raw(f"<code>{esc(short_id(c['id']))}</code>", c["id"]),
                         raw(badge(status.upper(), status), RANK.get(status, 0)),
                         raw(doc.text(f"checks.{i}.message"), c.get("message")),
                         Cell(fix or ""), raw(facts_cell)])
        out.append(section(name, table(["check", "verdict", "message", "fix",
                                        "facts behind it"], rows, "lllll")))
    missing = d.get("could_not_look") or []
    if missing:
        out.append(section("Could not look", "<ul>" + "".join(
            f"<li><b>{esc(m.get('probe', ''))}</b>: {esc(m.get('error', ''))}</li>"
            for m in missing) + "</ul>"))
    return "\n".join(out)


def chain(checks: list[dict[str, Any]], groups: list[tuple[str, list[int]]]) -> str:
    """The chain, left to right: one box per group, coloured by its worst verdict."""
    if not groups:
        return ""
    width, box_w, gap, h = 720, 0.0, 14, 64
    box_w = (width - gap * (len(groups) - 1)) / len(groups)
    out = [f'<svg viewBox="0 0 {width} {h + 4}" width="{width}" role="img" '
           'aria-label="the chain, worst verdict per stage">']
    for k, (name, ix) in enumerate(groups):
        worst = max((str(checks[i].get("status")) for i in ix), key=lambda s: RANK.get(s, 0))
        counts: dict[str, int] = {}
        for i in ix:
            s = str(checks[i].get("status"))
            counts[s] = counts.get(s, 0) + 1
        tip = f"{name}: " + "; ".join(f"{short_id(checks[i]['id'])} {checks[i].get('status')}"
                                      for i in ix)
        x = k * (box_w + gap)
        words = _two_lines(name, int(box_w / 7))
        label = "".join(f'<tspan x="{x + box_w / 2:.1f}" dy="{14 if j else 0}">{esc(w)}</tspan>'
                        for j, w in enumerate(words))
        out.append(
            f'<g data-tip="{esc(tip)}"><title>{esc(tip)}</title>'
            f'<rect class="{TONE.get(worst, "skip")}" x="{x:.1f}" y="2" width="{box_w:.1f}" '
            f'height="{h}" rx="6" opacity=".9"/>'
            f'<text x="{x + box_w / 2:.1f}" y="24" text-anchor="middle" '
            f'style="fill:#fff;font-weight:600">{label}</text>'
            f'<text x="{x + box_w / 2:.1f}" y="{h - 6}" text-anchor="middle" '
            f'style="fill:#fff;font-size:11px">'
            f"{esc(', '.join(f'{n} {s}' for s, n in sorted(counts.items())))}</text></g>")
        if k:
            ax = x - gap
            out.append(f'<path class="axis" d="M{ax + 2:.1f} {h / 2 + 2} l{gap - 4} 0" '
                       'stroke-width="2" style="stroke:var(--muted)"/>')
    out.append("</svg>")
    return "".join(out) + ('<p class="note">facts → verdicts → fixes: each stage of the chain '
                           "coloured by its worst verdict; the sections below give the facts, "
                           "each verdict and its fix</p>")


def _two_lines(text: str, width: int) -> list[str]:
    if len(text) <= width:
        return [text]
    words = text.split()
    first: list[str] = []
    while words and len(" ".join([*first, words[0]])) <= width:
        first.append(words.pop(0))
    return [" ".join(first) or text[:width], " ".join(words)]
