"""The roofs a kernel is judged against: one per precision and engine, and memory bandwidth.

An FP32 kernel is judged against the FP32 roof, not the highest of the machine's rates (XProf
grades every kernel against max(FP32, FP16 tensor cores): on an H100 an FP32 kernel meets a
roof 15× too high). On a GPU, the roofs come from the datasheet table
(``doctor/knowledge/data/gpu_peaks.csv``, dense figures, each row with its source); an FP32
matmul or convolution on compute capability ≥ 8.0 runs on tensor cores as TF32 when
TensorFlow allows it (the default), so its roof is TF32's. On a CPU the roofs are the vector
units' (cores × clock × FMA lanes × 2) as an upper bound, and the FP32 matmul and bandwidth
rates measured here (``bench/roofline.py``).

A measured rate above its roof is an error to report (the FLOP count or the roof is wrong),
never a percentage to print: :func:`judge` says so.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from tfperf.doctor.knowledge.tables import read_table

PRECISIONS = ("fp64", "fp32", "tf32", "bf16", "fp16", "int8")
DTYPE_PRECISION = {"float64": "fp64", "float32": "fp32", "bfloat16": "bf16", "float16": "fp16",
                   "int8": "int8", "uint8": "int8", "qint8": "int8"}
# Above the roof by more than this (timer and clock noise) is an error.
ROOF_SLACK = 1.02


@dataclass(frozen=True)
class Roof:
    precision: str  # fp32, tf32, bf16, fp16, fp64, int8, or "memory"
    value: float  # FLOP/s (or byte/s for memory)
    engine: str  # "tensor cores", "CUDA cores", "vector units", "measured matmul", "memory"
    source: str

    def to_dict(self) -> dict[str, Any]:
        return {"precision": self.precision, "value": self.value, "engine": self.engine,
                "source": self.source}


@dataclass
class Roofs:
    device: str
    compute: dict[str, Roof] = field(default_factory=dict)
    bandwidth: Roof | None = None
    tensor_cores: bool = False  # TF32 for FP32 matmuls (cc >= 8.0 and TF32 enabled)
    # Rates measured here, for reference: a measured peak is no roof (a busy machine
    # measures low), so a kernel may beat it; roofs are upper bounds.
    measured: dict[str, Roof] = field(default_factory=dict)

    def for_op(self, dtype: str | None, matmul_like: bool = True) -> Roof | None:
        """The roof an op of ``dtype`` meets: TF32 tensor cores for an FP32 matmul/conv where
        TF32 runs, the CUDA cores' or vector units' FP32 rate for other FP32 ops, ..."""
        precision = DTYPE_PRECISION.get(dtype or "float32", "fp32")
        if precision == "fp32" and matmul_like and self.tensor_cores and "tf32" in self.compute:
            return self.compute["tf32"]
        return self.compute.get(precision)

    def to_dict(self) -> dict[str, Any]:
        return {"device": self.device, "tensor_cores_tf32": self.tensor_cores,
                "compute": {k: r.to_dict() for k, r in self.compute.items()},
                "measured": {k: r.to_dict() for k, r in self.measured.items()},
                "bandwidth": self.bandwidth.to_dict() if self.bandwidth else None}


def best_gpu_row(rows: Iterable[dict[str, str]], name: str) -> dict[str, str] | None:
    """The row of a GPU table (its ``match`` column: words) for the GPU called ``name``, as
    NVML or TensorFlow prints it: the most specific row whose words all appear in the name."""
    words = {t for t in re.split(r"[^0-9a-z]+", name.lower()) if t}
    best: tuple[int, dict[str, str]] | None = None
    for row in rows:
        want = row["match"].split()
        if all(w in words for w in want) and (best is None or len(want) > best[0]):
            best = (len(want), row)
    return best[1] if best is not None else None


def gpu_roofs(name: str, tf32_enabled: bool = True) -> Roofs | None:
    """Roofs of the GPU called ``name`` (as NVML or TensorFlow prints it), or None when the
    table does not know it. The most specific row whose words all appear in the name wins."""
    row = best_gpu_row(read_table("gpu_peaks.csv"), name)
    if row is None:
        return None
    out = Roofs(device=row["gpu"])
    for p in PRECISIONS:
        cell = row.get(f"{p}_{'tops' if p == 'int8' else 'tflops'}", "").strip()
        if cell:
            engine = "CUDA cores" if p in ("fp64", "fp32") else "tensor cores"
            out.compute[p] = Roof(p, float(cell) * 1e12, engine, row["source"])
    if row["bandwidth_gbs"].strip():
        out.bandwidth = Roof("memory", float(row["bandwidth_gbs"]) * 1e9, "memory",
                             row["source"])
    from tfperf.doctor.knowledge.gpus import compute_capability

    info = compute_capability(name)
    out.tensor_cores = bool(tf32_enabled and info is not None and info.cc >= (8, 0)
                            and "tf32" in out.compute)
    return out


# -- CPU ---------------------------------------------------------------------------------------


def _cpuinfo() -> tuple[set[str], float | None]:
    flags: set[str] = set()
    mhz = None
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("flags") and not flags:
                    flags = set(line.split(":", 1)[1].split())
                elif line.startswith("cpu MHz") and mhz is None:
                    mhz = float(line.split(":", 1)[1])
    except (OSError, ValueError):
        pass
    try:
        with open("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", encoding="utf-8") as f:
            mhz = int(f.read().strip()) / 1000
    except (OSError, ValueError):
        pass
    return flags, mhz


def vector_lanes(flags: set[str]) -> int:
    """FP32 lanes of the widest vector unit the CPU advertises."""
    if "avx512f" in flags:
        return 16
    if "avx2" in flags or "avx" in flags:
        return 8
    if "sse2" in flags or "asimd" in flags or "neon" in flags:
        return 4
    return 1


def cpu_roofs(threads: int | None = None, flags: set[str] | None = None,
              mhz: float | None = None, fma_units: int = 2,
              measured: Any | None = None) -> Roofs:
    """Upper bounds from the vector width (``threads`` cores × clock × lanes × 2 per FMA ×
    ``fma_units``); the memory roof and a reference FP32 matmul rate from what was
    ``measured`` here (bench's peaks), where given."""
    found_flags, found_mhz = _cpuinfo()
    flags = found_flags if flags is None else flags
    mhz = found_mhz if mhz is None else mhz
    threads = threads or os.cpu_count() or 1
    out = Roofs(device=f"CPU ({threads} threads)")
    lanes = vector_lanes(flags)
    fma = 2 if ("fma" in flags or "avx512f" in flags or "asimd" in flags) else 1
    if mhz:
        fp32 = threads * mhz * 1e6 * lanes * fma * fma_units
        why = (f"{threads} threads × {mhz:.0f} MHz × {lanes} FP32 lanes × {fma} (FMA) × "
               f"{fma_units} FMA units: an upper bound")
        out.compute["fp32"] = Roof("fp32", fp32, "vector units", why)
        out.compute["fp64"] = Roof("fp64", fp32 / 2, "vector units", why + ", FP64 half")
        if "avx512_fp16" in flags:
            out.compute["fp16"] = Roof("fp16", fp32 * 2, "vector units", why + ", FP16 twice")
        else:  # no FP16 arithmetic: TF's CPU kernels compute FP16 in FP32
            out.compute["fp16"] = Roof("fp16", fp32, "vector units",
                                       why + "; no FP16 units, so FP16 math runs at FP32 rate")
        if "avx512_bf16" in flags or "amx_bf16" in flags:
            out.compute["bf16"] = Roof("bf16", fp32 * 2, "vector units",
                                       why + ", BF16 dot products twice FP32")
        if "avx512_vnni" in flags or "avx_vnni" in flags or "amx_int8" in flags:
            out.compute["int8"] = Roof("int8", fp32 * 4, "vector units",
                                       why + ", INT8 dot products four times FP32")
    if measured is not None:
        out.measured["fp32"] = Roof("fp32", measured.matmul_gflops * 1e9, "measured matmul",
                                    f"FP32 matmul measured on {measured.device}")
        out.bandwidth = Roof("memory", measured.bandwidth_gbs * 1e9, "memory",
                             f"element-wise scale measured on {measured.device}")
    return out


# -- judging -----------------------------------------------------------------------------------


def judge(flops: float | None, nbytes: float | None, seconds: float, roofs: Roofs | None,
          dtype: str | None, matmul_like: bool = True) -> dict[str, Any]:
    """Achieved rates and their fraction of the right roof: the compute roof for the op's
    precision and engine, lowered to intensity × bandwidth where memory bounds it."""
    out: dict[str, Any] = {"flops": flops, "bytes": nbytes, "seconds": seconds,
                           "flop_per_s": None, "byte_per_s": None, "intensity": None,
                           "roof": None, "bound": None, "fraction": None, "error": None}
    if seconds <= 0:
        return out
    if flops:
        out["flop_per_s"] = flops / seconds
    if nbytes:
        out["byte_per_s"] = nbytes / seconds
    if flops and nbytes:
        out["intensity"] = flops / nbytes
    if roofs is None:
        return out
    compute = roofs.for_op(dtype, matmul_like)
    if compute is None and roofs.bandwidth is None:
        return out
    attainable, bound, _roof = None, None, compute
    if compute is not None and out["flop_per_s"]:
        attainable, bound = compute.value, "compute"
        if roofs.bandwidth is not None and out["intensity"]:
            memory_bound = out["intensity"] * roofs.bandwidth.value
            if memory_bound < attainable:
                attainable, bound = memory_bound, "memory"
        out["roof"] = {**compute.to_dict(), "attainable": attainable,
                       "bandwidth": roofs.bandwidth.value if roofs.bandwidth else None}
        out["bound"] = bound
        if out["flop_per_s"] > attainable * ROOF_SLACK:
            out["error"] = (f"measured {out['flop_per_s'] / 1e9:.4g} GFLOP/s is above the "
                            f"{bound} roof of {attainable / 1e9:.4g} GFLOP/s: the FLOP count "
                            f"or the roof is wrong")
        else:
            out["fraction"] = out["flop_per_s"] / attainable
    elif roofs.bandwidth is not None and out["byte_per_s"]:
        out["roof"], out["bound"] = roofs.bandwidth.to_dict(), "memory"
        if out["byte_per_s"] > roofs.bandwidth.value * ROOF_SLACK:
            out["error"] = (f"measured {out['byte_per_s'] / 1e9:.4g} GB/s is above the "
                            f"memory roof of {roofs.bandwidth.value / 1e9:.4g} GB/s")
        else:
            out["fraction"] = out["byte_per_s"] / roofs.bandwidth.value
    return out
