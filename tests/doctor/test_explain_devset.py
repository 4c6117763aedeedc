"""The development set of real logs: tfperf explain must name the cause the thread confirmed.

Goals (issue 12): the first cause is the confirmed one for at least 90 % of the logs, at least
95 % of the benign logs are "nothing wrong", and no log gets a wrong cause as its first answer
at severity failure. benchmarks/score_explain.py prints the same figures per category.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("score_explain",
                                               ROOT / "benchmarks" / "score_explain.py")
assert _spec and _spec.loader
score_explain = importlib.util.module_from_spec(_spec)
sys.modules["score_explain"] = score_explain  # dataclasses look their module up
_spec.loader.exec_module(score_explain)

INDEX_FIELDS = {"id", "split", "category", "expected", "source", "tf_version", "os", "install",
                "confirmed_by", "confirmation", "answer"}


@pytest.fixture(scope="module")
def outcomes():
    return score_explain.score("all")


def test_the_set_is_big_and_varied_enough():
    rows = score_explain.load_index()
    assert set(rows[0]) == INDEX_FIELDS
    assert len(rows) >= 120
    assert sum(r["expected"] == "none" for r in rows) >= 30
    assert len({r["id"] for r in rows}) == len(rows)
    assert len({r["source"] for r in rows}) == len(rows)  # one log per thread
    for r in rows:
        assert (score_explain.FIXTURES / f"{r['id']}.log").read_text(encoding="utf-8").strip()
        # issue threads; stops 44 to 46's own splits are public Q&A pages and blog posts
        pages = r["split"].startswith(("dev44", "dev45", "dev46"))  # the pages corpus
        assert r["source"].startswith(("https://", "http://") if pages
                                      else "https://github.com/"), r["id"]
        assert r["confirmation"] and r["confirmed_by"] in {
            "maintainer", "resolution", "reporter", "message"}, r["id"]
        assert r["category"] in score_explain.CATEGORIES
        assert r["split"] in score_explain.SPLITS, r["id"]
        assert (r["category"] == "benign") == (r["expected"] == "none"), r["id"]
    # issue 31: the long tail of import and runtime failures, at least 60 logs
    tail = [r for r in rows if r["split"] == "tail"]
    assert len(tail) >= 60, len(tail)
    assert {r["category"] for r in tail} >= {"install", "runtime", "gpu-runtime"}
    oses = {r["os"].split()[0] for r in rows}
    assert {"linux", "windows", "wsl", "macos"} <= oses
    installs = " ".join(r["install"] for r in rows)
    assert all(kind in installs for kind in ("pip", "conda", "docker"))
    versions = " ".join(r["tf_version"] for r in rows)
    assert all(v in versions for v in ("0.5", "1.", "2.1", "2.21"))


def test_goals_on_the_whole_set(outcomes):
    assert sum(o.right for o in outcomes) >= 0.90 * len(outcomes)
    benign = [o for o in outcomes if o.expected == "none"]
    assert sum(o.right for o in benign) >= 0.95 * len(benign)
    assert [o.id for o in outcomes if o.wrong_failure] == []
    assert [o.id for o in outcomes if o.unrecognised] == []


def test_every_expected_label_is_a_known_cause(outcomes):
    """A row's label, or the floor's reading of an error class (a crash whose confirmed cause is
    only 'versions that do not match' is answered by the floor, heldout5's scaden62)."""
    from tfperf.doctor.explain_floor import label_of
    from tfperf.doctor.knowledge import label_rows
    from tfperf.doctor.knowledge.tables import read_table

    derived = {r["label"] for r in read_table("derived_causes.csv")}  # a reading's own cause
    known = set(label_rows()) | derived | {label_of(r["class"])
                                           for r in read_table("tf_error_classes.csv")}
    assert {o.expected for o in outcomes if o.expected != "none"} <= known
    checked = {r["id"] for r in score_explain.load_index() if r["answer"]}
    floor_expected = {o.id for o in outcomes if o.expected not in label_rows()
                      and o.expected not in derived and o.expected != "none"}
    # a row is the answer, the floor the exception: scaden62's crash and reticulate65's
    # AttributeError (Python without streams under R: the floor's ranked causes name it); from
    # round 8 on, the floor answers a class by its ranked causes, and such a log's expected
    # answer names the cause and fix its first explanation must give (the answer column)
    assert len(floor_expected - checked) <= 2, floor_expected - checked
