"""Runs inside the devices subprocess of ``tfperf doctor --devices``.

Started by :mod:`tfperf.doctor.probes.devices` as ``python -m tfperf.doctor.probes.devices_child``.
Speaks JSON lines on stdout like the TF child: ``{"kind": "start", "id": ...}`` before each
stage and ``{"kind": "result", "id": ..., "result": ...}`` (or ``"error"``) after it, flushed
one by one, so the parent keeps every stage that finished before a hang and can say which
stage hung (a collective that never completes is the classic multi-device failure).
"""

from __future__ import annotations

import argparse
import json
import sys
import traceback
from collections.abc import Callable
from functools import partial
from typing import Any


def _emit(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(obj, default=str) + "\n")
    sys.stdout.flush()


def run_stage(stage_id: str, work: Callable[[], Any], report: bool = True) -> Any:
    """Run one stage; ``report=False`` announces it (a hang still names it) but keeps its
    result (a strategy object) to this side."""
    _emit({"kind": "start", "id": stage_id})
    try:
        result = work()
    except Exception as exc:  # a stage that raises is a fact about this machine
        _emit({"kind": "result", "id": stage_id, "error": f"{type(exc).__name__}: {exc}",
               "traceback": traceback.format_exc(limit=4)})
        return None
    _emit({"kind": "result", "id": stage_id, "result": result if report else "ok"})
    return result


def _build(tf: Any, devices: list[str], make: Callable[[], Any]) -> Any:
    from tfperf.doctor.collectives import strategy

    return strategy(tf, devices, make())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="devices_child")
    parser.add_argument("--logical-cpus", type=int, default=2)
    parser.add_argument("--max-bytes", type=int, default=None)
    parser.add_argument("--no-bandwidth", action="store_true")
    parser.add_argument("--plant", default=None, help="JSON; tests only")
    args = parser.parse_args(argv)
    plant = json.loads(args.plant) if args.plant else None

    import tensorflow as tf

    from tfperf.doctor import collectives as C

    setup = run_stage("setup", lambda: C.setup_devices(tf, args.logical_cpus))
    if setup is None:
        return 1
    devices, kind = setup["devices"], setup["device_type"]
    if len(devices) < 2:
        return 0  # one GPU: nothing to reduce across; the checks say so
    run_stage("replicas", lambda: C.check_replicas(tf, devices))
    choices = C.cross_device_ops_choices(tf, kind)
    correct: dict[str, Any] = {}
    for name, make in choices.items():
        strat = run_stage(f"strategy.{name}", partial(_build, tf, devices, make),
                          report=False)
        if strat is not None and run_stage(f"allreduce.{name}", partial(
                C.check_allreduce, tf, strat, name, plant)) is not None:
            correct[name] = strat
    if not args.no_bandwidth:
        limit = args.max_bytes or (C.GPU_MAX_BYTES if kind == "GPU" else C.CPU_MAX_BYTES)
        sizes = C.message_sizes(limit)
        for name, strat in correct.items():
            run_stage(f"bandwidth.{name}", partial(C.allreduce_sweep, tf, strat, sizes))
        run_stage("per_device", lambda: C.per_device(tf, devices, kind))
    return 0


if __name__ == "__main__":
    sys.exit(main())
