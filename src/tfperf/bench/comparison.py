"""Variants → interleaved measurements → ratios and equivalence → a :class:`CompareReport`.

The procedure, for variants A, B, C with a shared time budget:

1. First call of each, timed apart (trace/compile cost) under a per-call time limit. A
   variant that raises or runs out of time is reported with its error; the others go on.
   A variant whose first call alone takes more than ``slow_after`` seconds is *slow*: it is
   not run again, and that one call is its time. Each first output is snapshotted to the
   host at once (a returned ``tf.Variable`` would change with later calls).
2. The others are warmed up, and each gets a block size (calls per timed block) long enough
   for the clock.
3. Rounds: one block of each, in an order that rotates each round (A B C, B C A, …), so that
   drift (thermal, other processes) hits all alike; until the budget is spent or every
   spread is small. Ratios to the baseline are taken round by round; their median is
   reported.
4. Every variant's outputs are checked against the baseline's (:mod:`tfperf.bench.verify`):
   its latest output must equal its first, then structure, shape, dtype and every element
   within dtype-aware tolerances; optionally against a float64 run of the baseline
   (``reference="float64"``) and on gradients (``grad=True``). What cannot be compared is
   ``equivalent=None`` and fails the exit status unless ``allow_unchecked``.
5. Memory: peak device memory per variant on GPU; on CPU with ``isolate=True`` (each
   variant once more in its own process, peak RSS), or in process when the CPU allocator
   counts every allocation (``TF_CPU_ALLOCATOR_USE_BFC=1``, see docs/memory.md); otherwise
   not reported.
"""

from __future__ import annotations

import math
import statistics
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any

from tfperf.bench.batching import quick_slice
from tfperf.bench.counters import STEADY_CALLS, first_call_watch, from_observations, steady_watch
from tfperf.bench.deadline import CallTimeout, time_limit
from tfperf.bench.declare import VariantSpec
from tfperf.bench.equivalence import snapshot
from tfperf.bench.machine import machine_info
from tfperf.bench.report import CompareReport
from tfperf.bench.result import VariantResult
from tfperf.bench.verify import Outputs, Verifier, describe_error
from tfperf.core.measure import Measurement, Timer

Progress = Callable[[float, str], None]


@dataclass
class Variant:
    """A callable to time. ``args``/``kwargs`` override the comparison's shared inputs."""

    name: str
    fn: Callable[..., Any]
    args: tuple[Any, ...] | None = None
    kwargs: dict[str, Any] | None = None
    baseline: bool = False
    bytes: float | None = None
    flops: float | None = None
    quick_batch: int | None = None
    source: dict[str, Any] | None = None  # how a child process finds it (for isolate)

    @classmethod
    def from_spec(cls, spec: VariantSpec) -> Variant:
        return cls(spec.name, spec.fn, baseline=spec.baseline, bytes=spec.bytes,
                   flops=spec.flops, quick_batch=spec.quick_batch)


@dataclass
class _State:
    variant: Variant
    result: VariantResult
    timer: Timer
    output: Any = None  # the first call's output (a snapshot when outputs are checked)
    number: int = 1
    times: list[float] = field(default_factory=list)
    batch: int | None = None  # items of axis 0 the variant ran on (quick_batch)


def _as_variants(variants: Mapping[str, Any] | Sequence[Any]) -> list[Variant]:
    out: list[Variant] = []
    items = variants.items() if isinstance(variants, Mapping) else enumerate(variants)
    for key, v in items:
        if isinstance(v, Variant):
            out.append(v)
        elif isinstance(v, VariantSpec):
            out.append(Variant.from_spec(v))
        elif callable(v):
            name = key if isinstance(key, str) else getattr(v, "__name__", f"variant{key}")
            out.append(Variant(name, v))
        else:
            raise TypeError(f"variant {key!r} is not callable")
    if not out:
        raise ValueError("no variants to compare")
    names = [v.name for v in out]
    if len(set(names)) != len(names):
        raise ValueError(f"variant names must be unique: {names}")
    return out


def compare(variants: Mapping[str, Any] | Sequence[Any], args: Sequence[Any] = (),
            kwargs: Mapping[str, Any] | None = None, baseline: str | None = None, *,
            budget: float = 10.0, quick: bool = False, call_limit: float | None = None,
            slow_after: float | None = None, target_rel_iqr: float = 0.03,
            min_rounds: int | None = None, max_rounds: int = 500,
            min_block_time: float | None = None, rtol: float | None = None,
            atol: float | None = None, check_equivalence: bool = True,
            reference: str | None = None, grad: bool = False,
            allow_unchecked: bool = False,
            isolate: bool = False, roofline: bool = False, counters: bool = False,
            yardstick: Callable[[], Any] | None = None,
            progress: Progress | None = None, interruptible: bool = False) -> CompareReport:
    """Time ``variants`` against ``baseline`` on the same inputs; see the module docstring.

    ``variants``: a dict name → callable (or :class:`Variant`), or a list of ``Variant``.
    ``budget``: seconds for the steady-state rounds (first calls come on top).
    ``call_limit``: a single call is interrupted after this many seconds
    (default ``max(30, 4 × budget)``). ``slow_after``: a first call longer than this makes the
    variant slow, run once (default ``max(0.5, budget / 5)``), unless a second call, made when
    the first lasted at most the budget (it may have been tracing or compiling), is fast.
    ``quick``: fewer rounds, shorter blocks, and ``quick_batch`` variants run on a slice of
    the batch with their time scaled up.
    ``rtol``/``atol``: the equivalence tolerance (default: by dtype, see
    :mod:`tfperf.bench.equivalence`). ``check_equivalence=False``: outputs not compared (the
    variants compute different things on purpose). ``reference="float64"``: judge values
    against the baseline run on float64 inputs. ``grad``: check gradients too.
    ``allow_unchecked``: outputs that cannot be compared do not fail the exit status.
    ``isolate``: peak memory of each variant in a child process that imports the variant's
    file again; a calling script must keep its work under ``if __name__ == "__main__":``.
    ``counters``: also count traces, host syncs, eager ops, graph ops and XLA compilations
    (:mod:`tfperf.bench.counters`): the first call is watched (function calls and host syncs),
    and two more calls right after it are watched with every hook.
    ``yardstick``: a fixed piece of work timed in every round beside the variants
    (:mod:`tfperf.bench.yardstick`); its per-round times come back as ``yardstick_s``.
    ``interruptible`` (interactive use: ``%tfcompare``): Ctrl-C during the rounds ends them
    and the report covers the rounds done, with a note; before the first round it raises.
    """
    vs = _as_variants(variants)
    base_name = baseline or next((v.name for v in vs if v.baseline), vs[0].name)
    if base_name not in [v.name for v in vs]:
        raise ValueError(f"baseline {base_name!r} is not one of the variants "
                         f"{[v.name for v in vs]}")
    call_limit = call_limit if call_limit is not None else max(30.0, 4 * budget)
    slow_after = slow_after if slow_after is not None else max(0.5, budget / 5)
    min_rounds = min_rounds if min_rounds is not None else (3 if quick else 5)
    min_block_time = min_block_time if min_block_time is not None else (
        0.005 if quick else 0.02)
    shared_args, shared_kwargs = tuple(args), dict(kwargs or {})
    say = progress or (lambda f, s: None)
    if reference is not None and reference != "float64":
        raise ValueError(f"reference must be 'float64' or None, not {reference!r}")
    if isolate:
        from tfperf.bench.isolate import refuse_unguarded_caller

        refuse_unguarded_caller(vs)

    states: list[_State] = []
    for v in vs:
        a = v.args if v.args is not None else shared_args
        kw = v.kwargs if v.kwargs is not None else shared_kwargs
        batch, scale = None, 1.0
        if quick:
            a, full = quick_slice(a, v.quick_batch)
            if full and v.quick_batch:
                batch, scale = v.quick_batch, full / v.quick_batch
        res = VariantResult(name=v.name, scale=scale)
        if batch:
            res.notes.append(f"quick mode: ran on {batch} of {full} items of axis 0; "
                             f"time scaled ×{scale:g}")
        states.append(_State(v, res, Timer(v.fn, a, kw), batch=batch))

    n = len(states)
    # 1. first calls
    for i, st in enumerate(states):
        say(i / (n + 2), f"{st.variant.name}: first call")
        watcher: Any = first_call_watch() if counters else nullcontext()
        try:
            with time_limit(call_limit), watcher:
                first, out = st.timer.first_call()
        except CallTimeout as exc:
            st.result.status, st.result.error = "timeout", str(exc)
            continue
        except Exception as exc:
            st.result.status, st.result.error = "error", describe_error(exc)
            continue
        st.output = _keep(out, check_equivalence, roofline)
        st.result.first_call_s = first * st.result.scale
        if counters and not _count_steady(st, watcher.obs, call_limit):
            continue
        if slow_after < first * st.result.scale <= max(budget, 2 * slow_after) \
                and not st.batch:
            # A slow first call may be tracing or XLA compiling: judge by a second call.
            try:
                with time_limit(call_limit):
                    first = st.timer.block(1)
            except (Exception, CallTimeout) as exc:
                _fail(st, exc)
                continue
        if first * st.result.scale > slow_after or st.batch:
            st.result.status = "slow"
            st.result.measurement = Measurement(times=[first], first_call_s=first)
            st.result.notes.append(
                f"slow: ran once ({first * st.result.scale:.3g} s ≥ {slow_after:.3g} s); "
                "its time includes any trace/compile cost")

    fast = [st for st in states if st.result.status == "ok"]
    # 2. warm-up and block size (none when no rounds are wanted: counters only)
    say(n / (n + 2), "warming up")
    for st in list(fast) if max_rounds > 0 else []:
        try:
            with time_limit(call_limit):
                st.timer.block(1)
                st.number = st.timer.calibrate(min_block_time)
        except (Exception, CallTimeout) as exc:
            _fail(st, exc)
            fast.remove(st)

    yard = _yardstick_state(yardstick, min_block_time, call_limit) \
        if yardstick is not None and fast and max_rounds > 0 else None

    # 3. interleaved rounds
    t0 = time.perf_counter()
    deadline = t0 + budget
    rounds = 0
    try:
        while fast and rounds < max_rounds:
            in_round = [*fast, yard] if yard is not None and yard.result.status == "ok" \
                else fast
            for st in _rotated(in_round, rounds):
                try:
                    with time_limit(call_limit * st.number):
                        st.times.append(st.timer.block(st.number))
                except (Exception, CallTimeout) as exc:
                    _fail(st, exc)
            fast = [st for st in fast if st.result.status == "ok"]
            rounds += 1
            now = time.perf_counter()
            say((n + min(1.0, (now - t0) / budget)) / (n + 2), f"round {rounds}")
            if rounds >= min_rounds and all(_rel_iqr(st.times) <= target_rel_iqr
                                            for st in fast):
                break
            if now >= deadline and (rounds >= 3 or now >= deadline + budget):
                break
    except KeyboardInterrupt:
        if not interruptible or not rounds:
            raise
        for st in fast:  # a round cut short: keep whole rounds, so ratios stay paired
            del st.times[rounds:]
            st.result.notes.append(f"interrupted (Ctrl-C) after {rounds} rounds")
        if yard is not None:
            del yard.times[rounds:]
    for st in states:
        if st.result.status == "ok":
            st.result.measurement = Measurement(times=st.times, number=st.number,
                                                first_call_s=st.result.first_call_s)

    say((n + 1) / (n + 2), "checking equivalence")
    base = next(st for st in states if st.variant.name == base_name)
    _ratios(states, base)
    if check_equivalence:
        _equivalence(states, base, shared_args, rtol=rtol, atol=atol, reference=reference,
                     grad=grad)
    else:
        for st in states:
            if st is not base and not st.result.error:
                st.result.not_checked = "not checked (check_equivalence=False)"
    peaks = _roofline(states) if roofline else None
    _memory(states, isolate)
    say(1.0, "done")
    settings = {"budget_s": budget, "quick": quick, "call_limit_s": call_limit,
                "slow_after_s": slow_after, "rounds": rounds, "target_rel_iqr": target_rel_iqr,
                "isolate": isolate, "rtol": rtol, "atol": atol, "reference": reference,
                "grad": grad, "allow_unchecked": allow_unchecked,
                "check_equivalence": check_equivalence}
    return CompareReport(machine=machine_info(), baseline=base_name,
                         variants=[st.result for st in states], settings=settings,
                         peaks=peaks.to_dict() if peaks else None,
                         yardstick_s=list(yard.times) if yard and yard.result.status == "ok"
                         else None)


def _yardstick_state(fn: Callable[[], Any], min_block_time: float,
                     call_limit: float) -> _State | None:
    from tfperf.bench.yardstick import NAME

    yard = _State(Variant(NAME, fn), VariantResult(NAME), Timer(fn))
    try:
        with time_limit(call_limit):
            yard.timer.block(1)
            yard.number = yard.timer.calibrate(min_block_time)
    except (Exception, CallTimeout):  # no yardstick: the gate judges raw times
        return None
    return yard


def _count_steady(st: _State, first_obs: Any, call_limit: float) -> bool:
    """Watch ``STEADY_CALLS`` calls after the first and set the variant's counters; False
    when a call failed (the variant is then reported with its error)."""
    steady = steady_watch()
    try:
        with time_limit(call_limit * STEADY_CALLS), steady:
            for _ in range(STEADY_CALLS):
                st.timer.block(1)
    except (Exception, CallTimeout) as exc:
        _fail(st, exc)
        return False
    st.result.counters = from_observations(first_obs, steady.obs, STEADY_CALLS)
    return True


def _fail(st: _State, exc: BaseException) -> None:
    st.result.status = "timeout" if isinstance(exc, CallTimeout) else "error"
    st.result.error = str(exc) if isinstance(exc, CallTimeout) else describe_error(exc)
    st.times.clear()


def _rotated(items: list[_State], k: int) -> list[_State]:
    if not items:
        return items
    k %= len(items)
    return items[k:] + items[:k]


def _rel_iqr(times: list[float]) -> float:
    return Measurement(times=times).rel_iqr if len(times) >= 2 else math.inf


def _ratios(states: list[_State], base: _State) -> None:
    b = base.result
    if b.error or b.median_s is None:
        for st in states:
            if st is not base and not st.result.error:
                st.result.notes.append(f"no ratio: the baseline {base.variant.name!r} failed")
        return
    for st in states:
        r = st.result
        if r.error or r.median_s is None:
            continue
        if st is base:
            r.ratio_to_baseline, r.speedup, r.ratio_method = 1.0, 1.0, "baseline"
            continue
        paired = len(st.times) == len(base.times) and len(st.times) > 0 and \
            b.status == r.status == "ok"
        if paired:
            pairs = list(zip(st.times, base.times, strict=True))
            r.ratio_to_baseline = statistics.median(v / bt for v, bt in pairs)
            r.speedup = statistics.median(bt / v for v, bt in pairs)
            r.ratio_method = "median of per-round ratios"
        else:
            r.ratio_to_baseline = r.median_s / b.median_s
            r.speedup = b.median_s / r.median_s
            r.ratio_method = "ratio of medians (one side ran once)"


def _keep(out: Any, check: bool, roofline: bool) -> Any:
    """What to keep of a first output: a host snapshot when it will be compared (a variable
    it returns may change with later calls), the output itself when only its size is needed."""
    if check:
        return snapshot(out)
    return out if roofline else None


def _outputs(st: _State) -> Outputs:
    last = st.timer.last_output
    return Outputs(st.variant.name, st.variant.fn, st.timer.args, st.timer.kwargs,
                   first=st.output, last=snapshot(last) if last is not None else None,
                   batch=st.batch, notes=st.result.notes)


def _equivalence(states: list[_State], base: _State, full_args: tuple[Any, ...], *,
                 rtol: float | None, atol: float | None, reference: str | None,
                 grad: bool) -> None:
    if base.result.error:
        for st in states:
            if st is not base and not st.result.error:
                st.result.not_checked = "not checked: the baseline failed"
        return
    others = {st.variant.name: _outputs(st) for st in states
              if st is not base and not st.result.error}
    verifier = Verifier(_outputs(base), full_args, base.timer.kwargs, rtol=rtol, atol=atol,
                        reference=reference, grad=grad, others=list(others.values()))
    base.result.not_checked = "the baseline"
    for st in states:
        if st.variant.name in others:
            st.result.equivalence, st.result.gradient = verifier.check(others[st.variant.name])


def _roofline(states: list[_State]) -> Any:
    from tfperf.bench.roofline import achieved, machine_peaks, nbytes_tree

    try:
        peaks = machine_peaks()
    except Exception as exc:  # no TF: roofline is optional
        for st in states:
            st.result.roofline = {"error": describe_error(exc)}
        return None
    for st in states:
        r = st.result
        if r.median_s is None:
            continue
        declared = st.variant.bytes
        moved = declared if declared is not None else (
            nbytes_tree(st.timer.args) + nbytes_tree(st.timer.kwargs) + nbytes_tree(st.output)
        ) * r.scale
        flops, precision, flops_source = _flops(st)
        r.roofline = achieved(r.median_s, moved, flops, peaks)
        r.roofline["bytes_source"] = "declared" if declared is not None else \
            "inputs + outputs (lower bound)"
        r.roofline["flops_source"] = flops_source
        r.roofline["precision"] = precision
        r.roofline["roof"] = _judged(r.median_s, moved, flops, precision, peaks)
    return peaks


def _flops(st: _State) -> tuple[float | None, str | None, str]:
    """FLOPs per call: declared, else counted on the graph the variant traces for its inputs
    (tfperf.roofline.graph), scaled like its time."""
    if st.variant.flops is not None:
        return st.variant.flops, None, "declared"
    from tfperf.roofline.graph import graph_cost

    cost = graph_cost(st.variant.fn, st.timer.args, st.timer.kwargs)
    if cost.error:
        return None, None, cost.error
    if not cost.flops:
        if cost.uncounted:
            return None, cost.precision, "not counted: " + ", ".join(
                f"{k} ×{n}" for k, n in cost.uncounted.most_common(4))
        return None, cost.precision, "counted: no arithmetic"
    note = "counted on the traced graph"
    if cost.uncounted:
        note += " (not counted: " + ", ".join(
            f"{k} ×{n}" for k, n in cost.uncounted.most_common(4)) + ")"
    return cost.flops * st.result.scale, cost.precision, note


def _judged(seconds: float, nbytes: float | None, flops: float | None, precision: str | None,
            peaks: Any) -> dict[str, Any]:
    """The fraction of the right roof (precision and engine), or why there is none."""
    from tfperf.roofline.call import roofs_here
    from tfperf.roofline.roofs import judge

    if not flops:  # no arithmetic counted: the bandwidth figures above say all there is
        return {}
    return judge(flops, nbytes, seconds, roofs_here(peaks), precision)


def _memory(states: list[_State], isolate: bool) -> None:
    tf = sys.modules.get("tensorflow")
    gpu = bool(tf is not None and tf.config.list_logical_devices("GPU"))
    if gpu:
        _gpu_memory(tf, states)
        return
    if isolate:
        from tfperf.bench.isolate import measure_isolated

        for st in states:
            if st.result.error:
                continue
            st.result.memory = measure_isolated(st.variant, st.timer.args, st.timer.kwargs)
        return
    from tfperf.memory.allocator import cpu_counts_everything

    if cpu_counts_everything():
        _gpu_memory(tf, states, device="CPU:0")
        return
    for st in states:
        st.result.memory = {"peak_bytes": None,
                            "source": "not measured on CPU without --isolate (or "
                                      "TF_CPU_ALLOCATOR_USE_BFC=1)"}


def _gpu_memory(tf: Any, states: list[_State], device: str = "GPU:0") -> None:
    from tfperf.core.measure import sync

    for st in states:
        if st.result.error:
            continue
        if st.result.status == "slow":
            st.result.memory = {"peak_bytes": None, "source": "not measured: slow variant"}
            continue
        try:
            tf.config.experimental.reset_memory_stats(device)
            before = tf.config.experimental.get_memory_info(device)["current"]
            sync(st.timer.fn(*st.timer.args, **st.timer.kwargs))
            peak = tf.config.experimental.get_memory_info(device)["peak"]
        except Exception as exc:
            st.result.memory = {"peak_bytes": None, "source": f"{device} ({describe_error(exc)})"}
            continue
        st.result.memory = {"peak_bytes": peak, "above_start_bytes": peak - before,
                            "source": f"{device} allocator peak, one call"}


__all__ = ["Variant", "compare"]
