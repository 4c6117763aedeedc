"""Driver and GPUs through NVML (the `pynvml` module of nvidia-ml-py): the first choice.

NVML is the library nvidia-smi itself uses; asking it directly avoids parsing text. Without
a driver it fails at init ("NVML Shared Library Not Found"), which is a fact, not an error.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any


def cuda_version_string(encoded: int) -> str:
    """NVML encodes CUDA 12.4 as 12040."""
    return f"{encoded // 1000}.{(encoded % 1000) // 10}"


def _decode(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _query() -> dict[str, Any]:
    import pynvml  # a base dependency, but imported here so a broken install is only a fact

    pynvml.nvmlInit()
    try:
        facts: dict[str, Any] = {
            "driver_version": _decode(pynvml.nvmlSystemGetDriverVersion()),
            "driver_cuda": cuda_version_string(pynvml.nvmlSystemGetCudaDriverVersion()),
            "gpus": [],
        }
        for i in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(i)
            gpu: dict[str, Any] = {"index": i, "name": _decode(pynvml.nvmlDeviceGetName(handle))}
            try:
                major, minor = pynvml.nvmlDeviceGetCudaComputeCapability(handle)
                gpu["compute_capability"] = f"{major}.{minor}"
            except pynvml.NVMLError:
                gpu["compute_capability"] = None
            try:
                gpu["memory_mib"] = pynvml.nvmlDeviceGetMemoryInfo(handle).total // 2**20
            except pynvml.NVMLError:
                gpu["memory_mib"] = None
            gpu.update(_links(pynvml, handle))
            facts["gpus"].append(gpu)
        return facts
    finally:
        with contextlib.suppress(Exception):  # shutting down is best effort
            pynvml.nvmlShutdown()


def _links(pynvml: Any, handle: Any) -> dict[str, Any]:
    """PCIe generation and width (the maximum the GPU and slot allow: an idle GPU trains its
    link down) and the active NVLinks with their version: the peak a collective can reach."""
    out: dict[str, Any] = {}
    for key, call in (("pcie_gen", "nvmlDeviceGetMaxPcieLinkGeneration"),
                      ("pcie_width", "nvmlDeviceGetMaxPcieLinkWidth")):
        try:
            out[key] = int(getattr(pynvml, call)(handle))
        except Exception:  # NVMLError, or a pynvml without the call: not known
            out[key] = None
    active, version = 0, None
    for link in range(int(getattr(pynvml, "NVML_NVLINK_MAX_LINKS", 18))):
        try:
            if pynvml.nvmlDeviceGetNvLinkState(handle, link):
                active += 1
                version = int(pynvml.nvmlDeviceGetNvLinkVersion(handle, link))
        except Exception:  # NVML_ERROR_NOT_SUPPORTED on GPUs without NVLink, or past the last
            break
    out["nvlinks"], out["nvlink_version"] = active, version
    return out


def probe_nvml(timeout: float = 10.0) -> dict[str, Any]:
    """``{"status": "ok", ...facts}`` or ``{"status": "<why not>"}``; never raises.

    Runs in a daemon thread: a wedged driver can hang NVML calls, and the doctor must finish.
    """
    result: dict[str, Any] = {}

    def work() -> None:
        try:
            result.update(_query(), status="ok")
        except ImportError:
            result["status"] = "pynvml not installed (pip install nvidia-ml-py)"
        except Exception as exc:  # NVMLError and friends: every failure is a fact
            result["status"] = f"{type(exc).__name__}: {exc}".strip()

    thread = threading.Thread(target=work, name="tfperf-nvml", daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        return {"status": f"timed out after {timeout:g}s"}
    return dict(result)
