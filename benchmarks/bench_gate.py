"""How often the regression gate cries wolf, and how often it catches a planted 30 % slowdown.

    PYTHONPATH=src .venv/bin/python benchmarks/bench_gate.py [--pairs 20] [--trials 10]
        [--budget 1.0] [--load N] [--json PATH]

The workload is a real TensorFlow step: ``m`` calls of a ``tf.function`` running a
``tf.while_loop`` of ten 128×128 matmul + tanh steps. The planted slowdown calls it 13 times
instead of 10: exactly 30 % more of the same work (call overhead included), with the same
graph and the same single trace.

Two ways to get the baseline, as ``tfperf bench`` offers them:

* **separate runs** (``--save`` then ``--compare-to``): two comparisons one after the other
  in this process, like two CI jobs close in time (two CI jobs on two runners differ more),
  each with its yardstick and its load average, judged by the shipped rule: the noise
  control first (a machine that changed between the runs makes the verdict *inconclusive*,
  exit 0), then the bootstrap interval above 1 and the ratio above ``--fail-over``. The same
  pairs judged with ``--strict`` (the figures alone, the rule before the noise control) are
  printed beside: that is what the gate said before.
* **interleaved** (``--interleave-with``): baseline and current side by side in one
  comparison, judged on the per-round ratios (no noise control: both sides share each round).

``--cli N`` adds N self-comparisons the way the issue measured them: ``tfperf bench FILE
--save`` and ``tfperf bench FILE --compare-to`` in two separate processes (``--cli-budget``
seconds of rounds each, 10 by default as in ``tfperf bench``), the same step as a bench file;
each comparison's JSON gives both the verdict and what ``--strict`` says.

For each way: ``--pairs`` self-comparisons (the same code against itself; a "regression" is a
false alarm, an "inconclusive" is not) and ``--trials`` comparisons of the 30 %-slower step
(a "regression" is a catch). ``--load N`` starts N busy processes (``while True: pass``) and
waits until the 1-minute load average reaches N before timing; they are ended on exit. The
load average (``os.getloadavg``) is printed for each section: other work on the machine
counts too. Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

BENCH_FILE = '''
import tensorflow as tf
import tfperf.bench as bench

TEN = tf.constant(10)


@tf.function
def core(x, w, n):
    def body(i, y):
        return i + 1, tf.tanh(tf.matmul(y, w))
    return tf.while_loop(lambda i, y: i < n, body, (tf.constant(0), x))[1]


@bench.inputs
def make():
    g = tf.random.Generator.from_seed(0)
    return g.normal([128, 128]), g.normal([128, 128]) * 0.1


@bench.variant
def step(x, w):
    y = x
    for _ in range(10):
        y = core(y, w, TEN)
    return y
'''


def start_load(n: int, wait_s: float = 120.0) -> list[subprocess.Popen[bytes]]:
    """``n`` busy processes; returns once the 1-minute load average is at least ``n``."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    t0 = time.monotonic()
    while os.getloadavg()[0] < n and time.monotonic() - t0 < wait_s:
        time.sleep(2)
    return procs


def stop_load(procs: list[subprocess.Popen[bytes]]) -> None:
    for p in procs:
        p.terminate()
    for p in procs:
        p.wait()


def loads_text(loads: list[float]) -> str:
    return f"load {min(loads):.1f}–{max(loads):.1f} (median {statistics.median(loads):.1f})"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", type=int, default=20, help="self-comparisons per way (≥ 20)")
    ap.add_argument("--trials", type=int, default=10, help="planted-slowdown trials per way")
    ap.add_argument("--budget", type=float, default=1.0, help="seconds of rounds per run")
    ap.add_argument("--fail-over", type=float, default=0.10)
    ap.add_argument("--load", type=int, default=0,
                    help="start this many busy processes and wait for that load average")
    ap.add_argument("--json", metavar="PATH", help="also write every pair's figures here")
    ap.add_argument("--cli", type=int, default=0, metavar="N",
                    help="also N self-comparisons through the CLI, each run its own process")
    ap.add_argument("--cli-budget", type=float, default=10.0)
    ap.add_argument("--only", choices=("separate", "interleaved"),
                    help="time one way only (the other's section is left out)")
    args = ap.parse_args()

    busy = start_load(args.load) if args.load else []
    try:
        status = run(args)
        if args.cli:
            run_cli(args)
        return status
    finally:
        stop_load(busy)


def run_cli(args: argparse.Namespace) -> None:
    """``--save`` then ``--compare-to`` of an unchanged file, each in its own process."""
    verdicts, strict, loads = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        bench_file, base = Path(tmp) / "bench_step.py", Path(tmp) / "base.json"
        bench_file.write_text(BENCH_FILE)
        tfperf = [sys.executable, "-m", "tfperf", "bench", str(bench_file), "--budget",
                  str(args.cli_budget), "--no-progress"]
        for _ in range(args.cli):
            subprocess.run([*tfperf, "--save", str(base), "--format", "json"], check=True,
                           capture_output=True)
            proc = subprocess.run([*tfperf, "--compare-to", str(base), "--format", "json",
                                   "--fail-over", f"{args.fail_over:.0%}"],
                                  capture_output=True, text=True)
            (t,) = json.loads(proc.stdout)["times"]
            verdicts.append(t["verdict"])
            strict.append(t["strict_verdict"])
            loads += [json.loads(base.read_text())["machine"]["load_average_1min"],
                      os.getloadavg()[0]]
            print(f"  cli pair: exit {proc.returncode}, {t['reason']}", flush=True)
    print(f"\nseparate processes through the CLI ({args.cli_budget:g} s each), "
          f"{loads_text(loads)}:\n  {args.cli} self-comparisons: "
          f"{dict(Counter(verdicts))}; with --strict (as before the noise control): "
          f"{dict(Counter(strict))}")


def run(args: argparse.Namespace) -> int:
    from tfperf.core.tensorflow_logs import quiet_tensorflow_startup

    quiet_tensorflow_startup(False)
    import tensorflow as tf

    from tfperf.bench.comparison import Variant, compare
    from tfperf.bench.gate import INCONCLUSIVE, REGRESSION, compare_runs
    from tfperf.bench.interleave import REF_SUFFIX, split
    from tfperf.bench.record import run_record
    from tfperf.bench.yardstick import make_yardstick

    def make_step():  # a fresh tf.function each time: its own trace, as a new process has
        @tf.function
        def core(x, w, n):
            def body(i, y):
                return i + 1, tf.tanh(tf.matmul(y, w))
            return tf.while_loop(lambda i, y: i < n, body, (tf.constant(0), x))[1]

        def step(x, w, m):
            y = x
            for _ in range(m):
                y = core(y, w, ten)
            return y
        return step

    g = tf.random.Generator.from_seed(0)
    x, w = g.normal([128, 128]), g.normal([128, 128]) * 0.1
    ten = tf.constant(10)
    fast, slow = 10, 13
    # slow_after: a first call slowed by a loaded runner must not make the step "slow" (run
    # once, not measured); the gate's own rule is tested, not that cut-off
    settings = {"budget": args.budget, "counters": True, "check_equivalence": False,
                "target_rel_iqr": 0.0, "slow_after": 30.0}

    def separate(n_current: int) -> tuple[dict[str, Any], dict[str, Any], bool]:
        base = compare({"step": make_step()}, (x, w, fast), yardstick=make_yardstick(),
                       **settings)
        cur = compare({"step": make_step()}, (x, w, n_current), yardstick=make_yardstick(),
                      **settings)
        return run_record(base), run_record(cur), False

    def interleaved(n_current: int) -> tuple[dict[str, Any], dict[str, Any], bool]:
        res = compare([Variant("step", make_step(), args=(x, w, n_current)),
                       Variant("step" + REF_SUFFIX, make_step(), args=(x, w, fast))],
                      baseline="step" + REF_SUFFIX, **settings)
        ref, cur = split(res)
        return run_record(ref), run_record(cur), True

    def judge(pair: tuple[dict[str, Any], dict[str, Any], bool]) -> dict[str, Any]:
        base, cur, paired = pair
        t = compare_runs(base, cur, fail_over=args.fail_over, paired=paired).times[0]
        return {"verdict": t.verdict, "strict_verdict": t.strict_verdict, "ratio": t.ratio,
                "raw_ratio": t.raw_ratio, "yardstick_ratio": t.yardstick_ratio,
                "detectable": t.detectable, "machine_changes": t.machine_changes,
                "rounds": [t.baseline_runs, t.current_runs],
                "reason": t.reason,
                "load": [base["machine"]["load_average_1min"],
                         cur["machine"]["load_average_1min"]]}

    def counts(rows: list[dict[str, Any]], key: str = "verdict") -> str:
        c = Counter(r[key] for r in rows)
        alarms = c.pop(REGRESSION, 0)
        inconclusive = c.pop(INCONCLUSIVE, 0)
        passed = sum(c.values())
        return f"pass {passed} / inconclusive {inconclusive} / regression {alarms}"

    print(f"machine: {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f} at the start"
          f"{f' ({args.load} busy processes started)' if args.load else ''}; budget "
          f"{args.budget:g} s per run; threshold +{args.fail_over:.0%}; confidence 99 %")
    t0 = time.perf_counter()
    out: dict[str, Any] = {"load_at_start": os.getloadavg()[0], "busy": args.load}
    for label, way in (("separate runs (--compare-to)", separate),
                       ("interleaved (--interleave-with)", interleaved)):
        if args.only and not label.startswith(args.only):
            continue
        selfs = [judge(way(fast)) for _ in range(args.pairs)]
        slows = [judge(way(slow)) for _ in range(args.trials)]
        if not selfs + slows:
            continue
        loads = [ld for r in selfs + slows for ld in r["load"]]
        print(f"\n{label}, {loads_text(loads)}:")
        print(f"  {args.pairs} self-comparisons: {counts(selfs)}  (a regression here is a "
              "false alarm)")
        print(f"  {args.trials} planted +30 %:    {counts(slows)}  (a regression here is a "
              "catch)")
        if way is separate:
            print(f"  the same pairs with --strict (the figures alone, as before the noise "
                  f"control): self {counts(selfs, 'strict_verdict')}; planted "
                  f"{counts(slows, 'strict_verdict')}")
            why = Counter("load" if c.startswith("load") else "yardstick drift"
                          if " ran " in c else "yardstick spread"
                          for r in selfs + slows for c in r["machine_changes"])
            if why:
                print("  inconclusive because: " + ", ".join(f"{k} ({n})"
                                                           for k, n in why.most_common()))
        for r in selfs:
            if r["verdict"] == REGRESSION:
                print(f"      false alarm: {r['reason']}")
        ratios = [r["ratio"] for r in selfs if r["ratio"] is not None]
        slow_ratios = [r["ratio"] for r in slows if r["ratio"] is not None]
        if ratios and slow_ratios:
            print(f"  judged ratios: self median {statistics.median(ratios):.3f} "
                  f"({min(ratios):.3f}–{max(ratios):.3f}); planted median "
                  f"{statistics.median(slow_ratios):.3f} ({min(slow_ratios):.3f}–"
                  f"{max(slow_ratios):.3f})")
        out[label] = {"self": selfs, "planted": slows}
        sys.stdout.flush()
    print(f"\n({time.perf_counter() - t0:.0f} s; load now {os.getloadavg()[0]:.1f})")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(out, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
