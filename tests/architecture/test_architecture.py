"""The shape of ``src/tfperf``: no import circles, no private names across modules, and every
lint rule code cited outside the linter is a real rule."""

from __future__ import annotations

import re

import import_graph as g

from tfperf.lint import registry

# Circles and private imports being removed by work in progress; each must still exist, so
# the lists cannot go stale: delete an entry when it is gone.
PENDING: list[list[str]] = []
PENDING_PRIVATE: list[str] = []


def test_no_import_circle_in_the_package():
    found = g.cycles(g.graph())
    assert [c for c in found if c not in PENDING] == []
    assert [c for c in PENDING if c not in found] == [], "a pending circle is gone: delete it"


def test_the_circle_finder_finds_a_circle(tmp_path):
    pkg = tmp_path / "tfperf"
    (pkg / "a").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a" / "__init__.py").write_text("")
    (pkg / "a" / "x.py").write_text("from tfperf.a import y\n")
    (pkg / "a" / "y.py").write_text("def f():\n    from . import z\n")  # deferred still counts
    (pkg / "a" / "z.py").write_text("import tfperf.a.x\n")
    (pkg / "a" / "w.py").write_text("from tfperf.a.x import something\n")
    assert g.cycles(g.graph(tmp_path)) == [["tfperf.a.x", "tfperf.a.y", "tfperf.a.z"]]


def test_no_private_name_is_imported_from_another_module():
    crossing = [f"{i.importer} imports {i.module}.{i.name}"
                for i in g.imported_names()
                if i.module.startswith("tfperf") and i.name.startswith("_")
                and not i.name.startswith("__")]
    assert [c for c in crossing if c not in PENDING_PRIVATE] == []
    assert [c for c in PENDING_PRIVATE if c not in crossing] == [], "gone: delete it"


def test_rule_codes_cited_outside_the_linter_exist():
    known = {r.code for r in registry.rule_classes()} | set(registry.ENGINE_CODES)
    cited = {}
    for name, path in g.modules().items():
        if name.startswith("tfperf.lint."):
            continue
        for code in re.findall(r"\bTFP\d{3}\b", path.read_text(encoding="utf-8")):
            cited.setdefault(code, name)
    assert cited, "expected profile's advice to cite lint rules"
    assert {code: where for code, where in cited.items() if code not in known} == {}


# A rule asks the questions it shares with other rules of the project model
# (`tfperf.lint.analysis`, `tfperf.analysis`), not of another rule's module (stop 46: TFP314's
# tape, training and op-count questions and its walk from a parameter to its callers' values
# moved there). The imports between rule modules still waiting for that move; a subclass
# of another rule (TFP111 of TFP110) is no shared helper and stays. Delete an entry when gone.
PENDING_RULE_IMPORTS: list[str] = [
    "tfp102_loop_accumulation imports tfp111_model_call_per_step.network",
    "tfp110_predict_per_step imports tfp105_model_call_per_example.tfp105_reports",
    "tfp111_model_call_per_step imports tfp110_predict_per_step.PredictPerStep",
    "tfp111_model_call_per_step imports tfp306_eager_training_step.eager_step_names",
    "tfp111_model_call_per_step imports tfp306_eager_training_step.loop_runs_eager_step",
    "tfp114_map_fn_of_batched_op imports tfp106_map_fn_per_example.MAP_FN_CALLS",
    "tfp114_map_fn_of_batched_op imports tfp106_map_fn_per_example.mapped_function",
    "tfp114_map_fn_of_batched_op imports tfp106_map_fn_per_example.passed_functions",
    "tfp114_map_fn_of_batched_op imports tfp106_map_fn_per_example.reports_mapped",
    "tfp114_map_fn_of_batched_op imports tfp106_map_fn_per_example.signature_blocks",
    "tfp114_map_fn_of_batched_op imports tfp106_map_fn_per_example.vectorized_alternative",
    "tfp602_sequential_map imports tfp601_missing_prefetch.autotune",
    "tfp611_parse_per_record imports tfp603_elementwise_map_before_batch.ELEMENTWISE",
]


def _rule_to_rule_imports() -> set[str]:
    prefix = "tfperf.lint.rules."
    return {f"{i.importer[len(prefix):]} imports {i.module[len(prefix):]}.{i.name}"
            for i in g.imported_names()
            if i.importer.startswith(prefix) and i.module.startswith(prefix)}


def test_rules_share_helpers_through_the_project_model():
    found = _rule_to_rule_imports()
    assert sorted(found - set(PENDING_RULE_IMPORTS)) == [], \
        "a rule imports another rule's helper: move it to tfperf/lint/analysis/"
    assert sorted(set(PENDING_RULE_IMPORTS) - found) == [], "gone: delete it"


def test_tfp314_asks_the_project_model():
    # Its questions live in lint/analysis (eager_steps, receivers, callers), one copy each.
    from tfperf.lint.analysis import callers, eager_steps, receivers
    from tfperf.lint.rules import tfp306_eager_training_step as tfp306
    from tfperf.lint.rules import tfp310_eager_ops_per_step as tfp310
    from tfperf.lint.rules import tfp314_keras_call_in_eager_step as tfp314

    assert tfp314.project_instance is receivers.project_instance
    assert tfp314.dispatches is eager_steps.dispatches
    assert tfp306.trains is tfp314.trains is eager_steps.trains
    assert tfp306.is_tape_with is eager_steps.is_tape_with
    assert tfp310.MANY_OPS == eager_steps.MANY_OPS and tfp310.NOT_OPS is eager_steps.NOT_OPS
    assert callable(callers.passed_values)
    assert not any(name.startswith("tfperf.lint.rules") and name != "tfperf.lint.rules"
                   for name in g.graph().get("tfperf.lint.rules.tfp314_keras_call_in_eager_step",
                                             ()))
