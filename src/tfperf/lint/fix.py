"""Apply fixes to source text, safely.

Edits are (line, column) ranges in characters (see :class:`~tfperf.core.findings.Edit`).
A fix is all-or-nothing: when any of its edits overlaps an edit already accepted in this
pass, the whole fix waits for the next pass. A pass whose result does not parse is thrown
away. Passes repeat (re-linting in between) until nothing changes, so ``--fix`` is
idempotent: running it again finds nothing more to do.
"""

from __future__ import annotations

import ast
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field

from tfperf.core.findings import Applicability, Edit, Finding, Fix
from tfperf.lint.semantic import split_lines

MAX_PASSES = 10


@dataclass
class FixResult:
    source: str                      # the fixed text (the input when nothing was applied)
    applied: int = 0                 # fixes applied, over all passes
    skipped: int = 0                 # fixes left out because they overlapped another
    error: str | None = None         # why the last pass was thrown away, if it was
    remaining: list[Finding] = field(default_factory=list)  # findings after fixing

    @property
    def changed(self) -> bool:
        return self.applied > 0


def _offsets(source: str) -> list[int]:
    starts, pos = [0], 0
    for line in split_lines(source):
        pos += len(line)
        starts.append(pos)
    return starts


def _abs(starts: list[int], line: int, col: int) -> int:
    if line - 1 >= len(starts):
        return starts[-1]
    return min(starts[line - 1] + col, starts[min(line, len(starts) - 1)])


def apply_edits(source: str, fixes: Sequence[Fix]) -> tuple[str, int, int]:
    """Apply non-overlapping fixes in one go → (text, applied, skipped)."""
    starts = _offsets(source)
    accepted: list[tuple[int, int, str]] = []
    taken: list[tuple[int, int]] = []
    applied = skipped = 0
    for fix in fixes:
        spans = [(_abs(starts, e.line, e.column), _abs(starts, e.end_line, e.end_column),
                  e.content) for e in fix.edits]
        if any(s > e for s, e, _ in spans) or _overlaps(spans, taken):
            skipped += 1
            continue
        accepted.extend(spans)
        taken.extend((s, e) for s, e, _ in spans)
        applied += 1
    out = source
    for s, e, content in sorted(accepted, key=lambda t: (t[0], t[1]), reverse=True):
        out = out[:s] + content + out[e:]
    return out, applied, skipped


def _overlaps(spans: list[tuple[int, int, str]], taken: list[tuple[int, int]]) -> bool:
    for s, e, _ in spans:
        for ts, te in taken:
            # Two insertions at one point conflict; touching ranges do not.
            if (s < te and ts < e) or (s == e == ts == te) or (s == e and ts < s < te) \
                    or (ts == te and s < ts < e):
                return True
    return False


def parses(source: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(source)
        return True
    except (SyntaxError, ValueError):
        return False


def wanted(finding: Finding, unsafe: bool) -> bool:
    return finding.fix is not None and bool(finding.fix.edits) and (
        unsafe or finding.fix.applicability is Applicability.SAFE)


def fix_source(source: str, lint, unsafe: bool = False,
               max_passes: int = MAX_PASSES) -> FixResult:
    """Fix ``source`` until no wanted fix remains. ``lint(source) -> list[Finding]`` is the
    linter to re-run between passes (it decides the rules, the path, noqa...)."""
    result = FixResult(source)
    findings = lint(source)
    for _ in range(max_passes):
        fixes = [f.fix for f in findings if wanted(f, unsafe)]
        if not fixes:
            break
        new, applied, skipped = apply_edits(result.source, fixes)
        if not applied or new == result.source:
            break
        if not parses(new):
            result.error = "a fix produced code that does not parse; left unfixed"
            break
        result.source, result.applied = new, result.applied + applied
        result.skipped = skipped
        findings = lint(new)
    result.remaining = findings
    return result


def edit_preview(source: str, edits: Sequence[Edit]) -> str:
    """The text ``edits`` would produce (for tests and docs)."""
    return apply_edits(source, [Fix(Applicability.UNSAFE, tuple(edits))])[0]
