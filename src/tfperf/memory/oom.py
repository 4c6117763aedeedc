"""An out-of-memory log line linked to the memory view: which memory ran out (host RAM or a
device's), the tensor that did not fit, and the commands that show what held the rest.

Used by ``tfperf explain`` (no TensorFlow imported). TensorFlow names the allocator that
failed: ``cpu`` / ``mklcpu`` (and ``bfc_cpu_allocator_for_gpu`` with
``TF_CPU_ALLOCATOR_USE_BFC``) are host RAM; ``GPU_0_bfc`` is GPU 0's memory;
``gpu_host_bfc`` / ``cuda_host_bfc`` pinned host memory staged for GPU copies.
"""

from __future__ import annotations

import re
from math import prod

_DTYPE_BYTES = {"float": 4, "float32": 4, "half": 2, "float16": 2, "bfloat16": 2,
                "double": 8, "float64": 8, "int32": 4, "int64": 8, "int16": 2, "int8": 1,
                "uint8": 1, "bool": 1, "complex64": 8, "complex128": 16}
OOM_LABELS = ("out-of-memory", "host-out-of-memory", "gpu-memory-fragmentation")


def which_memory(details: dict[str, list[str]]) -> str:
    """'host RAM (allocator cpu)', 'GPU:0 memory (allocator GPU_0_bfc)' or '' when the log
    does not say."""
    allocator = next((v for k in ("allocator", "allocator2") for v in details.get(k, []) if v),
                     "")
    device = next((v for v in details.get("device", []) if v), "")
    name = allocator.lower()
    if "host" in name and ("gpu" in name or "cuda" in name):
        return f"pinned host memory (allocator {allocator})"
    if name in ("cpu", "mklcpu") or name.startswith("bfc_cpu") or (
            not name and "CPU:" in device.upper()):
        return f"host RAM (allocator {allocator or 'cpu'})"
    m = re.search(r"GPU_(\d+)_bfc", allocator) or re.search(r"GPU:(\d+)", device, re.I)
    if m:
        return f"GPU:{m.group(1)} memory" + (f" (allocator {allocator})" if allocator else "")
    return ""


def failed_tensor(details: dict[str, list[str]]) -> str:
    """'[64,256,56,56] float32 = 196.0 MiB' for the first OOM shape the log names, else ''."""
    shapes = details.get("shape", [])
    if not shapes:
        return ""
    dims = [int(d) for d in re.findall(r"\d+", shapes[0])]
    dtype = (details.get("dtype") or [""])[0]
    text = f"[{','.join(map(str, dims))}]"
    if dtype:
        text += f" {'float32' if dtype == 'float' else dtype}"
        if dtype in _DTYPE_BYTES and dims:
            n = prod(dims) * _DTYPE_BYTES[dtype]
            size = f"{n / (1 << 30):.2f} GiB" if n >= 1 << 30 else f"{n / (1 << 20):.1f} MiB"
            text += f" = {size}"
    return text


def memory_view_hint(details: dict[str, list[str]]) -> str:
    """What an OOM cause's ``see`` says: the memory that ran out and the memory view's
    commands, with the shape to look for."""
    where = which_memory(details)
    tensor = failed_tensor(details)
    parts = []
    if where:
        host = where.startswith("host RAM")
        parts.append(f"{where} ran out{', not GPU memory' if host else ''}")
    look = f" (look for the failed tensor {tensor})" if tensor else ""
    parts.append("tfperf profile --memory SCRIPT.py lists the tensors live at each step's "
                 f"peak by op, layer and line{look}")
    parts.append("tfperf profile --fit MODULE:STEP --inputs MODULE:FN --device NAME "
                 "predicts the largest batch that fits before running")
    return "; ".join(parts)


__all__ = ["OOM_LABELS", "failed_tensor", "memory_view_hint", "which_memory"]
