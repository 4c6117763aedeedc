"""The loaded kernel module's version from /proc/driver/nvidia: the last resort (Linux)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

VERSION_FILE = Path("/proc/driver/nvidia/version")
_NVRM = re.compile(r"Kernel Module(?:\s+for\s+\S+)?\s+(?P<version>\d+\.\d+(?:\.\d+)?)")


def parse_version_file(text: str) -> str | None:
    m = _NVRM.search(text)
    return m["version"] if m else None


def probe_proc_driver(path: Path = VERSION_FILE) -> dict[str, Any]:
    try:
        text = path.read_text(errors="replace")
    except FileNotFoundError:
        return {"status": f"{path}: not found (no NVIDIA kernel module loaded)"}
    except OSError as exc:
        return {"status": f"{path}: {exc.strerror or exc}"}
    version = parse_version_file(text)
    if version is None:
        return {"status": f"{path}: no version in it"}
    return {"status": "ok", "driver_version": version, "gpus": []}
