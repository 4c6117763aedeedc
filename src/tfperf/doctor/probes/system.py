"""Operating system, distribution, WSL2, glibc and the running Python."""

from __future__ import annotations

import os
import platform
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tfperf.doctor.probe import GatherOptions

STAGE = "local"


def _os_release(path: Path = Path("/etc/os-release")) -> str | None:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return None
    values = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            values[key.strip()] = value.strip().strip('"')
    return values.get("PRETTY_NAME") or values.get("NAME")


def _is_wsl(release: str, proc_version: Path = Path("/proc/version")) -> bool:
    """WSL kernels say so in their release string ('...-microsoft-standard-WSL2')."""
    if "microsoft" in release.lower():
        return True
    try:
        return "microsoft" in proc_version.read_text(errors="replace").lower()
    except OSError:
        return False


def probe_system() -> dict[str, Any]:
    system = platform.system().lower()  # 'linux', 'windows', 'darwin'
    release = platform.release()
    facts: dict[str, Any] = {
        "os": system,
        "os_release": None,
        "kernel": release,
        "machine": platform.machine(),
        "wsl": False,
        "glibc": None,
        "python_version": platform.python_version(),
        "python_executable": sys.executable,
    }
    if system == "linux":
        facts["os_release"] = _os_release()
        facts["wsl"] = _is_wsl(release)
        libc, version = platform.libc_ver()
        if libc == "glibc" and version:
            facts["glibc"] = version
        else:
            # libc_ver() reads the executable's bytes and can miss; confstr asks libc itself.
            try:
                name = os.confstr("CS_GNU_LIBC_VERSION") or ""
            except (ValueError, OSError, AttributeError):
                name = ""
            if name.startswith("glibc "):
                facts["glibc"] = name.split()[1]
    elif system == "windows":
        facts["os_release"] = f"Windows {platform.release()} ({platform.version()})"
    elif system == "darwin":
        facts["os_release"] = f"macOS {platform.mac_ver()[0]}"
    return facts


def probe(options: GatherOptions, earlier: Mapping[str, Any]) -> Mapping[str, Any]:
    """The operating system, WSL2, glibc and the running Python."""
    return probe_system()
