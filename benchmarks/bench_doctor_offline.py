"""Wall time of the doctor's offline commands as fresh processes, and proof they skip TF.

    .venv/bin/python benchmarks/bench_doctor_offline.py [--runs N]

Runs ``tfperf doctor --plan 2.5.0 --driver 550.144.03`` and ``tfperf explain --file <log>``
N times each as new Python processes (what a user's shell does), interleaved so machine load
hits both alike, and prints the median and spread. A bare ``python -c pass`` is timed the
same way as the floor every Python command pays. Then each command runs once in-process to
list whether ``tensorflow`` got imported. Goal: well under 0.5 s each. Asserts nothing.

The children run with bytecode caching on (into a temporary PYTHONPYCACHEPREFIX), as an
installed tfperf runs: an environment with PYTHONDONTWRITEBYTECODE=1 would otherwise make
every start recompile every module, which is not what users see.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOG = ROOT / "tests" / "doctor" / "fixtures" / "explain" / "tf25_on_cuda12.log"
COMMANDS = {
    "python -c pass (floor)": [sys.executable, "-c", "pass"],
    "doctor --plan 2.5.0 --driver 550.144.03":
        [sys.executable, "-m", "tfperf", "doctor", "--plan", "2.5.0", "--driver", "550.144.03"],
    "explain --file tf25_on_cuda12.log": [sys.executable, "-m", "tfperf", "explain", "--file",
                                          str(LOG)],
}

IMPORT_CHECK = """
import sys, io, contextlib
from tfperf.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    main({argv!r})
heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('tensorflow', 'keras', 'numpy'))
print(len(heavy), ' '.join(heavy[:5]))
"""


ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
ENV["PYTHONPYCACHEPREFIX"] = tempfile.mkdtemp(prefix="tfperf-bench-pyc-")


def _once(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False,
                   env=ENV)
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15)
    runs = ap.parse_args().runs
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for cmd in COMMANDS.values():  # warm the file and bytecode caches once, not timed
        _once(cmd)
    for _ in range(runs):
        for name, cmd in COMMANDS.items():
            times[name].append(_once(cmd))
    floor = statistics.median(times["python -c pass (floor)"])
    print(f"fresh-process wall time, {runs} interleaved runs each (median [min–max]):")
    for name, ts in times.items():
        med = statistics.median(ts)
        print(f"  {name:<42} {med * 1000:7.1f} ms  [{min(ts) * 1000:.1f}–{max(ts) * 1000:.1f}]"
              f"  = {med / floor:4.1f}× the bare interpreter, goal < 500 ms")
    print("\nmodules imported in-process (tensorflow/keras/numpy):")
    for argv in (["doctor", "--plan", "2.5.0", "--driver", "550.144.03"],
                 ["explain", "--file", str(LOG)]):
        out = subprocess.run([sys.executable, "-c", IMPORT_CHECK.format(argv=argv)],
                             capture_output=True, text=True, check=False, env=ENV)
        print(f"  tfperf {argv[0]}: {out.stdout.strip() or out.stderr.strip()[-200:]}")
    try:
        load = os.getloadavg()
        print(f"\nload average while measuring: {load[0]:.2f} (1 min) on {os.cpu_count()} cores")
    except OSError:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
