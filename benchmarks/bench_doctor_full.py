"""What a full `tfperf doctor` costs beyond importing TensorFlow.

    .venv/bin/python benchmarks/bench_doctor_full.py [--runs N]

Times, as fresh processes and interleaved round by round (so machine load hits all alike):

* the floor: a subprocess that imports TensorFlow and lists its devices, which is exactly
  what the doctor's TF probe must do anyway;
* ``tfperf doctor --json --no-compute`` (probes, checks, report);
* ``tfperf doctor --json`` (plus the live matmul and XLA checks).

CPU seconds of each process tree are printed too: on a loaded machine they move less than
wall time.

Prints the median and spread of each, the overhead of each doctor run over the floor
(median of the per-round differences) and the doctor's own per-probe seconds from its JSON.
Goal: a full doctor within TF's import time + 3 s. Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time

TF_IMPORT = ("import tensorflow as tf; tf.config.list_physical_devices()")
COMMANDS = {
    "TF import + list devices (floor)": [sys.executable, "-c", TF_IMPORT],
    "tfperf doctor --json --no-compute": [sys.executable, "-m", "tfperf", "doctor", "--json",
                                          "--no-compute"],
    "tfperf doctor --json": [sys.executable, "-m", "tfperf", "doctor", "--json"],
}
GOAL_S = 3.0


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_once(argv: list[str]) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds of the process tree, stdout)."""
    cpu0 = _children_cpu()
    start = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):  # 1 is a failing check: still a complete run
        sys.exit(f"{argv} failed with exit status {proc.returncode}:\n{proc.stderr[-2000:]}")
    return elapsed, _children_cpu() - cpu0, proc.stdout


def spread(xs: list[float]) -> str:
    if len(xs) < 2:
        return "–"
    q = statistics.quantiles(xs, n=4, method="inclusive")
    return f"{q[2] - q[0]:.2f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="rounds (default 3)")
    args = parser.parse_args()
    if args.runs < 1:
        parser.error("--runs must be at least 1")

    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    cpu: dict[str, list[float]] = {name: [] for name in COMMANDS}
    last_json = ""
    for _ in range(args.runs):
        for name, argv in COMMANDS.items():
            seconds, cpu_s, out = run_once(argv)
            times[name].append(seconds)
            cpu[name].append(cpu_s)
            if name == "tfperf doctor --json":
                last_json = out

    floor_name = next(iter(COMMANDS))
    print(f"wall time of fresh processes, {args.runs} interleaved round(s) "
          f"(median, IQR; the machine may be loaded: compare the differences)\n")
    def overhead(values: dict[str, list[float]], name: str) -> float:
        """Median of the per-round differences to the floor (load hits a round alike)."""
        return statistics.median(a - b for a, b in zip(values[name], values[floor_name],
                                                        strict=True))

    print(f"{'command':<36} {'median s':>9} {'IQR s':>7} {'overhead s':>11} {'CPU s':>7} "
          f"{'CPU overhead s':>15}")
    for name, xs in times.items():
        over = "" if name == floor_name else f"{overhead(times, name):+.2f}"
        cpu_over = "" if name == floor_name else f"{overhead(cpu, name):+.2f}"
        print(f"{name:<36} {statistics.median(xs):>9.2f} {spread(xs):>7} {over:>11} "
              f"{statistics.median(cpu[name]):>7.2f} {cpu_over:>15}")
    full = overhead(times, "tfperf doctor --json")
    verdict = "within" if full <= GOAL_S else "OVER"
    print(f"\nfull doctor overhead over TF's import: {full:+.2f} s wall ({verdict} the "
          f"+{GOAL_S:g} s goal), {overhead(cpu, 'tfperf doctor --json'):+.2f} s CPU")
    try:
        doc = json.loads(last_json)
        probes = doc["facts"]["probe_seconds"]
        print("doctor's own probe seconds (last run; the slow ones run side by side): "
              + ", ".join(f"{k} {v:.2f}" for k, v in probes.items()))
        import_s = doc["facts"].get("tf_import_seconds")
        if import_s:
            print(f"TF import inside the doctor's subprocess: {import_s:.2f} s")
    except (ValueError, KeyError):
        print("(could not read the doctor's JSON)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
