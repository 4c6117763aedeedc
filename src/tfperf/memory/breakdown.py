"""What held the peak: the live tensors grouped by op, layer and line, and the shares of the
peak held by weights, optimizer slots, inputs, activations and gradients.

Live allocations made during the capture are classified by their node: the backward pass
(``gradient_tape/...``) is *gradients*, an optimizer's scope (``adam/...``) its *optimizer
update* temporaries, input pipeline ops (``IteratorGetNext``) *inputs*, everything else
*activations*. The part of the peak held from before the capture is split with what Python
holds (``holders.py``): weights, optimizer slots, the step's input tensors (taken or
captured), and the traced
graphs' *constants* (``Const`` ops and what Grappler folds into constants, such as the
gradient of a mean); what none of them explains is *other* (tensors the program keeps
elsewhere), the only part the breakdown does not name.

A live tensor counts its own bytes (what it requested): BFC may hand an 8 MiB tensor a
14 MiB free chunk (it splits a chunk only when it is at least twice the request), and what
the chunks hold beyond their tensors is *allocator_slack*, so the shares still add up to the
allocator's peak.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tfperf.memory.events import AllocEvent
from tfperf.memory.holders import Holders
from tfperf.memory.sites import SiteIndex, is_backward, layer_of, plain_name
from tfperf.memory.timeline import StepPeak

CATEGORIES = ("weights", "optimizer_slots", "inputs", "constants", "activations",
              "gradients", "optimizer_update", "allocator_slack", "other")
INPUT_OPS = ("IteratorGetNext", "OptionalGetValue", "_Arg", "Placeholder")
TOP = 10


@dataclass
class Group:
    """Live bytes at the peak sharing one key (an op, a layer, a line)."""

    key: str
    bytes: int = 0
    count: int = 0
    shapes: list[str] = field(default_factory=list)  # a few, largest first
    site: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"key": self.key, "bytes": self.bytes, "count": self.count,
                               "shapes": self.shapes}
        if self.site:
            out["site"] = self.site
        return out


@dataclass
class Breakdown:
    peak_bytes: int
    categories: dict[str, int]
    by_op: list[Group]
    by_layer: list[Group]
    by_line: list[Group]
    #: the largest graph constant (op name, shape, bytes): what *constants* is, next to
    #: *inputs* of the same size
    largest_constant: tuple[str, str, int] | None = None

    @property
    def covered(self) -> float:
        """The share of the peak a named category explains (all but *other*)."""
        if self.peak_bytes <= 0:
            return 0.0
        named = sum(v for k, v in self.categories.items() if k != "other")
        return min(named / self.peak_bytes, 1.0)

    def to_dict(self) -> dict[str, Any]:
        return {"peak_bytes": self.peak_bytes, "categories": self.categories,
                "covered": self.covered,
                "by_op": [g.to_dict() for g in self.by_op],
                "by_layer": [g.to_dict() for g in self.by_layer],
                "by_line": [g.to_dict() for g in self.by_line],
                "largest_constant": (dict(zip(("op", "shape", "bytes"), self.largest_constant,
                                               strict=True))
                                     if self.largest_constant else None)}


def tensor_bytes(e: AllocEvent) -> int:
    """What the tensor asked for (an event without the figure: what it was handed)."""
    return min(e.requested, e.nbytes) if e.requested > 0 else e.nbytes


def category(e: AllocEvent, optimizer_scopes: Sequence[str]) -> str:
    node = plain_name(e.op)
    if any(k in node for k in INPUT_OPS):
        return "inputs"
    if is_backward(node):
        return "gradients"
    top = node.split("/", 1)[0]
    if top in optimizer_scopes:
        return "optimizer_update"
    return "activations"


def _split_held(held: int, holders: Holders | None, constants: int = 0) -> dict[str, int]:
    """The bytes held from before the capture, split by what Python holds and the traced
    graphs' constants."""
    out = dict.fromkeys(CATEGORIES, 0)
    if holders is None:
        out["other"] = held
        return out
    known = {"weights": holders.weights_bytes, "optimizer_slots": holders.slots_bytes,
             "inputs": holders.inputs_bytes, "constants": constants}
    total = sum(known.values())
    scale = min(1.0, held / total) if total else 0.0  # never explain more than was held
    for k, v in known.items():
        out[k] = int(v * scale)
    out["other"] = max(held - sum(out[k] for k in known), 0)
    return out


def breakdown(peak: StepPeak, holders: Holders | None, sites: SiteIndex | None,
              label: Any = None) -> Breakdown:
    """``label(path, line)`` names a site (default ``path:line``)."""
    cats = _split_held(peak.held_before_bytes, holders,
                       sites.constant_bytes if sites is not None else 0)
    scopes = holders.optimizer_scopes if holders else ()
    by_op: dict[str, Group] = {}
    by_layer: dict[str, Group] = {}
    by_line: dict[str, Group] = {}
    sizes: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for e in peak.live:
        own = tensor_bytes(e)
        cats[category(e, scopes)] += own
        cats["allocator_slack"] += e.nbytes - own
        site = sites.site(e.op) if sites is not None and e.op else None
        where = (label(site.path, site.line) if label else f"{site.path}:{site.line}") \
            if site else None
        layer = layer_of(e.op) or "(top level)"
        if is_backward(e.op):
            layer += " (backward)"
        for table, key in ((by_op, e.op or "(unnamed)"), (by_layer, layer),
                           (by_line, where or "(no user line)")):
            g = table.get(key)
            if g is None:
                g = table[key] = Group(key, site=where if table is by_op else None)
            g.bytes += own
            g.count += 1
            sizes[f"{id(table)}:{key}"].append((own, e.shape))
    for table in (by_op, by_layer, by_line):
        for key, g in table.items():
            shapes = sorted(sizes[f"{id(table)}:{key}"], key=lambda s: -s[0])
            g.shapes = list(dict.fromkeys(s for _, s in shapes if s))[:3]

    def top(table: dict[str, Group]) -> list[Group]:
        return sorted(table.values(), key=lambda g: -g.bytes)[:TOP]

    largest = sites.largest_constant if sites is not None and cats["constants"] else None
    return Breakdown(peak.peak_bytes, cats, top(by_op), top(by_layer), top(by_line), largest)


__all__ = ["CATEGORIES", "Breakdown", "Group", "breakdown", "category", "tensor_bytes"]
