"""What ``%tftimeit`` costs against a bare ``%timeit`` of the same statement, in one run.

    .venv/bin/python benchmarks/bench_magics.py

In one IPython ``InteractiveShell`` (the one the tests drive), for a plain Python
expression, an eager TensorFlow op and a ``tf.function`` call, prints:

* the per-call time each magic reports (``%timeit``: its mean per loop of the best setup;
  ``%tftimeit``: its median) and their ratio: what tfperf's statement wrapper, device sync
  and block timing add to, or take from, a per-call figure;
* the wall seconds each magic takes to answer, and their ratio: what the first call timed
  apart, the warm-up and the adaptive runs cost the user in waiting.

The two magics run back to back, alternating which goes first, so machine load hits both.
Asserts nothing; the figures go in docs/notebooks.md.
"""

from __future__ import annotations

import time

from IPython.core.interactiveshell import InteractiveShell

SETUP = """\
import tensorflow as tf
a = tf.random.normal([64, 64]); b = tf.random.normal([64, 64])
matmul = tf.function(lambda x, y: tf.matmul(x, y))
matmul(a, b)
xs = list(range(100))
"""
STATEMENTS = {
    "python: sum(xs)": "sum(xs)",
    "eager op: tf.add(a, b)": "tf.add(a, b)",
    "tf.function: matmul(a, b)": "matmul(a, b)",
}


def _timed(shell: InteractiveShell, line: str) -> tuple[object, float]:
    start = time.perf_counter()
    result = shell.run_line_magic(*line.split(" ", 1))
    return result, time.perf_counter() - start


def main() -> None:
    shell = InteractiveShell.instance()
    shell.run_cell("%load_ext tfperf")
    shell.run_cell(SETUP)
    print(f"{'statement':28} {'%timeit':>10} {'%tftimeit':>10} {'ratio':>6}   "
          f"{'wall %timeit':>12} {'wall %tftimeit':>14} {'ratio':>6}")
    for i, (label, stmt) in enumerate(STATEMENTS.items()):
        order = ["timeit", "tftimeit"] if i % 2 == 0 else ["tftimeit", "timeit"]
        got: dict[str, tuple[float, float]] = {}
        for magic in order:
            result, wall = _timed(shell, f"{magic} -q -o {stmt}")
            per_call = result.average if magic == "timeit" else result.median  # type: ignore
            got[magic] = (per_call, wall)
        (t, tw), (f, fw) = got["timeit"], got["tftimeit"]
        print(f"{label:28} {t * 1e6:8.2f}µs {f * 1e6:8.2f}µs {f / t:5.2f}×   "
              f"{tw:10.2f} s {fw:12.2f} s {fw / tw:5.2f}×")


if __name__ == "__main__":
    main()
