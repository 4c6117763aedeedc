"""An interrupt ends a parallel lint at once, its workers with it (stop 45).

`timeout -s INT` and `kill` signal only the main process (a terminal's Ctrl-C reaches the
whole group). The pool's shutdown then waited for every chunk the workers were still on, and
twice in about 25 tries the run never ended: the main process waited on a worker result half
read, both workers on a lock. Planted: each worker's chunk takes far longer than the test,
and writes a marker only if it is left to finish."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest

from tfperf.lint import session
from tfperf.lint.result import RunOptions

SLOW_CHUNK_S = 30.0


_MARKERS: list[Path] = []  # the folder the planted chunks mark (set before the pool forks)


def _planted_chunk(paths: list[str]) -> list:
    """Module level: the pool pickles the function by name; forked workers find it here."""
    folder = _MARKERS[0]
    (folder / f"started-{os.getpid()}").write_text("")
    time.sleep(SLOW_CHUNK_S)
    (folder / f"finished-{os.getpid()}").write_text("")
    return []


def _interrupt_once_started(folder: Path) -> threading.Thread:
    def run() -> None:
        while not list(folder.glob("started-*")):
            time.sleep(0.05)
        os.kill(os.getpid(), signal.SIGINT)  # to this process only, as `timeout -s INT` does
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize("how", ["analyse", "analyse_found"])
def test_an_interrupt_ends_the_workers_without_waiting_for_their_chunks(
        tmp_path, monkeypatch, how):
    if "fork" not in __import__("multiprocessing").get_all_start_methods():
        pytest.skip("the planted chunk reaches the workers by fork")
    monkeypatch.setattr(session, "_lint_chunk", _planted_chunk)
    monkeypatch.setattr(session, "start_method", lambda: "fork")  # this process has threads
    _MARKERS[:] = [tmp_path]
    paths = [f"f{i}.py" for i in range(4 * session.CHUNK)]
    # Python's own SIGINT handler, as a user's `tfperf lint` has it: a pytest-xdist worker
    # ignores SIGINT (its controller owns Ctrl-C), so the planted interrupt would go unseen
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        watcher = _interrupt_once_started(tmp_path)
        with pytest.raises(KeyboardInterrupt):
            if how == "analyse":
                session.analyse(paths, [], RunOptions(), jobs=2)
            else:
                session.analyse_found(iter(paths), [], RunOptions(), jobs=2)
        watcher.join(timeout=5)
    finally:
        signal.signal(signal.SIGINT, previous)
    started = [int(p.name.split("-")[1]) for p in tmp_path.glob("started-*")]
    assert started
    assert not list(tmp_path.glob("finished-*")), "the interrupt waited for the workers"
    for pid in started:  # ended, not left running on their own
        with pytest.raises(ProcessLookupError):
            _wait_gone(pid)


def _wait_gone(pid: int) -> None:
    for _ in range(100):
        os.kill(pid, 0)  # ProcessLookupError once the worker is gone and reaped
        time.sleep(0.05)
