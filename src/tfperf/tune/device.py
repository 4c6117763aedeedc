"""What the machine offers the precision lever: fast reduced-precision math or not.

Facts come from ``/proc/cpuinfo`` (CPU flags) and TensorFlow's GPU details (compute
capability); tests inject a :class:`DeviceFacts` of their own to stand for a GPU machine.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

#: CPU flags with fast bfloat16 math (oneDNN uses them): AVX512-BF16 and AMX.
BF16_CPU_FLAGS = ("avx512_bf16", "amx_bf16")


@dataclass(frozen=True)
class DeviceFacts:
    """``gpus``: compute capabilities ``(major, minor)`` of the GPUs TensorFlow sees."""

    cpu_flags: frozenset[str] = frozenset()
    gpus: tuple[tuple[int, int], ...] = ()
    source: str = "injected"

    def fast(self, dtype: str) -> tuple[bool, str]:
        """Whether ``dtype`` (``float16``/``bfloat16``) has fast math here, and why (not)."""
        if self.gpus:
            cc = max(self.gpus)
            need = (7, 0) if dtype == "float16" else (8, 0)
            ok = cc >= need
            return ok, (f"GPU compute capability {cc[0]}.{cc[1]}"
                        f"{' ≥ ' if ok else ' < '}{need[0]}.{need[1]} for {dtype} tensor cores")
        if dtype == "bfloat16":
            have = sorted(set(BF16_CPU_FLAGS) & self.cpu_flags)
            if have:
                return True, f"CPU with {'/'.join(have)}"
            return False, "needs a GPU (compute capability ≥ 8.0) or a CPU with AVX512-BF16/AMX"
        return False, "float16 needs a GPU with tensor cores (compute capability ≥ 7.0); " \
                      "CPUs have no fast float16 math"

    def to_dict(self) -> dict[str, Any]:
        return {"cpu_bf16_flags": sorted(set(BF16_CPU_FLAGS) & self.cpu_flags),
                "gpus": [f"{a}.{b}" for a, b in self.gpus], "source": self.source}


def cpu_flags() -> frozenset[str]:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("flags"):
                    return frozenset(line.split(":", 1)[1].split())
    except OSError:
        pass
    return frozenset()


def gather() -> DeviceFacts:
    """This machine's facts (TensorFlow's GPUs only when it is imported already)."""
    gpus: list[tuple[int, int]] = []
    tf = sys.modules.get("tensorflow")
    if tf is not None:
        for dev in tf.config.list_physical_devices("GPU"):
            try:
                cc = tf.config.experimental.get_device_details(dev).get("compute_capability")
            except Exception:  # details are optional
                cc = None
            if cc:
                gpus.append((int(cc[0]), int(cc[1])))
    return DeviceFacts(cpu_flags(), tuple(gpus), source="this machine")
