"""`tfperf profile --read` on a capture path it cannot reach is bad input (one line, exit 2)
that says so: stop 45 found a file in a folder without access reported as "no such file or
folder", and a logdir that cannot be listed read as one without a capture (exit 1).

Permissions are simulated (tests often run as root, where chmod 000 changes nothing)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tfperf.cli import main


def _deny(monkeypatch: pytest.MonkeyPatch, name: str, target: Path) -> None:
    real = getattr(os, name)

    def denied(path, *args, **kwargs):
        if os.path.abspath(os.fsdecode(path)) == str(target):
            raise PermissionError(13, "Permission denied", os.fsdecode(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, name, denied)


def test_a_capture_in_a_folder_without_access(tmp_path, monkeypatch, capsys):
    capture = tmp_path / "locked" / "host.xplane.pb"
    capture.parent.mkdir()
    capture.write_bytes(b"")
    _deny(monkeypatch, "stat", capture)
    assert main(["profile", "--read", str(capture)]) == 2
    assert capsys.readouterr().err.strip() == (
        f"tfperf profile: error: {capture}: cannot reach it: Permission denied")


def test_a_logdir_that_cannot_be_listed(tmp_path, monkeypatch, capsys):
    logdir = tmp_path / "logs"
    logdir.mkdir()
    _deny(monkeypatch, "listdir", logdir)
    _deny(monkeypatch, "scandir", logdir)
    assert main(["profile", "--read", str(logdir)]) == 2
    assert capsys.readouterr().err.strip() == (
        f"tfperf profile: error: {logdir}: cannot list it: Permission denied")


def test_a_missing_capture_is_still_missing(tmp_path, capsys):
    assert main(["profile", "--read", str(tmp_path / "nope.xplane.pb")]) == 2
    assert "nope.xplane.pb: no such file or folder" in capsys.readouterr().err


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_named_pipe_is_not_opened(tmp_path, capsys):
    pipe = tmp_path / "host.xplane.pb"
    os.mkfifo(pipe)
    assert main(["profile", "--read", str(pipe)]) == 2
    assert capsys.readouterr().err.strip() == (
        f"tfperf profile: error: {pipe}: not a file or folder (a named pipe, socket or device)")
