"""Driver version, the driver's CUDA ceiling and the GPUs: NVML, then nvidia-smi, then /proc.

Each source is tried only if the one before gave no driver version; what each said is kept
in ``driver_probes`` so that the report can show why the GPU facts are missing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tfperf.doctor.probe import GatherOptions
from tfperf.doctor.probes.nvidia_smi import probe_nvidia_smi
from tfperf.doctor.probes.nvml import probe_nvml
from tfperf.doctor.probes.proc_driver import probe_proc_driver

STAGE = "slow"


def probe_driver(timeout: float = 10.0) -> dict[str, Any]:
    attempts = (("nvml", lambda: probe_nvml(timeout)),
                ("nvidia-smi", lambda: probe_nvidia_smi(timeout)),
                ("/proc/driver/nvidia/version", probe_proc_driver))
    statuses: dict[str, str] = {}
    facts: dict[str, Any] = {"driver_source": None, "driver_version": None, "driver_cuda": None,
                             "gpus": []}
    for name, probe in attempts:
        if facts["driver_source"] is not None:
            statuses[name] = f"not asked ({facts['driver_source']} answered)"
            continue
        result = probe()
        status = str(result.get("status", "?"))
        statuses[name] = status.removeprefix(f"{name}: ").removeprefix(f"{name} ")
        if result.get("driver_version"):
            facts.update(driver_source=name, driver_version=result["driver_version"],
                         driver_cuda=result.get("driver_cuda"), gpus=result.get("gpus", []))
    facts["driver_probes"] = statuses
    return facts


def probe(options: GatherOptions, earlier: Mapping[str, Any]) -> Mapping[str, Any]:
    """The NVIDIA driver, its CUDA ceiling and the GPUs it sees."""
    return probe_driver(options.tool_timeout)
