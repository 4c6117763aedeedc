"""Stop 42, wave 2: round 27's misses (split ``rounds42``, development material since its first
score), each read by a mechanism and tested on wordings of our own, with a VALID twin that must
not get the new answer:

- a bare ``cannot import name 'tf_utils'`` is a standalone Keras newer than TensorFlow; the
  Keras to install follows the TensorFlow a pip-freeze line names (``tensorflow-gpu==1.8.0``);
- a run's own logger printing ``loss:nan`` after finite losses: the training diverged;
- a legacy Keras optimizer's checkpoint restored into TensorFlow 2.11+'s optimizer;
- standalone ``keras.backend.tensorflow_backend`` (Keras 2.3 and older) missing;
- an AutoGraph warning about tf.data's own private function is harmless;
- a bare ``cannot import name`` completed by the import line above it (two TF installs mixed);
- Keras 2's build-time ``expected ndim=4, found ndim=5`` (no received shape): Input(shape=)
  holds the sample count;
- a glibc fix names the highest GLIBC version the log needs.
"""

from __future__ import annotations

import sys
from pathlib import Path

from tfperf.doctor.explainer import explain_log

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
from score_explain import first_explanation  # noqa: E402


def _first(text: str) -> tuple[str, str]:
    """(label, the explanation a reader sees first) of the log's first cause."""
    ex = explain_log(text)
    assert ex.causes, text
    return ex.causes[0].label, first_explanation(ex.causes[0])


# --- a standalone Keras newer than TensorFlow: tf_utils --------------------------------------

_FREEZE = "pip freeze\nh5py==2.8.0\nnumpy==1.16.2\ntensorboard==1.10.0\n{tf}\nsix==1.12.0\n"
_TF_UTILS = "Using TensorFlow backend.\nImportError: cannot import name 'tf_utils'\n"


def test_tf_utils_missing_with_an_old_tf_in_pip_freeze_pins_keras_2_2() -> None:
    label, text = _first(_TF_UTILS + _FREEZE.format(tf="tensorflow==1.10.0"))
    assert label == "keras-tf-version-mismatch"
    assert "keras==2.2.4" in text and "TensorFlow 1.10" in text


def test_tf_utils_without_a_tf_version_or_with_a_newer_tf_names_no_keras_2_2() -> None:
    label, text = _first(_TF_UTILS)
    assert label == "keras-tf-version-mismatch" and "keras==2.2.4" not in text
    label, text = _first(_TF_UTILS + _FREEZE.format(tf="tensorflow==1.15.0"))
    assert label == "keras-tf-version-mismatch" and "keras==2.2.4" not in text


def test_tf_utils_imported_by_the_user_from_tf_keras_is_no_keras_mismatch() -> None:
    """keras#17728: the user's own import of a module tf.keras never published."""
    label, _ = _first("ImportError: cannot import name 'tf_utils' from 'tensorflow.keras.utils' "
                      "(/opt/venv/lib/python3.8/site-packages/tensorflow/keras/utils/__init__.py)\n")
    assert label != "keras-tf-version-mismatch"


# --- a loss that diverges -----------------------------------------------------------------------

_RUN = "".join(f"2019-05-02 10:{i:02d}:00,000:INFO: epoch {i} train loss:{v}\n"
               for i, v in enumerate(["2.301", "1.874", "1.502", "nan", "nan"]))


def test_finite_then_nan_in_the_runs_own_lines_is_divergence() -> None:
    label, text = _first(_RUN)
    assert label == "loss-nan"
    assert "diverged" in text and "learning rate" in text and "3 time(s)" in text


def test_nan_from_the_first_report_is_not_read_as_divergence() -> None:
    label, text = _first("INFO: step 0 loss = nan\nINFO: step 100 loss = nan\n")
    assert label == "loss-nan" and "diverged" not in text


def test_finite_losses_and_nan_elsewhere_stay_benign() -> None:
    ex = explain_log("INFO: epoch 1 train loss:0.731 acc 0.61\nINFO: epoch 2 train loss:0.512 "
                     "acc 0.74\nINFO: replaced 3 nan values in column 'age'\n")
    assert ex.verdict == "nothing-wrong"


# --- a legacy optimizer's checkpoint ------------------------------------------------------------

def test_legacy_optimizer_checkpoint_into_new_optimizer() -> None:
    label, text = _first(
        "  File \"train.py\", line 40, in <module>\n    ckpt.restore(manager.latest_checkpoint)\n"
        "ValueError: You are trying to restore a checkpoint from a legacy Keras optimizer into a "
        "v2.11+ Optimizer, which can cause errors. Please update the optimizer referenced in "
        "your code to be an instance of `tf.keras.optimizers.legacy.Optimizer`, e.g.: "
        "`tf.keras.optimizers.legacy.SGD`.\n")
    assert label == "legacy-optimizer-checkpoint" and "optimizers.legacy" in text


def test_the_optimizer_api_rows_keep_their_own_reading() -> None:
    label, text = _first("ValueError: decay is deprecated in the new Keras optimizer, please "
                         "check the docstring for valid arguments, or use the legacy optimizer, "
                         "e.g., tf.keras.optimizers.legacy.SGD.\n")
    assert label == "keras-optimizer-api-changed" and "learning_rate" in text


# --- standalone Keras's TensorFlow backend --------------------------------------------------------

def test_standalone_tensorflow_backend_missing_pins_keras_2_2_or_2_3() -> None:
    label, text = _first("    from keras.backend.tensorflow_backend import get_session\n"
                         "ModuleNotFoundError: No module named 'keras.backend.tensorflow_backend'"
                         "; 'keras.backend' is not a package\n")
    assert label == "module-not-found-error"
    assert "keras==2.2.4" in text and "keras==2.3.1" in text and "Keras 2.4" in text


def test_tf_keras_spelling_keeps_the_tf_keras_reading() -> None:
    _, text = _first("ModuleNotFoundError: No module named "
                     "'tensorflow.keras.backend.tensorflow_backend'\n")
    assert "multi-backend standalone Keras" not in text


# --- AutoGraph on tf.data's own function ------------------------------------------------------

def test_autograph_warning_on_tf_data_internals_is_harmless() -> None:
    label, text = _first("W0312 10:01:02.000 140 ag_logging.py:146] AutoGraph could not transform "
                         "<function _CopyToDeviceDataset.__init__.<locals>._init_func at "
                         "0x7f00aa11bb20> and will run it as-is.\n")
    assert label == "autograph-could-not-transform" and "harmless" in text


def test_autograph_warning_on_the_users_function_keeps_the_general_causes() -> None:
    label, text = _first("WARNING:tensorflow:Entity <function parse_example at 0x7f3a2b1c0d30> "
                         "could not be transformed and will be executed as-is.\n")
    assert label == "autograph-could-not-transform" and "harmless" not in text


# --- a bare ImportError completed by its import line -----------------------------------------

_BARE = ('  File "/srv/env/lib/python3.6/site-packages/tensorflow/python/ops/{mod}.py", line 9, '
         'in <module>\n    from {frm} import {names}\nImportError: cannot import name '
         "'{name}'\n")


def test_bare_import_error_reads_its_module_from_the_import_line() -> None:
    label, text = _first(_BARE.format(mod="math_ops", frm="tensorflow.python.ops.gen_math_ops",
                                      names="bincount, cumsum", name="cumsum"))
    assert label == "tf-installs-mixed" and "nightly" in text
    assert "tensorflow.python.ops.gen_math_ops has no cumsum" in explain_log(
        _BARE.format(mod="math_ops", frm="tensorflow.python.ops.gen_math_ops",
                     names="bincount, cumsum", name="cumsum")).causes[0].detail


def test_bare_import_error_whose_line_imports_another_name_is_not_completed() -> None:
    ex = explain_log(_BARE.format(mod="math_ops", frm="tensorflow.python.ops.gen_math_ops",
                                  names="bincount", name="cumsum"))
    assert not ex.causes or ex.causes[0].label != "tf-installs-mixed"


# --- Keras 2's build-time rank check ------------------------------------------------------------

def test_keras2_build_time_extra_axis_is_the_inputs_sample_count() -> None:
    label, text = _first("ValueError: Input 0 is incompatible with layer block1_conv1: expected "
                         "ndim=4, found ndim=5\n")
    assert label == "input-shape-mismatch" and "Input(shape=" in text and "sample" in text


def test_fit_time_message_with_a_received_shape_keeps_the_data_reading() -> None:
    _, text = _first("ValueError: Input 0 of layer conv2d is incompatible with the layer: "
                     "expected ndim=4, found ndim=5. Full shape received: "
                     "(None, None, 64, 64, 3)\n")
    assert "Input(shape=" not in text
    _, text = _first("ValueError: Input 0 is incompatible with layer conv2d_1: expected ndim=4, "
                     "found ndim=3\n")
    assert "Input(shape=" not in text


# --- the highest GLIBC version ------------------------------------------------------------------

def test_glibc_fix_names_the_highest_version_needed() -> None:
    so = "/opt/py/lib/python3.6/site-packages/tensorflow/python/_pywrap_tensorflow_internal.so"
    label, text = _first(f"ImportError: /lib64/libc.so.6: version `GLIBC_2.16' not found "
                         f"(required by {so})\nImportError: /opt/glibc-2.16/lib/libc.so.6: version "
                         f"`GLIBC_2.23' not found (required by {so})\n")
    assert label == "glibc-too-old" and "glibc 2.23 or newer" in text
    _, text = _first(f"ImportError: /lib64/libc.so.6: version `GLIBC_2.16' not found (required by "
                     f"{so})\n")
    assert "glibc 2.16 or newer" in text
