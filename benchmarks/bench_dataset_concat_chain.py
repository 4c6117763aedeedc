"""What TFP606 claims: a tf.data pipeline grown with `concatenate` once per file in a Python
loop against one flat pipeline over a dataset of the same sources.

    python benchmarks/bench_dataset_concat_chain.py [--sources 300] [--elements 50] [--rounds 5]

Each source stands for one file: a small `Dataset.range`. The chain is built the way the
loop builds it (`ds = part if ds is None else ds.concatenate(part)`); the flat pipeline is
`Dataset.range(sources).flat_map(...)`, which reads the same elements in the same order.
Prints the median seconds to build each pipeline and to iterate it once, and the ratios
chain / flat measured in the same run (rounds interleaved, so machine load hits both alike).
Asserts that both yield the same elements.
"""

from __future__ import annotations

import argparse
import statistics
import time


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sources", type=int, default=300, help="datasets (files) joined")
    p.add_argument("--elements", type=int, default=50, help="elements in each source")
    p.add_argument("--rounds", type=int, default=5)
    args = p.parse_args()

    import tensorflow as tf

    n, k = args.sources, args.elements

    def source(i):
        return tf.data.Dataset.range(k).map(lambda x: x + i * k)

    def chain():
        ds = None
        for i in range(n):
            part = source(i)
            ds = part if ds is None else ds.concatenate(part)
        return ds

    def flat():
        return tf.data.Dataset.range(n).flat_map(source)

    def drain(ds):
        total = 0
        for x in ds.as_numpy_iterator():
            total += int(x)
        return total

    expected = sum(range(n * k))
    assert drain(chain()) == expected and drain(flat()) == expected
    build: dict[str, list[float]] = {"chain": [], "flat": []}
    read: dict[str, list[float]] = {"chain": [], "flat": []}
    for _ in range(args.rounds):
        for name, make in (("chain", chain), ("flat", flat)):
            start = time.perf_counter()
            ds = make()
            built = time.perf_counter()
            drain(ds)
            build[name].append(built - start)
            read[name].append(time.perf_counter() - built)
    for name in ("chain", "flat"):
        print(f"{name:<6} build median {statistics.median(build[name]):8.3f} s   "
              f"iterate median {statistics.median(read[name]):8.3f} s   "
              f"({n} sources x {k} elements)")
    for what, table in (("build", build), ("iterate", read)):
        ratio = statistics.median(table["chain"]) / statistics.median(table["flat"])
        print(f"{what}: chain / flat = {ratio:.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
