"""The development set's logs as the explain benchmarks read them: the index rows, one log's
text, and logs of 10,000 lines built from them. Imports no tfperf, so a script can put another
checkout's ``src`` on the path first (``explain_answers.py --src``)."""

from __future__ import annotations

import csv
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "doctor" / "fixtures" / "explain_logs"
LINES = 10_000


def rows() -> list[dict[str, str]]:
    with (FIXTURES / "index.csv").open(encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def text(log_id: str) -> str:
    return (FIXTURES / f"{log_id}.log").read_text(errors="replace")


def long_log(ids: list[str], lines: int = LINES) -> str:
    """The logs of ``ids`` one after another, repeated, cut at ``lines`` lines."""
    pool: list[str] = []
    for log_id in ids:
        pool += text(log_id).splitlines()
    out: list[str] = []
    while len(out) < lines:
        out += pool
    return "\n".join(out[:lines])


def largest(ids: list[str], n: int = 6) -> list[str]:
    """The ``n`` largest logs by bytes on disk."""
    return sorted(ids, key=lambda i: -(FIXTURES / f"{i}.log").stat().st_size)[:n]
