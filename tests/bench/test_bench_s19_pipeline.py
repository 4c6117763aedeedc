"""S19 (bench/suite/claims/s19_pipeline.py): the pipeline variants really switch TF's
rewrites, compute the same batches, and give the ratios the tf.data lint rules quote."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.tf


def test_the_variants_set_the_options_they_are_named_after(tmp_path):
    pytest.importorskip("tensorflow")
    from tfperf.bench.suite.claims import s19_pipeline as s19

    paths = s19.write_records(tmp_path, 8, files=2)
    defaults = s19.build(paths, prefetch=False, parallel_map=False)
    opt = defaults.options().experimental_optimization
    assert opt.inject_prefetch is None and opt.map_parallelization is None  # TF's defaults
    off = s19.build(paths, prefetch=True, parallel_map=False, inject_prefetch=False)
    opt = off.options().experimental_optimization
    assert opt.inject_prefetch is False and opt.map_parallelization is None
    off = s19.build(paths, prefetch=False, parallel_map=False, map_parallelization=False)
    assert off.options().experimental_optimization.map_parallelization is False
    first = [b.numpy().tolist() for b, _ in defaults]
    again = [b.numpy().tolist() for b, _ in off]
    assert first == again and len(first) == 1  # 8 images, one batch, the same pixels


def test_s19_measures_every_variant_and_the_lint_ratios():
    pytest.importorskip("tensorflow")
    from tfperf.bench.suite.claims import s19_pipeline as s19
    from tfperf.bench.suite.runner import run_suite
    from tfperf.bench.suite.verdict import NOT_MEASURED

    (claim,) = run_suite(quick=True, only=["S19"]).claims
    assert claim.verdict != NOT_MEASURED, claim.reason
    names = {v["name"] for v in claim.to_dict()["variants"]}
    assert {s19.NONE, s19.DEFAULTS, s19.PREFETCH_DEFAULTS, s19.NO_INJECT, s19.NO_MAP_PAR,
            s19.RECIPE, s19.RECIPE_OFF} <= names
    assert all(v["equivalent"] is not False for v in claim.to_dict()["variants"])
    assert set(claim.details["epoch_s_accelerator_like_step"]) == set(
        claim.details["epoch_s"])
    assert set(claim.details["lint_accelerator_like_step"]) == set(claim.details["lint"])
    lint = claim.details["lint"]
    assert set(lint) == {"no_prefetch_over_prefetch_defaults",
                         "no_prefetch_over_prefetch_without_injection",
                         "sequential_map_over_recipe_defaults",
                         "sequential_map_over_recipe_without_map_parallelization",
                         "nothing_over_recipe_both_off"}
    assert all(v is not None and v > 0 for v in lint.values())
