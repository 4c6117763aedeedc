"""``tfperf tune --html``: every candidate with its verdict (picked, kept, or rejected and why),
its speedup with the interval, and the picked patch as a diff, from the tune JSON document."""

from __future__ import annotations

from typing import Any

from tfperf.bench.machine import machine_line
from tfperf.core.html.parts import (
    Bar,
    Cell,
    Doc,
    badge,
    diff,
    esc,
    finite,
    hbars,
    header,
    ratio,
    raw,
    section,
    table,
)

KIND = "tune"


def title(doc: Doc) -> str:
    d = doc.data
    return f"tfperf tune {d.get('path', '')}:{d.get('function', '')}"


def _order(cands: list[dict[str, Any]], best: str | None) -> list[int]:
    """Indexes: the pick, the kept ones by speedup, then the rejected ones."""
    kept = [i for i, c in enumerate(cands) if not c.get("rejected") and
            finite(c.get("median_s"))]
    kept.sort(key=lambda i: (cands[i]["name"] != best, -(cands[i].get("speedup") or 0.0)))
    return kept + [i for i in range(len(cands)) if i not in kept]


def _verdict(c: dict[str, Any], best: str | None) -> Cell:
    if c["name"] == best:
        return raw(badge("picked", "pass"), 3)
    if c.get("rejected"):
        return raw(badge("rejected", "fail"), 0)
    if c.get("equivalent") is False:
        return raw(badge("not equivalent", "fail"), 0)
    if finite(c.get("speedup")) and c["speedup"] <= 1.0:
        # the search gives no reason for "simply not faster": "kept" read as a keeper
        return raw(badge("not faster", "skip"), 1)
    return raw(badge("kept", "info"), 2)


def body(doc: Doc) -> str:
    d = doc.data
    cands: list[dict[str, Any]] = d.get("candidates") or []
    best = d.get("best")
    where = d.get("path") if d.get("in_file", True) else (
        f"cell {d['cell']}" if d.get("cell") is not None else d.get("path"))
    sub = (f"{machine_line(d.get('machine') or {})}; {d.get('search_s', 0):.1f} s of a "
           f"{d.get('budget_s', 0):g} s budget" + ("; cached" if d.get("cache") == "hit" else ""))
    out = [header(f"tfperf tune {where}:{d.get('function', '')}", sub)]
    pick = next((i for i, c in enumerate(cands) if c["name"] == best), None)
    if pick is None:
        out.append("<p>No candidate beat the baseline and agreed with it: nothing to change."
                   "</p>")
    else:
        c = cands[pick]
        calls = doc.fig(f"candidates.{pick}.break_even_calls", "n")
        pays = f"; pays back its first call after {calls} calls" if c.get(
            "break_even_calls") else ""
        out.append(f"<p>Picked: <b>{esc(best or '')}</b> "
                   f"({esc(', '.join(c.get('levers') or []))}), "
                   f"{doc.fig(f'candidates.{pick}.speedup', 'x')} the baseline's speed{pays}."
                   "</p>")
    order = _order(cands, best)
    bars = [Bar(cands[i]["name"], cands[i].get("speedup"), _tip(cands[i]),
                lo=(cands[i].get("speedup_interval") or [None, None])[0],
                hi=(cands[i].get("speedup_interval") or [None, None])[1],
                tone="good" if cands[i]["name"] == best else "off" if cands[i].get("rejected")
                else "bar", text=ratio(cands[i]["speedup"]))
            for i in order if finite(cands[i].get("speedup"))]
    chart = hbars(bars, ratio, "speedup over the baseline (whisker: its interval); grey: "
                  "rejected", marker=1.0, marker_label="baseline")
    out.append(section("Candidates", chart + candidates_table(doc, cands, order, best),
                       "Click a heading to sort. A rejected candidate says why in the last "
                       "column."))
    if d.get("patch"):
        out.append(section("The picked patch", diff(d["patch"]),
                           "" if d.get("in_file", True) else
                           "a diff of the cell that defines the function: copy its new lines "
                           "into the cell"))
    if (d.get("baseline") or {}).get("roofline"):
        out.append(f"<p>baseline {esc(str(d['baseline']['roofline']))}</p>")
    return "\n".join(out)


def _tip(c: dict[str, Any]) -> str:
    interval = c.get("speedup_interval")
    span = f" (interval {ratio(interval[0])}–{ratio(interval[1])})" if interval else ""
    why = f"; rejected: {c['rejected']}" if c.get("rejected") else ""
    return f"{c['name']}: {ratio(c.get('speedup'))}{span}{why}"


def candidates_table(doc: Doc, cands: list[dict[str, Any]], order: list[int],
                     best: str | None) -> str:
    rows: list[list[Any]] = [[raw("<b>baseline</b>", ""), Cell("–"), raw(badge("baseline",
                                                                               "skip"), 1),
                              doc.cell("baseline.median_s", "s"), Cell("1×", 1.0, "r"),
                              doc.cell("baseline.first_call_s", "s"), Cell("–"), Cell("–"),
                              Cell("–"), Cell("")]]
    for i in order:
        c = cands[i]
        p = f"candidates.{i}"
        eq = {True: "yes", False: "NO", None: "–"}[c.get("equivalent")]
        rows.append([raw(f"<code>{esc(c['name'])}</code>", c["name"]),
                     Cell(", ".join(c.get("levers") or []), len(c.get("levers") or [])),
                     _verdict(c, best), doc.cell(f"{p}.median_s", "s"),
                     doc.cell(f"{p}.speedup", "x"), doc.cell(f"{p}.first_call_s", "s"),
                     doc.cell(f"{p}.break_even_calls", "n"), Cell(eq),
                     doc.cell(f"{p}.max_rel_err", "g"), Cell(c.get("rejected") or "")])
    return table(["candidate", "levers", "verdict", "median", "speedup", "first call",
                  "break-even calls", "equivalent", "max rel err", "why rejected"], rows,
                 "lllrrrrlrl")
