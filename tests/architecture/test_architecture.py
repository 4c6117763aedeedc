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
