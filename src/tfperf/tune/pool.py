"""Where isolated candidates run: one slot per device, candidates screened in parallel up to
one per slot (:mod:`concurrent.futures` threads, each waiting on its own child process).

On a machine with GPUs each slot pins its child to one GPU with ``CUDA_VISIBLE_DEVICES``; on
a CPU the slots are plain local processes (parallel candidates then share the cores and
disturb each other's times: docs/tune.md). The GPU count comes from the device facts, so
tests stand for a multi-GPU machine with injected facts.
"""

from __future__ import annotations

import queue
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar

from tfperf.tune.device import DeviceFacts
from tfperf.tune.target import TuneError
from tfperf.tune.worker import Worker

T = TypeVar("T")


@dataclass(frozen=True)
class Slot:
    """One place a child runs: its name for the table, and the environment it gets."""

    name: str
    env: dict[str, str] = field(default_factory=dict)
    gpu: bool = False


def device_slots(devices: int | str | None, facts: DeviceFacts) -> list[Slot]:
    """``devices``: None (one local process at a time), ``"auto"`` (one per GPU the facts
    show, else one), or a count (at most the GPUs shown; on a CPU, that many processes)."""
    gpus = len(facts.gpus)
    if devices is None:
        n = 1
    elif devices == "auto":
        n = max(1, gpus)
    else:
        try:
            n = int(devices)
        except (TypeError, ValueError):
            raise TuneError(f"devices must be a count or 'auto', not {devices!r}") from None
        if n < 1:
            raise TuneError("devices must be at least 1")
        if gpus and n > gpus:
            raise TuneError(f"{n} devices asked, but the device facts show {gpus} GPU(s)")
    if gpus and devices is not None:
        return [Slot(f"GPU {i}", {"CUDA_VISIBLE_DEVICES": str(i)}, gpu=True) for i in range(n)]
    return [Slot(f"CPU process {i + 1}" if n > 1 else "CPU process") for i in range(n)]


class LocalPool:
    """Jobs run on threads, each holding one free slot while it runs."""

    def __init__(self, slots: list[Slot]) -> None:
        self.slots = slots
        self._free: queue.Queue[Slot] = queue.Queue()
        for slot in slots:
            self._free.put(slot)
        self._executor = ThreadPoolExecutor(max_workers=len(slots),
                                            thread_name_prefix="tfperf-tune")

    @property
    def parallel(self) -> int:
        return len(self.slots)

    def submit(self, job: Callable[[Slot], T]) -> Future[T]:
        return self._executor.submit(self._with_slot, job)

    def _with_slot(self, job: Callable[[Slot], T]) -> T:
        slot = self._free.get()
        try:
            return job(slot)
        finally:
            self._free.put(slot)

    def worker(self, slot: Slot, label: str) -> Any:
        return Worker(slot.env, label)

    def describe(self) -> dict[str, Any]:
        return {"kind": "local", "slots": [s.name for s in self.slots]}

    def close(self) -> None:
        self._executor.shutdown(wait=True)
