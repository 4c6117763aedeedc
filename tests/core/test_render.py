import json

from tfperf.core.findings import Applicability, Edit, Finding, Fix, Location, Status, worst
from tfperf.core.render import (
    findings_github,
    findings_sarif,
    findings_text,
    markdown_table,
    text_table,
    to_json,
)


def _finding(**kw):
    base = dict(code="TFP101", name="python-loop", message="loop over tensor",
                location=Location("a.py", 3, 4, 3, 20), hint="use a reduction")
    base.update(kw)
    return Finding(**base)


def test_text_has_position_code_and_hint():
    out = findings_text([_finding()])
    assert out.splitlines()[0] == "a.py:3:5: TFP101 loop over tensor"
    assert "help: use a reduction" in out


def test_notebook_cell_is_part_of_position():
    f = _finding(location=Location("n.ipynb", 2, 0, cell=4))
    assert findings_text([f]).startswith("n.ipynb:cell 4:2:1: TFP101")


def test_json_round_trip_keeps_fix_edits():
    fix = Fix(Applicability.SAFE, (Edit(1, 0, 1, 3, "abc"),), "replace")
    data = json.loads(to_json([_finding(fix=fix)]))
    assert data[0]["fix"]["applicability"] == "safe"
    assert data[0]["fix"]["edits"][0]["content"] == "abc"
    assert data[0]["cell"] is None and data[0]["line"] == 3


def test_sarif_has_rule_and_region():
    sarif = json.loads(findings_sarif([_finding()], rules=[{"code": "TFP101", "name": "x"}]))
    res = sarif["runs"][0]["results"][0]
    assert sarif["version"] == "2.1.0"
    assert res["ruleIndex"] == 0
    assert res["locations"][0]["physicalLocation"]["region"]["startColumn"] == 5


def test_github_annotation_escapes_newlines():
    out = findings_github([_finding(message="a\nb", status=Status.FAIL)])
    assert out.startswith("::error file=a.py,line=3,col=5")
    assert "a%0Ab" in out


def test_tables_align():
    t = text_table(["name", "n"], [["a", 1], ["bbb", 22]], align="lr")
    lines = t.splitlines()
    assert lines[2] == "a      1" and lines[3] == "bbb   22"
    md = markdown_table(["a|b", "n"], [["x", 1]], align="lr")
    assert md.splitlines()[1] == "| --- | ---: |" and "a\\|b" in md


def test_worst_status_orders_fail_first():
    assert worst([Status.PASS, Status.FAIL, Status.WARN]) is Status.FAIL
    assert worst([Status.SKIP, Status.PASS]) is Status.PASS
