"""A candidate's first calls, before any timing: does it run, how long does its first call
(trace, compile) take, does it retrace with the same inputs, does pfor fall back to a
while_loop, and what does it return (each call's output snapshotted at once)."""

from __future__ import annotations

import contextlib
import logging
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from tfperf.bench.deadline import CallTimeout, time_limit
from tfperf.bench.equivalence import snapshot
from tfperf.bench.verify import describe_error
from tfperf.core.measure import sync
from tfperf.tune.kinds import Kinds, leaf_kinds

#: What TensorFlow logs when pfor cannot vectorise an op and loops instead.
FALLBACK_NEEDLES = ("while_loop for converting", "Using a while_loop")


@dataclass
class Screen:
    first_call_s: float | None = None
    second_call_s: float | None = None
    outputs: list[Any] = field(default_factory=list)
    kinds: list[Kinds] = field(default_factory=list)  # each output's leaf kinds (tune/kinds.py)
    error: str | None = None
    retraces: int = 0  # traces during the calls after the first (same inputs)
    fallback: str | None = None
    retraced: dict[str, str] = field(default_factory=dict)  # function → cause (watched)
    varied_output: Any = None  # the output of one call on the varied inputs (tune/varied.py)
    varied_error: str | None = None  # why that call failed (its calls on the user's passed)
    varied_timed_out: bool = False  # that call ran past its limit: no verdict, not a failure
    varied_called: bool = False  # that call was made (its output may be None: nothing out)
    # The same for the second varied set, integer arguments changed too (tune/varied.py)
    ints_output: Any = None
    ints_error: str | None = None
    ints_timed_out: bool = False
    # The mutable arguments' state before and after the first call (tune/effects.py), when
    # asked for, and whether that call returned one of those arguments itself
    before: dict[str, Any] | None = None
    after: dict[str, Any] | None = None
    returned_argument: bool = False


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        with contextlib.suppress(Exception):  # a record that cannot format: not worth failing
            self.messages.append(record.getMessage())


@contextmanager
def _captured() -> Iterator[list[str]]:
    """TensorFlow's Python log records and warnings raised inside the block."""
    handler = _Records()
    logger = logging.getLogger("tensorflow")
    logger.addHandler(handler)
    messages = handler.messages
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            yield messages
        messages.extend(str(w.message) for w in caught)
    finally:
        logger.removeHandler(handler)


def tracing_count(namespace: dict[str, Any], fn: Any) -> int:
    """Traces so far of the tf.functions among ``namespace``'s values and ``fn``."""
    seen, total = set(), 0
    for v in [fn, *namespace.values()]:
        count = getattr(v, "experimental_get_tracing_count", None)
        if callable(count) and id(v) not in seen:
            seen.add(id(v))
            with contextlib.suppress(Exception):  # a Function without the counter
                total += int(count())
    return total


def screen(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any],
           namespace: dict[str, Any], *, limit: float, calls: int = 2,
           watch_retraces: bool = False, more_if_under: float | None = None,
           first_limit: float | None = None,
           varied: tuple[tuple[Any, ...], dict[str, Any]] | None = None,
           ints_varied: tuple[tuple[Any, ...], dict[str, Any]] | None = None,
           names: list[str] | None = None) -> Screen:
    """Call ``fn`` ``calls`` times on the same inputs under a per-call time ``limit``; only
    once when the first call took longer than ``more_if_under`` seconds. ``first_limit``:
    the first call's own limit (default ``limit``): a trace or an XLA compile is paid once,
    so a slow first call is measured, and only the calls after it must be quick.
    ``varied``: other inputs of the same shapes and dtypes (:mod:`tfperf.tune.varied`),
    called once more after those calls (not when the first call was slow), under the first
    call's limit: new values may trace again (an eager ``tf.vectorized_map`` converts its
    body on every call), and a call cut short by a busy machine says nothing of its output.
    ``ints_varied``: a second such set with the integer arguments changed too, called after
    it (its own output and error: it never replaces the first). ``names``: the positional
    arguments' names; given, the mutable arguments' state is kept before and after the first
    call (:mod:`tfperf.tune.effects`: a function may work by side effect)."""
    from tfperf.tune import effects

    out = Screen()
    if names is not None:
        out.before = effects.state(args, kwargs, names)
    with _captured() as messages:
        try:
            for k in range(calls):
                if k == 1:
                    before = tracing_count(namespace, fn)
                t0 = time.perf_counter()
                this = limit
                if k == 0 and first_limit is not None:
                    this = max(limit, first_limit)
                with time_limit(this):
                    if watch_retraces and k == 0:
                        value = _watched(fn, args, kwargs, out)
                    else:
                        value = fn(*args, **kwargs)
                    sync(value)
                elapsed = time.perf_counter() - t0
                if k == 0:
                    out.first_call_s = elapsed
                    if names is not None:
                        out.after = effects.state(args, kwargs, names)
                        out.returned_argument = effects.returns_argument(value, args, kwargs)
                    if more_if_under is not None and elapsed > more_if_under:
                        out.outputs.append(snapshot(value))
                        out.kinds.append(leaf_kinds(value))
                        break
                elif k == 1:
                    out.second_call_s = elapsed
                out.outputs.append(snapshot(value))
                out.kinds.append(leaf_kinds(value))
            if len(out.outputs) > 1:
                out.retraces = tracing_count(namespace, fn) - before
        except CallTimeout:
            which = "the first call (trace, compile)" if out.first_call_s is None \
                and first_limit is not None and first_limit > limit else "a call"
            this = max(limit, first_limit or 0.0) if out.first_call_s is None else limit
            out.error = f"{which} did not finish within {this:.3g} s"
        except Exception as exc:  # the user's code, edited: any error rejects the candidate
            out.error = describe_error(exc)
    if varied is not None and out.error is None and len(out.outputs) == calls:
        varied_call(fn, varied, max(limit, first_limit or 0.0), out)
    if ints_varied is not None and out.error is None and len(out.outputs) == calls:
        varied_call(fn, ints_varied, max(limit, first_limit or 0.0), out, into="ints")
    hits = [m for m in messages if any(n in m for n in FALLBACK_NEEDLES)]
    if hits:
        out.fallback = hits[0].strip().splitlines()[0][:200]
    return out


def varied_call(fn: Callable[..., Any], varied: tuple[tuple[Any, ...], dict[str, Any]],
                 limit: float, out: Screen, into: str = "varied") -> None:
    """One call on the varied inputs: its output, or why it failed, in ``out``'s fields
    named ``into`` (``varied``: the first set; ``ints``: the integer arguments' set)."""
    if into == "varied":
        out.varied_called = True
    try:
        with time_limit(limit):
            value = fn(*varied[0], **varied[1])
            sync(value)
        setattr(out, f"{into}_output", snapshot(value))
    except CallTimeout:
        setattr(out, f"{into}_error", f"a call did not finish within {limit:.3g} s")
        setattr(out, f"{into}_timed_out", True)
    except Exception as exc:  # the user's code, edited
        setattr(out, f"{into}_error", describe_error(exc))


def steady_call_s(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any],
                  limit: float) -> float | None:
    """Seconds of one more call on inputs already traced for, or None when it raised or ran
    past ``limit`` (its output is not looked at: the screen judged that)."""
    t0 = time.perf_counter()
    try:
        with time_limit(limit):
            sync(fn(*args, **kwargs))
    except CallTimeout:
        return None
    except Exception:  # it ran twice before: an error now is no timing
        return None
    return time.perf_counter() - t0


def _watched(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any],
             out: Screen) -> Any:
    """One call under :func:`tfperf.profile.watch`: which tf.functions traced more than once
    in it, and why (the profile's own retrace causes)."""
    from tfperf.profile.retrace import summarise_kind
    from tfperf.profile.watcher import watch

    with watch(host_syncs=False, eager_ops=False) as w:
        value = fn(*args, **kwargs)
    for stats in w.obs.functions:
        if stats.traces > 1:
            causes = stats.to_dict()["retrace_causes"]
            cause = summarise_kind(causes[0]["kind"], causes[0]["argument"],
                                   causes[0]["distinct"]) if causes else ""
            out.retraced[stats.name.split(".")[-1]] = f"{stats.traces} traces in one call" + (
                f": {cause}" if cause else "")
    return value
