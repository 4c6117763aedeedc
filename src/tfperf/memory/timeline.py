"""Per step and device: the peak, what was live at it, and the memory timeline.

The allocator's own running total (``bytes_allocated`` after each event) is the timeline: no
reconstruction can beat it. Replaying the events in time order (an allocation adds its address
to the live set, a free removes it) gives the tensors live at the peak, each with the op that
allocated it. What was allocated before the capture began (weights, inputs, anything the
program held) has no event: it is the part of the total no live allocation explains, reported
as held before the step.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from tfperf.memory.allocator import device_of
from tfperf.memory.events import AllocEvent, CaptureMemory, StepWindow

MAX_TIMELINE_POINTS = 200


@dataclass
class StepPeak:
    """One step on one device."""

    step: int
    device: str
    allocator: str
    start_bytes: int  # in use when the step began
    end_bytes: int  # in use when it ended
    peak_bytes: int  # the allocator's own: chunks as handed out (rounding, fragmentation)
    peak_time_s: float  # since the step began
    duration_s: float
    live: list[AllocEvent] = field(default_factory=list)  # allocated in the capture, live at peak
    timeline: list[tuple[float, int]] = field(default_factory=list)  # (s since start, bytes)
    #: the peak of what the tensors asked for (requested bytes): the allocator's peak without
    #: its rounding and the unsplit chunks BFC hands out (up to 2x a request)
    tensor_peak_bytes: int = 0

    @property
    def live_bytes(self) -> int:
        return sum(e.nbytes for e in self.live)

    @property
    def held_before_bytes(self) -> int:
        """Live at the peak but allocated before the capture: no event says by what."""
        return max(self.peak_bytes - self.live_bytes, 0)

    def to_dict(self) -> dict[str, Any]:
        return {"step": self.step, "device": self.device, "allocator": self.allocator,
                "start_bytes": self.start_bytes, "end_bytes": self.end_bytes,
                "peak_bytes": self.peak_bytes, "tensor_peak_bytes": self.tensor_peak_bytes,
                "peak_time_s": self.peak_time_s,
                "duration_s": self.duration_s, "live_bytes": self.live_bytes,
                "held_before_bytes": self.held_before_bytes,
                "timeline": [[round(t, 9), b] for t, b in self.timeline]}


def _before(e: AllocEvent) -> int:
    """The allocator's total just before ``e``."""
    return e.in_use_after - e.nbytes if e.alloc else e.in_use_after + e.nbytes


def _windows(mem: CaptureMemory) -> list[StepWindow]:
    if mem.steps:
        return mem.steps
    if not mem.events:
        return []
    return [StepWindow(0, mem.events[0].time_ps, mem.events[-1].time_ps)]


def step_peaks(mem: CaptureMemory) -> list[StepPeak]:
    """Every step's peak on every allocator that recorded events in it, step order."""
    out: list[StepPeak] = []
    windows = _windows(mem)
    for allocator in mem.allocators:
        events = [e for e in mem.events if e.allocator == allocator]
        out.extend(_allocator_steps(events, windows, allocator))
    out.sort(key=lambda p: (p.step, p.device))
    return out


def _allocator_steps(events: Sequence[AllocEvent], windows: Sequence[StepWindow],
                     allocator: str) -> list[StepPeak]:
    out = []
    live: dict[int, AllocEvent] = {}
    i = 0
    for w in windows:
        while i < len(events) and events[i].time_ps < w.start_ps:
            _apply(live, events[i])
            i += 1
        inside = []
        while i < len(events) and events[i].time_ps <= w.end_ps:
            inside.append(events[i])
            i += 1
        if not inside:
            continue
        start = _before(inside[0])
        peak_at = max(range(len(inside)), key=lambda k: inside[k].in_use_after)
        peak = inside[peak_at]
        at_peak: list[AllocEvent] = []
        for k, e in enumerate(inside):
            _apply(live, e)
            if k == peak_at:
                at_peak = list(live.values())
        level = top = start
        for e in inside:
            level += e.requested if e.alloc else -e.requested
            top = max(top, level)
        span = max(w.end_ps - w.start_ps, 1)
        points = [(0.0, start)] + [((e.time_ps - w.start_ps) / 1e12, e.in_use_after)
                                   for e in inside]
        out.append(StepPeak(step=w.number, device=device_of(allocator), allocator=allocator,
                            start_bytes=start, end_bytes=inside[-1].in_use_after,
                            peak_bytes=max(peak.in_use_after, start),
                            peak_time_s=(peak.time_ps - w.start_ps) / 1e12,
                            duration_s=span / 1e12, live=at_peak,
                            timeline=downsample(points), tensor_peak_bytes=top))
    return out


def most_live(mem: CaptureMemory, kind_of: Callable[[AllocEvent], str],
              device: str = "CPU") -> dict[str, int]:
    """Per kind, the most bytes (requested) live at once during the capture's first step on
    ``device``, counting what the step itself allocated. Unlike the live set at the
    allocator's peak, which moves between runs as threads interleave (a Dense stack's
    activations read 0.3x to 2x between two precisions at the peak), a kind's own high-water
    mark is set by the dataflow: the same in every run."""
    windows = _windows(mem)
    if not windows:
        return {}
    w = windows[0]
    level: dict[str, int] = {}
    top: dict[str, int] = {}
    held: dict[tuple[str, int], tuple[str, int]] = {}  # (allocator, address) -> kind, bytes
    for e in mem.events:
        if not w.start_ps <= e.time_ps <= w.end_ps or device_of(e.allocator) != device:
            continue
        if e.alloc:
            kind = kind_of(e)
            held[(e.allocator, e.addr)] = (kind, e.requested)
            level[kind] = level.get(kind, 0) + e.requested
            top[kind] = max(top.get(kind, 0), level[kind])
        elif (e.allocator, e.addr) in held:
            kind, nbytes = held.pop((e.allocator, e.addr))
            level[kind] -= nbytes
    return top


def _apply(live: dict[int, AllocEvent], e: AllocEvent) -> None:
    if e.alloc:
        live[e.addr] = e
    else:
        live.pop(e.addr, None)


def downsample(points: list[tuple[float, int]], limit: int = MAX_TIMELINE_POINTS
               ) -> list[tuple[float, int]]:
    """At most ``limit`` points, keeping each bucket's highest (a peak is never smoothed away)."""
    if len(points) <= limit:
        return points
    size = len(points) / limit
    out = []
    for k in range(limit):
        bucket = points[int(k * size):max(int((k + 1) * size), int(k * size) + 1)]
        out.append(max(bucket, key=lambda p: p[1]))
    return out


__all__ = ["StepPeak", "downsample", "step_peaks"]
