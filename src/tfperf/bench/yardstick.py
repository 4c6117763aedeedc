"""A fixed piece of work timed in every round of a gated run: the machine's yardstick.

Two runs judged apart (``--save`` then ``--compare-to``) may meet different load: a CI job
that shares its runner, a burst of other work in the middle of one run. Each round of a
gated run times the yardstick beside the variants; dividing a variant's round by the
yardstick's round cancels what slowed both alike, the way interleaving with the baseline
does (``--interleave-with``, still the better way when the base revision is at hand).

The work is CPU-bound TensorFlow (small matmuls in a ``tf.function``, pinned to the CPU), or
a pure-Python loop when TensorFlow is not loaded. The gate divides by it only when neither
run saw a GPU: a variant bound by a GPU does not slow with CPU load as the yardstick does.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

NAME = "(yardstick)"


def make_yardstick() -> Callable[[], Any]:
    tf = sys.modules.get("tensorflow")
    if tf is None:
        def python_work() -> int:
            total = 0
            for i in range(20_000):
                total += i * i
            return total
        return python_work

    with tf.device("/CPU:0"):
        x = tf.random.stateless_normal([96, 96], seed=[1, 2])

    @tf.function
    def work(a: Any) -> Any:
        with tf.device("/CPU:0"):
            for _ in range(4):
                a = tf.tanh(tf.matmul(a, a) * 0.01)
        return a

    work(x)  # traced here, not in the first round

    def yardstick() -> Any:
        return work(x)
    return yardstick


__all__ = ["NAME", "make_yardstick"]
