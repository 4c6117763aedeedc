"""The memory view's figures: --fit's predicted peak against the measured one on five
models, the largest batch under a limit, and the time cost of the memory view.

* predict: for each model (a CNN, an LSTM, a Transformer block, an MLP with a 200k×64
  embedding, the article's case study) and batch, in a fresh process with the counting CPU
  allocator (TF_CPU_ALLOCATOR_USE_BFC=1): the peak predicted from the traced graph (nothing
  run), and the measured one: the highest of 5 steps' tensor peaks, from a capture begun
  before the model and its inputs exist (what every tensor asked for; the allocator's own
  peak, with BFC's rounding and unsplit chunks, printed beside it). Goal: within 15 %.
* largest: per model, a memory limit; the largest batch on the grid (1, 2, 3, 4, 6, 8, 12,
  16, 24, ...) predicted to fit, and the largest measured to fit (measured around the
  prediction; the peak grows with the batch). Goal: the measured one or the next smaller.
* xla: the same prediction under jit_compile=True (XLA's scheduled module) against XLA's
  measured peak.
* overhead: a training step of a few ms, timed plain and with the memory view's per-step
  work (a profiler capture with step markers, in rounds alternating with plain ones; the
  leak sampler's per-step read, timed on the same steps with and without it), in one
  process, each round's median step, median of per-round ratios over >= 5 rounds; the leak
  watch's two garbage-collector scans (once per run) timed apart. The counting allocator itself
  is timed against the default one in two processes run alternately.

Run: .venv/bin/python benchmarks/bench_memory.py [--only predict|largest|xla|overhead]
     [--models cnn,rnn,...] [--rounds N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
BATCHES = (64, 256)
LIMITS_MIB = {"cnn": 200, "rnn": 40, "transformer": 150, "embedding": 262, "case_study": 100}
MIB = 1 << 20


def _child(args: list[str], bfc: bool = True) -> dict:
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    if bfc:
        env["TF_CPU_ALLOCATOR_USE_BFC"] = "1"
    else:
        env.pop("TF_CPU_ALLOCATOR_USE_BFC", None)
    done = subprocess.run([sys.executable, __file__, "--child", *args], capture_output=True,
                          text=True, env=env, timeout=1800)
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-2000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


# -- in the child -------------------------------------------------------------------------


def child_measure(model: str, batch: int, xla: bool, predict_too: bool) -> dict:
    """Predicted, then measured from a capture that starts before the model and its inputs
    exist, so every tensor's allocation is an event and the tensor peak counts what each
    tensor asked for (BFC hands a 46.9 MiB input a 64 MiB chunk: the allocator's peak)."""
    from memory_models import build

    from tfperf.core.measure import sync
    from tfperf.memory.allocator import device_of
    from tfperf.memory.events import read_capture
    from tfperf.memory.fit import as_function, predict
    from tfperf.profile.capture import Capture, step

    out: dict = {"model": model, "batch": batch, "xla": xla}
    with tempfile.TemporaryDirectory() as logdir:
        cap = Capture(Path(logdir))
        cap.start()
        fn, args = build(model, batch)
        if predict_too:  # before anything runs, as --fit predicts
            p = predict(fn, args, {}, batch, xla=xla, n0=batch)
            out.update(predicted=p.peak_bytes, held=p.persistent_bytes + p.inputs_bytes,
                       transient=p.transient_bytes, error=p.error, unknown=p.unknown)
        runner = as_function(fn, xla)
        sync(runner(*args))  # warm-up: traces, optimizer slots, folded constants
        for i in range(5):
            with step(i):
                sync(runner(*args))
        cap.stop()
        mem = read_capture(cap.xplane)
    tensor, allocator = [], []
    level = 0
    events = iter(e for e in mem.events if device_of(e.allocator) == "CPU")
    pending = next(events, None)
    for w in mem.steps:
        top, alloc_top = 0, 0
        while pending is not None and pending.time_ps <= w.end_ps:
            level += pending.requested if pending.alloc else -pending.requested
            if pending.time_ps >= w.start_ps:
                top = max(top, level)
                alloc_top = max(alloc_top, pending.in_use_after)
            pending = next(events, None)
        tensor.append(top)
        allocator.append(alloc_top)
    out.update(measured=max(tensor), measured_median=statistics.median(tensor),
               allocator=max(allocator))
    return out


def child_largest(model: str, limit: int) -> dict:
    from memory_models import build

    from tfperf.memory.fit import largest_batch

    fn, args = build(model, 8)
    t0 = time.perf_counter()
    best, tried = largest_batch(fn, args, {}, limit, n0=8)
    return {"model": model, "predicted_largest": best, "traces": len(tried),
            "seconds": time.perf_counter() - t0}


def child_overhead(rounds: int) -> dict:
    import keras
    import tensorflow as tf

    from tfperf.memory.evidence import container_snapshot
    from tfperf.memory.leaks import LeakWatch
    from tfperf.profile.capture import Capture, step

    model = keras.Sequential([keras.Input((256,)), keras.layers.Dense(512, activation="relu"),
                              keras.layers.Dense(512, activation="relu"),
                              keras.layers.Dense(10)])
    opt = keras.optimizers.Adam()
    x, y = tf.random.normal([256, 256]), tf.random.normal([256, 10])

    @tf.function
    def train(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((model(x) - y) ** 2)
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables, strict=True))
        return loss

    steps = 40
    train(x, y)

    # Per-step times, and each side's median step: a busy machine's stalls (and the leak
    # watch's two garbage-collector scans, timed apart below) do not move a median.
    def plain() -> float:
        times = []
        for _ in range(steps):
            t0 = time.perf_counter()
            train(x, y).numpy()
            times.append(time.perf_counter() - t0)
        return statistics.median(times)

    def captured() -> float:
        times = []
        with tempfile.TemporaryDirectory() as logdir:
            cap = Capture(Path(logdir))
            cap.start()
            for i in range(steps):
                t0 = time.perf_counter()
                with step(i):
                    train(x, y).numpy()
                times.append(time.perf_counter() - t0)
            cap.stop()
        return statistics.median(times)

    def sampled() -> tuple[float, float]:
        """The sample is taken after the step: each step is timed without it and with it
        (the same steps, so a load burst moves both alike)."""
        bare, times = [], []
        with LeakWatch() as watch:
            watch.expect(steps)
            for _ in range(steps):
                t0 = time.perf_counter()
                train(x, y).numpy()
                t1 = time.perf_counter()
                watch.step()
                bare.append(t1 - t0)
                times.append(time.perf_counter() - t0)
        return statistics.median(bare), statistics.median(times)

    def alternating() -> tuple[float, float]:
        return plain(), captured()

    out: dict = {}
    for name, pair in (("capture", alternating), ("leak sampling", sampled)):
        pair()  # warm-up: the profiler's and the sampler's first-use costs
        p, v, ratios = [], [], []
        for r in range(rounds):
            if pair is alternating and r % 2:  # neither side always runs first
                b = captured()
                a = plain()
            else:
                a, b = pair()
            p.append(a)
            v.append(b)
            ratios.append(b / a)
        out[name] = {"plain_s": statistics.median(p), "viewed_s": statistics.median(v),
                     "ratio": statistics.median(ratios), "low": min(ratios),
                     "high": max(ratios), "rounds": rounds}
    scans = []
    for _ in range(3):
        t0 = time.perf_counter()
        container_snapshot()
        scans.append(time.perf_counter() - t0)
    out["scan_s"] = statistics.median(scans)
    out["step_s"] = statistics.median(plain() for _ in range(rounds))
    return out


# -- the figures --------------------------------------------------------------------------


def run_predict(models: list[str], xla: bool) -> None:
    label = "XLA (jit_compile=True)" if xla else "graph"
    print(f"\npredicted vs measured peak, {label}; measured: highest of 5 steps' tensor peaks "
          "(allocator's own beside it)")
    print(f"{'model':<12} {'batch':>5} {'predicted':>10} {'measured':>10} {'median':>10} "
          f"{'allocator':>10} {'error':>7}")
    worst = 0.0
    for model in models:
        for batch in BATCHES:
            r = _child([model, str(batch), "xla" if xla else "graph", "predict"])
            if r.get("error"):
                print(f"{model:<12} {batch:>5}  error: {r['error'][:80]}")
                continue
            err = r["predicted"] / r["measured"] - 1
            worst = max(worst, abs(err))
            print(f"{model:<12} {batch:>5} {r['predicted'] / MIB:>8.1f}Mi "
                  f"{r['measured'] / MIB:>8.1f}Mi {r['measured_median'] / MIB:>8.1f}Mi "
                  f"{r['allocator'] / MIB:>8.1f}Mi {err:>+7.1%}")
    print(f"worst |error|: {worst:.1%} (goal: within 15 %)")


def run_largest(models: list[str]) -> None:
    from tfperf.memory.fit import batch_grid

    grid = batch_grid()
    print("\nlargest batch under a limit: predicted (traced only) vs measured (fresh process "
          "per batch, highest of 5 steps' tensor peaks)")
    print(f"{'model':<12} {'limit':>8} {'predicted':>9} {'measured':>9} {'ok':>4} "
          f"{'traces':>6} {'search s':>8}")
    for model in models:
        limit = LIMITS_MIB[model] * MIB
        p = _child([model, str(limit), "largest"])
        best = p["predicted_largest"]
        if best is None:
            print(f"{model:<12} {LIMITS_MIB[model]:>6}Mi  batch 1 does not fit")
            continue
        measured = _measured_largest(model, limit, grid, grid.index(best))
        ok = measured is not None and best in (measured, grid[max(grid.index(measured) - 1, 0)])
        print(f"{model:<12} {LIMITS_MIB[model]:>6}Mi {best:>9} {measured!s:>9} "
              f"{'yes' if ok else 'NO':>4} {p['traces']:>6} {p['seconds']:>8.1f}")


def _measured_largest(model: str, limit: int, grid: list[int], start: int) -> int | None:
    """The largest grid batch measured to fit, searched from ``start`` (peaks grow with the
    batch: down until one fits, then up while the next fits)."""
    fits: dict[int, bool] = {}

    def measured_fits(b: int) -> bool:
        if b not in fits:
            fits[b] = _child([model, str(b), "graph", "measure"])["measured"] <= limit
        return fits[b]

    i = start
    while i > 0 and not measured_fits(grid[i]):
        i -= 1
    while i + 1 < len(grid) and measured_fits(grid[i + 1]):
        i += 1
    return grid[i] if measured_fits(grid[i]) else None


def run_overhead(rounds: int) -> None:
    r = _child(["overhead", str(rounds)])
    print(f"\ntime cost of the memory view on a {r['step_s'] * 1e3:.1f} ms training step "
          f"(counting allocator on; one process; each round's median step; median of {rounds} "
          f"per-round ratios, lowest-highest beside it)")
    for name in ("capture", "leak sampling"):
        x = r[name]
        print(f"  {name:<14} {x['plain_s'] * 1e3:7.2f} ms -> {x['viewed_s'] * 1e3:7.2f} ms  "
              f"{x['ratio']:.2f}x  ({x['low']:.2f}-{x['high']:.2f}x)")
    print(f"  plus the leak watch's two garbage-collector scans for containers of tensors (at "
          f"the end of the warm-up and at the end), once per run: {r['scan_s']:.2f} s each")
    times: dict[bool, list[float]] = {True: [], False: []}
    for _ in range(max(3, rounds // 2)):
        for bfc in (False, True):
            times[bfc].append(_child(["overhead", "3"], bfc=bfc)["step_s"])
    a, b = statistics.median(times[False]), statistics.median(times[True])
    print(f"  counting allocator (BFC) vs default, separate processes run alternately: "
          f"{a * 1e3:.2f} ms -> {b * 1e3:.2f} ms  {b / a:.2f}x")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", choices=("predict", "largest", "xla", "overhead"))
    ap.add_argument("--models", default=",".join(LIMITS_MIB))
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        c = args.child
        if c[0] == "overhead":
            print(json.dumps(child_overhead(int(c[1]))))
        elif c[-1] == "largest":
            print(json.dumps(child_largest(c[0], int(c[1]))))
        else:
            print(json.dumps(child_measure(c[0], int(c[1]), c[2] == "xla",
                                           c[3] == "predict")))
        return
    models = args.models.split(",")
    import platform

    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, load "
          f"{os.getloadavg()[0]:.1f}")
    if args.only in (None, "predict"):
        run_predict(models, xla=False)
    if args.only in (None, "largest"):
        run_largest(models)
    if args.only in (None, "xla"):
        run_predict(models, xla=True)
    if args.only in (None, "overhead"):
        run_overhead(args.rounds)


if __name__ == "__main__":
    main()
