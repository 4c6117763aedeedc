"""``%tflint``: the cells run so far (or one cell) through the linter, by cell and line.

The cells come from IPython's input history, numbered by execution count, so "cell 3" is
``In [3]``. A cell run again is linted once, in its latest version. They go through the
linter's notebook reader (:func:`tfperf.lint.notebook.lint_cells`): one module, IPython
syntax masked, positions mapped back to (cell, line). A fix is shown as a diff of its cell.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import Any

from tfperf.core import render
from tfperf.core.findings import Finding
from tfperf.lint.fix import apply_edits
from tfperf.lint.result import unified_diff
from tfperf.notebook.errors import MagicError
from tfperf.notebook.statement import current_cell

PATH = "<notebook>"


@dataclass
class CellFinding:
    finding: Finding
    diff: str = ""  # the fix as a diff of the cell, when there is a fix

    @property
    def where(self) -> str:
        loc = self.finding.location
        if loc is None or loc.cell is None:
            return "notebook"
        col = f", col {loc.column + 1}" if loc.column is not None else ""
        return f"cell {loc.cell}, line {loc.line}{col}"


@dataclass
class LintReport:
    """The findings of one ``%tflint``, with each fix as a cell diff."""

    items: list[CellFinding] = field(default_factory=list)
    cells: int = 0  # cells linted

    @property
    def findings(self) -> list[Finding]:
        return [i.finding for i in self.items]

    def text(self) -> str:
        if not self.items:
            return f"tflint: no findings in {self.cells} cell(s)"
        out = []
        for i in self.items:
            f = i.finding
            out.append(f"{i.where}: {f.code} {f.message}")
            if f.hint:
                out.append(f"    hint: {f.hint}")
            if i.diff:
                out += ["    " + line for line in i.diff.rstrip("\n").splitlines()]
        out.append(f"{len(self.items)} finding(s) in {self.cells} cell(s)")
        return "\n".join(out)

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(self.text())

    def _repr_html_(self) -> str:
        if not self.items:
            return f"<p>tflint: no findings in {self.cells} cell(s)</p>"
        rows = [(i.where, i.finding.code, i.finding.message, i.finding.hint)
                for i in self.items]
        out = [render.html_table(("where", "rule", "message", "hint"), rows)]
        for i in self.items:
            if i.diff:
                out.append(f"<p>{html.escape(i.where)}: {html.escape(i.finding.code)} fix</p>")
                out.append(render.html_pre(i.diff))
        out.append(f"<p>{len(self.items)} finding(s) in {self.cells} cell(s)</p>")
        return "\n".join(out)


def _dispatcher(codes: list[str], preview: bool) -> Any:
    from tfperf.lint import registry
    from tfperf.lint.engine import Dispatcher

    unknown = registry.unknown_selectors(codes)
    if unknown:
        raise MagicError("tflint", f"no rule matches {', '.join(unknown)} "
                                   "(`tfperf rules` lists them)")
    return Dispatcher(registry.select(select=codes or None, preview=preview))


def lint_sources(sources: dict[int, str], codes: list[str], preview: bool,
                 shown: dict[int, str] | None = None) -> LintReport:
    """``{cell number: text}`` → the report; cell numbers are kept in positions. ``shown``:
    a cell's text as the user sees it, where fixes are shown as diffs (same lines)."""
    from tfperf.lint.notebook import lint_cells

    dispatcher = _dispatcher(codes, preview)
    last = max(sources, default=0)
    cells = [{"cell_type": "code", "source": sources.get(n, "")} for n in range(1, last + 1)]
    report = LintReport(cells=sum(1 for s in sources.values() if s.strip()))
    for f in lint_cells(cells, PATH, dispatcher):
        report.items.append(CellFinding(f, _diff(f, {**sources, **(shown or {})})))
    return report


def _diff(f: Finding, sources: dict[int, str]) -> str:
    loc = f.location
    if f.fix is None or loc is None or loc.cell is None or loc.cell not in sources:
        return ""
    old = sources[loc.cell]
    new, applied, _ = apply_edits(old, [f.fix])
    if not applied or new == old:
        return ""
    return unified_diff(f"cell {loc.cell}", old, new)


def _cells_so_far(shell: Any) -> dict[int, str]:
    """``{cell number: text}`` of the cells run before this one; a cell run again counts once,
    in its latest version."""
    history = list(getattr(shell.history_manager, "input_hist_raw", []))
    now = current_cell(shell)
    sources: dict[int, str] = {}
    seen: set[str] = set()
    for n in range(min(len(history), now) - 1, 0, -1):  # latest first: a re-run counts once
        text = history[n]
        if text in seen:
            continue
        seen.add(text)
        sources[n] = text
    return sources


def lint_cells_so_far(shell: Any, codes: list[str], preview: bool) -> LintReport:
    return lint_sources(_cells_so_far(shell), codes, preview)


def lint_one_cell(shell: Any, body: str, codes: list[str], preview: bool) -> LintReport:
    """This cell's findings, read with the cells run before it: their imports and names are
    its context, as in the notebook (alone, a cell that uses the `tf` another cell imported
    read as plain Python: "no findings" for a loop that `%tflint` flags)."""
    # The magic's own line is linted as a blank line 1, so lines match the cell; given as
    # `%%tflint`, the reader would take the cell for a magic's and skip it when it does not
    # parse (issue 24: "no findings" for a cell with a syntax error).
    cell = current_cell(shell)
    sources = _cells_so_far(shell)
    sources[cell] = "\n" + body
    report = lint_sources(sources, codes, preview, shown={cell: "%%tflint\n" + body})
    report.items = [i for i in report.items
                    if i.finding.location is not None and i.finding.location.cell == cell]
    report.cells = 1
    return report
