"""Small memory measurements other capabilities reuse (the article suite's memory claims).

``call_peak``: the allocator's peak during one call, after a warm-up call (its traces and
compilations), above what was held when it began. ``held_by_kind``: from one captured call,
the bytes per kind (activations, gradients...) live at its peak and each kind's own most live
at once (the same in every run; what is live at the peak is not).
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


@dataclass(frozen=True)
class KindBytes:
    """One captured call's bytes by kind (``breakdown.CATEGORIES`` of what it allocated;
    requested bytes, so the allocator's rounding does not blur a ratio)."""

    at_peak: dict[str, int]  # live at the call's peak, and "peak": the tensors' peak
    most: dict[str, int]  # each kind's own most live at once: the same in every run


def held_by_kind(fn: Callable[..., Any], *args: Any, logdir: str | Path | None = None,
                 batch: int | None = None, **kwargs: Any) -> KindBytes | None:
    """One call captured on the CPU, its bytes by kind, or None when the capture holds no
    allocation events. With ``batch``, *activations* are only the forward tensors with one
    row per sample (leading dimension ``batch``); the forward pass's other tensors (a float16
    copy of a kernel under mixed precision) are *forward other*. What is live at the peak
    moves with the threads' order between runs; each kind's most at once does not."""
    from tfperf.memory.breakdown import category
    from tfperf.memory.events import AllocEvent, read_capture
    from tfperf.memory.runner import memory_profile
    from tfperf.memory.timeline import most_live
    from tfperf.profile.capture import find_xplanes

    report = memory_profile(fn, *args, steps=1, leak_steps=0, logdir=logdir, **kwargs)
    if report.error is not None:
        raise report.error
    cpu = next((d for d in report.devices if d.device == "CPU"), None)
    planes = find_xplanes(report.logdir) if report.logdir else []
    if cpu is None or not planes:
        return None

    def kind_of(e: AllocEvent) -> str:
        kind = category(e, ())
        if kind == "activations" and batch is not None and not e.shape.startswith(f"[{batch},"):
            return "forward other"
        return kind

    at_peak: dict[str, int] = {}
    for e in cpu.worst.live:
        at_peak[kind_of(e)] = at_peak.get(kind_of(e), 0) + e.requested
    at_peak["peak"] = cpu.worst.tensor_peak_bytes
    return KindBytes(at_peak, most_live(read_capture(planes[-1]), kind_of))


__all__ = ["CallPeak", "KindBytes", "call_peak", "held_by_kind"]
