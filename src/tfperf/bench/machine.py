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


# ---------------------------------------------------------------------------------------------
# the fingerprint a regression gate compares: cheap, offline, no tool run

#: Keys whose change makes two runs' times not comparable (tfperf's own version is recorded
#: but not compared: upgrading tfperf in a pull request must not void its baseline).
COMPARED_KEYS = ("cpu", "cpu_count", "arch", "system", "python", "tensorflow", "gpus",
                 "cuda", "cudnn", "driver")


def _nvidia_driver() -> str | None:
    """The NVIDIA kernel driver's version from /proc (no nvidia-smi run); None without one."""
    try:
        with open("/proc/driver/nvidia/version", encoding="utf-8") as fh:
            first = fh.readline()
    except OSError:
        return None
    for word in first.split():
        if word[:1].isdigit() and "." in word:
            return word
    return first.strip() or None


def _build_info() -> dict[str, Any]:
    tf = sys.modules.get("tensorflow")
    try:
        return dict(tf.sysconfig.get_build_info()) if tf is not None else {}
    except Exception:  # an old or trimmed TF without build info: versions unknown
        return {}


def fingerprint() -> dict[str, Any]:
    """What makes a time measured here comparable with one measured elsewhere."""
    from tfperf import __version__

    build = _build_info()
    return {
        "cpu": cpu_model(),
        "cpu_count": os.cpu_count(),
        "arch": platform.machine(),
        "system": platform.system(),
        "python": platform.python_version(),
        "tensorflow": getattr(sys.modules.get("tensorflow"), "__version__", None),
        "gpus": gpu_names(),
        "cuda": build.get("cuda_version"),
        "cudnn": build.get("cudnn_version"),
        "driver": _nvidia_driver(),
        "tfperf": __version__,
    }


def machine_key(fp: dict[str, Any]) -> str:
    """A short stable name for a fingerprint (the storage folder of its runs)."""
    import hashlib
    import json

    compared = {k: fp.get(k) for k in COMPARED_KEYS}
    digest = hashlib.sha1(json.dumps(compared, sort_keys=True).encode()).hexdigest()[:10]
    cpu = "".join(ch if ch.isalnum() else "-" for ch in str(fp.get("cpu") or "cpu"))[:24]
    return f"{fp.get('system') or 'os'}-{fp.get('arch') or 'arch'}-{cpu.strip('-')}-{digest}"


def fingerprint_differences(a: dict[str, Any], b: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    """(key, a's value, b's value) for each compared key that differs."""
    return [(k, a.get(k), b.get(k)) for k in COMPARED_KEYS if a.get(k) != b.get(k)]
