"""The article suite: verdict rule, claim discovery, docs/claims.md coverage, and a claim that
refuses a verdict when one of its variants raised or computed something else."""

from __future__ import annotations

import re
import sys
import textwrap
from pathlib import Path

import pytest

from tfperf.bench.suite.verdict import (
    DIRECTION_HOLDS,
    DOES_NOT_HOLD,
    HOLDS,
    NOT_APPLICABLE,
    NOT_MEASURED,
    Claim,
    Figure,
    judge,
)

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_the_five_verdicts_and_their_reasons():
    fig = Figure("~4×", value=4.0, bound=4.0)
    assert judge(fig, 4.2, "× speedup", "tf.function over eager")[0] == HOLDS
    verdict, why = judge(fig, 3.1, "× speedup", "tf.function over eager")
    assert verdict == DIRECTION_HOLDS and "3.1×" in why and "4×" in why
    assert judge(fig, 1.02, "× speedup", "x")[0] == DOES_NOT_HOLD  # within the noise margin
    assert judge(fig, 0.7, "× speedup", "x")[0] == DOES_NOT_HOLD
    verdict, why = judge(fig, 3.0, "× speedup", "x", unavailable="no GPU: CPU only")
    assert verdict == NOT_APPLICABLE and why.startswith("no GPU") and "3×" in why
    verdict, why = judge(fig, 9.0, "× speedup", "x", failures=["'fast' error: ValueError: no"])
    assert verdict == NOT_MEASURED and "ValueError: no" in why
    assert judge(fig, None, "×", "x")[0] == NOT_MEASURED
    flat = Figure("O(1)", value=1.0, bound=2.0, higher=False, neutral=8.0)
    assert judge(flat, 1.1, "× time", "x")[0] == HOLDS
    assert judge(flat, 5.0, "× time", "x")[0] == DIRECTION_HOLDS
    assert judge(flat, 8.0, "× time", "x")[0] == DOES_NOT_HOLD
    no_figure = Figure("–")
    assert judge(no_figure, 1.5, "×", "x")[0] == HOLDS and no_figure.threshold == 1.05
    absolute = Figure("≈ 800 ms", value=800.0, directional=False)
    assert absolute.threshold is None and judge(absolute, 900.0, "ms", "x")[0] == NOT_APPLICABLE


def test_claim_json_lets_a_reader_recompute_the_verdict():
    fig = Figure("10²–10³×", value=(100.0, 1000.0), bound=100.0)
    c = Claim("S12", "loops", fig, 250.0, "× speedup", HOLDS, "…")
    d = c.to_dict()
    assert d["article_value"] == [100.0, 1000.0] and d["threshold"] == 100.0
    assert d["direction"] == "at least" and d["measured"] == 250.0
    with pytest.raises(ValueError):
        Claim("S1", "x", fig, None, "", "sort of", "…")


def test_every_claim_module_is_discovered_and_docs_claims_are_all_measured():
    from tfperf.bench.suite.runner import discover, measured_ids

    modules = discover()
    ids = {cid for m in modules for cid in m.claims}
    assert {"S4", "S9", "S20", "S11b", "S13b", "S22"} <= ids
    # Every claim docs/claims.md marks as measured by the suite has a module, and back.
    text = (DOCS / "claims.md").read_text()
    marked: set[str] = set()
    for row in re.findall(r"^\| (S\d+) \|.*\| suite \(([^)]*)\) \|$", text, re.M):
        marked |= {s.strip() for s in row[1].split(",")}
        assert row[0] in measured_ids(modules), f"{row[0]} is marked measured; no module"
    assert marked and marked <= ids, marked - ids
    assert ids <= marked, f"measured but not in docs/claims.md: {ids - marked}"


def _package(tmp_path: Path, name: str, modules: dict[str, str]) -> str:
    pkg = tmp_path / name
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for mod, text in modules.items():
        (pkg / f"{mod}.py").write_text(textwrap.dedent(text))
    return name


DUMMY = '''
    """S21: a dummy claim, found by discovery alone."""
    from tfperf.bench.suite.verdict import Figure

    CLAIMS = ("S21",)

    def run(ctx):
        return [ctx.claim("S21", "dummy", Figure("2×", value=2.0, bound=2.0), 2.5,
                          "× speedup", "a figure given by hand")]
'''


@pytest.mark.tf
def test_a_claim_module_is_added_by_dropping_it_in_the_package(tmp_path, monkeypatch):
    from tfperf.bench.suite.runner import SuiteError, discover, run_suite

    monkeypatch.syspath_prepend(str(tmp_path))
    name = _package(tmp_path, "dummy_claims", {"s21_dummy": DUMMY,
                                               "_helpers": "X = 1\n"})
    modules = discover(name)
    assert [m.claims for m in modules] == [("S21",)]
    suite = run_suite(quick=True, modules=modules)
    (claim,) = suite.claims
    assert claim.id == "S21" and claim.verdict == HOLDS and suite.exit_status == 0
    bad = _package(tmp_path, "bad_claims", {"s1_x": "def run(ctx):\n    return []\n"})
    with pytest.raises(SuiteError, match="declares CLAIMS"):
        discover(bad)
    for mod in [m for m in sys.modules if m.startswith(("dummy_claims", "bad_claims"))]:
        monkeypatch.delitem(sys.modules, mod)


@pytest.mark.tf
def test_a_raising_and_a_wrong_variant_make_a_real_claim_not_measured():
    import tensorflow as tf

    from tfperf.bench.suite.runner import run_suite

    def raises(x):
        raise ValueError("injected failure")

    def wrong(x):
        return tf.norm(x, axis=1) + 1.0

    suite = run_suite(quick=True, only=["S12"],
                      inject={"S12": {"raises": raises, "off by one": wrong}})
    (claim,) = suite.claims
    assert claim.verdict == NOT_MEASURED
    assert "ValueError: injected failure" in claim.reason
    assert "'off by one' disagrees" in claim.reason
    assert suite.exit_status == 1
    names = {v["name"]: v for v in claim.to_dict()["variants"]}
    assert names["raises"]["status"] == "error" and names["off by one"]["equivalent"] is False
    assert "not measured" in suite.table()
