"""Several ``tfperf`` command lines in one child process, for tests about what the commands
print and return rather than about a process starting: each case pays for TensorFlow's import
once (seconds of a 2-core CI runner's time per case) instead of once per ``python -m tfperf``.

Each case runs ``tfperf.cli.main`` as ``python -m tfperf`` does, with its own stdout and
stderr (text streams over bytes, so code that writes to ``.buffer`` works). What this does
not see: output written to the file descriptors directly (TensorFlow's C++ log lines), and a
process's exit. A test about those starts its own ``python -m tfperf``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

_CHILD = r"""
import io, json, sys
from tfperf.cli import main

real = sys.stdout
done = []
for argv in json.loads(sys.argv[1]):
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", newline="")
    err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", newline="")
    sys.stdout, sys.stderr = out, err
    try:
        rc = main(argv)
    except SystemExit as exc:  # argparse's usage errors
        rc = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        sys.stdout, sys.stderr = real, sys.__stderr__
    texts = []
    for stream in (out, err):
        stream.flush()
        texts.append(stream.buffer.getvalue().decode("utf-8", "replace"))
    done.append([rc, *texts])
real.write("\n@@cli_batch@@" + json.dumps(done) + "\n")
"""
MARK = "\n@@cli_batch@@"


class CliBatch:
    """The cases (``tfperf`` arguments) run in turn in one fresh child, started at once;
    ``results()`` waits for it. ``env`` is the child's whole environment (default: this
    process's)."""

    def __init__(self, cases: Sequence[Sequence[str]], cwd: Path | None = None,
                 env: dict[str, str] | None = None, timeout: int = 900) -> None:
        self.cases = [list(c) for c in cases]
        self.timeout = timeout
        self.proc = subprocess.Popen([sys.executable, "-c", _CHILD, json.dumps(self.cases)],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     cwd=cwd, env=dict(os.environ) if env is None else env)

    def results(self) -> list[subprocess.CompletedProcess[str]]:
        """One result per case, its ``args`` the case's arguments."""
        try:
            out, err = self.proc.communicate(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()  # only the child this batch started
            self.proc.communicate()
            raise
        assert self.proc.returncode == 0 and MARK in out, (self.proc.returncode, err[-3000:])
        results = json.loads(out.rsplit(MARK, 1)[1])
        assert len(results) == len(self.cases)
        return [subprocess.CompletedProcess(case, rc, o, e)
                for case, (rc, o, e) in zip(self.cases, results, strict=True)]


def run_cli_batch(cases: Sequence[Sequence[str]], cwd: Path | None = None,
                  env: dict[str, str] | None = None,
                  timeout: int = 900) -> list[subprocess.CompletedProcess[str]]:
    """Run each case in turn in one fresh child and wait: one result per case."""
    return CliBatch(cases, cwd, env, timeout).results()
