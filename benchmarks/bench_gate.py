"""How often the regression gate cries wolf, and how often it catches a planted 30 % slowdown.

    PYTHONPATH=src .venv/bin/python benchmarks/bench_gate.py [--pairs 20] [--trials 10]
                                                             [--budget 1.0]

The workload is a real TensorFlow step: ``m`` calls of a ``tf.function`` running a
``tf.while_loop`` of ten 128×128 matmul + tanh steps. The planted slowdown calls it 13 times
instead of 10: exactly 30 % more of the same work (call overhead included), with the same
graph and the same single trace.

Two ways to get the baseline, as ``tfperf bench`` offers them:

* **separate runs** (``--save`` then ``--compare-to``): two comparisons one after the other
  in this process, like two CI jobs close in time (two CI jobs on two runners differ more);
* **interleaved** (``--interleave-with``): baseline and current side by side in one
  comparison, judged on the per-round ratios.

For each way: ``--pairs`` self-comparisons (the same code against itself; any
"regression" is a false alarm) and ``--trials`` comparisons of the 30 %-slower step against
the baseline (a "regression" is a detection). Each pair of runs is judged by the shipped rule
(the bootstrap interval above 1 and the ratio above +10 %, ``--fail-over 10%``) at each
confidence in ``CONFIDENCES`` (the same runs, so the rows differ by the rule alone). Prints
the rates, every false alarm, the median detectable change and the machine's load. Asserts
nothing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

CONFIDENCES = (0.99, 0.999)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", type=int, default=20, help="self-comparisons per way (≥ 20)")
    ap.add_argument("--trials", type=int, default=10, help="planted-slowdown trials per way")
    ap.add_argument("--budget", type=float, default=1.0, help="seconds of rounds per run")
    ap.add_argument("--fail-over", type=float, default=0.10)
    args = ap.parse_args()

    from tfperf.core.tensorflow_logs import quiet_tensorflow_startup

    quiet_tensorflow_startup(False)
    import tensorflow as tf

    from tfperf.bench.comparison import Variant, compare
    from tfperf.bench.gate import REGRESSION, compare_runs
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

    def separate(n_current):
        base = compare({"step": make_step()}, (x, w, fast), yardstick=make_yardstick(),
                       **settings)
        cur = compare({"step": make_step()}, (x, w, n_current), yardstick=make_yardstick(),
                      **settings)
        return run_record(base), run_record(cur), False

    def without_yardstick(pair):
        base, cur, paired = pair
        return dict(base, yardstick_s=None), dict(cur, yardstick_s=None), paired

    def interleaved(n_current):
        res = compare([Variant("step", make_step(), args=(x, w, n_current)),
                       Variant("step" + REF_SUFFIX, make_step(), args=(x, w, fast))],
                      baseline="step" + REF_SUFFIX, **settings)
        ref, cur = split(res)
        return run_record(ref), run_record(cur), True

    print(f"machine: {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}; budget "
          f"{args.budget:g} s per run; threshold +{args.fail_over:.0%}; each pair of runs is "
          f"judged at every confidence in {CONFIDENCES}")
    t0 = time.perf_counter()
    for label, way in (("separate runs", separate), ("interleaved", interleaved)):
        selfs = [way(fast) for _ in range(args.pairs)]
        slows = [way(slow) for _ in range(args.trials)]
        print(f"\n{label} (load now {os.getloadavg()[0]:.1f}):")
        rules = [(c, "") for c in CONFIDENCES]
        if way is separate:  # the same runs judged on raw times, as without a yardstick
            rules += [(c, "raw") for c in CONFIDENCES]
        for confidence, raw in rules:
            if raw:
                selfs_, slows_ = [without_yardstick(p) for p in selfs], [
                    without_yardstick(p) for p in slows]
            else:
                selfs_, slows_ = selfs, slows
            def judge(pair, confidence=confidence):
                base, cur, paired = pair
                return compare_runs(base, cur, fail_over=args.fail_over, paired=paired,
                                    confidence=confidence).times[0]
            s_verdicts = [judge(p) for p in selfs_]
            t_verdicts = [judge(p) for p in slows_]
            alarms = [t for t in s_verdicts if t.verdict == REGRESSION]
            caught = sum(t.verdict == REGRESSION for t in t_verdicts)
            ratios = [t.ratio for t in s_verdicts if t.ratio is not None]
            slow_ratios = [t.ratio for t in t_verdicts if t.ratio is not None]
            detect = [t.detectable for t in s_verdicts + t_verdicts if t.detectable is not None]
            unmeasured = sum(t.ratio is None for t in s_verdicts + t_verdicts)
            if not ratios or not slow_ratios:
                print(f"  {confidence:.1%}{' raw' if raw else ''}: too few measured "
                      f"comparisons ({(s_verdicts + t_verdicts)[0].reason})")
                continue
            rule = f"{confidence:.1%}" + (", raw times (no yardstick)" if raw else (
                ", by yardstick" if way is separate else ""))
            print(f"  {rule}: false alarms {len(alarms)}/{args.pairs}; "
                  f"planted +30 % caught {caught}/{args.trials}; median detectable "
                  f"±{statistics.median(detect):.1%}"
                  + (f"; not measured {unmeasured}" if unmeasured else ""))
            for t in alarms:
                print(f"      false alarm: {t.reason}")
        print(f"  ratios (last rule): self median {statistics.median(ratios):.3f}, range "
              f"{min(ratios):.3f}–{max(ratios):.3f}; planted: median "
              f"{statistics.median(slow_ratios):.3f}, range {min(slow_ratios):.3f}–"
              f"{max(slow_ratios):.3f}")
        sys.stdout.flush()
    print(f"\n({time.perf_counter() - t0:.0f} s; load now {os.getloadavg()[0]:.1f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
