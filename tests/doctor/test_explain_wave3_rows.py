"""Stop 39, wave 3: round 23's general misses as data. A stale checkpoint's ``Assign requires
shapes`` and h5py 3's ``'str' object has no attribute 'decode'`` printed alone (without the class
or the Keras frame) are TensorFlow's wordings; the checkpoint reading names the model directory
an earlier configuration left."""

from __future__ import annotations

import pytest

from tfperf.doctor.explainer import explain_log


@pytest.mark.parametrize("line", [
    "Assign requires shapes of both tensors to match. lhs shape= [36] rhs shape= [62]",
    "Assign requires shapes of both tensors to match. lhs shape= [3,3,64,10] rhs shape= [3,3,64,5]",
])
def test_assign_shapes_alone_is_a_stale_checkpoint(line):
    ex = explain_log(line + "\n")
    top = ex.causes[0]
    assert top.likely and "checkpoint" in top.likely[0][0]
    assert "delete (or move) the old checkpoint" in top.likely[0][1]


@pytest.mark.parametrize("line", [
    "AttributeError: 'str' object has no attribute 'decode'",
    "AttributeError: 'str' object has no attribute 'decode'. Did you mean: 'encode'?",
])
def test_decode_alone_is_h5py3(line):
    ex = explain_log(line + "\n")
    assert ex.verdict == "failure"
    assert "h5py" in ex.causes[0].likely[0][1]


def test_decode_of_another_object_is_not_read_as_h5py():  # VALID twin
    ex = explain_log("AttributeError: 'NoneType' object has no attribute 'decode'\n")
    assert not any("h5py" in f for c in ex.causes for _, f in c.likely)


_CONDA = ("UnsatisfiableError: The following specifications were found\n"
          "to be incompatible with the existing python installation in your environment:\n\n"
          "Specifications:\n\n  - {spec} -> python[version='>=3.5,<3.6.0a0|>=3.7,<3.8.0a0']\n\n"
          "Your python: python=3.9.7\n")


def test_conda_tf_without_a_build_for_the_python():
    ex = explain_log(_CONDA.format(spec="tensorflow-gpu==2.0.0"))
    top = ex.causes[0]
    assert top.label == "tf-no-build-for-python"
    assert "tensorflow-gpu 2.0.0" in top.detail and ">=3.7,<3.8.0a0" in top.detail


def test_conda_other_package_is_not_tensorflows_python():  # VALID twin
    ex = explain_log(_CONDA.format(spec="numpy==1.16.0"))
    assert all(c.label != "tf-no-build-for-python" for c in ex.causes)


def test_cuda_initialization_error_names_the_driver_first():
    ex = explain_log("tensorflow.python.framework.errors_impl.InternalError: cudaSetDevice() "
                     "failed. Status: initialization error\n")
    top = ex.causes[0]
    assert "driver" in top.likely[0][0] and "Update the NVIDIA driver" in top.likely[0][1]
    assert "fork" in top.likely[1][0]


def test_cuda_symbol_not_found_keeps_its_row():  # VALID twin: another status of the same call
    ex = explain_log("tensorflow.python.framework.errors_impl.InternalError: cudaGetDevice() "
                     "failed. Status: cudaGetDevice symbol not found.\n")
    assert ex.causes[0].label == "cuda-runtime-mismatch"
