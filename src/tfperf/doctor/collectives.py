"""Collective workloads of ``tfperf doctor --devices``: run inside the devices child process.

Everything here uses TensorFlow's own distributed machinery, never a home-made one:
``tf.distribute.MirroredStrategy`` over the visible GPUs, or over logical CPU devices
(``tf.config.set_logical_device_configuration``) when there is no GPU, and each
``cross_device_ops`` TF offers for that strategy. Each workload receives the imported ``tf``
module and returns plain dicts; judging them is :mod:`tfperf.doctor.collective_checks`'s job,
so tests feed the verdicts machines (8 GPUs on NVLink) this one is not.

A *plant* (tests only) makes one replica misbehave in a known way, so the checks can be seen
to catch it: ``{"replica": 1, "add": 1.0}`` adds a constant to replica 1's all-reduce result,
``{"replica": 1, "hang": true}`` makes replica 1 never join the all-reduce; ``"ops": NAME``
limits either to one cross_device_ops.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Mapping
from typing import Any

# Message sizes of the bandwidth sweep, as nccl-tests' -b 8 -e 128M -f 8.
MIN_BYTES = 8
SIZE_FACTOR = 8
GPU_MAX_BYTES = 128 * 2**20
CPU_MAX_BYTES = 16 * 2**20  # logical CPU devices share one memory: larger says nothing new
POINT_BUDGET_S = 0.15  # measure()'s budget per (cross_device_ops, size) point
STRAGGLER_MATMUL = {"GPU": 2048, "CPU": 256}


def message_sizes(max_bytes: int) -> list[int]:
    """8 B, 64 B, … up to ``max_bytes`` (float32 elements, so multiples of 4)."""
    sizes, size = [], MIN_BYTES
    while size <= max_bytes:
        sizes.append(size)
        size *= SIZE_FACTOR
    return sizes


def setup_devices(tf: Any, logical_cpus: int) -> dict[str, Any]:
    """The devices the strategy spans: every visible GPU, else ``logical_cpus`` CPU devices.

    Must run before anything initialises TF's runtime (logical devices are fixed then).
    """
    gpus = tf.config.list_physical_devices("GPU")
    if gpus:
        for gpu in gpus:  # allocate as needed: the sweep must not take all memory at once
            with contextlib.suppress(RuntimeError, ValueError):
                tf.config.experimental.set_memory_growth(gpu, True)
        kind, names = "GPU", [d.name for d in tf.config.list_logical_devices("GPU")]
    else:
        cpu = tf.config.list_physical_devices("CPU")[0]
        tf.config.set_logical_device_configuration(
            cpu, [tf.config.LogicalDeviceConfiguration() for _ in range(logical_cpus)])
        kind, names = "CPU", [d.name for d in tf.config.list_logical_devices("CPU")]
    return {"device_type": kind, "devices": names, "tf_version": tf.__version__}


def cross_device_ops_choices(tf: Any, device_type: str) -> dict[str, Callable[[], Any]]:
    """Each ``cross_device_ops`` TF offers here; ``default`` is what MirroredStrategy picks."""
    choices: dict[str, Callable[[], Any]] = {
        "default": lambda: None,
        "ReductionToOneDevice": tf.distribute.ReductionToOneDevice,
        "HierarchicalCopyAllReduce": tf.distribute.HierarchicalCopyAllReduce,
    }
    if device_type == "GPU":  # NCCL has GPU kernels only
        choices["NcclAllReduce"] = tf.distribute.NcclAllReduce
    return choices


def strategy(tf: Any, devices: list[str], ops: Any = None) -> Any:
    return tf.distribute.MirroredStrategy(devices, cross_device_ops=ops)


def default_ops_name(strat: Any) -> str:
    """The class of the cross_device_ops MirroredStrategy chose by itself."""
    chosen = getattr(strat.extended, "_cross_device_ops", None)
    return type(chosen).__name__ if chosen is not None else "unknown"


def check_replicas(tf: Any, devices: list[str]) -> dict[str, Any]:
    """Every replica's own output lands on its own device (run eagerly: placement is real)."""
    strat = strategy(tf, devices)

    def body() -> Any:
        ctx = tf.distribute.get_replica_context()
        return tf.identity(tf.cast(ctx.replica_id_in_sync_group, tf.float32))

    out = strat.experimental_local_results(strat.run(body))
    expected = list(strat.extended.worker_devices)
    replicas = [{"replica": i, "expected": expected[i], "seen": t.device,
                 "replica_id": int(t.numpy())} for i, t in enumerate(out)]
    return {"replicas": replicas, "num_replicas": strat.num_replicas_in_sync,
            "default_ops": default_ops_name(strat)}


# Replica r contributes (r + 1) * [1, 2, 3, 4]: small integers, exact in float32, so the sum
# (n(n+1)/2) * [1, 2, 3, 4] must come back bit for bit on every replica.
KNOWN = (1.0, 2.0, 3.0, 4.0)


def _planted(tf: Any, plant: Mapping[str, Any] | None, ops_name: str, replica: Any,
             value: Any) -> Any:
    if not plant or "add" not in plant or plant.get("ops", ops_name) != ops_name:
        return value
    return value + tf.where(tf.equal(replica, int(plant["replica"])),
                            float(plant["add"]), 0.0)


def check_allreduce(tf: Any, strat: Any, ops_name: str,
                    plant: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """All-reduce (SUM) of known values through one cross_device_ops: each replica's result.

    The sweep must reuse ``strat``: two strategies in one process hand out the same
    collective instance keys, and TF aborts every later collective on the clash.
    """
    n = strat.num_replicas_in_sync
    known = tf.constant(KNOWN)

    def body() -> Any:
        ctx = tf.distribute.get_replica_context()
        rid = ctx.replica_id_in_sync_group
        # a replica that never joins: its thread waits while the others sit in the
        # collective (traced once per replica, so only the planted one sleeps)
        if plant and plant.get("hang") and ops_name == plant.get("ops", ops_name) \
                and _static_replica_id(ctx) == int(plant["replica"]):
            time.sleep(10**6)
        mine = known * tf.cast(rid + 1, tf.float32)
        total = ctx.all_reduce(tf.distribute.ReduceOp.SUM, mine)
        return _planted(tf, plant, ops_name, rid, total)

    results = strat.experimental_local_results(tf.function(lambda: strat.run(body))())
    expected = [v * n * (n + 1) / 2 for v in KNOWN]
    return {"ops": ops_name, "num_replicas": n, "expected": expected,
            "replicas": [{"replica": i, "value": [float(x) for x in t.numpy()]}
                         for i, t in enumerate(results)]}


def _static_replica_id(ctx: Any) -> int:
    """The replica's index as a Python int while tracing (the tensor one is symbolic)."""
    value = ctx.replica_id_in_sync_group
    try:
        from tensorflow.python.framework import tensor_util

        got = tensor_util.constant_value(value)
        return int(got) if got is not None else -1
    except Exception:  # a TF without that helper: plant on nothing rather than crash
        return -1


def allreduce_sweep(tf: Any, strat: Any, sizes: list[int],
                    fixed_runs: int | None = None) -> list[dict[str, Any]]:
    """Time one all-reduce per message size through the one timer (``core.measure``).

    Across workers every process must issue the same collectives in the same order, so an
    adaptive number of calls (``measure``) would pair one worker's 64 B all-reduce with
    another's 512 B one and abort; ``fixed_runs`` times that many single calls instead
    (with ``Timer``, after the first call).
    """
    from tfperf.core.measure import Timer, measure

    points = []
    for size in sizes:
        elems = max(size // 4, 1)

        # the message is made on each replica's own device inside the step (a fill costs a
        # memory write, far below the link's time), so nothing is copied in from device 0
        @tf.function
        def reduce(e: int = elems) -> Any:
            return strat.run(lambda: tf.distribute.get_replica_context().all_reduce(
                tf.distribute.ReduceOp.SUM, tf.ones([e], tf.float32)))

        if fixed_runs:
            timer = Timer(reduce)
            timer.first_call()
            times = sorted(timer.block(1) for _ in range(fixed_runs))
            points.append({"bytes": elems * 4, "seconds": times[len(times) // 2],
                           "runs": fixed_runs, "rel_iqr": None})
            continue
        m = measure(reduce, warmup=0.0, min_runs=3, max_time=POINT_BUDGET_S,
                    label=f"all-reduce {size} B")
        points.append({"bytes": elems * 4, "seconds": m.median, "runs": m.runs,
                       "rel_iqr": m.rel_iqr if m.runs > 1 else None})
    return points


def per_device(tf: Any, devices: list[str], device_type: str) -> list[dict[str, Any]]:
    """Each device alone: a fixed matmul's time and, for GPUs, copy bandwidth from device 0."""
    from tfperf.core.measure import measure

    n = STRAGGLER_MATMUL.get(device_type, 256)
    out = []
    with tf.device(devices[0]):
        payload = tf.ones([GPU_MAX_BYTES // 16 // 4 if device_type == "GPU" else 1024])
    for name in devices:
        with tf.device(name):
            a = tf.ones([n, n])
            mm = measure(tf.matmul, args=(a, a), warmup=0.0, min_runs=3,
                         max_time=POINT_BUDGET_S, label=f"matmul {name}")
        row: dict[str, Any] = {"device": name, "matmul_n": n, "matmul_s": mm.median}
        if device_type == "GPU" and name != devices[0]:
            def copy(x: Any, where: str = name) -> Any:
                with tf.device(where):
                    return tf.identity(x)
            cp = measure(copy, args=(payload,), warmup=0.0, min_runs=3,
                         max_time=POINT_BUDGET_S, label=f"copy to {name}")
            row["copy_bytes"] = int(payload.shape[0]) * 4
            row["copy_s"] = cp.median
        out.append(row)
    return out
