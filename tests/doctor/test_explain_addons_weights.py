"""Errors of TensorFlow's family whose names do not say "tensorflow" (round 29, re-read as
development): an add-on's module (tf_agents) and a model's TensorFlow weights (Hugging Face's
tf_model.h5, TF* model classes) tie the error to TensorFlow; a list a message introduces goes on
across the blank lines between its items. Real-shaped logs, each with twins that stay apart."""

from __future__ import annotations

import pytest

from tfperf.doctor.explainer import explain_log

ADDON = ("Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n"
         "    from tf_agents.policies import policy_saver\n"
         "ImportError: cannot import name 'policy_saver' from 'tf_agents.policies'\n")
HUB = ("OSError: facebook/mbart-large-cc25 does not appear to have a file named tf_model.h5 but "
       "there is a file for PyTorch weights. Use `from_pt=True` to load this model from those "
       "weights.\n")
LISTED = ("OSError: Can't load weights for 'asafaya/bert-base-arabic'. Make sure that:\n\n"
          "- 'asafaya/bert-base-arabic' is a correct model identifier listed on the hub\n\n"
          "- or 'asafaya/bert-base-arabic' is the correct path to a directory containing a "
          "file named one of tf_model.h5, pytorch_model.bin.\n")


def _top(log: str):
    ex = explain_log(log)
    assert ex.causes, ex.not_tensorflow
    return ex.causes[0]


def test_an_addons_missing_name_says_upgrade_the_addon():
    top = _top(ADDON)
    assert top.label == "import-error" and top.fix.startswith("1) Upgrade the add-on")


def test_a_model_without_tensorflow_weights_says_from_pt():
    for log in (HUB, LISTED):
        top = _top(log)
        assert top.label == "o-s-error" and "from_pt=True" in top.fix.split("2)")[0], log


def test_the_list_after_the_blank_lines_belongs_to_the_message():
    top = _top(LISTED)
    assert [ln.number for ln in top.lines][:2] == [1, 3]


def test_twins_of_other_packages_stay_not_tensorflows():
    other_import = ADDON.replace("tf_agents", "my_agents")
    other_file = ("OSError: Can't open 'data.csv'. Make sure that:\n\n- the path exists\n\n"
                  "- or the folder holds data.csv\n")
    for log in (other_import, other_file):
        ex = explain_log(log)
        assert not ex.causes and ex.not_tensorflow, log


def test_an_addon_name_that_exists_elsewhere_keeps_the_generic_cause_first():
    # a name missing from a non-add-on package, in a TensorFlow traceback: the version-pair
    # cause, not the add-on's
    log = ADDON.replace("tf_agents.policies", "keras.engine").replace("policy_saver", "topology")
    top = _top(log)
    assert not top.fix.startswith("1) Upgrade the add-on"), top.fix


# --- TensorFlow Lite inputs: what the numbers say -------------------------------------------

def _bytes(want: int, got: int) -> str:
    return (f"java.lang.IllegalArgumentException: Cannot copy to a TensorFlowLite tensor "
            f"(input) with {want} bytes from a Java Buffer with {got} bytes.")


def test_a_buffer_four_times_the_input_is_float_data_for_a_quantized_model():
    top = _top(_bytes(110592, 442368))
    assert top.label == "tflite-input-bytes-mismatch"
    assert "(4x): float32 data for a uint8/int8 input" in top.detail


def test_a_buffer_of_another_size_is_another_shape_not_a_type():
    top = _top(_bytes(110592, 120000))  # 120000 / 110592 is no type width
    assert "not a whole type width apart, so another shape" in top.detail
    quarter = _top(_bytes(602112, 150528))
    assert "uint8 data for a float32 input" in quarter.detail


def test_a_dimension_mismatch_names_the_input_dimension_and_the_factor():
    top = _top("ValueError: Cannot set tensor: Dimension mismatch. Got 640 but expected 320 for "
               "dimension 1 of input 0.")
    assert top.label == "tflite-input-shape-mismatch"
    assert top.detail.startswith("input 0, dimension 1: fed 640, the model was converted "
                                 "for 320 (2x")
    odd = _top("ValueError: Cannot set tensor: Dimension mismatch. Got 3 but expected 5 for "
               "dimension 3 of input 0.")
    assert "x:" not in odd.detail and "fed 3" in odd.detail


# --- pip too old to see manylinux2010 wheels ------------------------------------------------

_OLD = ", ".join(["1.13.1", "1.13.2", "1.14.0rc0", "1.14.0rc1", "1.14.0"])


def _pip(offered: str, want: str = "~=1.15.0") -> str:
    return (f"Collecting tensorflow{want}\n  Could not find a version that satisfies the "
            f"requirement tensorflow{want} (from versions: {offered})\nNo matching "
            f"distribution found for tensorflow{want}\n")


def test_a_list_that_stops_at_2_0_betas_is_an_old_pip_not_the_python():
    top = _top(_pip(_OLD + ", 2.0.0a0, 2.0.0b0, 2.0.0b1"))
    assert top.label == "no-tensorflow-wheel" and "pip older than 19.0" in top.cause
    assert top.fix.startswith("Upgrade pip")


def test_lists_of_other_shapes_keep_their_readings():
    ended = _top(_pip(_OLD))  # 1.14 the newest release then: not a pip too old
    assert "pip older than 19.0" not in ended.cause
    py38 = _top(_pip("2.2.0rc1, 2.2.0, 2.3.0", want="==1.15.0"))
    assert "pip older than 19.0" not in py38.cause and "Python 3.8" in py38.cause
    final = _top(_pip(_OLD + ", 1.15.0, 2.0.0b1, 2.0.0", want="==1.12.0"))
    assert "pip older than 19.0" not in final.cause


# --- a Keras and a TensorFlow pip installed together that do not go together ----------------

def _installed(*pkgs: str) -> str:
    return "Successfully installed absl-py-0.15.0 " + " ".join(pkgs) + " wrapt-1.12.1\n"


@pytest.mark.parametrize("pkgs, detail", [
    (("keras-2.7.0", "tensorflow-2.6.1", "tensorflow-estimator-2.7.0"),
     "Keras 2.7 with TensorFlow 2.6"),
    (("keras-3.0.1", "tensorflow-2.15.0"), "Keras 3 with TensorFlow 2.15"),
    (("keras-2.10.0", "tensorflow-gpu-2.9.1"), "Keras 2.10 with TensorFlow 2.9"),
])
def test_a_keras_of_another_minor_installed_with_tensorflow_is_a_warning(pkgs, detail):
    top = _top(_installed(*pkgs))
    assert top.label == "keras-tf-pair-installed" and top.detail == detail


@pytest.mark.parametrize("pkgs", [
    ("keras-2.6.0", "tensorflow-2.6.2"),  # the pair that goes together
    ("keras-3.3.3", "tensorflow-2.16.1"),  # Keras 3 with a TensorFlow that takes it
    ("keras-2.4.3", "tensorflow-2.3.1"),  # before TensorFlow depended on keras
    ("keras-preprocessing-1.1.2", "tensorflow-2.6.1"),  # not Keras itself
    ("keras-2.7.0", "tensorflow-estimator-2.6.0"),  # not TensorFlow itself
])
def test_pairs_that_go_together_or_are_not_the_pair_are_left_alone(pkgs):
    ex = explain_log(_installed(*pkgs))
    assert all(c.label != "keras-tf-pair-installed" for c in ex.causes)


def test_a_binary_of_another_bitness_says_use_a_64_bit_runtime():
    for log in ("Error: C:\\app\\node_modules\\@tensorflow\\tfjs-node\\lib\\napi-v4\\"
                "tfjs_binding.node is not a valid Win32 application.\n",
                "ImportError: DLL load failed: %1 is not a valid Win32 application.\n"):
        top = _top(log)
        assert top.label == "native-module-wrong-bitness" and "64-bit" in top.fix, log
    other = explain_log("ImportError: DLL load failed: The specified module could not be found.\n")
    assert all(c.label != "native-module-wrong-bitness" for c in other.causes)


def test_tensorflow_cores_compat_module_without_internals_is_a_keras_mismatch():
    # TF 1.15 and 2.0/2.1 load through tensorflow_core: a new Keras reads compat.v2.__internal__
    top = _top("AttributeError: module 'tensorflow_core.compat.v2' has no attribute "
               "'__internal__'\n")
    assert top.label == "keras-tf-version-mismatch"
    other = _top("AttributeError: module 'tensorflow_core.compat.v2' has no attribute 'foo'\n")
    assert other.label != "keras-tf-version-mismatch"
