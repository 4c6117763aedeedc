"""One capture of XLA-compiled functions whose main op is a dot or a convolution:
`python make_xla_capture.py LOGDIR` (tests/roofline/test_roofline_vs_xla.py)."""

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf
from xla_cases import XLA_CASES

fns = {name: tf.function(fn, jit_compile=True) for name, (fn, _) in XLA_CASES.items()}
args = {name: make() for name, (_, make) in XLA_CASES.items()}
for name, fn in fns.items():
    fn(*args[name])
tf.profiler.experimental.start(sys.argv[1])
for _ in range(2):
    for name, fn in fns.items():
        fn(*args[name])
tf.profiler.experimental.stop()
print("ok")
