"""The parent's end of one isolated candidate: a fresh ``python -m tfperf.tune.child`` process,
commands sent as JSON lines, each reply awaited under a stage time limit.

Whatever goes wrong in the child becomes :class:`WorkerFailed` with a one-line reason for the
candidate's row: a reply that does not come in time (the process group is killed: "timed out
after 12 s in screen"), a process that died ("child died by signal 11 (SIGSEGV) in screen"),
or one that exited ("child exited with status 1 in load: <its last stderr line>").
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from typing import IO, Any


class WorkerFailed(Exception):
    """The child process crashed, exited or timed out; ``str(exc)`` is the reason."""


def describe_exit(returncode: int) -> str:
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = "?"
        return f"child died by signal {-returncode} ({name})"
    return f"child exited with status {returncode}"


class Worker:
    """One child process; ``env`` is added to the parent's environment (a device pin)."""

    def __init__(self, env: Mapping[str, str] | None = None, label: str = "") -> None:
        self.label = label
        self.env = dict(env or {})
        # closed in close(); the tail of it explains an exit
        self.stderr: IO[bytes] = tempfile.TemporaryFile(prefix="tfperf-tune-child-")  # noqa: SIM115
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tfperf.tune.child"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=self.stderr, start_new_session=True,
            env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", **self.env})
        self._buffer = b""

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def call(self, cmd: Mapping[str, Any], timeout: float) -> dict[str, Any]:
        """Send one command and wait at most ``timeout`` seconds for its reply."""
        op = cmd.get("op", "?")
        assert self.proc.stdin is not None and self.proc.stdout is not None
        try:
            self.proc.stdin.write((json.dumps(cmd) + "\n").encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise WorkerFailed(self._gone(op)) from None
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._buffer:
            wait = deadline - time.monotonic()
            if wait <= 0:
                self.kill()
                raise WorkerFailed(f"timed out after {timeout:.3g} s in {op}")
            ready, _, _ = select.select([fd], [], [], wait)
            if not ready:
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:  # the child's stdout closed: it is gone
                raise WorkerFailed(self._gone(op))
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        reply: dict[str, Any] = json.loads(line)
        return reply

    def _gone(self, op: str) -> str:
        try:
            code = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.kill()
            return f"child stopped answering in {op}"
        why = f"{describe_exit(code)} in {op}"
        tail = self.stderr_tail()
        return f"{why}: {tail}" if tail and code > 0 else why

    def stderr_tail(self) -> str:
        with contextlib.suppress(OSError, ValueError):
            self.stderr.seek(0)
            lines = self.stderr.read().decode(errors="replace").strip().splitlines()
            return lines[-1][:200] if lines else ""
        return ""

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)

    def close(self) -> None:
        """Ask the child to quit; kill it if it does not within a few seconds."""
        if self.alive:
            with contextlib.suppress(OSError, ValueError):
                assert self.proc.stdin is not None
                self.proc.stdin.write(b'{"op": "quit"}\n')
                self.proc.stdin.close()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.kill()
        for stream in (self.proc.stdin, self.proc.stdout, self.stderr):
            with contextlib.suppress(OSError, ValueError):
                if stream is not None:
                    stream.close()
