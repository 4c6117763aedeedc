"""The article suite's S19 alone: what `prefetch` and `num_parallel_calls` buy a tf.data
pipeline under TF's defaults and with its `inject_prefetch` / `map_parallelization` rewrites
switched off — the figures the lint rules TFP601/TFP602 quote (docs/lint.md).

    PYTHONPATH=src python benchmarks/bench_s19_pipeline.py [--quick] [--json out.json]

Prints every variant's median epoch time, its speedup over the baseline (a sequential map, no
prefetch, both rewrites off), and the ratios the rules quote, all from one run.
"""

from __future__ import annotations

import argparse
import json
import sys


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="fewer images and rounds (CI size)")
    p.add_argument("--json", help="also write the claim's details here")
    args = p.parse_args()
    from tfperf.bench.suite.runner import run_suite

    suite = run_suite(quick=args.quick, only=["S19"])
    (claim,) = suite.claims
    import tensorflow as tf

    details = claim.details
    print(f"S19 on TF {tf.__version__}, {details.get('images')} images per epoch "
          f"({'quick' if args.quick else 'full'}); verdict: {claim.verdict} ({claim.reason})")
    speedups = details.get("speedups_over_none", {})
    for name, seconds in details.get("epoch_s", {}).items():
        s = speedups.get(name)
        print(f"  {name:58} {seconds if seconds is not None else float('nan'):8.3f} s"
              f"   {'baseline' if s is None else f'{s:5.2f}x'}")
    waits = details.get("epoch_s_accelerator_like_step", {})
    step = details.get("accelerator_like_step_s")
    print(f"the same pipelines feeding an accelerator-like step ({step} s wait per batch, "
          "cores idle):")
    for name, seconds in waits.items():
        print(f"  {name:58} {seconds if seconds is not None else float('nan'):8.3f} s")
    print("ratios the lint rules quote (time of the first over the second), "
          "conv step | accelerator-like step:")
    other = details.get("lint_accelerator_like_step", {})
    for key, value in details.get("lint", {}).items():
        second = other.get(key)
        print(f"  {key:58} {'-' if value is None else f'{value:5.2f}'} | "
              f"{'-' if second is None else f'{second:5.2f}'}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(claim.to_dict(), f, indent=1, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
