"""TFP704's cost against the size of a TF1 file: linear, not quadratic.

    python benchmarks/bench_lint_session_updates.py [--sizes 250,500,1000,2000]

Generates TF1 modules of our own (a chain of ``tf.group`` ops, each holding the next one,
written in reverse order, down to an ``opt.minimize`` update; a training loop with one
``sess.run`` per op, each fed a host value computed from the previous run's result), lints
each with TFP704 alone in this process, and prints the CPU seconds per size and per 1,000
lines. The update search and the fed-from-an-earlier-run search were fixed points that
re-walked every assignment per pass: 42 s of CPU on the 2,000-line file before stop 40.
Printed, not asserted (a busy machine's timings are no test).
"""

from __future__ import annotations

import argparse
import sys
import time


def generated(n: int) -> str:
    lines = ["import numpy as np", "import tensorflow as tf", "sess = tf.Session()",
             "x = tf.placeholder(tf.float32)", "opt = tf.train.AdamOptimizer()"]
    lines += [f"op_{i} = tf.group(op_{i + 1}, x)" for i in range(n)]
    lines += [f"op_{n} = opt.minimize(tf.reduce_sum(x))", "for step in range(1000):",
              "    a_0 = 0"]
    for i in range(n // 2):
        lines += [f"    r_{i} = sess.run(op_{i}, feed_dict={{x: a_{i}}})",
                  f"    a_{i + 1} = np.sum(r_{i})"]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="250,500,1000,2000",
                    help="ops in the chain (the file has about twice as many lines)")
    args = ap.parse_args(argv)
    from tfperf.lint import registry
    from tfperf.lint.engine import lint_source

    rule = registry.get("TFP704")
    print("lines  cpu_s  cpu_s_per_1000_lines  findings")
    for n in (int(s) for s in args.sizes.split(",")):
        source = generated(n)
        t0 = time.process_time()
        found = lint_source(source, "generated.py", rules=[rule])
        cpu = time.process_time() - t0
        lines = source.count("\n")
        print(f"{lines:5d}  {cpu:5.2f}  {cpu / lines * 1000:20.3f}  {len(found)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
