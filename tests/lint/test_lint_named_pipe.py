"""A named pipe (or socket, device) called `*.py` under a linted folder is skipped with a
note, not opened: reading a FIFO waits for a writer, and `tfperf lint .` beside one never
ended (stop 45). The runs go through a child process so that a regression fails the test
at its time limit instead of hanging the suite."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")


def _lint(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(SRC), "XDG_CACHE_HOME": str(cwd / ".cache")}
    return subprocess.run([sys.executable, "-m", "tfperf", "lint", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def test_a_named_pipe_in_a_linted_folder_is_skipped_with_a_note(tmp_path):
    (tmp_path / "pkg").mkdir()
    os.mkfifo(tmp_path / "pkg" / "pipe.py")
    (tmp_path / "pkg" / "ok.py").write_text("x = 1\n")
    for target in ("pkg", "pkg/*.py"):
        proc = _lint(tmp_path, target)
        assert proc.returncode == 0, proc.stderr
        assert "pipe.py: not a regular file (a named pipe, socket or device), skipped" \
            in proc.stderr
        assert "0 findings in 1 file." in proc.stdout + proc.stderr


def test_nothing_but_a_named_pipe_is_an_error(tmp_path):
    os.mkfifo(tmp_path / "pipe.py")
    proc = _lint(tmp_path, ".")
    assert proc.returncode == 2
    assert "pipe.py: not a regular file" in proc.stderr
