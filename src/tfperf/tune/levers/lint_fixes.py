"""Lint's own fixes (safe and unsafe) for findings inside the tuned function, one lever each:
lint's advice, measured on the user's shapes. An unsafe fix (TFP301's ``tf.constant(i)``,
TFP102's reduction) is kept only when the candidate agrees with the baseline."""

from __future__ import annotations

from collections.abc import Sequence

from tfperf.core.findings import Finding
from tfperf.tune.lever import Lever, LeverContext
from tfperf.tune.source import SourceEditError, find_function, parse


class LintFix(Lever):
    stage = 0
    rejections = ("the fix changes what the function computes (disagrees)",
                  "the fixed code raises", "it overlaps another fix")

    def __init__(self, finding: Finding) -> None:
        loc = finding.location
        self.finding = finding
        self.line = loc.line if loc else 0
        self.name = f"{finding.code} fix (line {self.line})"
        self.slot = f"lint:{finding.code}:{self.line}"
        fix = finding.fix
        self.description = (fix.description if fix and fix.description else finding.hint) or \
            finding.message

    def build(self, text: str, ctx: LeverContext) -> str:
        return apply_fixes(text, [self], ctx)


def apply_fixes(text: str, fixes: Sequence[LintFix], ctx: LeverContext) -> str:
    """Lint fixes are positions in the original source: they go in first, all at once."""
    from tfperf.lint.fix import apply_edits

    if text != ctx.target.source:
        raise SourceEditError("lint fixes apply to the original source only")
    new, _, skipped = apply_edits(text, [f.finding.fix for f in fixes
                                               if f.finding.fix is not None])
    if skipped:
        raise SourceEditError(f"{skipped} of the lint fixes overlap")
    return new


def findings_in_function(ctx: LeverContext) -> list[Finding]:
    from tfperf.lint.engine import lint_source

    try:
        fn = find_function(parse(ctx.target.source), ctx.target.name)
    except SourceEditError:
        return []
    first = min([d.lineno for d in fn.decorator_list] + [fn.lineno])
    last = fn.end_lineno or fn.lineno
    out = []
    for f in lint_source(ctx.target.source, str(ctx.target.path)):
        if f.fix is None or not f.fix.edits:
            continue
        if all(first <= e.line and e.end_line <= last for e in f.fix.edits):
            out.append(f)
    return out


def levers(ctx: LeverContext) -> list[Lever]:
    return [LintFix(f) for f in findings_in_function(ctx)]
