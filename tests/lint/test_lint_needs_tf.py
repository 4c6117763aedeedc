"""Rule.needs_tf: the engine skips such a rule where neither TensorFlow nor Keras is imported,
so the rule itself must report nothing there."""

from __future__ import annotations

import ast
import re

import pytest

from tfperf.lint import registry
from tfperf.lint.engine import Dispatcher
from tfperf.lint.semantic import Context

_TF_IMPORT = re.compile(r"^\s*(import|from)\s+(tensorflow|keras|tf_keras)\b.*$", re.M)
NEEDS_TF = [r for r in registry.all_rules() if r.needs_tf]


def _without_tf(source: str) -> str:
    return _TF_IMPORT.sub("pass", source)


def test_the_frequent_per_node_rules_are_gated():
    codes = {r.code for r in NEEDS_TF}
    assert {"TFP101", "TFP102", "TFP104", "TFP201"} <= codes


@pytest.mark.parametrize("rule", NEEDS_TF, ids=lambda r: r.code)
def test_a_needs_tf_rule_reports_nothing_without_tf_imports(rule):
    checked = 0
    for example in rule.invalid:
        source = _without_tf(example.source)
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        ctx = Context(tree, source, "example.py")
        if ctx.imports_tf:
            continue  # a `tf` the example gets another way: not this test's case
        # The rule called directly on every node it asks for, past the engine's gate.
        found = [f for t in rule.node_types for n in ctx.nodes_of(t)
                 for f in rule.check(n, ctx)]
        if rule.wants_module():
            found += list(rule.check_module(ctx))
        assert found == [], (rule.code, source)
        checked += 1
    assert checked, f"{rule.code}: no invalid example left to check without its imports"


def test_the_engine_skips_needs_tf_rules_only_where_tf_is_not_imported():
    calls: list[str] = []
    rule = next(r for r in NEEDS_TF if r.code == "TFP102")
    original = rule.check

    def spy(node, ctx):
        calls.append(ctx.path)
        return original(node, ctx)

    rule.check = spy  # type: ignore[method-assign]
    try:
        d = Dispatcher([rule])
        d.run(ast.parse("x = 1\nfor i in range(3):\n    x = x + i\n"), "", "plain.py")
        src = "import tensorflow as tf\nx = tf.zeros(3)\n"
        d.run(ast.parse(src), src, "tf.py")
    finally:
        del rule.check
    assert calls and set(calls) == {"tf.py"}
