"""One finding type for every capability.

A lint diagnostic, a doctor check verdict and a piece of profile advice are all a
:class:`Finding`: a code, a message, an optional place in a file, an optional human fix hint
and an optional machine-applicable :class:`Fix`. Renderers (``tfperf.core.render``) only ever
see findings and plain data, never the capability that produced them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import Any


class Status(str, Enum):
    """Verdict of a check. Lint findings are ``FAIL``-like by nature and use ``WARN``."""

    PASS = "pass"
    WARN = "warn"
    FAIL = "fail"
    SKIP = "skip"
    INFO = "info"

    def __str__(self) -> str:  # so f-strings print "pass", not "Status.PASS"
        return self.value


class Applicability(str, Enum):
    """Whether a fix may be applied without review (``--fix``) or only on request."""

    SAFE = "safe"
    UNSAFE = "unsafe"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, order=True)
class Location:
    """A place in a source file. Lines are 1-based, columns 0-based (as ``ast``).

    In a notebook, ``cell`` is the 1-based index over all cells and ``line`` counts within it.
    """

    path: str | None = None
    line: int | None = None
    column: int | None = None
    end_line: int | None = None
    end_column: int | None = None
    cell: int | None = None


@dataclass(frozen=True)
class Edit:
    """Replace the text between two (line, column) positions with ``content``."""

    line: int
    column: int
    end_line: int
    end_column: int
    content: str


@dataclass(frozen=True)
class Fix:
    applicability: Applicability
    edits: tuple[Edit, ...]
    description: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "applicability": str(self.applicability),
            "description": self.description,
            "edits": [asdict(e) for e in self.edits],
        }


@dataclass(frozen=True)
class Finding:
    """What a capability found, with what to do about it.

    ``code`` is the stable identifier (``TFP101``, ``doctor.driver``), ``name`` a readable
    slug, ``hint`` the concrete fix in words, ``fix`` the edits when they can be applied.
    ``data`` carries capability-specific plain values (figures, versions) for JSON output.
    """

    code: str
    message: str
    status: Status = Status.WARN
    name: str = ""
    hint: str = ""
    location: Location | None = None
    fix: Fix | None = None
    data: dict[str, Any] = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        return self.status is Status.FAIL

    def to_dict(self) -> dict[str, Any]:
        loc = self.location or Location()
        return {
            "code": self.code,
            "name": self.name,
            "status": str(self.status),
            "message": self.message,
            "hint": self.hint,
            "path": loc.path,
            "line": loc.line,
            "column": loc.column,
            "end_line": loc.end_line,
            "end_column": loc.end_column,
            "cell": loc.cell,
            "fix": self.fix.to_dict() if self.fix else None,
            "data": self.data,
        }


def worst(statuses: list[Status]) -> Status:
    """The most serious status among ``statuses`` (FAIL > WARN > PASS > SKIP/INFO)."""
    order = [Status.FAIL, Status.WARN, Status.PASS, Status.INFO, Status.SKIP]
    for s in order:
        if s in statuses:
            return s
    return Status.PASS
