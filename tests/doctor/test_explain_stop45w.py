"""Stop 45, wave 2 (round 30 read as development): known classes in wordings the rows did not
read — TensorFlow.js's shapes in brackets, TF 1.x's TFLite buffer wording, a paraphrased unknown
layer, a TFLite package in a pip error, pip's Python range — each with a twin that stays apart."""

from __future__ import annotations

from tfperf.doctor.explainer import explain_log


def _top(log: str) -> tuple[str, str, str]:
    ex = explain_log(log)
    if not ex.causes:
        return "-", ex.verdict, ""
    top = ex.causes[0]
    return top.label, top.severity, top.detail or ""


# --- TensorFlow.js's input check: shapes in brackets, null for the free axis -----------------

def test_a_tfjs_input_check_with_bracketed_shapes_is_an_input_shape_mismatch():
    # written for this test in TensorFlow.js's wording (round 30's reimprove23 is the same form)
    label, severity, detail = _top(
        "Uncaught (in promise) Error: Error when checking : expected conv2d_Conv2D1_input to "
        "have shape [null,28,28,1] but got array with shape [28,28,1].\n")
    assert (label, severity) == ("input-shape-mismatch", "failure")
    assert "batch axis" in detail


def test_a_tfjs_input_check_of_another_size_says_so():
    label, _, detail = _top(
        "Error: Error when checking : expected dense_Dense1_input to have shape [null,12] but "
        "got array with shape [1,14].\n")
    assert label == "input-shape-mismatch" and "other sizes" in detail


def test_the_target_check_in_brackets_stays_the_labels():
    # twin: the target check is the labels', not the input's
    label, _, _ = _top("Error: Error when checking target: expected dense_3 to have shape "
                       "(None, 10) but got array with shape (32, 1)\n")
    assert label == "labels-output-mismatch"


# --- TFLite's Java buffer, TF 1.x wording -----------------------------------------------------

def test_tf1_tflite_buffer_wording_reads_the_bytes_and_the_image_sizes():
    label, _, detail = _top(
        "java.lang.IllegalArgumentException: Cannot convert between a TensorFlowLite buffer "
        "with 602112 bytes and a ByteBuffer with 150528 bytes.\n")
    assert label == "tflite-input-bytes-mismatch"
    # 224x224x3 float32 against 224x224x3 uint8: a type 4 times narrower
    assert "uint8 data for a float32 input" in detail


def test_a_size_mismatch_at_one_width_names_both_image_sizes():
    label, _, detail = _top(
        "java.lang.IllegalArgumentException: Cannot convert between a TensorFlowLite buffer "
        "with 1072812 bytes and a ByteBuffer with 270000 bytes.\n")
    assert label == "tflite-input-bytes-mismatch"
    assert "299x299x3 float32" in detail and "150x150x3" in detail


def test_byte_counts_that_are_no_square_image_give_no_sizes():
    # twin: 1000 and 3000 bytes are no square image at one width
    _, _, detail = _top("java.lang.IllegalArgumentException: Cannot copy to a TensorFlowLite "
                        "tensor (input_1) with 1000 bytes from a Java Buffer with 3004 bytes.\n")
    assert "another shape" in detail and " in the buffer" not in detail


# --- a paraphrased unknown layer ---------------------------------------------------------------

def test_a_paraphrased_unknown_functional_layer_is_the_newer_keras_class():
    label, _, detail = _top("At loading time I got `ValueError: unknown layer : functional`.\n")
    assert label == "keras-unknown-object"
    assert "Functional" in detail and "TF 2.3" in detail


def test_a_custom_layer_in_lower_case_stays_a_custom_class():
    # twin: a name that is no built-in class stays a custom one
    _, _, detail = _top("ValueError: Unknown layer: attention_block\n")
    assert "custom" in detail


# --- pip errors about TensorFlow-family packages ------------------------------------------------

def test_no_wheel_of_a_tflite_package_is_read_not_set_apart():
    ex = explain_log("ERROR: Could not find a version that satisfies the requirement "
                     "tflite-runtime==2.14.0 (from versions: 2.1.0.post1, 2.5.0)\n"
                     "ERROR: No matching distribution found for tflite-runtime==2.14.0\n")
    assert ex.causes and ex.causes[0].severity == "failure"
    assert "Python" in ex.causes[0].fix


def test_no_wheel_of_an_unrelated_package_stays_not_tensorflows():
    # twin: a package with no TensorFlow name is still not blamed on TensorFlow
    ex = explain_log("ERROR: Could not find a version that satisfies the requirement "
                     "leftpad==9.9 (from versions: 0.1)\n")
    assert not ex.causes


def test_a_package_outside_its_python_range_names_the_range():
    label, severity, detail = _top(
        "ERROR: Package 'typing' requires a different Python: 3.10.4 not in '>=2.7, <3.5'\n")
    assert (label, severity) == ("pip-python-out-of-range", "failure")
    assert "typing" in detail and ">=2.7, <3.5" in detail and "3.10.4" in detail


def test_a_python_range_in_prose_is_not_the_error():
    # twin: a sentence about Python versions is no pip error
    assert _top("This package requires a different Python version than yours.\n")[0] != \
        "pip-python-out-of-range"
