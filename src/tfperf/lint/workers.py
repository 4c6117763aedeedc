"""Lint's worker processes: how they start, and a run that survives one of them dying.

A worker that dies (the kernel's out-of-memory killer, a signal, a crash in a fork of a
threaded process) broke the whole run before: ``BrokenProcessPool`` for every chunk, a
traceback, no findings. Now the chunks it and its pool had not finished are linted again
in this process, and the run says so in a note.
"""

from __future__ import annotations

import ast
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from tfperf.lint.result import FileResult

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

Chunk = list[str]


def os_threads() -> int:
    """Threads of this process as the OS counts them: TensorFlow's and NumPy's native
    threads included, which ``threading`` does not see."""
    with contextlib.suppress(OSError):
        return len(os.listdir("/proc/self/task"))
    return threading.active_count()


def start_method() -> str | None:
    """``fork`` where this process is single-threaded (a plain ``tfperf lint``: workers start
    in milliseconds); otherwise a clean start, as a fork copies only the calling thread, so
    locks that other threads held (TensorFlow's, in a notebook kernel or a test run that
    imported it) stay held forever in the child. None (lint in this process) where a clean
    start would run the user's main script's top level again in every worker, as it does
    for a script without an ``if __name__ == "__main__":`` guard that calls lint's API."""
    import multiprocessing

    methods = multiprocessing.get_all_start_methods()
    if "fork" in methods and os_threads() <= 1:
        return "fork"
    script = _main_script()
    if script is not None and not reruns_harmlessly(script):
        return None
    return "forkserver" if "forkserver" in methods else "spawn"


def _main_script() -> str | None:
    """The file a clean-started worker would run again as ``__mp_main__`` (what
    multiprocessing's spawn preparation does): a script run by path. Not a module run with
    ``-m`` (its ``__main__`` is never re-run), a notebook kernel or ``python -c``."""
    main = sys.modules.get("__main__")
    if main is None or getattr(getattr(main, "__spec__", None), "name", None) is not None:
        return None
    return getattr(main, "__file__", None)


def reruns_harmlessly(path: str) -> bool:
    """The script's top level only imports and defines (a console script such as
    ``.venv/bin/pytest``, a guarded module): a clean-started worker running it again as
    ``__mp_main__`` does nothing else. Anything else at the top level (a call, a loop, a
    value computed by a call), or a file that cannot be read or parsed, might."""
    try:
        tree = ast.parse(Path(path).read_bytes())
    except (OSError, SyntaxError, ValueError):
        return False
    return all(_defines_only(stmt) for stmt in tree.body)


def _defines_only(stmt: ast.stmt) -> bool:
    if isinstance(stmt, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef,
                         ast.ClassDef, ast.Pass)):
        return True
    if isinstance(stmt, ast.Expr):
        return isinstance(stmt.value, ast.Constant)  # a docstring
    if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
        return stmt.value is None or not any(
            isinstance(n, (ast.Call, ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr))
            for n in ast.walk(stmt.value))
    if isinstance(stmt, ast.If):
        test = stmt.test
        guard = (isinstance(test, ast.Compare) and len(test.ops) == 1
                 and isinstance(test.ops[0], ast.Eq)
                 and {_text(test.left), _text(test.comparators[0])} == {"__name__", "__main__"})
        return guard and all(_defines_only(s) for s in stmt.orelse)
    return False


def _text(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def quiet_worker_signals() -> None:
    """In a worker: SIGTERM ends it (the default), SIGINT is left to the main process.

    A forked worker inherits the main process's Python handlers: `tfperf`'s SIGTERM-as-an-
    interrupt (core/interrupts.py) turned the pool's `terminate()` into an exception that
    the worker caught and tried to send back, blocked on a result pipe no one read any
    more; the main process then waited for it at exit, forever (1 interrupt in 6 on the
    installed keras, stop 46). A terminal's Ctrl-C reaches the whole process group: the
    main process ends the workers, which need not print a traceback each."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def end_pool(pool: ProcessPoolExecutor) -> None:
    """Stop a pool whose results are no longer wanted, workers included. `shutdown(wait=True)`
    waited for every chunk the workers were on (`timeout -s INT` and `kill` reach only this
    process), and twice in about 25 interrupts never returned: this process waited on a
    worker's result half read, the workers on a lock (stop 45)."""
    terminate = getattr(pool, "terminate_workers", None)  # Python 3.14's public way
    if terminate is not None:
        terminate()
        return
    processes = list((getattr(pool, "_processes", None) or {}).values())  # before 3.14
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        with contextlib.suppress(Exception):
            process.terminate()
    for process in processes:
        with contextlib.suppress(Exception):
            process.join(timeout=5)
            if process.is_alive():  # a worker that will not end on SIGTERM: it must not
                process.kill()      # hold this process at exit (the pool joins it there)
                process.join(timeout=5)


def _why_dead(pool: ProcessPoolExecutor) -> str:
    """How the dead worker ended, from the exit codes the pool kept (the others were
    ended with SIGTERM by the pool itself once one died)."""
    codes = [getattr(p, "exitcode", None)
             for p in (getattr(pool, "_processes", None) or {}).values()]
    odd = [c for c in codes if c not in (None, 0, -signal.SIGTERM)]
    code = odd[0] if odd else next((c for c in codes if c), None)
    if code is None:
        return "its exit status is not known"
    if code < 0:
        with contextlib.suppress(ValueError):
            name = signal.Signals(-code).name
            if name == "SIGKILL":
                return "killed by SIGKILL, as the kernel's out-of-memory killer does"
            return f"ended by {name}"
        return f"ended by signal {-code}"
    return f"exit status {code}"


def run_chunks(chunks: Iterable[Chunk], workers: int, make_pool: Callable[[], ProcessPoolExecutor],
               work: Callable[[Chunk], list[FileResult]],
               redo: Callable[[Chunk], list[FileResult]],
               incidents: list[str] | None = None) -> list[FileResult]:
    """Results of ``work`` over ``chunks`` (in order) in a pool of ``workers`` processes; the
    chunks are submitted as the iterable yields them (discovery may still be walking).

    A dead worker breaks the pool: every chunk without a result is given to ``redo`` (this
    process) and a line saying so goes to ``incidents``. Any other exception, and an
    interrupt, ends the workers at once and propagates."""
    from concurrent.futures.process import BrokenProcessPool

    pool = make_pool()
    broken = False
    submitted: list[tuple[Chunk, Future[list[FileResult]] | None]] = []
    redone = 0
    results: list[FileResult] = []
    try:
        for chunk in chunks:
            future = None
            if not broken:
                try:
                    future = pool.submit(work, chunk)
                except BrokenProcessPool:
                    broken = True
            submitted.append((chunk, future))
        for chunk, future in submitted:
            got = None
            if future is not None:
                try:
                    got = future.result()
                except BrokenProcessPool:
                    broken = True
            if got is None:
                got = redo(chunk)
                redone += len(chunk)
            results.extend(got)
    except BaseException:  # a bad path further on (DiscoveryError), an interrupt
        end_pool(pool)
        raise
    if broken:
        why = _why_dead(pool)
        end_pool(pool)
        if incidents is not None:
            incidents.append(f"a lint worker process ended abruptly ({why}); the {redone} "
                             f"file(s) its pool had not finished were linted again in this "
                             f"process, so the findings are complete")
    else:
        pool.shutdown()
    return results
