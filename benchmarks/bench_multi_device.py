"""Cost of the multi-device checks, and of a two-worker remote capture on the job it watches.

1. `tfperf doctor --devices` stages alone (the probe: a child process importing TF, building
   MirroredStrategy over 2 logical CPU devices here, or the GPUs): seconds without and with
   the bandwidth sweep, and the sweep's bus bandwidths at its largest message.
2. `tfperf profile --remote` against the bundled two-worker MultiWorkerMirroredStrategy job
   (`tfperf.examples.multi_worker_job`, two processes on localhost): the capture's wall time,
   and its overhead on the job's step time as a ratio in one run — the median step time of
   the steps that ran inside the capture window over that of the steps outside it, per worker
   (each worker logs every step's wall-clock start and duration).
3. Per-replica figures (`tfperf profile` under MirroredStrategy, 2 logical CPU devices, in
   this process, first, since logical devices must precede TF's runtime): the capture's
   overhead on the step as a ratio in one run (blocks of steps with and without a capture,
   interleaved, median of per-round ratios), the cost of the placement map (a fresh step's
   first call with TF's graph collection on and off, interleaved), the read-back time, and
   the replica figures of a balanced step and of one with replica 1 slowed.

Run: .venv/bin/python benchmarks/bench_multi_device.py [--max-message BYTES] [--duration-ms N]
     [--only devices|remote|replicas]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def bench_devices(max_bytes: int) -> None:
    from tfperf.doctor.collective_checks import device_findings
    from tfperf.doctor.probes.devices import probe_devices

    for bandwidth in (False, True):
        t0 = time.perf_counter()
        raw = probe_devices(timeout=300, max_bytes=max_bytes, bandwidth=bandwidth)
        wall = time.perf_counter() - t0
        what = "with bandwidth sweep" if bandwidth else "correctness only"
        print(f"doctor --devices ({what}): {wall:.1f} s wall, status {raw['status']}")
        for f in device_findings(raw, []):
            if f.code == "devices.bandwidth":
                print(f"  {f.message}")
                for name, points in f.data["sweeps"].items():
                    row = ", ".join(f"{p['bytes']} B {p['busbw_gbps']:.3g}" for p in points)
                    print(f"    {name}: busbw GB/s by size: {row}")


def _medians(log: Path, window: tuple[float, float]) -> tuple[float, float, int]:
    steps = json.loads(log.read_text())
    inside = [d for s, d in steps if window[0] <= s and s + d <= window[1]]
    outside = [d for s, d in steps[3:] if not window[0] - 0.5 <= s <= window[1] + 0.5]
    return statistics.median(inside), statistics.median(outside), len(inside)


def _traced_window(xplane: str) -> tuple[float, float] | None:
    """The wall-clock span the profiler really traced (its Task Environment plane)."""
    from tfperf.profile.xplane import load_xspace

    for plane in load_xspace(xplane).planes:
        if plane.name != "Task Environment":
            continue
        names = {k: m.name for k, m in plane.stat_metadata.items()}
        got = {names.get(s.metadata_id): s.uint64_value or s.int64_value for s in plane.stats}
        if got.get("profile_start_time") and got.get("profile_stop_time"):
            return got["profile_start_time"] / 1e9, got["profile_stop_time"] / 1e9
    return None


def bench_remote(duration_ms: int) -> None:
    import tensorflow  # noqa: F401  (imported before the window, not inside it)

    from tfperf.examples.multi_worker_job import LocalJob
    from tfperf.profile.remote import capture_remote

    with tempfile.TemporaryDirectory() as tmp:
        for attempt in range(3):
            with LocalJob(2, steps=3000, step_log_dir=tmp) as job:
                time.sleep(1.0)  # steps outside the window, before it
                t0 = time.time()
                report = capture_remote(job.profiler_addresses, duration_ms,
                                        logdir=Path(tmp) / "capture")
                t1 = time.time()
                finished = job.wait(timeout=120)
                crashed = job.crashed()
            if finished and not crashed:
                break
            print(f"attempt {attempt + 1}: a worker crashed during the capture "
                  f"(workers {crashed}); again")
        else:
            print("every attempt lost a worker: no overhead figure")
            return
        print(f"\nprofile --remote, 2 workers, {duration_ms} ms: {report.seconds:.2f} s for "
              f"the capture call ({t1 - t0:.2f} s wall, TF's client included)")
        for w in report.workers:
            print(f"  {w.address}: {w.steps} steps captured, step {w.step_s}, "
                  f"problem {w.problem}")
        for i in range(2):
            log = Path(tmp) / f"steps{i}.json"
            inside, outside, n = _medians(log, (t0, t1))
            print(f"  worker {i}: median step {outside * 1e3:.2f} ms outside the capture call, "
                  f"{inside * 1e3:.2f} ms during it ({n} steps): ratio {inside / outside:.2f}×")
            w = report.workers[i]
            window = _traced_window(w.xplane) if w.xplane else None
            if window:
                inside, outside, n = _medians(log, window)
                print(f"            while really tracing ({window[1] - window[0]:.2f} s, "
                      f"{n} steps): {inside * 1e3:.2f} ms: overhead ratio "
                      f"{inside / outside:.2f}×")


def bench_replicas(rounds: int = 15, block: int = 20) -> None:
    from tensorflow.python.eager import context

    from tfperf.core.measure import Timer
    from tfperf.examples.mirrored_replicas import build
    from tfperf.profile import profile, xplane
    from tfperf.profile.capture import Capture

    job = build(2)
    timer = Timer(lambda: job.strategy.experimental_local_results(job.step(job.x)))
    timer.first_call()
    timer.block(block)
    ratios, plain_s, captured_s, start_stop = [], [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(rounds):
            plain = timer.block(block)
            cap = Capture(Path(tmp) / f"r{r}")
            t0 = time.perf_counter()
            cap.start()
            t1 = time.perf_counter()
            captured = timer.block(block)
            t2 = time.perf_counter()
            cap.stop()
            start_stop.append((t1 - t0) + (time.perf_counter() - t2))
            ratios.append(captured / plain)
            plain_s.append(plain)
            captured_s.append(captured)
        t0 = time.perf_counter()
        summary = xplane.summarise(cap.xplane) if cap.xplane else None
        read_s = time.perf_counter() - t0
    print(f"\nMirroredStrategy step over 2 logical CPUs "
          f"({job.strategy.num_replicas_in_sync} replicas), {rounds} rounds of {block} steps:")
    print(f"  step {statistics.median(plain_s) * 1e3:.2f} ms plain, "
          f"{statistics.median(captured_s) * 1e3:.2f} ms while captured: overhead ratio "
          f"{statistics.median(ratios):.2f}× (median of per-round ratios; range "
          f"{min(ratios):.2f}–{max(ratios):.2f})")
    print(f"  profiler start + stop (writing the xplane.pb): "
          f"{statistics.median(start_stop) * 1e3:.0f} ms; reading a {block}-step capture back: "
          f"{read_s * 1e3:.0f} ms ({len(summary.op_events) if summary else 0} graph op events "
          f"in {summary.steps if summary else 0} steps)")
    firsts: dict[bool, list[float]] = {True: [], False: []}
    for _ in range(3):
        for on in (False, True):
            fresh = build(2)
            if on:
                context.context().enable_graph_collection()
            t0 = time.perf_counter()
            for v in fresh.strategy.experimental_local_results(fresh.step(fresh.x)):
                v.numpy()
            firsts[on].append(time.perf_counter() - t0)
            if on:
                from tfperf.profile.placement import run_metadata_devices

                t0 = time.perf_counter()
                nodes = run_metadata_devices(context.context().export_run_metadata())
                export_s = time.perf_counter() - t0
                context.context().disable_graph_collection()
    from tfperf.profile.placement import traced_devices

    t0 = time.perf_counter()
    traced = traced_devices(fresh.step)  # a function first seen warm: its traced graphs
    traced_s = time.perf_counter() - t0
    off, on_ = statistics.median(firsts[False]), statistics.median(firsts[True])
    print(f"  placement map: a fresh step's first call (trace + instantiate) {off * 1e3:.0f} ms "
          f"without, {on_ * 1e3:.0f} ms with graph collection: {on_ / off:.2f}×; export and "
          f"read {export_s * 1e3:.1f} ms for {len(nodes)} nodes; a function first run before "
          f"the watch: its traced graphs read in {traced_s * 1e3:.1f} ms ({len(traced)} nodes)")
    for slow in (-1, 1):
        fresh = build(2, slow_replica=slow)
        rep = profile(lambda fresh=fresh: fresh.strategy.experimental_local_results(
            fresh.step(fresh.x)), steps=5)
        split = rep.replicas
        if split is None:
            print(f"  slow replica {slow}: no split ({rep.capture_note})")
            continue
        rows = ", ".join(f"{r.device.rpartition('/device:')[2]} compute "
                         f"{r.compute_s * 1e3:.2f} ms collective {r.collective_s * 1e3:.2f} ms"
                         for r in split.replicas)
        what = "balanced step" if slow < 0 else f"replica {slow} slowed"
        verdict = [str(f.status) for f in rep.findings if f.code == "profile.replicas"]
        print(f"  {what}: step {(split.step_s or 0) * 1e3:.2f} ms; {rows}; slowest "
              f"{split.slowest.device.rpartition('/device:')[2]} at {split.ratio:.2f}× "
              f"the others; verdict {verdict}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--max-message", type=int, default=16 * 2**20)
    parser.add_argument("--duration-ms", type=int, default=2000)
    parser.add_argument("--only", choices=("devices", "remote", "replicas"))
    args = parser.parse_args()
    if args.only in (None, "replicas"):  # first: its logical devices precede TF's runtime
        bench_replicas()
    if args.only in (None, "devices"):
        bench_devices(args.max_message)
    if args.only in (None, "remote"):
        bench_remote(args.duration_ms)


if __name__ == "__main__":
    main()
