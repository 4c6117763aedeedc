"""FLOP formulas, exact on op/shape cases whose counts are worked out by hand here."""

from __future__ import annotations

import pytest

from tfperf.roofline.flops import Cost, op_cost

F32 = 4

# (op, inputs, outputs, attrs, FLOPs, transcendentals, bytes); bytes = every input and output
# once (f32), except where the op moves nothing (reshape) or reads what it writes (gather).
CASES = [
    ("MatMul", [(2, 3), (3, 4)], [(2, 4)], {}, 2 * 2 * 4 * 3, 0, (6 + 12 + 8) * F32),
    ("MatMul", [(256, 512), (512, 128)], [(256, 128)], {}, 2 * 256 * 128 * 512, 0,
     (256 * 512 + 512 * 128 + 256 * 128) * F32),
    ("MatMul", [(3, 2), (3, 4)], [(2, 4)], {"transpose_a": True}, 2 * 2 * 4 * 3, 0, 26 * F32),
    ("MatMul", [(2, 3), (4, 3)], [(2, 4)], {"transpose_b": True}, 2 * 2 * 4 * 3, 0, 26 * F32),
    ("BatchMatMulV2", [(8, 16, 32), (8, 32, 64)], [(8, 16, 64)], {}, 2 * 8 * 16 * 64 * 32, 0,
     (8 * 16 * 32 + 8 * 32 * 64 + 8 * 16 * 64) * F32),
    ("BatchMatMulV2", [(8, 16, 32), (32, 64)], [(8, 16, 64)], {}, 2 * 8 * 16 * 64 * 32, 0,
     (8 * 16 * 32 + 32 * 64 + 8 * 16 * 64) * F32),
    ("BatchMatMulV3", [(4, 32, 16), (4, 32, 8)], [(4, 16, 8)], {"adj_x": True},
     2 * 4 * 16 * 8 * 32, 0, (4 * 32 * 16 + 4 * 32 * 8 + 4 * 16 * 8) * F32),
    ("Einsum", [(2, 3), (3, 5)], [(2, 5)], {"equation": "ij,jk->ik"}, 2 * 2 * 3 * 5, 0,
     (6 + 15 + 10) * F32),
    ("Einsum", [(4, 2, 3), (4, 3, 5)], [(4, 2, 5)], {"equation": "bij,bjk->bik"},
     2 * 4 * 2 * 3 * 5, 0, (24 + 60 + 40) * F32),
    ("Einsum", [(6, 7)], [(6,)], {"equation": "ij->i"}, 6 * 7 - 6, 0, (42 + 6) * F32),
    ("Einsum", [(3,), (4,)], [(3, 4)], {"equation": "i,j->ij"}, 12, 0, (3 + 4 + 12) * F32),
    ("Conv2D", [(1, 5, 5, 1), (3, 3, 1, 1)], [(1, 3, 3, 1)], {"padding": "VALID"},
     2 * 9 * 9, 0, (25 + 9 + 9) * F32),
    # SAME 3x3 on 4x4, stride 1: taps inside the input per axis = 2+3+3+2 = 10 → 10·10 = 100
    ("Conv2D", [(2, 4, 4, 3), (3, 3, 3, 8)], [(2, 4, 4, 8)], {"padding": "SAME"},
     2 * 2 * 100 * 3 * 8, 0, (96 + 216 + 256) * F32),
    # VALID 3x3 stride 2 on 7x7 → 3x3 outputs, every tap inside: 3·3 outputs × 9 taps
    ("Conv2D", [(1, 7, 7, 2), (3, 3, 2, 4)], [(1, 3, 3, 4)],
     {"padding": "VALID", "strides": [1, 2, 2, 1]}, 2 * 81 * 2 * 4, 0,
     (98 + 72 + 36) * F32),
    ("Conv2D", [(1, 2, 6, 6), (3, 3, 2, 4)], [(1, 4, 4, 4)],
     {"padding": "VALID", "data_format": "NCHW"}, 2 * 16 * 9 * 2 * 4, 0,
     (72 + 72 + 64) * F32),
    ("DepthwiseConv2dNative", [(1, 5, 5, 4), (3, 3, 4, 2)], [(1, 3, 3, 8)],
     {"padding": "VALID"}, 2 * 81 * 4 * 2, 0, (100 + 72 + 72) * F32),
    ("Conv2DBackpropInput", [(4,), (3, 3, 1, 1), (1, 3, 3, 1)], [(1, 5, 5, 1)],
     {"padding": "VALID"}, 2 * 81, 0, (25 + 9 + 9) * F32),
    ("Conv2DBackpropFilter", [(1, 5, 5, 1), (4,), (1, 3, 3, 1)], [(3, 3, 1, 1)],
     {"padding": "VALID"}, 2 * 81, 0, (25 + 9 + 9) * F32),
    ("Conv3D", [(1, 4, 4, 4, 1), (2, 2, 2, 1, 3)], [(1, 3, 3, 3, 3)], {"padding": "VALID"},
     2 * 27 * 8 * 3, 0, (64 + 24 + 81) * F32),
    ("AddV2", [(10, 20), (10, 20)], [(10, 20)], {}, 200, 0, 600 * F32),
    ("AddV2", [(10, 20), (20,)], [(10, 20)], {}, 200, 0, (200 + 20 + 200) * F32),
    ("Mul", [(7,), ()], [(7,)], {}, 7, 0, (7 + 1 + 7) * F32),
    ("Relu", [(3, 4)], [(3, 4)], {}, 12, 0, 24 * F32),
    ("SquaredDifference", [(5,), (5,)], [(5,)], {}, 10, 0, 15 * F32),
    ("AddN", [(4,), (4,), (4,)], [(4,)], {}, 8, 0, 16 * F32),
    ("Exp", [(6, 6)], [(6, 6)], {}, 0, 36, 72 * F32),
    ("Sigmoid", [(9,)], [(9,)], {}, 0, 9, 18 * F32),
    ("Sum", [(8, 16)], [(8,)], {}, 8 * 16 - 8, 0, (128 + 8) * F32),
    ("Sum", [(8, 16), (1,)], [(1, 16)], {}, 128 - 16, 0, (128 + 16) * F32),
    ("Mean", [(4, 5)], [(4,)], {}, (20 - 4) + 4, 0, (20 + 4) * F32),
    ("Max", [(3, 3, 3)], [()], {}, 26, 0, (27 + 1) * F32),
    # softmax over rows of 10: max 9, subtract 10, sum 9, divide 10 = 38 FLOPs; 10 exps
    ("Softmax", [(3, 10)], [(3, 10)], {}, 3 * 38, 30, 60 * F32),
    ("LogSoftmax", [(2, 10)], [(2, 10)], {}, 2 * 38, 2 * 10 + 2, 40 * F32),
    ("FusedBatchNormV3", [(2, 4, 4, 3), (3,), (3,), (3,), (3,)], [(2, 4, 4, 3)],
     {"is_training": False}, 2 * 96 + 4 * 3, 3, (96 + 96 + 12) * F32),
    ("Transpose", [(3, 4), (2,)], [(4, 3)], {}, 0, 0, (12 + 2 + 12) * F32),
    ("Reshape", [(3, 4), (1,)], [(12,)], {}, 0, 0, 0),
    ("GatherV2", [(100, 8), (5,), ()], [(5, 8)], {}, 0, 0, 2 * 40 * F32 + 5 * 4),
    ("ConcatV2", [(2, 3), (2, 5), ()], [(2, 8)], {}, 0, 0, (6 + 10 + 1 + 16) * F32),
]


@pytest.mark.parametrize(("op", "inputs", "outputs", "attrs", "flops", "trans", "nbytes"),
                         CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_formula_is_exact(op, inputs, outputs, attrs, flops, trans, nbytes):
    cost = op_cost(op, inputs, outputs, F32, attrs)
    assert cost == Cost(float(flops), float(nbytes), float(trans))


def test_at_least_30_cases():
    assert len(CASES) >= 30 and len({c[0] for c in CASES}) >= 20


@pytest.mark.parametrize(("op", "inputs", "outputs"), [
    ("MatMul", [(None, 3), (3, 4)], [(None, 4)]),
    ("NoSuchOp", [(3,)], [(3,)]),
    ("Einsum", [(2, 3)], [(2,)]),  # no equation
])
def test_unknown_is_none_not_a_guess(op, inputs, outputs):
    assert op_cost(op, inputs, outputs, F32, {}) is None


def test_intensity_is_flops_per_byte():
    cost = op_cost("MatMul", [(64, 64), (64, 64)], [(64, 64)], F32)
    assert cost is not None and cost.intensity == pytest.approx(2 * 64**3 / (3 * 64 * 64 * 4))
