"""Figures the measurement core promises, measured in one run (the machine may be noisy).

1. Harness overhead per timed call: a no-op callable through ``Timer.block`` (what
   ``measure``/``compare`` time), against a bare ``for`` loop of the same calls; in µs.
2. Stability: the same comparison (the case study's vectorised vs einsum on [64,500,128])
   repeated 5 times; the coefficient of variation of the measured ratio.
3. The article suite's table (``--quick`` unless ``--full``).

Usage: python benchmarks/bench_measure_overhead.py [--full] [--no-suite]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time


def overhead_us() -> dict[str, float]:
    from tfperf.core.measure import Timer, measure

    def noop() -> None:
        return None

    bare, timed = [], []
    timer = Timer(noop)
    for _ in range(15):
        n = 100_000
        t0 = time.perf_counter()
        for _ in range(n):
            noop()
        bare.append((time.perf_counter() - t0) / n)
        timed.append(timer.block(n))
    # One call per block: the clock read and the sync check around a single call.
    single = [Timer(noop).block(1) for _ in range(2000)]
    m = measure(noop, max_time=1.0)
    return {
        "bare_call_us": statistics.median(bare) * 1e6,
        "timed_call_in_block_us": statistics.median(timed) * 1e6,
        "overhead_per_call_in_block_us": (statistics.median(timed) - statistics.median(bare)) * 1e6,
        "single_call_block_us": statistics.median(single) * 1e6,
        "measure_noop_median_us": m.median * 1e6,
    }


def ratio_spread(repeats: int = 5) -> dict[str, float]:
    import tensorflow as tf

    from tfperf.bench import compare
    from tfperf.examples.case_study_fixed import compute_feature_tf_einsum, compute_feature_tf_vec

    g = tf.random.Generator.from_seed(0)
    args = (g.normal([64, 500, 128]), g.normal([500]))
    ratios = []
    for _ in range(repeats):
        r = compare({"vectorised": compute_feature_tf_vec, "einsum": compute_feature_tf_einsum},
                    args, baseline="vectorised", budget=2.0)
        ratios.append(r["einsum"].ratio_to_baseline)
    mean = statistics.fmean(ratios)
    return {"ratios": ratios, "mean": mean, "cv": statistics.stdev(ratios) / mean}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true", help="the full suite, not --quick")
    ap.add_argument("--no-suite", action="store_true")
    args = ap.parse_args()
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    try:
        load = f"{os.getloadavg()[0]:.2f}"
    except OSError:
        load = "?"
    print(f"# bench_measure_overhead  ({os.cpu_count()} CPUs, load average {load}: "
          "figures are noisy on a shared machine; ratios matter)\n")
    o = overhead_us()
    print("1. harness overhead (no-op callable, medians of 15 blocks of 100 000 calls)")
    print(f"   bare Python call            {o['bare_call_us']:.3f} µs")
    print(f"   timed call inside a block   {o['timed_call_in_block_us']:.3f} µs")
    print(f"   overhead per timed call     {o['overhead_per_call_in_block_us']:.3f} µs")
    print(f"   a block of one call         {o['single_call_block_us']:.3f} µs "
          "(clock reads + sync check + GC pause)")
    print(f"   measure(noop) reports       {o['measure_noop_median_us']:.3f} µs")
    s = ratio_spread()
    from tfperf.core.measure import Timer

    # With TensorFlow imported, each sync asks TF whether eager execution is asynchronous.
    single_tf = sorted(Timer(lambda: None).block(1) for _ in range(2000))[1000] * 1e6
    print(f"   a block of one call, TF imported: {single_tf:.3f} µs (the sync's mode check)\n")
    print("2. the same comparison 5 times: einsum / vectorised time ratio on [64,500,128]")
    print("   ratios " + ", ".join(f"{x:.3f}" for x in s["ratios"]))
    print(f"   mean {s['mean']:.3f}, coefficient of variation {100 * s['cv']:.1f} %\n")
    if not args.no_suite:
        from tfperf.bench.suite.runner import run_suite

        t0 = time.perf_counter()
        suite = run_suite(quick=not args.full)
        print(f"3. the article suite ({'full' if args.full else '--quick'}, "
              f"{time.perf_counter() - t0:.0f} s)\n")
        print(suite.table())
    return 0


if __name__ == "__main__":
    sys.exit(main())
