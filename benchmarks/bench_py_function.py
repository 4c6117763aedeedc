"""What TFP205 claims: `tf.numpy_function` against `tf.py_function` for a Python function that
only wants NumPy arrays (it converts every input with `.numpy()`).

    python benchmarks/bench_py_function.py [--inputs 8] [--calls 500] [--rounds 7]

Prints the median microseconds per call of each, called eagerly and from a `tf.function`,
and the ratio py_function / numpy_function measured in the same run (rounds interleaved, so
machine load hits both alike).
"""

from __future__ import annotations

import argparse
import statistics
import time


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--inputs", type=int, default=8, help="tensors handed to the function")
    p.add_argument("--calls", type=int, default=500)
    p.add_argument("--rounds", type=int, default=7)
    args = p.parse_args()

    import tensorflow as tf

    def wants_numpy(*arrays):  # what py_function's user writes
        return sum(a.numpy() for a in arrays)

    def gets_numpy(*arrays):  # the same for numpy_function
        return sum(arrays)

    xs = [tf.random.stateless_uniform([4], seed=[i, 1]) for i in range(args.inputs)]

    def eager_py():
        return tf.py_function(wants_numpy, xs, tf.float32)

    def eager_np():
        return tf.numpy_function(gets_numpy, xs, tf.float32)

    graph_py = tf.function(eager_py)
    graph_np = tf.function(eager_np)
    cases = {"eager py_function": eager_py, "eager numpy_function": eager_np,
             "tf.function py_function": graph_py, "tf.function numpy_function": graph_np}
    for fn in cases.values():
        assert float(tf.reduce_sum(fn())) == float(tf.reduce_sum(cases["eager py_function"]()))
    times: dict[str, list[float]] = {k: [] for k in cases}
    for _ in range(args.rounds):
        for name, fn in cases.items():
            start = time.perf_counter()
            for _ in range(args.calls):
                fn()
            times[name].append((time.perf_counter() - start) / args.calls * 1e6)
    med = {k: statistics.median(v) for k, v in times.items()}
    for name, m in med.items():
        print(f"{name:<28} median {m:9.1f} us/call")
    for mode in ("eager", "tf.function"):
        ratio = med[f"{mode} py_function"] / med[f"{mode} numpy_function"]
        print(f"{mode}: py_function / numpy_function = {ratio:.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
