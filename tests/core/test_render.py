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


def test_a_notebook_finding_in_github_and_sarif_says_its_cell_and_points_at_no_json_line():
    # stop 44: `lint --format github` on a notebook gave line=3 (the cell's line 3) with no
    # cell: GitHub pins that on line 3 of the .ipynb's JSON, and SARIF's region did the same
    f = _finding(location=Location("n.ipynb", 4, 4, end_line=4, cell=3))
    gh = findings_github([f])
    assert gh.startswith("::warning file=n.ipynb,title=") and "line=" not in gh, gh
    assert gh.split("::")[2].startswith("cell 3, line 4:5: TFP101"), gh
    res = json.loads(findings_sarif([f]))["runs"][0]["results"][0]
    assert "region" not in res["locations"][0]["physicalLocation"], res
    assert res["properties"] == {"cell": 3, "line": 4, "column": 5}
    assert res["message"]["text"].startswith("cell 3, line 4:5: ")
    # a .py finding keeps its line and region
    assert "line=3" in findings_github([_finding()])


def test_github_annotation_escapes_its_properties():
    """`,` ends a workflow command's property and `:` its properties: a finding in
    `data,v2/x:y.py` was pinned on a file named `data`."""
    gh = findings_github([_finding(location=Location("data,v2/x:y.py", 3, 4))])
    assert gh.startswith("::warning file=data%2Cv2/x%3Ay.py,line=3,col=5,"), gh
    assert ",title=TFP101 python-loop::TFP101 loop over tensor" in gh
    assert findings_github([_finding()]).startswith("::warning file=a.py,line=3,")  # twin


def test_tables_align():
    t = text_table(["name", "n"], [["a", 1], ["bbb", 22]], align="lr")
    lines = t.splitlines()
    assert lines[2] == "a      1" and lines[3] == "bbb   22"
    md = markdown_table(["a|b", "n"], [["x", 1]], align="lr")
    assert md.splitlines()[1] == "| --- | ---: |" and "a\\|b" in md


def test_worst_status_orders_fail_first():
    assert worst([Status.PASS, Status.FAIL, Status.WARN]) is Status.FAIL
    assert worst([Status.SKIP, Status.PASS]) is Status.PASS
