"""Allocation events of an XProf capture, read without TensorFlow.

While the profiler runs, TensorFlow's allocators that keep statistics record one instant event
per allocation (``MemoryAllocation``) and per free (``MemoryDeallocation``) on the thread that
made it, with stats: ``allocator_name``, ``requested_bytes``, ``allocation_bytes`` (what the
allocator handed out), ``bytes_allocated`` (the allocator's total after the event: the
timeline), ``peak_bytes_in_use``, ``addr``, and, for allocations only, the op (``tf_op``: the
graph node's name, or the op type for an eager op), ``shape``, ``data_type`` (TF's DataType
enum) and ``region_type`` (``output``, ``temp``, ``persist``…). Frees name no op: they are
matched to their allocation by address. Checked on TF 2.21's captures
(``tests/memory/test_memory_events.py``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from tfperf.profile.capture import STEP_NAME
from tfperf.profile.read.xspace import Capture, decode_stats

ALLOC, FREE = "MemoryAllocation", "MemoryDeallocation"

# tensorflow/core/framework/types.proto: DataType → (name, bytes per element)
DATA_TYPES: dict[int, tuple[str, int]] = {
    1: ("float32", 4), 2: ("float64", 8), 3: ("int32", 4), 4: ("uint8", 1), 5: ("int16", 2),
    6: ("int8", 1), 7: ("string", 0), 8: ("complex64", 8), 9: ("int64", 8), 10: ("bool", 1),
    14: ("bfloat16", 2), 17: ("uint16", 2), 18: ("complex128", 16), 19: ("float16", 2),
    20: ("resource", 0), 21: ("variant", 0), 22: ("uint32", 4), 23: ("uint64", 8),
}


@dataclass(frozen=True)
class AllocEvent:
    """One allocation or free, as the allocator recorded it."""

    time_ps: int
    alloc: bool  # True: MemoryAllocation, False: MemoryDeallocation
    allocator: str
    addr: int
    nbytes: int  # allocation_bytes: what the allocator handed out (or took back)
    requested: int
    in_use_after: int  # bytes_allocated: the allocator's total after this event
    op: str = ""  # tf_op (allocations only)
    shape: str = ""
    dtype: str = ""
    region: str = ""  # output, temp, persist...
    thread: str = ""


@dataclass(frozen=True)
class StepWindow:
    number: int
    start_ps: int
    end_ps: int


@dataclass
class CaptureMemory:
    """Every allocation event of one capture, in time order, and its step windows."""

    path: str
    events: list[AllocEvent]
    steps: list[StepWindow]

    @property
    def allocators(self) -> list[str]:
        return sorted({e.allocator for e in self.events})


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def read_capture(path: str | os.PathLike[str]) -> CaptureMemory:
    """The allocation events and step markers of the capture at ``path`` (raises
    ``tfperf.profile.read.xspace.CaptureFileError`` for a file that is not one)."""
    events: list[AllocEvent] = []
    steps: list[StepWindow] = []
    with Capture(path) as cap:
        for plane in cap.planes:
            wanted = {mid: meta.name for mid, meta in plane.event_metadata.items()
                      if meta.name in (ALLOC, FREE, STEP_NAME)}
            if not wanted:
                continue
            for line in plane.lines:
                for mid, start, dur, buf, a, b in cap.events(line):
                    name = wanted.get(mid)
                    if name is None:
                        continue
                    stats = plane.stat_dict(decode_stats(buf, a, b))
                    if name == STEP_NAME:
                        number = stats.get("step_num")
                        if number is not None:
                            steps.append(StepWindow(_int(number), start, start + dur))
                        continue
                    dtype = DATA_TYPES.get(_int(stats.get("data_type")), ("", 0))[0]
                    events.append(AllocEvent(
                        time_ps=start, alloc=name == ALLOC,
                        allocator=str(stats.get("allocator_name", "")),
                        addr=_int(stats.get("addr")),
                        nbytes=_int(stats.get("allocation_bytes")),
                        requested=_int(stats.get("requested_bytes")),
                        in_use_after=_int(stats.get("bytes_allocated")),
                        op=str(stats.get("tf_op") or ""), shape=str(stats.get("shape") or ""),
                        dtype=dtype if name == ALLOC else "",
                        region=str(stats.get("region_type") or ""), thread=line.name))
    # Instant events of several threads: time order, and at one instant the order the
    # allocator's own running total implies (an allocation raises it, a free lowers it).
    events.sort(key=lambda e: (e.time_ps, e.in_use_after if e.alloc else -e.in_use_after))
    steps.sort(key=lambda s: s.start_ps)
    return CaptureMemory(str(path), events, steps)


__all__ = ["ALLOC", "DATA_TYPES", "FREE", "AllocEvent", "CaptureMemory", "StepWindow",
           "read_capture"]
