"""Probes are found by discovery, and a probe that fails reads "could not look" everywhere."""

from __future__ import annotations

import json
import sys
import textwrap

import pytest

from tfperf.doctor import probe as probe_mod
from tfperf.doctor.checks import run_checks
from tfperf.doctor.facts import Facts
from tfperf.doctor.gather import gather
from tfperf.doctor.probe import GatherOptions, Probe, ProbeError, discover
from tfperf.doctor.report import report_json, report_markdown, report_text

REAL_PROBES = {"system", "packages", "environment", "pci", "driver", "cuda_toolkit",
               "libraries", "tf_runtime", "devices", "workers"}


def test_the_real_probes_are_discovered_by_module_name():
    found = {p.name: p for p in discover()}
    assert set(found) == REAL_PROBES  # helper modules (nvml, runner, tf_child...) are not
    assert found["tf_runtime"].stage == "slow" and found["system"].stage == "local"
    assert found["libraries"].reads_local_facts
    assert all(p.summary for p in found.values())


@pytest.fixture
def probe_package(tmp_path, monkeypatch):
    """A package of probes written on the fly, importable as ``newprobes``."""
    pkg = tmp_path / "newprobes"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield pkg
    for name in [m for m in sys.modules if m == "newprobes" or m.startswith("newprobes.")]:
        del sys.modules[name]


def test_a_new_probe_is_one_module_gathered_and_reported(probe_package):
    (probe_package / "thermals.py").write_text(textwrap.dedent('''
        """GPU temperatures (a probe added by a newcomer)."""
        STAGE = "slow"

        def probe(options, earlier):
            """The GPUs' temperatures."""
            return {"gpu_celsius": 61, "os": "linux"}
    '''))
    (probe_package / "_helper.py").write_text("def probe(options, earlier):\n    return {}\n")
    (probe_package / "util.py").write_text("X = 1\n")  # no probe(): a helper, not a probe
    probes = discover("newprobes")
    assert [p.name for p in probes] == ["thermals"]
    facts = gather(GatherOptions(), probes=probes)
    assert facts.os == "linux"  # a Facts field lands in Facts
    assert facts.extra == {"thermals": {"gpu_celsius": 61}}  # anything else under its name
    text = report_text(facts, [])
    assert "thermals" in text and "gpu_celsius=61" in text
    assert json.loads(report_json(facts, []))["facts"]["extra"]["thermals"] == {"gpu_celsius": 61}
    assert "gpu_celsius=61" in report_markdown(facts, [])


def test_a_malformed_probe_fails_loudly(probe_package):
    (probe_package / "bad.py").write_text('STAGE = "sometimes"\ndef probe(o, e):\n    return {}\n')
    with pytest.raises(ProbeError, match="STAGE"):
        discover("newprobes")


def _raises(options, earlier):
    raise RuntimeError("the probe broke")


@pytest.mark.parametrize("name", ["driver", "system", "cuda_toolkit", "thermals"])
def test_a_failed_probe_reads_could_not_look_in_every_format(name):
    ok = [Probe("packages", lambda o, e: {"tf_packages": {"tensorflow": "2.21.0"}})]
    facts = gather(GatherOptions(), probes=[*ok, Probe(name, _raises, "slow")])
    assert facts.probe_errors == {name: "RuntimeError: the probe broke"}
    said = f"could not look: {name}: RuntimeError: the probe broke"
    findings = run_checks(facts)
    assert said in report_text(facts, findings)
    assert said in report_markdown(facts, findings)
    doc = json.loads(report_json(facts, findings))
    assert doc["could_not_look"] == [{"probe": name, "error": "RuntimeError: the probe broke"}]


def test_checks_standing_on_a_failed_probe_say_so_instead_of_judging():
    facts = Facts(tf_packages={"tensorflow": "2.21.0"},
                  probe_errors={"driver": "OSError: boom"})
    by_id = {f.code: f for f in run_checks(facts)}
    driver = by_id["doctor.driver"]
    assert driver.status.value == "skip"
    assert "could not look: driver: OSError: boom" in driver.message
    assert "could not look" not in by_id["doctor.pip_wheels"].message  # packages did run


def test_unknown_facts_are_written_one_way():
    # Nothing gathered at all: every line says the same thing.
    text = report_text(Facts(), [])
    assert "?" not in text and "–" not in text and "unknown" not in text
    assert "could not look" in text


def test_probe_declaration_rules():
    with pytest.raises(ProbeError):
        Probe("x", _raises, "local", reads_local_facts=True)
    assert probe_mod.probe_of(probe_mod) is None  # no probe() function: not a probe
