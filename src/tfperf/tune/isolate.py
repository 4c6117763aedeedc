"""``--isolate``: every candidate (and the baseline) built and measured in a fresh process.

The search itself stays in :mod:`tfperf.tune.search`; with isolation on, it hands these steps
to :class:`Isolation`: the baseline's screen, each candidate's build and screen, the timing,
the float64 truth. A child (:mod:`tfperf.tune.child`) imports the user's module, builds the
candidate from its source text with the same code as in-process, screens it and measures it
with the one measurement core; its outputs come back as arrays (:mod:`tfperf.tune.arrays`)
and are judged here against the baseline's, as in-process. A child that crashes, exits or
outlives its stage limit rejects its candidate with that reason; the search goes on.

Timing across processes cannot be interleaved call by call. Each child measures its
candidate right after screening it (its "own-process" median), and the speedup of that
first estimate is against the baseline's own child. The children of the best candidates are
kept alive (at most ``KEEP`` besides the baseline's), and the final timing measures them one
process at a time in alternating rounds (baseline, c1, c2, baseline, c1, c2, ...): a speedup
is the median of the per-round ratios, so a machine that slows down between rounds slows
both sides of a ratio alike.
"""

from __future__ import annotations

import contextlib
import math
import shutil
import statistics
import sys
import time
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tfperf.tune import arrays
from tfperf.tune.build import Built, apply_levers
from tfperf.tune.device import BF16_CPU_FLAGS, DeviceFacts
from tfperf.tune.gradient_check import replaces_conds
from tfperf.tune.inputs import InputsFunction, locate
from tfperf.tune.pick import MIN_ROUNDS, Rounds
from tfperf.tune.pool import LocalPool, Slot, device_slots
from tfperf.tune.screen import Screen
from tfperf.tune.source import SourceEditError
from tfperf.tune.target import Target, TuneError
from tfperf.tune.worker import WorkerFailed

#: Seconds a child may take beyond its own call limits before it is killed.
STAGE_SLACK = 10.0
#: Seconds for a child to start: Python, TensorFlow, the user's module's top level.
LOAD_LIMIT = 180.0
#: Children of the best candidates kept alive for the final rounds (besides the baseline's).
KEEP = 3
#: Alternating rounds of the final timing: the fewest whose per-round ratios can tell a
#: gain from noise (the pick's sign-test interval; each round's share of the time shrinks).
FINAL_ROUNDS = MIN_ROUNDS
#: The least spread a speedup must exceed, however close the control came out (one control
#: is one sample of the process-to-process spread; 1.05 is also what the ladder calls help).
MIN_SPREAD = 1.05


@dataclass
class Outcome:
    """What one child run gave (filled on a pool thread, read on the main thread)."""

    slot: str
    loaded: dict[str, Any] = field(default_factory=dict)
    load_error: str | None = None
    rejected: str | None = None
    failed: str | None = None
    screen: dict[str, Any] | None = None
    measure: dict[str, Any] | None = None
    worker: Any = None
    start_s: float | None = None  # from starting the process to the candidate loaded


def _elsewhere(*args: Any, **kwargs: Any) -> Any:
    raise TuneError("an isolated candidate runs in its own process, not in this one")


def needs_gpu(levers: Any, facts: DeviceFacts) -> bool:
    """A candidate whose lever pays only on a GPU (float16; bfloat16 without CPU bf16 math),
    where the facts show GPUs: a process that sees none rejects it with that reason."""
    cpu_bf16 = bool(facts.cpu_flags & set(BF16_CPU_FLAGS))
    return bool(facts.gpus) and any(
        lv.reduced_precision and not (getattr(lv, "dtype", "") == "bfloat16" and cpu_bf16)
        for lv in levers)


def inputs_spec(target: Target, workdir: Path) -> dict[str, Any]:
    """How the child gets the inputs: the user's inputs function, found by name (stateful
    inputs), or the arrays of the shared inputs (stateless)."""
    if target.inputs is not None:
        make = target.inputs.make if isinstance(target.inputs, InputsFunction) else None
        where = locate(make if make is not None else target.inputs)
        if where is None:
            raise TuneError("isolation needs the inputs factory to be a function defined at "
                            "module level in a .py file (a child process imports it by name)")
        return {"kind": "factory", "function": where, "as_args": make is not None}
    path = workdir / "inputs.npz"
    try:
        skeleton = arrays.save((target.args, target.kwargs), path, "the inputs")
    except arrays.ShipError as exc:
        raise TuneError(f"isolation cannot send the inputs to a child process: {exc}") \
            from None
    return {"kind": "arrays", "skeleton": skeleton, "npz": str(path)}


class Isolation:
    """The steps of a search that run in child processes (see the module docstring)."""

    def __init__(self, target: Target, facts: DeviceFacts, workdir: Path,
                 devices: int | str | None = None, ray: str | None = None) -> None:
        self.facts, self.workdir = facts, workdir
        where = locate(target.fn)
        if where is None:
            raise TuneError(f"{target.name}: isolation needs a module-level function in a "
                            ".py file")
        self.load_spec = {"op": "load", "function": where,
                          "inputs": inputs_spec(target, workdir),
                          "workdir": str(workdir), "sys_path": list(sys.path)}
        self.pool: Any
        if ray is not None:
            from tfperf.tune.ray_pool import RayPool

            self.pool = RayPool(ray, devices, facts, workdir)
        else:
            self.pool = LocalPool(device_slots(devices, facts))
        self.shared_cpu = self.pool.parallel > 1 and not facts.gpus
        self.pending: dict[int, Future[Outcome]] = {}
        self.alive: dict[int, Any] = {}  # id(live) → its child, kept for the final rounds
        self.lives: dict[int, Any] = {}
        self.base: Any = None
        self._n = 0
        self.truth_value: list[Any] | None = None
        self.truth_error: str | None = None
        self.start_s = 0.0  # a child's start-up (the baseline's): no candidate starts later
        self.started: list[Any] = []  # every child, so that close() leaves none behind
        self.control: dict[str, Any] | None = None  # the second baseline process's verdict

    def describe(self) -> dict[str, Any]:
        return {**self.pool.describe(), "timing": "each candidate in its own process; the "
                "final rounds alternate processes, one at a time", "control": self.control}

    # -- running one child ----------------------------------------------------------------

    def _job(self, slot: Slot, label: str, load: dict[str, Any], screen: dict[str, Any],
             measure_s: float | None) -> Outcome:
        out = Outcome(slot=slot.name)
        t0 = time.perf_counter()
        worker = self.pool.worker(slot, label)
        self.started.append(worker)  # list.append is atomic: pool threads share the list
        try:
            out.loaded = worker.call(load, timeout=LOAD_LIMIT)
            out.start_s = time.perf_counter() - t0
            if "exception" in out.loaded or "rejected" in out.loaded:
                out.load_error = out.loaded.get("exception")
                out.rejected = out.loaded.get("rejected")
                worker.close()
                return out
            limit = float(screen["limit"])
            first = max(limit, float(screen.get("first_limit") or 0.0))  # a trace, a compile
            out.screen = worker.call(screen, timeout=first + 2 * limit + STAGE_SLACK)
            if "exception" not in out.screen and not out.screen.get("error") and measure_s:
                out.measure = worker.call({"op": "measure", "seconds": measure_s},
                                          timeout=3 * measure_s + 2 * limit + STAGE_SLACK)
        except WorkerFailed as exc:
            out.failed = str(exc)
            worker.close()
            return out
        out.worker = worker
        return out

    def _submit(self, live: Any, source: str | None, levers: Any, limit: float,
                measure_s: float | None, **screen: Any) -> Future[Outcome]:
        self._n += 1
        tag = f"c{self._n}"
        threads = next((lv.threads for lv in levers if getattr(lv, "threads", None)), None)
        load = {**self.load_spec, "source": source, "threads": threads,
                "needs_gpu": needs_gpu(levers, self.facts)}
        cmd = {"op": "screen", "limit": limit, "out": str(self.workdir / f"{tag}.npz"),
               **screen}
        self.lives[id(live)] = live
        return self.pool.submit(lambda slot: self._job(slot, tag, load, cmd, measure_s))

    def _measure_s(self, search: Any) -> float:
        return min(2.0, max(0.2, search.budget / 40))

    # -- the search's steps ---------------------------------------------------------------

    def baseline(self, search: Any, live: Any) -> None:
        target = search.target
        live.built = Built(_elsewhere, {}, target.source, search.workdir / "baseline.py")
        future = self._submit(live, None, (), max(2 * search.budget, 1.0), None,
                              watch_retraces=True, more_if_under=search.budget / 8,
                              count_ops=True, varied=search.varied is not None,
                              varied_ints=search.ints_varied is not None)
        out = future.result()
        why = out.failed or out.load_error or out.rejected or \
            (out.screen or {}).get("exception") or (out.screen or {}).get("error")
        if why:
            if out.worker is not None:
                out.worker.close()
            raise TuneError(f"{target.name}: the function fails in a child process: {why}")
        self._fill(search, live, out, judge=False)
        if live.screen is not None:
            search.settle_varied(live.screen)
        self.base, self.start_s = live, out.start_s or 0.0
        slow = live.screen is not None and live.screen.second_call_s is None
        if not slow:  # a slow baseline is called once: its first call stands for it
            self._measure_alive(live, self._measure_s(search))

    def build_and_screen(self, search: Any, live: Any, limit: float,
                         first_limit: float | None = None) -> None:
        record = live.record
        if search.left() < self.start_s:
            record.rejected = (f"not tried: the budget was spent (a child process takes about "
                               f"{self.start_s:.2g} s to start)")
            return
        try:
            text = apply_levers(search.ctx, live.levers)
        except SourceEditError as exc:
            record.rejected = f"does not apply: {exc}"
            return
        record.patch = search.target.diff(text)
        live.replaced_conds = replaces_conds(search.ctx.target.source, text)
        live.built = Built(_elsewhere, {}, text, search.workdir / "isolated.py")
        count = not any(lv.traces for lv in live.levers)
        # On a shared CPU, parallel children would disturb each other's times: they only
        # screen in parallel, and settle() measures them one at a time.
        measure_s = None if self.shared_cpu else self._measure_s(search)
        self.pending[id(live)] = self._submit(live, text, live.levers, limit, measure_s,
                                              count_ops=count, first_limit=first_limit,
                                              varied=search.varied_for() is not None,
                                              varied_ints=search.varied_ints)

    def settle(self, search: Any, lives: list[Any]) -> None:
        """Wait for the children of ``lives`` and judge what they gave, in order."""
        batch = []
        for live in lives:
            future = self.pending.pop(id(live), None)
            if future is not None:
                self._fill(search, live, future.result(), judge=True)
                batch.append(live)
        if self.shared_cpu:  # screened side by side; measured one process at a time
            for live in batch:
                if id(live) in self.alive:
                    self._measure_alive(live, self._measure_s(search))
        self._trim(search)

    def _fill(self, search: Any, live: Any, out: Outcome, judge: bool) -> None:
        record = live.record
        note = f"isolated: its own process ({out.slot})"
        if self.shared_cpu and judge:
            note += ("; screened beside other candidates on a shared CPU (its first-call time "
                     "is disturbed), measured afterwards one process at a time")
        record.notes.append(note)
        seen = out.loaded
        if seen.get("cuda_visible_devices") is not None:
            record.notes.append(f"its process saw CUDA_VISIBLE_DEVICES="
                                f"{seen['cuda_visible_devices']!r} and {seen['gpus_seen']} GPU(s)")
        if seen.get("threads"):
            record.notes.append(f"TensorFlow thread pools in its process: intra_op "
                                f"{seen.get('intra_op')}, inter_op {seen.get('inter_op')} "
                                "(set before TensorFlow started)")
        if out.failed:
            record.rejected = f"its process failed: {out.failed}"
            return
        if out.rejected:
            record.rejected = out.rejected
            return
        if out.load_error:
            record.rejected = f"the edited code fails to load: {out.load_error}"
            return
        s = out.screen or {}
        if "exception" in s:
            record.rejected = f"raises: {s['exception']}"
            return
        outputs: Any = []
        if s.get("outputs"):
            outputs = arrays.load(s["outputs"]["skeleton"], s["outputs"]["npz"])
            Path(s["outputs"]["npz"]).unlink(missing_ok=True)
        got: dict[str, Any] = {}
        for key in ("varied_output", "ints_output"):
            if s.get(key):
                got[key] = arrays.load(s[key]["skeleton"], s[key]["npz"])
                Path(s[key]["npz"]).unlink(missing_ok=True)
        live.screen = Screen(first_call_s=s["first_call_s"], second_call_s=s["second_call_s"],
                             outputs=list(outputs), error=s["error"], retraces=s["retraces"],
                             fallback=s["fallback"], retraced=dict(s["retraced"]),
                             varied_output=got.get("varied_output"),
                             varied_error=s.get("varied_error"),
                             varied_timed_out=bool(s.get("varied_timed_out")),
                             varied_called=bool(s.get("varied_called")),
                             ints_output=got.get("ints_output"), ints_error=s.get("ints_error"),
                             ints_timed_out=bool(s.get("ints_timed_out")))
        live.ops = s.get("ops")
        record.first_call_s = s["first_call_s"]
        if judge:
            search.judge(live)
        if record.rejected is None and out.measure is not None:
            self._set_median(live, out.measure)
        if record.rejected is None and out.worker is not None:
            self.alive[id(live)] = out.worker
        elif out.worker is not None:
            out.worker.close()

    def _set_median(self, live: Any, m: dict[str, Any]) -> None:
        median = m.get("median_s")
        if median is None or not math.isfinite(median):
            return
        live.record.median_s = median
        base = self.base.record.median_s if self.base is not None else None
        if live is self.base:
            live.record.speedup = 1.0
        elif base:
            live.record.speedup = base / median
            live.record.notes.append("speedup: own-process medians (this candidate's child "
                                     "against the baseline's), not interleaved")

    def _measure_alive(self, live: Any, seconds: float) -> dict[str, Any] | None:
        worker = self.alive.get(id(live))
        if worker is None:
            return None
        try:
            reply = worker.call({"op": "measure", "seconds": seconds},
                                timeout=3 * seconds + STAGE_SLACK + 30)
        except WorkerFailed as exc:
            self.alive.pop(id(live), None)
            live.record.rejected = f"its process failed while timed: {exc}"
            return None
        if "exception" in reply:
            self.alive.pop(id(live), None)
            worker.close()
            live.record.rejected = f"failed while timed: {reply['exception']}"
            return None
        self._set_median(live, reply)
        return reply

    def _trim(self, search: Any) -> None:
        """Keep the children of the ``KEEP`` fastest agreeing candidates, close the rest."""
        ranked = sorted((self.lives[k] for k in self.alive if self.lives[k] is not self.base),
                        key=lambda c: c.estimate)
        for live in ranked[getattr(self.pool, "keep", KEEP):]:
            self.alive.pop(id(live)).close()

    def eager_ops(self, live: Any) -> int | None:
        return getattr(live, "ops", None)

    def time(self, search: Any, base: Any, cands: list[Any], share: float,
             final: bool) -> None:
        """Alternating rounds over the live children of the baseline and ``cands``, one
        process at a time; speedup = median of per-round ratios to the baseline."""
        lives = [c for c in [base, *cands] if id(c) in self.alive and c.record.rejected is None]
        lives = list({id(c): c for c in lives}.values())
        if len(lives) < 2 or lives[0] is not base:
            return
        seconds = max(0.5, share * search.left(final))
        rounds = FINAL_ROUNDS if final else 1
        per = max(0.2, min(2.0, seconds / (rounds * len(lives))))
        medians: dict[int, list[float]] = {id(c): [] for c in lives}
        # A second process of the baseline, measured in the same rounds: how far apart two
        # processes of the same code come out here (the noise floor of isolated speedups).
        control = self._control(search) if final else None
        control_runs: list[float] = []
        for _ in range(rounds):
            for live in lives:
                if id(live) not in self.alive:
                    continue
                reply = self._measure_alive(live, per)
                if reply is not None and reply.get("median_s"):
                    medians[id(live)].append(float(reply["median_s"]))
                if live is base and control is not None:
                    try:
                        got = control.call({"op": "measure", "seconds": per},
                                           timeout=3 * per + STAGE_SLACK + 30)
                        control_runs.append(float(got["median_s"]))
                    except (WorkerFailed, KeyError, TypeError):
                        control.close()
                        control = None
        base_runs = medians[id(base)]
        if not base_runs:
            return
        base.record.median_s = statistics.median(base_runs)
        run = search.new_run()  # the pick judges per-round ratios of these rounds
        for live in lives:
            live.rounds.append(Rounds(run, tuple(medians[id(live)])))
        for live in lives[1:]:
            runs = medians[id(live)]
            pairs = [(b, c) for b, c in zip(base_runs, runs, strict=False) if c > 0]
            if live.record.rejected is not None or not pairs:
                continue
            live.record.median_s = statistics.median(runs)
            live.record.speedup = statistics.median(b / c for b, c in pairs)
            live.record.notes = [n for n in live.record.notes if not n.startswith("speedup:")]
            live.record.notes.append(
                f"speedup: median of {len(pairs)} per-round ratios, its process and the "
                "baseline's measured in turn, one process at a time")
        if control is not None:
            self._judge_by_control(base_runs, control_runs, control)

    def _control(self, search: Any) -> Any:
        """A fresh child of the baseline for the final rounds, when the budget allows."""
        if search.left(final=True) < 2 * self.start_s:
            return None
        slot = getattr(self.pool, "slots", [Slot("CPU process")])[0]
        worker = self.pool.worker(slot, "control")
        self.started.append(worker)
        try:
            reply = worker.call({**self.load_spec, "source": None, "threads": None,
                                 "needs_gpu": False}, timeout=LOAD_LIMIT)
        except WorkerFailed:
            return None
        if "exception" in reply:
            worker.close()
            return None
        return worker

    def _judge_by_control(self, base_runs: list[float], control_runs: list[float],
                          control: Any) -> None:
        """Reject candidates whose speedup is within what a second baseline process measured
        against the first: such a speedup cannot be told from a change of process."""
        control.close()
        pairs = [(b, c) for b, c in zip(base_runs, control_runs, strict=False) if c > 0]
        if not pairs:
            return
        ratio = statistics.median(b / c for b, c in pairs)
        spread = max(ratio, 1 / ratio, MIN_SPREAD)
        self.control = {"ratio": round(ratio, 4), "rounds": len(pairs)}
        for live in self.lives.values():
            rec = live.record
            if live is self.base or rec.rejected is not None or rec.speedup is None:
                continue
            if 1.0 < rec.speedup <= spread:
                rec.rejected = (f"not told apart from the baseline: ×{rec.speedup:.2f} is within "
                                f"the ×{spread:.2f} a second process of the baseline measured "
                                "against the first")

    def truth(self, search: Any) -> list[Any] | None:
        """The baseline's outputs on float64 inputs, from the baseline's child."""
        if self.truth_value is not None or self.truth_error is not None:
            search.truth_error = self.truth_error
            return self.truth_value
        worker = self.alive.get(id(self.base))
        if search.target.inputs is not None:
            self.truth_error = "a stateful function (fresh inputs per candidate)"
        elif worker is None:
            self.truth_error = "the baseline's process is gone"
        else:
            path = self.workdir / "truth.npz"
            try:
                reply = worker.call({"op": "truth", "out": str(path)}, timeout=LOAD_LIMIT)
            except WorkerFailed as exc:
                self.alive.pop(id(self.base), None)
                reply = {"exception": str(exc)}
            if "exception" in reply:
                self.truth_error = f"the baseline cannot run on float64 inputs " \
                                   f"({reply['exception']})"
            else:
                value = arrays.load(reply["outputs"]["skeleton"], reply["outputs"]["npz"])
                self.truth_value = [value] * max(1, len(search.base.screen.outputs))
        search.truth_error = self.truth_error
        return self.truth_value

    def close(self) -> None:
        """End every child (also those still running after an interrupt) and the pool."""
        for worker in self.started:
            with contextlib.suppress(Exception):
                worker.close()
        for future in self.pending.values():
            future.cancel()
        self.pending.clear()
        self.alive.clear()
        self.pool.close()
        shutil.rmtree(self.workdir, ignore_errors=True)


def start(search: Any, *, threads: bool = False, devices: int | str | None = None,
          ray: str | None = None) -> Any:
    """Run ``search`` (a :class:`tfperf.tune.search.Search`) with its candidates isolated;
    the :class:`~tfperf.tune.result.TuneResult` it gives, without a live ``best_fn``."""
    from types import SimpleNamespace

    from tfperf.bench.isolate import IsolateError, refuse_unguarded_caller

    try:  # a child imports the function's file: that must not start this tune again
        refuse_unguarded_caller([SimpleNamespace(fn=search.target.fn, source=None)])
    except IsolateError as exc:
        raise TuneError(str(exc).replace("isolate=True", "tune's isolation")) from None
    try:
        search.isolation = Isolation(search.target, search.facts, search.workdir, devices, ray)
    except BaseException:
        shutil.rmtree(search.workdir, ignore_errors=True)
        raise
    search.t0 = time.perf_counter()  # the budget is the search's: joining Ray is not in it
    search.ctx.isolate, search.ctx.threads = True, threads
    try:
        result = search.run()
    finally:
        search.isolation.close()
    result.best_fn = None  # the pick ran in its own process; load result.patch to use it
    result.device["isolation"] = search.isolation.describe()
    return result
