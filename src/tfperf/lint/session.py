"""One ``tfperf lint`` run: choose rules, find files, lint them, gather the outcome."""

from __future__ import annotations

from dataclasses import dataclass, field

from tfperf.core.findings import Finding
from tfperf.lint import registry
from tfperf.lint.discovery import DiscoveryError, discover
from tfperf.lint.engine import sort_key
from tfperf.lint.rule import Rule
from tfperf.lint.runner import RunOptions, lint_paths


@dataclass
class LintRequest:
    paths: list[str]
    select: list[str] | None = None
    ignore: list[str] = field(default_factory=list)
    extend_select: list[str] = field(default_factory=list)
    fix: bool = False
    unsafe: bool = False
    diff: bool = False
    cache: bool = True
    jobs: int = 0


@dataclass
class LintOutcome:
    findings: list[Finding]
    rules: list[Rule]
    files: int
    fixed: int = 0
    diffs: list[str] = field(default_factory=list)


def choose_rules(select, ignore, extend_select) -> list[Rule]:
    """Rules for these selectors; ``ValueError`` for a selector that matches no rule."""
    unknown = registry.unknown_selectors([*(select or []), *ignore, *extend_select])
    if unknown:
        raise ValueError(f"unknown rule code(s): {', '.join(unknown)} (see `tfperf rules`)")
    return registry.select(select=select, ignore=ignore, extend_select=extend_select)


def run(request: LintRequest) -> LintOutcome:
    rules = choose_rules(request.select, request.ignore, request.extend_select)
    try:
        files = discover(request.paths)
    except DiscoveryError as exc:
        raise ValueError(str(exc)) from exc
    options = RunOptions(fix=request.fix, unsafe=request.unsafe, diff=request.diff)
    results = lint_paths(files, rules, options)
    findings = [f for r in results for f in r.findings]
    findings.sort(key=sort_key)
    return LintOutcome(findings=findings, rules=rules, files=len(files),
                       fixed=sum(r.fixed for r in results),
                       diffs=[r.diff for r in results if r.diff])
