"""Lint files: read, pick the reader (Python or notebook), lint, fix, write back safely."""

from __future__ import annotations

import io
import tokenize
from collections.abc import Sequence
from pathlib import Path

from tfperf.lint.engine import Dispatcher, decode_source, error_finding, lint_source
from tfperf.lint.result import DEFAULT_OPTIONS, FileResult, RunOptions, unified_diff
from tfperf.lint.rule import Rule


def lint_text(text: str, path: str, dispatcher: Dispatcher,
              options: RunOptions = DEFAULT_OPTIONS) -> FileResult:
    """Lint (and with ``options``, fix) one file's decoded text."""
    # Notebooks and fixes are imported on first use: a pre-commit run over a few .py files
    # (most of whose time is interpreter start and imports) needs neither.
    summaries: list | None = [] if dispatcher.defer_project and dispatcher.project_rules \
        else None
    if path.endswith(".ipynb"):
        from tfperf.lint.notebook import lint_notebook_text

        result = lint_notebook_text(text, path, dispatcher, options, summaries)
        result.summary = summaries[-1].dumps() if summaries else None
        return result
    result = FileResult(path)
    fixing = options.fix or options.diff
    if not fixing or _python2_only(text, path):
        result.findings = lint_source(text, path, dispatcher=dispatcher, summary_out=summaries,
                                      notes=result.notes)
        result.summary = summaries[-1].dumps() if summaries else None
        if fixing and result.notes:
            result.notes.append(f"{path}: not fixed: the fixes are written for Python 3 "
                                f"source and this file is Python 2; it is left unchanged")
        return result
    from tfperf.lint.fix import fix_source

    def lint_again(s: str) -> list:
        if summaries is not None:
            summaries.clear()  # the summary of the text as fixed last
        return lint_source(s, path, dispatcher=dispatcher, summary_out=summaries)

    fixed = fix_source(text, lint_again, unsafe=options.unsafe)
    result.summary = summaries[-1].dumps() if summaries else None
    result.findings = fixed.remaining
    if fixed.error:
        result.findings.append(error_finding(path, f"fixes not applied: {fixed.error}"))
    if fixed.changed:
        result.fixed = fixed.applied
        result.new_text = fixed.source
        if options.diff:
            result.diff = unified_diff(path, text, fixed.source)
    return result


def _python2_only(text: str, path: str) -> bool:
    """Whether ``text`` parses only as Python 2 (``--fix`` then writes nothing to it)."""
    from tfperf.lint.engine import python2_copy

    return python2_copy(text, path) is not None


def lint_file(path: str | Path, dispatcher: Dispatcher,
              options: RunOptions = DEFAULT_OPTIONS, data: bytes | None = None) -> FileResult:
    """Read one file (unless its bytes are given), lint it and, with ``options.fix``, write
    the fixes back. A file that cannot be read, or whose fixes cannot be written, gets one
    line in ``errors`` (the run exits 2); its content's problems are TFP000 findings."""
    path = str(path)
    if data is None:
        try:
            data = Path(path).read_bytes()
        except OSError as exc:
            return FileResult(path, errors=[f"{path}: cannot read: {exc.strerror or exc}"])
    if path.endswith(".ipynb"):
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            return FileResult(path, [error_finding(path, f"notebook is not UTF-8: {exc}")])
    else:
        text, err = decode_source(data, path)  # type: ignore[assignment]
        if err is not None:
            return FileResult(path, [err])
    result = lint_text(text, path, dispatcher, options)
    if result.new_text is not None and options.fix and not options.diff:
        try:
            _write_atomically(Path(path), result.new_text, data)
        except OSError as exc:
            # The file is as it was: report what it holds, not what the fixes would leave.
            from tfperf.core.files import os_error_line

            result = lint_text(text, path, dispatcher, DEFAULT_OPTIONS)
            result.errors.append(os_error_line(exc))
    return result


def _write_atomically(path: Path, text: str, original: bytes) -> None:
    """Write the fixed text back in the file's own encoding and BOM (see
    :func:`tfperf.core.files.write_text_atomically` for symlinks, mode, owner, read-only
    files and atomicity; it raises ``OSError`` for a file it does not write)."""
    from tfperf.core.files import write_text_atomically

    encoding = "utf-8"
    if path.suffix != ".ipynb":
        encoding = tokenize.detect_encoding(io.BytesIO(original).readline)[0]
    bom = original.startswith(b"\xef\xbb\xbf") and encoding in ("utf-8", "utf-8-sig")
    write_text_atomically(path, text, encoding="utf-8" if bom else encoding, bom=bom)


def lint_paths(files: Sequence[Path], rules: Sequence[Rule],
               options: RunOptions = DEFAULT_OPTIONS) -> list[FileResult]:
    dispatcher = Dispatcher(rules)
    return [lint_file(f, dispatcher, options) for f in files]
