"""Stop 41 review: malformed cell sources, nbformat 3 notebooks, Python-2 kernels."""

from __future__ import annotations

import json

import pytest

from tfperf.cli import main
from tfperf.lint import registry
from tfperf.lint.engine import Dispatcher
from tfperf.lint.result import RunOptions
from tfperf.lint.runner import lint_file

# A loop that TFP101 reports (one scalar read per element) in any notebook format.
LOOP = ("import tensorflow as tf\n"
        "x = tf.ones([8])\n"
        "acc = tf.zeros([])\n"
        "for i in range(x.shape[0]):\n"
        "    acc += x[i]\n")


def _write(tmp_path, notebook, name="n.ipynb"):
    p = tmp_path / name
    p.write_text(json.dumps(notebook, indent=1) + "\n")
    return p


def _v4(*sources, metadata=None):
    return {"cells": [{"cell_type": "code", "metadata": {}, "outputs": [],
                       "execution_count": None, "source": s} for s in sources],
            "metadata": metadata or {}, "nbformat": 4, "nbformat_minor": 5}


def _codes(result):
    return sorted((f.code, f.location.cell) for f in result.findings)


@pytest.mark.parametrize("source", [["y = 1\n", 5], ["y = 1\n", None], 7, {"a": 1}])
@pytest.mark.parametrize("options", [RunOptions(), RunOptions(fix=True, unsafe=True)])
def test_a_cell_whose_source_is_not_text_is_a_tfp000_not_a_crash(tmp_path, source, options):
    p = _write(tmp_path, _v4(LOOP, source))
    before = p.read_bytes()
    res = lint_file(p, Dispatcher(registry.all_rules()), options)
    bad = [f for f in res.findings if f.code == "TFP000"]
    assert [f.location.cell for f in bad] == [2]
    assert "source is not text" in bad[0].message
    assert "notebook" in bad[0].hint
    # The other cell is analysed: reported, or (with --unsafe-fixes) fixed.
    assert res.fixed or any(f.code != "TFP000" and f.location.cell == 1 for f in res.findings)
    if not options.fix:
        assert p.read_bytes() == before
    else:  # the odd cell is written back as it was
        assert json.loads(p.read_text())["cells"][1]["source"] == source


def test_the_cli_on_the_odd_notebook_exits_with_findings_not_a_traceback(tmp_path, capsys):
    p = _write(tmp_path, _v4("y = 1\n", ["z = 2\n", 5]))
    assert main(["lint", "--no-cache", "--unsafe-fixes", "--fix", str(p)]) == 1
    out = capsys.readouterr()
    assert "Traceback" not in out.err and "TFP000" in out.out


def test_each_distinct_hint_of_a_code_is_shown_once(tmp_path, capsys):
    # A broken cell and a cell that is not text: two TFP000s with two hints, both shown.
    p = _write(tmp_path, _v4("def f(:\n", ["z = 2\n", 5], "def g(:\n"))
    main(["lint", "--no-cache", str(p)])
    out = capsys.readouterr().out
    assert out.count("help:") == 2 and "a string or a list of strings" in out


def test_a_notebook_syntax_error_hint_speaks_of_cells_not_a_python_file(tmp_path):
    res = lint_file(_write(tmp_path, _v4("def f(:\n")), Dispatcher(registry.all_rules()))
    (f,) = res.findings
    assert "code cells" in f.hint and "reads the file as Python source" not in f.hint


def _v3(*inputs, worksheets=1, metadata=None):
    sheets = [{"cells": [{"cell_type": "code", "language": "python", "input": s,
                          "outputs": [], "metadata": {}} for s in inputs]}
              for _ in range(worksheets)]
    return {"worksheets": sheets, "metadata": metadata or {"name": ""},
            "nbformat": 3, "nbformat_minor": 0}


def test_nbformat3_cells_are_read_like_nbformat4_cells(tmp_path):
    v4 = lint_file(_write(tmp_path, _v4(LOOP), "v4.ipynb"), Dispatcher(registry.all_rules()))
    v3 = lint_file(_write(tmp_path, _v3(LOOP.splitlines(keepends=True)), "v3.ipynb"),
                   Dispatcher(registry.all_rules()))
    assert _codes(v4) and _codes(v3) == _codes(v4)


def test_nbformat3_reads_every_worksheet(tmp_path):
    nb = _v3("y = 1\n", worksheets=2)
    nb["worksheets"][1]["cells"][0]["input"] = LOOP
    res = lint_file(_write(tmp_path, nb), Dispatcher(registry.all_rules()))
    assert [c for _, c in _codes(res)] and all(c == 2 for _, c in _codes(res))


def test_nbformat3_fixes_are_written_to_the_input_field(tmp_path):
    fixable = LOOP  # TFP102's fix (unsafe)
    clean = lint_file(_write(tmp_path, _v4(fixable), "v4.ipynb"),
                      Dispatcher(registry.all_rules()), RunOptions(fix=True, unsafe=True))
    p = _write(tmp_path, _v3(fixable), "v3.ipynb")
    res = lint_file(p, Dispatcher(registry.all_rules()), RunOptions(fix=True, unsafe=True))
    assert clean.fixed and res.fixed == clean.fixed
    if clean.fixed:
        cell = json.loads(p.read_text())["worksheets"][0]["cells"][0]
        assert "source" not in cell and cell["input"] != fixable


PY2_CELL = "print 'start'\n" + LOOP + "print acc\n"


@pytest.mark.parametrize("metadata", [
    {"kernelspec": {"name": "python2", "display_name": "Python 2", "language": "python"}},
    {"language_info": {"name": "python", "version": "2.7.15"}},
])
def test_a_python2_kernel_notebook_is_read_as_python2(tmp_path, metadata):
    res = lint_file(_write(tmp_path, _v4(PY2_CELL, metadata=metadata)),
                    Dispatcher(registry.all_rules()))
    codes = _codes(res)
    assert codes and all(code != "TFP000" for code, _ in codes)
    assert any("Python 2" in n for n in res.notes)


def test_a_python3_kernel_notebook_still_reports_print_statements(tmp_path):
    meta = {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
            "language_info": {"name": "python", "version": "3.10.4"}}
    res = lint_file(_write(tmp_path, _v4(PY2_CELL, metadata=meta)),
                    Dispatcher(registry.all_rules()))
    assert [c for c, _ in _codes(res)] == ["TFP000"]


def test_a_python2_kernel_notebook_is_not_fixed_in_its_python2_cells(tmp_path):
    meta = {"kernelspec": {"name": "python2", "display_name": "Python 2", "language": "python"}}
    p = _write(tmp_path, _v4(PY2_CELL, metadata=meta))
    before = p.read_bytes()
    lint_file(p, Dispatcher(registry.all_rules()), RunOptions(fix=True, unsafe=True))
    assert json.loads(p.read_bytes())["cells"][0]["source"] \
        == json.loads(before)["cells"][0]["source"]
