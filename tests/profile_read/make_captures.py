"""Makes the real captures tests/profile_read reads: `python make_captures.py OUTDIR`.

Each capture is a TF profiler session of its own, in LOGDIR = OUTDIR/<name>:
graph (tf.function steps with step markers), xla (jit_compile steps), eager (no steps: eager
ops only), idle (start, then stop), input (a
tf.data pipeline slower than its step), eager_input (the same pipeline iterated by an eager
loop, its batches fetched outside the step markers, as tfperf's own markers of an eager
loop), eager_val (a prefetched eager train loop with a slow, unmarked validation loop
between epochs), retrace (a tf.function retraced by Python numbers),
tensorboard (events but no profile).
"""

import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf

out = sys.argv[1]
opts = tf.profiler.experimental.ProfilerOptions


def session(name, body, **options):
    logdir = os.path.join(out, name)
    tf.profiler.experimental.start(logdir, options=opts(**options) if options else None)
    try:
        body()
    finally:
        tf.profiler.experimental.stop()
    # No pause after it: a run folder is named by the second it starts, but each capture has
    # a LOGDIR of its own, so two in one second never share a folder (conftest.capture_file
    # finds exactly one per LOGDIR).


x = tf.random.normal([256, 512])
w = tf.random.normal([512, 512])


@tf.function
def step(x, w):
    y = tf.nn.relu(tf.matmul(x, w))
    return tf.nn.softmax(y), tf.reduce_sum(y, axis=1)


@tf.function(jit_compile=True)
def xla_step(x, w):
    y = tf.nn.relu(tf.matmul(x, w))
    return tf.nn.softmax(y), tf.reduce_sum(y, axis=1)


def graph_steps(fn):
    def body():
        for i in range(6):
            with tf.profiler.experimental.Trace("train", step_num=i, _r=1):
                fn(x, w)
    return body


def eager_ops():
    a = tf.random.normal([64, 64])
    for _ in range(20):
        a = tf.matmul(a, a) * 0.01


def slow_input():
    def slow(v):
        return tf.py_function(lambda t: (time.sleep(0.01), t)[1], [v], tf.float32)
    ds = tf.data.Dataset.range(8).map(lambda i: tf.cast(i, tf.float32)).map(slow)
    it = iter(ds)
    for i in range(6):
        with tf.profiler.experimental.Trace("train", step_num=i, _r=1):
            v = next(it)
            step(x * v, w)


def eager_loop_input():
    def slow(v):
        return tf.py_function(lambda t: (time.sleep(0.01), t)[1], [v], tf.float32)
    ds = tf.data.Dataset.range(8).map(lambda i: tf.cast(i, tf.float32)).map(slow)
    for i, v in enumerate(ds.take(6)):  # the fetch runs before the marker opens
        with tf.profiler.experimental.Trace("train", step_num=i, _r=1):
            step(x * v, w)


def eager_loop_with_validation():
    def slow(v):
        return tf.py_function(lambda t: (time.sleep(0.05), t)[1], [v], tf.float32)
    train = tf.data.Dataset.range(3).map(lambda i: tf.cast(i, tf.float32)).prefetch(3)
    val = tf.data.Dataset.range(3).map(lambda i: tf.cast(i, tf.float32)).map(slow)
    n = 0
    for _ in range(2):
        for v in train:  # marked: each step's batch fetched before its marker
            with tf.profiler.experimental.Trace("train", step_num=n, _r=1):
                step(x * v, w)
            n += 1
        for v in val:  # unmarked validation loop between epochs: fed no training step
            step(x * v, w)


@tf.function
def scaled(x, k):
    return x * k


def retraces():
    for i in range(6):
        with tf.profiler.experimental.Trace("train", step_num=i, _r=1):
            scaled(x, float(i))


step(x, w)
xla_step(x, w)
session("graph", graph_steps(step))
session("xla", graph_steps(xla_step))
session("eager", eager_ops)
session("idle", lambda: None)
session("input", slow_input)
session("eager_input", eager_loop_input)
session("eager_val", eager_loop_with_validation)
session("retrace", retraces)
# TensorBoard's event files are TFRecords; what matters here is a logdir that has them and no
# profile (the tensorboard package that tf.summary needs is not installed for the tests).
os.makedirs(os.path.join(out, "tensorboard", "train"))
with tf.io.TFRecordWriter(os.path.join(out, "tensorboard", "train",
                                       "events.out.tfevents.1.vm.1.v2")) as rec:
    rec.write(b"event")
print("ok")
