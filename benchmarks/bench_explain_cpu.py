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

import statistics
import sys
import time

from explain_logs import largest, long_log, rows

from tfperf.doctor.explainer import explain_log


def main() -> None:
    label = sys.argv[1] if len(sys.argv) > 1 else "this"
    ids = [r["id"] for r in rows()]
    logs = {"set": long_log(ids),
            "benign": long_log([r["id"] for r in rows() if r["expected"] == "none"]),
            "repeat": long_log(largest(ids))}
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
