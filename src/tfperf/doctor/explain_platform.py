"""A fix that follows the platform the log shows (data/platform_fixes.csv).

Some fixes differ by operating system: a CUDA library that is installed but not found is a
LD_LIBRARY_PATH matter on Linux, a PATH matter on Windows, and no matter at all on macOS
(TensorFlow has had no CUDA build there since 1.2). One text for all three read wrong on each
(round 26, re-read as development: Linux advice opening a fix for ``cudart64_101.dll``). The
platform comes first from the cause's own lines (the library's file name: ``.dll``, ``.dylib``,
``.so``), then from the whole log (``explain_versions`` reads paths and names); with no evidence
the row's own fix stays: it says each platform's way, neutrally.
"""

from __future__ import annotations

import functools
import re
from typing import Any

# a library file name in the cause's own lines says the platform that tried to load it
# (each tried only where its literal is: a repeated line makes a cause of thousands of lines)
_LINE_PLATFORM = (("windows", (".dll", ":\\"), re.compile(r"\.dll\b|[A-Za-z]:\\")),
                  ("macos", (".dylib",), re.compile(r"\.dylib\b")),
                  ("linux", (".so",), re.compile(r"\.so(?:\.\d+)*\b")))


@functools.cache
def _fixes() -> dict[str, dict[str, str]]:
    """label -> platform -> fix."""
    from tfperf.doctor.knowledge.tables import read_table

    out: dict[str, dict[str, str]] = {}
    for r in read_table("platform_fixes.csv"):
        out.setdefault(r["label"], {})[r["platform"]] = r["fix"]
    return out


def cause_platform(lines: list[str], text: str) -> str | None:
    """windows | macos | linux as the cause's lines, else the log, show it; None without
    evidence."""
    joined = "\n".join(dict.fromkeys(lines))  # each distinct line once
    found = {name for name, literals, rx in _LINE_PLATFORM
             if any(lit in joined for lit in literals) and rx.search(joined)}
    if len(found) == 1:
        return found.pop()
    if found:  # two platforms' names in one cause (a pasted comparison): say both
        return None
    from tfperf.doctor.explain_versions import read_versions

    return read_versions(text).os


def apply_platform(causes: list[Any], text: str) -> None:
    """Give each cause of a label in the table the fix of the platform its log shows."""
    table = _fixes()
    for cause in causes:
        by_platform = table.get(cause.label)
        if not by_platform:
            continue
        platform = cause_platform([ln.text for ln in cause.lines], text)
        if platform and (fix := by_platform.get(platform)):
            cause.fix = fix  # without evidence the row's own text says every platform's way
