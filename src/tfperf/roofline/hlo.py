"""FLOPs and bytes of the ops of an XLA cluster, from the ``HloProto`` a capture stores.

When TensorFlow compiles a cluster (``jit_compile=True``) under the profiler, the capture's
``/host:metadata`` plane keeps the compiled module as an ``HloProto``, and each executed HLO
op is an event named like the instruction. Every instruction has its shape; the counting
follows XLA's cost analysis as :mod:`tfperf.roofline.flops` does for TF ops (a fusion counts
the instructions it fuses; its bytes are its operands and result only).

Field numbers are those of XLA's ``hlo.proto`` and ``xla_data.proto``; ``tests/roofline``
checks each against the generated modules TensorFlow ships. Read with tfperf's own protobuf
reader: no TensorFlow needed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from tfperf.profile.read import wire
from tfperf.profile.read.wire import LEN, VARINT
from tfperf.roofline.flops import Cost

# HloProto.hlo_module; HloModuleProto.name / .computations
PROTO_MODULE, MODULE_NAME, MODULE_COMPUTATIONS = 1, 1, 3
# HloComputationProto
COMP_NAME, COMP_INSTRUCTIONS, COMP_ID = 1, 2, 5
# HloInstructionProto
INS_NAME, INS_OPCODE, INS_SHAPE, INS_METADATA, INS_DIMENSIONS, INS_WINDOW = 1, 2, 3, 7, 14, 15
INS_CONV_DIMS, INS_DOT_DIMS, INS_ID, INS_OPERANDS, INS_CALLED = 16, 30, 35, 36, 38
INS_FEATURE_GROUPS = 50
# ShapeProto
SHAPE_TYPE, SHAPE_DIMS, SHAPE_TUPLE = 2, 3, 4
# DotDimensionNumbers
DOT_LHS_CONTRACTING = 1
# OpMetadata
META_OP_TYPE, META_OP_NAME, META_SOURCE_FILE, META_SOURCE_LINE = 1, 2, 3, 4
# Window.dimensions → WindowDimension
WINDOW_DIMS = 1
WDIM_SIZE, WDIM_STRIDE, WDIM_PAD_LOW, WDIM_DILATION = 1, 2, 3, 5
# ConvolutionDimensionNumbers
CONV_IN_SPATIAL, CONV_OUT_SPATIAL, CONV_KERNEL_IN_FEATURE = 11, 12, 3

# PrimitiveType → bytes per element (xla_data.proto's enum values)
ITEMSIZE = {1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 6: 1, 7: 2, 8: 4, 9: 8, 10: 2, 11: 4, 12: 8,
            15: 8, 16: 2, 18: 16, 19: 1, 20: 1}
DTYPE = {10: "float16", 11: "float32", 12: "float64", 16: "bfloat16", 2: "int8", 4: "int32",
         19: "float8", 20: "float8"}
TRANSCENDENTAL = {"exponential", "exponential-minus-one", "log", "log-plus-one", "tanh",
                  "logistic", "sqrt", "rsqrt", "cbrt", "power", "sine", "cosine", "tan",
                  "atan2", "erf"}
ELEMENTWISE = {"add", "subtract", "multiply", "divide", "maximum", "minimum", "negate", "abs",
               "sign", "floor", "ceil", "round-nearest-even", "round-nearest-afz", "compare",
               "select", "and", "or", "not", "xor", "remainder", "clamp", "convert",
               "shift-left", "shift-right-logical", "shift-right-arithmetic", "popcnt"}


@dataclass
class Instruction:
    id: int = 0
    name: str = ""
    opcode: str = ""
    dims: list[int] = field(default_factory=list)
    dtype: int = 0
    tuple_bytes: int = 0  # a tuple's leaves, when the result is a tuple
    operands: list[int] = field(default_factory=list)
    called: list[int] = field(default_factory=list)
    reduce_dims: list[int] = field(default_factory=list)
    lhs_contracting: list[int] = field(default_factory=list)
    window: list[dict[str, int]] = field(default_factory=list)
    conv: dict[int, list[int]] = field(default_factory=dict)
    feature_groups: int = 1
    op_type: str = ""
    op_name: str = ""
    source: str | None = None

    @property
    def elements(self) -> int:
        return math.prod(self.dims)

    @property
    def nbytes(self) -> int:
        return self.tuple_bytes or self.elements * ITEMSIZE.get(self.dtype, 4)


@dataclass
class Module:
    name: str
    computations: dict[int, list[Instruction]] = field(default_factory=dict)
    by_id: dict[int, Instruction] = field(default_factory=dict)

    def cost(self, ins: Instruction) -> Cost:
        """FLOPs (and transcendentals) of ``ins``; bytes of its operands and result."""
        flops, trans = self._flops(ins, depth=0)
        moved = ins.nbytes + sum(self.by_id[o].nbytes for o in ins.operands if o in self.by_id)
        if ins.opcode in ("parameter", "constant", "tuple", "get-tuple-element", "bitcast"):
            moved = 0
        return Cost(float(flops), float(moved), float(trans))

    def costs(self) -> dict[str, tuple[Cost, Instruction]]:
        """Cost of every instruction, by name (the name the capture's events carry)."""
        return {ins.name: (self.cost(ins), ins) for ins in self.by_id.values()}

    def _flops(self, ins: Instruction, depth: int) -> tuple[int, int]:
        op = ins.opcode
        if op in ("fusion", "call", "custom-call") and ins.called and depth < 16:
            f = t = 0
            for comp in ins.called:
                for sub in self.computations.get(comp, []):
                    a, b = self._flops(sub, depth + 1)
                    f, t = f + a, t + b
            return f, t
        if op == "dot":
            lhs = self.by_id.get(ins.operands[0]) if ins.operands else None
            k = math.prod(lhs.dims[d] for d in ins.lhs_contracting) if lhs else 1
            return 2 * ins.elements * k, 0
        if op == "convolution":
            return self._conv(ins), 0
        if op in ("reduce", "reduce-window"):
            src = self.by_id.get(ins.operands[0]) if ins.operands else None
            n_in = src.elements if src else 0
            per = sum(self._flops(s, depth + 1)[0] for c in ins.called
                      for s in self.computations.get(c, [])) or 1
            return max(n_in - ins.elements, 0) * per, 0
        if op in TRANSCENDENTAL:
            return 0, ins.elements
        if op in ELEMENTWISE:
            return ins.elements, 0
        return 0, 0

    def _conv(self, ins: Instruction) -> int:
        lhs = self.by_id.get(ins.operands[0]) if ins.operands else None
        rhs = self.by_id.get(ins.operands[1]) if len(ins.operands) > 1 else None
        if lhs is None or rhs is None:
            return 0
        in_sp = ins.conv.get(CONV_IN_SPATIAL, [])
        out_sp = ins.conv.get(CONV_OUT_SPATIAL, [])
        kin = ins.conv.get(CONV_KERNEL_IN_FEATURE, [0])[0]
        taps = 1
        for j, w in enumerate(ins.window):
            in_size, out_size = lhs.dims[in_sp[j]], ins.dims[out_sp[j]]
            valid = 0
            for o in range(out_size):
                base = o * w.get("stride", 1) - w.get("pad_low", 0)
                for t in range(w.get("size", 1)):
                    if 0 <= base + t * w.get("dilation", 1) < in_size:
                        valid += 1
            taps *= valid
        out_spatial = math.prod(ins.dims[d] for d in out_sp) or 1
        # per output element: (valid taps / output positions) · input features of a group
        return 2 * ins.elements // out_spatial * taps * rhs.dims[kin]



def _shape(buf: bytes, a: int, b: int, ins: Instruction) -> None:
    for f, wt, x, y in wire.fields(buf, a, b):
        if f == SHAPE_TYPE and wt == VARINT:
            ins.dtype = x
        elif f == SHAPE_DIMS:
            ins.dims.extend(wire.ints(buf, wt, x, y))
        elif f == SHAPE_TUPLE and wt == LEN:
            leaf = Instruction()
            _shape(buf, x, y, leaf)
            ins.tuple_bytes += leaf.nbytes


def _instruction(buf: bytes, a: int, b: int) -> Instruction:
    ins = Instruction()
    source_file, source_line = "", 0
    for f, wt, x, y in wire.fields(buf, a, b):
        if f == INS_NAME and wt == LEN:
            ins.name = buf[x:y].decode("utf-8", "replace")
        elif f == INS_OPCODE and wt == LEN:
            ins.opcode = buf[x:y].decode("utf-8", "replace")
        elif f == INS_SHAPE and wt == LEN:
            _shape(buf, x, y, ins)
        elif f == INS_ID and wt == VARINT:
            ins.id = wire.signed(x)
        elif f == INS_OPERANDS:
            ins.operands.extend(wire.ints(buf, wt, x, y))
        elif f == INS_CALLED:
            ins.called.extend(wire.ints(buf, wt, x, y))
        elif f == INS_DIMENSIONS:
            ins.reduce_dims.extend(wire.ints(buf, wt, x, y))
        elif f == INS_FEATURE_GROUPS and wt == VARINT:
            ins.feature_groups = max(x, 1)
        elif f == INS_DOT_DIMS and wt == LEN:
            for g, gwt, p, q in wire.fields(buf, x, y):
                if g == DOT_LHS_CONTRACTING:
                    ins.lhs_contracting.extend(wire.ints(buf, gwt, p, q))
        elif f == INS_CONV_DIMS and wt == LEN:
            for g, gwt, p, q in wire.fields(buf, x, y):
                ins.conv.setdefault(g, []).extend(wire.ints(buf, gwt, p, q))
        elif f == INS_WINDOW and wt == LEN:
            for g, gwt, p, q in wire.fields(buf, x, y):
                if g == WINDOW_DIMS and gwt == LEN:
                    dim: dict[str, int] = {}
                    for h, _hwt, v, _ in wire.fields(buf, p, q):
                        key = {WDIM_SIZE: "size", WDIM_STRIDE: "stride",
                               WDIM_PAD_LOW: "pad_low", WDIM_DILATION: "dilation"}.get(h)
                        if key:
                            dim[key] = wire.signed(v)
                    ins.window.append(dim)
        elif f == INS_METADATA and wt == LEN:
            for g, gwt, p, q in wire.fields(buf, x, y):
                if gwt == LEN and g in (META_OP_TYPE, META_OP_NAME, META_SOURCE_FILE):
                    text = buf[p:q].decode("utf-8", "replace")
                    if g == META_OP_TYPE:
                        ins.op_type = text
                    elif g == META_OP_NAME:
                        ins.op_name = text
                    else:
                        source_file = text
                elif g == META_SOURCE_LINE and gwt == VARINT:
                    source_line = p
    if source_file:
        ins.source = f"{source_file}:{source_line}"
    return ins


def parse_module(data: bytes) -> Module:
    """An ``HloProto`` (or a bare ``HloModuleProto``) → its instructions. Raises WireError."""
    buf, a, b = data, 0, len(data)
    for f, wt, x, y in wire.fields(buf, a, b):
        if f == PROTO_MODULE and wt == LEN:
            # HloProto wraps the module; a bare module starts with its name (also field 1):
            # a wrapper's field 1 parses as a message whose fields include computations.
            inner = list(wire.fields(buf, x, y)) if _is_module(buf, x, y) else None
            if inner is not None:
                a, b = x, y
            break
    module = Module(name="")
    for f, wt, x, y in wire.fields(buf, a, b):
        if f == MODULE_NAME and wt == LEN:
            module.name = buf[x:y].decode("utf-8", "replace")
        elif f == MODULE_COMPUTATIONS and wt == LEN:
            comp_id, instructions = 0, []
            for g, gwt, p, q in wire.fields(buf, x, y):
                if g == COMP_INSTRUCTIONS and gwt == LEN:
                    instructions.append(_instruction(buf, p, q))
                elif g == COMP_ID and gwt == VARINT:
                    comp_id = wire.signed(p)
            module.computations[comp_id] = instructions
            for ins in instructions:
                module.by_id[ins.id] = ins
    return module


def _is_module(buf: bytes, a: int, b: int) -> bool:
    try:
        return any(f == MODULE_COMPUTATIONS and wt == LEN for f, wt, _, _ in
                   wire.fields(buf, a, b))
    except wire.WireError:
        return False


def capture_costs(blobs: list[tuple[str, Any]], read_blob: Any
                  ) -> dict[tuple[str, str], tuple[Cost, str, Instruction]]:
    """Per (module, HLO op name) in a capture: its cost, the dtype of its result, and the
    instruction. ``blobs``: (metadata name, HloProto bytes or Blob) from the metadata plane;
    the module key is that name, ``<module>(<program id>)``, as events name their module."""
    out: dict[tuple[str, str], tuple[Cost, str, Instruction]] = {}
    for key, value in blobs:
        data = value if isinstance(value, bytes) else read_blob(value)
        try:
            module = parse_module(data)
        except wire.WireError:
            continue
        for name, (cost, ins) in module.costs().items():
            out[(key, name)] = (cost, DTYPE.get(ins.dtype, "?"), ins)
    return out
