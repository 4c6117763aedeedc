"""The one timer of tfperf: forced completion, first call apart, warm-up, adaptive runs, statistics.

Every capability that times tensor code goes through this module (``tfperf bench`` and its
article suite, the doctor's live matmul check), so that all figures tfperf prints mean the
same thing.

The API, smallest first:

``sync(value)``
    Block until ``value`` (any nesting of TF tensors, variables, NumPy arrays, Python values)
    and all device work queued before it are really computed, without copying to the host.
``Timer(fn, args)``
    Times one callable: ``first_call()``, ``calibrate()``, ``block(number)``. Used directly
    when several variants must be interleaved (``tfperf.bench.compare``).
``measure(fn, ...) -> Measurement``
    The whole procedure for one callable: first call timed apart (trace/compile cost),
    warm-up, a block size grown until a block outlasts the clock's noise, then blocks until
    the spread is small or the time budget is spent.
``Measurement``
    Per-call times with median, IQR, min, mean, runs, the significant figures the spread
    supports and a noise warning; ``to_dict()`` for JSON.

TensorFlow is never imported here: ``sync`` only looks at TensorFlow when the caller's
program has already imported it, so this module also times plain Python and NumPy code.
"""

from __future__ import annotations

import gc
import math
import statistics
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

#: Relative IQR (IQR / median) above which a measurement is flagged as noisy.
NOISY_REL_IQR = 0.10

Clock = Callable[[], float]

# ---------------------------------------------------------------------------------------------
# forced completion


def leaves(value: Any) -> list[Any]:
    """Flatten lists, tuples, dicts, namedtuples and dataclass-free containers to their leaves."""
    out: list[Any] = []
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, Mapping):
            stack.extend(v.values())
        elif isinstance(v, (list, tuple)):
            stack.extend(v)
        else:
            out.append(v)
    return out


def _tf_module() -> Any | None:
    """TensorFlow if the program has imported it already; never imports it."""
    return sys.modules.get("tensorflow")


class _TFHooks:
    """TensorFlow's functions ``sync`` calls, looked up once: an attribute lookup through
    ``tf.config.experimental`` costs microseconds, as much as the call itself."""

    def __init__(self, tf: Any) -> None:
        self.tf = tf
        self.executing_eagerly = tf.executing_eagerly
        self.synchronous = tf.config.experimental.get_synchronous_execution
        self.sync_devices = getattr(getattr(tf.test, "experimental", None), "sync_devices",
                                    None)
        # GPUs/TPUs run kernels on streams that return before the kernel ends. The device
        # list cannot change once TF is initialised, so it is read once.
        self.accelerator = any(d.device_type != "CPU" for d in tf.config.list_logical_devices())

    def may_be_pending(self) -> bool:
        """True when some TF work may still be pending after an op returns: on an
        accelerator, or on CPU after ``set_synchronous_execution(False)``."""
        return self.accelerator or not self.synchronous()


_HOOKS: list[_TFHooks] = []


def _hooks(tf: Any) -> _TFHooks:
    if not _HOOKS or _HOOKS[0].tf is not tf:
        _HOOKS[:] = [_TFHooks(tf)]
    return _HOOKS[0]


def _read_one_element(tf: Any, tensor: Any) -> None:
    # Reading one element waits for the kernel that produced ``tensor`` (kernels on a device
    # stream run in order) but copies 4 bytes, not the whole result.
    if tensor.shape.num_elements() == 0:
        return
    tf.reshape(tensor, [-1])[:1].numpy()


def sync(value: Any = None) -> None:
    """Block until ``value`` and the device work behind it have completed.

    - **GPU / asynchronous TF**: ``tf.test.experimental.sync_devices()`` (TF ≥ 2.14) runs a
      ``SyncDevice`` op on every device, then waits for TF's async queue; nothing is copied to
      the host. It is called whatever ``value`` holds: a variant that returns a
      ``tf.Variable``, an ``assign_add`` result, a ``RaggedTensor``, a Python number or
      nothing at all may still have its work queued. On older TF, one element of each tensor
      leaf is read back instead.
    - **CPU, synchronous eager (TF's default)**: nothing to do, and nothing is done. An eager
      op on the CPU runs its kernel before the ``EagerTensor`` is returned, and a
      ``tf.function`` call returns only when its outputs are computed, so the result exists
      when the call returns; adding a sync would only add its own cost to the timing.
    - **NumPy arrays and Python values**: complete by construction. Objects with a
      ``block_until_ready()`` method (JAX arrays) are waited on.

    ``value`` may be any nesting of lists, tuples and dicts. ``sync()`` with no value
    synchronises every TF device when some may be asynchronous.
    """
    found = leaves(value)
    for leaf in found:
        wait = getattr(leaf, "block_until_ready", None)
        if callable(wait):
            wait()
    tf = _tf_module()
    if tf is None:
        return
    hooks = _hooks(tf)
    if not hooks.executing_eagerly() or not hooks.may_be_pending():
        return
    if hooks.sync_devices is not None:
        hooks.sync_devices()
        return
    for t in found:  # older TF: reading a value waits for the kernels that produced it
        if isinstance(t, tf.Tensor):
            _read_one_element(tf, t)
        elif isinstance(t, tf.Variable):
            _read_one_element(tf, t.read_value())


# ---------------------------------------------------------------------------------------------
# statistics


def _quantile(sorted_values: Sequence[float], q: float) -> float:
    """Linear-interpolated quantile of already sorted values (numpy's default method)."""
    n = len(sorted_values)
    if n == 1:
        return sorted_values[0]
    pos = q * (n - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, n - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def significant_figures(median: float, iqr: float, runs: int) -> int:
    """How many significant figures of ``median`` the spread supports (1 to 6).

    The IQR of a normal sample is about 1.35 σ and the standard error of a median about
    1.25 σ / √n; the figures kept are those above the 95 % half-width of the median.
    """
    if median <= 0 or runs < 2:
        return 1 if runs < 2 else 6
    if iqr <= 0:
        return 6
    sigma = iqr / 1.349
    half_width = 1.96 * 1.2533 * sigma / math.sqrt(runs)
    return int(min(6, max(1, math.floor(math.log10(median / half_width)) + 1)))


def format_ratio(x: float | None) -> str:
    """``5673.2`` → ``"5673×"``, ``12.34`` → ``"12.3×"``, ``0.0123`` → ``"0.012×"``."""
    if x is None or math.isnan(x) or x <= 0:
        return "–"
    if x >= 100:
        return f"{x:,.0f}×"
    if x >= 1:
        return f"{x:.3g}×"
    return f"{x:.2g}×"


def format_seconds(seconds: float | None, figures: int = 3) -> str:
    """``0.01234`` → ``"12.3 ms"``; figures are significant figures."""
    if seconds is None or (isinstance(seconds, float) and math.isnan(seconds)):
        return "–"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)):
        if abs(seconds) >= scale or unit == "ns":
            value = seconds / scale
            digits = max(0, figures - 1 - math.floor(math.log10(abs(value))) if value else 0)
            return f"{value:.{digits}f} {unit}"
    raise AssertionError("unreachable")


@dataclass
class Measurement:
    """Per-call times of one callable, and the statistics tfperf reports about them.

    ``times`` holds one entry per timed block: the block's duration divided by ``number``,
    the calls per block. ``first_call_s`` is the first call alone (trace and compile cost
    included), never part of ``times``.
    """

    times: list[float]
    number: int = 1
    first_call_s: float | None = None
    warmup_runs: int = 0
    total_s: float = 0.0
    label: str = ""
    notes: list[str] = field(default_factory=list)

    @property
    def runs(self) -> int:
        return len(self.times)

    @property
    def median(self) -> float:
        return statistics.median(self.times) if self.times else math.nan

    @property
    def mean(self) -> float:
        return statistics.fmean(self.times) if self.times else math.nan

    @property
    def min(self) -> float:
        return min(self.times) if self.times else math.nan

    @property
    def iqr(self) -> float:
        if len(self.times) < 2:
            return math.nan
        s = sorted(self.times)
        return _quantile(s, 0.75) - _quantile(s, 0.25)

    @property
    def rel_iqr(self) -> float:
        """IQR / median; NaN when fewer than two runs."""
        med = self.median
        return self.iqr / med if med and not math.isnan(self.iqr) else math.nan

    @property
    def significant_figures(self) -> int:
        iqr = self.iqr
        return significant_figures(self.median, 0.0 if math.isnan(iqr) else iqr, self.runs)

    @property
    def noisy(self) -> bool:
        return self.rel_iqr > NOISY_REL_IQR

    @property
    def warning(self) -> str | None:
        if self.runs < 2:
            return "one run only: no spread known"
        if self.noisy:
            return (f"noisy: IQR is {self.rel_iqr:.0%} of the median (machine busy?); "
                    "compare ratios, not absolute times")
        return None

    def format(self) -> str:
        """``"12.3 ms ± 0.4 ms (IQR, 25 runs × 10)"``, rounded to the figures the spread allows."""
        fig = self.significant_figures
        if self.runs < 2:
            return f"{format_seconds(self.median, 3)} (1 run)"
        return (f"{format_seconds(self.median, fig)} ± {format_seconds(self.iqr / 2, 2)} "
                f"(IQR/2, {self.runs} runs × {self.number})")

    def to_dict(self) -> dict[str, Any]:
        def num(x: float) -> float | None:
            return None if x is None or math.isnan(x) else x

        return {
            "median_s": num(self.median),
            "iqr_s": num(self.iqr),
            "min_s": num(self.min),
            "mean_s": num(self.mean),
            "runs": self.runs,
            "number": self.number,
            "first_call_s": self.first_call_s,
            "significant_figures": self.significant_figures,
            "rel_iqr": num(self.rel_iqr),
            "warning": self.warning,
            "notes": list(self.notes),
        }


# ---------------------------------------------------------------------------------------------
# timing one callable


def _next_step(number: int) -> int:
    """1 → 2 → 5 → 10 → 20 → 50 …"""
    digit = number // 10 ** math.floor(math.log10(number))
    return number * 5 // 2 if digit == 2 else number * 2


class Timer:
    """Times one callable with its arguments; every timing ends with :func:`sync`.

    Garbage collection is paused inside a timed block (as ``timeit`` does) so that a
    collection triggered by other code does not land in one variant's time.
    """

    def __init__(self, fn: Callable[..., Any], args: Sequence[Any] = (),
                 kwargs: Mapping[str, Any] | None = None, *, clock: Clock = time.perf_counter,
                 sync_outputs: bool = True) -> None:
        self.fn = fn
        self.args = tuple(args)
        self.kwargs = dict(kwargs or {})
        self.clock = clock
        self.sync_outputs = sync_outputs
        #: The output of the latest timed call (tfperf bench checks it still equals the
        #: first call's: a variant whose output drifts is stateful or random).
        self.last_output: Any = None

    def first_call(self) -> tuple[float, Any]:
        """Call once, synced; return (seconds, output). Trace/compile cost lands here."""
        start = self.clock()
        out = self.fn(*self.args, **self.kwargs)
        if self.sync_outputs:
            sync(out)
        return self.clock() - start, out

    def block(self, number: int = 1) -> float:
        """Seconds per call of a block of ``number`` back-to-back calls, synced once at the end.

        Kernels queued on one device stream run in order, so syncing after the last call
        covers the whole block.
        """
        fn, args, kwargs, clock = self.fn, self.args, self.kwargs, self.clock
        gc_was_enabled = gc.isenabled()
        gc.disable()
        try:
            out = None
            start = clock()
            for _ in range(number):
                out = fn(*args, **kwargs)
            if self.sync_outputs:
                sync(out)
            elapsed = clock() - start
        finally:
            if gc_was_enabled:
                gc.enable()
        self.last_output = out
        return elapsed / number

    def calibrate(self, min_block_time: float = 0.01, max_number: int = 10**6) -> int:
        """Smallest calls-per-block in 1, 2, 5, 10, 20, 50 … whose block lasts ``min_block_time``.

        One call longer than ``min_block_time`` gives 1: such a call is timed alone.
        """
        number = 1
        while number < max_number:
            per_call = self.block(number)
            if per_call * number >= min_block_time:
                return number
            # Jump straight to the first step that one block predicts to be long enough.
            needed = min_block_time / per_call if per_call > 0 else number * 10
            while number < needed and number < max_number:
                number = _next_step(number)
        return max_number


def measure(fn: Callable[..., Any], *, args: Sequence[Any] = (),
            kwargs: Mapping[str, Any] | None = None, warmup: float = 0.05,
            min_runs: int = 5, max_runs: int = 1000, max_time: float = 2.0,
            target_rel_iqr: float = 0.03, min_block_time: float = 0.01,
            clock: Clock = time.perf_counter, label: str = "",
            interruptible: bool = False) -> Measurement:
    """Measure ``fn(*args, **kwargs)`` the careful way and return a :class:`Measurement`.

    1. The first call is timed alone and reported as ``first_call_s`` (tracing, XLA
       compilation, lazy initialisation), never mixed with the steady-state times.
    2. Warm-up: calls for ``warmup`` seconds (at least one) so that caches, allocators and
       autotuners settle.
    3. Calibration: the calls per block grow (1, 2, 5, 10 …) until one block lasts
       ``min_block_time``, so that the clock's resolution and the sync's cost vanish.
    4. Blocks are timed until at least ``min_runs`` are in and the IQR is within
       ``target_rel_iqr`` of the median, or ``max_time`` seconds (for steps 2–4) are spent,
       or ``max_runs`` blocks are in. A single call slower than ``max_time`` is run once
       more at most.

    ``interruptible`` (interactive use: the notebook magics): Ctrl-C during step 4 ends it
    and the runs so far are returned, with a note; before the first run it still raises.
    """
    timer = Timer(fn, args, kwargs, clock=clock)
    t_start = clock()
    first, _ = timer.first_call()
    deadline = clock() + max_time
    warm = 0
    warm_until = clock() + warmup
    while True:
        timer.block(1)
        warm += 1
        if clock() >= warm_until or clock() >= deadline:
            break
    number = timer.calibrate(min_block_time) if clock() < deadline else 1
    result = Measurement(times=[], number=number, first_call_s=first, warmup_runs=warm,
                         label=label)
    try:
        while len(result.times) < max_runs:
            result.times.append(timer.block(number))
            if len(result.times) >= min_runs and result.rel_iqr <= target_rel_iqr:
                break
            if clock() >= deadline:
                break
    except KeyboardInterrupt:
        if not interruptible or not result.times:
            raise
        result.notes.append(f"interrupted (Ctrl-C) after {len(result.times)} runs")
    if len(result.times) < min_runs and not result.notes:
        result.notes.append(f"time budget of {max_time:g} s allowed {len(result.times)} runs "
                            f"of the {min_runs} wanted")
    result.total_s = clock() - t_start
    return result


__all__ = ["NOISY_REL_IQR", "Measurement", "Timer", "format_ratio", "format_seconds", "measure",
           "significant_figures", "sync"]
