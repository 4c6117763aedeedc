"""One pass over a capture's events → step-time breakdown and top ops, per host and device.

What counts (the same reading as ``profile/xplane.py`` for tfperf's own captures):

* host planes (``/host:CPU``): graph ops are events named ``node:OpType``; eager ops are
  ``EagerExecute`` events with an ``eager_op`` stat (``is_func`` marks a whole tf.function);
  XLA ops compiled for the CPU are events with an ``hlo_op`` stat. Self time subtracts op
  events nested inside on the same thread.
* device planes (``/device:GPU:N``, ``/device:TPU:N``): kernels and copies on ``Stream``
  lines (derived lines such as "XLA Ops" repeat them and are skipped); a kernel's op is its
  ``tf_op`` stat, else its ``hlo_op``.
* steps: events with a ``step_num`` stat (Keras, ``tf.profiler.experimental.Trace``), else
  top-level ``tf.function`` calls, else the whole capture.

Per step, time is split by what the ops were doing, summed over threads and streams:
``compute``, ``input`` (iterator waits: ``IteratorGetNext``…, and host→device copies),
``collectives`` (all-reduce and friends), ``host`` (host op time, on captures with a device)
and ``idle`` (what is left of the step on the busiest timeline). Sums over parallel threads can
exceed the step: the shares say so rather than hide it.

Memory: per op event, 16 bytes (its start and self time, to place it in a step once the steps
are known), plus one row per distinct op. Nothing else grows with the capture.
"""

from __future__ import annotations

import re
import statistics
from array import array
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tfperf.profile.read.stats import StatFinder
from tfperf.profile.read.xspace import Capture, Line, Plane
from tfperf.profile.xplane import (
    DERIVED_LINES,
    INPUT_OP_TYPES,
    hlo_op_type,
    host_op_by_name,
    op_kind,
    waits_before_steps,
)

_TF_OP_EVENT = re.compile(r"^([^\s:]+):([A-Za-z_][A-Za-z0-9_]*)$")
_COLLECTIVE = re.compile(r"Collective|Nccl|nccl|AllReduce|all-reduce|AllGather|all-gather|"
                         r"ReduceScatter|reduce-scatter|AllToAll|all-to-all|"
                         r"CollectivePermute|collective-permute")
DEVICE_PREFIXES = ("/device:GPU:", "/device:TPU:")
HOST_PREFIX = "/host:CPU"
CATEGORIES = ("compute", "input", "collectives", "host", "idle")

COMPUTE, INPUT, COLLECTIVE, HOST, PIPELINE = 0, 1, 2, 3, 4
# Threads of tf.data's own pool: their ops make the input; the step waits for them only
# through the iterator (counted as input), so their time stays out of the step's breakdown.
PIPELINE_LINES = ("tf_data",)
BOOKKEEPING = ("ThreadpoolListener::", "MemoryAllocation", "MemoryDeallocation",
               "ExecutorState::Process", "ExecutorDoneCallback", "ParallelFor")


def category(op_type: str) -> int:
    if op_type in INPUT_OP_TYPES:
        return INPUT
    if _COLLECTIVE.search(op_type):
        return COLLECTIVE
    return COMPUTE


@dataclass
class OpStat:
    """One op's time where it ran. Graph and device ops by node name, eager ops by type."""

    name: str
    type: str
    where: str  # the plane: "/host:CPU", "/device:GPU:0"
    kind: str  # "graph", "eager", "xla", "dataset" (tf.data iterators), "kernel"
    count: int = 0
    self_ps: int = 0
    total_ps: int = 0
    source: str | None = None
    module: str | None = None  # XLA ops: the compiled module, "<name>(<program id>)"

    @property
    def self_s(self) -> float:
        return self.self_ps / 1e12

    @property
    def total_s(self) -> float:
        return self.total_ps / 1e12

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "type": self.type, "where": self.where, "kind": self.kind,
                "count": self.count, "self_s": self.self_s, "total_s": self.total_s,
                "source": self.source}


@dataclass
class Timeline:
    """What one plane (a host or a device) did: op time by category, for step attribution."""

    plane: str
    device: bool
    starts: list[array] = field(default_factory=lambda: [array("q") for _ in range(5)])
    selfs: list[array] = field(default_factory=lambda: [array("q") for _ in range(5)])
    op_events: int = 0
    events: int = 0
    lines: int = 0
    unsorted_lines: int = 0
    # iterator waits by their whole duration (start, ps): the pipeline work a fetch runs on
    # the caller's thread is nested in it, and before a step's window it is in no category
    waits: list[tuple[int, int]] = field(default_factory=list)

    def add(self, cat: int, start: int, self_ps: int) -> None:
        self.starts[cat].append(start)
        self.selfs[cat].append(self_ps)

    def total_ps(self, cat: int) -> int:
        return sum(self.selfs[cat])


@dataclass
class StepRow:
    """One step: its window and time by category (seconds)."""

    index: int
    start_ps: int
    duration_s: float
    compute_s: float = 0.0
    input_s: float = 0.0
    collectives_s: float = 0.0
    host_s: float = 0.0
    idle_s: float = 0.0
    input_before_s: float = 0.0  # of input_s (and duration_s): the wait before the window

    def to_dict(self) -> dict[str, Any]:
        return {"step": self.index, "duration_s": self.duration_s, "compute_s": self.compute_s,
                "input_s": self.input_s, "collectives_s": self.collectives_s,
                "host_s": self.host_s, "idle_s": self.idle_s,
                "input_before_s": self.input_before_s}  # of input_s and duration_s


@dataclass
class Breakdown:
    """Step-time breakdown of one host or device: per-step rows and their means."""

    where: str
    steps: list[StepRow] = field(default_factory=list)

    def mean(self, what: str) -> float | None:
        if not self.steps:
            return None
        return statistics.fmean(getattr(s, what) for s in self.steps)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"where": self.where, "steps": len(self.steps)}
        for name in ("duration_s", *tuple(f"{c}_s" for c in CATEGORIES)):
            out[name] = self.mean(name)
        return out


@dataclass
class ReadSummary:
    """What a capture says, read without TensorFlow."""

    path: str
    hostnames: list[str] = field(default_factory=list)
    planes: list[str] = field(default_factory=list)
    devices: list[str] = field(default_factory=list)
    recorded_errors: list[str] = field(default_factory=list)
    recorded_warnings: list[str] = field(default_factory=list)
    duration_s: float = 0.0
    events: int = 0
    op_events: int = 0
    step_source: str = ""
    step_windows: list[tuple[int, int]] = field(default_factory=list, repr=False)
    ops: list[OpStat] = field(default_factory=list)
    breakdowns: list[Breakdown] = field(default_factory=list)
    eager_ps: int = 0
    graph_ps: int = 0
    input_ps: int = 0
    host_op_ps: int = 0
    device_op_ps: int = 0
    sixteen_bit_ps: int = 0
    copies: int = 0
    h2d_ps: int = 0
    d2h_ps: int = 0
    kernel_launches: int | None = None
    launch_ps: int = 0
    tf_function_calls: dict[str, int] = field(default_factory=dict)
    tracing_counts: dict[str, int] = field(default_factory=dict)
    traced_calls: dict[str, int] = field(default_factory=dict)  # calls that traced (retraced)
    hlo_modules: int = 0
    hlo_protos: list[Any] = field(default_factory=list, repr=False)  # (plane, name, Blob|bytes)
    thread_lines: int = 0
    unsorted_lines: int = 0

    @property
    def host_only(self) -> bool:
        return not self.devices

    @property
    def steps(self) -> int:
        return len(self.step_windows)

    @property
    def step_s(self) -> float | None:
        if not self.step_windows:
            return None
        return statistics.median(e - s for s, e in self.step_windows) / 1e12

    @property
    def mean_step_s(self) -> float | None:
        if not self.step_windows:
            return None
        return statistics.fmean(e - s for s, e in self.step_windows) / 1e12

    @property
    def fed_step_times(self) -> list[float] | None:
        """Each step's time with the input wait fetched before its window (the breakdown's
        basis, on the first host), where some step had one; else None (the markers' times)."""
        for b in self.breakdowns:
            if b.where.startswith(HOST_PREFIX) and any(r.input_before_s for r in b.steps):
                return [r.duration_s for r in b.steps]
        return None


# ---------------------------------------------------------------------------------------------


def summarise_capture(cap: Capture, progress: Callable[[int], None] | None = None
                      ) -> ReadSummary:
    """Read every event of ``cap`` once into a :class:`ReadSummary`."""
    out = ReadSummary(path=cap.path, hostnames=list(cap.hostnames),
                      planes=[p.name for p in cap.planes],
                      recorded_errors=list(cap.errors), recorded_warnings=list(cap.warnings))
    rows: dict[tuple[str, ...], OpStat] = {}
    steps: list[tuple[int, int]] = []
    calls: list[tuple[int, int]] = []
    timelines: list[Timeline] = []
    span = [None, None]
    for plane in cap.planes:
        if plane.name.startswith(HOST_PREFIX):
            tl = Timeline(plane.name, device=False)
            _host_plane(cap, plane, tl, out, rows, steps, calls, span, progress)
            timelines.append(tl)
        elif plane.name.startswith(DEVICE_PREFIXES):
            out.devices.append(plane.name)
            tl = Timeline(plane.name, device=True)
            _device_plane(cap, plane, tl, out, rows, span, progress)
            timelines.append(tl)
        elif plane.name == "/host:CUPTI":
            _launches(cap, plane, out)
        elif plane.name == "/host:metadata":
            for meta in plane.event_metadata.values():
                for s in meta.stats:
                    if plane.stat_names.get(s.metadata_id) == "Hlo Proto":
                        out.hlo_protos.append((meta.name, s.value))
            out.hlo_modules = len(out.hlo_protos)
    out.duration_s = _duration(cap, span)
    if steps:
        out.step_source, out.step_windows = "step markers", sorted(set(steps))
    elif calls:
        out.step_source, out.step_windows = "tf.function calls", sorted(calls)
    elif span[0] is not None:
        out.step_source, out.step_windows = "whole capture", [(span[0], span[1])]
    out.ops = sorted(rows.values(), key=lambda r: -r.self_ps)
    out.breakdowns = [_breakdown(tl, out.step_windows, timelines) for tl in timelines
                      if tl.op_events or not tl.device]
    out.op_events = sum(tl.op_events for tl in timelines)
    out.thread_lines = sum(tl.lines for tl in timelines)
    out.unsorted_lines = sum(tl.unsorted_lines for tl in timelines)
    return out


class _Nest:
    """Self time of nested op events on one line, as they stream in start order."""

    def __init__(self, finish: Callable[[int, int, int, Any], None]):
        self.stack: list[list[Any]] = []  # [end, start, duration, self, payload]
        self.finish = finish

    def push(self, start: int, dur: int, payload: Any) -> None:
        stack = self.stack
        while stack and stack[-1][0] <= start:
            _end, s, d, own, p = stack.pop()
            self.finish(s, d, own, p)
        if stack:
            stack[-1][3] -= dur
        stack.append([start + dur, start, dur, dur, payload])

    def close(self) -> None:
        while self.stack:
            _end, s, d, own, p = self.stack.pop()
            self.finish(s, d, own, p)


def _row(rows: dict[tuple[str, ...], OpStat], name: str, op_type: str, where: str,
         kind: str, module: str | None = None) -> OpStat:
    key = (name, where, kind, module or "")
    row = rows.get(key)
    if row is None:
        row = rows[key] = OpStat(name, op_type, where, kind, module=module)
    return row


def _module(finder: StatFinder, buf: bytes, a: int, b: int) -> str | None:
    """The XLA module an HLO op event belongs to, named as the capture's metadata plane
    names its HloProto: ``<module name>(<program id>)``."""
    name = finder.get("hlo_module", buf, a, b)
    if name is None:
        return None
    pid = finder.get("program_id", buf, a, b)
    return f"{name}({pid})" if pid is not None else str(name)


def _host_plane(cap: Capture, plane: Plane, tl: Timeline, out: ReadSummary,
                rows: dict[tuple[str, ...], OpStat], steps: list[tuple[int, int]],
                calls: list[tuple[int, int]], span: list[Any],
                progress: Callable[[int], None] | None) -> None:
    where = plane.name
    finder = StatFinder(plane, ("step_num", "tf_function_call", "tracing_count", "eager_op",
                                "is_func", "hlo_op", "hlo_module", "program_id"))
    # Classify each event metadata once: an op (graph or XLA), EagerExecute, or other.
    graph_ops: dict[int, OpStat] = {}
    cats: dict[int, int] = {}
    for mid, meta in plane.event_metadata.items():
        by_name = host_op_by_name(meta.name)  # the same rule as profile/xplane.py's
        if by_name is not None:
            name, op_type, kind = by_name
            graph_ops[mid] = _row(rows, name, op_type, where, kind)
            cats[mid] = INPUT if kind == "dataset" else category(op_type)
    eager_mids = {mid for mid, meta in plane.event_metadata.items() if meta.name == "EagerExecute"}
    # TF's own bookkeeping events carry stats (thread-pool ids, allocator figures) but never a
    # step marker or a tf.function call: their stats are not looked at.
    quiet = {mid for mid, meta in plane.event_metadata.items()
             if meta.name.startswith(BOOKKEEPING)}
    names = {mid: meta.name for mid, meta in plane.event_metadata.items()}
    want_stats = any(finder.has(n) for n in ("step_num", "tf_function_call", "eager_op",
                                             "hlo_op"))
    has_hlo = finder.has("hlo_op")
    totals = [0, 0, 0]  # graph (and dataset), eager, xla self ps

    def finish(start: int, dur: int, own: int, payload: Any) -> None:
        row, cat, kind = payload
        own = max(own, 0)
        if pipeline:
            cat = PIPELINE
        row.count += 1
        row.self_ps += own
        row.total_ps += dur
        tl.add(cat, start, own)
        if cat == INPUT and row.type in INPUT_OP_TYPES:  # the wait, once (not nested events)
            out.input_ps += dur
            tl.waits.append((start, dur))
        totals[kind] += own

    pipeline = False
    for line in plane.lines:
        tl.lines += 1
        pipeline = line.name.startswith(PIPELINE_LINES)
        nest = _Nest(finish)
        last = -(1 << 62)
        outer_call_end = -(1 << 62)
        pending: list[tuple[int, int, Any]] = []
        n = 0
        for mid, start, dur, buf, a, b in cap.events(line):
            n += 1
            if span[0] is None or start < span[0]:
                span[0] = start
            if span[1] is None or start + dur > span[1]:
                span[1] = start + dur
            row = graph_ops.get(mid)
            payload = None
            if row is not None:
                payload = (row, cats[mid], 0)
            elif a != b and want_stats and mid not in quiet:
                if mid in eager_mids:
                    op = finder.get("eager_op", buf, a, b)
                    if op is not None and not finder.get("is_func", buf, a, b):
                        op_type = op_kind(str(op))
                        payload = (_row(rows, op_type, op_type, where, "eager"),
                                   category(op_type), 1)
                elif has_hlo and (hlo := finder.get("hlo_op", buf, a, b)) is not None:
                    base = hlo_op_type(str(hlo))
                    payload = (_row(rows, str(hlo), base, where, "xla",
                                    _module(finder, buf, a, b)), category(base), 2)
                else:
                    if dur and finder.get("step_num", buf, a, b) is not None:
                        steps.append((start, start + dur))
                    fn = finder.get("tf_function_call", buf, a, b)
                    if fn is not None:
                        fname = names.get(mid, "")
                        out.tf_function_calls[fname] = out.tf_function_calls.get(fname, 0) + 1
                        if str(fn).startswith("traced"):
                            out.traced_calls[fname] = out.traced_calls.get(fname, 0) + 1
                        count = finder.get("tracing_count", buf, a, b)
                        if isinstance(count, int):
                            out.tracing_counts[fname] = max(out.tracing_counts.get(fname, 0),
                                                            count)
                        if start >= outer_call_end:
                            calls.append((start, start + dur))
                            outer_call_end = start + dur
            if payload is None:
                continue
            if start < last:
                pending.append((start, dur, payload))
                continue
            last = start
            nest.push(start, dur, payload)
        nest.close()
        if pending:  # events out of order on this line: place them after a sort
            tl.unsorted_lines += 1
            late = _Nest(finish)
            for start, dur, payload in sorted(pending, key=lambda e: (e[0], -e[1])):
                late.push(start, dur, payload)
            late.close()
        tl.events += n
        out.events += n
        if progress:
            progress(n)
    tl.op_events = sum(len(a) for a in tl.starts)
    out.graph_ps += totals[0] + totals[2]
    out.eager_ps += totals[1]
    out.host_op_ps += sum(totals)


_SIXTEEN_BIT = re.compile(r"fp16|f16|bf16|half|hmma|float16", re.IGNORECASE)


def _device_plane(cap: Capture, plane: Plane, tl: Timeline, out: ReadSummary,
                  rows: dict[tuple[str, ...], OpStat], span: list[Any],
                  progress: Callable[[int], None] | None) -> None:
    where = plane.name
    finder = StatFinder(plane, ("tf_op", "hlo_op", "hlo_module", "program_id",
                                "memcpy_details"))
    lines: list[Line] = [ln for ln in plane.lines if ln.name.startswith("Stream")]
    if not lines:
        lines = [ln for ln in plane.lines if ln.name not in DERIVED_LINES]
    names = {mid: meta.name for mid, meta in plane.event_metadata.items()}
    memcpy = {mid for mid, name in names.items() if "memcpy" in name.lower()}
    sixteen = {mid for mid, name in names.items() if _SIXTEEN_BIT.search(name)}
    by_key: dict[tuple[int, Any, Any], tuple[OpStat, int]] = {}
    for line in lines:
        tl.lines += 1
        copy_line = "memcpy" in line.name.lower()
        n = 0
        for mid, start, dur, buf, a, b in cap.events(line):
            n += 1
            if span[0] is None or start < span[0]:
                span[0] = start
            if span[1] is None or start + dur > span[1]:
                span[1] = start + dur
            if mid in memcpy or copy_line:
                text = names.get(mid, "") + " " + line.name + " " + str(
                    finder.get("memcpy_details", buf, a, b) or "")
                out.copies += 1
                if re.search(r"H2D|HtoD", text):
                    out.h2d_ps += dur
                    tl.add(INPUT, start, dur)
                elif re.search(r"D2H|DtoH", text):
                    out.d2h_ps += dur
                continue
            tf_op = finder.get("tf_op", buf, a, b)
            hlo = finder.get("hlo_op", buf, a, b) if tf_op is None else None
            module = _module(finder, buf, a, b) if hlo is not None else None
            key = (mid, tf_op or hlo, module)
            hit = by_key.get(key)
            if hit is None:
                m = _TF_OP_EVENT.match(str(tf_op)) if tf_op else None
                if m:
                    op_type = op_kind(m.group(2))
                    row = _row(rows, m.group(1), op_type, where, "kernel")
                elif hlo:
                    base = hlo_op_type(str(hlo))
                    op_type = base
                    row = _row(rows, str(hlo), base, where, "xla", module)
                else:
                    op_type = names.get(mid, "")
                    row = _row(rows, op_type, op_type, where, "kernel")
                hit = by_key[key] = (row, category(op_type))
            row, cat = hit
            row.count += 1
            row.self_ps += dur
            row.total_ps += dur
            tl.add(cat, start, dur)
            out.device_op_ps += dur
            if mid in sixteen:
                out.sixteen_bit_ps += dur
        tl.events += n
        out.events += n
        if progress:
            progress(n)
    tl.op_events = sum(len(a) for a in tl.starts)
    if out.kernel_launches is None:
        out.kernel_launches = 0
    out.kernel_launches += tl.op_events - len(tl.starts[INPUT])


def _launches(cap: Capture, plane: Plane, out: ReadSummary) -> None:
    launch = {mid for mid, m in plane.event_metadata.items() if "LaunchKernel" in m.name}
    count = ps = 0
    for line in plane.lines:
        for mid, _start, dur, _buf, _a, _b in cap.events(line):
            out.events += 1
            if mid in launch:
                count += 1
                ps += dur
    if count:
        out.kernel_launches, out.launch_ps = count, ps


def _duration(cap: Capture, span: list[Any]) -> float:
    for plane in cap.planes:
        if plane.name == "Task Environment":
            stats = plane.stat_dict(plane.stats)
            a, b = stats.get("profile_start_time"), stats.get("profile_stop_time")
            if isinstance(a, int) and isinstance(b, int) and b > a:
                return (b - a) / 1e9
    if span[0] is not None:
        return (span[1] - span[0]) / 1e12
    return 0.0


def _attribute(starts: array, selfs: array, windows: list[tuple[int, int]],
               sums: list[float]) -> None:
    """Add each op's self time to the step whose window holds its start."""
    first = [w[0] for w in windows]
    for start, own in zip(starts, selfs, strict=False):
        i = bisect_right(first, start) - 1
        if i >= 0 and start < windows[i][1]:
            sums[i] += own


def _breakdown(tl: Timeline, windows: list[tuple[int, int]],
               timelines: list[Timeline]) -> Breakdown:
    bd = Breakdown(where=tl.plane)
    if not windows:
        return bd
    per_cat = []
    for cat in range(4):
        sums = [0.0] * len(windows)
        _attribute(tl.starts[cat], tl.selfs[cat], windows, sums)
        per_cat.append(sums)
    host_input = [0.0] * len(windows)
    host_ops = [0.0] * len(windows)
    # the batch each step waited for before its window opened (an eager loop's `for x in ds`
    # runs outside the step marker): the step's input, and part of its time
    before = [0] * len(windows)
    for host in ([tl] if not tl.device else [o for o in timelines if not o.device]):
        waits = waits_before_steps(windows, host.waits)
        before = [a + b for a, b in zip(before, waits, strict=True)]
    if tl.device:  # the host's input waits and op time, beside this device's kernels
        for other in timelines:
            if not other.device:
                _attribute(other.starts[INPUT], other.selfs[INPUT], windows, host_input)
                for cat in (COMPUTE, COLLECTIVE):
                    _attribute(other.starts[cat], other.selfs[cat], windows, host_ops)
    for i, (s, e) in enumerate(windows):
        step_ps = e - s + before[i]
        row = StepRow(i, s, step_ps / 1e12)
        row.compute_s = per_cat[COMPUTE][i] / 1e12
        row.input_s = (per_cat[INPUT][i] + host_input[i] + before[i]) / 1e12
        row.input_before_s = before[i] / 1e12
        row.collectives_s = per_cat[COLLECTIVE][i] / 1e12
        row.host_s = host_ops[i] / 1e12
        busy = row.compute_s + row.input_s + row.collectives_s + row.host_s
        row.idle_s = max(row.duration_s - busy, 0.0)
        bd.steps.append(row)
    return bd
