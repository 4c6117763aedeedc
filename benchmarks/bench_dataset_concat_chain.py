"""What TFP606 claims: a tf.data pipeline grown with `concatenate` once per file in a Python
loop against one flat pipeline over a dataset of the same sources.

    python benchmarks/bench_dataset_concat_chain.py [--sources 100] [--elements 20] [--budget 10]

Each source stands for one file: a small `Dataset.range`. The chain is built the way the
loop builds it (`ds = part if ds is None else ds.concatenate(part)`); the flat pipeline is
`Dataset.range(sources).flat_map(...)`, which reads the same elements in the same order.
Two comparisons through tfperf's comparison core (interleaved rounds, medians, IQR, ratio
per round): building each pipeline, and building plus reading it once; the second checks
that both yield the same elements (their sum and count).
"""

from __future__ import annotations

import argparse
from typing import Any


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sources", type=int, default=100, help="datasets (files) joined")
    p.add_argument("--elements", type=int, default=20, help="elements in each source")
    p.add_argument("--budget", type=float, default=10.0, help="seconds of rounds per comparison")
    args = p.parse_args()

    import tensorflow as tf

    from tfperf.bench.comparison import compare

    n, k = args.sources, args.elements

    def source(i: Any) -> Any:
        return tf.data.Dataset.range(k).map(lambda x: x + i * k)

    def chain() -> Any:
        ds = None
        for i in range(n):
            part = source(i)
            ds = part if ds is None else ds.concatenate(part)
        return ds

    def flat() -> Any:
        return tf.data.Dataset.range(n).flat_map(source)

    def drain(ds: Any) -> tuple[int, int]:
        total = count = 0
        for x in ds.as_numpy_iterator():
            total += int(x)
            count += 1
        return total, count

    print(f"TensorFlow {tf.__version__}; {n} sources x {k} elements; "
          "ratio = chain / flat (above 1: the chain is slower)")
    # A chain takes seconds to build: timed like the rest (3 rounds at least), not as "slow".
    timing = {"baseline": "flat", "budget": args.budget, "min_rounds": 3,
              "slow_after": 120.0, "call_limit": 300.0}
    build = compare({"chain": chain, "flat": flat}, check_equivalence=False, **timing)
    full = compare({"chain": lambda: drain(chain()), "flat": lambda: drain(flat())}, **timing)
    for what, report in (("build", build), ("build + read once", full)):
        print(f"\n{what}:\n{report.table()}")
        times = {v.name: v.median_s for v in report.variants}
        if times.get("chain") and times.get("flat"):
            print(f"{what}: chain / flat = {times['chain'] / times['flat']:.1f}x (medians)")
    bad = [v.name for v in full.variants if v.equivalent is False]
    if bad:
        print(f"not the same elements: {', '.join(bad)}")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
