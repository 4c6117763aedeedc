"""The peak of an XLA-compiled step, from its optimized, scheduled HLO module.

``experimental_get_compiler_ir(...)(stage='optimized_hlo_serialized')`` gives the ``HloProto``
XLA will run: after fusion (a fused chain of element-wise ops writes one buffer, not one per
op) and scheduling (``HloModuleProto.schedule``: the order the entry computation runs in).
Replaying that order, each instruction's result is a buffer freed after its last user, as
XLA's buffer assignment does (it may still pack them tighter: this is the peak of what is
live, the least the heap needs). Parameters (inputs, variables) are held from before the step;
``bitcast``, ``get-tuple-element`` and ``tuple`` make no new buffer; an element-wise fusion
may write into an operand that dies with it; outputs aliased to parameters
(``input_output_alias``: variables updated in place) make none either. Loops and calls add the
peak inside their body. The instructions come from :mod:`tfperf.roofline.hlo` (no TensorFlow
needed); field numbers checked in ``tests/memory``.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from tfperf.profile.read import wire
from tfperf.profile.read.wire import LEN, VARINT
from tfperf.roofline.hlo import PROTO_MODULE, Instruction, Module, parse_module

MODULE_ENTRY_ID, MODULE_SCHEDULE, MODULE_IO_ALIAS = 6, 7, 8
SCHEDULE_SEQUENCES, SEQUENCE_IDS = 1, 1
ALIAS_ENTRIES, ALIAS_OUTPUT_INDEX = 1, 1
MAP_KEY, MAP_VALUE = 1, 2
NO_BUFFER = {"parameter", "bitcast", "get-tuple-element", "tuple", "constant",
             "after-all", "partition-id", "replica-id"}
NESTED = {"while", "call", "conditional"}


@dataclass
class HloPeak:
    peak_bytes: int
    at: str
    outputs_bytes: int
    parameters_bytes: int


@dataclass
class _Layout:
    entry: int | None
    schedule: dict[int, list[int]]
    aliased_outputs: set[int]  # top-level output tuple indices aliased to parameters


MODULE_COMPUTATIONS = 3


def _module_span(data: bytes) -> tuple[int, int]:
    """Where the ``HloModuleProto`` is: inside an ``HloProto`` (its field 1), or the whole
    buffer (``experimental_get_compiler_ir`` gives a bare module, whose field 1 is its name)."""
    for f, wt, x, y in wire.fields(data, 0, len(data)):
        if f == PROTO_MODULE and wt == LEN:
            try:
                if any(g == MODULE_COMPUTATIONS and gwt == LEN
                       for g, gwt, _, _ in wire.fields(data, x, y)):
                    return x, y
            except wire.WireError:
                pass
            break
    return 0, len(data)



def _layout(data: bytes) -> _Layout:
    a, b = _module_span(data)
    entry = None
    schedule: dict[int, list[int]] = {}
    aliased: set[int] = set()
    for f, wt, x, y in wire.fields(data, a, b):
        if f == MODULE_ENTRY_ID and wt == VARINT:
            entry = wire.signed(x)
        elif f == MODULE_SCHEDULE and wt == LEN:
            for g, gwt, p, q in wire.fields(data, x, y):
                if g != SCHEDULE_SEQUENCES or gwt != LEN:
                    continue
                key, ids = 0, []
                for h, hwt, r, s in wire.fields(data, p, q):
                    if h == MAP_KEY and hwt == VARINT:
                        key = wire.signed(r)
                    elif h == MAP_VALUE and hwt == LEN:
                        for k, kwt, u, v in wire.fields(data, r, s):
                            if k == SEQUENCE_IDS:
                                ids.extend(wire.ints(data, kwt, u, v))
                schedule[key] = ids
        elif f == MODULE_IO_ALIAS and wt == LEN:
            for g, gwt, p, q in wire.fields(data, x, y):
                if g != ALIAS_ENTRIES or gwt != LEN:
                    continue
                for h, hwt, r, s in wire.fields(data, p, q):
                    if h == ALIAS_OUTPUT_INDEX:
                        index = wire.ints(data, hwt, r, s)
                        if index:
                            aliased.add(index[0])
    return _Layout(entry, schedule, aliased)


def peak_of_module(data: bytes) -> HloPeak:
    """The transient peak of the entry computation of a serialized ``HloProto``."""
    module = parse_module(data)
    layout = _layout(data)
    entry = layout.entry if layout.entry in module.computations else (
        max(module.computations) if module.computations else None)
    if entry is None:
        return HloPeak(0, "", 0, 0)
    params = sum(i.nbytes for i in module.computations[entry] if i.opcode == "parameter")
    peak, at, outputs = _simulate(module, layout, entry, depth=0, aliased=layout.aliased_outputs)
    return HloPeak(peak, at, outputs, params)


def _simulate(module: Module, layout: _Layout, comp: int, depth: int,
              aliased: frozenset[int] | set[int] = frozenset()) -> tuple[int, str, int]:
    instructions = module.computations.get(comp, [])
    by_id = {i.id: i for i in instructions}
    order = [by_id[k] for k in layout.schedule.get(comp, []) if k in by_id] or instructions
    root = instructions[-1] if instructions else None
    users: dict[int, int] = defaultdict(int)
    for ins in order:
        for o in ins.operands:
            users[o] += 1
    owner: dict[int, int] = {}  # instruction id → the id whose buffer it uses
    size: dict[int, int] = {}
    refs: dict[int, int] = defaultdict(int)
    live = peak = 0
    at = ""
    kept: set[int] = set()
    if root is not None:
        kept = {root.id} | ({o for k, o in enumerate(root.operands) if k not in aliased}
                            if root.opcode == "tuple" else set())
    for ins in order:
        inner = 0
        if ins.opcode in NESTED and depth < 8:
            inner = max((_simulate(module, layout, c, depth + 1)[0] for c in ins.called),
                        default=0)
        buffer_of = _updated_in_place(ins, module, by_id, owner)
        if buffer_of is None:
            buffer_of = _shares(ins, owner, size, refs, users)
        if buffer_of is None:
            new = 0 if ins.opcode in NO_BUFFER else _bytes(ins)
            if root is not None and root.opcode == "tuple" and ins.id in root.operands and \
                    root.operands.index(ins.id) in aliased:
                new = 0  # written into the parameter it aliases
            owner[ins.id], size[ins.id] = ins.id, new
            live += new
            buffer_of = ins.id
        else:
            owner[ins.id] = buffer_of
        refs[buffer_of] += users[ins.id] + (ins.id in kept)
        if live + inner > peak:
            peak, at = live + inner, ins.name
        for o in ins.operands:
            b = owner.get(o)
            if b is None:
                continue
            refs[b] -= 1
            if refs[b] <= 0 and size.get(b):
                live -= size[b]
                size[b] = 0
        if refs[buffer_of] <= 0 and size.get(buffer_of):
            live -= size[buffer_of]
            size[buffer_of] = 0
    outputs = live
    return peak, at, outputs


def _bytes(ins: Instruction) -> int:
    return ins.nbytes


def _updated_in_place(ins: Instruction, module: Module, by_id: dict[int, Instruction],
                      owner: dict[int, int]) -> int | None:
    """The buffer a ``dynamic-update-slice`` (or a fusion whose root is one, through
    bitcasts) writes into: its operand's, in place. In the optimized module XLA's copy
    insertion has already made that safe (a loop's stacked state is updated per iteration,
    not copied: counting a new buffer doubled an LSTM's peak)."""
    target: int | None = None
    if ins.opcode == "dynamic-update-slice" and ins.operands:
        target = ins.operands[0]
    elif ins.opcode == "fusion" and ins.called:
        body = module.computations.get(ins.called[0], [])
        inner = {i.id: i for i in body}
        root = body[-1] if body else None
        while root is not None and root.opcode == "bitcast" and root.operands:
            root = inner.get(root.operands[0])
        if root is not None and root.opcode == "dynamic-update-slice":
            # the fusion's operand that is the updated buffer: the one of the result's size
            target = next((o for o in ins.operands
                           if (op := by_id.get(o)) is not None and op.nbytes == ins.nbytes),
                          None)
    return owner.get(target) if target is not None else None


def _shares(ins: Instruction, owner: dict[int, int], size: dict[int, int],
            refs: dict[int, int], users: dict[int, int]) -> int | None:
    """The buffer ``ins`` writes into instead of a new one, if any."""
    if ins.opcode in ("bitcast", "get-tuple-element") and ins.operands:
        return owner.get(ins.operands[0])
    if ins.opcode in ("fusion", "add", "multiply", "subtract", "divide", "maximum",
                      "minimum", "tanh", "exponential", "negate", "select", "convert"):
        want = _bytes(ins)
        for o in ins.operands:
            b = owner.get(o)
            if b is not None and refs.get(b) == 1 and size.get(b) == want and want:
                return b
    return None


__all__ = ["HloPeak", "peak_of_module"]
