"""Lint's worker processes: a worker that dies does not lose the run, and workers are not
forked from a threaded process (stop 46: CI's run lost a whole lint of TensorFlow's sources
to "a process in the process pool was terminated abruptly")."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tfperf.lint import session, workers
from tfperf.lint.session import CHUNK, LintRequest, run

_REAL_CHUNK = session._lint_chunk  # before a test replaces it
_PLANT: list[Path] = []  # the folder of the planted death (set before the pool forks)


def _dying_chunk(paths: list[str]) -> list:
    """The first worker to reach the marked file dies as the out-of-memory killer ends one."""
    marker = _PLANT[0] / "died"
    if any(p.endswith("victim.py") for p in paths) and not marker.exists():
        marker.write_text(str(os.getpid()))
        os.kill(os.getpid(), signal.SIGKILL)
    return _REAL_CHUNK(paths)


def _project(tmp_path: Path) -> Path:
    src = tmp_path / "proj"
    src.mkdir()
    body = textwrap.dedent("""\
        import tensorflow as tf


        @tf.function
        def step(x):
            for i in range(100):
                x = x + tf.constant(float(i))
            return x
        """)
    for i in range(6 * CHUNK):
        name = "victim.py" if i == 3 * CHUNK + 2 else f"m{i:03d}.py"
        (src / name).write_text(body)
    return src


def _key(outcome) -> list[tuple]:
    return sorted((f.code, os.path.basename(f.location.path or ""), f.location.line)
                  for f in outcome.findings)


@pytest.mark.skipif("fork" not in __import__("multiprocessing").get_all_start_methods(),
                    reason="the planted death reaches the workers by fork")
def test_a_worker_killed_mid_run_loses_no_finding_and_says_so(tmp_path, monkeypatch):
    src = _project(tmp_path)
    serial = run(LintRequest(paths=[str(src)], cache=False, jobs=1))
    assert serial.findings, "the planted project must give findings to compare"
    _PLANT[:] = [tmp_path]
    monkeypatch.setattr(session, "_lint_chunk", _dying_chunk)
    monkeypatch.setattr(session, "start_method", lambda: "fork")
    parallel = run(LintRequest(paths=[str(src)], cache=False, jobs=2))
    assert (tmp_path / "died").exists(), "the planted worker death did not happen"
    assert parallel.workers == 2
    assert _key(parallel) == _key(serial)
    said = [n for n in parallel.notes if "worker process ended abruptly" in n]
    assert len(said) == 1, parallel.notes
    assert "SIGKILL" in said[0] and "linted again" in said[0]


@pytest.mark.skipif("fork" not in __import__("multiprocessing").get_all_start_methods(),
                    reason="the planted death reaches the workers by fork")
def test_a_run_without_a_dead_worker_has_no_such_note(tmp_path, monkeypatch):
    src = _project(tmp_path)
    monkeypatch.setattr(session, "start_method", lambda: "fork")
    out = run(LintRequest(paths=[str(src)], cache=False, jobs=2))
    assert out.workers == 2 and out.findings
    assert not [n for n in out.notes if "ended abruptly" in n]


_CHILD = """\
import json, threading, time
print("main ran", flush=True)
from tfperf.lint import workers
from tfperf.lint.session import LintRequest, run
first = workers.start_method()
threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
second = workers.start_method()
out = run(LintRequest(paths=[{src!r}], cache=False, jobs=2))
keys = sorted([f.code, f.location.path.rsplit('/', 1)[-1], f.location.line]
              for f in out.findings)
print(json.dumps([first, second, out.workers, keys]))
"""


def _serial_keys(src: Path) -> list[list]:
    serial = run(LintRequest(paths=[str(src)], cache=False, jobs=1))
    return sorted([f.code, os.path.basename(f.location.path or ""), f.location.line]
                  for f in serial.findings)


def test_a_threaded_process_does_not_fork_its_workers_and_their_findings_are_the_same(
        tmp_path):
    """In a child run with ``-c`` (as a notebook kernel, nothing to run again): while
    single-threaded it forks; with another thread running it starts workers clean, and
    they find what a serial run finds."""
    src = _project(tmp_path)
    ran = subprocess.run([sys.executable, "-c", _CHILD.format(src=str(src))],
                         capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr[-3000:]
    first, second, n, keys = json.loads(ran.stdout.splitlines()[-1])
    if "fork" in __import__("multiprocessing").get_all_start_methods():
        assert first == "fork"
    assert second in ("forkserver", "spawn")
    assert n == 2
    assert keys == _serial_keys(src) and keys


def test_a_threaded_unguarded_script_is_linted_here_not_run_again_by_workers(tmp_path):
    """A script without a ``__main__`` guard that calls lint's API with threads running: a
    clean-started worker would run the script again (its training, its lint) — lint runs
    in this process instead, once."""
    src = _project(tmp_path)
    script = tmp_path / "unguarded.py"
    script.write_text(_CHILD.format(src=str(src)))
    ran = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=300, cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert ran.stdout.count("main ran") == 1, ran.stdout
    _first, second, n, keys = json.loads(ran.stdout.splitlines()[-1])
    assert second is None and n == 1
    assert keys == _serial_keys(src) and keys


def test_a_threaded_guarded_script_still_gets_clean_started_workers(tmp_path):
    """The same lint under an ``if __name__ == "__main__":`` guard (as console scripts such
    as ``.venv/bin/pytest`` are): running the script's top level again only imports, so
    the workers start clean and the script's body still runs once."""
    src = _project(tmp_path)
    script = tmp_path / "guarded.py"
    body = textwrap.indent(_CHILD.format(src=str(src)), "    ")
    script.write_text(f'"""A guarded script."""\nimport json\n\nif __name__ == "__main__":\n{body}')
    ran = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=300, cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert ran.stdout.count("main ran") == 1, ran.stdout
    _first, second, n, keys = json.loads(ran.stdout.splitlines()[-1])
    assert second in ("forkserver", "spawn") and n == 2
    assert keys == _serial_keys(src) and keys


@pytest.mark.parametrize(("top", "harmless"), [
    ("import sys\nfrom pytest import console_main\nif __name__ == '__main__':\n"
     "    sys.exit(console_main())\n", True),
    ('"""doc."""\nX: int = 3\nNAMES = ["a", "b"]\ndef f():\n    return 1\n', True),
    ("import tensorflow as tf\nmodel = tf.keras.Sequential()\n", False),
    ("for i in range(3):\n    pass\n", False),
    ("print('hi')\n", False),
    ("if __name__ == '__main__':\n    pass\nelse:\n    print('imported')\n", False),
    ("def broken(:\n", False),
])
def test_reruns_harmlessly_reads_the_scripts_top_level(tmp_path, top, harmless):
    path = tmp_path / "main.py"
    path.write_text(top)
    assert workers.reruns_harmlessly(str(path)) is harmless


def test_os_threads_counts_native_threads():
    before = workers.os_threads()
    import threading
    import time
    thread = threading.Thread(target=time.sleep, args=(2,), daemon=True)
    thread.start()
    assert workers.os_threads() == before + 1


def _sleeper(quiet: bool, ready) -> None:
    if quiet:
        workers.quiet_worker_signals()
    ready.set()
    import time
    time.sleep(30)


@pytest.mark.skipif("fork" not in __import__("multiprocessing").get_all_start_methods(),
                    reason="the inherited handler is what a fork passes on")
@pytest.mark.parametrize("quiet", [True, False])
def test_a_forked_worker_ends_on_sigterm_despite_the_main_process_handler(quiet):
    """`tfperf` raises SIGTERM as an interrupt (core/interrupts.py); a forked worker kept that
    handler, caught the pool's terminate() as an exception and blocked sending it back, and
    the interrupted run never exited (stop 46, 1 interrupt in 6). The twin without the
    worker's own handlers shows the inherited one is what kept it alive."""
    import multiprocessing

    from tfperf.core.interrupts import sigterm_as_interrupt

    context = multiprocessing.get_context("fork")
    ready = context.Event()
    with sigterm_as_interrupt():
        child = context.Process(target=_sleeper, args=(quiet, ready))
        child.start()
    try:
        assert ready.wait(timeout=120), "the child never started"
        child.terminate()
        child.join(timeout=20)
        if quiet:
            assert child.exitcode == -signal.SIGTERM
        else:  # Python's handler ran: the exception ended it with status 1, not the signal
            assert child.exitcode == 1
    finally:
        if child.is_alive():
            child.kill()
            child.join()
