"""Shared by the lint tests that lint a small project on disk: its files written, its findings
read back relative to its root."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path


def write_project(root: Path, files: dict[str, str]) -> None:
    """Each file dedented, folders made as the names need them."""
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def found(outcome, root: Path, code: str | None = None) -> list[tuple[str, str, int | None, str]]:
    """(code, path relative to root, line, message) of each finding, of ``code`` where given."""
    return sorted((f.code, os.path.relpath(f.location.path, root), f.location.line, f.message)
                  for f in outcome.findings if code is None or f.code == code)
