"""Run something under observation: a script, ``module:function`` with inputs, or a callable.

Each entry point gathers (``Watcher`` + an optional profiler ``Capture``), then judges and
renders through ``report.build_report``. A run that raises still yields a report of what ran,
with the error attached; bad input (missing file, unknown function) raises
:class:`ProfileInputError` before anything runs.
"""

from __future__ import annotations

import importlib
import os
import runpy
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tfperf.core.usercode import UserCodeError, import_file
from tfperf.profile import capture as capture_mod
from tfperf.profile.observation import StepStats
from tfperf.profile.report import ProfileReport, build_report
from tfperf.profile.script_exec import (
    RESULT,
    STEP,
    StepClock,
    compile_marked,
    exec_as_main,
    main_module,
)
from tfperf.profile.step_import import StepModuleFinder, marking_imports
from tfperf.profile.training_step import TrainingStep, find_steps
from tfperf.profile.watcher import Watcher

DEFAULT_FUNCTION_STEPS = 3


class ProfileInputError(Exception):
    """The thing to profile cannot be found or loaded (exit status 2)."""


# ---------------------------------------------------------------------------------------------
# the observed run


class _Session:
    """A watcher plus an optional capture that may stop after a number of steps."""

    def __init__(self, *, capture: bool, logdir: str | Path | None,
                 capture_calls: int | None = None,
                 capture_mb: float | None = capture_mod.DEFAULT_BUDGET_MB):
        self.capture = (capture_mod.Capture(Path(logdir) if logdir else
                                            capture_mod.default_logdir(),
                                            budget_mb=capture_mb)
                        if capture else None)
        self.capture_calls = capture_calls
        self._calls = 0
        self.watcher = Watcher(placement=capture, on_function_call=self._on_function_call,
                               on_ops=self.check_budget)

    def check_budget(self) -> None:
        if self.capture is not None and self.capture.running:
            with self.watcher.paused():
                self.capture.check_budget()

    def _on_function_call(self) -> None:
        self.check_budget()
        # Script mode with --steps N: the capture covers the first N top-level calls.
        if self.capture_calls is None or self.capture is None or not self.capture.running:
            return
        self._calls += 1
        if self._calls >= self.capture_calls:
            with self.watcher.paused():
                self.capture.stop()

    @contextmanager
    def capturing(self) -> Iterator[None]:
        if self.capture is not None:
            with self.watcher.paused():
                self.capture.start()
        try:
            yield
        finally:
            if self.capture is not None:
                with self.watcher.paused():
                    self.capture.stop()

    def report(self, error: BaseException | None, target: str) -> ProfileReport:
        summary, note, logdir = None, None, None
        if self.capture is None:
            note = "not captured (--no-capture)"
        else:
            logdir = str(self.capture.logdir)
            note = self.capture.bound_note()
            if self.capture.xplane is not None:
                from tfperf.profile import xplane

                try:
                    summary = xplane.summarise(self.capture.xplane)
                except xplane.CaptureError as exc:
                    note = f"capture unreadable: {exc}"
            else:
                note = self.capture.error or "no capture was written"
        return build_report(self.watcher.obs, error=error, capture=summary, capture_note=note,
                            logdir=logdir, target=target)


def _is_error(exc: BaseException) -> bool:
    """A script ending with sys.exit(0) / sys.exit() has not failed."""
    return not (isinstance(exc, SystemExit) and exc.code in (0, None))


# ---------------------------------------------------------------------------------------------
# scripts


def check_script(path: str | Path) -> Path:
    p = Path(path)
    if not p.exists():
        raise ProfileInputError(f"no such file: {path}")
    if not p.is_file():
        raise ProfileInputError(f"not a file: {path}")
    return p


class _ProfiledSteps(StepClock):
    """The step loop's steps under observation: each one a profiler step marker (unless the
    user marks steps), what ran inside the steps per line, and with ``--steps N`` the
    capture stopped after step N. Its own work runs paused: not the run's time."""

    def __init__(self, session: _Session, stats: StepStats, *, mark: bool,
                 capture_steps: int | None):
        super().__init__()
        self.session, self.stats, self.mark = session, stats, mark
        self.capture_steps = capture_steps
        self._trace: Any = None
        self._work_t0 = 0.0
        self._before: dict[Any, tuple[int, float]] = {}
        self._syncs_before: dict[Any, tuple[int, float]] = {}

    def begin(self, index: int) -> None:
        session = self.session
        with session.watcher.paused():
            if self.mark and session.capture is not None and session.capture.running:
                import tensorflow as tf

                self._trace = tf.profiler.experimental.Trace(capture_mod.STEP_NAME,
                                                             step_num=index, _r=1)
                self._trace.__enter__()

    def end(self, index: int) -> None:
        session = self.session
        with session.watcher.paused():
            if self._trace is not None:
                self._trace.__exit__(None, None, None)
                self._trace = None
            self.stats.durations.append(self.durations[-1])
            session.check_budget()
            if self.capture_steps is not None and index + 1 >= self.capture_steps \
                    and session.capture is not None and session.capture.running:
                session.capture.stop()

    def work_begin(self) -> None:
        with self.session.watcher.paused():
            obs = self.session.watcher.obs
            self._before = {k: (s.count, s.total_s) for k, s in obs.eager_ops.items()}
            self._syncs_before = {k: (s.count, s.total_s) for k, s in obs.host_syncs.items()}
        self._work_t0 = time.perf_counter()

    def work_end(self) -> None:
        elapsed = time.perf_counter() - self._work_t0
        with self.session.watcher.paused():
            obs, stats = self.session.watcher.obs, self.stats
            stats.work_s.append(elapsed)
            for table, before, ops, secs in (
                    (obs.eager_ops, self._before, stats.eager_ops, stats.eager_s),
                    (obs.host_syncs, self._syncs_before, stats.host_syncs, stats.host_sync_s)):
                for site, line in table.items():
                    count, total = before.get(site, (0, 0.0))
                    if line.count > count:
                        ops[site] = ops.get(site, 0) + line.count - count
                        secs[site] = secs.get(site, 0.0) + line.total_s - total


def _step_label(script: Path, step: TrainingStep) -> str:
    what = {"marked": "your Trace(step_num=...)", "inline": "eager training step",
            "function": f"training step {step.function}()"}[step.kind]
    if step.kind == "function" and step.compiled:
        what += ", a tf.function"
    if step.user_marked:
        what += ", your Trace(step_num=...)"
    return f"the loop at {script.name}:{step.loop_line} ({what})"


def script_steps(script: Path) -> tuple[str, list[TrainingStep]]:
    """The script's source and the training steps its code shows."""
    from importlib.util import decode_source

    source = decode_source(script.read_bytes())
    return source, find_steps(source, str(script))


def run_script(path: str | Path, argv: Sequence[str] = (), *, capture: bool = True,
               logdir: str | Path | None = None, steps: int | None = None,
               capture_mb: float | None = capture_mod.DEFAULT_BUDGET_MB) -> ProfileReport:
    """Run ``path`` as ``python path argv...`` would, under observation.

    Where the code shows a training loop (``training_step.py``), its steps are marked: each
    iteration of the step loop is a step (a profiler step marker, per-step time), and
    ``steps`` captures the first ``steps`` of them. Elsewhere ``steps`` captures the first
    ``steps`` top-level tf.function calls; without, the whole run. The capture also stops
    once the process has grown by ``capture_mb`` MiB (None: no bound).
    """
    script = check_script(path)
    source, found = script_steps(script)
    code = compile_marked(source, script, found) if found else None
    session = _Session(capture=capture, logdir=logdir,
                       capture_calls=None if code is not None else steps,
                       capture_mb=capture_mb)
    stats = StepStats("", "", 0)
    clock = _ProfiledSteps(session, stats, mark=True, capture_steps=steps)
    init: dict[str, Any] = {STEP: clock, RESULT: clock.result}

    def marked(step: TrainingStep) -> None:
        if not stats.path:  # the first loop marked names the steps
            stats.source = _step_label(Path(step.path), step)
            stats.path, stats.loop_line = os.path.realpath(step.path), step.loop_line
            # the user's own markers are the capture's steps
            clock.mark = step.kind != "marked" and not step.user_marked
            session.capture_calls = None

    for step in found if code is not None else ():
        marked(step)
    finder = StepModuleFinder(script.resolve().parent, init, on_marked=marked)
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    sys.argv = [str(script), *argv]
    sys.path.insert(0, str(script.resolve().parent))
    error: BaseException | None = None
    try:
        with session.capturing(), marking_imports(finder), session.watcher:
            if code is not None:
                exec_as_main(code, main_module(script, init))
            else:
                runpy.run_path(str(script), run_name="__main__", init_globals=init)
    except KeyboardInterrupt as exc:  # Ctrl-C or SIGTERM: what ran so far is the report
        error = exc
    except BaseException as exc:  # the script's own error (SystemExit included) is reported
        if _is_error(exc):
            error = exc
    finally:
        sys.argv[:], sys.path[:] = saved_argv, saved_path
        _forget_marked(finder)
    if stats.path and stats.count:
        session.watcher.obs.steps = stats
    report = session.report(error, target=str(path))
    report.script = True
    return report


def _forget_marked(finder: StepModuleFinder) -> None:
    """Modules compiled with marks leave sys.modules: a later import (the next profile in
    this process) compiles them afresh."""
    marked = {os.path.realpath(s.path) for s in finder.marked}
    for name, module in list(sys.modules.items()):
        origin = getattr(module, "__file__", None)
        if origin and os.path.realpath(origin) in marked:
            del sys.modules[name]


# ---------------------------------------------------------------------------------------------
# module:function


def load_callable(spec: str) -> Callable[..., Any]:
    """``pkg.module:function`` or ``path/to/file.py:function`` (``Class.method`` allowed)."""
    module_part, sep, attr = spec.rpartition(":")
    if not sep or not module_part or not attr:
        raise ProfileInputError(f"expected MODULE:FUNCTION or FILE.py:FUNCTION, got {spec!r}")
    module = _import(module_part)
    obj: Any = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise ProfileInputError(
                f"{module_part} has no attribute {attr!r}") from None
    if not callable(obj):
        raise ProfileInputError(f"{spec} is not callable")
    return obj


def _import(name: str) -> Any:
    if name.endswith(".py") or os.sep in name or "/" in name:
        path = Path(name)
        if not path.is_file():
            raise ProfileInputError(f"no such file: {name}")
        try:  # the file is imported and executed, as bench files are
            return import_file(path, prefix="_tfperf_profiled_")
        except UserCodeError as exc:
            raise ProfileInputError(str(exc)) from None
    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # as `python -m` does: the working directory imports
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name and name.startswith(exc.name):
            raise ProfileInputError(f"no module named {name!r}") from None
        raise ProfileInputError(f"importing {name} failed: {exc}") from None
    except (Exception, SystemExit) as exc:
        raise ProfileInputError(
            f"importing {name} failed: {type(exc).__name__}: {exc}") from None


def make_inputs(spec: str | None) -> tuple[tuple, dict]:
    """Call the ``--inputs`` function: a tuple → positional args, a dict → keyword args."""
    if spec is None:
        return (), {}
    fn = load_callable(spec)
    try:
        value = fn()
    except (Exception, SystemExit) as exc:
        raise ProfileInputError(f"the inputs function {spec} raised "
                                f"{type(exc).__name__}: {exc}") from None
    if isinstance(value, tuple):
        return value, {}
    if isinstance(value, dict):
        return (), value
    return (value,), {}


def profile(fn: Callable[..., Any], *args: Any, steps: int = DEFAULT_FUNCTION_STEPS,
            capture: bool = True, logdir: str | Path | None = None,
            target: str | None = None, **kwargs: Any) -> ProfileReport:
    """Call ``fn(*args, **kwargs)`` once to warm up, then ``steps`` times, under observation.

    The warm-up call is watched (its traces count) but not captured; the ``steps`` calls are
    captured by the TF profiler with step markers. Results are synced (computed) after each
    call, outside the observation.
    """
    from tfperf.core.measure import sync

    if steps < 1:
        raise ValueError("steps must be at least 1")
    session = _Session(capture=capture, logdir=logdir)
    error: BaseException | None = None
    try:
        with session.watcher:
            result = fn(*args, **kwargs)
            with session.watcher.paused():
                sync(result)
            with session.capturing():
                for i in range(steps):
                    with _step(session, i):
                        result = fn(*args, **kwargs)
                        with session.watcher.paused():
                            sync(result)
    except KeyboardInterrupt:
        raise
    except (Exception, SystemExit) as exc:  # the function's own error, sys.exit() included
        error = exc
    name = target or getattr(fn, "__qualname__", None) or repr(fn)
    return session.report(error, target=name)


@contextmanager
def _step(session: _Session, number: int) -> Iterator[None]:
    if session.capture is not None and session.capture.running:
        with capture_mod.step(number):
            yield
    else:
        yield


def _from_bench_file(spec: str, quick: bool) -> tuple[Callable[..., Any], tuple, dict] | None:
    """``FILE.py:NAME`` where FILE is a ``tfperf bench`` file: the variant and its inputs.

    None when FILE declares no variants (then it is an ordinary module).
    """
    path, _, name = spec.rpartition(":")
    if not path.endswith(".py") or not Path(path).is_file():
        return None
    try:
        from tfperf.bench.loader import BenchFileError, load_bench_file
    except ImportError:
        return None
    try:
        bench_file = load_bench_file(path)
    except BenchFileError as exc:
        if "declares no variants" in str(exc):
            return None
        raise ProfileInputError(str(exc)) from None
    match = [v for v in bench_file.variants
             if name in (v.name, getattr(v.fn, "__name__", None))]
    if not match:
        names = ", ".join(v.name for v in bench_file.variants)
        raise ProfileInputError(f"{path} declares no variant {name!r} (it has: {names})")
    variant = match[0]
    try:  # under --quick, the variant's quick_batch slice, as `tfperf bench --quick` runs it
        args, kwargs = bench_file.inputs_for(variant, quick)
    except BenchFileError as exc:
        raise ProfileInputError(str(exc)) from None
    return variant.fn, args, kwargs


def run_function(spec: str, inputs: str | None = None, *, steps: int | None = None,
                 capture: bool = True, logdir: str | Path | None = None,
                 quick: bool = False) -> ProfileReport:
    """Profile ``MODULE:FUNCTION`` (or a bench file's variant) with its inputs."""
    from_bench = _from_bench_file(spec, quick)
    if from_bench is not None:
        fn, args, kwargs = from_bench
        if inputs is not None:
            args, kwargs = make_inputs(inputs)
    else:
        fn = load_callable(spec)
        args, kwargs = make_inputs(inputs)
    return profile(fn, *args, steps=steps or DEFAULT_FUNCTION_STEPS, capture=capture,
                   logdir=logdir, target=spec, **kwargs)


def resolve_function(spec: str, inputs: str | None = None, *, quick: bool = False
                     ) -> tuple[Callable[..., Any], tuple, dict]:
    """``MODULE:FUNCTION`` (or a bench file's variant) and its arguments, as
    :func:`run_function` resolves them (other views of a function, ``--memory``, use it)."""
    from_bench = _from_bench_file(spec, quick)
    if from_bench is not None:
        fn, args, kwargs = from_bench
        if inputs is not None:
            args, kwargs = make_inputs(inputs)
        return fn, args, kwargs
    fn = load_callable(spec)
    args, kwargs = make_inputs(inputs)
    return fn, args, kwargs
