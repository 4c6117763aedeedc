"""``tfperf bench --suite article --html``: each of the article's claims, the figure measured
here and its verdict; the roofline of the comparisons that measured it."""

from __future__ import annotations

from typing import Any

from tfperf.bench.machine import machine_line
from tfperf.core.html.parts import (
    Bar,
    Cell,
    Doc,
    badge,
    esc,
    finite,
    hbars,
    header,
    number,
    percent,
    raw,
    section,
    table,
)

KIND = "suite"
TONE = {"holds": "holds", "direction holds": "direction", "does not hold": "no",
        "not applicable here": "skip", "not measured": "error"}
BAR_TONE = {"holds": "good", "direction holds": "warn", "does not hold": "bad",
            "not applicable here": "skip", "not measured": "off"}


def title(doc: Doc) -> str:
    return "tfperf bench --suite article"


def body(doc: Doc) -> str:
    d = doc.data
    claims: list[dict[str, Any]] = d.get("claims") or []
    sub = machine_line(d.get("machine") or {})
    if d.get("quick"):
        sub += "; quick mode (scaled down): " + ("; ".join(d.get("scaled_down") or [])
                                                 or "fewer runs")
    counts = d.get("verdicts") or {}
    said = ", ".join(f"{n} {v}" for v, n in counts.items() if n)
    out = [header(title(doc), sub),
           f"<p>{len(claims)} claims in {d.get('elapsed_s', 0):.0f} s: {esc(said)}</p>",
           _counts_bar(counts)]
    rows = []
    for i, c in enumerate(claims):
        unit = str(c.get("unit") or "")
        measured = doc.get(f"claims.{i}.measured")
        shown = (f'<span data-path="claims.{i}.measured" data-value="{measured!r}" '
                 f'data-unit="g">{esc(number(measured))}</span> {esc(unit.split(" (")[0])}'
                 if finite(measured) else "–")
        rows.append([Cell(c.get("id")), Cell(c.get("claim")), Cell(c.get("article")),
                     raw(shown, measured if finite(measured) else None, "r"),
                     raw(badge(str(c.get("verdict")), TONE.get(str(c.get("verdict")), "skip")),
                         c.get("verdict")),
                     raw(f"<details><summary>why</summary>{esc(str(c.get('reason')))}"
                         "</details>")])
    out.append(section("Claims", table(["id", "claim", "article", "measured here", "verdict",
                                        "reason"], rows, "lllrll"),
                       "'article' is the article's claim, quoted; 'measured here' is this "
                       "machine; 'holds' needs the article's own figure (its lower bound), "
                       "'direction holds' the same direction only."))
    roof = _roofline(d.get("roofline") or {})
    if roof:
        out.append(section("Roofline", roof))
    if d.get("errors"):
        out.append(section("Errors", "<ul>" + "".join(
            f'<li class="loud">{esc(str(e))}</li>' for e in d["errors"]) + "</ul>"))
    return "\n".join(out)


def _counts_bar(counts: dict[str, int]) -> str:
    bars = [Bar(v, n, f"{n} claim(s): {v}", tone=BAR_TONE.get(v, "bar"), text=str(n))
            for v, n in counts.items() if n]
    return hbars(bars, lambda x: f"{x:g}", "claims per verdict") if bars else ""


def _roofline(per: dict[str, dict[str, Any]]) -> str:
    bars = []
    for key, variants in per.items():
        for name, r in variants.items():
            judged = (r or {}).get("roof") or {}
            if finite(judged.get("fraction")):
                bars.append(Bar(f"{key}: {name}", judged["fraction"],
                                f"{key} {name}: {percent(judged['fraction'])} of the roof "
                                f"({judged.get('bound')}-bound)", text=percent(
                                    judged["fraction"])))
    return hbars(bars, percent, "achieved rate over the roof of its precision and engine",
                 marker=1.0, marker_label="roof") if bars else ""
