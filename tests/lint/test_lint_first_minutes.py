"""Defects a new user meets in the first ten minutes: configuration, cache placement, --fix."""

from __future__ import annotations

import os
import stat
import sys
import types
from pathlib import Path

import pytest

from tfperf.cli import main
from tfperf.core import files
from tfperf.lint import config

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

LOOP = ("import tensorflow as tf\n"
        "def f(x):\n"
        "    acc = tf.zeros([4])\n"
        "    for i in range(x.shape[0]):\n"
        "        acc += x[i]\n"
        "    return acc\n")
FIXED_LOOP_LINE = "    acc += tf.reduce_sum(x, axis=0)\n"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


# ------------------------------------------------------------------ reading pyproject.toml


def test_without_tomllib_the_backport_is_used(tmp_path, monkeypatch):
    # Python 3.10 has no tomllib; tomli (a declared dependency there) reads the file.
    write(tmp_path / "pyproject.toml", '[tool.tfperf.lint]\nignore = ["TFP101"]\n')
    backport = types.ModuleType("tomli")
    backport.loads = tomllib.loads  # type: ignore[attr-defined]
    backport.TOMLDecodeError = tomllib.TOMLDecodeError  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "tomllib", None)
    monkeypatch.setitem(sys.modules, "tomli", backport)
    assert config.load_config([str(tmp_path)]).ignore == ["TFP101"]


def test_without_any_toml_reader_the_error_says_what_to_install(tmp_path, monkeypatch, capsys):
    write(tmp_path / "pyproject.toml", '[tool.tfperf.lint]\nignore = ["TFP101"]\n')
    write(tmp_path / "m.py", "x = 1\n")
    monkeypatch.setitem(sys.modules, "tomllib", None)
    monkeypatch.setitem(sys.modules, "tomli", None)
    assert main(["lint", "--no-cache", str(tmp_path / "m.py")]) == 2
    err = capsys.readouterr().err
    assert "tomli" in err and "Traceback" not in err


def test_a_dependency_on_tfperf_does_not_make_a_config_root(tmp_path, capsys):
    # The outer project configures tfperf; the inner one only depends on it.
    write(tmp_path / "pyproject.toml", '[tool.tfperf.lint]\nignore = ["TFP102"]\n')
    inner = tmp_path / "app"
    write(inner / "pyproject.toml", '[project]\nname = "app"\ndependencies = ["tfperf>=0.1"]\n')
    code = write(inner / "m.py", LOOP)
    assert config.find_pyproject(code) == tmp_path / "pyproject.toml"
    main(["lint", "--no-cache", "--format", "concise", str(code)])
    assert "TFP102" not in capsys.readouterr().out


def test_a_tool_tfperf_table_in_any_header_form_is_found(tmp_path):
    for header in ("[tool.tfperf.lint]", "[ tool.tfperf ]", "[tool.tfperf]"):
        write(tmp_path / "pyproject.toml", f"{header}\n")
        assert config.find_pyproject(tmp_path) == tmp_path / "pyproject.toml"
    write(tmp_path / "pyproject.toml", '[tool.tfperfx]\n# tfperf\n')
    assert config.find_pyproject(tmp_path) is None


# ------------------------------------------------------------------ where the cache goes


def test_outside_any_project_the_cache_goes_to_the_user_cache_dir(tmp_path, monkeypatch):
    work, elsewhere, xdg = tmp_path / "loose", tmp_path / "cwd", tmp_path / "xdg"
    code = write(work / "m.py", LOOP)
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.setenv("XDG_CACHE_HOME", str(xdg))
    if files.project_root(code) is not None:
        pytest.skip("the temporary directory lies inside a project here")
    main(["lint", str(code)])
    assert not (elsewhere / ".tfperf_cache").exists()
    assert not (work / ".tfperf_cache").exists()
    assert list((xdg / "tfperf" / "lint" / "packs").glob("*.jsonl"))


def test_in_a_project_the_cache_is_marked_for_git_and_backups(tmp_path, monkeypatch):
    write(tmp_path / "pyproject.toml", '[project]\nname = "p"\n')
    code = write(tmp_path / "src" / "m.py", LOOP)
    monkeypatch.chdir(tmp_path / "src")
    main(["lint", str(code)])
    top = tmp_path / ".tfperf_cache"
    assert list((top / "lint" / "packs").glob("*.jsonl"))
    assert (top / ".gitignore").read_text().splitlines()[-1] == "*"
    assert (top / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f068")


# ------------------------------------------------------------------ --fix writes safely


def _fix(path: Path) -> None:
    assert main(["lint", "--no-cache", "--fix", "--unsafe-fixes", str(path)]) in (0, 1)


def test_fix_keeps_the_file_mode(tmp_path):
    code = write(tmp_path / "m.py", LOOP)
    os.chmod(code, 0o751)
    _fix(code)
    assert FIXED_LOOP_LINE in code.read_text()
    assert stat.S_IMODE(code.stat().st_mode) == 0o751


def test_fix_follows_a_symlink_to_the_real_file(tmp_path):
    real = write(tmp_path / "real" / "m.py", LOOP)
    link = tmp_path / "link.py"
    link.symlink_to(real)
    _fix(link)
    assert link.is_symlink() and link.resolve() == real.resolve()
    assert FIXED_LOOP_LINE in real.read_text()


def test_fix_leaves_no_temporary_file_and_keeps_the_bom(tmp_path):
    code = tmp_path / "m.py"
    code.write_bytes(b"\xef\xbb\xbf" + LOOP.encode())
    _fix(code)
    data = code.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf") and FIXED_LOOP_LINE.encode() in data
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.py"]


def test_a_failed_write_leaves_the_file_whole(tmp_path, monkeypatch):
    code = write(tmp_path / "m.py", "old\n")

    def refuse(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError):
        files.write_text_atomically(code, "new\n")
    assert code.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.py"]
