"""The pieces views build a report from: figures bound to the JSON, tables, inline SVG charts,
findings, diffs. Views see only the report's JSON document (plain dicts and lists).

A figure shown in a page comes from :meth:`Doc.fig`: it looks the value up in the document
by its path and writes the element with ``data-path``, ``data-value`` and ``data-unit``, so
the browser tests can check every figure shown against the JSON it came from.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tfperf.core.measure import format_ratio, format_seconds

esc = html.escape
NONE = "–"


# -- figures ----------------------------------------------------------------------------------


def finite(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _shown(fmt: Callable[[float], str]) -> Callable[[Any], str]:
    """``fmt`` for any value: a dash for what is not a finite number."""
    return lambda x: fmt(float(x)) if finite(x) else NONE


def _percent(x: float) -> str:
    return f"{100 * x:.1f} %" if x < 10 else f"{x:.3g}×"


def _size(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.3g} {unit}"
        n /= 1024
    return f"{n:.3g} GiB"


seconds = _shown(lambda x: format_seconds(x, 3))  # 0.01234 → 12.3 ms
ratio = _shown(format_ratio)  # 12.34 → 12.3×
percent = _shown(_percent)  # a fraction: 0.123 → 12.3 %; ten times and more as 43.1×
count = _shown(lambda x: f"{x:,.0f}")
size = _shown(_size)  # bytes: 2048 → 2 KiB
number = _shown(lambda x: f"{x:,.0f}" if abs(x) >= 1000 else f"{x:.3g}")


# unit attribute → formatter; the tests parse a figure's text back by its unit
UNITS: dict[str, Callable[[Any], str]] = {"s": seconds, "x": ratio, "%": percent,
                                            "n": count, "B": size, "g": number}


class Doc:
    """The report's JSON document, with figures looked up by path (``variants.0.median_s``)."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        self.data = data

    def get(self, path: str) -> Any:
        value: Any = self.data
        for part in path.split("."):
            if isinstance(value, list):
                value = value[int(part)] if part.lstrip("-").isdigit() and \
                    -len(value) <= int(part) < len(value) else None
            elif isinstance(value, Mapping):
                value = value.get(part)
            else:
                return None
            if value is None:
                return None
        return value

    def fig(self, path: str, unit: str, tag: str = "span", cls: str = "") -> str:
        """The figure at ``path`` in ``unit``'s format, bound to its place in the document."""
        value = self.get(path)
        klass = f' class="{cls}"' if cls else ""
        if not finite(value):
            return f"<{tag}{klass} data-value=\"\">{NONE}</{tag}>"
        return (f'<{tag}{klass} data-path="{esc(path)}" data-value="{value!r}" '
                f'data-unit="{unit}">{esc(UNITS[unit](value))}</{tag}>')

    def text(self, path: str, tag: str = "span") -> str:
        """The string at ``path``, shown as it is and bound to its place in the document
        (``data-unit="t"``), as :meth:`fig` binds a number."""
        value = self.get(path)
        if not isinstance(value, str):
            return f"<{tag}>{NONE}</{tag}>"
        return (f'<{tag} data-path="{esc(path)}" data-value="{esc(value)}" data-unit="t">'
                f"{esc(value)}</{tag}>")

    def cell(self, path: str, unit: str) -> Cell:
        """A right-aligned table cell holding the figure at ``path``."""
        value = self.get(path)
        return Cell(self.fig(path, unit), value if finite(value) else None, "r", raw=True)


# -- tables -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Cell:
    """A table cell: its HTML (escaped unless ``raw``), the value it sorts by, alignment."""

    content: Any
    sort: Any = None
    align: str = ""
    raw: bool = False

    def html(self) -> str:
        inner = str(self.content) if self.raw else esc(
            NONE if self.content is None else str(self.content))
        attrs = f' class="{self.align}"' if self.align else ""
        if self.sort is not None:
            attrs += f' data-value="{esc(str(self.sort))}"'
        return f"<td{attrs}>{inner}</td>"


def raw(content: str, sort: Any = None, align: str = "") -> Cell:
    return Cell(content, sort, align, raw=True)


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]], align: str = "",
          sortable: bool = True, cls: str = "") -> str:
    """A table; cells are :class:`Cell` or plain values (escaped). ``align``: 'l'/'r' each."""
    head = "".join(f'<th{" class=r" if i < len(align) and align[i] == "r" else ""}>'
                   f"{esc(h)}</th>" for i, h in enumerate(headers))
    body = []
    for row in rows:
        cells = []
        for i, c in enumerate(row):
            if not isinstance(c, Cell):
                c = Cell(c, None, "r" if i < len(align) and align[i] == "r" else "")
            cells.append(c.html())
        body.append("<tr>" + "".join(cells) + "</tr>")
    classes = " ".join(x for x in ("sortable" if sortable else "", cls) if x)
    klass = f' class="{classes}"' if classes else ""
    return (f'<div class="scroll"><table{klass}><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table></div>")


def meter(fraction: float | None) -> str:
    """A small inline bar for a share (0..1)."""
    if not finite(fraction):
        return ""
    width = max(0.0, min(1.0, float(fraction or 0.0))) * 100
    return f'<span class="meter"><span style="width:{width:.1f}%"></span></span>'


# -- words ------------------------------------------------------------------------------------


def badge(text: str, tone: str) -> str:
    return f'<span class="badge {esc(tone)}">{esc(text)}</span>'


def section(title: str, body: str, note: str = "", open_: bool = True, ident: str = "") -> str:
    """A collapsible section: ``<details>`` so it collapses without the script too."""
    attr = f' id="{esc(ident)}"' if ident else ""
    tail = f'<p class="note">{note}</p>' if note else ""
    return (f'<details{" open" if open_ else ""}{attr}><summary><h2 style="display:inline">'
            f"{esc(title)}</h2></summary>{body}{tail}</details>")


def header(title: str, subtitle: str = "") -> str:
    sub = f'<p class="sub">{esc(subtitle)}</p>' if subtitle else ""
    return f"<header><h1>{esc(title)}</h1>{sub}</header>"


STATUS_TONE = {"pass": "pass", "warn": "warn", "fail": "fail", "skip": "skip", "info": "info"}


def findings(items: Sequence[Mapping[str, Any]], site: Callable[[Mapping[str, Any]], str]
             | None = None) -> str:
    """Findings (``Finding.to_dict()``) as a list: status, code, where, message, the fix."""
    if not items:
        return '<p class="note">nothing above the thresholds</p>'
    out = []
    for f in items:
        status = str(f.get("status", "info"))
        where = site(f) if site else _where(f)
        hint = f.get("hint")
        out.append(
            f'<li>{badge(status.upper(), STATUS_TONE.get(status, "info"))} '
            f'<code>{esc(str(f.get("code", "")))}</code> '
            + (f"<code>{esc(where)}</code> " if where else "")
            + esc(str(f.get("message", "")))
            + (f"<br><b>fix:</b> {esc(str(hint))}" if hint else "") + "</li>")
    return '<ul class="findings">' + "".join(out) + "</ul>"


def _where(f: Mapping[str, Any]) -> str:
    if not f.get("path"):
        return ""
    return f"{f['path']}:{f['line']}" if f.get("line") is not None else str(f["path"])


def diff(text: str) -> str:
    """A unified diff, each line coloured by what it does."""
    lines = []
    for line in text.splitlines():
        cls = ("hunk" if line.startswith("@@") else "add" if line.startswith("+") and not
               line.startswith("+++") else "del" if line.startswith("-") and not
               line.startswith("---") else "")
        lines.append(f'<span class="{cls or "ctx"}">{esc(line) or " "}</span>')
    return '<pre class="diff">' + "".join(lines) + "</pre>"


def pre(text: str) -> str:
    return f"<pre>{esc(text)}</pre>"


# -- charts -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Bar:
    """One horizontal bar: its label, value (None: drawn empty, the label says why), an
    optional spread (lo..hi), the text on hover, and its tone (``bar``, ``bar2``, ``off``,
    ``good``, ``warn``, ``bad``)."""

    label: str
    value: float | None
    tip: str
    lo: float | None = None
    hi: float | None = None
    tone: str = "bar"
    text: str = ""  # shown at the bar's end


WIDTH = 720


def _ticks(lo: float, hi: float, log: bool) -> list[float]:
    if log:
        first, last = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
        return [10.0 ** e for e in range(first, last + 1)]
    if hi <= 0:
        return [0.0]
    step = 10 ** math.floor(math.log10(hi))
    for k in (1, 2, 5, 10):
        if hi / (step * k) <= 6:
            step *= k
            break
    return [i * step for i in range(int(hi / step) + 2)]


def hbars(bars: Sequence[Bar], fmt: Callable[[float], str], axis: str = "",
          marker: float | None = None, marker_label: str = "") -> str:
    """Horizontal bars, one a row, on a log axis when the values span more than 20×.

    ``marker``: a vertical line at that value (1× for speedups, 100 % for a roof)."""
    values = [float(v) for b in bars for v in (b.value, b.lo, b.hi, marker)
              if v is not None and finite(v) and v > 0]
    if not values:
        return ""
    lo, hi = min(values), max(values)
    log = hi / lo > 20
    ticks = _ticks(lo, hi, log)
    top = max(hi, ticks[-1])
    bottom = ticks[0] if log else 0.0
    label_w = min(300, 12 + 7 * max(len(b.label) for b in bars))
    plot_w = WIDTH - label_w - 90
    row, pad = 24, 6

    def x(v: float) -> float:
        if log:
            return label_w + plot_w * (math.log10(max(v, bottom)) - math.log10(bottom)) / \
                (math.log10(top) - math.log10(bottom) or 1)
        return label_w + plot_w * v / (top or 1)

    above = 14 if marker_label else 0  # the marker's label gets a line of its own
    height = len(bars) * row + 30 + above
    out = [f'<svg viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" role="img" '
           f'aria-label="{esc(axis)}">']
    for t in ticks:
        tx = x(t)
        out.append(f'<line class="axis" x1="{tx:.1f}" x2="{tx:.1f}" y1="0" '
                   f'y2="{height - 22}"/><text class="tick" x="{tx:.1f}" y="{height - 8}" '
                   f'text-anchor="middle">{esc(fmt(t) if t else "0")}</text>')
    for i, b in enumerate(bars):
        y = i * row + pad + above
        out.append(f'<text x="{label_w - 8}" y="{y + 12}" text-anchor="end">'
                   f"{esc(_clip(b.label, 42))}</text>")
        if finite(b.value) and (b.value or 0) > 0:
            w = max(1.0, x(float(b.value or 0)) - label_w)
            out.append(f'<rect class="{b.tone}" x="{label_w}" y="{y}" width="{w:.1f}" '
                       f'height="{row - 2 * pad + 4}" data-tip="{esc(b.tip)}">'
                       f"<title>{esc(b.tip)}</title></rect>")
            if finite(b.hi):
                # a spread reaching zero or below (no lo) starts at the axis
                x1 = x(float(b.lo or 0)) if finite(b.lo) and (b.lo or 0) > 0 else label_w
                x2 = x(float(b.hi or 0))
                out.append(f'<line class="whisker" x1="{x1:.1f}" x2="{x2:.1f}" y1="{y + 8}" '
                           f'y2="{y + 8}"/><line class="whisker" x1="{x1:.1f}" x2="{x1:.1f}" '
                           f'y1="{y + 3}" y2="{y + 13}"/><line class="whisker" x1="{x2:.1f}" '
                           f'x2="{x2:.1f}" y1="{y + 3}" y2="{y + 13}"/>')
            end = max(x(float(b.value or 0)), x(float(b.hi or 0)) if finite(b.hi) else 0)
        else:
            end = label_w
        if b.text:
            out.append(f'<text x="{end + 6:.1f}" y="{y + 12}">{esc(b.text)}</text>')
    if marker is not None and finite(marker) and marker > 0:
        mx = x(marker)
        out.append(f'<line class="whisker" stroke-dasharray="4 3" x1="{mx:.1f}" x2="{mx:.1f}" '
                   f'y1="0" y2="{height - 22}"/>')
        if marker_label:
            out.append(f'<text class="tick" x="{mx + 3:.1f}" y="10">{esc(marker_label)}</text>')
    out.append("</svg>")
    scale = "log scale" if log else ""
    caption = ", ".join(p for p in (axis, scale) if p)
    return "".join(out) + (f'<p class="note">{esc(caption)}</p>' if caption else "")


@dataclass(frozen=True)
class Column:
    """One step of a timeline: its parts (category → seconds) stacked, and its hover text."""

    parts: Sequence[tuple[str, float]]
    tip: str


def timeline(columns: Sequence[Column], tones: Mapping[str, str], fmt: Callable[[float], str],
             axis: str = "", limit: int = 600) -> str:
    """Steps left to right, each a column of its stacked parts (one part: a plain bar)."""
    shown = list(columns[:limit])
    tops = [sum(max(v, 0.0) for _, v in c.parts) for c in shown]
    if not shown or max(tops) <= 0:
        return ""
    top = max(tops)
    ticks = _ticks(0.0, top, False)
    top = max(top, ticks[-1])
    left, height, plot_h = 60, 180, 150
    plot_w = WIDTH - left - 10
    w = plot_w / len(shown)
    out = [f'<svg viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" role="img" '
           f'aria-label="{esc(axis)}">']
    for t in ticks:
        ty = plot_h - plot_h * t / top + 5
        out.append(f'<line class="axis" x1="{left}" x2="{WIDTH - 10}" y1="{ty:.1f}" '
                   f'y2="{ty:.1f}"/><text class="tick" x="{left - 4}" y="{ty + 4:.1f}" '
                   f'text-anchor="end">{esc(fmt(t) if t else "0")}</text>')
    for i, c in enumerate(shown):
        y = float(plot_h + 5)
        x = left + i * w
        parts = []
        for name, v in c.parts:
            if v <= 0:
                continue
            h = plot_h * v / top
            y -= h
            parts.append(f'<rect class="{tones.get(name, "bar")}" x="{x:.2f}" y="{y:.2f}" '
                         f'width="{max(w - (1 if w > 3 else 0), 0.5):.2f}" height="{h:.2f}"/>')
        out.append(f'<g data-tip="{esc(c.tip)}"><title>{esc(c.tip)}</title>{"".join(parts)}'
                   "</g>")
    out.append(f'<text class="tick" x="{left}" y="{height - 4}">step 1</text>'
               f'<text class="tick" x="{WIDTH - 10}" y="{height - 4}" text-anchor="end">'
               f"step {len(shown)}</text></svg>")
    more = f"; the first {limit} of {len(columns)} steps" if len(columns) > limit else ""
    legend = ""
    if len(tones) > 1:
        legend = '<p class="legend note">' + "".join(
            f'<span><svg width="10" height="10" style="display:inline;margin:0">'
            f'<rect class="{tone}" width="10" height="10"/></svg> {esc(name)}</span>'
            for name, tone in tones.items()) + "</p>"
    return "".join(out) + legend + (f'<p class="note">{esc(axis + more)}</p>' if axis
                                    else "")


def _clip(text: str, width: int) -> str:
    """At most ``width`` characters; a long one keeps its start and its end (names that
    differ only at the end, as tune's candidates do, stay told apart)."""
    if len(text) <= width:
        return text
    head = width // 3
    return text[:head] + "…" + text[len(text) - (width - head - 1):]


def clip(text: str, width: int = 60) -> str:
    return _clip(text, width)


__all__ = ["NONE", "UNITS", "Bar", "Cell", "Column", "Doc", "badge", "clip", "count", "diff",
           "esc", "findings", "finite", "hbars", "header", "meter", "number", "percent", "pre",
           "ratio", "raw", "seconds", "section", "size", "table", "timeline"]
