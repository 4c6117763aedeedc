"""hlo.py's field numbers against the generated modules TensorFlow ships (the oracle)."""

from __future__ import annotations

import pytest

from tfperf.roofline import hlo


def test_field_numbers_are_xlas():
    pytest.importorskip("tensorflow")
    from tensorflow.compiler.xla import xla_data_pb2 as xd
    from tensorflow.compiler.xla.service import hlo_pb2

    def num(msg, name):
        return msg.DESCRIPTOR.fields_by_name[name].number

    ins = hlo_pb2.HloInstructionProto
    assert num(hlo_pb2.HloProto, "hlo_module") == hlo.PROTO_MODULE
    assert (num(hlo_pb2.HloModuleProto, "name"),
            num(hlo_pb2.HloModuleProto, "computations")) == (hlo.MODULE_NAME,
                                                             hlo.MODULE_COMPUTATIONS)
    comp = hlo_pb2.HloComputationProto
    assert (num(comp, "name"), num(comp, "instructions"), num(comp, "id")) == (
        hlo.COMP_NAME, hlo.COMP_INSTRUCTIONS, hlo.COMP_ID)
    assert [num(ins, n) for n in (
        "name", "opcode", "shape", "metadata", "dimensions", "window",
        "convolution_dimension_numbers", "dot_dimension_numbers", "id", "operand_ids",
        "called_computation_ids", "feature_group_count")] == [
        hlo.INS_NAME, hlo.INS_OPCODE, hlo.INS_SHAPE, hlo.INS_METADATA, hlo.INS_DIMENSIONS,
        hlo.INS_WINDOW, hlo.INS_CONV_DIMS, hlo.INS_DOT_DIMS, hlo.INS_ID, hlo.INS_OPERANDS,
        hlo.INS_CALLED, hlo.INS_FEATURE_GROUPS]
    assert [num(xd.ShapeProto, n) for n in ("element_type", "dimensions", "tuple_shapes")] == [
        hlo.SHAPE_TYPE, hlo.SHAPE_DIMS, hlo.SHAPE_TUPLE]
    assert num(xd.DotDimensionNumbers, "lhs_contracting_dimensions") == hlo.DOT_LHS_CONTRACTING
    assert [num(xd.OpMetadata, n) for n in ("op_type", "op_name", "source_file",
                                            "source_line")] == [
        hlo.META_OP_TYPE, hlo.META_OP_NAME, hlo.META_SOURCE_FILE, hlo.META_SOURCE_LINE]
    assert num(xd.Window, "dimensions") == hlo.WINDOW_DIMS
    assert [num(xd.WindowDimension, n) for n in ("size", "stride", "padding_low",
                                                 "window_dilation")] == [
        hlo.WDIM_SIZE, hlo.WDIM_STRIDE, hlo.WDIM_PAD_LOW, hlo.WDIM_DILATION]
    conv = xd.ConvolutionDimensionNumbers
    assert [num(conv, n) for n in ("input_spatial_dimensions", "output_spatial_dimensions",
                                   "kernel_input_feature_dimension")] == [
        hlo.CONV_IN_SPATIAL, hlo.CONV_OUT_SPATIAL, hlo.CONV_KERNEL_IN_FEATURE]
    types = {v.name: v.number for v in xd.PrimitiveType.DESCRIPTOR.values}
    for name, size in (("F32", 4), ("F16", 2), ("BF16", 2), ("F64", 8), ("S8", 1),
                       ("S32", 4), ("PRED", 1), ("C64", 8)):
        assert hlo.ITEMSIZE[types[name]] == size, name
