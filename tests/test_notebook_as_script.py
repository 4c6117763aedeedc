"""A notebook handed to a command that runs Python files: one line that says what it is and
what to use instead (the magics, or nbconvert), exit 2, nothing run. Its JSON parses as a
Python dict, so `tfperf profile nb.ipynb` used to run it and report the user's "error"
(NameError: name 'null' is not defined); `tune nb.ipynb:f` said "no such file"."""

from __future__ import annotations

from pathlib import Path

import pytest

from tfperf.cli import main

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "examples" / "notebooks" / "case_study.ipynb"


@pytest.mark.parametrize("argv", [["profile", "{nb}"], ["profile", "{nb}:f"],
                                  ["bench", "{nb}"], ["tune", "{nb}:f"]])
def test_a_notebook_is_not_run_as_a_script(argv, tmp_path: Path, capsys):
    nb = tmp_path / "my exp.ipynb"
    nb.write_bytes(NOTEBOOK.read_bytes())
    assert main([a.format(nb=nb) for a in argv]) == 2
    out = capsys.readouterr()
    assert out.out == ""
    (line,) = out.err.strip().splitlines()
    assert f"{nb}: a Jupyter notebook, not a Python file" in line and "%%tfprofile" in line
    assert nb.read_bytes() == NOTEBOOK.read_bytes()


def test_lint_still_reads_notebooks(tmp_path: Path, capsys):
    nb = tmp_path / "my exp.ipynb"
    nb.write_bytes(NOTEBOOK.read_bytes())
    assert main(["lint", "--no-cache", str(nb)]) in (0, 1)
    assert "a Jupyter notebook" not in capsys.readouterr().err
