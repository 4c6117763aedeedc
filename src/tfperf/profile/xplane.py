"""Read a profiler capture (``*.xplane.pb``, an XSpace protobuf) into op-time figures.

The file is read by tfperf's own protobuf reader (``profile/read``), without TensorFlow;
``summarise`` also takes a space parsed by TF's generated ``xplane_pb2``. What we read:

* host plane ``/host:CPU``: graph ops run by TF executors appear as events named
  ``node_name:OpType``; eager ops as ``EagerExecute`` events carrying an ``eager_op`` stat (the
  op type) and ``is_func`` (1 when the "op" is a whole ``tf.function``). Step markers are root
  events with a ``step_num`` stat.
* device planes ``/device:GPU:N``: kernels and memory copies on ``Stream`` lines; copies are
  named ``Memcpy…`` (H2D / D2H). Kernel launches are ``…LaunchKernel…`` driver calls on
  ``/host:CUPTI`` when present, else one per kernel.

On a CPU-only capture there are no device planes; the summary says "host only" and leaves
device figures as None rather than inventing them.
"""

from __future__ import annotations

import re
import statistics
from bisect import bisect_left
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HOST_PLANE = "/host:CPU"
GPU_PREFIX = "/device:GPU:"
CUPTI_PLANE = "/host:CUPTI"
# Timelines XProf derives from the streams; counting them too would double device time.
DERIVED_LINES = {"TensorFlow Ops", "TensorFlow Name Scope", "XLA Modules", "XLA Ops",
                 "Async XLA Ops", "Steps", "Source code", "Launch Stats", "_counters_",
                 "Framework Ops", "Framework Name Scope"}
INPUT_OP_TYPES = {"IteratorGetNext", "IteratorGetNextSync", "IteratorGetNextAsOptional"}
_TF_OP_EVENT = re.compile(r"^([^\s:]+):([A-Za-z_][A-Za-z0-9_]*)$")
_HLO_SUFFIX = re.compile(r"\.\d+$")
DATASET_PREFIX = "Iterator::"  # tf.data's iterators, as XProf lists them
# oneDNN layout conversions: kernels of their own, not a rewrite of a user's op.
_MKL_OWN_OPS = frozenset({"_MklToTf", "_MklInputConversion"})


def op_kind(op_type: str) -> str:
    """The TF op a kernel implements. On CPUs that oneDNN supports, TF rewrites ops to its
    kernels (``MatMul`` → ``_MklMatMul`` or ``_MklNativeMatMul``): report the op the user
    wrote, so that op tables and advice read the same on every machine."""
    if op_type.startswith("_Mkl") and op_type not in _MKL_OWN_OPS:
        op_type = op_type[4:]
        if op_type.startswith("Native") and len(op_type) > 6:
            op_type = op_type[6:]
    return op_type


def host_op_by_name(name: str) -> tuple[str, str, str] | None:
    """(row name, op type, kind) of a host event that is an op by its name alone: a graph op
    ``node:OpType`` ("graph") or a tf.data iterator ``Iterator::…`` ("dataset"); else None.
    The one rule both readers (this module's and ``profile/read``'s) use, so that `profile
    SCRIPT` and `profile --read` of the same capture give the same op table and eager share:
    an iterator event is op time of its own, and the ``IteratorGetNext`` that waits on it on
    the same thread keeps only its self time."""
    m = _TF_OP_EVENT.match(name)
    if m and "::" not in name:
        return m.group(1), op_kind(m.group(2)), "graph"
    if name.startswith(DATASET_PREFIX):
        return name, "Dataset", "dataset"
    return None


def hlo_op_type(hlo_op: str) -> str:
    """The op type of an XLA op compiled for the CPU (``hlo_op`` stat): ``dot.3`` → ``dot``."""
    return _HLO_SUFFIX.sub("", hlo_op)


_SIXTEEN_BIT = re.compile(r"fp16|f16|bf16|half|hmma|float16", re.IGNORECASE)


class CaptureError(Exception):
    """The capture file is missing, unreadable or not an XSpace."""


def _xplane_pb2() -> Any:
    for name in ("tensorflow.tsl.profiler.protobuf.xplane_pb2",
                 "tsl.profiler.protobuf.xplane_pb2",
                 "tensorflow.core.profiler.protobuf.xplane_pb2"):
        try:
            import importlib

            return importlib.import_module(name)
        except ImportError:
            continue
    raise CaptureError("no xplane_pb2 module: TensorFlow ≥ 2.12 is needed to read captures")


def load_xspace(path: str | Path) -> Any:
    """The capture at ``path``, read by tfperf's own reader (``profile/read``): no TensorFlow
    needed. The objects have the attributes of TF's generated ``xplane_pb2`` classes."""
    from tfperf.profile.read import view, xspace

    try:
        space = view.load(path)
    except xspace.CaptureFileError as exc:
        if exc.kind == "unreadable":
            raise CaptureError(str(exc)) from None
        raise CaptureError(f"{path} is not an XSpace protobuf: {exc}") from None
    if not space.planes:
        raise CaptureError(f"{path} holds no profiler planes")
    return space


def waits_before_steps(windows: Sequence[tuple[int, int]],
                       waits: Iterable[tuple[int, int]]) -> list[int]:
    """Per step, the input wait (``(start, ps)`` pairs) that fed it from outside its window:
    the last wait that started between the previous step's end and this step's start and
    ended by it (an eager loop's ``for x in ds:`` fetches one batch before the step marker it
    feeds). Only the last: the gap may hold other iterators' waits that fed no step (an
    unmarked validation loop between epochs, a peek before the loop), and a wait that runs
    into the step is another thread's. Waits inside a window, or after the last one (the
    fetch that ends the loop), are not counted. ``windows`` are sorted by start."""
    last: list[tuple[int, int] | None] = [None] * len(windows)
    starts = [w[0] for w in windows]
    for start, ps in waits:
        i = bisect_left(starts, start)  # the first step that starts at or after the wait
        if i == len(windows) or start == starts[i] or start + ps > starts[i]:
            continue
        if i > 0 and start < windows[i - 1][1]:
            continue  # inside the previous step
        seen = last[i]
        if seen is None or start > seen[0]:
            last[i] = (start, ps)
    return [w[1] if w is not None else 0 for w in last]


@dataclass
class OpRow:
    """Time of one op (graph ops by node name, eager ops by type) where it ran."""

    name: str
    type: str
    where: str  # "host" or "device"
    eager: bool
    count: int = 0
    self_s: float = 0.0
    total_s: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "type": self.type, "where": self.where, "eager": self.eager,
                "count": self.count, "self_s": self.self_s, "total_s": self.total_s}


@dataclass
class CaptureSummary:
    """What a capture says about op time. Device figures are None on a host-only capture."""

    path: str
    devices: list[str] = field(default_factory=list)
    duration_s: float = 0.0
    steps: int = 0
    step_s: float | None = None  # median step time when steps were marked
    step_source: str = ""
    ops: list[OpRow] = field(default_factory=list)
    by_type: dict[str, float] = field(default_factory=dict)
    host_op_s: float = 0.0
    device_op_s: float | None = None
    eager_s: float = 0.0
    graph_s: float = 0.0
    input_s: float = 0.0  # every iterator wait of the capture
    # The input wait that fed the steps (inside them, or fetched just before: an eager loop's
    # batch) and the steps' summed time plus those waits: one basis for the input share, the
    # one `--read`'s step-time breakdown shows. None where the capture has no steps.
    input_fed_s: float | None = None
    steps_wall_s: float | None = None
    kernel_launches: int | None = None
    launch_s: float | None = None
    h2d_s: float | None = None
    d2h_s: float | None = None
    copies: int | None = None
    sixteen_bit_s: float | None = None
    # (start, end) in ps of each step: step markers, else top-level tf.function calls
    step_windows: list[tuple[int, int]] = field(default_factory=list, repr=False)
    # graph op events (start ps, self ps, node name, op type, "host"/"device"): per-step
    # splits (replicas.py) sum them per window; eager ops carry no node name
    op_events: list[tuple[int, int, str, str, str]] = field(default_factory=list, repr=False)

    @property
    def host_only(self) -> bool:
        return not self.devices

    @property
    def step_total_s(self) -> float:
        if self.step_s is not None and self.steps:
            return self.step_s * self.steps
        return self.duration_s

    @property
    def eager_share(self) -> float | None:
        total = self.eager_s + self.graph_s
        return self.eager_s / total if total > 0 else None

    @property
    def input_share(self) -> float | None:
        if self.input_fed_s is not None and self.steps_wall_s:
            return self.input_fed_s / self.steps_wall_s
        return self.input_s / self.step_total_s if self.step_total_s > 0 else None

    @property
    def launch_share(self) -> float | None:
        if self.launch_s is None or self.step_total_s <= 0:
            return None
        return self.launch_s / self.step_total_s

    @property
    def sixteen_bit_share(self) -> float | None:
        if self.sixteen_bit_s is None or not self.device_op_s:
            return None
        return self.sixteen_bit_s / self.device_op_s

    @property
    def launches_per_step(self) -> float | None:
        if self.kernel_launches is None:
            return None
        return self.kernel_launches / max(self.steps, 1)

    def to_dict(self, top: int = 20) -> dict[str, Any]:
        return {
            "path": self.path, "host_only": self.host_only, "devices": self.devices,
            "duration_s": self.duration_s, "steps": self.steps, "step_s": self.step_s,
            "step_source": self.step_source,
            "host_op_s": self.host_op_s, "device_op_s": self.device_op_s,
            "eager_s": self.eager_s, "graph_s": self.graph_s, "eager_share": self.eager_share,
            "input_s": self.input_s, "input_share": self.input_share,
            "kernel_launches": self.kernel_launches,
            "kernel_launches_per_step": self.launches_per_step,
            "launch_s": self.launch_s, "launch_share": self.launch_share,
            "h2d_s": self.h2d_s, "d2h_s": self.d2h_s, "copies": self.copies,
            "sixteen_bit_share": self.sixteen_bit_share,
            "by_type": dict(sorted(self.by_type.items(), key=lambda kv: -kv[1])),
            "top_ops": [o.to_dict() for o in self.ops[:top]],
            # each step's (start after the first, duration) in seconds: the HTML timeline
            "step_windows_s": [[(b - self.step_windows[0][0]) / 1e12, (e - b) / 1e12]
                               for b, e in self.step_windows],
        }


# ---------------------------------------------------------------------------------------------
# reading


class _Plane:
    """Name look-ups for one XPlane's events and stats."""

    def __init__(self, plane: Any):
        self.plane = plane
        self.stat_names = {k: m.name for k, m in plane.stat_metadata.items()}
        self.event_names = {k: m.name for k, m in plane.event_metadata.items()}
        self.display = {k: m.display_name for k, m in plane.event_metadata.items()}

    def stats(self, event: Any) -> dict[str, Any]:
        out = {}
        for s in event.stats:
            which = s.WhichOneof("value")
            value = getattr(s, which) if which else None
            if which == "ref_value":
                value = self.stat_names.get(value, value)
            elif which == "bytes_value":
                value = bytes(value or b"")
            out[self.stat_names.get(s.metadata_id, str(s.metadata_id))] = value
        return out


def _self_times(events: list[tuple[int, int, Any]]) -> dict[int, int]:
    """Self time (ps) per event index among nested op events on one line."""
    order = sorted(range(len(events)), key=lambda i: (events[i][0], -events[i][1]))
    self_ps = {i: events[i][1] for i in order}
    stack: list[int] = []
    for i in order:
        start, dur, _ = events[i]
        while stack and events[stack[-1]][0] + events[stack[-1]][1] <= start:
            stack.pop()
        if stack:
            self_ps[stack[-1]] -= dur
        stack.append(i)
    return {i: max(v, 0) for i, v in self_ps.items()}


def summarise(path: str | Path, space: Any | None = None) -> CaptureSummary:
    """Read the capture at ``path`` (or an already parsed ``space``) into a summary."""
    space = space if space is not None else load_xspace(path)
    out = CaptureSummary(path=str(path))
    rows: dict[tuple[str, str, bool], OpRow] = {}
    by_type: defaultdict[str, float] = defaultdict(float)

    def add(name: str, op_type: str, where: str, eager: bool, self_ps: int, total_ps: int) -> None:
        row = rows.get((name, where, eager))
        if row is None:
            row = rows[(name, where, eager)] = OpRow(name, op_type, where, eager)
        row.count += 1
        row.self_s += self_ps / 1e12
        row.total_s += total_ps / 1e12
        by_type[op_type] += self_ps / 1e12

    span = [None, None]
    steps: list[tuple[int, int]] = []
    calls: list[tuple[int, int]] = []
    waits: list[tuple[int, int]] = []
    for plane in space.planes:
        if plane.name == HOST_PLANE:
            _read_host(_Plane(plane), out, add, steps, calls, span, waits)
    device_planes = [p for p in space.planes if p.name.startswith(GPU_PREFIX)]
    if device_planes:
        _read_devices(device_planes, out, add)
        cupti = [p for p in space.planes if p.name == CUPTI_PLANE]
        if cupti:
            _read_launches(_Plane(cupti[0]), out)
    env = [p for p in space.planes if p.name == "Task Environment"]
    out.duration_s = _duration(env[0] if env else None, span)
    if steps:
        out.steps = len(steps)
        out.step_s = statistics.median(end - start for start, end in steps) / 1e12
        out.step_source, out.step_windows = "step markers", sorted(steps)
    elif calls:
        out.steps, out.step_source, out.step_windows = len(calls), "tf.function calls", calls
    else:
        out.steps, out.step_source = 1, "whole capture"
    if out.step_windows:
        windows = sorted(out.step_windows)
        before = sum(waits_before_steps(windows, waits))
        inside = sum(_in_windows(windows, waits))
        out.input_fed_s = (inside + before) / 1e12
        out.steps_wall_s = (sum(e - b for b, e in windows) + before) / 1e12
    out.ops = sorted(rows.values(), key=lambda r: -r.self_s)
    out.by_type = dict(by_type)
    return out


def _in_windows(windows: Sequence[tuple[int, int]],
                waits: Iterable[tuple[int, int]]) -> list[int]:
    """Per step, the waits that started inside its window."""
    out = [0] * len(windows)
    starts = [w[0] for w in windows]
    for start, ps in waits:
        i = bisect_left(starts, start + 1) - 1  # the last step that starts at or before it
        if i >= 0 and start < windows[i][1]:
            out[i] += ps
    return out


def _read_host(p: _Plane, out: CaptureSummary, add: Any, steps: list[tuple[int, int]],
               calls: list[tuple[int, int]], span: list[Any],
               waits: list[tuple[int, int]]) -> None:
    """Host ops, eager vs graph, input waits, step markers and top-level tf.function runs."""
    for line in p.plane.lines:
        base_ps = line.timestamp_ns * 1000
        ops: list[tuple[int, int, tuple[str, str, str]]] = []
        outer_function_end = -1
        for ev in line.events:
            name = p.event_names.get(ev.metadata_id, "")
            start = base_ps + ev.offset_ps
            end = start + ev.duration_ps
            span[0] = start if span[0] is None else min(span[0], start)
            span[1] = end if span[1] is None else max(span[1], end)
            by_name = host_op_by_name(name)
            if by_name is not None:
                ops.append((start, ev.duration_ps, by_name))
                continue
            if name == "EagerExecute" or ev.stats:
                stats = p.stats(ev)
                if name == "EagerExecute":
                    if "eager_op" in stats and not stats.get("is_func"):
                        op_type = op_kind(str(stats["eager_op"]))
                        ops.append((start, ev.duration_ps, (op_type, op_type, "eager")))
                elif "hlo_op" in stats:  # an XLA op compiled for the CPU
                    hlo = str(stats["hlo_op"])
                    ops.append((start, ev.duration_ps, (hlo, hlo_op_type(hlo), "xla")))
                else:
                    if "step_num" in stats and ev.duration_ps:
                        steps.append((start, end))
                    if "tf_function_call" in stats and start >= outer_function_end:
                        calls.append((start, end))
                        outer_function_end = end
        self_ps = _self_times(ops)
        for i, (start, dur, (name, op_type, kind)) in enumerate(ops):
            eager = kind == "eager"
            add(name, op_type, "host", eager, self_ps[i], dur)
            if kind == "graph":
                out.op_events.append((start, self_ps[i], name, op_type, "host"))
            out.host_op_s += self_ps[i] / 1e12
            if eager:
                out.eager_s += self_ps[i] / 1e12
            else:
                out.graph_s += self_ps[i] / 1e12
            if op_type in INPUT_OP_TYPES:
                out.input_s += dur / 1e12
                waits.append((start, dur))


def _read_devices(planes: list[Any], out: CaptureSummary, add: Any) -> None:
    out.devices = [p.name for p in planes]
    out.device_op_s = out.h2d_s = out.d2h_s = out.sixteen_bit_s = 0.0
    out.copies = kernels = 0
    for raw in planes:
        p = _Plane(raw)
        lines = [ln for ln in raw.lines if ln.name.startswith("Stream")]
        if not lines:
            lines = [ln for ln in raw.lines if ln.name not in DERIVED_LINES]
        for line in lines:
            base_ps = line.timestamp_ns * 1000
            for ev in line.events:
                name = p.event_names.get(ev.metadata_id, "")
                seconds = ev.duration_ps / 1e12
                if "memcpy" in name.lower() or "memcpy" in line.name.lower():
                    text = name + " " + line.name + " " + str(p.stats(ev).get("memcpy_details", ""))
                    out.copies += 1
                    if re.search(r"H2D|HtoD", text):
                        out.h2d_s += seconds
                    elif re.search(r"D2H|DtoH", text):
                        out.d2h_s += seconds
                    continue
                kernels += 1
                stats = p.stats(ev)
                tf_op = str(stats.get("tf_op", ""))
                m = _TF_OP_EVENT.match(tf_op)
                op_type = op_kind(m.group(2)) if m else name
                eager = bool(stats.get("is_eager"))
                add(m.group(1) if m else name, op_type, "device", eager,
                    ev.duration_ps, ev.duration_ps)
                if m and not eager:
                    out.op_events.append((base_ps + ev.offset_ps, ev.duration_ps, m.group(1),
                                          op_type, "device"))
                out.device_op_s += seconds
                if _SIXTEEN_BIT.search(name):
                    out.sixteen_bit_s += seconds
    out.kernel_launches = kernels


def _read_launches(p: _Plane, out: CaptureSummary) -> None:
    launches, launch_ps = 0, 0
    for line in p.plane.lines:
        for ev in line.events:
            if "LaunchKernel" in p.event_names.get(ev.metadata_id, ""):
                launches += 1
                launch_ps += ev.duration_ps
    if launches:
        out.kernel_launches, out.launch_s = launches, launch_ps / 1e12


def _duration(env: Any, span: list[Any]) -> float:
    if env is not None:
        p = _Plane(env)
        stats = {p.stat_names.get(s.metadata_id): s for s in env.stats}
        start, stop = stats.get("profile_start_time"), stats.get("profile_stop_time")
        if start is not None and stop is not None:
            a, b = start.uint64_value or start.int64_value, stop.uint64_value or stop.int64_value
            if b > a:
                return (b - a) / 1e9
    if span[0] is not None:
        return (span[1] - span[0]) / 1e12
    return 0.0


def ops_by_type(summary: CaptureSummary) -> dict[str, float]:
    grouped: defaultdict[str, float] = defaultdict(float)
    for row in summary.ops:
        grouped[row.type] += row.self_s
    return dict(grouped)
