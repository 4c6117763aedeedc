"""Wall time of ``tfperf explain --file LOG`` on 10,000-line logs, and its ratio to reading them.

    .venv/bin/python benchmarks/bench_explain.py [--runs N] [--lines N]

Four logs of ``--lines`` lines (default 10,000) are written to a temporary folder, built
from the development set's real logs (tests/doctor/fixtures/explain_logs/):

* ``typical``: a real GPU start-up log, then a training run's console (Keras progress lines,
  epochs, metrics) with a real retracing warning every 1,000 steps, ending in a real OOM;
* ``training``: the same console with every line of the development set (all its logs,
  nearly every knowledge row meets a line) spread through it once;
* ``devset``: the development set concatenated and repeated: the worst case, nearly every
  line a warning, failure or informational line that the rows have to look at;
* ``benign``: the set's benign logs concatenated and repeated: no cause at failure or warning,
  so the floor reads every error-shaped line and the nothing-wrong check looks at every line
  no row explained (the programs' own errors and prints among TensorFlow's notices).

For each, the command runs N times as a new Python process (what a user's shell does),
interleaved with ``python -c "open(LOG,'rb').read()"`` (the cost of starting Python and
reading the file), a bare ``python -c pass`` and ``tfperf --version`` (the CLI's own start:
every subcommand's parser is built), and the median wall and CPU times are printed with the
ratio to reading the file. In-process, the explainer alone (``explain_log``) is timed against
``Path.read_text`` of the same file. Then the command runs once in-process to list whether
tensorflow, keras or numpy got imported. Goal: < 0.3 s a run, no TensorFlow. Asserts nothing.

The children run with bytecode caching on (into a temporary PYTHONPYCACHEPREFIX), as an
installed tfperf runs.
"""

from __future__ import annotations

import argparse
import csv
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOGS = ROOT / "tests" / "doctor" / "fixtures" / "explain_logs"

ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
ENV["PYTHONPYCACHEPREFIX"] = tempfile.mkdtemp(prefix="tfperf-bench-pyc-")
ENV["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "src"), ENV.get("PYTHONPATH")]))

IMPORT_CHECK = """
import sys, io, contextlib
from tfperf.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    main({argv!r})
heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('tensorflow', 'keras', 'numpy'))
print(len(heavy), 'modules', ' '.join(heavy[:5]))
"""


def _devset_lines() -> list[str]:
    lines: list[str] = []
    for path in sorted(LOGS.glob("*.log")):
        lines += path.read_text(encoding="utf-8", errors="replace").splitlines()
    return lines


def _progress(i: int, epochs: int) -> list[str]:
    """One Keras progress line (and an epoch header every 500 steps)."""
    step = i % 500 + 1
    head = [f"Epoch {i // 500 + 1}/{epochs}"] if step == 1 else []
    bar = "=" * (step * 30 // 500)
    return [*head, f"{step}/500 [{bar:<30}] - ETA: {(500 - step) // 40}s"
                   f" - loss: {1 / (i + 2):.4f} - accuracy: {1 - 1 / (i + 2):.4f}"]


def _write_logs(folder: Path, n: int) -> dict[str, Path]:
    """typical / training / devset / benign logs of ``n`` lines each (see the module
    docstring)."""
    dev = _devset_lines()
    startup = (LOGS / "tf62170_created_device_t4_benign.log").read_text(
        encoding="utf-8").splitlines()
    retrace = (LOGS / "inaface23_retracing_predict.log").read_text(
        encoding="utf-8").splitlines()
    oom = (LOGS / "segan42_oom_tf1.log").read_text(encoding="utf-8").splitlines()
    typical, i = list(startup), 0
    while len(typical) < n - len(oom):
        typical += _progress(i, n // 500 + 1)
        i += 1
        if i % 1000 == 0:
            typical += retrace
    typical = typical[:n - len(oom)] + oom
    training, spread = [], max(1, n // max(1, len(dev)))
    i = 0
    while len(training) < n - len(dev):
        training += _progress(i, n // 500 + 1)
        i += 1
    for j, line in enumerate(dev):  # every line of the dev set spread through the run
        training.insert(min(len(training), j * spread), line)
    worst = [dev[k % len(dev)] for k in range(n)]
    quiet: list[str] = []
    with (LOGS / "index.csv").open(encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            if row["expected"] == "none":
                quiet += (LOGS / f"{row['id']}.log").read_text(encoding="utf-8",
                                                               errors="replace").splitlines()
    benign = [quiet[k % len(quiet)] for k in range(n)]
    out = {}
    for name, lines in (("typical", typical), ("training", training[:n]), ("devset", worst),
                        ("benign", benign)):
        out[name] = folder / f"{name}_{n}.log"
        out[name].write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


def _once(cmd: list[str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one run; CPU time counts less of what other load on the machine
    adds (waiting for a core), so both are shown."""
    before = os.times()
    t0 = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False,
                   env=ENV)
    wall = time.perf_counter() - t0
    after = os.times()
    cpu = (after.children_user - before.children_user
           + after.children_system - before.children_system)
    return wall, cpu


def _in_process(path: Path, runs: int) -> tuple[float, float]:
    sys.path.insert(0, str(ROOT / "src"))
    from tfperf.doctor.explainer import explain_log

    read, explain = [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        text = path.read_text(encoding="utf-8", errors="replace")
        t1 = time.perf_counter()
        explain_log(text)
        t2 = time.perf_counter()
        read.append(t1 - t0)
        explain.append(t2 - t1)
    return statistics.median(read), statistics.median(explain)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--lines", type=int, default=10_000)
    args = ap.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="tfperf-bench-explain-"))
    logs = _write_logs(folder, args.lines)
    commands: dict[str, list[str]] = {
        "python -c pass (floor)": [sys.executable, "-c", "pass"],
        "tfperf --version (CLI start)": [sys.executable, "-m", "tfperf", "--version"]}
    for name, path in logs.items():
        commands[f"read {name} (python -c open().read())"] = [
            sys.executable, "-c", f"open({str(path)!r}, 'rb').read()"]
        commands[f"tfperf explain --file {name}"] = [
            sys.executable, "-m", "tfperf", "explain", "--file", str(path)]
    wall: dict[str, list[float]] = {name: [] for name in commands}
    cpu: dict[str, list[float]] = {name: [] for name in commands}
    for cmd in commands.values():  # warm the file and bytecode caches once, not timed
        _once(cmd)
    for _ in range(args.runs):
        for name, cmd in commands.items():
            w, c = _once(cmd)
            wall[name].append(w)
            cpu[name].append(c)
    med = {name: statistics.median(ts) for name, ts in wall.items()}
    print(f"{args.lines:,}-line logs; fresh processes, {args.runs} interleaved runs each:")
    print(f"  {'command':<44} {'wall median [min-max]':>26} {'CPU median':>11}")
    for name, ts in wall.items():
        print(f"  {name:<44} {med[name] * 1000:7.1f} ms [{min(ts) * 1000:6.1f}-"
              f"{max(ts) * 1000:6.1f}] {statistics.median(cpu[name]) * 1000:8.1f} ms")
    print("\nexplain against reading the file (wall medians):")
    for name in logs:
        ex, rd = med[f"tfperf explain --file {name}"], med[f"read {name} (python -c open().read())"]
        print(f"  {name:<9} explain {ex * 1000:6.1f} ms = {ex / rd:4.1f}x starting Python and"
              f" reading it ({rd * 1000:.1f} ms); goal < 300 ms: {'ok' if ex < 0.3 else 'OVER'}")
    print("\nin-process, explainer alone (median; regexes already compiled after the first run):")
    for name, path in logs.items():
        rd, ex = _in_process(path, args.runs)
        print(f"  {name:<9} read_text {rd * 1000:6.2f} ms, explain_log {ex * 1000:7.1f} ms"
              f" ({ex / max(rd, 1e-9):.0f}x reading)")
    print("\nmodules imported in-process by tfperf explain (tensorflow/keras/numpy):")
    out = subprocess.run([sys.executable, "-c", IMPORT_CHECK.format(
        argv=["explain", "--file", str(logs["devset"])])],
        capture_output=True, text=True, check=False, env=ENV)
    print(f"  {out.stdout.strip() or out.stderr.strip()[-200:]}")
    try:
        load = os.getloadavg()
        print(f"\nload average while measuring: {load[0]:.2f} (1 min) on {os.cpu_count()} cores")
    except OSError:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
