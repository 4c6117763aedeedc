"""Run something with the memory view: a function called step by step, or a whole script.

Gather: the CPU allocator's statistics are switched on before TensorFlow creates its devices
(``allocator.py``), graphs are collected as they are traced (``sites.py``), the first steps
are captured by the TF profiler with step markers (their allocation events give the peaks and
what held them), and every step is sampled for leaks (``leaks.py``) after the capture ends, so
that the profiler's own buffers do not look like growth. Judge and render: ``report.py``.
"""

from __future__ import annotations

import gc
import runpy
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tfperf.memory import allocator
from tfperf.memory.leaks import DEFAULT_STEPS, LeakWatch
from tfperf.memory.report import MemoryReport, build_report
from tfperf.memory.sites import GraphCollector, SiteIndex
from tfperf.profile import capture as capture_mod

DEFAULT_CAPTURED_STEPS = 3
#: a script's top-level tf.function calls sampled for leaks need at least this many
MIN_LEAK_STEPS = 8


class _Session:
    """Allocator switch, graph collection, capture and leak sampling of one run."""

    def __init__(self, logdir: str | Path | None, capture: bool) -> None:
        self.switched = allocator.switch_on_statistics()
        self.sites = SiteIndex()
        self.collector = GraphCollector(self.sites)
        self.capture = (capture_mod.Capture(Path(logdir) if logdir else
                                            capture_mod.default_logdir())
                        if capture else None)
        self.leaks: LeakWatch | None = None
        self.own_s = 0.0  # tfperf's own time inside the run (capture start/stop, sampling)

    @contextmanager
    def own(self) -> Iterator[None]:
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.own_s += time.perf_counter() - t0

    def start_capture(self) -> None:
        if self.capture is not None:
            with self.own():
                self.capture.start()

    def stop_capture(self) -> None:
        if self.capture is not None and self.capture.running:
            with self.own():
                self.capture.stop()

    def report(self, target: str, error: BaseException | None, inputs: Sequence[Any] = (),
               wall_s: float = 0.0) -> MemoryReport:
        self.stop_capture()
        leak_report = self.leaks.report() if self.leaks is not None else None
        return build_report(target=target, capture=self.capture, sites=self.sites,
                            state=allocator.state(self.switched), inputs=inputs,
                            leaks=leak_report, error=error, own_s=self.own_s, wall_s=wall_s,
                            notes=[self.collector.error] if self.collector.error else [])


def memory_profile(fn: Callable[..., Any], *args: Any, steps: int = DEFAULT_CAPTURED_STEPS,
                   leak_steps: int = DEFAULT_STEPS, capture: bool = True,
                   logdir: str | Path | None = None, target: str | None = None,
                   **kwargs: Any) -> MemoryReport:
    """Call ``fn(*args, **kwargs)`` once to warm up, ``steps`` times under the profiler (the
    peak of each step and what held it), then ``leak_steps`` times more, sampled for leaks
    (0: none)."""
    if steps < 1:
        raise ValueError("steps must be at least 1")
    session = _Session(logdir, capture)
    from tfperf.core.measure import sync

    error: BaseException | None = None
    functions = [fn] if hasattr(fn, "experimental_get_tracing_count") else []
    session.sites.add_functions(functions)
    t0 = time.perf_counter()
    try:
        with session.collector.collecting():
            sync(fn(*args, **kwargs))
            # garbage left by earlier work (a notebook's cells, other tests) is freed before
            # the captured steps: held at their peak, it would read as the step's *other*
            gc.collect()
            session.start_capture()
            for i in range(steps):
                with _step(session, i):
                    sync(fn(*args, **kwargs))
            session.stop_capture()
            if leak_steps:
                session.leaks = LeakWatch(functions=functions)
                session.leaks.expect(leak_steps)
                with session.leaks:
                    for _ in range(leak_steps):
                        sync(fn(*args, **kwargs))
                        with session.own():
                            session.leaks.step()
    except KeyboardInterrupt:
        # TF allows one profiler per process: left running, a notebook's next capture read
        # "profiler did not start: Another profiler is running" until the kernel restarted
        session.stop_capture()
        raise
    except (Exception, SystemExit) as exc:  # the function's own error: the report says it
        error = exc
    wall = time.perf_counter() - t0
    session.sites.add_functions(functions)  # traced now: their variables are the step's
    name = target or getattr(fn, "__qualname__", None) or repr(fn)
    return session.report(str(name), error, inputs=(args, kwargs), wall_s=wall)


@contextmanager
def _step(session: _Session, number: int) -> Iterator[None]:
    if session.capture is not None and session.capture.running:
        with capture_mod.step(number):
            yield
    else:
        yield


def run_function(spec: str, inputs: str | None = None, *, steps: int | None = None,
                 leak_steps: int | None = None, logdir: str | Path | None = None,
                 capture: bool = True, quick: bool = False) -> MemoryReport:
    """``MODULE:FUNCTION`` (or a bench file's variant) with the memory view."""
    allocator.switch_on_statistics()  # before the user's module runs its first op
    from tfperf.profile.runner import resolve_function

    fn, args, kwargs = resolve_function(spec, inputs, quick=quick)
    return memory_profile(fn, *args, steps=steps or DEFAULT_CAPTURED_STEPS,
                          leak_steps=DEFAULT_STEPS if leak_steps is None else leak_steps,
                          capture=capture, logdir=logdir, target=spec, **kwargs)


# ---------------------------------------------------------------------------------------------
# scripts: steps are the top-level tf.function calls


FUNCTION_CLASS = ("tensorflow.python.eager.polymorphic_function.polymorphic_function",
                  "Function")


class _ScriptSteps:
    """Wraps ``Function.__call__``: the first ``captured`` top-level calls are marked as
    profiler steps; every later call ends with a leak sample."""

    def __init__(self, session: _Session, captured: int) -> None:
        self.session = session
        self.captured = captured
        self.calls = 0
        self.depth = 0

    @contextmanager
    def installed(self) -> Iterator[None]:
        import importlib

        module = importlib.import_module(FUNCTION_CLASS[0])
        cls = getattr(module, FUNCTION_CLASS[1])
        original = cls.__call__
        steps = self

        def call(fn: Any, *args: Any, **kwargs: Any) -> Any:
            if steps.depth:
                return original(fn, *args, **kwargs)
            steps.depth += 1
            try:
                return steps.run(original, fn, args, kwargs)
            finally:
                steps.depth -= 1

        cls.__call__ = call
        try:
            yield
        finally:
            cls.__call__ = original

    def run(self, original: Any, fn: Any, args: tuple, kwargs: dict) -> Any:
        session = self.session
        number = self.calls
        self.calls += 1
        if number == 0:
            session.start_capture()
        if session.capture is not None and session.capture.running:
            with capture_mod.step(number):
                result = original(fn, *args, **kwargs)
            if self.calls >= self.captured:
                session.stop_capture()
                leaks = session.leaks = LeakWatch()
                leaks.__enter__()
            return result
        result = original(fn, *args, **kwargs)
        if session.leaks is not None:
            with session.own():
                session.leaks.step()
        return result


def run_script(path: str | Path, argv: Sequence[str] = (), *, steps: int | None = None,
               logdir: str | Path | None = None, capture: bool = True) -> MemoryReport:
    """Run ``path`` as ``python path argv...`` would, with the memory view: the first
    ``steps`` top-level ``tf.function`` calls captured, every later one sampled for leaks."""
    from tfperf.profile.runner import check_script

    script = check_script(path)
    session = _Session(logdir, capture)
    import tensorflow  # noqa: F401  (the hooks are TensorFlow's)

    stepper = _ScriptSteps(session, steps or DEFAULT_CAPTURED_STEPS)
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    sys.argv = [str(script), *argv]
    sys.path.insert(0, str(script.resolve().parent))
    error: BaseException | None = None
    t0 = time.perf_counter()
    try:
        with session.collector.collecting(), stepper.installed():
            runpy.run_path(str(script), run_name="__main__")
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # the script's own error (SystemExit included) is reported
        if not (isinstance(exc, SystemExit) and exc.code in (0, None)):
            error = exc
    finally:
        sys.argv[:], sys.path[:] = saved_argv, saved_path
    wall = time.perf_counter() - t0
    if session.leaks is not None and len(session.leaks.samples) < MIN_LEAK_STEPS:
        session.leaks.report()  # unhook; too few steps to judge: the report says so
    report = session.report(str(path), error, wall_s=wall)
    if stepper.calls == 0 and session.capture is not None:  # the capture never started
        report.logdir = None
        report.capture_note = NO_STEPS
    return report


# A script whose loop runs eagerly has no step for the memory view to mark.
NO_STEPS = ("the script made no tf.function call, and the memory view's steps are the "
            "top-level tf.function calls: decorate the training step with @tf.function "
            "(TFP306), or profile the step as FILE.py:FUNCTION --inputs FILE.py:MAKE")


__all__ = ["DEFAULT_CAPTURED_STEPS", "memory_profile", "run_function", "run_script"]
