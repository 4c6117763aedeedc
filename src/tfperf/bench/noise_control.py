"""Did the machine change between two separate runs? The gate's noise control.

Two runs judged apart (``--save`` then ``--compare-to``) see the machine at two moments.
Dividing each round by the yardstick (:mod:`tfperf.bench.yardstick`) cancels load that slows
the step and the yardstick alike, not load that slows them unalike, and a bootstrap over one
run's rounds cannot see a shift between runs. So when the runs' own figures say the machine
was not the same, a time verdict would be a guess, and the gate calls it *inconclusive*
(exit 0, with a warning; ``--strict`` judges it anyway). The signs, each recorded by the runs:

- **load**: the 1-minute load average at the end of either run above the CPUs plus one (the
  run itself keeps about one thread runnable: 1.4 on average, measured for a TensorFlow step
  here): other work then outnumbers the CPUs, the step waits for time slices, and how long
  depends on that work, not on the step's own code;
- **yardstick drift**: the yardstick's median moved between the runs by more than the
  threshold: the machine's speed changed by more than the change to be detected, so the
  verdict would rest on how well the yardstick stands for the step, which nothing checks;
- **spread**: the yardstick's own rounds spread (IQR over median) by more than the threshold
  within a run: the load came and went during it.

Interleaved runs (``--interleave-with``) need none of this: both sides share every round.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

from tfperf.core.measure import Measurement

#: runnable threads beyond the CPUs (1-minute load average) that a run may meet: its own
LOAD_ALLOWANCE = 1.0


def _load(record: dict[str, Any]) -> tuple[float | None, int | None]:
    machine = record.get("machine") or {}
    load = machine.get("load_average_1min")
    cpus = machine.get("cpu_count") or (record.get("fingerprint") or {}).get("cpu_count")
    if isinstance(load, (int, float)) and isinstance(cpus, int) and cpus > 0:
        return float(load), cpus
    return None, None


def load_changes(baseline: dict[str, Any], current: dict[str, Any]) -> list[str]:
    """A reason per run whose load average exceeded its CPUs + ``LOAD_ALLOWANCE``."""
    out = []
    for side, record in (("in the baseline run", baseline), ("now", current)):
        load, cpus = _load(record)
        if load is not None and cpus is not None and load > cpus + LOAD_ALLOWANCE:
            out.append(f"load {load:.1f} on {cpus} CPUs {side}, above "
                       f"{cpus + LOAD_ALLOWANCE:g}")
    return out


def yardstick_ratio(before: Sequence[float] | None,
                    after: Sequence[float] | None) -> float | None:
    """Median yardstick now / median yardstick in the baseline (1.4 = the machine ran the
    same work 40 % slower now); None without both."""
    if not before or not after:
        return None
    b, a = statistics.median(before), statistics.median(after)
    return a / b if b > 0 and a > 0 else None


def yardstick_changes(before: Sequence[float] | None, after: Sequence[float] | None,
                      limit: float) -> list[str]:
    """Drift between the runs, or spread within one, beyond ``limit`` (0.10 = 10 %)."""
    out = []
    drift = yardstick_ratio(before, after)
    if drift is not None and max(drift, 1 / drift) > 1 + limit:
        out.append(f"the yardstick ran {drift:.2f}× its baseline time")
    for side, times in (("in the baseline run", before), ("now", after)):
        spread = Measurement(times=list(times)).rel_iqr if times and len(times) >= 2 else None
        if spread is not None and spread > limit:
            out.append(f"the yardstick's rounds spread {spread:.0%} {side}")
    return out


__all__ = ["LOAD_ALLOWANCE", "load_changes", "yardstick_changes", "yardstick_ratio"]
