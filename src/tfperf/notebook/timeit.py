"""``%tftimeit``: one statement through the measurement core, told in ``%timeit``'s words.

The core (:mod:`tfperf.core.measure`) syncs the device after each block and times the first
call apart. What this module adds is the notebook's view of that first call: when TensorFlow
is loaded, the first call runs under :class:`tfperf.profile.watcher.Watcher` (function hooks
only), which times the tracing step on its own; what the first call took beyond tracing and
one steady-state call is the compile (XLA for ``jit_compile=True`` functions) and other
one-time work.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tfperf.core.measure import Measurement, Timer, format_seconds, measure

DEFAULT_REPEAT = 7  # runs when -n is given without -r, as %timeit
DEFAULT_BUDGET = 2.0


@dataclass
class TimeitResult(Measurement):
    """The core's :class:`Measurement` plus what the first call was spent on."""

    statement: str = ""
    traces: int = 0               # tf.function traces during the first call
    trace_s: float | None = None  # time in TensorFlow's tracing step (None: not observed)
    compile_s: float | None = None  # first call − tracing − one steady call, when positive
    xla: bool = False             # a traced function has jit_compile=True

    def line(self) -> str:
        """``3.8 ms ± 0.2 ms per loop (median ± IQR/2 of 7 runs, 100 loops each); first call
        152 ms (trace 40 ms + XLA compile 110 ms)``."""
        loops = "loop" if self.number == 1 else "loops"
        if self.runs >= 2:
            fig = max(2, min(self.significant_figures, 4))
            head = (f"{format_seconds(self.median, fig)} ± {format_seconds(self.iqr / 2, 2)} "
                    f"per loop (median ± IQR/2 of {self.runs} runs, {self.number} {loops} "
                    "each)")
        else:
            head = (f"{format_seconds(self.median, 3)} per loop (1 run, {self.number} "
                    f"{loops})")
        return f"{head}; first call {self.first_call_text()}"

    def first_call_text(self) -> str:
        first = format_seconds(self.first_call_s, 3)
        if self.trace_s is None or not self.traces:
            return first
        parts = [f"trace {format_seconds(self.trace_s, 2)}"]
        if self.compile_s is not None:
            what = "XLA compile" if self.xla else "compile and first run"
            parts.append(f"{what} {format_seconds(self.compile_s, 2)}")
        return f"{first} ({' + '.join(parts)})"

    def text(self) -> str:
        lines = [self.line()]
        if self.warning:
            lines.append(f"warning: {self.warning}")
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines)

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(self.text())


def _first_call(timer: Timer) -> tuple[float, int, float | None, bool]:
    """(seconds, traces, trace seconds or None, any jit_compile function) of the first call."""
    if "tensorflow" not in sys.modules:  # plain Python / NumPy: nothing to trace
        seconds, _ = timer.first_call()
        return seconds, 0, None, False
    from tfperf.profile.watcher import Watcher

    with Watcher(functions=True, host_syncs=False, eager_ops=False) as w:
        seconds, _ = timer.first_call()
    fns = w.obs.functions
    traces = sum(f.traces for f in fns)
    exact = "functions" not in w.obs.unavailable and "trace_time" not in w.obs.unavailable
    trace_s = sum(f.trace_s for f in fns) if exact else None
    return seconds, traces, trace_s, any(f.jit_compile and f.traces for f in fns)


def timeit(fn: Callable[[], Any], *, number: int | None = None, repeat: int | None = None,
           budget: float | None = None, statement: str = "") -> TimeitResult:
    """Time ``fn()``: the first call apart (split when TF traced), then adaptive runs through
    :func:`tfperf.core.measure.measure`, or exactly ``repeat`` runs of ``number`` calls."""
    budget = budget if budget is not None else DEFAULT_BUDGET
    timer = Timer(fn)
    first, traces, trace_s, xla = _first_call(timer)
    if number is None and repeat is None:
        m = measure(fn, max_time=budget, label=statement, interruptible=True)
        times, n, warm, notes = m.times, m.number, m.warmup_runs, m.notes
    else:
        timer.block(1)  # warm-up: caches and allocators settle
        n = number or timer.calibrate()
        times, notes, warm = [], [], 1
        try:
            for _ in range(repeat or DEFAULT_REPEAT):
                times.append(timer.block(n))
        except KeyboardInterrupt:  # Ctrl-C: the runs so far are the result
            if not times:
                raise
            notes.append(f"interrupted (Ctrl-C) after {len(times)} runs")
    result = TimeitResult(times=list(times), number=n, first_call_s=first, warmup_runs=warm,
                          label=statement, notes=list(notes), statement=statement,
                          traces=traces, trace_s=trace_s, xla=xla)
    if trace_s is not None and traces:
        rest = first - trace_s - result.median
        result.compile_s = rest if rest > 0 else None
    result.total_s = sum(times) * n + first
    return result
