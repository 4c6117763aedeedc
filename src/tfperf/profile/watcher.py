"""Runtime observation: ``tf.function`` traces and their causes, host syncs, eager op storms.

Four hooks, installed on ``__enter__`` and removed on ``__exit__``:

* ``tf.function`` calls: ``Function.__call__`` is wrapped; its public
  ``experimental_get_tracing_count()`` before and after tells whether the call traced, and the
  tracing step (``tracing_compilation._create_concrete_function``) is timed apart so trace
  time and run time are separate. Arguments are described only when a call traced.
* host syncs: ``_EagerTensorBase._numpy`` is wrapped; ``.numpy()``, ``np.asarray(t)``,
  ``float(t)``, ``int(t)``, ``bool(t)``, ``t.__index__``, formatting and printing all go
  through it, so one hook sees every tensor→host conversion.
* eager ops: an op callback (``op_callbacks.add_op_callback``, the hook tfdbg uses) sees every
  op executed eagerly on this thread. An op's time is its own execution (from TF's execute
  entry, ``pywrap_tfe.TFE_Py_FastPathExecute`` / ``TFE_Py_Execute``, to the callback) plus,
  when the previous event was an op of the same statement, the time since that op (TF's
  Python dispatch and the statement's own Python between them: in an op storm, where the time
  goes). Time between statements (pure Python, an iterator's teardown, a sleep) is charged to
  no line: before, a lone op after a long gap (a final ``print(tf.reduce_mean(x))``) was
  charged the whole gap.
* node placement: TF's graph collection records which device ran each graph node of the
  functions first run in the block (``placement.py``); a capture is split per replica with it.

Every private hook is looked up with a guard: a TensorFlow without it degrades to "not
available" (listed in ``Observation.unavailable``), never to a crash. Events are attributed
to the innermost user frame (``attribution.user_site``). tfperf's own work inside the block
(a capture started or stopped in it, its bookkeeping, syncing a profiled function's result)
runs "paused": its events are not recorded and its time is kept out of ``wall_s``
(``Observation.overhead_s`` holds it).
"""

from __future__ import annotations

import importlib
import inspect
import sys
import threading
import time
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tfperf.profile import attribution, retrace
from tfperf.profile.capture import Capture, default_logdir
from tfperf.profile.observation import FunctionStats, LineStats, Observation
from tfperf.profile.placement import PlacementRecorder

# Private TensorFlow hooks, by (module, attribute path). Looked up when a watch starts; a
# TensorFlow without one reports it in ``Observation.unavailable`` instead of crashing.
FUNCTION_CLASS = ("tensorflow.python.eager.polymorphic_function.polymorphic_function",
                  "Function")
TRACE_STEP = ("tensorflow.python.eager.polymorphic_function.tracing_compilation",
              "_create_concrete_function")
OPS_TICK = 1024  # eager ops between two calls of on_ops
EAGER_TENSOR_BASE = ("tensorflow.python.framework.ops", "_EagerTensorBase")
# Where every eager op enters TF's C++ (the generated op wrappers look these up at call time)
EAGER_EXECUTE = ("tensorflow.python.pywrap_tfe", ("TFE_Py_FastPathExecute", "TFE_Py_Execute"))


def _lookup(where: tuple[str, str]) -> tuple[Any, Any]:
    """(module, attribute) for a hook location; raises ImportError/AttributeError if absent."""
    import importlib

    module = importlib.import_module(where[0])
    return module, getattr(module, where[1])


class _Local(threading.local):
    paused = False
    last_event = 0.0
    exec_start = 0.0  # when the latest eager op entered TF's execute (EAGER_EXECUTE)
    # (user frame id, code, line, instruction) of the latest eager op; None after any other
    # event: an op continues the same statement only right after another op of it
    statement: tuple[int, Any, int, int] | None = None
    trace_s = 0.0
    depth = 0  # nesting of observed tf.function calls on this thread
    # (graph op count, XLA must-compile) of the latest concrete function traced here
    last_graph: tuple[int | None, bool] | None = None


class Watcher:
    """Observe TensorFlow at run time inside a ``with`` block. See :func:`watch`."""

    def __init__(self, *, functions: bool = True, host_syncs: bool = True,
                 eager_ops: bool = True, placement: bool | None = None, capture: bool = False,
                 logdir: str | Path | None = None,
                 on_function_call: Callable[[], None] | None = None,
                 on_ops: Callable[[], None] | None = None):
        self.obs = Observation()
        # The placement map only serves a capture: by default on when this watch captures
        # (a watch without one, as bench and tune use, pays nothing for it).
        self._want = {"functions": functions, "host_syncs": host_syncs, "eager_ops": eager_ops,
                      "placement": capture if placement is None else placement}
        self._placement = PlacementRecorder()
        # watch(capture=True): a TF profiler capture of the block, read back by report()
        self.capture = (Capture(Path(logdir) if logdir else default_logdir())
                        if capture else None)
        self._local = _Local()
        self._undo: list[Callable[[], None]] = []
        self._fn_stats: dict[int, FunctionStats] = {}
        self._fn_refs: list[Any] = []  # keep observed Function objects alive: ids stay unique
        self._signatures: dict[int, inspect.Signature | None] = {}
        # code of tf.function's call machinery (TF's, and this watcher's hook on it): a sync
        # made under it, with no user frame nearer, is TF's own (``Observation.tf_own_syncs``)
        self._call_codes: set[types.CodeType] = set()
        self._entry_codes: set[types.CodeType] = set()  # the hook on tf.function's __call__
        self._lock = threading.Lock()
        self._start = 0.0
        self._active = False
        self._measuring = False  # between the block's start and end: own time counts
        self.on_function_call = on_function_call
        self.on_ops = on_ops  # called every OPS_TICK eager ops (a capture's memory check)
        self.error: BaseException | None = None

    # -- context manager -------------------------------------------------------------------

    def __enter__(self) -> Watcher:
        if self._active:
            raise RuntimeError("this watch() is already active")
        self._active = True
        for name, install in (("functions", self._install_function_hook),
                              ("host_syncs", self._install_sync_hook),
                              ("eager_ops", self._install_op_callback),
                              ("placement", self._install_placement)):
            if self._want[name]:
                try:
                    install()
                except Exception as exc:  # a TF without the hook: say so, observe the rest
                    self.obs.unavailable[name] = f"{type(exc).__name__}: {exc}"
        if self.capture is not None:
            with self.paused():
                self.capture.start()
        self._start = self._local.last_event = time.perf_counter()
        self._local.statement = None
        self._measuring = True
        return self

    def __exit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> None:
        self._measuring = False
        self.obs.wall_s += time.perf_counter() - self._start
        if self.capture is not None:
            with self.paused():
                self.capture.stop()
        self.error = exc
        while self._undo:
            self._undo.pop()()
        self._active = False
        self.obs.functions = list(self._fn_stats.values())
        # tfperf's own time inside the block is not the run's
        self.obs.wall_s = max(self.obs.wall_s - self.obs.overhead_s, 0.0)

    @contextmanager
    def paused(self) -> Iterator[None]:
        """tfperf's own work: events inside are not recorded, and its time (outermost block
        only) is kept out of the run's wall time."""
        local = self._local
        previous = local.paused
        local.paused = True
        t0 = time.perf_counter()
        try:
            yield
        finally:
            local.paused = previous
            now = local.last_event = time.perf_counter()
            local.statement = None
            if not previous and self._measuring:
                self.obs.overhead_s += now - t0

    def report(self, file: Any = None, *, show: bool = True, **kwargs: Any) -> Any:
        """Print the text report (to ``file``, default stdout) unless ``show=False``; return it."""
        from tfperf.profile.report import build_report

        if self.capture is not None and "capture" not in kwargs:
            kwargs.update(self._capture_summary())
        rep = build_report(self.obs, error=self.error, **kwargs)
        if show:
            print(rep.text(), file=file or sys.stdout)
        return rep

    def _capture_summary(self) -> dict[str, Any]:
        """build_report's capture arguments for watch(capture=True)."""
        from tfperf.profile import xplane

        cap = self.capture
        assert cap is not None
        out: dict[str, Any] = {"logdir": str(cap.logdir), "capture": None,
                               "capture_note": cap.error or "no capture was written"}
        if cap.xplane is not None:
            try:
                out.update(capture=xplane.summarise(cap.xplane), capture_note=None)
            except xplane.CaptureError as exc:
                out["capture_note"] = f"capture unreadable: {exc}"
        return out

    # -- tf.function calls -----------------------------------------------------------------

    def _install_function_hook(self) -> None:
        _, cls = _lookup(FUNCTION_CLASS)
        original_call = cls.__call__
        if not hasattr(cls, "experimental_get_tracing_count"):
            raise AttributeError("tf.function has no experimental_get_tracing_count()")
        watcher = self

        def observed_call(fn: Any, *args: Any, **kwargs: Any) -> Any:
            local = watcher._local
            if local.paused:
                return original_call(fn, *args, **kwargs)
            if watcher._placement.pending:  # enabling graph collection is tfperf's own cost
                with watcher.paused():
                    watcher._placement.before_function_call()
            before = fn.experimental_get_tracing_count()
            trace_before = local.trace_s
            local.depth += 1
            t0 = time.perf_counter()
            try:
                return original_call(fn, *args, **kwargs)
            finally:
                t1 = time.perf_counter()
                local.depth -= 1
                top_level = local.depth == 0
                local.paused = True  # the bookkeeping (and a capture it stops) is tfperf's
                try:
                    watcher._record_call(fn, args, kwargs, before, t1 - t0,
                                         local.trace_s - trace_before, top_level)
                finally:
                    local.paused = False
                    now = local.last_event = time.perf_counter()
                    local.statement = None
                    if top_level and watcher._measuring:
                        watcher.obs.overhead_s += now - t1

        cls.__call__ = observed_call
        self._call_codes.add(observed_call.__code__)
        self._entry_codes.add(observed_call.__code__)
        self._undo.append(lambda: setattr(cls, "__call__", original_call))
        self._install_trace_timer()

    def _install_trace_timer(self) -> None:
        try:
            tc, original = _lookup(TRACE_STEP)
        except (ImportError, AttributeError) as exc:
            self.obs.unavailable["trace_time"] = (
                f"{exc}; trace time is the whole duration of the calls that traced")
            return
        local = self._local

        def timed(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                concrete = original(*args, **kwargs)
            finally:
                if local.depth <= 1:  # a nested trace is inside its parent's time already
                    local.trace_s += time.perf_counter() - t0
            local.last_graph = _graph_facts(concrete, args)
            return concrete

        setattr(tc, TRACE_STEP[1], timed)
        self._undo.append(lambda: setattr(tc, TRACE_STEP[1], original))

    def _record_call(self, fn: Any, args: tuple, kwargs: dict, before: int, elapsed: float,
                     traced_s: float, top_level: bool) -> None:
        try:
            after = fn.experimental_get_tracing_count()
        except Exception:
            after = before
        with self._lock:
            stats = self._fn_stats.get(id(fn))
            if stats is None:
                stats = self._new_function_stats(fn)
                if self._want["placement"]:  # a function first run before the watch
                    self._placement.add_function(fn)
            if top_level:
                stats.calls += 1
                stats.total_s += elapsed
            new_traces = max(after - before, 0)
            if new_traces > 1 and before == 0 and getattr(fn, "_created_variables", False):
                # a first call that created variables: TF traced it to create them, then
                # again to run without (private flag: read, guarded). One trace is the call's.
                stats.variable_traces += new_traces - 1
                new_traces = 1
            if new_traces:
                stats.traces += new_traces
                if self._local.last_graph is not None:
                    stats.graph_ops, jit = self._local.last_graph
                    stats.xla_compilations += new_traces if jit else 0
                    self._local.last_graph = None
                exact = "trace_time" not in self.obs.unavailable
                stats.trace_s += (traced_s if exact else elapsed) if top_level else 0.0
                self._explain_trace(fn, stats, args, kwargs)
        if top_level and self.on_function_call is not None:
            self.on_function_call()

    def _new_function_stats(self, fn: Any) -> FunctionStats:
        py = getattr(fn, "python_function", None) or getattr(fn, "_python_function", None)
        # A tf.function method bound to an instance runs TF's wrapper, which keeps the user's
        # method bound to the instance (``__original_wrapped__``; ``__wrapped__`` until
        # AutoGraph swaps in its conversion): each instance has its own tf.function.
        bound = getattr(py, "__original_wrapped__", None) or getattr(py, "__wrapped__", None)
        method = isinstance(bound, types.MethodType)
        code = getattr(bound if method else py, "__code__", None)
        name = getattr(py, "__qualname__", None) or getattr(fn, "name", None) or repr(fn)
        stats = FunctionStats(
            name=str(name),
            code_key=(code.co_filename, code.co_firstlineno) if code else None,
            first_site=attribution.caller_site(1),
            jit_compile=bool(getattr(fn, "_jit_compile", False)),  # private: read, guarded
            method=method,
        )
        try:
            self._signatures[id(fn)] = inspect.signature(py) if py is not None else None
        except (TypeError, ValueError):
            self._signatures[id(fn)] = None
        self._fn_stats[id(fn)] = stats
        self._fn_refs.append(fn)
        return stats

    def _explain_trace(self, fn: Any, stats: FunctionStats, args: tuple, kwargs: dict) -> None:
        try:
            bound = retrace.bind_arguments(self._signatures.get(id(fn)), args, kwargs)
            current = {name: retrace.describe(value) for name, value in bound.items()}
        except Exception as exc:  # describing must never break the user's call
            current = {"(arguments)": ("value", "str", f"not described: {exc}")}
        for name, desc in current.items():
            stats.seen.setdefault(name, set()).add(retrace.example(desc))
        for change in retrace.retrace_changes(stats.signatures, current):
            key = (change.argument, change.kind)
            summary = stats.causes.get(key)
            if summary is None:
                summary = stats.causes[key] = retrace.CauseSummary(change.argument, change.kind)
            summary.add(change)
        if len(stats.signatures) < 200:  # bound the memory a retrace storm can take
            stats.signatures.append(current)

    # -- node placement (per-replica figures) ----------------------------------------------

    def _install_placement(self) -> None:
        self._placement.start()

        def stop() -> None:
            self.obs.placement = self._placement.stop()
            if self._placement.error:
                self.obs.unavailable["placement"] = self._placement.error

        self._undo.append(stop)

    # -- host syncs ------------------------------------------------------------------------

    def _install_sync_hook(self) -> None:
        _, cls = _lookup(EAGER_TENSOR_BASE)
        if "_numpy" not in cls.__dict__:
            raise AttributeError(f"{cls.__name__} has no _numpy method")
        original = cls.__dict__["_numpy"]
        local, table, tf_own = self._local, self.obs.host_syncs, self.obs.tf_own_syncs
        call_codes, entry = self._call_codes, self._entry_codes
        machinery = _module_file(FUNCTION_CLASS[0])
        find_user = attribution.user_frame_and_callee
        package_of = attribution.third_party_package
        library_of = attribution.library_package
        getframe = sys._getframe

        def observed_numpy(tensor: Any) -> Any:
            if local.paused:
                return original(tensor)
            t0 = time.perf_counter()
            try:
                return original(tensor)
            finally:
                t1 = time.perf_counter()
                caller = getframe(1)
                frame, callee = find_user(caller)
                site = _site_of(frame)
                inside = _under_call(caller, frame, call_codes, machinery)
                if inside is not None:
                    site = _caller_site(inside, entry)
                    tf_own[site] = tf_own.get(site, 0) + 1
                else:
                    stats = table.get(site)
                    if stats is None:
                        stats = table[site] = LineStats(site[0], site[1])
                    stats.count += 1
                    stats.total_s += t1 - t0
                    stats.kinds[_conversion_name(caller.f_code.co_name)] += 1
                    package = package_of(callee.f_code) if callee is not None else ""
                    if not package and callee is not None and callee.f_code.co_name not in \
                            _OWN_CONVERSIONS and library_of(callee.f_code) == "tensorflow":
                        package = "tensorflow"  # inside a TF API the line called (tape.gradient)
                    if package:  # the line called a library (Keras's fit), which converted
                        stats.made_in[package] += 1
                local.last_event = time.perf_counter()
                local.statement = None

        cls._numpy = observed_numpy
        self._undo.append(lambda: setattr(cls, "_numpy", original))

    # -- eager ops -------------------------------------------------------------------------

    def _install_op_callback(self) -> None:
        from tensorflow.python.eager import context
        from tensorflow.python.framework import op_callbacks

        if not context.executing_eagerly():
            raise RuntimeError("not executing eagerly (TF1 graph mode): no eager ops to watch")
        local, table, tf_own = self._local, self.obs.eager_ops, self.obs.tf_own_ops
        obs = self.obs
        call_codes, entry = self._call_codes, self._entry_codes
        machinery = _module_file(FUNCTION_CLASS[0])
        user_frame = attribution.user_frame_and_callee
        package_of = attribution.third_party_package
        getframe = sys._getframe
        perf_counter = time.perf_counter
        self._install_execute_timer()
        ticks = [0]

        def on_op(op_type: str, inputs: Any, attrs: Any, outputs: Any,
                  op_name: Any = None, graph: Any = None) -> None:
            # graph: an op being added to a graph while tracing; function names: a whole
            # tf.function run (observed by the function hook).
            if graph is not None or local.paused:
                return None
            if isinstance(op_type, bytes):  # some fast-path ops (tf.reshape) report bytes
                op_type = op_type.decode()
            if op_type.startswith("__"):
                return None
            now = perf_counter()
            frame, callee = user_frame(getframe(1))
            inside = _under_call(getframe(1), frame, call_codes, machinery) \
                if local.depth else None
            if inside is not None:  # TF creating and checking a first call's variables
                site = _caller_site(inside, entry)
                tf_own[site] = tf_own.get(site, 0) + 1
                return None
            if frame is None:
                site, statement = ("<unknown>", 0), None
            else:
                site = (frame.f_code.co_filename, frame.f_lineno)
                statement = (id(frame), frame.f_code, frame.f_lineno, frame.f_lasti)
            if local.depth:  # run while a tf.function traces: its time is the function's
                spent = 0.0
            elif _continues(local.statement, statement):
                spent = now - local.last_event
            else:  # its own execution only: what ran before it belongs to no line
                spent = now - max(local.exec_start, local.last_event)
            stats = table.get(site)
            if stats is None:
                stats = table[site] = LineStats(site[0], site[1])
            stats.count += 1
            stats.total_s += spent
            stats.kinds[op_type] += 1
            obs.eager_op_width += max(1, len(inputs or ()), len(outputs or ()))
            if callee is not None:
                package = package_of(callee.f_code)
                if package:  # run inside a library the line called (a Keras layer, optimizer)
                    stats.made_in[package] += 1
            local.statement = statement
            ticks[0] += 1
            if ticks[0] % OPS_TICK == 0 and self.on_ops is not None:
                with self.paused():
                    self.on_ops()
            local.last_event = perf_counter()
            return None

        op_callbacks.add_op_callback(on_op)
        self._undo.append(lambda: op_callbacks.remove_op_callback(on_op))

    def _install_execute_timer(self) -> None:
        """Note when each eager op enters TF's execute, so an op is charged its own time."""
        try:
            module, _ = _lookup((EAGER_EXECUTE[0], EAGER_EXECUTE[1][0]))
            originals = {name: getattr(module, name) for name in EAGER_EXECUTE[1]}
        except (ImportError, AttributeError) as exc:
            self.obs.unavailable["eager_op_time"] = (
                f"{exc}; an eager op is charged the time since the previous event")
            return
        local, perf_counter = self._local, time.perf_counter

        def timed(original: Callable[..., Any]) -> Callable[..., Any]:
            def entry(*args: Any) -> Any:
                local.exec_start = perf_counter()
                return original(*args)
            return entry

        def restore() -> None:
            for name, original in originals.items():
                setattr(module, name, original)

        for name, original in originals.items():
            setattr(module, name, timed(original))
        self._undo.append(restore)


def _continues(previous: tuple | None, current: tuple | None) -> bool:
    """The op at ``current`` is a later op of the same statement as the op at ``previous``:
    same frame and line, a later instruction (a loop coming back to the line may have run
    other lines' Python in between, so it does not continue)."""
    return (previous is not None and current is not None and previous[:3] == current[:3]
            and current[3] > previous[3])


def _graph_facts(concrete: Any, trace_args: tuple) -> tuple[int | None, bool]:
    """(ops in the traced graph, whether XLA must compile it): a trace of a
    ``jit_compile=True`` function is one XLA compilation when it first runs."""
    try:
        ops: int | None = len(concrete.graph.get_operations())
    except Exception:  # a TF whose concrete function has no graph: the count is unknown
        ops = None
    options = trace_args[3] if len(trace_args) > 3 else None
    attributes = getattr(options, "attributes", None) or {}
    return ops, bool(attributes.get("_XlaMustCompile"))


# The frame a line's own conversion calls first: ``t.numpy()``, ``float(t)``,
# ``np.asarray(t)``, ``print(t)``, ``tf.get_static_value(t)``. Any other TF function the line
# called (``tape.gradient``) converted on its own account.
_OWN_CONVERSIONS = frozenset({"numpy", "__array__", "__float__", "__int__", "__bool__",
                              "__index__", "__format__", "__complex__", "__reduce__", "__str__",
                              "__repr__", "__iter__", "get_static_value", "_numpy"})

_CONVERSIONS = {"numpy": ".numpy()", "__array__": "np.asarray()", "__float__": "float()",
                "__int__": "int()", "__bool__": "bool()", "__index__": "index",
                "__format__": "format", "__complex__": "complex()", "__reduce__": "pickle"}


_OWN_DIR = str(Path(__file__).resolve().parent)


def _site_of(frame: Any) -> tuple[str, int]:
    return (frame.f_code.co_filename, frame.f_lineno) if frame is not None else ("<unknown>", 0)


def _module_file(module: str) -> str | None:
    try:
        found = importlib.import_module(module)
    except ImportError:  # another TF layout: the watcher's own call hook still tells
        return None
    return getattr(found, "__file__", None)  # as its code objects spell it


def _under_call(frame: Any, user: Any, codes: set[types.CodeType],
                machinery: str | None) -> Any:
    """The frame of a tf.function call's own code between ``frame`` (a conversion or an
    eager op) and the user's frame, reached through TF's code only, else None: TF ran it for
    itself (a first call creating variables and checking them). Another library's code on
    the way (Keras's step run eagerly) or the user's body nearer makes it not TF's own."""
    while frame is not None and frame is not user:
        code = frame.f_code
        if code in codes or (machinery is not None and code.co_filename == machinery):
            return frame
        if attribution.library_package(code) != "tensorflow" and \
                not code.co_filename.startswith(_OWN_DIR):  # tfperf's hooks are transparent
            return None
        frame = frame.f_back
    return None


def _caller_site(inside: Any, codes: set[types.CodeType]) -> tuple[str, int]:
    """The user line that called the tf.function: above the call's entry (the watcher's hook
    on ``__call__``), not the AutoGraph copy of its body that a variable was created from."""
    frame = inside
    while frame is not None and frame.f_code not in codes:
        frame = frame.f_back
    return _site_of(attribution.user_frame(frame if frame is not None else inside))


def _conversion_name(caller: str) -> str:
    return _CONVERSIONS.get(caller, caller)


def watch(**kwargs: Any) -> Watcher:
    """Observe TensorFlow inside a ``with`` block; ``w.report()`` afterwards.

    >>> with watch() as w:                     # doctest: +SKIP
    ...     train()
    >>> w.report()                             # doctest: +SKIP

    Keyword arguments switch hooks off: ``functions``, ``host_syncs``, ``eager_ops``.
    ``capture=True`` also records a TF profiler capture of the block (into ``logdir``, default
    a new temporary folder) that ``w.report()`` reads back: op time, and per replica under
    ``MirroredStrategy``; steps are then the top-level ``tf.function`` calls. ``placement``
    (which device ran each graph node, to split a capture per replica) is on with a capture;
    ``placement=True`` keeps it on for a capture taken by other means (``w.report(capture=)``).
    Eager ops are observed on the thread that enters the block; function calls and host
    syncs on every thread.
    """
    return Watcher(**kwargs)
