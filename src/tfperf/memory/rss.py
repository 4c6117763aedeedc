"""The process's resident memory, read from /proc (Linux) or ``resource`` elsewhere."""

from __future__ import annotations

import os

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def rss_bytes() -> int | None:
    """Resident set size now (``/proc/self/statm``'s second field × the page size)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return None


def peak_rss_bytes() -> int | None:
    """The process's highest RSS so far (``VmHWM``), or None where /proc lacks it."""
    try:
        with open("/proc/self/status", "rb") as f:
            for line in f:
                if line.startswith(b"VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


__all__ = ["peak_rss_bytes", "rss_bytes"]
