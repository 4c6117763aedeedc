"""FLOPs, bytes and the fraction of the roof for the ops of a capture, where it records them.

What a capture records, on TensorFlow 2.21: XLA clusters keep their ``HloProto``, so every
compiled op has shapes (:mod:`tfperf.roofline.hlo`). Plain TF op events carry no shapes on
the CPU (checked at host_tracer_level 3): those ops get no FLOPs here, rather than a guess;
``tfperf bench --roofline`` counts them on the traced graph instead.

Roofs: a device plane that names its GPU gets the datasheet roofs of that GPU, and a
``memory_bandwidth`` stat gives the memory roof; a host capture is judged against no roof
(the machine that made it is not this one).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tfperf.profile.read.summary import OpStat, ReadSummary
from tfperf.profile.read.xspace import Capture
from tfperf.roofline.hlo import capture_costs
from tfperf.roofline.roofs import Roof, Roofs, gpu_roofs, judge

MATMUL_LIKE = ("dot", "convolution", "MatMul", "Conv", "Einsum", "BatchMatMul")
# XLA records the frame that built each op; TF 2.21 often records its own (ops.py): not a
# source worth showing.
LIBRARY_PATHS = ("site-packages", "dist-packages", "/tensorflow/python/")


@dataclass
class OpCost:
    op: OpStat
    flops: float  # per execution
    bytes: float
    dtype: str
    judged: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.op.name, "where": self.op.where, "module": self.op.module,
                "count": self.op.count, "flops": self.flops, "bytes": self.bytes,
                "dtype": self.dtype, **{k: self.judged[k] for k in (
                    "flop_per_s", "intensity", "bound", "fraction", "error")},
                "roof": self.judged.get("roof")}


def device_roofs(cap: Capture, plane_name: str) -> Roofs | None:
    for plane in cap.planes:
        if plane.name != plane_name:
            continue
        stats = plane.stat_dict(plane.stats)
        for value in stats.values():
            if isinstance(value, str) and (found := gpu_roofs(value)) is not None:
                return found
        bw = stats.get("memory_bandwidth")
        if isinstance(bw, (int, float)) and bw > 0:
            return Roofs(plane_name, bandwidth=Roof("memory", float(bw), "memory",
                                                    "the capture's memory_bandwidth stat"))
    return None


def op_costs(cap: Capture, s: ReadSummary) -> list[OpCost]:
    """Per op that has FLOPs (XLA ops of the capture's HloProtos), its rate and roof."""
    if not s.hlo_protos:
        return []
    table = capture_costs(s.hlo_protos, cap.blob)
    by_name: dict[str, list[tuple[str, Any]]] = {}
    for (module, name), known in table.items():
        by_name.setdefault(name, []).append((module, known))
    roofs: dict[str, Roofs | None] = {}
    out = []
    for op in s.ops:
        if op.kind != "xla" or op.self_ps <= 0:
            continue
        entry: Any = table.get((op.module or "", op.name))
        if entry is None and len(by_name.get(op.name, [])) == 1:
            entry = by_name[op.name][0][1]
        if entry is None:
            continue
        cost, dtype, ins = entry
        if ins.source and not any(p in ins.source for p in LIBRARY_PATHS):
            op.source = ins.source  # the user's line XLA recorded for this op
        if op.where not in roofs:
            roofs[op.where] = (device_roofs(cap, op.where)
                               if op.where.startswith("/device") else None)
        judged = judge(cost.flops * op.count, cost.bytes * op.count, op.self_s,
                       roofs[op.where], dtype, ins.opcode in MATMUL_LIKE or
                       op.type.startswith(MATMUL_LIKE))
        out.append(OpCost(op, cost.flops, cost.bytes, dtype, judged))
    return out


def costs_text(costs: list[OpCost], top: int = 15) -> str:
    from tfperf.core.measure import format_seconds as fs
    from tfperf.core.render import text_table

    if not costs:
        return ""
    rows = []
    for c in sorted(costs, key=lambda c: -c.op.self_ps)[:top]:
        j = c.judged
        rate = f"{j['flop_per_s'] / 1e9:.3g}" if j["flop_per_s"] else "–"
        ai = f"{j['intensity']:.3g}" if j["intensity"] else "–"
        if j["error"]:
            of_roof = "ERROR: above roof"
        elif j["fraction"] is not None:
            of_roof = f"{100 * j['fraction']:.1f} % ({j['bound']})"
        else:
            of_roof = "no roof known"
        rows.append([c.op.name[:40], c.dtype, c.op.count, fs(c.op.self_s),
                     f"{c.flops:.4g}", f"{c.bytes:.4g}", ai, rate, of_roof])
    return ("FLOPs of compiled (XLA) ops, from the capture's HloProto (per execution)\n" +
            text_table(["op", "dtype", "count", "self", "FLOPs", "bytes", "FLOP/byte",
                        "GFLOP/s", "of roof"], rows, "llrrrrrrl"))
