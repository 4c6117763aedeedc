"""compare(): interleaved timing, failures that do not stop the others, equivalence."""

from __future__ import annotations

import json

import jsonschema
import pytest

from tfperf.bench.schema import BENCH_SCHEMA

pytestmark = pytest.mark.tf


def test_axis_bug_is_flagged_not_equivalent_and_fails_the_run(case_result):
    bug = case_result["axis_bug"]
    assert bug.equivalent is False
    assert "shape [2, 30]" in bug.equivalence_note and "[2, 16]" in bug.equivalence_note
    assert case_result.exit_status == 1
    assert "NOT EQUIVALENT" in case_result.table()


def test_correct_variants_are_equivalent_with_small_errors(case_result):
    for name in ("vectorised", "einsum"):
        v = case_result[name]
        assert v.equivalent is True, v.equivalence_note
        assert v.max_abs_err is not None and v.max_rel_err < 1e-4


def test_raising_and_runaway_variants_do_not_stop_the_others(case_result):
    raises, runaway = case_result["raises"], case_result["runaway"]
    assert raises.status == "error" and "ValueError: this variant is broken" in raises.error
    assert runaway.status == "timeout" and "2 s" in runaway.error
    for name in ("loop", "vectorised", "einsum", "axis_bug"):
        v = case_result[name]
        assert v.status == "ok" and v.measurement.runs >= 3, name
    # The runaway variant would sleep 60 s: the limit cut it short.
    assert case_result.settings["wall_s"] < 30


def test_slow_variant_runs_once_and_is_reported_as_such(case_result):
    slow = case_result["slow"]
    assert slow.status == "slow" and slow.measurement.runs == 1
    assert slow.median_s == pytest.approx(0.8, rel=0.5)
    assert slow.ratio_method.startswith("ratio of medians")
    assert any("ran once" in n for n in slow.notes)


def test_ratios_are_medians_of_per_round_ratios(case_result):
    import statistics

    loop, vec = case_result["loop"], case_result["vectorised"]
    assert loop.ratio_to_baseline == 1.0
    assert vec.ratio_method == "median of per-round ratios"
    per_round = [v / b for v, b in zip(vec.measurement.times, loop.measurement.times,
                                        strict=True)]
    assert vec.ratio_to_baseline == pytest.approx(statistics.median(per_round))
    assert vec.speedup > 1  # whole-tensor ops beat 60 Python-level iterations
    assert case_result["raises"].ratio_to_baseline is None


def test_first_call_is_reported_for_every_variant_that_ran(case_result):
    for v in case_result.variants:
        if v.status in ("ok", "slow"):
            assert v.first_call_s is not None and v.first_call_s > 0


def test_json_matches_the_documented_schema(case_result):
    doc = json.loads(case_result.to_json())
    jsonschema.validate(doc, BENCH_SCHEMA)
    assert doc["baseline"] == "loop"
    names = [v["name"] for v in doc["variants"]]
    assert names == ["loop", "vectorised", "raises", "runaway", "einsum", "axis_bug", "slow"]
    raises = doc["variants"][2]
    assert raises["median_s"] is None and raises["error"]


def test_schema_rejects_a_variant_without_its_error_field(case_result):
    doc = json.loads(case_result.to_json())
    del doc["variants"][0]["error"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, BENCH_SCHEMA)


def test_markdown_and_cpu_memory_is_not_guessed(case_result):
    md = case_result.to_markdown()
    assert md.count("\n| ") >= 8 and "| vectorised |" in md
    mem = case_result["vectorised"].memory
    assert mem["peak_bytes"] is None and "--isolate" in mem["source"]


def test_baseline_must_be_a_variant():
    from tfperf.bench import compare

    with pytest.raises(ValueError, match="baseline"):
        compare({"a": lambda: 1}, baseline="b")
