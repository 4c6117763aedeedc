"""A device for ``--fit``: a GPU by name (its memory from ``data/gpu_memory.csv``, each row with
its datasheet) or a size (``16GiB``, ``24GB``, ``8000MB``), or this machine's free memory.

GPU capacities are the datasheet's, in GiB as NVIDIA counts them. TensorFlow can use somewhat
less: the CUDA context and cuDNN/cuBLAS workspaces take a few hundred MiB, which the report
states rather than guesses.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from pathlib import Path

from tfperf.roofline.roofs import best_gpu_row

_DATA = Path(__file__).parent / "data"
_UNITS = {"b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12, "kib": 1 << 10,
          "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40, "k": 1 << 10, "m": 1 << 20,
          "g": 1 << 30, "t": 1 << 40}


class DeviceError(ValueError):
    """Neither a known GPU nor a size."""


@dataclass(frozen=True)
class DeviceLimit:
    name: str
    bytes: int
    source: str

    def to_dict(self) -> dict[str, object]:
        return {"name": self.name, "bytes": self.bytes, "source": self.source}


def _rows() -> list[dict[str, str]]:
    text = (_DATA / "gpu_memory.csv").read_text(encoding="utf-8")
    return list(csv.DictReader(io.StringIO(text)))


def gpu_memory(name: str) -> DeviceLimit | None:
    """The memory of the GPU called ``name``; the most specific row whose words all appear."""
    row = best_gpu_row(_rows(), name)
    if row is None:
        return None
    return DeviceLimit(row["gpu"], int(float(row["memory_gib"]) * (1 << 30)), row["source"])


def parse_size(text: str) -> int | None:
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([a-zA-Z]*)\s*", text)
    if not m:
        return None
    unit = m.group(2).lower() or "b"
    if unit not in _UNITS:
        return None
    return int(float(m.group(1)) * _UNITS[unit])


def parse_device(text: str) -> DeviceLimit:
    """``'A100 40GB'`` → its memory; ``'16GiB'`` → 16 GiB. Raises :class:`DeviceError`."""
    size = parse_size(text)
    if size is not None:
        if size <= 0:
            raise DeviceError(f"{text!r} is no memory at all")
        return DeviceLimit(text.strip(), size, "given")
    found = gpu_memory(text)
    if found is None:
        known = ", ".join(r["gpu"].replace("NVIDIA ", "") for r in _rows()[:8])
        raise DeviceError(f"{text!r} is neither a size (16GiB, 24GB) nor a GPU tfperf knows "
                          f"({known}, ...)")
    return found


def host_memory() -> DeviceLimit | None:
    """This machine's available memory (``MemAvailable``), the limit a CPU run meets."""
    try:
        with open("/proc/meminfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return DeviceLimit("this machine (available RAM)",
                                       int(line.split()[1]) * 1024, "/proc/meminfo")
    except (OSError, ValueError, IndexError):
        return None
    return None


__all__ = ["DeviceError", "DeviceLimit", "gpu_memory", "host_memory", "parse_device",
           "parse_size"]
