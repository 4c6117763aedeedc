"""Small memory measurements other capabilities reuse (the article suite's memory claims).

``call_peak``: the allocator's peak during one call, after a warm-up call (its traces and
compilations), above what was held when it began. ``held_by_kind``: from one captured call,
the bytes live at its peak per kind (activations, gradients...; requested bytes, so the
allocator's rounding does not blur a ratio). ``most_held_by_kind``: each kind's own most bytes
live at once in the call, the same in every run (what is live at the peak is not).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tfperf.memory import allocator


@dataclass(frozen=True)
class CallPeak:
    peak_bytes: int  # the allocator's peak during the call
    above_start_bytes: int  # the call's own: the peak less what was held before it


def call_peak(fn: Callable[..., Any], *args: Any, device: str = "CPU:0",
              **kwargs: Any) -> CallPeak | None:
    """None when ``device``'s allocator keeps no statistics."""
    from tfperf.core.measure import sync

    sync(fn(*args, **kwargs))
    if not allocator.reset_peak(device):
        return None
    before = allocator.memory_info(device)
    if before is None:
        return None
    sync(fn(*args, **kwargs))
    after = allocator.memory_info(device)
    if after is None:
        return None
    return CallPeak(int(after["peak"]), int(after["peak"] - before["current"]))


def held_by_kind(fn: Callable[..., Any], *args: Any, logdir: str | Path | None = None,
                 batch: int | None = None, **kwargs: Any) -> dict[str, int] | None:
    """Bytes live at the peak of one call, by kind (``breakdown.CATEGORIES`` of what the
    call allocated), or None when the capture holds no allocation events. With ``batch``,
    *activations* are only the forward tensors with one row per sample (leading dimension
    ``batch``); the forward pass's other tensors (a float16 copy of a kernel under mixed
    precision) are *forward other*."""
    from tfperf.memory.breakdown import category
    from tfperf.memory.runner import memory_profile

    report = memory_profile(fn, *args, steps=1, leak_steps=0, logdir=logdir, **kwargs)
    if report.error is not None:
        raise report.error
    cpu = next((d for d in report.devices if d.device == "CPU"), None)
    if cpu is None:
        return None
    out: dict[str, int] = {}
    for e in cpu.worst.live:
        kind = category(e, ())
        if kind == "activations" and batch is not None and \
                not e.shape.startswith(f"[{batch},"):
            kind = "forward other"
        out[kind] = out.get(kind, 0) + e.requested
    out["peak"] = cpu.worst.tensor_peak_bytes
    return out


def most_held_by_kind(fn: Callable[..., Any], *args: Any, logdir: str | Path | None = None,
                      batch: int | None = None, **kwargs: Any) -> dict[str, int] | None:
    """Per kind, the most bytes live at once during one captured call on the CPU (requested
    bytes of what the call allocated; kinds as ``held_by_kind``), or None when the capture
    holds no allocation events."""
    from tfperf.memory.breakdown import category
    from tfperf.memory.events import AllocEvent, read_capture
    from tfperf.memory.runner import memory_profile
    from tfperf.memory.timeline import most_live
    from tfperf.profile.capture import find_xplanes

    report = memory_profile(fn, *args, steps=1, leak_steps=0, logdir=logdir, **kwargs)
    if report.error is not None:
        raise report.error
    planes = find_xplanes(report.logdir) if report.logdir else []
    if not planes:
        return None

    def kind_of(e: AllocEvent) -> str:
        kind = category(e, ())
        if kind == "activations" and batch is not None and not e.shape.startswith(f"[{batch},"):
            return "forward other"
        return kind

    return most_live(read_capture(planes[-1]), kind_of) or None


__all__ = ["CallPeak", "call_peak", "held_by_kind", "most_held_by_kind"]
