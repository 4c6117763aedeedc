"""Writing the winning change into the user's file, with ``lint --fix``'s safety rules: the
new text must parse, the file is replaced in one rename keeping its mode
(:func:`tfperf.core.files.write_text_atomically`), and applying twice changes nothing."""

from __future__ import annotations

from pathlib import Path

from tfperf.core.files import write_text_atomically
from tfperf.lint.fix import parses
from tfperf.tune.result import TuneResult
from tfperf.tune.target import TuneError


def apply_patch(result: TuneResult, path: str | Path | None = None) -> str:
    """Write ``result``'s patch into the file; returns what was done, in words."""
    if not result.in_file and path is None:
        where = f"cell {result.cell}" if result.cell is not None else result.path
        raise TuneError(f"{result.function} was defined in {where}, not in a .py file: there "
                        "is no file to apply the patch to; paste the diff's new lines into "
                        "the cell (result.patch)")
    p = Path(path or result.path)
    if not result.patched_source:
        return "nothing to apply: no candidate beat the baseline"
    current = p.read_text(encoding="utf-8")
    if current == result.patched_source:
        return f"{p}: already applied, unchanged"
    if result.original_source and current != result.original_source:
        raise TuneError(f"{p} changed since it was tuned: run tfperf tune again")
    if not parses(result.patched_source):
        raise TuneError(f"{p}: the patched text does not parse; nothing written")
    write_text_atomically(p, result.patched_source)
    return f"{p}: patched ({result.best_name})"
