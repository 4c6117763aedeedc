"""HTML reports: one self-contained file per report, built from the report's JSON document.

The same document ``--json`` prints is what a view reads (parsed back from its text), so a
figure in the page is the JSON's figure; the document is embedded in the page as well
(``<script type="application/json" id="tfperf-data">``). The shell (:mod:`.page`) holds the
style and the script; :mod:`.parts` the pieces; :mod:`.views` one module per kind of report.
"""

from __future__ import annotations

import json
from pathlib import Path

from tfperf.core.html import page as shell
from tfperf.core.html.parts import Doc
from tfperf.core.html.views import find


def report_page(kind: str, document: str) -> str:
    """The whole page for a report of ``kind`` whose JSON text is ``document``."""
    view = find(kind)
    doc = Doc(json.loads(document))
    return shell.page(view.title(doc), view.body(doc), document)


def report_fragment(kind: str, document: str) -> str:
    """The same report as a notebook output (scoped style, no embedded document)."""
    view = find(kind)
    return shell.fragment(view.body(Doc(json.loads(document))))


def write_report(path: str | Path, kind: str, document: str) -> Path:
    """Write the page to ``path`` (whole or not at all); OSError when it cannot be written."""
    from tfperf.core.files import write_new_text

    return write_new_text(path, report_page(kind, document))


def save(page: str, path: str | Path, command: str) -> bool:
    """For a command's ``--html``: write the page (a report's ``to_html()``) to ``path`` and
    say so on stderr; False, and one line saying why, when it cannot be written. Missing
    folders are made, as for ``--plot`` and ``--save``."""
    import sys

    from tfperf.core.files import os_error_line, write_new_text

    try:
        Path(path).absolute().parent.mkdir(parents=True, exist_ok=True)
        written = write_new_text(path, page)
    except OSError as exc:
        print(f"tfperf {command}: error: --html {os_error_line(exc)}", file=sys.stderr)
        return False
    print(f"report written to {written}", file=sys.stderr)
    return True


__all__ = ["report_fragment", "report_page", "save", "write_report"]
