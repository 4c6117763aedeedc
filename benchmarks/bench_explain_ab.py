"""CPU time of ``explain_log`` in two checkouts, interleaved call by call on the same logs.

    .venv/bin/python benchmarks/bench_explain_ab.py BASE_SRC BRANCH_SRC [CALLS] [LOGS]

One worker process per checkout (its ``src`` first on the path) reads this checkout's logs
(``explain_logs``: ``set``, ``benign``, ``repeat`` of bench_explain_cpu.py) and warms up; the
workers then take turns, one call each (the first of a pair alternating), so both see the same
load on a shared machine, which moves both alike. Prints each log's medians, fastest and the
ratio branch/base. Asserts nothing.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
from pathlib import Path

_HERE = Path(__file__).resolve().parent
_WORKER = r"""
import sys, time
sys.path[:0] = [sys.argv[1], sys.argv[2]]
from explain_logs import largest, long_log, rows
from tfperf.doctor.explainer import explain_log
ids = [r["id"] for r in rows()]
logs = {"set": long_log(ids), "repeat": long_log(largest(ids)),
        "benign": long_log([r["id"] for r in rows() if r["expected"] == "none"])}
for text in logs.values():
    explain_log(text)
print("ready", flush=True)
for name in sys.stdin:
    text = logs[name.strip()]
    start = time.process_time()
    explain_log(text)
    print((time.process_time() - start) * 1000, flush=True)
"""


def _worker(src: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-c", _WORKER, src, str(_HERE)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    if proc.stdout.readline().strip() != "ready":
        sys.exit(f"the worker for {src} did not start")
    return proc


def _call(proc: subprocess.Popen[str], name: str) -> float:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(name + "\n")
    proc.stdin.flush()
    return float(proc.stdout.readline())


def main() -> int:
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    base, branch = sys.argv[1], sys.argv[2]
    calls = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    names = sys.argv[4].split(",") if len(sys.argv) > 4 else ["set", "benign", "repeat"]
    procs = [_worker(base), _worker(branch)]
    for name in names:
        times: list[list[float]] = [[], []]
        for i in range(calls):
            for k in ((0, 1) if i % 2 == 0 else (1, 0)):
                times[k].append(_call(procs[k], name))
        a, b = (statistics.median(t) for t in times)
        print(f"{name:7} base median {a:6.1f} fastest {min(times[0]):6.1f} | branch median "
              f"{b:6.1f} fastest {min(times[1]):6.1f} ms CPU | branch/base {b / a:.3f} "
              f"({calls} calls each, interleaved)")
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait()
    print(f"load average {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
