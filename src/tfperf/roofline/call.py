"""One call of a function against the roof of this machine: what bench and tune print.

FLOPs are counted on the graph the function traces for its arguments (:mod:`graph`); the
roofs are this machine's (:mod:`roofs`): the GPU TensorFlow sees, from the datasheet table,
else the CPU's vector units, with the memory roof measured when bench has measured it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from tfperf.roofline.roofs import Roofs, cpu_roofs, gpu_roofs, judge


def roofs_here(measured: Any | None = None) -> Roofs | None:
    """This machine's roofs; ``measured``: bench's measured peaks (bench/roofline.Peaks), else
    those measured before, if any (the memory roof of a CPU is measured, never assumed)."""
    from tfperf.bench.machine import gpu_names
    from tfperf.bench.roofline import cached_peaks

    gpus = gpu_names()
    if gpus:
        return gpu_roofs(gpus[0])
    return cpu_roofs(measured=measured if measured is not None else cached_peaks())


def judge_call(fn: Callable[..., Any], args: Sequence[Any], kwargs: dict[str, Any] | None,
               seconds: float, nbytes: float | None = None, measured: Any | None = None,
               trace_s: float | None = None) -> dict[str, Any]:
    """The call's FLOPs (counted), its rate and fraction of the right roof (``judge``'s
    dict), with ``flops_source`` saying where the count came from. ``trace_s``: seconds the
    trace for the count may take (``out_of_time`` is true where it took them all)."""
    from tfperf.roofline.graph import graph_cost

    cost = graph_cost(fn, args, kwargs, limit_s=trace_s)
    if cost.error or not cost.flops:
        why = cost.error or ("not counted: " + ", ".join(
            f"{k} ×{n}" for k, n in cost.uncounted.most_common(4)) if cost.uncounted
            else "no arithmetic")
        return {"flops": None, "fraction": None, "error": None, "flops_source": why,
                "out_of_time": cost.out_of_time}
    out = judge(cost.flops, nbytes or cost.bytes, seconds, roofs_here(measured),
                cost.precision)
    out["flops_source"] = "counted on the traced graph"
    out["precision"] = cost.precision
    return out


def roof_text(judged: dict[str, Any], flops_source: str | None = None) -> str:
    """One line: achieved GFLOP/s and its fraction of the right roof (``judge``'s dict)."""
    if judged.get("error"):
        return f"roofline: {judged['error']}"
    roof = judged.get("roof")
    if judged.get("fraction") is None or not roof:
        return f"roofline: {judged.get('flops_source') or flops_source or 'no roof known'}"
    if not judged["flop_per_s"]:  # no FLOPs: the bandwidth roof alone
        return (f"≥ {judged['byte_per_s'] / 1e9:.3g} GB/s moved, {100 * judged['fraction']:.0f}"
                f" % of the memory roof ({roof['value'] / 1e9:.3g} GB/s; {flops_source})")
    got = f"{judged['flop_per_s'] / 1e9:.3g} GFLOP/s" + (
        f" ({flops_source})" if flops_source else "")
    if judged["bound"] == "memory" and roof.get("bandwidth"):
        return (f"{got}, {100 * judged['fraction']:.0f} % of the memory roof at its intensity "
                f"({judged['intensity']:.3g} FLOP/byte × {roof['bandwidth'] / 1e9:.3g} GB/s = "
                f"{roof['attainable'] / 1e9:.3g} GFLOP/s)")
    return (f"{got}, {100 * judged['fraction']:.0f} % of the {roof['precision'].upper()} roof "
            f"({roof['engine']}, {roof['attainable'] / 1e9:.3g} GFLOP/s)")
