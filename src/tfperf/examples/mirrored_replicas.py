"""A ``MirroredStrategy`` training step in one process, with one replica slow on purpose.

Over the visible GPUs, else over ``--replicas`` logical CPU devices
(``set_logical_device_configuration``, as ``tfperf doctor --devices`` does). Each replica runs
a dense layer forward and backward and all-reduces its gradient; the replica whose
``replica_id_in_sync_group`` is ``--slow-replica`` does ``--extra`` more matmuls first, so
that ``tfperf profile`` can be seen to name it::

    tfperf profile src/tfperf/examples/mirrored_replicas.py -- --slow-replica 1
    tfperf profile tfperf.examples.mirrored_replicas:train_step \\
        --inputs tfperf.examples.mirrored_replicas:inputs      # TFPERF_SLOW_REPLICA=1

As a function target, the settings come from the environment (``TFPERF_REPLICAS``,
``TFPERF_SLOW_REPLICA``, ``TFPERF_EXTRA``), since ``--inputs`` takes no arguments.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from typing import Any

WIDTH = 256
BATCH = 64


@dataclass
class Job:
    strategy: Any
    step: Any  # tf.function(x) → the all-reduced gradient on every replica
    x: Any


_JOB: dict[str, Job] = {}


def build(replicas: int = 2, slow_replica: int = -1, extra: int = 6) -> Job:
    """Devices, strategy, weights and the step; the devices must be set up before TF's
    runtime starts, so the first call fixes them for the process."""
    import tensorflow as tf

    from tfperf.doctor.collectives import setup_devices

    if "strategy" not in _JOB:
        devices = setup_devices(tf, replicas)["devices"]
        strategy = tf.distribute.MirroredStrategy(devices)
        _JOB["strategy"] = Job(strategy, None, None)
    strategy = _JOB["strategy"].strategy
    with strategy.scope():
        w = tf.Variable(tf.random.stateless_normal([WIDTH, WIDTH], seed=[1, 2]) / WIDTH)
    x = tf.random.stateless_normal([BATCH, WIDTH], seed=[3, 4])

    def replica_step(x: Any) -> Any:
        ctx = tf.distribute.get_replica_context()
        with tf.GradientTape() as tape:
            y = tf.nn.relu(tf.matmul(x, w))
            if slow_replica >= 0:  # extra work on one replica only: a straggler
                def heavy() -> Any:
                    z = y
                    for _ in range(extra):
                        z = tf.nn.relu(tf.matmul(z, w))
                    return z
                y = tf.cond(tf.equal(ctx.replica_id_in_sync_group, slow_replica), heavy,
                            lambda: y)
            loss = tf.reduce_mean(tf.square(y))
        return ctx.all_reduce("sum", tape.gradient(loss, w))

    @tf.function
    def step(x: Any) -> Any:
        return strategy.run(replica_step, args=(x,))

    return Job(strategy, step, x)


def _env_job() -> Job:
    key = "env"
    if key not in _JOB:
        _JOB[key] = build(int(os.environ.get("TFPERF_REPLICAS", "2")),
                          int(os.environ.get("TFPERF_SLOW_REPLICA", "-1")),
                          int(os.environ.get("TFPERF_EXTRA", "6")))
    return _JOB[key]


def inputs() -> tuple[Any]:
    """``--inputs`` for :func:`train_step`."""
    return (_env_job().x,)


def train_step(x: Any) -> Any:
    """One step of the environment's job; returns every replica's result."""
    job = _env_job()
    return job.strategy.experimental_local_results(job.step(x))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mirrored_replicas")
    parser.add_argument("--replicas", type=int, default=2)
    parser.add_argument("--slow-replica", type=int, default=-1)
    parser.add_argument("--extra", type=int, default=6)
    parser.add_argument("--steps", type=int, default=5)
    args = parser.parse_args(argv)
    job = build(args.replicas, args.slow_replica, args.extra)
    for _ in range(args.steps):
        for value in job.strategy.experimental_local_results(job.step(job.x)):
            value.numpy()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
