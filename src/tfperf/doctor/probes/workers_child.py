"""Runs inside the workers subprocess of ``tfperf doctor --workers``: one worker of the check.

Every worker of the cluster runs this (through ``tfperf doctor --workers``) with the same
cluster and its own index; ``TF_CONFIG`` comes from the parent. Stages, as the devices child:
``join`` (``MultiWorkerMirroredStrategy`` waits for every worker: a worker that never comes
hangs here, and the parent's deadline turns that into a verdict), ``fingerprint`` (each
worker's TF/CUDA/cuDNN/Python fingerprint, all-gathered as hashes so every worker sees who
differs), ``allreduce`` (known values, exact sum on every worker), ``bandwidth`` and
``compare`` (every worker's sweep times, all-gathered: each report compares the workers).
"""

from __future__ import annotations

import argparse
import platform
import sys
import zlib
from typing import Any

from tfperf.doctor.probes.devices_child import run_stage

FIELDS = ("tf_version", "cuda_version", "cudnn_version", "python", "machine")


def fingerprint(tf: Any) -> dict[str, str]:
    build = dict(tf.sysconfig.get_build_info())
    return {"tf_version": tf.__version__,
            "cuda_version": str(build.get("cuda_version", "none")),
            "cudnn_version": str(build.get("cudnn_version", "none")),
            "python": platform.python_version(), "machine": platform.machine()}


def _hashes(values: dict[str, str]) -> list[int]:
    return [zlib.crc32(values[k].encode()) for k in FIELDS]


def gather_fingerprints(tf: Any, strat: Any, mine: dict[str, str]) -> dict[str, Any]:
    """Every worker's fingerprint hashes, by worker index, through an all-gather."""
    local = tf.constant([_hashes(mine)], tf.int64)

    @tf.function
    def gather() -> Any:
        return strat.run(lambda: tf.distribute.get_replica_context().all_gather(local, 0))

    rows = strat.experimental_local_results(gather())[0].numpy().tolist()
    return {"fields": list(FIELDS), "mine": mine, "my_hashes": _hashes(mine),
            "workers": rows}


def allreduce_known(tf: Any, strat: Any, index: int, workers: int) -> dict[str, Any]:
    """Worker i contributes (i + 1) × [1, 2, 3, 4]; the exact sum must come back."""
    from tfperf.doctor.collectives import KNOWN

    mine = tf.constant(KNOWN) * float(index + 1)

    @tf.function
    def reduce() -> Any:
        return strat.run(lambda: tf.distribute.get_replica_context().all_reduce(
            tf.distribute.ReduceOp.SUM, mine))

    got = strat.experimental_local_results(reduce())[0].numpy().tolist()
    return {"expected": [v * workers * (workers + 1) / 2 for v in KNOWN], "value": got,
            "worker": index}


def gather_sweeps(tf: Any, strat: Any, sweep: list[dict[str, Any]]) -> dict[str, Any]:
    """Every worker's sweep times (seconds per message size), through an all-gather, so that
    each worker's report compares every worker's view of the ring, not only its own."""
    local = tf.constant([[float(p["seconds"]) for p in sweep]], tf.float64)

    @tf.function
    def gather() -> Any:
        return strat.run(lambda: tf.distribute.get_replica_context().all_gather(local, 0))

    rows = strat.experimental_local_results(gather())[0].numpy().tolist()
    return {"bytes": [p["bytes"] for p in sweep], "seconds": rows}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="workers_child")
    parser.add_argument("--index", type=int, required=True)
    parser.add_argument("--workers", type=int, required=True)
    parser.add_argument("--max-bytes", type=int, default=4 * 2**20)
    args = parser.parse_args(argv)
    import tensorflow as tf

    from tfperf.doctor import collectives as C

    mine = run_stage("setup", lambda: fingerprint(tf))
    strat = run_stage("join", lambda: tf.distribute.MultiWorkerMirroredStrategy(),
                      report=False)
    if strat is None or mine is None:
        return 1
    run_stage("fingerprint", lambda: gather_fingerprints(tf, strat, mine))
    run_stage("allreduce", lambda: allreduce_known(tf, strat, args.index, args.workers))
    if args.max_bytes:
        sizes = C.message_sizes(args.max_bytes)
        sweep = run_stage("bandwidth",
                          lambda: C.allreduce_sweep(tf, strat, sizes, fixed_runs=5))
        if sweep:  # every worker has a sweep of the same sizes, or none got this far
            run_stage("compare", lambda: gather_sweeps(tf, strat, sweep))
    return 0


if __name__ == "__main__":
    sys.exit(main())
