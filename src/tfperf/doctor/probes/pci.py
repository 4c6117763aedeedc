"""NVIDIA GPUs on the PCI bus, seen without any driver (Linux sysfs).

This tells "no GPU" apart from "a GPU whose driver is missing", which no driver tool can.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tfperf.doctor.probe import GatherOptions

STAGE = "local"

SYSFS_PCI = Path("/sys/bus/pci/devices")
NVIDIA_VENDOR = "0x10de"
DISPLAY_CLASS = "0x03"  # VGA (0x0300) and 3D controllers (0x0302): not NVIDIA's audio or USB


def probe_pci(root: Path = SYSFS_PCI) -> dict[str, Any]:
    if not root.is_dir():
        return {"pci_nvidia_gpus": None}  # not Linux, or sysfs hidden: unknown, not zero
    found = []
    try:
        for dev in sorted(root.iterdir()):
            try:
                vendor = (dev / "vendor").read_text().strip()
                klass = (dev / "class").read_text().strip()
            except OSError:
                continue
            if vendor == NVIDIA_VENDOR and klass.startswith(DISPLAY_CLASS):
                device = (dev / "device").read_text().strip() if (dev / "device").exists() else ""
                found.append(f"{dev.name} [10de:{device.removeprefix('0x')}]")
    except OSError:
        return {"pci_nvidia_gpus": None}
    return {"pci_nvidia_gpus": found}


def probe(options: GatherOptions, earlier: Mapping[str, Any]) -> Mapping[str, Any]:
    """NVIDIA GPUs on the PCI bus, seen without any driver."""
    return probe_pci()
