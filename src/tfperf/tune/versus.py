"""tune against a person: tune a bench file's function, then time tune's pick and the file's
hand-written variants in one interleaved run (:func:`tfperf.bench.compare`).

This is how tune's own cases are judged (tests/tune/cases, ``benchmarks/bench_tune.py``):
``ratio`` = the best hand variant's time / tune's pick's time, so ≥ 1 means tune did at
least as well, and the goal is ≥ 0.9. A file names the function to tune in ``TUNE`` (else its
baseline variant is tuned) and may set ``CALLS`` (rank by that many calls, first included)
and ``SIZE`` (a dict its ``@inputs`` function reads; replaced by ``size``).
"""

from __future__ import annotations

import collections
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tfperf.tune.result import TuneResult
from tfperf.tune.target import TuneError

#: Reasons of rejection, by their first words (the table's last column).
REASON_KINDS = ("not applicable", "does not apply", "raises", "disagrees", "too slow",
                "retraces", "falls back", "not tried", "failed while timed", "no float64",
                "cannot be compared", "changes the function's contract", "not told apart",
                "not paid back")


@dataclass
class Versus:
    case: str
    result: TuneResult
    pick: str | None
    pick_s: float | None
    best_hand: str | None
    best_hand_s: float | None
    ratio: float | None  # best hand time / pick time; None without a pick
    rejected: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def reason_kind(reason: str) -> str:
    return next((k for k in REASON_KINDS if reason.startswith(k)), "other")


def _cost(first: float | None, median: float | None, calls: int | None) -> float | None:
    if median is None:
        return None
    if calls:
        return (first or 0.0) + (calls - 1) * median
    return median


def tune_versus_hand(path: str | Path, *, budget: float = 20.0, size: dict[str, Any] | None
                     = None, timing_budget: float = 2.0, timing_runs: int = 1,
                     keep: str = "median") -> Versus:
    """Tune ``path``'s function, then time the pick against the hand variants
    ``timing_runs`` times (each one interleaved run; 0: not at all) and keep the run with
    the median ratio (``keep="best"``: the best, a guard for tests on a shared machine where
    one disturbed run must not fail the case)."""
    import tensorflow as tf

    from tfperf.bench.comparison import Variant
    from tfperf.bench.declare import close_collector, open_collector
    from tfperf.core.usercode import import_file
    from tfperf.tune.search import tune

    p = Path(path)
    collector = open_collector()
    try:
        module = import_file(p, prefix="_tfperf_versus_")
    finally:
        close_collector(collector)
    if size is not None:
        setattr(module, "SIZE", dict(size))  # noqa: B010  (the case file reads it)
    fn = getattr(module, "TUNE", None) or next(
        (v.fn for v in collector.variants if v.baseline), None)
    if fn is None or not collector.inputs:
        raise TuneError(f"{p}: needs TUNE (or a baseline @variant) and an @inputs function")
    make = collector.inputs[0]
    calls = getattr(module, "CALLS", None)

    def fresh() -> tuple[tuple[Any, ...], dict[str, Any]]:
        value = make()
        return (value, {}) if isinstance(value, tuple) else ((value,), {})

    args, kwargs = fresh()
    leaves = tf.nest.flatten((args, kwargs))
    stateful = any(isinstance(x, tf.Variable) or hasattr(x, "trainable_variables")
                   for x in leaves)
    result = tune(fn, args, kwargs, budget=budget, inputs=fresh if stateful else None,
                  calls=calls)
    rejected = collections.Counter(reason_kind(c.rejected) for c in result.candidates
                                   if c.rejected)
    hands = [v for v in collector.variants if not v.baseline]
    out = Versus(p.stem, result, result.best_name, None, None, None, None, dict(rejected))
    pick = result.best_fn
    if pick is None:
        out.notes.append("tune picked nothing (the baseline stays)")
        pick = fn
    variants = []
    for name, f in [("tune's pick", pick), *[(h.name, h.fn) for h in hands]]:
        a, kw = fresh() if stateful else (args, kwargs)
        variants.append(Variant(name, f, args=a, kwargs=kw, baseline=name == "tune's pick"))
    if timing_runs < 1:  # the search only
        return out
    if calls:
        # Ranked by first calls: only the first run sees the hand variants cold (a later run
        # would find their traces cached).
        timing_runs = 1
    runs = []
    for _ in range(timing_runs):
        run = Versus(out.case, result, out.pick, None, None, None, None, out.rejected,
                     list(out.notes))
        _timed(run, variants, calls, result, stateful, timing_budget)
        runs.append(run)
    runs.sort(key=lambda r: r.ratio or 0.0)
    chosen = runs[-1] if keep == "best" else runs[len(runs) // 2]
    chosen.notes.append(f"ratios of {len(runs)} timing runs: "
                        + ", ".join(f"{r.ratio:.2f}" for r in runs if r.ratio is not None))
    return chosen


def _timed(out: Versus, variants: list[Any], calls: int | None, result: TuneResult,
           stateful: bool, timing_budget: float) -> None:
    from tfperf.bench.comparison import compare

    # slow_after: every variant gets a second call; a first call that compiles for fresh
    # inputs (a new model) must not stand for its time.
    report = compare(variants, budget=timing_budget, check_equivalence=not stateful,
                     quick=True, slow_after=60.0)
    costs: dict[str, float] = {}
    # A reduced-precision pick is judged against the float64 truth with its dtype's
    # tolerance; the float32 hands differ from it by more than float32's: not a disagreement.
    reduced = result.best is not None and any(
        n.endswith("casts") or n.endswith("policy") for n in result.best.levers)
    for r in report.variants:
        first = r.first_call_s
        if r.name == "tune's pick" and result.best is not None:
            first = result.best.first_call_s  # its first call happened during the search
        c = _cost(first, r.median_s, calls)
        if c is not None and (r.name == "tune's pick" or r.equivalent is not False or reduced):
            costs[r.name] = c
    out.pick_s = costs.get("tune's pick")
    hand_costs = {k: v for k, v in costs.items() if k != "tune's pick"}
    if hand_costs:
        out.best_hand = min(hand_costs, key=hand_costs.__getitem__)
        out.best_hand_s = hand_costs[out.best_hand]
    if out.pick_s and out.best_hand_s:
        out.ratio = out.best_hand_s / out.pick_s
        # Steady state: the median of per-round ratios (drift hits both alike) is the figure.
        paired = next((r for r in report.variants if r.name == out.best_hand), None)
        if not calls and paired is not None and paired.ratio_to_baseline:
            out.ratio = paired.ratio_to_baseline
