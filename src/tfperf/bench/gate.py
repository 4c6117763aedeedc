"""The regression gate: a saved run (the baseline) against the current one → verdicts.

Two kinds of verdict per variant, on different evidence:

- **Counters** (:mod:`tfperf.bench.counters`) are compared exactly: any increase is a
  regression, any decrease an improvement, with the counter's name, both values and the
  user lines behind the change. They do not depend on the machine or its load, so they are
  compared even when times are not.
- **Times**: the ratio of medians (current / baseline) with a bootstrap interval
  (:mod:`tfperf.bench.significance`). A regression needs both: the interval lies above 1
  (significant) *and* the ratio exceeds ``1 + fail_over``. The verdict words: ``regression``,
  ``improvement``, ``no change``, ``not comparable`` (the machines' fingerprints differ: never
  a failure), ``not measured`` (too few rounds on one side, or the variant failed),
  ``inconclusive`` (separate runs whose own noise control says the machine changed between
  them, :mod:`tfperf.bench.noise_control`: never a failure, unless ``strict``; interleaved
  runs are always judged).

Exit status: 1 when any regression (counter or time) or a variant that ran in the baseline
fails now; else 0. Rendering lives in :mod:`tfperf.bench.gate_report`.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from typing import Any

from tfperf.bench.counters import COUNTERS
from tfperf.bench.machine import fingerprint_differences
from tfperf.bench.noise_control import load_changes, yardstick_changes, yardstick_ratio
from tfperf.bench.significance import bootstrap_paired, bootstrap_ratio, mann_whitney_u

REGRESSION, IMPROVEMENT, NO_CHANGE = "regression", "improvement", "no change"
NOT_COMPARABLE, NOT_MEASURED = "not comparable", "not measured"
INCONCLUSIVE = "inconclusive"
#: how a time was judged (``TimeVerdict.method``)
BY_ROUND_PAIRS = "median of per-round ratios (interleaved)"
BY_YARDSTICK = "ratio of medians, each round divided by the yardstick timed in it"
BY_RAW_MEDIANS = "ratio of medians"
MIN_ROUNDS = 3
DEFAULT_FAIL_OVER = 0.10
DEFAULT_CONFIDENCE = 0.99


@dataclass
class CounterChange:
    variant: str
    counter: str
    before: int
    after: int
    verdict: str  # regression | improvement
    #: user lines behind the change: path, line, before, after, detail
    lines: list[dict[str, Any]] = field(default_factory=list)

    @property
    def message(self) -> str:
        word = "more" if self.after > self.before else "fewer"
        return (f"{self.variant}: {self.counter} {self.before} → {self.after} "
                f"({abs(self.after - self.before)} {word})")


@dataclass
class TimeVerdict:
    variant: str
    verdict: str
    reason: str
    baseline_median_s: float | None = None
    current_median_s: float | None = None
    ratio: float | None = None
    low: float | None = None
    high: float | None = None
    confidence: float | None = None
    detectable: float | None = None  # smallest change this run could detect (0.08 = 8 %)
    p_value: float | None = None  # Mann-Whitney U, two-sided
    baseline_runs: int = 0
    current_runs: int = 0
    method: str = ""
    #: median now / median baseline of the raw times (what the two medians shown say)
    raw_ratio: float | None = None
    #: the same with each round divided by the yardstick timed in it (machine-normalised);
    #: ``ratio`` is this one when it is set
    normalised_ratio: float | None = None
    #: median yardstick now / median yardstick in the baseline: how the machine's speed moved
    yardstick_ratio: float | None = None
    #: why the noise control says the machine changed between separate runs
    machine_changes: list[str] = field(default_factory=list)
    #: the verdict the figures give on their own (what ``--strict`` reports)
    strict_verdict: str = ""


@dataclass
class GateResult:
    baseline_source: str
    fail_over: float
    confidence: float
    counters_only: bool
    comparable: bool
    differences: list[tuple[str, Any, Any]]
    strict: bool = False
    times: list[TimeVerdict] = field(default_factory=list)
    counters: list[CounterChange] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)  # variants failing now
    notes: list[str] = field(default_factory=list)

    @property
    def regressions(self) -> list[str]:
        out = [c.message for c in self.counters if c.verdict == REGRESSION]
        out += [f"{t.variant}: time {t.reason}" for t in self.times if t.verdict == REGRESSION]
        return out + self.failures

    @property
    def inconclusive(self) -> list[TimeVerdict]:
        return [t for t in self.times if t.verdict == INCONCLUSIVE]

    @property
    def exit_status(self) -> int:
        return 1 if self.regressions else 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "baseline": self.baseline_source,
            "fail_over": self.fail_over,
            "confidence": self.confidence,
            "counters_only": self.counters_only,
            "strict": self.strict,
            "comparable": self.comparable,
            "fingerprint_differences": [{"key": k, "baseline": a, "current": b}
                                        for k, a, b in self.differences],
            "times": [asdict(t) for t in self.times],
            "counters": [asdict(c) for c in self.counters],
            "failures": list(self.failures),
            "notes": list(self.notes),
            "regressions": self.regressions,
            "exit_status": self.exit_status,
        }


def percent(fraction: float) -> str:
    """0.99 → "99%", 0.999 → "99.9%"."""
    return f"{fraction * 100:.4g}%"


def _by_name(record: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {v["name"]: v for v in record["variants"]}


def _site_key(row: dict[str, Any]) -> tuple[Any, ...]:
    # by file name, not path: the baseline may have run from another checkout (../base/)
    path = row.get("path")
    return (row.get("function"), os.path.basename(path) if path else None, row.get("line"))


def _line_changes(counter: str, before: dict[str, Any] | None,
                  after: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The lines whose own count moved, most moved first."""
    old = {_site_key(r): r for r in ((before or {}).get("sites") or {}).get(counter, [])}
    new = {_site_key(r): r for r in ((after or {}).get("sites") or {}).get(counter, [])}
    rows = []
    for key in set(old) | set(new):
        o, n = old.get(key), new.get(key)
        was, now = (o or {}).get("count", 0), (n or {}).get("count", 0)
        if was == now:
            continue
        row = n or o or {}
        detail = ""
        if counter == "traces":
            causes = (n or {}).get("causes") or []
            detail = "; ".join(_cause_text(c) for c in causes[:3])
            if row.get("function"):
                detail = f"tf.function {row['function']}" + (f": {detail}" if detail else "")
        elif row.get("kinds"):
            detail = ", ".join(f"{k} ×{c}" for k, c in row["kinds"].items())
        rows.append({"path": row.get("path"), "line": row.get("line"), "before": was,
                     "after": now, "detail": detail})
    return sorted(rows, key=lambda r: -abs(r["after"] - r["before"]))


def _cause_text(cause: dict[str, Any]) -> str:
    examples = ", ".join(str(e) for e in cause.get("examples", [])[:3])
    kind = str(cause.get("kind", "")).replace("_", " ")
    return (f"argument `{cause.get('argument')}` changed ({kind}"
            + (f": {examples}" if examples else "") + ")")


def compare_counters(name: str, before: dict[str, Any] | None,
                     after: dict[str, Any] | None) -> tuple[list[CounterChange], list[str]]:
    changes: list[CounterChange] = []
    notes: list[str] = []
    if before is None or after is None:
        notes.append(f"{name}: counters not recorded "
                     f"{'in the baseline' if before is None else 'now'}")
        return changes, notes
    for counter in COUNTERS:
        b, a = before.get(counter), after.get(counter)
        if b is None or a is None:
            if b != a:
                notes.append(f"{name}: {counter} not visible "
                             f"{'in the baseline' if b is None else 'now'}")
            continue
        if a == b:
            continue
        verdict = REGRESSION if a > b else IMPROVEMENT
        changes.append(CounterChange(name, counter, int(b), int(a), verdict,
                                     _line_changes(counter, before, after)))
    return changes, notes


def compare_times(name: str, before: dict[str, Any], after: dict[str, Any], *,
                  fail_over: float, confidence: float, comparable: bool,
                  why_not: str = "", paired: bool = False,
                  yardsticks: tuple[list[float] | None, list[float] | None] = (None, None),
                  machine_changes: list[str] | None = None, strict: bool = False,
                  ) -> TimeVerdict:
    """``yardsticks``: each run's per-round yardstick times (:mod:`tfperf.bench.yardstick`);
    when both match their side's rounds, each round is divided by its yardstick first.
    ``machine_changes``: the run-level signs that the machine changed between separate runs
    (load); with the yardsticks' own signs they make the verdict inconclusive unless
    ``strict`` or ``paired``."""
    tb, ta = before.get("times_s") or [], after.get("times_s") or []
    tv = TimeVerdict(name, NOT_MEASURED, "", baseline_runs=len(tb), current_runs=len(ta))
    stats_b, stats_a = before.get("stats") or {}, after.get("stats") or {}
    tv.baseline_median_s, tv.current_median_s = stats_b.get("median_s"), stats_a.get("median_s")
    if not comparable:
        tv.verdict, tv.reason = NOT_COMPARABLE, why_not
        return tv
    if len(tb) < MIN_ROUNDS or len(ta) < MIN_ROUNDS:
        tv.reason = (f"too few rounds to test ({len(tb)} in the baseline, {len(ta)} now; "
                     f"{MIN_ROUNDS} needed)")
        # a loaded machine is the usual reason a budget gives too few rounds: say so
        tv.machine_changes = [] if paired else list(machine_changes or [])
        return tv
    paired = paired and len(ta) == len(tb)
    yb, ya = yardsticks
    by_yardstick = not paired and yb is not None and ya is not None and \
        len(yb) == len(tb) and len(ya) == len(ta) and all(y > 0 for y in yb + ya)
    tv.raw_ratio = bootstrap_ratio(tb, ta, confidence=confidence).ratio
    if by_yardstick:
        tv.yardstick_ratio = yardstick_ratio(yb, ya)
        tb = [t / y for t, y in zip(tb, yb or [], strict=True)]
        ta = [t / y for t, y in zip(ta, ya or [], strict=True)]
    iv = (bootstrap_paired if paired else bootstrap_ratio)(tb, ta, confidence=confidence)
    tv.method = BY_ROUND_PAIRS if paired else BY_YARDSTICK if by_yardstick else BY_RAW_MEDIANS
    tv.ratio, tv.low, tv.high, tv.detectable = iv.ratio, iv.low, iv.high, iv.detectable
    tv.normalised_ratio = iv.ratio if by_yardstick else None
    tv.confidence = confidence
    _, tv.p_value = mann_whitney_u(ta, tb)
    interval = f"{iv.ratio:.3f}× [{iv.low:.3f}, {iv.high:.3f}] at {percent(confidence)}"
    if iv.low > 1.0 and iv.ratio > 1.0 + fail_over:
        tv.verdict = REGRESSION
        tv.reason = f"{iv.ratio - 1:+.1%} slower, {interval} (threshold +{fail_over:.0%})"
    elif iv.high < 1.0 and 1.0 / iv.ratio > 1.0 + fail_over:
        tv.verdict = IMPROVEMENT
        tv.reason = f"{1 - iv.ratio:.1%} faster, {interval}"
    else:
        tv.verdict = NO_CHANGE
        why = "within noise" if iv.low <= 1.0 <= iv.high else \
            f"significant but within the ±{fail_over:.0%} threshold"
        tv.reason = f"{iv.ratio - 1:+.1%}, {interval}: {why}"
    tv.strict_verdict = tv.verdict
    if not paired:
        tv.machine_changes = list(machine_changes or [])
        if by_yardstick:
            tv.machine_changes += yardstick_changes(yb, ya, fail_over)
    if tv.machine_changes and not strict:
        tv.verdict = INCONCLUSIVE
        tv.reason = (f"inconclusive: the machine changed ({'; '.join(tv.machine_changes)}); "
                     f"the times alone say {tv.strict_verdict}: {tv.reason}")
    return tv


def compare_runs(baseline: dict[str, Any], current: dict[str, Any], *,
                 fail_over: float = DEFAULT_FAIL_OVER,
                 confidence: float = DEFAULT_CONFIDENCE, counters_only: bool = False,
                 baseline_source: str = "baseline", paired: bool = False,
                 strict: bool = False) -> GateResult:
    """Judge ``current`` (a run record) against ``baseline`` (a saved one). ``paired``: the
    two were interleaved in one process (``--interleave-with``), round ``i`` of each side by
    side, so times are judged on per-round ratios. ``strict``: separate runs are judged on
    their times even when the noise control says the machine changed between them."""
    diffs = fingerprint_differences(baseline.get("fingerprint") or {},
                                    current.get("fingerprint") or {})
    why_not = "different machine: " + "; ".join(
        f"{k} {a!r} → {b!r}" for k, a, b in diffs) if diffs else ""
    res = GateResult(baseline_source, fail_over, confidence, counters_only,
                     comparable=not diffs, differences=diffs, strict=strict)
    old, new = _by_name(baseline), _by_name(current)
    # the yardstick stands for CPU load: not for a GPU-bound variant
    gpus = (baseline.get("fingerprint") or {}).get("gpus") or \
        (current.get("fingerprint") or {}).get("gpus")
    yardsticks = (None, None) if gpus else (baseline.get("yardstick_s"),
                                            current.get("yardstick_s"))
    loaded = [] if paired else load_changes(baseline, current)
    for name, after in new.items():
        before = old.get(name)
        if before is None:
            res.notes.append(f"{name}: new variant, not in the baseline")
            continue
        if after.get("error"):
            if not before.get("error"):
                res.failures.append(f"{name}: fails now ({after['error']})")
            continue
        changes, notes = compare_counters(name, before.get("counters"), after.get("counters"))
        res.counters += changes
        res.notes += notes
        if counters_only or baseline.get("counters_only") or current.get("counters_only"):
            continue
        # a variant may carry its own yardstick (the pytest fixture times each apart)
        own = yardsticks if gpus else (before.get("yardstick_s", yardsticks[0]),
                                       after.get("yardstick_s", yardsticks[1]))
        res.times.append(compare_times(name, before, after, fail_over=fail_over,
                                       confidence=confidence, comparable=not diffs,
                                       why_not=why_not, paired=paired, yardsticks=own,
                                       machine_changes=loaded, strict=strict))
    for name in old:
        if name not in new:
            res.notes.append(f"{name}: in the baseline, not in this run")
    return res


__all__ = ["BY_RAW_MEDIANS", "BY_ROUND_PAIRS", "BY_YARDSTICK", "DEFAULT_CONFIDENCE",
           "DEFAULT_FAIL_OVER", "IMPROVEMENT", "INCONCLUSIVE", "NOT_COMPARABLE", "NOT_MEASURED",
           "NO_CHANGE", "REGRESSION", "CounterChange", "GateResult", "TimeVerdict",
           "compare_counters", "compare_runs", "compare_times", "percent"]
