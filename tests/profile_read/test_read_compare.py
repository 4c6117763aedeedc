"""`tfperf profile --compare A B`."""

from __future__ import annotations

import json

from tfperf.cli import main
from tfperf.profile.read.compare import compare


def test_compare_puts_steps_and_moved_ops_side_by_side(captures, capture_of):
    c = compare(str(captures / "graph"), str(captures / "xla"))
    assert c.exit_status == 0
    rows = {name: (a, b) for name, a, b in c.rows}
    a, b = rows["step (median)"]
    assert a and b and c.speedup == a / b
    moved = {o.name: o for o in c.ops}
    assert moved["MatMul"].a_s > 0 and moved["MatMul"].b_s == 0  # graph MatMul, gone in B
    assert moved["MatMul.2"].b_s > 0 and moved["MatMul.2"].a_s == 0  # the compiled dot
    assert abs(c.ops[0].delta_s) >= abs(c.ops[-1].delta_s)


def test_compare_with_a_broken_side_names_the_cause_and_exits_1(corpus, captures, capsys):
    broken, _ = corpus["truncated copy"]
    assert main(["profile", "--compare", str(captures / "graph"), str(broken), "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["diagnosis"]["b"][0]["data"]["cause"] == "truncated"
