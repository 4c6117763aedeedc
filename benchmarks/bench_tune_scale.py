"""tune's isolation and scale paths, measured: what a child process costs, what isolation adds
per candidate, how much two candidates measured at once on a shared CPU disturb each other,
what TensorFlow's thread-pool sizes do here, and the wall time of ``devices=2`` vs 1.

    PYTHONPATH=src python benchmarks/bench_tune_scale.py [--budget 60] [--case matmul_chain]
                                                         [--size full|small] [--skip-tune]

Every ratio is measured in one run of this script (children measured in alternating rounds,
one process at a time, unless the point is to run them at once).
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "tests" / "tune" / "cases"


def _case(name: str, size: str) -> tuple[Any, Any, Any]:
    """The case module (imported as tfperf imports user files), its baseline and inputs."""
    from tfperf.bench.declare import close_collector, open_collector
    from tfperf.core.usercode import import_file
    from tfperf.tune.inputs import as_args

    path = CASES / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"_size_{name}", path)
    assert spec and spec.loader
    sizes = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sizes)
    collector = open_collector()
    try:
        module = import_file(path, prefix="_tfperf_tune_")
    finally:
        close_collector(collector)
    module.SIZE.update(sizes.FULL if size == "full" else sizes.SMALL)
    base = next(v for v in collector.variants if v.baseline)
    return module, base.fn, as_args(collector.inputs[0]())


def _workers(iso: Any, n: int, source: str | None, threads: Any = None) -> list[Any]:
    from tfperf.tune.worker import Worker

    out = []
    for k in range(n):
        w = Worker({}, f"bench{k}")
        t0 = time.perf_counter()
        reply = w.call({**iso.load_spec, "source": source, "threads": threads,
                        "needs_gpu": False}, timeout=300)
        assert "exception" not in reply, reply
        w.start_s = time.perf_counter() - t0
        w.call({"op": "measure", "seconds": 0.5}, timeout=120)  # warm
        out.append(w)
    return out


def _measure(w: Any, seconds: float) -> float:
    return float(w.call({"op": "measure", "seconds": seconds}, timeout=120)["median_s"])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--case", default="matmul_chain")
    p.add_argument("--size", choices=["full", "small"], default="full")
    p.add_argument("--budget", type=float, default=60.0, help="tune's budget per tune run")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--skip-tune", action="store_true", help="only the child-level figures")
    p.add_argument("--tune-only", action="store_true", help="only the whole searches (4.)")
    p.add_argument("--show-tables", action="store_true", help="each search's table")
    args = p.parse_args(argv)

    from tfperf.core.tensorflow_logs import quiet_tensorflow_startup

    quiet_tensorflow_startup()
    import tensorflow  # noqa: F401

    from tfperf.bench.machine import machine_info, machine_line
    from tfperf.tune.device import DeviceFacts
    from tfperf.tune.isolate import Isolation
    from tfperf.tune.levers.threads import cores
    from tfperf.tune.source import set_tf_function
    from tfperf.tune.target import Target

    print(f"machine: {machine_line(machine_info())}; {cores()} cores for this process")
    _module, fn, (a, kw) = _case(args.case, args.size)
    target = Target.from_function(fn, a, kw)
    work = Path(tempfile.mkdtemp(prefix="tfperf-bench-scale-"))
    iso = Isolation(target, DeviceFacts(), work)
    graph = set_tf_function(target.source, target.name, {})

    try:
        if not args.tune_only:
            _children(args, iso, graph)
        if not args.skip_tune:
            _searches(args, fn, a, kw)
    finally:
        iso.close()  # its pool, and the work folder with the shipped inputs
    return 0


def _children(args: Any, iso: Any, graph: str) -> None:
    from tfperf.core.measure import format_seconds
    from tfperf.tune.levers.threads import cores, settings

    # 1. A child's start: Python, TensorFlow, the user's module, the candidate built.
    ws = _workers(iso, 3, graph)
    starts = [w.start_s for w in ws]
    print(f"\n1. child start-up (spawn + import TF + module + build), 3 children: "
          f"median {statistics.median(starts):.2f} s (min {min(starts):.2f}, max "
          f"{max(starts):.2f})")

    # 2. Two candidates measured at once on the shared CPU vs one at a time.
    alone, together = [], []
    for _ in range(args.rounds):
        alone.append([_measure(w, 1.0) for w in ws[:2]])
        got: list[float] = [0.0, 0.0]

        def run(k: int, got: list[float] = got) -> None:
            got[k] = _measure(ws[k], 1.0)

        threads = [threading.Thread(target=run, args=(k,)) for k in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        together.append(got)
    ratio = [t[k] / a_[k] for a_, t in zip(alone, together, strict=True) for k in range(2)]
    print(f"2. two processes measuring at once vs one at a time ({args.rounds} rounds × 2): "
          f"per-call time ×{statistics.median(ratio):.2f} median (range "
          f"{min(ratio):.2f}–{max(ratio):.2f}); alone "
          f"{format_seconds(statistics.median(x for r in alone for x in r))}")
    same = [r[1] / r[0] for r in alone]
    print(f"   the same candidate in two processes, each alone: second/first ×"
          f"{statistics.median(same):.2f} median (range {min(same):.2f}–{max(same):.2f})")
    for w in ws:
        w.close()

    # 3. Thread-pool sizes, one process each, alternating rounds against the default.
    sizes: list[Any] = [None, *settings(cores())]
    pool = [_workers(iso, 1, graph, threads=s)[0] for s in sizes]
    medians: dict[int, list[float]] = {k: [] for k in range(len(sizes))}
    for _ in range(args.rounds):
        for k, w in enumerate(pool):
            medians[k].append(_measure(w, 0.5))
    print("3. thread pools (tf.function of the case; alternating rounds):")
    for k, s in enumerate(sizes):
        name = "TF default" if s is None else f"intra_op {s[0]}, inter_op {s[1]}"
        rel = statistics.median(b / c for b, c in zip(medians[0], medians[k], strict=True))
        print(f"   {name:<24} {format_seconds(statistics.median(medians[k])):>9}  "
              f"speedup vs default ×{rel:.2f}")
    for w in pool:
        w.close()


def _searches(args: Any, fn: Any, a: Any, kw: Any) -> None:
    from tfperf.tune import tune

    print(f"\n4. whole searches, budget {args.budget:g} s (discovered levers):")
    for label, kw_ in (("in-process", {}), ("isolate", {"isolate": True}),
                       ("isolate, devices=2", {"devices": 2})):
        t0 = time.perf_counter()
        r = tune(fn, a, kw, budget=args.budget, **kw_)
        wall = time.perf_counter() - t0
        ran = [c for c in r.candidates if c.first_call_s is not None]
        best = r.best
        print(f"   {label:<20} wall {wall:5.1f} s, {len(ran)} candidates run "
              f"({wall / max(1, len(ran) + 1):.2f} s each, baseline included); pick: "
              f"{best.name if best else None} "
              f"×{best.speedup if best and best.speedup else 0:.2f}; control: "
              f"{r.device.get('isolation', {}).get('control', '-')}")
        if args.show_tables:
            print(r.table())


if __name__ == "__main__":
    raise SystemExit(main())
