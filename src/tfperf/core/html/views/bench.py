"""``tfperf bench FILE.py --html``: variants with median and spread, speedup, equivalence and
the fraction of the roof, from the comparison's JSON document."""

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
    meter,
    percent,
    ratio,
    raw,
    seconds,
    section,
    table,
)

KIND = "bench"


def title(doc: Doc) -> str:
    names = [v["name"] for v in doc.data.get("variants", [])]
    return f"tfperf bench: {', '.join(names)}"


def body(doc: Doc) -> str:
    data = doc.data
    variants: list[dict[str, Any]] = data.get("variants", [])
    settings = data.get("settings") or {}
    sub = machine_line(data.get("machine") or {})
    if settings.get("quick"):
        sub += "; quick mode: fewer runs, shorter budget"
    out = [header("tfperf bench", sub), _verdict(doc, variants)]
    out.append(section("Time per call", _time_chart(variants, data.get("baseline", ""))
                       + _speedup_chart(variants),
                       "bar: median time of one call; whisker: ± half the interquartile range "
                       "(IQR/2) of the timed runs"))
    out.append(section("Variants", variants_table(doc, "variants", variants,
                                                  data.get("baseline", "")),
                       "speedup = baseline time / variant time, from the per-round ratios of "
                       "interleaved rounds; tol used = the worst element's |a−b| over the "
                       "tolerance it is allowed (≤ 100 % passes). Click a heading to sort."))
    roof = roof_chart(variants)
    if roof:
        out.append(section("Fraction of the roof", roof))
    notes = _notes(variants, data.get("baseline", ""), settings)
    if notes:
        out.append(section("Notes", "<ul>" + "".join(notes) + "</ul>"))
    return "\n".join(out)


def _verdict(doc: Doc, variants: list[dict[str, Any]]) -> str:
    """One sentence: the fastest variant that agrees with the baseline, or what went wrong."""
    bad = [v["name"] for v in variants if v.get("equivalent") is False or v.get("error")]
    agreeing = [(i, v) for i, v in enumerate(variants)
                if v.get("equivalent") and finite(v.get("speedup"))]
    parts = []
    if agreeing:
        i, best = max(agreeing, key=lambda iv: iv[1]["speedup"])
        speed = (f"{doc.fig(f'variants.{i}.speedup', 'x')} the baseline's speed "
                 f"({doc.fig(f'variants.{i}.median_s', 's')} a call)")
        if best["speedup"] > 1:
            parts.append(f"Fastest that agrees with the baseline: <b>{esc(best['name'])}</b>, "
                         f"{speed}.")
        else:  # every variant is slower: naming one "fastest" would read as a win
            parts.append(f"No variant beats the baseline <b>{esc(doc.data.get('baseline', ''))}"
                         f"</b>: the fastest that agrees, <b>{esc(best['name'])}</b>, runs at "
                         f"{speed}.")
    if bad:
        parts.append(f'<span class="loud">Failed or not equivalent: {esc(", ".join(bad))}.'
                     "</span>")
    return f"<p>{' '.join(parts)}</p>" if parts else ""


def _tone(v: dict[str, Any], baseline: str) -> str:
    if v.get("error"):
        return "off"
    if v.get("equivalent") is False:
        return "bad"
    return "bar2" if v["name"] == baseline else "bar"


def _time_chart(variants: list[dict[str, Any]], baseline: str) -> str:
    bars = []
    for v in variants:
        med: Any = v.get("median_s")
        iqr: Any = v.get("iqr_s")
        half = iqr / 2 if finite(iqr) else None
        spread = f" ± {seconds(half)} (IQR/2)" if half is not None else ""
        runs = f", {v.get('runs')}×{v.get('number')} runs" if v.get("runs") else ""
        tip = (f"{v['name']}: median {seconds(med)}{spread}{runs}" if finite(med)
               else f"{v['name']}: {v.get('status')}")
        bars.append(Bar(v["name"] + (" (baseline)" if v["name"] == baseline else ""),
                        med if finite(med) else None, tip,
                        lo=med - half if half is not None and finite(med) and med - half > 0
                        else None,
                        hi=med + half if half is not None and finite(med) else None,
                        tone=_tone(v, baseline),
                        text=seconds(med) if finite(med) else str(v.get("status", "")).upper()))
    return hbars(bars, seconds, "median time per call")


def _speedup_chart(variants: list[dict[str, Any]]) -> str:
    bars = [Bar(v["name"], v.get("speedup"), f"{v['name']}: {ratio(v['speedup'])} the "
                "baseline's speed" if finite(v.get("speedup")) else v["name"],
                tone="bad" if v.get("equivalent") is False else "bar",
                text=ratio(v["speedup"]) if finite(v.get("speedup")) else "")
            for v in variants if finite(v.get("speedup"))]
    if len(bars) < 2:
        return ""
    return "<h3>Speedup over the baseline</h3>" + hbars(bars, ratio, "speedup (× the "
                                                         "baseline's speed)", marker=1.0,
                                                         marker_label="1×")


def _equivalent(v: dict[str, Any]) -> Cell:
    eq = v.get("equivalent")
    if eq is None:
        text = "cannot check" if v.get("equivalence_note") and not v.get("error") and \
            v.get("equivalence") else "–"
        return raw(badge(text, "skip") if text != "–" else "–", 0)
    return raw(badge("yes", "yes") if eq else badge("NO", "no"), 1 if eq else -1)


def _roof_fraction(v: dict[str, Any]) -> float | None:
    judged = (v.get("roofline") or {}).get("roof") or {}
    value = judged.get("fraction")
    return value if finite(value) else None


def variants_table(doc: Doc, at: str, variants: list[dict[str, Any]], baseline: str) -> str:
    """The variants' table; ``at`` is where the list sits in the document."""
    rows = []
    with_roof = any(_roof_fraction(v) is not None for v in variants)
    for i, v in enumerate(variants):
        p = f"{at}.{i}"
        name = esc(v["name"]) + (' <span class="note">(baseline)</span>'
                                 if v["name"] == baseline else "")
        status = v.get("status", "ok")
        state = "" if status == "ok" else " " + badge(status.upper(), "error" if v.get("error")
                                                      else "warn")
        iqr: Any = v.get("iqr_s")
        half = iqr / 2 if finite(iqr) else None
        runs = f"{v.get('runs')}×{v.get('number')}" if v.get("runs") else "0"
        row = [raw(name + state, v["name"]), doc.cell(f"{p}.median_s", "s"),
               Cell(seconds(half) if half is not None else "–", half, "r"),
               Cell(runs, v.get("runs"), "r"), doc.cell(f"{p}.first_call_s", "s"),
               doc.cell(f"{p}.speedup", "x"), _equivalent(v),
               doc.cell(f"{p}.equivalence.tolerance_used", "%")]
        if with_roof:
            frac = _roof_fraction(v)
            row.append(raw(meter(frac) + doc.fig(f"{p}.roofline.roof.fraction", "%"),
                           frac, "r"))
        rows.append(row)
    heads = ["variant", "median", "± IQR/2", "runs", "first call", "speedup", "equivalent",
             "tol used"] + (["of roof"] if with_roof else [])
    return table(heads, rows, "lrrrrrlrr")


def roof_chart(variants: list[dict[str, Any]]) -> str:
    bars = []
    for v in variants:
        frac = _roof_fraction(v)
        if frac is None:
            continue
        judged = v["roofline"]["roof"]
        roof = judged.get("roof") or {}
        where = (f"{roof.get('precision')} {roof.get('engine')} roof"
                 if judged.get("bound") == "compute" else "memory roof")
        bars.append(Bar(v["name"], frac, f"{v['name']}: {percent(frac)} of the {where} "
                        f"({judged.get('bound')}-bound)", text=percent(frac)))
    if not bars:
        return ""
    return hbars(bars, percent, "achieved rate over the roof of its precision and engine",
                 marker=1.0, marker_label="roof")


def _notes(variants: list[dict[str, Any]], baseline: str, settings: dict[str, Any]) -> list[str]:
    out = []
    for v in variants:
        name = esc(v["name"])
        if v.get("error"):
            out.append(f'<li class="loud">{name}: {esc(str(v.get("status")))}: '
                       f"{esc(str(v['error']))}</li>")
        if v.get("equivalent") is False:
            out.append(f'<li class="loud">{name}: NOT EQUIVALENT to {esc(baseline)}: '
                       f"{esc(str(v.get('equivalence_note', '')))}</li>")
        elif v.get("equivalent") is None and v.get("equivalence") and not v.get("error"):
            out.append(f'<li class="loud">{name}: NOT CHECKED, equivalence unknown: '
                       f"{esc(str(v.get('equivalence_note', '')))}</li>")
        out += [f"<li>{name}: {esc(str(n))}</li>" for n in v.get("notes") or []]
        if v.get("warning"):
            out.append(f"<li>{name}: {esc(str(v['warning']))}</li>")
        memory = v.get("memory") or {}
        if finite(memory.get("peak_bytes")):
            from tfperf.core.html.parts import size

            out.append(f"<li>{name}: peak memory {esc(size(memory['peak_bytes']))} "
                       f"({esc(str(memory.get('source')))})</li>")
        judged = (v.get("roofline") or {}).get("roof") or {}
        if judged.get("error"):
            out.append(f"<li>{name}: roofline: {esc(str(judged['error']))}</li>")
    tolerances = sorted({(v.get("equivalence") or {}).get("tolerance") or "" for v in variants}
                        - {""})
    if tolerances:
        ref = " against the float64 reference" if settings.get("reference") else ""
        out.append(f"<li>equivalence{ref}, per element: {esc('; '.join(tolerances))}</li>")
    return out
