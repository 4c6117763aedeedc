"""The gate's judging on saved-run documents built here: statistics, verdict rules, rendering.

No TensorFlow: the samples are drawn with a seeded NumPy generator, so each case is exact.
"""

from __future__ import annotations

import json

import jsonschema
import numpy as np
import pytest

from tfperf.bench.gate import (
    IMPROVEMENT,
    INCONCLUSIVE,
    NO_CHANGE,
    NOT_COMPARABLE,
    NOT_MEASURED,
    REGRESSION,
    compare_runs,
)
from tfperf.bench.gate_report import render_gate
from tfperf.bench.record import RecordError, check_record, load_record
from tfperf.bench.significance import bootstrap_ratio, mann_whitney_u

FP = {"cpu": "Test CPU", "cpu_count": 2, "arch": "x86_64", "system": "Linux",
      "python": "3.11.7", "tensorflow": "2.21.0", "gpus": [], "cuda": None, "cudnn": None,
      "driver": None, "tfperf": "0.1"}


def _times(median: float, n: int = 30, noise: float = 0.05, seed: int = 0) -> list[float]:
    rng = np.random.default_rng(seed)
    # right-skewed like real timings: a floor plus exponential jitter
    return list(median * (1 - noise / 2) + rng.exponential(median * noise / 1.4, n))


def _counters(traces=1, host_syncs=0, eager_ops=4, graph_ops=6, sites=None):
    return {"traces": traces, "host_syncs": host_syncs, "eager_ops": eager_ops,
            "graph_ops": graph_ops, "xla_compilations": 0, "steady_calls": 2,
            "sites": sites or {}, "unavailable": {}}


def _run(times, counters=None, fp=None, name="step", yardstick=None, **extra):
    med = float(np.median(times)) if times else None
    return check_record({"yardstick_s": yardstick,
        "format": "tfperf-bench-run", "version": 1, "created": "2026-12-04T04:00:00Z",
        "label": None, "file": "b.py", "counters_only": False, "fingerprint": fp or dict(FP),
        "machine_key": "k", "settings": {},
        "machine": {"platform": "Linux", "python": "3.11.7", "cpu": "Test CPU", "cpu_count": 2,
                    "tensorflow": "2.21.0", "gpus": []},
        "variants": [{"name": name, "status": "ok", "times_s": times, "number": 10,
                      "stats": {"median_s": med}, "first_call_s": 0.01,
                      "counters": counters if counters is not None else _counters(),
                      "error": None, **extra}]})


def test_bootstrap_interval_covers_one_for_the_same_distribution():
    iv = bootstrap_ratio(_times(1e-3, seed=1), _times(1e-3, seed=2))
    assert iv.low < 1.0 < iv.high
    assert 0 < iv.detectable < 0.1


def test_bootstrap_interval_excludes_one_for_a_30_percent_slowdown():
    iv = bootstrap_ratio(_times(1e-3, seed=1), _times(1.3e-3, seed=2))
    assert 1.2 < iv.ratio < 1.4 and iv.low > 1.15


def test_bootstrap_is_deterministic_and_rejects_bad_samples():
    a, b = _times(1e-3, seed=3), _times(1.1e-3, seed=4)
    assert bootstrap_ratio(a, b) == bootstrap_ratio(a, b)
    with pytest.raises(ValueError):
        bootstrap_ratio([1.0], [1.0, 2.0])
    with pytest.raises(ValueError):
        bootstrap_ratio([1.0, 0.0], [1.0, 2.0])


def test_mann_whitney_matches_the_textbook_values():
    # complete separation of 3 against 3: U = 0; normal approximation with continuity
    # correction gives z = (4.5 - 0.5) / sqrt(5.25) and p = 2 * (1 - Phi(z)) = 0.0809
    u, p = mann_whitney_u([1, 2, 3], [4, 5, 6])
    assert u == 0 and p == pytest.approx(0.0809, abs=1e-3)
    u, p = mann_whitney_u([1, 2, 3, 4], [1, 2, 3, 4])
    assert u == 8 and p == pytest.approx(1.0)
    _, p = mann_whitney_u(_times(1.3e-3, seed=5), _times(1e-3, seed=6))
    assert p < 1e-6


def test_planted_30_percent_slowdown_is_a_regression():
    res = compare_runs(_run(_times(1e-3, seed=1)), _run(_times(1.3e-3, seed=2)))
    (t,) = res.times
    assert t.verdict == REGRESSION and res.exit_status == 1
    assert t.low > 1 and "slower" in t.reason and "threshold +10%" in t.reason
    assert "at 99%" in t.reason
    strict = compare_runs(_run(_times(1e-3, seed=1)), _run(_times(1.3e-3, seed=2)),
                          confidence=0.999).times[0]
    assert "at 99.9%" in strict.reason and strict.high - strict.low > t.high - t.low
    assert "step: time" in res.regressions[0]


def test_same_distribution_is_no_change_and_exit_zero():
    for seed in range(10):
        res = compare_runs(_run(_times(1e-3, seed=seed)), _run(_times(1e-3, seed=seed + 100)))
        assert res.times[0].verdict == NO_CHANGE, res.times[0].reason
        assert res.exit_status == 0


def test_a_significant_change_below_the_threshold_is_not_a_regression():
    base, cur = _times(1e-3, n=200, noise=0.01, seed=1), _times(1.05e-3, n=200, noise=0.01,
                                                                 seed=2)
    res = compare_runs(_run(base), _run(cur), fail_over=0.10)
    t = res.times[0]
    assert t.low > 1 and t.verdict == NO_CHANGE and "within the ±10% threshold" in t.reason
    assert compare_runs(_run(base), _run(cur), fail_over=0.02).times[0].verdict == REGRESSION


def test_faster_is_an_improvement_and_never_fails():
    res = compare_runs(_run(_times(1.3e-3, seed=1)), _run(_times(1e-3, seed=2)))
    assert res.times[0].verdict == IMPROVEMENT and res.exit_status == 0


def test_another_machine_makes_times_not_comparable_but_counters_still_count():
    other = dict(FP, cpu="Another CPU", cpu_count=64)
    base = _run(_times(1e-3, seed=1), fp=other)
    cur = _run(_times(2e-3, seed=2), counters=_counters(host_syncs=2))
    res = compare_runs(base, cur)
    t = res.times[0]
    assert t.verdict == NOT_COMPARABLE and "Another CPU" in t.reason and t.ratio is None
    assert [c.counter for c in res.counters] == ["host_syncs"] and res.exit_status == 1
    text = render_gate(res, "text")
    assert "not comparable" in text and "counters are still compared" in text


def test_tfperf_version_alone_keeps_times_comparable():
    base = _run(_times(1e-3, seed=1), fp=dict(FP, tfperf="0.0.1"))
    assert compare_runs(base, _run(_times(1e-3, seed=2))).comparable


def test_counter_changes_name_the_counter_both_values_and_the_line():
    sites_before = {"traces": [{"function": "core", "path": "b.py", "line": 12, "count": 1,
                                "causes": []}]}
    sites_after = {"traces": [{"function": "core", "path": "b.py", "line": 12, "count": 3,
                               "causes": [{"argument": "scale", "kind": "python_value",
                                           "retraces": 2, "examples": ["1.0", "2.0"]}]}]}
    base = _run(_times(1e-3), counters=_counters(traces=1, sites=sites_before))
    cur = _run(_times(1e-3, seed=9), counters=_counters(traces=3, eager_ops=2,
                                                        sites=sites_after))
    res = compare_runs(base, cur, counters_only=True)
    assert res.times == []
    by = {c.counter: c for c in res.counters}
    assert by["traces"].verdict == REGRESSION and (by["traces"].before, by["traces"].after) == (
        1, 3)
    assert by["eager_ops"].verdict == IMPROVEMENT
    line = by["traces"].lines[0]
    assert (line["path"], line["line"], line["before"], line["after"]) == ("b.py", 12, 1, 3)
    assert "argument `scale`" in line["detail"] and "python value" in line["detail"]
    gh = render_gate(res, "github")
    assert "::error file=b.py,line=12,title=tfperf%3A traces regression::" in gh
    assert "::notice" in gh  # the improvement
    md = render_gate(res, "markdown")
    assert "| step | traces | 1 | 3 | ✗ regression |" in md
    doc = json.loads(render_gate(res, "json"))
    assert doc["exit_status"] == 1 and doc["counters"][0]["counter"] in ("traces", "eager_ops")


def test_too_few_rounds_is_not_measured_and_a_counter_not_visible_is_a_note():
    base = _run([1e-3, 1e-3], counters=_counters(graph_ops=None))
    res = compare_runs(base, _run(_times(1e-3)))
    assert res.times[0].verdict == NOT_MEASURED and "too few rounds" in res.times[0].reason
    assert any("graph_ops not visible in the baseline" in n for n in res.notes)
    assert res.exit_status == 0


def test_a_variant_that_fails_now_fails_the_gate():
    cur = _run([], error="ValueError: broken")
    res = compare_runs(_run(_times(1e-3)), cur)
    assert res.exit_status == 1 and "fails now" in res.failures[0]


def test_bad_saved_runs_are_refused_in_words(tmp_path):
    p = tmp_path / "x.json"
    p.write_text("{not json")
    with pytest.raises(RecordError, match="not JSON"):
        load_record(p)
    p.write_text(json.dumps({"machine": {}, "variants": []}))
    with pytest.raises(RecordError, match="not a tfperf bench run"):
        load_record(p)
    with pytest.raises(RecordError, match="no such file"):
        load_record(tmp_path / "missing.json")
    bad = _run(_times(1e-3))
    bad["variants"][0]["times_s"] = ["fast"]
    with pytest.raises(RecordError, match="times_s"):
        check_record(bad)


def test_the_schema_accepts_what_the_tests_build():
    from tfperf.bench.schema import RUN_SCHEMA

    doc = _run(_times(1e-3))
    doc["variants"][0]["stats"] = {"median_s": 1e-3, "iqr_s": 1e-4, "min_s": 9e-4,
                                   "mean_s": 1e-3, "runs": 30}
    jsonschema.validate(doc, RUN_SCHEMA)
    doc["variants"][0]["counters"]["traces"] = -1
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, RUN_SCHEMA)


def test_docs_show_the_saved_run_schema_the_code_uses():
    import re
    from pathlib import Path

    from tfperf.bench.schema import RUN_SCHEMA

    text = (Path(__file__).resolve().parents[2] / "docs" / "regression-gate.md").read_text()
    blocks = [json.loads(b) for b in re.findall(r"```json\n(.+?)\n```", text, re.S)]
    assert blocks == [RUN_SCHEMA]


def test_block_bootstrap_widens_the_interval_when_load_lasts_several_rounds():
    from tfperf.bench.significance import block_indices, bootstrap_paired

    idx = block_indices(np.random.default_rng(0), 10, 4)
    assert idx.shape == (4, 10)
    # each row is runs of consecutive (circular) indices of length round(sqrt(10)) = 3
    assert all((row[1] - row[0]) % 10 == 1 and (row[2] - row[1]) % 10 == 1 for row in idx)
    # load that comes and goes over several rounds: AR(1) noise on the per-round ratio
    for seed in range(3):
        g = np.random.default_rng(seed)
        e = np.zeros(64)
        for i in range(1, 64):
            e[i] = 0.9 * e[i - 1] + 0.02 * g.normal()
        base = np.full(64, 1e-3)
        iv = bootstrap_paired(base, base * np.exp(e))
        rng = np.random.default_rng(0)
        iid = np.median(e[rng.integers(0, 64, (2000, 64))], axis=1)
        iid_lo, iid_hi = np.exp(np.quantile(iid, [0.005, 0.995]))
        assert (iv.high - iv.low) > 1.3 * (iid_hi - iid_lo)


def test_a_run_slowed_by_load_is_judged_by_its_yardstick_with_strict():
    base_t, yard_b = _times(1e-3, seed=1), _times(2e-4, seed=3)
    # the whole current run met 3x load: the step and the yardstick slowed alike
    cur_t, yard_c = [3 * t for t in _times(1e-3, seed=2)], [3 * t for t in _times(2e-4, seed=4)]
    res = compare_runs(_run(base_t, yardstick=yard_b), _run(cur_t, yardstick=yard_c),
                       strict=True)
    t = res.times[0]
    assert t.verdict == NO_CHANGE and "yardstick" in t.method and t.raw_ratio > 2.5
    assert t.machine_changes  # judged anyway (--strict), and the report says so
    assert "judged although the machine changed" in render_gate(res, "text")
    # a real slowdown of the step alone still shows
    slow = [1.3 * t for t in cur_t]
    res = compare_runs(_run(base_t, yardstick=yard_b), _run(slow, yardstick=yard_c),
                       strict=True)
    assert res.times[0].verdict == REGRESSION
    # with a GPU in the fingerprint the yardstick (CPU work) is not used
    gpu = dict(FP, gpus=["NVIDIA H200"])
    res = compare_runs(_run(base_t, yardstick=yard_b, fp=gpu),
                       _run(cur_t, yardstick=yard_c, fp=gpu))
    assert res.times[0].verdict == REGRESSION and res.times[0].method == "ratio of medians"
    # a variant's own yardstick (the pytest fixture's) is used before the run's
    base, cur = _run(base_t, yardstick_s=yard_b), _run(cur_t, yardstick_s=yard_c)
    assert base["yardstick_s"] is None and base["variants"][0]["yardstick_s"] == yard_b
    assert compare_runs(base, cur, strict=True).times[0].verdict == NO_CHANGE
    # rounds and yardstick of different lengths: raw times
    res = compare_runs(_run(base_t, yardstick=yard_b[:-1]), _run(cur_t, yardstick=yard_c))
    assert res.times[0].method == "ratio of medians"


def _cells(text: str, variant: str = "step") -> dict[str, str]:
    """The time table's row of ``variant`` as header → cell (columns are 2+ spaces apart)."""
    import re

    lines = text.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("variant "))
    headers = re.split(r"\s{2,}", lines[head].strip())
    row = next(line for line in lines[head + 1:] if line.startswith(variant + " "))
    return dict(zip(headers, re.split(r"\s{2,}", row.strip()), strict=True))


def test_the_table_says_what_its_legend_says_raw_and_normalised_ratios_apart():
    """Issue 24: 20.4 ms → 35.6 ms read "0.713×" under a legend "median now / median baseline":
    the figure was divided by the yardstick. Each ratio now has its own labelled column."""
    base_t, yard_b = _times(20.4e-3, seed=1), _times(2e-4, seed=3)
    # the machine ran the yardstick 2.45x slower; the step 1.745x: normalised, 0.713x
    cur_t = [t * 35.6 / 20.4 for t in base_t]
    yard_c = [y * (35.6 / 20.4) / 0.713 for y in yard_b]
    res = compare_runs(_run(base_t, yardstick=yard_b), _run(cur_t, yardstick=yard_c),
                       strict=True)
    t = res.times[0]
    text = render_gate(res, "text")
    cells = _cells(text)
    medians = t.current_median_s / t.baseline_median_s
    assert cells["now/baseline"] == f"{medians:.3f}×" == "1.745×"
    assert cells["yardstick now/baseline"] == "2.448×"
    assert cells["÷ yardstick [99% interval]"].startswith("0.713× [")
    assert "now/baseline: median now / median baseline of the raw times" in text
    assert "÷ yardstick: median now / median baseline once each round is divided" in text
    md = render_gate(res, "markdown")
    assert "| now/baseline | yardstick now/baseline | ÷ yardstick [99% interval] |" in md
    assert "1.745×" in md and "- now/baseline: median now / median baseline" in md
    doc = json.loads(render_gate(res, "json"))["times"][0]
    assert doc["raw_ratio"] == pytest.approx(1.745, abs=1e-3)
    assert doc["normalised_ratio"] == doc["ratio"] == pytest.approx(0.713, abs=1e-3)
    assert doc["yardstick_ratio"] == pytest.approx(2.448, abs=1e-3)


def test_without_a_yardstick_the_one_ratio_is_the_medians_and_interleaved_is_per_round():
    res = compare_runs(_run(_times(1e-3, seed=1)), _run(_times(1.3e-3, seed=2)))
    cells = _cells(render_gate(res, "text"))
    assert cells["now/baseline [99% interval]"].startswith(f"{res.times[0].raw_ratio:.3f}× [")
    assert "yardstick now/baseline" not in cells
    paired = compare_runs(_run(_times(1e-3, seed=1)), _run(_times(1.3e-3, seed=2)),
                          paired=True)
    text = render_gate(paired, "text")
    cells = _cells(text)
    assert set(cells) >= {"now/baseline", "per-round ratio [99% interval]"}
    assert "per-round ratio: the median over rounds of now / baseline" in text
    assert json.loads(render_gate(paired, "json"))["times"][0]["normalised_ratio"] is None


def _loaded(run: dict, load: float) -> dict:
    run["machine"]["load_average_1min"] = load  # what the run recorded at its end
    return run


def test_separate_runs_on_a_loaded_machine_are_inconclusive_not_a_regression():
    """Issue 24: at load 7 on 2 CPUs, self-comparisons of separate runs failed the gate. A
    planted 1.3x (what load did to the step between the runs) with the runs' own load record
    saying the machine was oversubscribed: inconclusive, exit 0; --strict judges it."""
    base = _loaded(_run(_times(1e-3, seed=1)), 7.0)
    cur = _loaded(_run(_times(1.3e-3, seed=2)), 6.5)
    res = compare_runs(base, cur)
    (t,) = res.times
    assert t.verdict == INCONCLUSIVE and t.strict_verdict == REGRESSION
    assert res.exit_status == 0 and res.regressions == []
    assert t.machine_changes == ["load 7.0 on 2 CPUs in the baseline run, above 3",
                                 "load 6.5 on 2 CPUs now, above 3"]
    assert t.reason.startswith("inconclusive: the machine changed (load 7.0 on 2 CPUs")
    text = render_gate(res, "text")
    assert text.splitlines()[0].startswith("INCONCLUSIVE")
    assert "warning: step: time inconclusive, the machine changed between the runs" in text
    assert "--strict" in text
    assert "::warning title=tfperf%3A time inconclusive::" in render_gate(res, "github")
    doc = json.loads(render_gate(res, "json"))
    assert doc["exit_status"] == 0 and doc["times"][0]["verdict"] == "inconclusive"
    strict = compare_runs(base, cur, strict=True)
    assert strict.times[0].verdict == REGRESSION and strict.exit_status == 1
    # a quiet machine (load within the CPUs + 1) keeps the verdict decisive
    quiet = compare_runs(_loaded(_run(_times(1e-3, seed=1)), 0.8),
                         _loaded(_run(_times(1.3e-3, seed=2)), 1.2))
    assert quiet.times[0].verdict == REGRESSION and quiet.times[0].machine_changes == []


def test_yardstick_drift_or_spread_between_separate_runs_is_inconclusive():
    base_t, yard_b = _times(1e-3, seed=1), _times(2e-4, seed=3)
    # load slowed the step 1.5x but the yardstick only 1.2x: normalised 1.25x, a false alarm
    # by the figures alone; the yardstick moved by more than the 10 % threshold
    cur_t, yard_c = [1.5 * t for t in _times(1e-3, seed=2)], [1.2 * y for y in yard_b]
    res = compare_runs(_run(base_t, yardstick=yard_b), _run(cur_t, yardstick=yard_c))
    t = res.times[0]
    assert t.strict_verdict == REGRESSION and t.verdict == INCONCLUSIVE
    assert res.exit_status == 0
    assert t.machine_changes == ["the yardstick ran 1.20× its baseline time"]
    # the yardstick's own rounds spread far beyond the threshold in one run: load came and
    # went during it
    rng = np.random.default_rng(7)
    jumpy = list(np.array(yard_b) * rng.choice([1.0, 2.0], len(yard_b)))
    jumpy[:2] = [yard_b[0], 2 * yard_b[1]]
    res = compare_runs(_run(base_t, yardstick=yard_b),
                       _run([1.3 * t for t in base_t], yardstick=jumpy))
    assert res.times[0].verdict == INCONCLUSIVE
    assert any("the yardstick's rounds spread" in c and c.endswith("now")
               for c in res.times[0].machine_changes)
    # a steady machine: a planted 1.3x with the yardstick unchanged is still caught
    res = compare_runs(_run(base_t, yardstick=yard_b),
                       _run([1.3 * t for t in _times(1e-3, seed=2)], yardstick=yard_b))
    assert res.times[0].verdict == REGRESSION and res.times[0].machine_changes == []


def test_counters_still_fail_when_times_are_inconclusive():
    base = _loaded(_run(_times(1e-3, seed=1)), 7.0)
    cur = _loaded(_run(_times(1e-3, seed=2), counters=_counters(host_syncs=3)), 7.0)
    res = compare_runs(base, cur)
    assert res.times[0].verdict == INCONCLUSIVE
    assert res.exit_status == 1 and res.regressions == ["step: host_syncs 0 → 3 (3 more)"]
    assert render_gate(res, "text").startswith("REGRESSION: 1 found")


def test_interleaved_runs_stay_decisive_whatever_the_load():
    base = _loaded(_run(_times(1e-3, seed=1)), 7.0)
    cur = _loaded(_run(_times(1.3e-3, seed=2)), 7.0)
    res = compare_runs(base, cur, paired=True)
    assert res.times[0].verdict == REGRESSION and res.times[0].machine_changes == []
    assert res.exit_status == 1


def test_too_few_rounds_on_a_loaded_machine_says_the_machine_changed():
    """A busy runner can leave a small budget too few rounds: the time is "not measured",
    never a failure, and the load that likely caused it is said, not dropped."""
    base = _loaded(_run(_times(1e-3, seed=1)), 7.0)
    cur = _loaded(_run(_times(1e-3, n=2, seed=2)), 6.5)
    res = compare_runs(base, cur)
    (t,) = res.times
    assert t.verdict == NOT_MEASURED and res.exit_status == 0
    assert t.machine_changes[0] == "load 7.0 on 2 CPUs in the baseline run, above 3"
    text = render_gate(res, "text")
    assert "warning: step: time not measured (too few rounds to test (30 in the baseline, " \
        "2 now; 3 needed)), and the machine changed between the runs (load 7.0" in text
    # a quiet machine: too few rounds, and no load warning
    quiet = compare_runs(_loaded(_run(_times(1e-3, seed=1)), 0.8),
                         _loaded(_run(_times(1e-3, n=2, seed=2)), 1.2))
    assert quiet.times[0].verdict == NOT_MEASURED and quiet.times[0].machine_changes == []
    assert "warning" not in render_gate(quiet, "text")


def test_the_headline_never_says_no_regression_of_times_it_did_not_compare():
    other = dict(FP, cpu="Another CPU", cpu_count=64)
    res = compare_runs(_run(_times(1e-3, seed=1), fp=other), _run(_times(5e-3, seed=2)))
    assert res.exit_status == 0  # counters unchanged; the 5x time is not judged
    for fmt in ("text", "markdown"):
        head = render_gate(res, fmt).splitlines()[0]
        assert "no counter regression" in head and "times not compared" in head, head
    same = compare_runs(_run(_times(1e-3, seed=1)), _run(_times(1e-3, seed=2)))
    assert render_gate(same, "text").splitlines()[0].startswith("no regression against")
