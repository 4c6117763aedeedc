"""Lint files: read, pick the reader (Python or notebook), lint, fix, write back safely."""

from __future__ import annotations

import difflib
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tfperf.core.findings import Finding
from tfperf.lint.engine import Dispatcher, decode_source, error_finding, lint_source
from tfperf.lint.fix import fix_source
from tfperf.lint.rule import Rule


@dataclass
class FileResult:
    path: str
    findings: list[Finding] = field(default_factory=list)
    fixed: int = 0            # fixes applied (written, or shown with --diff)
    diff: str = ""            # unified diff of the fixes (--diff)
    new_text: str | None = None  # fixed file content, when it changed
    notes: list[str] = field(default_factory=list)  # said on stderr: skipped, not written


@dataclass(frozen=True)
class RunOptions:
    fix: bool = False
    unsafe: bool = False
    diff: bool = False        # compute the fixes, show them, do not write


def _diff(path: str, old: str, new: str) -> str:
    return "".join(difflib.unified_diff(old.splitlines(keepends=True),
                                        new.splitlines(keepends=True),
                                        fromfile=f"a/{path}", tofile=f"b/{path}"))


def lint_text(text: str, path: str, dispatcher: Dispatcher,
              options: RunOptions = RunOptions()) -> FileResult:
    """Lint (and with ``options``, fix) one file's decoded text."""
    if path.endswith(".ipynb"):
        from tfperf.lint.notebook import lint_notebook_text
        return lint_notebook_text(text, path, dispatcher, options)
    result = FileResult(path)
    if not (options.fix or options.diff):
        result.findings = lint_source(text, path, dispatcher=dispatcher)
        return result
    fixed = fix_source(text, lambda s: lint_source(s, path, dispatcher=dispatcher),
                       unsafe=options.unsafe)
    result.findings = fixed.remaining
    if fixed.error:
        result.findings.append(error_finding(path, f"fixes not applied: {fixed.error}"))
    if fixed.changed:
        result.fixed = fixed.applied
        result.new_text = fixed.source
        if options.diff:
            result.diff = _diff(path, text, fixed.source)
    return result


def lint_file(path: str | Path, dispatcher: Dispatcher,
              options: RunOptions = RunOptions()) -> FileResult:
    """Read one file and lint it; any problem with the file itself is a TFP000 finding."""
    path = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        return FileResult(path, [error_finding(path, f"cannot read: {exc.strerror or exc}")])
    if path.endswith(".ipynb"):
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            return FileResult(path, [error_finding(path, f"notebook is not UTF-8: {exc}")])
    else:
        text, err = decode_source(data, path)
        if err is not None:
            return FileResult(path, [err])
    result = lint_text(text, path, dispatcher, options)  # type: ignore[arg-type]
    if result.new_text is not None and options.fix and not options.diff:
        _write_atomically(Path(path), result.new_text, data)
    return result


def _write_atomically(path: Path, text: str, original: bytes) -> None:
    """Replace the file in one rename, keeping its encoding and newline style."""
    encoding = "utf-8"
    if path.suffix != ".ipynb":
        import io
        import tokenize
        encoding = tokenize.detect_encoding(io.BytesIO(original).readline)[0]
    tmp = path.with_name(f".{path.name}.tfperf-tmp")
    with open(tmp, "w", encoding=encoding, newline="") as fh:
        fh.write(("\ufeff" if original.startswith(b"\xef\xbb\xbf") and encoding == "utf-8"
                  else "") + text)
    os.replace(tmp, path)


def lint_paths(files: Sequence[Path], rules: Sequence[Rule],
               options: RunOptions = RunOptions()) -> list[FileResult]:
    dispatcher = Dispatcher(rules)
    return [lint_file(f, dispatcher, options) for f in files]
