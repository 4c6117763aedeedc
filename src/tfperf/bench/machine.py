"""What machine a figure was measured on: the ``machine`` block of every bench/suite JSON."""

from __future__ import annotations

import os
import platform
import sys
from typing import Any


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def gpu_names() -> list[str]:
    """Names of the GPUs TensorFlow sees; empty when TF is not imported or sees none."""
    tf = sys.modules.get("tensorflow")
    if tf is None:
        return []
    names = []
    for dev in tf.config.list_physical_devices("GPU"):
        try:
            details = tf.config.experimental.get_device_details(dev)
        except Exception:  # details are optional; a name is not worth failing for
            details = {}
        names.append(str(details.get("device_name", dev.name)))
    return names


def machine_info() -> dict[str, Any]:
    tf = sys.modules.get("tensorflow")
    info: dict[str, Any] = {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpu": cpu_model(),
        "cpu_count": os.cpu_count(),
        "tensorflow": getattr(tf, "__version__", None),
        "gpus": gpu_names(),
    }
    try:
        info["load_average_1min"] = round(os.getloadavg()[0], 2)
    except (OSError, AttributeError):
        info["load_average_1min"] = None
    return info


def machine_line(info: dict[str, Any]) -> str:
    gpus = ", ".join(info.get("gpus") or []) or "no GPU"
    load = info.get("load_average_1min")
    load_s = f", load {load}" if load is not None else ""
    return (f"{info.get('cpu')} ({info.get('cpu_count')} CPUs{load_s}), {gpus}, "
            f"TF {info.get('tensorflow') or '-'}, Python {info.get('python')}")
