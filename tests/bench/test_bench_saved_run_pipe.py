"""A saved run that is a named pipe is refused, not read (stop 45: `bench --compare-to
b.json`, and `--history DIR` over a folder holding one, waited for a writer forever).
Through a child process, so that a regression fails at its time limit, not by hanging."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")

PROBE = textwrap.dedent("""\
    import sys
    from tfperf.bench.record import RecordError, load_record
    from tfperf.bench.storage import load_runs
    try:
        load_record(sys.argv[1])
    except RecordError as exc:
        print(exc)
    print(load_runs(sys.argv[2]))
""")


def test_a_named_pipe_is_no_saved_run(tmp_path):
    runs = tmp_path / "runs" / "machine"
    runs.mkdir(parents=True)
    os.mkfifo(runs / "0001_run.json")
    proc = subprocess.run([sys.executable, "-c", PROBE, str(runs / "0001_run.json"),
                           str(tmp_path / "runs")], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(SRC)}, timeout=120)
    assert proc.returncode == 0, proc.stderr
    refused = f"{runs / '0001_run.json'}: not a regular file (a named pipe, socket or device)"
    assert proc.stdout.splitlines() == [refused, repr(([], [f"skipped {refused}"]))]
