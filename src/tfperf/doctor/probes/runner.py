"""Run an external command as a probe: bounded in time, never raising.

Every outcome becomes a fact. A missing tool, a hang and a crash are all things the doctor
reports, so they are values here (``status``), not exceptions.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

OK, NOT_FOUND, TIMEOUT, FAILED, ERROR = "ok", "not found", "timeout", "failed", "error"

# The probes' running children. Each runs in a session of its own (so that killing its group
# ends what it started), which also keeps a terminal's Ctrl-C from reaching it: an interrupted
# doctor ends them itself (:func:`kill_children`) instead of waiting out their time limits.
_CHILDREN: set[subprocess.Popen[Any]] = set()
_CHILDREN_LOCK = threading.Lock()


def _track(proc: subprocess.Popen[Any]) -> subprocess.Popen[Any]:
    with _CHILDREN_LOCK:
        for done in [p for p in _CHILDREN if p.poll() is not None]:
            _CHILDREN.discard(done)
        _CHILDREN.add(proc)
    return proc


def kill_children() -> None:
    """End every probe child still running, and all each started (an interrupt)."""
    with _CHILDREN_LOCK:
        running = [p for p in _CHILDREN if p.poll() is None]
        _CHILDREN.clear()
    for proc in running:
        try:
            os.killpg(proc.pid, 9)
        except (ProcessLookupError, PermissionError, AttributeError):
            with contextlib.suppress(OSError):
                proc.kill()


@dataclass(frozen=True)
class CommandResult:
    argv: tuple[str, ...]
    status: str  # OK | NOT_FOUND | TIMEOUT | FAILED (non-zero exit) | ERROR (could not start)
    stdout: str = ""
    stderr: str = ""
    returncode: int | None = None
    seconds: float = 0.0
    timeout: float | None = None

    @property
    def ok(self) -> bool:
        return self.status == OK

    def describe(self) -> str:
        """One line for the report: what happened when the command ran."""
        name = os.path.basename(self.argv[0]) if self.argv else "?"
        if self.status == OK:
            return "ok"
        if self.status == NOT_FOUND:
            return f"{name}: not found"
        if self.status == TIMEOUT:
            return f"{name}: timed out after {self.timeout:g}s"
        if self.status == FAILED:
            tail = (self.stderr or self.stdout).strip().splitlines()
            last = f": {tail[-1][:200]}" if tail else ""
            return f"{name}: exit status {self.returncode}{last}"
        return f"{name}: {self.stderr.strip()[:200]}"


def run_command(argv: Sequence[str], timeout: float = 10.0,
                env: Mapping[str, str] | None = None) -> CommandResult:
    """Run ``argv`` with a time limit; the process group is killed on timeout."""
    args = tuple(argv)
    exe = shutil.which(args[0], path=(env or os.environ).get("PATH")) if args else None
    if exe is None:
        return CommandResult(args, NOT_FOUND, timeout=timeout)
    start = time.perf_counter()
    try:
        proc = _track(subprocess.Popen(
            [exe, *args[1:]], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL, text=True, errors="replace",
            env=dict(env) if env is not None else None,
            start_new_session=True,  # so a hung tool's children die with it
        ))
    except OSError as exc:
        return CommandResult(args, ERROR, stderr=str(exc), timeout=timeout)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        return CommandResult(args, TIMEOUT, seconds=time.perf_counter() - start,
                             timeout=timeout)
    seconds = time.perf_counter() - start
    status = OK if proc.returncode == 0 else FAILED
    return CommandResult(args, status, out, err, proc.returncode, seconds, timeout)


def start_child(argv: Sequence[str], stderr: Any,
                env: Mapping[str, str]) -> subprocess.Popen[str]:
    """A child in a session of its own (so :func:`kill_group` ends all it starts), its
    stdout a text pipe, its stderr to ``stderr``, no stdin. Raises OSError."""
    return _track(subprocess.Popen(list(argv), stdout=subprocess.PIPE, stderr=stderr,
                                   stdin=subprocess.DEVNULL, text=True, errors="replace",
                                   env=dict(env), start_new_session=True))


def kill_group(proc: subprocess.Popen) -> None:
    """Kill a process started with ``start_new_session=True`` and everything it started."""
    try:
        os.killpg(proc.pid, 9)
    except (ProcessLookupError, PermissionError, AttributeError):
        proc.kill()
    with contextlib.suppress(subprocess.TimeoutExpired, ValueError):
        proc.communicate(timeout=5)
