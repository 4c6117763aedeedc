"""Runs inside the TensorFlow subprocess: import TF, report what it sees, then the live checks.

Started by :mod:`tfperf.doctor.probes.tf_runtime` as ``python -m tfperf.doctor.probes.tf_child``.
Speaks JSON lines on stdout, flushed one by one so that the parent keeps every line printed
before a hang: ``{"kind": "facts", ...}``, then per live check ``{"kind": "start", "id": ...}``
and ``{"kind": "live", "id": ..., "result": ...}``.

What TF prints while importing and looking for GPUs (the ``dso_loader`` lines) goes to file
descriptor 2 from C++. The parent makes fd 2 a file it owns, so the log survives this process
being killed or crashing mid-import; this side only writes ``IMPORT_DONE`` after the import so
the parent can tell the import log from what the live checks print later.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback
from typing import Any

IMPORT_DONE = "--- tfperf: tensorflow import and device listing done ---"
LIB_MARKERS = ("libcud", "libcublas", "libcufft", "libcusolver", "libcusparse", "libnccl",
               "libnvJitLink", "libcuda.so", "libnvinfer")


def _emit(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(obj, default=str) + "\n")
    sys.stdout.flush()


def _loaded_cuda_libraries() -> list[str]:
    """Paths of CUDA libraries mapped into this process (Linux): what TF really loaded."""
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as fh:
            paths = {line.split()[-1] for line in fh if "/" in line}
    except OSError:
        return []
    return sorted(p for p in paths if any(m in os.path.basename(p) for m in LIB_MARKERS))


def _import_and_look() -> tuple[Any, dict[str, Any]]:
    """Import TF and list devices (their log goes to fd 2, the parent's file); (tf, facts)."""
    start = time.perf_counter()
    import tensorflow as tf

    physical = tf.config.list_physical_devices()  # GPU libraries are dlopened here
    seconds = time.perf_counter() - start
    sys.stderr.flush()
    os.write(2, f"\n{IMPORT_DONE}\n".encode())
    build = {str(k): v for k, v in dict(tf.sysconfig.get_build_info()).items()}
    gpus = []
    for dev in physical:
        if dev.device_type != "GPU":
            continue
        details: dict[str, Any] = {"name": dev.name}
        try:
            got = tf.config.experimental.get_device_details(dev)
            details["device_name"] = got.get("device_name")
            cc = got.get("compute_capability")
            details["compute_capability"] = f"{cc[0]}.{cc[1]}" if cc else None
        except Exception:  # details are a bonus
            pass
        gpus.append(details)
    facts = {
        "tf_version": tf.__version__,
        "tf_build_info": build,
        "tf_physical_devices": [f"{d.device_type}:{d.name}" for d in physical],
        "tf_gpus": gpus,
        "tf_import_seconds": seconds,
        "tf_loaded_libraries": _loaded_cuda_libraries(),
    }
    return tf, facts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tf_child")
    parser.add_argument("--compute", action="store_true")
    parser.add_argument("--matmul-size", type=int, default=None)
    args = parser.parse_args(argv)
    try:
        tf, facts = _import_and_look()
    except Exception as exc:  # report, never crash without a word
        _emit({"kind": "error", "stage": "import",
               "error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()})
        return 1
    _emit({"kind": "facts", **facts})
    if not args.compute:
        return 0
    from tfperf.doctor.live import workloads

    gpus = [g["name"] for g in facts["tf_gpus"]]
    for check_id, work in workloads(tf, gpus, args.matmul_size):
        _emit({"kind": "start", "id": check_id})
        try:
            _emit({"kind": "live", "id": check_id, "result": work()})
        except Exception as exc:
            _emit({"kind": "live", "id": check_id,
                   "error": f"{type(exc).__name__}: {exc}"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
