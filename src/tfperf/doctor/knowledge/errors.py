"""Known TensorFlow/CUDA log messages: a regex, the cause, the fix, and where it comes from."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Literal

from tfperf.doctor.knowledge.tables import read_table, truthy

Severity = Literal["error", "warning", "info"]
SEVERITY_ORDER: dict[str, int] = {"error": 0, "warning": 1, "info": 2}


@dataclass(frozen=True)
class ErrorPattern:
    id: str
    regex: re.Pattern[str]
    severity: Severity
    benign: bool  # harmless noise: say so, never report it as the fault
    cause: str
    fix: str
    source: str


@functools.cache
def _patterns() -> tuple[ErrorPattern, ...]:
    out = []
    for r in read_table("error_patterns.csv"):
        sev = r["severity"]
        if sev not in SEVERITY_ORDER:
            raise ValueError(f"error_patterns.csv: bad severity {sev!r} for {r['id']}")
        out.append(ErrorPattern(id=r["id"], regex=re.compile(r["pattern"]), severity=sev,  # type: ignore[arg-type]
                                benign=truthy(r["benign"]), cause=r["cause"], fix=r["fix"],
                                source=r["source"]))
    return tuple(out)


def error_patterns() -> list[ErrorPattern]:
    """All patterns, in table order (more specific patterns come first where they overlap)."""
    return list(_patterns())
