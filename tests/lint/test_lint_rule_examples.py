"""Every registered rule's VALID and INVALID examples, through the real registry and engine.

One test per example, with ids such as ``TFP201-INVALID-3`` (examples numbered from 1 in
the order the rule lists them), so a failure names the example.
"""

from __future__ import annotations

import ast

import pytest

from tfperf.lint import registry
from tfperf.lint.engine import lint_source
from tfperf.lint.fix import fix_source, parses
from tfperf.lint.rule import DOC_SECTIONS, Invalid, Valid, example_source
from tfperf.lint.target import NEWEST_KNOWN, parse_target

RULES = registry.all_rules()
CODES = [r.code for r in RULES]
ENGINE = {"TFP000", "TFP001"}
VALID = [pytest.param(r, ex, id=f"{r.code}-VALID-{i}")
         for r in RULES for i, ex in enumerate(r.valid, 1)]
INVALID = [pytest.param(r, ex, id=f"{r.code}-INVALID-{i}")
           for r in RULES for i, ex in enumerate(r.invalid, 1)]


def _lint(source, rule, tf_version=None):
    # An example without tf_version is a project without a pin: linted at the newest TF,
    # unless its own APIs are TF 1.x / multi-backend Keras (lint/code_target.py).
    low, high = parse_target(tf_version) if tf_version else (NEWEST_KNOWN, NEWEST_KNOWN)
    return lint_source(source, "example.py", rules=[rule], tf_version=low, tf_newest=high,
                       infer_target=not tf_version)


def _lint_project(example, rule, root):
    """An example written as a small project (``files``) or a notebook, linted as the
    command line lints a folder: every module summarised, the cross-module checks run."""
    import json

    from tfperf.lint.session import LintRequest, run

    for name, text in example.files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    if example.notebook:
        cells = [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                  "source": text} for text in example.cells]
        main = root / "example.ipynb"
        main.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4,
                                    "nbformat_minor": 5}))
    else:
        main = root / "example.py"
        main.write_text(example.source)
    out = run(LintRequest(paths=[str(root)], select=[rule.code], cache=False,
                          tf_version=example.tf_version or ".".join(map(str, NEWEST_KNOWN))))
    return out.findings, str(main)


def _is_project(example):
    return bool(example.files) or example.notebook


def test_the_catalogue_is_not_empty_and_has_the_reference_rules():
    assert {"TFP101", "TFP102", "TFP103"} <= set(CODES)


def test_examples_are_written_as_code_and_dedented():
    # The Fixit convention: the first line break and the common indentation go.
    assert Valid("""
        import tensorflow as tf
        x = 1
    """).source == "import tensorflow as tf\nx = 1\n"
    ex = Invalid("""
        if x:
            y = 2
    """, fixed="""
        y = 2
    """)
    assert ex.source == "if x:\n    y = 2\n" and ex.fixed == "y = 2\n"
    assert example_source("a = 1\n") == "a = 1\n"


@pytest.mark.parametrize("rule", RULES, ids=CODES)
def test_rule_declares_enough_examples_and_docs(rule):
    assert len(rule.valid) >= 3, f"{rule.code}: needs at least 3 VALID examples"
    assert len(rule.invalid) >= 3, f"{rule.code}: needs at least 3 INVALID examples"
    assert all(type(ex) is Valid for ex in rule.valid)
    assert all(type(ex) is Invalid for ex in rule.invalid)
    assert registry.doc_problems(type(rule)) == []
    for section in DOC_SECTIONS:
        assert f"## {section}" in rule.docs
    if any(ex.fixed is not None for ex in rule.invalid):
        assert rule.fixable, f"{rule.code} has fixed examples but says it is not fixable"


@pytest.mark.parametrize(("rule", "example"), VALID)
def test_valid_example_gives_no_finding(rule, example, tmp_path):
    ast.parse(example.source)  # an example that does not parse proves nothing
    if _is_project(example):
        findings, _ = _lint_project(example, rule, tmp_path)
    else:
        findings = _lint(example.source, rule, example.tf_version)
    assert [f for f in findings if f.code in ENGINE] == [], "the example broke the engine"
    got = [(f.location.line, f.message) for f in findings if f.code == rule.code]
    assert got == [], f"{rule.code} fired on a VALID example:\n{example.source}"


@pytest.mark.parametrize(("rule", "example"), INVALID)
def test_invalid_example_gives_findings_and_its_fix(rule, example, tmp_path):
    ast.parse(example.source)
    if _is_project(example):
        findings, main = _lint_project(example, rule, tmp_path)
        assert [f for f in findings if f.code in ENGINE] == [], "the example broke the engine"
        mine = [f for f in findings if f.code == rule.code]
        assert mine, f"{rule.code} did not fire on an INVALID example:\n{example.source}"
        if example.count is not None:
            assert len(mine) == example.count, f"{len(mine)} findings, not {example.count}"
        if example.lines is not None:
            assert tuple(f.location.line for f in mine if f.location.path == main) \
                == example.lines
        assert example.fixed is None, "fixes are checked on single-module examples"
        return
    findings = _lint(example.source, rule, example.tf_version)
    assert [f for f in findings if f.code in ENGINE] == [], "the example broke the engine"
    mine = [f for f in findings if f.code == rule.code]
    assert mine, f"{rule.code} did not fire on an INVALID example:\n{example.source}"
    if example.count is not None:
        assert len(mine) == example.count, f"{len(mine)} findings, not {example.count}"
    if example.lines is not None:
        assert tuple(f.location.line for f in mine) == example.lines
    for f in mine:
        assert f.name == rule.name and f.location.path == "example.py"
    if example.fixed is None:
        assert all(f.fix is None for f in mine), "the rule offers an unexpected fix"
        return
    result = fix_source(example.source, lambda s: _lint(s, rule, example.tf_version),
                        unsafe=True)
    assert result.error is None
    assert result.source == example.fixed, f"the fix gave\n{result.source}"
    assert parses(result.source)
    again = fix_source(result.source, lambda s: _lint(s, rule, example.tf_version),
                       unsafe=True)
    assert again.source == result.source and again.applied == 0, "fix is not idempotent"


def test_rule_codes_and_names_are_unique():
    assert len(set(CODES)) == len(CODES)
    names = [r.name for r in RULES]
    assert len(set(names)) == len(names)


def test_known_limitations_come_after_the_required_sections():
    from tfperf.lint.rule import Rule

    class Misordered(Rule):
        code, name, message, claims = "TFP990", "misordered", "m", ("S1",)
        node_types = (ast.Call,)
        docs = ("## What it does\n## Why is this bad?\n## Example\n## Use instead\n"
                "## Known limitations\n## Fix safety\n")

    assert any("out of order" in p for p in registry.doc_problems(Misordered))
    Misordered.docs = Misordered.docs.replace("## Known limitations\n## Fix safety\n",
                                              "## Fix safety\n## Known limitations\n")
    assert registry.doc_problems(Misordered) == []
