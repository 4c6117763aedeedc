"""Equivalence of outputs: structure, shape, dtype, values with dtype-aware tolerances."""

from __future__ import annotations

import numpy as np

from tfperf.bench.equivalence import compare_outputs


def test_reordered_float32_sum_is_equivalent_but_a_real_difference_is_not():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 500)).astype(np.float32)
    a = x.sum(axis=1)
    b = np.array([sum(row[::-1].tolist()) for row in x], dtype=np.float32)
    ok = compare_outputs(a, b)
    assert ok.equivalent and 0 < ok.max_abs_err < 1e-3
    bad = compare_outputs(a, b + 0.1)
    assert not bad.equivalent and "exceeds tolerance" in bad.reason


def test_float16_gets_a_looser_tolerance_than_float32():
    a = np.linspace(1, 2, 100).astype(np.float32)
    b = a * (1 + 2e-3)
    assert not compare_outputs(a, b).equivalent
    assert compare_outputs(a.astype(np.float16), b.astype(np.float16)).equivalent


def test_shape_dtype_and_structure_mismatches_are_named():
    a = np.zeros((2, 3), np.float32)
    assert "shape [3, 2]" in compare_outputs(a, a.T).reason
    assert "dtype float64" in compare_outputs(a, a.astype(np.float64)).reason
    assert "keys" in compare_outputs({"x": a}, {"y": a}).reason
    assert "2 items vs 1" in compare_outputs([a, a], [a]).reason
    nested = compare_outputs({"x": [a, (a, 1)]}, {"x": [a, (a, 1)]})
    assert nested.equivalent and nested.max_abs_err == 0


def test_integers_are_exact_and_nans_must_match_in_place():
    assert not compare_outputs(np.array([1, 2]), np.array([1, 3])).equivalent
    nan = np.array([1.0, np.nan])
    assert compare_outputs(nan, nan.copy()).equivalent
    assert "NaN" in compare_outputs(nan, np.array([np.nan, 1.0])).reason


def test_docs_show_the_schemas_the_code_uses():
    import json
    import re
    from pathlib import Path

    from tfperf.bench.schema import BENCH_SCHEMA, SUITE_SCHEMA

    text = (Path(__file__).resolve().parents[2] / "docs" / "bench.md").read_text()
    blocks = [json.loads(b) for b in re.findall(r"```json\n(.+?)\n```", text, re.S)]
    assert blocks == [BENCH_SCHEMA, SUITE_SCHEMA]
