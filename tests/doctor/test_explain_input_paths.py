"""`tfperf explain` on a log it cannot reach: one line and exit 2, never a traceback and
never the path's own words explained as a log (stop 45: `explain --file locked/x.log` ended
in a PermissionError traceback, and `explain locked/x.log` said "nothing wrong")."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tfperf.cli import main


@pytest.fixture
def out_of_reach(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A log inside a folder without access: stat() of it fails with EACCES, as it does for
    a user who is not root (tests often run as root, where chmod 000 changes nothing)."""
    log = tmp_path / "locked" / "train.out"
    log.parent.mkdir()
    log.write_text("E tensorflow: Could not load dynamic library 'libcudnn.so.8'\n")
    real_stat = os.stat

    def stat(path, *args, **kwargs):
        if os.path.dirname(os.path.abspath(os.fsdecode(path))) == str(log.parent):
            raise PermissionError(13, "Permission denied", os.fsdecode(path))
        return real_stat(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", stat)
    monkeypatch.chdir(tmp_path)
    return log.relative_to(tmp_path)


@pytest.mark.parametrize("argv", [["--file"], []], ids=["--file", "as-text"])
def test_a_log_out_of_reach_is_one_line_and_exit_2(out_of_reach, argv, capsys):
    status = main(["explain", *argv, str(out_of_reach)])
    err = capsys.readouterr().err
    assert status == 2, err
    assert err.strip() == f"tfperf explain: error: cannot reach {out_of_reach}: Permission denied"


def test_one_word_that_is_no_path_is_still_log_text(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    # read as the log's text: since stop 46 (issue 31) a bare 'Killed' is the shell's report of
    # SIGKILL, read as the crash it is (exit 1), not "not recognised"
    assert main(["explain", "Killed"]) == 1
    assert "Killed" in capsys.readouterr().out
