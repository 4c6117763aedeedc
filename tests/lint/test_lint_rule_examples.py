"""Every registered rule's VALID and INVALID examples, through the real registry and engine."""

from __future__ import annotations

import ast

import pytest

from tfperf.lint import registry
from tfperf.lint.engine import lint_source
from tfperf.lint.fix import fix_source, parses
from tfperf.lint.rule import DOC_SECTIONS

RULES = registry.all_rules()
CODES = [r.code for r in RULES]
ENGINE = {"TFP000", "TFP001"}


def _lint(source, rule):
    return lint_source(source, "example.py", rules=[rule])


def test_the_catalogue_is_not_empty_and_has_the_reference_rules():
    assert {"TFP101", "TFP102", "TFP103"} <= set(CODES)


@pytest.mark.parametrize("rule", RULES, ids=CODES)
def test_rule_declares_enough_examples_and_docs(rule):
    assert len(rule.valid) >= 3, f"{rule.code}: needs at least 3 VALID examples"
    assert len(rule.invalid) >= 3, f"{rule.code}: needs at least 3 INVALID examples"
    assert registry.doc_problems(type(rule)) == []
    for section in DOC_SECTIONS:
        assert f"## {section}" in rule.docs
    if any(ex.fixed is not None for ex in rule.invalid):
        assert rule.fixable, f"{rule.code} has fixed examples but says it is not fixable"


@pytest.mark.parametrize("rule", RULES, ids=CODES)
def test_valid_examples_give_no_finding(rule):
    for i, source in enumerate(rule.valid):
        ast.parse(source)  # an example that does not parse proves nothing
        findings = _lint(source, rule)
        assert [f for f in findings if f.code in ENGINE] == [], f"VALID #{i} broke the engine"
        got = [(f.location.line, f.message) for f in findings if f.code == rule.code]
        assert got == [], f"{rule.code} fired on VALID example #{i}:\n{source}"


@pytest.mark.parametrize("rule", RULES, ids=CODES)
def test_invalid_examples_give_findings_and_their_fixes(rule):
    for i, ex in enumerate(rule.invalid):
        ast.parse(ex.source)
        findings = _lint(ex.source, rule)
        assert [f for f in findings if f.code in ENGINE] == [], f"INVALID #{i} broke the engine"
        mine = [f for f in findings if f.code == rule.code]
        assert mine, f"{rule.code} did not fire on INVALID example #{i}:\n{ex.source}"
        if ex.count is not None:
            assert len(mine) == ex.count, f"INVALID #{i}: {len(mine)} findings, not {ex.count}"
        if ex.lines is not None:
            assert tuple(f.location.line for f in mine) == ex.lines, f"INVALID #{i}"
        for f in mine:
            assert f.name == rule.name and f.location.path == "example.py"
        if ex.fixed is None:
            assert all(f.fix is None for f in mine), f"INVALID #{i} offers an unexpected fix"
            continue
        result = fix_source(ex.source, lambda s: _lint(s, rule), unsafe=True)
        assert result.error is None
        assert result.source == ex.fixed, f"INVALID #{i}: fix gave\n{result.source}"
        assert parses(result.source)
        again = fix_source(result.source, lambda s: _lint(s, rule), unsafe=True)
        assert again.source == result.source and again.applied == 0, "fix is not idempotent"


def test_rule_codes_and_names_are_unique():
    assert len(set(CODES)) == len(CODES)
    names = [r.name for r in RULES]
    assert len(set(names)) == len(names)
