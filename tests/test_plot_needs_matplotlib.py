"""`--plot` without matplotlib (the base install plus TensorFlow, no `plot` extra) is a bad
input like any other: one line naming the extra and exit 2 before anything runs. `profile`
used to run the whole program and end in a ModuleNotFoundError traceback; `bench` and `tune`
spent their budget first.

matplotlib is made unimportable the way Python itself blocks a module: ``sys.modules[name] =
None`` makes ``import matplotlib`` raise ModuleNotFoundError and ``find_spec`` answer None."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tfperf.cli import main
from user_files import BENCH_FILE as FUNCS


@pytest.fixture
def no_matplotlib(monkeypatch):
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)


@pytest.mark.parametrize("argv", [
    ["profile", "{f}:plain", "--inputs", "{f}:make", "--steps", "1", "--no-capture"],
    ["bench", "{f}", "--budget", "1"],
    ["tune", "{f}:plain", "--budget", "1"],
])
def test_plot_without_matplotlib_is_one_line_and_exit_2(argv, tmp_path: Path, capsys,
                                                        no_matplotlib):
    f = tmp_path / "funcs.py"
    f.write_text(FUNCS)
    out = tmp_path / "plot.png"
    assert main([a.format(f=f) for a in argv] + ["--plot", str(out)]) == 2
    captured = capsys.readouterr()
    assert "--plot needs matplotlib: pip install 'tfperf[plot]'" in captured.err
    assert "Traceback" not in captured.err + captured.out
    assert captured.out == ""  # nothing ran: no report, no variant timed
    assert not out.exists() and f.read_text() == FUNCS


def test_memory_view_still_says_plot_is_not_its_option(tmp_path: Path, capsys, no_matplotlib):
    f = tmp_path / "funcs.py"
    f.write_text(FUNCS)
    assert main(["profile", f"{f}:plain", "--inputs", f"{f}:make", "--memory",
                 "--plot", str(tmp_path / "p.png")]) == 2
    assert "the memory view prints its timeline" in capsys.readouterr().err
