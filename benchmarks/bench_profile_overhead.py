"""How much `tfperf.profile.watch()` slows what it observes (goal: ≤ 1.2× on a tf.function loop).

Workloads, each timed plain and under observation, alternately (plain, watched, plain, …) so
machine drift hits both alike; the figure is the median over rounds of the per-round ratio:

* tf.function loop: 500 calls of a small compiled step ([64, 64] matmul + bias + relu) with
  tensor arguments (no retracing) — the common training-loop shape;
* eager op storm: the article's §5.1 loop (case_study_slow) on [2, 50, 8] inputs: 400
  tiny eager ops per call (StridedSlice, Mul, AddV2) — the worst case, every op is an event;
* host syncs: 500 iterations of a small eager op followed by `.numpy()`;
* eager op storm under watch() plus a TF profiler capture (TF's own tracing cost on top).

Run: .venv/bin/python benchmarks/bench_profile_overhead.py [--rounds N]
"""

from __future__ import annotations

import argparse
import os
import pathlib
import statistics
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def _time(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def _rounds(plain, watched, rounds: int) -> tuple[float, float, float]:
    """(median plain s, median watched s, median of per-round ratios)."""
    plain(), watched()  # warm-up: traces, first-call costs, hook installation paths
    p, w, ratios = [], [], []
    for _ in range(rounds):
        a, b = _time(plain), _time(watched)
        p.append(a)
        w.append(b)
        ratios.append(b / a)
    return statistics.median(p), statistics.median(w), statistics.median(ratios)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()

    import tensorflow as tf

    from tfperf.examples.case_study_slow import compute_feature_tf_slow
    from tfperf.profile import watch
    from tfperf.profile.capture import Capture

    w_, b_ = tf.random.normal([64, 64]), tf.random.normal([64])
    x = tf.random.normal([64, 64])

    @tf.function
    def step(x):
        return tf.nn.relu(tf.matmul(x, w_) + b_)

    def function_loop():
        y = x
        for _ in range(500):
            y = step(x)
        y.numpy()

    samples, weights = tf.random.normal([2, 50, 8]), tf.random.normal([50])

    def eager_storm():
        compute_feature_tf_slow(samples, weights).numpy()

    small = tf.ones([8])

    def sync_loop():
        for i in range(500):
            (small * float(i)).numpy()

    def watched(fn):
        def run():
            with watch():
                fn()
        return run

    logdir = tempfile.mkdtemp(prefix="tfperf-bench-profile-")

    def captured(fn):
        def run():
            cap = Capture(logdir=pathlib.Path(logdir))
            cap.start()
            try:
                with watch():
                    fn()
            finally:
                cap.stop()
        return run

    rows = [
        ("tf.function loop (500 calls)", *_rounds(function_loop, watched(function_loop),
                                                  args.rounds)),
        ("eager op storm (§5.1 loop, 400 ops)", *_rounds(eager_storm, watched(eager_storm),
                                                         args.rounds)),
        ("host syncs (500 × .numpy())", *_rounds(sync_loop, watched(sync_loop), args.rounds)),
        ("eager op storm, watch + capture", *_rounds(eager_storm, captured(eager_storm),
                                                     max(3, args.rounds // 2))),
    ]
    print(f"watch() overhead, median of {args.rounds} interleaved rounds "
          f"(cpu count {os.cpu_count()}, load {os.getloadavg()[0]:.1f})")
    print(f"{'workload':<38} {'plain':>10} {'watched':>10} {'ratio':>7}")
    for name, plain_s, watched_s, ratio in rows:
        print(f"{name:<38} {plain_s * 1e3:>8.1f}ms {watched_s * 1e3:>8.1f}ms {ratio:>6.2f}×")
    goal = rows[0][3]
    print(f"tf.function loop goal ≤ 1.20×: {'met' if goal <= 1.2 else 'NOT met'} ({goal:.2f}×)")


if __name__ == "__main__":
    main()
