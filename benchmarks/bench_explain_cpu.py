"""CPU time of ``explain_log`` in-process on 10,000 lines of the development set, of its
benign logs, and of its six largest logs repeated (a log of repeated lines: each distinct line
should cost once), the fastest and the median of 7 runs, after one warm-up run.

    .venv/bin/python benchmarks/bench_explain_cpu.py [LABEL]
    PYTHONPATH=/path/to/other/checkout/src .venv/bin/python benchmarks/bench_explain_cpu.py OTHER

CPU time moves less with a shared machine's load than wall time (printed too); run two
checkouts in turn, a few times each, on the same logs (this checkout's fixtures) to compare
them. Asserts nothing.
"""

from __future__ import annotations

import csv
import statistics
import sys
import time
from pathlib import Path

from tfperf.doctor.explainer import explain_log

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "doctor" / "fixtures" / "explain_logs"
LINES = 10_000


def _log(ids: list[str]) -> str:
    lines: list[str] = []
    for log_id in ids:
        lines += (FIXTURES / f"{log_id}.log").read_text(errors="replace").splitlines()
    out: list[str] = []
    while len(out) < LINES:
        out += lines
    return "\n".join(out[:LINES])


def main() -> None:
    label = sys.argv[1] if len(sys.argv) > 1 else "this"
    with (FIXTURES / "index.csv").open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    logs = {"set": _log([r["id"] for r in rows]),
            "benign": _log([r["id"] for r in rows if r["expected"] == "none"]),
            "repeat": _log(sorted((r["id"] for r in rows), key=lambda i: -(
                FIXTURES / f"{i}.log").stat().st_size)[:6])}
    for name, text in logs.items():
        explain_log(text)  # warm-up: regexes compiled, tables read
        times, walls = [], []
        for _ in range(7):
            start, wall = time.process_time(), time.perf_counter()
            explain_log(text)
            times.append((time.process_time() - start) * 1000)
            walls.append((time.perf_counter() - wall) * 1000)
        print(f"{label:10} {name:7} fastest {min(times):6.1f} ms  median "
              f"{statistics.median(times):6.1f} ms CPU  (wall median "
              f"{statistics.median(walls):6.1f} ms)")


if __name__ == "__main__":
    main()
