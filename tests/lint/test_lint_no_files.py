"""A folder with no Python in it (a mistyped path, data only, everything gitignored) is not
clean code: lint says it read nothing, as ruff warns, and still exits 0."""

from __future__ import annotations

from pathlib import Path

from tfperf.cli import main


def test_a_folder_without_python_says_so(tmp_path: Path, capsys):
    (tmp_path / "data.csv").write_text("a,b\n1,2\n")
    (tmp_path / "README.txt").write_text("hello\n")
    assert main(["lint", "--no-cache", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    assert "0 findings in 0 files; no Python file or notebook under the paths given" in err


def test_a_folder_with_clean_python_is_just_clean(tmp_path: Path, capsys):
    (tmp_path / "ok.py").write_text("import tensorflow as tf\nx = tf.ones([3])\n")
    assert main(["lint", "--no-cache", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    assert "0 findings in 1 file." in err and "no Python file" not in err
