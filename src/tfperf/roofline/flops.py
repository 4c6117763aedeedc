"""FLOPs and bytes of one TensorFlow op, from its input and output shapes and dtype.

Counting follows XLA's cost analysis (``HloCostAnalysis``) so that an op and the cluster XLA
compiles from it count alike: a multiply-add is 2 FLOPs; an element-wise arithmetic op is 1 FLOP
per output element; transcendental functions (exp, log, tanh, sigmoid, ...) are counted apart,
as *transcendentals*, not FLOPs; a reduction is (input − output) elements of its combiner;
convolutions count only taps that land inside the input (padding is free); data movement
(transpose, gather, concat, slice...) is 0 FLOPs. Bytes are what the op must read and write
at least: every input and output once (a reshape moves nothing).

Shapes are tuples of ints; an unknown dimension (None) makes the cost unknown (None), never a
guess. ``attrs`` holds the op's attributes that change the count (``transpose_a``,
``strides``, ``padding``, ``equation``...), as TensorFlow names them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

Shape = Sequence[int | None]


@dataclass(frozen=True)
class Cost:
    flops: float
    bytes: float
    transcendentals: float = 0.0

    @property
    def intensity(self) -> float | None:
        """Arithmetic intensity: FLOPs per byte moved."""
        return self.flops / self.bytes if self.bytes else None

    def __add__(self, other: Cost) -> Cost:
        return Cost(self.flops + other.flops, self.bytes + other.bytes,
                    self.transcendentals + other.transcendentals)

    def to_dict(self) -> dict[str, Any]:
        return {"flops": self.flops, "bytes": self.bytes,
                "transcendentals": self.transcendentals, "intensity": self.intensity}


class Unknown(Exception):
    """Not enough is known (a dimension, an attribute) to count this op."""


def elements(shape: Shape) -> int:
    if any(d is None for d in shape):
        raise Unknown("a dimension is unknown")
    n = 1
    for d in shape:
        n *= int(d)  # type: ignore[arg-type]
    return n


# -- element-wise ---------------------------------------------------------------------------

# FLOPs per output element of element-wise ops (1 unless the op is a composite).
ELEMENTWISE: dict[str, int] = {op: 1 for op in (
    "Add", "AddV2", "Sub", "Mul", "MulNoNan", "Div", "DivNoNan", "RealDiv", "FloorDiv",
    "TruncateDiv", "FloorMod", "Mod", "Maximum", "Minimum", "Neg", "Abs", "Sign", "Floor",
    "Ceil", "Round", "Rint", "Relu", "Reciprocal", "Inv", "Square", "BiasAdd", "Less",
    "LessEqual", "Greater", "GreaterEqual", "Equal", "NotEqual", "LogicalAnd", "LogicalOr",
    "LogicalNot", "Select", "SelectV2", "ClipByValue", "AddN", "LeakyRelu", "Relu6", "OnesLike",
    "ZerosLike")}
ELEMENTWISE.update({"SquaredDifference": 2, "ClipByValue": 2, "Relu6": 2, "LeakyRelu": 2,
                    "OnesLike": 0, "ZerosLike": 0, "BiasAddGrad": 0, "ReluGrad": 1})
# Transcendental per output element (XLA counts these apart from FLOPs).
TRANSCENDENTAL = {"Exp", "Expm1", "Log", "Log1p", "Tanh", "Sigmoid", "Sqrt", "Rsqrt", "Pow",
                  "Sin", "Cos", "Tan", "Atan", "Atan2", "Erf", "Erfc", "Softplus", "Softsign"}
# Composite element-wise ops: (FLOPs, transcendentals) per element, as XLA lowers them.
COMPOSITE = {"Elu": (2, 1), "Selu": (3, 1), "Gelu": (4, 1), "TanhGrad": (3, 0),
             "SigmoidGrad": (3, 0), "SqrtGrad": (2, 0), "RsqrtGrad": (4, 0)}
MOVEMENT = {"Transpose", "ConjugateTranspose", "ConcatV2", "Concat", "Pack", "Unpack", "Slice",
            "StridedSlice", "Pad", "PadV2", "MirrorPad", "Tile", "BroadcastTo", "Reverse",
            "ReverseV2", "Split", "SplitV", "Gather", "GatherV2", "GatherNd", "ResourceGather",
            "ScatterNd", "TensorScatterUpdate", "OneHot", "Cast", "Fill", "Range",
            "StridedSliceGrad", "Roll", "Where", "Identity", "IdentityN", "Snapshot",
            "ExpandDims", "Squeeze", "Reshape"}
FREE = {"Reshape", "ExpandDims", "Squeeze", "Identity", "IdentityN", "Snapshot", "Const",
        "Placeholder", "_Arg", "_Retval", "NoOp", "ReadVariableOp", "Shape", "ShapeN", "Size",
        "Rank", "StopGradient", "VarHandleOp"}
REDUCTIONS = {"Sum": 1, "Mean": 1, "Max": 1, "Min": 1, "Prod": 1, "All": 1, "Any": 1,
              "EuclideanNorm": 2, "ArgMax": 1, "ArgMin": 1}


def _io_bytes(inputs: Sequence[Shape], outputs: Sequence[Shape], itemsize: int) -> float:
    return float(sum(elements(s) for s in [*inputs, *outputs]) * itemsize)


def _elementwise(op: str, inputs: Sequence[Shape], outputs: Sequence[Shape], itemsize: int,
                 attrs: Mapping[str, Any]) -> Cost:
    n = elements(outputs[0])
    if op == "AddN":  # n inputs summed: n - 1 adds per element
        return Cost(float(n * (len(inputs) - 1)), _io_bytes(inputs, outputs, itemsize))
    if op in TRANSCENDENTAL:
        return Cost(0.0, _io_bytes(inputs, outputs, itemsize), float(n))
    flops, trans = COMPOSITE.get(op, (ELEMENTWISE.get(op, 1), 0))
    return Cost(float(n * flops), _io_bytes(inputs, outputs, itemsize), float(n * trans))


def _matmul(op: str, inputs: Sequence[Shape], outputs: Sequence[Shape], itemsize: int,
            attrs: Mapping[str, Any]) -> Cost:
    a = list(inputs[0])
    ta = attrs.get("transpose_a", attrs.get("adj_x", False))
    k = a[-2] if ta else a[-1]
    if k is None:
        raise Unknown("the contracted dimension is unknown")
    flops = 2.0 * elements(outputs[0]) * int(k)
    if op == "_FusedMatMul":  # + bias add and activation, one per output element each
        fused = attrs.get("fused_ops", ())
        flops += elements(outputs[0]) * len(fused)
    return Cost(flops, _io_bytes(inputs, outputs, itemsize))


def parse_einsum(equation: str) -> tuple[list[str], str]:
    eq = equation.replace(" ", "")
    lhs, _, out = eq.partition("->")
    if "..." in eq:
        raise Unknown("einsum with an ellipsis")
    return lhs.split(","), out


def _einsum(op: str, inputs: Sequence[Shape], outputs: Sequence[Shape], itemsize: int,
            attrs: Mapping[str, Any]) -> Cost:
    operands, out = parse_einsum(str(attrs.get("equation", "")))
    if len(operands) != len(inputs):
        raise Unknown("einsum equation and inputs disagree")
    size: dict[str, int] = {}
    for labels, shape in zip(operands, inputs, strict=True):
        for label, d in zip(labels, shape, strict=True):
            if d is None:
                raise Unknown("an einsum dimension is unknown")
            size[label] = max(size.get(label, 1), int(d))
    every = math.prod(size.values())
    io = _io_bytes(inputs, outputs, itemsize)
    if len(operands) == 2:
        contracted = set(size) - set(out)
        if contracted:  # a dot: one multiply-add per point of the joint index space
            return Cost(2.0 * every, io)
        return Cost(float(every), io)  # an outer or element-wise product
    # one operand: a sum over the dropped labels (or a transpose: 0)
    return Cost(float(every - math.prod(size[c] for c in out)), io)


def _valid_taps(in_size: int, out_size: int, k: int, stride: int, dilation: int,
                pad_lo: int) -> int:
    """(output position, kernel tap) pairs that land inside the input along one dimension."""
    total = 0
    for o in range(out_size):
        base = o * stride - pad_lo
        for t in range(k):
            if 0 <= base + t * dilation < in_size:
                total += 1
    return total


def _pad_lo(in_size: int, out_size: int, k: int, stride: int, dilation: int,
            padding: str, explicit: tuple[int, int] | None) -> int:
    if padding == "VALID":
        return 0
    if padding == "EXPLICIT" and explicit is not None:
        return explicit[0]
    eff = (k - 1) * dilation + 1
    total = max((out_size - 1) * stride + eff - in_size, 0)
    return total // 2  # SAME: the smaller half before


def _conv(op: str, inputs: Sequence[Shape], outputs: Sequence[Shape], itemsize: int,
          attrs: Mapping[str, Any]) -> Cost:
    """Conv2D/Conv3D/DepthwiseConv2dNative and their backprops, counted on the forward conv
    (each backprop does the forward's multiply-adds)."""
    rank = 5 if "3D" in op else 4
    fmt = str(attrs.get("data_format", "NDHWC" if rank == 5 else "NHWC"))
    channels_last = fmt.endswith("C")
    if op.endswith("BackpropInput"):  # inputs: input_sizes, filter, out_backprop
        x, w, y = outputs[0], inputs[1], inputs[2]
    elif op.endswith("BackpropFilter"):  # inputs: input, filter_sizes, out_backprop
        x, w, y = inputs[0], outputs[0], inputs[2]
    else:
        x, w, y = inputs[0], inputs[1], outputs[0]
    for s in (x, w, y):
        elements(s)
    spatial = list(range(1, rank - 1)) if channels_last else list(range(2, rank))
    strides = list(attrs.get("strides", [1] * rank))
    dilations = list(attrs.get("dilations", [1] * rank))
    padding = str(attrs.get("padding", "VALID"))
    explicit = list(attrs.get("explicit_paddings", []))
    taps = 1
    for j, dim in enumerate(spatial):
        pads = (explicit[2 * dim], explicit[2 * dim + 1]) if len(explicit) >= 2 * rank else None
        k = int(w[j])  # type: ignore[arg-type]
        lo = _pad_lo(int(x[dim]), int(y[dim]), k, int(strides[dim]),  # type: ignore[arg-type]
                     int(dilations[dim]), padding, pads)
        taps *= _valid_taps(int(x[dim]), int(y[dim]), k, int(strides[dim]),  # type: ignore
                            int(dilations[dim]), lo)
    batch = int(x[0])  # type: ignore[arg-type]
    if op.startswith("DepthwiseConv2dNative"):
        in_ch, mult = int(w[-2]), int(w[-1])  # type: ignore[arg-type]
        macs = batch * taps * in_ch * mult
    else:
        in_ch_w, out_ch = int(w[-2]), int(w[-1])  # type: ignore[arg-type]
        macs = batch * taps * in_ch_w * out_ch
    io = float((elements(x) + elements(w) + elements(y)) * itemsize)
    return Cost(2.0 * macs, io)


def _reduction(op: str, inputs: Sequence[Shape], outputs: Sequence[Shape], itemsize: int,
               attrs: Mapping[str, Any]) -> Cost:
    n_in, n_out = elements(inputs[0]), elements(outputs[0])
    flops = float((n_in - n_out) * REDUCTIONS[op])
    if op == "Mean":
        flops += n_out  # the division
    if op == "EuclideanNorm":
        return Cost(flops - (n_in - n_out) + n_in, _io_bytes(inputs[:1], outputs, itemsize),
                    float(n_out))  # squares, adds, one sqrt per output
    return Cost(flops, _io_bytes(inputs[:1], outputs, itemsize))


def _softmax(op: str, inputs: Sequence[Shape], outputs: Sequence[Shape], itemsize: int,
             attrs: Mapping[str, Any]) -> Cost:
    """Along the last axis of n: max (n-1), subtract (n), exp (n, transcendental), sum (n-1),
    then divide (n) for Softmax, or log (1, transcendental) and subtract (n) for LogSoftmax."""
    shape = list(inputs[0])
    n = int(shape[-1]) if shape and shape[-1] is not None else None
    if n is None:
        raise Unknown("the softmax axis is unknown")
    rows = elements(shape) // n if n else 0
    flops = rows * ((n - 1) + n + (n - 1) + n)
    trans = rows * n + (rows if op == "LogSoftmax" else 0)
    return Cost(float(flops), _io_bytes(inputs[:1], outputs[:1], itemsize), float(trans))


def _batch_norm(op: str, inputs: Sequence[Shape], outputs: Sequence[Shape], itemsize: int,
                attrs: Mapping[str, Any]) -> Cost:
    """Inference: (x − mean) · scale / sqrt(var + ε) + offset folded to x · a + b, 2 FLOPs an
    element (plus per channel: add, rsqrt, multiply, multiply-subtract). Training also
    computes the mean and variance: + 4 FLOPs an element."""
    n = elements(inputs[0])
    channels = elements(inputs[1])
    training = bool(attrs.get("is_training", True))
    flops = 2 * n + 4 * channels + (4 * n if training else 0)
    return Cost(float(flops), _io_bytes(inputs[:1], outputs[:1], itemsize) +
                4.0 * channels * itemsize, float(channels))


def _movement(op: str, inputs: Sequence[Shape], outputs: Sequence[Shape], itemsize: int,
              attrs: Mapping[str, Any]) -> Cost:
    if op in FREE:
        return Cost(0.0, 0.0)
    out = elements(outputs[0]) * itemsize
    if op in ("Gather", "GatherV2", "GatherNd", "ResourceGather"):  # reads what it writes
        index = elements(inputs[1]) * int(attrs.get("index_itemsize", 4))
        return Cost(0.0, float(2 * out + index))
    return Cost(0.0, _io_bytes([s for s in inputs if len(s) > 0][:1] if op in (
        "Tile", "BroadcastTo", "Fill", "Range", "OneHot") else inputs, outputs, itemsize))


def _matmul_like(op: str) -> bool:
    return op in ("MatMul", "BatchMatMul", "BatchMatMulV2", "BatchMatMulV3", "_FusedMatMul")


FormulaFn = Callable[[str, Sequence[Shape], Sequence[Shape], int, Mapping[str, Any]], Cost]


def formula(op: str) -> FormulaFn | None:
    """The function that counts ``op``, or None when tfperf has no formula for it."""
    if _matmul_like(op):
        return _matmul
    if op in ("Einsum", "XlaEinsum"):
        return _einsum
    if re.fullmatch(r"(Conv[23]D|DepthwiseConv2dNative)(Backprop(Input|Filter)(V2)?)?", op):
        return _conv
    if op in REDUCTIONS:
        return _reduction
    if op in ("Softmax", "LogSoftmax"):
        return _softmax
    if op in ("FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3"):
        return _batch_norm
    if op in MOVEMENT or op in FREE:
        return _movement
    if op in ELEMENTWISE or op in TRANSCENDENTAL or op in COMPOSITE:
        return _elementwise
    return None


def op_cost(op: str, inputs: Sequence[Shape], outputs: Sequence[Shape], itemsize: int = 4,
            attrs: Mapping[str, Any] | None = None) -> Cost | None:
    """FLOPs and bytes of ``op``; None when there is no formula or a shape is unknown."""
    fn = formula(op)
    if fn is None or not outputs:
        return None
    try:
        return fn(op, inputs, outputs, itemsize, attrs or {})
    except (Unknown, IndexError, TypeError, ValueError):
        return None
