"""A capture split per replica: op time, collective time and imbalance per device.

Under ``MirroredStrategy`` one ``strategy.run`` step runs one copy of the step per device, and
every copy meets the others in the all-reduce. A capture names each op's node but (on a CPU)
not its device; the placement map (``placement.py``) supplies the device. Per device:

* op time per step (self time of its ops), of which collective time (all-reduce ops, waiting
  for the other replicas included) and compute (the rest);
* the share of the step spent in collectives.

The slowest replica is the one with the most compute per step, as for workers
(``remote.py``): in the all-reduce every replica waits for the last one, so the others show the
difference as collective time.
"""

from __future__ import annotations

import bisect
import statistics
from dataclasses import dataclass
from typing import Any

from tfperf.profile.placement import device_key, device_of, device_sort_key, short_device
from tfperf.profile.remote import COLLECTIVE_OPS
from tfperf.profile.xplane import CaptureSummary


@dataclass
class ReplicaFigures:
    """One device's share of a step: medians over the captured steps (a first step's one-off
    costs do not count), or totals / steps when the capture has no step windows."""

    device: str
    ops: int = 0  # op events over the capture
    op_s: float = 0.0
    collective_s: float = 0.0
    compute_s: float = 0.0  # op time outside collectives

    def to_dict(self, step_s: float | None) -> dict[str, Any]:
        return {"device": self.device, "short": short_device(self.device), "ops": self.ops,
                "op_s": self.op_s, "compute_s": self.compute_s,
                "collective_s": self.collective_s,
                "collective_share": self.collective_s / step_s if step_s else None}


@dataclass
class ReplicaSplit:
    """Every replica's figures, and how far the slowest holds the others back."""

    replicas: list[ReplicaFigures]
    steps: int
    step_s: float | None  # the step every replica shares (step markers, else calls)
    unattributed_s: float = 0.0  # op time per step on no known device
    where: str = "host"  # host op events (CPU devices) or device kernels (GPUs)

    @property
    def attributed_share(self) -> float | None:
        placed = sum(r.op_s for r in self.replicas)
        total = placed + self.unattributed_s
        return placed / total if total > 0 else None

    @property
    def slowest(self) -> ReplicaFigures:
        return max(self.replicas, key=lambda r: (r.compute_s, device_sort_key(r.device)))

    @property
    def others_compute_s(self) -> float:
        slow = self.slowest
        return statistics.median(r.compute_s for r in self.replicas if r is not slow)

    @property
    def gap_s(self) -> float:
        return self.slowest.compute_s - self.others_compute_s

    @property
    def ratio(self) -> float | None:
        typical = self.others_compute_s
        return self.slowest.compute_s / typical if typical > 0 else None

    @property
    def collective_share(self) -> float | None:
        """The least collective time of any replica / step time: the replica that waits least
        for the others shows what the all-reduce itself costs (the others add their wait)."""
        if not self.step_s:
            return None
        return min(r.collective_s for r in self.replicas) / self.step_s

    def to_dict(self) -> dict[str, Any]:
        slow = self.slowest
        return {"steps": self.steps, "step_s": self.step_s, "where": self.where,
                "replicas": [r.to_dict(self.step_s) for r in self.replicas],
                "slowest": slow.device, "slowest_compute_s": slow.compute_s,
                "others_compute_s": self.others_compute_s, "gap_s": self.gap_s,
                "ratio": self.ratio, "collective_share": self.collective_share,
                "unattributed_s": self.unattributed_s,
                "attributed_share": self.attributed_share}


def split(summary: CaptureSummary, placement: dict[str, str]) -> ReplicaSplit | None:
    """Per-device figures of ``summary``; None unless ops ran on two devices or more.

    Graph ops only: eager ops carry no node name. On a GPU capture the device kernels are
    split (their ``tf_op`` names the node); host events then only launch them.
    """
    if not placement:
        return None
    where = "host" if summary.host_only else "device"
    placement = _canonical(placement)
    windows = summary.step_windows
    if windows and summary.op_events:
        by_device, unattributed = _per_step(summary, placement, where)
        step_s = summary.step_s
        if step_s is None:
            step_s = statistics.median(end - start for start, end in windows) / 1e12
    else:
        by_device, unattributed = _totals(summary, placement, where)
        steps = max(summary.steps, 1)
        step_s = summary.step_s if summary.step_s is not None else summary.duration_s / steps
    if len(by_device) < 2:
        return None
    replicas = sorted(by_device.values(), key=lambda r: device_sort_key(r.device))
    return ReplicaSplit(replicas, steps=summary.steps, step_s=step_s,
                        unattributed_s=unattributed, where=where)


def _canonical(placement: dict[str, str]) -> dict[str, str]:
    """Node name → one spelling per device: a traced graph may ask for ``cpu:1`` where the
    runtime says ``/job:localhost/replica:0/task:0/device:CPU:1``; the longest spelling stays."""
    spelling: dict[str, str] = {}
    for device in set(placement.values()):
        if device:
            key = device_key(device)
            if len(device) > len(spelling.get(key, "")):
                spelling[key] = device
    return {name: spelling[device_key(d)] if d else d for name, d in placement.items()}


def _per_step(summary: CaptureSummary, placement: dict[str, str],
              where: str) -> tuple[dict[str, ReplicaFigures], float]:
    """Op and collective time per device in each step window; medians over the steps."""
    windows = sorted(summary.step_windows)
    starts = [start for start, _ in windows]
    n = len(windows)
    op: dict[str, list[int]] = {}
    coll: dict[str, list[int]] = {}
    counts: dict[str, int] = {}
    lost = [0] * n
    devices: dict[str, str | None] = {}
    for start, self_ps, name, op_type, at in summary.op_events:
        if at != where:
            continue
        k = bisect.bisect_right(starts, start) - 1
        if k < 0 or start >= windows[k][1]:
            continue  # between steps
        if name not in devices:
            devices[name] = device_of(name, placement)
        device = devices[name]
        if device is None:
            lost[k] += self_ps
            continue
        if device not in op:
            op[device], coll[device], counts[device] = [0] * n, [0] * n, 0
        op[device][k] += self_ps
        counts[device] += 1
        if op_type in COLLECTIVE_OPS:
            coll[device][k] += self_ps
    out = {}
    for device, times in op.items():
        c = coll[device]
        out[device] = ReplicaFigures(
            device, ops=counts[device], op_s=statistics.median(times) / 1e12,
            collective_s=statistics.median(c) / 1e12,
            compute_s=statistics.median(t - x for t, x in zip(times, c, strict=True)) / 1e12)
    return out, statistics.median(lost) / 1e12


def _totals(summary: CaptureSummary, placement: dict[str, str],
            where: str) -> tuple[dict[str, ReplicaFigures], float]:
    """Without step windows: each device's op time over the capture / steps."""
    steps = max(summary.steps, 1)
    out: dict[str, ReplicaFigures] = {}
    unattributed = 0.0
    for row in summary.ops:
        if row.where != where or row.eager:
            continue
        device = device_of(row.name, placement)
        if device is None:
            unattributed += row.self_s / steps
            continue
        fig = out.get(device)
        if fig is None:
            fig = out[device] = ReplicaFigures(device)
        fig.ops += row.count
        fig.op_s += row.self_s / steps
        if row.type in COLLECTIVE_OPS:
            fig.collective_s += row.self_s / steps
    for fig in out.values():
        fig.compute_s = max(fig.op_s - fig.collective_s, 0.0)
    return out, unattributed
