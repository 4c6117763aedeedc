"""One way to render: plain data and findings → text, JSON, Markdown, SARIF, GitHub annotations.

Nothing here knows which capability produced the data. Capabilities build plain values
(dicts, lists, :class:`~tfperf.core.findings.Finding`) and pick a writer.
"""

from __future__ import annotations

import dataclasses
import enum
import os
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import IO, Any

from tfperf import __version__
from tfperf.core.findings import Finding, Status

# ---------------------------------------------------------------------------------------------
# colour


def use_color(stream: IO[str] | None = None) -> bool:
    """Colour only on a terminal, honouring the NO_COLOR / FORCE_COLOR conventions."""
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    stream = stream or sys.stdout
    return bool(getattr(stream, "isatty", lambda: False)()) and os.environ.get("TERM") != "dumb"


_CODES = {"red": "31", "green": "32", "yellow": "33", "blue": "34", "magenta": "35",
          "cyan": "36", "grey": "90", "bold": "1", "dim": "2"}

STATUS_STYLE = {Status.PASS: "green", Status.WARN: "yellow", Status.FAIL: "red",
                Status.SKIP: "grey", Status.INFO: "cyan"}


def style(text: str, *styles: str, color: bool = True) -> str:
    if not color or not styles:
        return text
    codes = ";".join(_CODES[s] for s in styles)
    return f"\x1b[{codes}m{text}\x1b[0m"


def status_badge(status: Status, color: bool) -> str:
    return style(f"{str(status).upper():<4}", STATUS_STYLE[status], "bold", color=color)


# ---------------------------------------------------------------------------------------------
# JSON


def to_plain(obj: Any) -> Any:
    """Dataclasses, enums, paths and findings → JSON-able builtins."""
    if isinstance(obj, Finding):
        return obj.to_dict()
    if hasattr(obj, "to_dict") and callable(obj.to_dict):
        return to_plain(obj.to_dict())
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, enum.Enum):
        return obj.value
    if isinstance(obj, Path):
        return str(obj)
    if isinstance(obj, dict):
        return {str(k): to_plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set, frozenset)):
        return [to_plain(v) for v in obj]
    if isinstance(obj, float) and obj != obj:  # NaN is not JSON
        return None
    return obj


def to_json(obj: Any, indent: int | None = 2) -> str:
    import json  # here, not at the top: a text report (a pre-commit lint) needs no JSON

    return json.dumps(to_plain(obj), indent=indent, ensure_ascii=False, default=str)


# ---------------------------------------------------------------------------------------------
# tables


def text_table(headers: Sequence[str], rows: Iterable[Sequence[Any]],
               align: str | None = None) -> str:
    """A plain monospace table. ``align`` is one char per column: 'l' or 'r'."""
    str_rows = [["" if c is None else str(c) for c in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in str_rows:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], len(cell))
    align = align or "l" * len(headers)

    def fmt(cells: Sequence[str]) -> str:
        out = []
        for i, cell in enumerate(cells):
            out.append(cell.rjust(widths[i]) if align[i] == "r" else cell.ljust(widths[i]))
        return "  ".join(out).rstrip()

    lines = [fmt(list(headers)), "  ".join("-" * w for w in widths)]
    lines += [fmt(r) for r in str_rows]
    return "\n".join(lines)


def markdown_table(headers: Sequence[str], rows: Iterable[Sequence[Any]],
                   align: str | None = None) -> str:
    def esc(c: Any) -> str:
        return ("" if c is None else str(c)).replace("|", "\\|").replace("\n", " ")

    align = align or "l" * len(headers)
    sep = ["---:" if a == "r" else "---" for a in align]
    lines = ["| " + " | ".join(esc(h) for h in headers) + " |", "| " + " | ".join(sep) + " |"]
    lines += ["| " + " | ".join(esc(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def html_table(headers: Sequence[str], rows: Iterable[Sequence[Any]],
               align: str | None = None) -> str:
    """An HTML table for notebook front ends; every cell escaped, 'r' columns right-aligned."""
    import html

    align = align or "l" * len(headers)

    def cell(tag: str, i: int, c: Any) -> str:
        style = ' style="text-align:right"' if i < len(align) and align[i] == "r" else ""
        return f"<{tag}{style}>{html.escape('' if c is None else str(c))}</{tag}>"

    head = "".join(cell("th", i, h) for i, h in enumerate(headers))
    body = "".join("<tr>" + "".join(cell("td", i, c) for i, c in enumerate(row)) + "</tr>"
                   for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def html_pre(text: str) -> str:
    """Monospace HTML for text whose alignment matters (a diff, a traceback)."""
    import html

    return f"<pre>{html.escape(text)}</pre>"


# ---------------------------------------------------------------------------------------------
# findings


def format_location(f: Finding) -> str:
    loc = f.location
    if loc is None or loc.path is None:
        return ""
    parts = [loc.path]
    if loc.cell is not None:
        parts.append(f"cell {loc.cell}")
    if loc.line is not None:
        parts.append(str(loc.line))
        if loc.column is not None:
            parts.append(str(loc.column + 1))
    return ":".join(parts)


def _fixes_safely(f: Finding) -> bool:
    """Whether plain ``--fix`` applies the finding's fix: only those carry ``[*]`` and count
    as fixable (as ruff marks them); an unsafe fix is counted in the closing line instead."""
    return f.fix is not None and str(f.fix.applicability) == "safe"


def findings_text(findings: Sequence[Finding], color: bool = False, hints: bool = True) -> str:
    """``path:line:col: CODE message`` then an indented hint, as compilers and ruff print."""
    lines = []
    for f in findings:
        where = format_location(f)
        head = f"{style(where, 'bold', color=color)}: " if where else ""
        code = style(f.code, "red" if f.failed else "yellow", "bold", color=color)
        fixable = " [*]" if _fixes_safely(f) else ""
        lines.append(f"{head}{code}{fixable} {f.message}")
        if hints and f.hint:
            lines.append(f"  {style('help:', 'cyan', color=color)} {f.hint}")
    return "\n".join(lines)


def findings_grouped(findings: Sequence[Finding], color: bool = False) -> str:
    """By file, as ruff's grouped output: the path once, then ``line:col CODE message`` per
    finding (``cell N, line:col`` in notebooks); each rule's hint is said once per file, after
    its first finding there, not repeated on every line."""
    by_path: dict[str, list[Finding]] = {}
    for f in findings:
        by_path.setdefault((f.location.path if f.location else None) or "<unknown>",
                           []).append(f)
    out: list[str] = []
    for path, group in by_path.items():
        wheres = []
        for f in group:
            loc = f.location
            where = ""
            if loc is not None and loc.line is not None:
                where = f"{loc.line}:{(loc.column or 0) + 1}"
                if loc.cell is not None:
                    where = f"cell {loc.cell}, {where}"
            wheres.append(where)
        width = max(len(w) for w in wheres)
        if out:
            out.append("")
        out.append(style(f"{path}:", "bold", color=color))
        hinted: set[tuple[str, str]] = set()  # a hint once per file, each distinct one
        for f, where in zip(group, wheres, strict=True):
            code = style(f.code, "red" if f.failed else "yellow", "bold", color=color)
            fixable = " [*]" if _fixes_safely(f) else ""
            out.append(f"  {where:<{width}}  {code}{fixable} {f.message}")
            if f.hint and (f.code, f.hint) not in hinted:
                hinted.add((f.code, f.hint))
                out.append(f"  {'':<{width}}  {style('help:', 'cyan', color=color)} {f.hint}")
    return "\n".join(out)


def rule_statistics(findings: Sequence[Finding]) -> list[tuple[int, str, str, int, int]]:
    """(count, code, name, files, fixable) per rule, most frequent first (ruff --statistics);
    fixable: what plain ``--fix`` would fix."""
    by_code: dict[str, list[Finding]] = {}
    for f in findings:
        by_code.setdefault(f.code, []).append(f)
    rows = [(len(fs), code, fs[0].name, len({f.location.path if f.location else None
                                                for f in fs}),
             sum(1 for f in fs if _fixes_safely(f))) for code, fs in by_code.items()]
    return sorted(rows, key=lambda r: (-r[0], r[1]))


def findings_concise(findings: Sequence[Finding]) -> str:
    return "\n".join(f"{format_location(f)}: {f.code} {f.message}" for f in findings)


def github_data(s: str) -> str:
    """A GitHub workflow command's message, escaped as the runner unescapes it."""
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def github_property(s: str) -> str:
    """A workflow command's property value (``file=``, ``title=``): ``,`` ends a property and
    ``:`` the properties, so a path such as ``data,v2/x.py`` pinned the annotation on a file
    named ``data``."""
    return github_data(s).replace(":", "%3A").replace(",", "%2C")


def _in_cell(loc: Any) -> str:
    """A notebook finding's place, said in the message: its line counts within the cell, and
    a line or region given to GitHub or SARIF would point into the .ipynb's JSON instead."""
    if loc is None or loc.cell is None:
        return ""
    line = f", line {loc.line}" if loc.line is not None else ""
    column = f":{loc.column + 1}" if loc.line is not None and loc.column is not None else ""
    return f"cell {loc.cell}{line}{column}: "


def findings_github(findings: Sequence[Finding]) -> str:
    """GitHub Actions workflow commands, one annotation per finding."""
    out = []
    for f in findings:
        loc = f.location or None
        level = "error" if f.failed else "warning"
        props = []
        if loc and loc.path:
            props.append(f"file={github_property(loc.path)}")
        if loc and loc.path and loc.cell is None:
            if loc.line is not None:
                props.append(f"line={loc.line}")
            if loc.column is not None:
                props.append(f"col={loc.column + 1}")
            if loc.end_line is not None:
                props.append(f"endLine={loc.end_line}")
        props.append(f"title={github_property(f'{f.code} {f.name}'.strip())}")
        text = f"{_in_cell(loc)}{f.code} {f.message}"
        out.append(f"::{level} {','.join(props)}::{github_data(text)}")
    return "\n".join(out)


def findings_sarif(findings: Sequence[Finding], rules: Sequence[dict[str, str]] = ()) -> str:
    """SARIF 2.1.0. ``rules``: dicts with ``code``, ``name``, ``summary``, optional ``help``."""
    rule_index = {r["code"]: i for i, r in enumerate(rules)}
    results = []
    for f in findings:
        loc = f.location or None
        result: dict[str, Any] = {
            "ruleId": f.code,
            "level": "error" if f.failed else "warning",
            "message": {"text": _in_cell(loc) + f.message + (f" ({f.hint})" if f.hint else "")},
        }
        if f.code in rule_index:
            result["ruleIndex"] = rule_index[f.code]
        if loc and loc.path:
            region: dict[str, int] = {}
            if loc.line is not None:
                region["startLine"] = loc.line
            if loc.column is not None:
                region["startColumn"] = loc.column + 1
            if loc.end_line is not None:
                region["endLine"] = loc.end_line
            if loc.end_column is not None:
                region["endColumn"] = loc.end_column + 1
            physical: dict[str, Any] = {"artifactLocation": {"uri": Path(loc.path).as_posix()}}
            if region and loc.cell is None:
                physical["region"] = region
            result["locations"] = [{"physicalLocation": physical}]
            if loc.cell is not None:  # the cell's own lines, not the .ipynb's (see _in_cell)
                result["properties"] = {"cell": loc.cell, **{
                    k: v for k, v in (("line", loc.line), ("column", region.get("startColumn")))
                    if v is not None}}
        results.append(result)
    sarif = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "tfperf",
                "version": __version__,
                "rules": [
                    {"id": r["code"], "name": r.get("name", ""),
                     "shortDescription": {"text": r.get("summary", "")},
                     **({"fullDescription": {"text": r["help"]}} if r.get("help") else {})}
                    for r in rules
                ],
            }},
            "results": results,
        }],
    }
    import json

    return json.dumps(sarif, indent=2)
