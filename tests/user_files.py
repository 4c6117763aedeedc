"""A user's files that the command-line tests at this level hand to tfperf (the bad-input
matrix, the base install without TensorFlow, --plot without matplotlib): written once here."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# A real TensorFlow log for `tfperf explain`: TF 2.5 on a CUDA 12 machine.
EXPLAIN_LOG = ROOT / "tests" / "doctor" / "fixtures" / "explain" / "tf25_on_cuda12.log"

# A bench file: its inputs and one baseline variant.
BENCH_FILE = """\
import tensorflow as tf
import tfperf

@tfperf.inputs
def make():
    return (tf.ones([4]),)

@tfperf.variant(baseline=True)
def plain(x):
    return x * 2.0
"""

# A Python loop over a tensor's rows, summed: lint's TFP101/TFP102 fire, and TFP102's
# (unsafe) fix applies.
SLOW_LOOP = """\
import tensorflow as tf

def f(x):
    acc = tf.zeros([4])
    for i in range(x.shape[0]):
        acc += x[i]
    return acc
"""
