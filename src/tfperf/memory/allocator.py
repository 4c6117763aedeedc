"""TensorFlow's allocators as a memory view needs them: statistics switched on, read per device.

Measured on TF 2.21 (CPU, x86 with oneDNN, the default build):

* The CPU device allocates through oneDNN's ``mklcpu`` allocator. It keeps statistics
  (``tf.config.experimental.get_memory_info('CPU:0')`` works, ``reset_memory_stats`` too) and,
  while the profiler runs, records ``MemoryAllocation`` / ``MemoryDeallocation`` events, but
  only for allocations of 256 KiB or more: smaller ones go to a pool that counts nothing.
* ``TF_CPU_ALLOCATOR_USE_BFC=1`` (read by ``ProcessState::GetCPUAllocator`` when the CPU
  device is created, i.e. at TensorFlow's first op, so it may be set after ``import
  tensorflow``) replaces it with a BFC allocator (``bfc_cpu_allocator_for_gpu``) that counts
  and records every allocation, rounded up to 256 bytes.
* With oneDNN off (``TF_ENABLE_ONEDNN_OPTS=0``) and no BFC, the CPU allocator keeps no
  statistics: ``get_memory_info`` raises "Allocator stats not available".

So a memory view switches BFC on when it can (TensorFlow's devices not created yet), and
otherwise says what the allocator in place can see. GPU allocators (``GPU_0_bfc``) always
count and record.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import Any

USE_BFC = "TF_CPU_ALLOCATOR_USE_BFC"
#: allocations below this are invisible to the oneDNN CPU allocator's statistics and events
MKL_SMALL_BYTES = 256 * 1024


@dataclass(frozen=True)
class AllocatorState:
    """What the CPU allocator can see in this process."""

    stats: bool  # get_memory_info('CPU:0') works
    complete: bool  # every allocation is counted (BFC), not only the large ones (mklcpu)
    switched_on: bool  # this view set TF_CPU_ALLOCATOR_USE_BFC before TF created its devices
    note: str

    def to_dict(self) -> dict[str, Any]:
        return {"stats": self.stats, "complete": self.complete, "switched_on": self.switched_on,
                "note": self.note}


def devices_created() -> bool:
    """Whether TensorFlow has created its devices (after that the allocator is fixed)."""
    tf = sys.modules.get("tensorflow")
    if tf is None:
        return False
    try:
        from tensorflow.python.eager import context

        return bool(getattr(context.context(), "_initialized", True))
    except Exception:  # an unknown TF: assume the worst (too late to switch)
        return True


def switch_on_statistics() -> bool:
    """Ask for the counting CPU allocator before TensorFlow creates its devices.

    Returns True when the request can still take effect (or is already in place)."""
    if os.environ.get(USE_BFC, "").lower() in ("1", "true"):
        return True
    if devices_created():
        return False
    os.environ[USE_BFC] = "1"
    return True


def memory_info(device: str = "CPU:0") -> dict[str, int] | None:
    """``{'current', 'peak'}`` bytes of ``device``'s allocator, or None when it keeps none."""
    import tensorflow as tf

    try:
        return dict(tf.config.experimental.get_memory_info(device))
    except (ValueError, RuntimeError):
        return None


def reset_peak(device: str = "CPU:0") -> bool:
    import tensorflow as tf

    try:
        tf.config.experimental.reset_memory_stats(device)
        return True
    except (ValueError, RuntimeError):
        return False


def state(switched: bool) -> AllocatorState:
    """What the CPU allocator in place counts (call after TensorFlow created its devices)."""
    bfc = os.environ.get(USE_BFC, "").lower() in ("1", "true")
    stats = memory_info("CPU:0") is not None
    if bfc and stats:
        note = "CPU allocator: BFC, every allocation counted"
        if switched:
            note += f" ({USE_BFC}=1 set for this run)"
    elif stats:
        note = ("CPU allocator: oneDNN's (mklcpu), allocations under 256 KiB not counted: "
                f"set {USE_BFC}=1 before TensorFlow runs its first op to count them all")
    else:
        note = (f"CPU allocator keeps no statistics (oneDNN off): set {USE_BFC}=1 before "
                "TensorFlow runs its first op")
    return AllocatorState(stats=stats, complete=bfc and stats, switched_on=switched and bfc,
                          note=note)


def device_of(allocator_name: str) -> str:
    """The device an allocator serves, from the name TF gives it."""
    name = allocator_name.lower()
    if name.startswith("gpu_") and "_bfc" in name:  # GPU_0_bfc
        return "GPU:" + name.split("_")[1]
    if "gpu_host" in name or "cuda_host" in name or "pinned" in name:
        return "host (pinned)"
    return "CPU"


def cpu_counts_everything() -> bool:
    """Whether the CPU allocator in place counts every allocation (BFC, switched on)."""
    return os.environ.get(USE_BFC, "").lower() in ("1", "true") and \
        memory_info("CPU:0") is not None


__all__ = ["MKL_SMALL_BYTES", "USE_BFC", "AllocatorState", "cpu_counts_everything",
           "device_of", "devices_created", "memory_info", "reset_peak", "state",
           "switch_on_statistics"]
