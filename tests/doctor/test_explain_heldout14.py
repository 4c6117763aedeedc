"""``tfperf explain`` on the classes held-out round 14 (split ``heldout14``) missed at 4c0d0c2,
checked on other wordings than the round's logs: a tensor over 2^31 elements, a file pattern
that matched nothing, CUDA's runtime initialization with its status cut off, NumPy 2's own
message without its head line, a Keras optimizer traceback cut before its message, tfjs-node's
native binding and install failures, tf.loadGraphModel on a layers model, tf.memory() counts that
keep rising, a tiny step behind the slow-callback warning. The guards keep what must stay
benign: a global step that goes on advancing, an add-on's known false alarm, a steady tensor
count, a slow step's callback warning."""

from __future__ import annotations

import pytest
from explain_reading import assert_reads, first_cause

from tfperf.doctor.explainer import explain_log


@pytest.mark.parametrize("text", [
    "2021-03-02 10:11:12.123456: F tensorflow/core/util/gpu_launch_config.h:129] Check failed: "
    "work_element_count > 0 (-2010383616 vs. 0)\nAborted (core dumped)",
    "tensorflow.python.framework.errors_impl.InvalidArgumentError: Number of elements was larger "
    "than representable by 32-bit output type\n\t [[{{node gradients/Shape_3}}]]",
])
def test_a_tensor_over_2_31_elements_is_the_int32_limit(text: str) -> None:
    assert_reads(text, "tensor-over-int32-limit", "lower the batch size")


def test_an_empty_tensor_launch_check_is_not_the_int32_limit() -> None:
    cause, _ = first_cause("F tensorflow/core/util/gpu_launch_config.h:129] Check failed: "
                           "work_element_count > 0 (0 vs. 0)")
    assert cause.label != "tensor-over-int32-limit"


@pytest.mark.parametrize(("text", "shown"), [
    ("tensorflow.python.framework.errors_impl.InvalidArgumentError: Expected "
     "'tf.Tensor(False, shape=(), dtype=bool)' to be true. Summarized data: b'No files matched "
     "pattern: data/records/train-*.tfrecord'", "'data/records/train-*.tfrecord'"),
    ("InvalidArgumentError: assertion failed: [No files matched pattern: ]\n"
     "\t [[{{node list_files/assert_not_empty/Assert}}]]", "empty"),
])
def test_no_file_matched_the_pattern_names_it(text: str, shown: str) -> None:
    cause, lead = first_cause(text)
    assert cause.label == "no-files-matched"
    assert "matched no file" in lead
    assert shown in cause.detail


@pytest.mark.parametrize("text", [
    "InternalError: CUDA runtime implicit initialization on",
    "  File \"/opt/conda/lib/python3.8/site-packages/tensorflow/python/client/device_lib.py\", "
    "line 43, in list_local_devices\nRuntimeError: CUDA runtime implicit initialization on GPU:0 "
    "failed.",
])
def test_cuda_runtime_initialization_cut_off_leads_with_a_gpu_newer_than_the_build(
        text: str) -> None:
    assert_reads(text, "cuda-runtime-init-failed", "RTX 30xx")


def test_cuda_runtime_initialization_with_its_status_keeps_the_status_reading() -> None:
    cause, _ = first_cause("RuntimeError: CUDA runtime implicit initialization on GPU:0 failed. "
                           "Status: device kernel image is invalid")
    assert cause.label == "no-kernel-image"


def test_numpy_2s_message_without_its_head_line_is_the_numpy_abi() -> None:
    text = ("If you are a user of the module, the easiest solution will be to\n"
            "downgrade to 'numpy<2' or try to upgrade the affected module.\n"
            "Traceback (most recent call last):\n  File \"app.py\", line 2, in <module>\n"
            "    import tensorflow as tf")
    assert_reads(text, "numpy-abi-mismatch", "NumPy")


@pytest.mark.parametrize("text", [
    "Traceback (most recent call last):\n  File \"train.py\", line 40, in <module>\n"
    "    opt = tf.keras.optimizers.Adam(lr=1e-3, decay=1e-6)\n"
    "  File \"/usr/lib/python3/site-packages/keras/optimizers/optimizer_experimental/"
    "optimizer.py\", line 115, in _process_kwargs\n    raise ValueError(",
    "TypeError: clipvalue_old is not a valid argument, kwargs should be empty for "
    "`optimizer_experimental.Optimizer`.",
])
def test_an_argument_the_new_keras_optimizers_removed(text: str) -> None:
    assert_reads(text, "keras-optimizer-api-changed", "legacy")


def test_the_lr_warning_alone_stays_benign() -> None:
    ex = explain_log("/usr/lib/python3/site-packages/keras/optimizer_v2/gradient_descent.py:102: "
                     "UserWarning: The `lr` argument is deprecated, use `learning_rate` instead.")
    assert not any(c.severity in ("failure", "warning") for c in ex.causes)


@pytest.mark.parametrize("text", [
    "Error: Cannot find module '/app/node_modules/@tensorflow/tfjs-node/lib/napi-v8/"
    "tfjs_binding.node'\nRequire stack:\n- /app/node_modules/@tensorflow/tfjs-node/dist/index.js",
    "Error: The specified module could not be found. \\\\?\\D:\\bot\\node_modules\\@tensorflow"
    "\\tfjs-node-gpu\\lib\\napi-v8\\tfjs_binding.node { code: 'ERR_DLOPEN_FAILED' }",
])
def test_tfjs_nodes_binding_not_loaded(text: str) -> None:
    assert_reads(text, "tfjs-node-binding-not-loaded", "tensorflow.dll")


@pytest.mark.parametrize("text", [
    "node-pre-gyp info This Node instance does not support builds for N-API version 6",
    "450 error node-pre-gyp WARN Pre-built binaries not installable for "
    "@tensorflow/tfjs-node@3.13.0 and node@12.22.5 (node-v72 ABI, glibc) (falling back to "
    "source compile with node-gyp)",
])
def test_tfjs_node_install_without_a_prebuilt_binary(text: str) -> None:
    assert_reads(text, "tfjs-node-install-failed", "N-API")


def test_the_binding_looked_for_during_install_is_not_a_failure_to_load() -> None:
    ex = explain_log('node-pre-gyp info check checked for "/srv/node_modules/@tensorflow/'
                     'tfjs-node/lib/napi-v8/tfjs_binding.node" (not found)')
    assert all(c.label != "tfjs-node-binding-not-loaded" for c in ex.causes)


def test_load_graph_model_on_a_layers_model() -> None:
    assert_reads("[Unhandled promise rejection: TypeError: undefined is not an object "
                 "(evaluating 'graph.versions.producer')]", "tfjs-wrong-model-loader",
                 "tf.loadLayersModel")


def _memory(counts: list[int]) -> str:
    return "\n".join(f'{{"unreliable":false,"numTensors": {n},"numDataBuffers":{n},'
                     f'"numBytes":{n * 4096}}}' for n in counts)


def test_a_tensor_count_rising_call_after_call_is_a_leak() -> None:
    cause, lead = first_cause(_memory([120, 131, 142, 153]))
    assert (cause.label, cause.severity) == ("tfjs-tensor-leak", "warning")
    assert "tf.tidy" in lead


def test_a_steady_tensor_count_is_not_a_leak() -> None:
    ex = explain_log(_memory([120, 120, 121, 120]))
    assert not any(c.severity in ("failure", "warning") for c in ex.causes)


def test_a_tiny_step_behind_the_slow_callback_warning_leads_with_bigger_steps() -> None:
    assert_reads("WARNING:tensorflow:Callback method `on_train_batch_begin` is slow compared to "
                 "the batch time (batch time: 0.0021s vs `on_train_batch_begin` time: 0.0105s). "
                 "Check your callbacks.", "keras-slow-callback", "verbose=2")


def test_a_slow_step_keeps_the_callback_reading() -> None:
    _, lead = first_cause("WARNING:tensorflow:Callback method `on_train_batch_end` is slow "
                          "compared to the batch time (batch time: 0.2500s vs "
                          "`on_train_batch_end` time: 0.9000s). Check your callbacks.")
    assert "verbose=2" not in lead


_STALL = ("WARNING:tensorflow:It seems that global step (tf.train.get_global_step) has not been "
          "increased. Current value (could be stable): 400 vs previous value: 400. You could "
          "increase the global step by passing tf.train.get_global_step() to "
          "Optimizer.apply_gradients or Optimizer.minimize.\n")


def test_a_global_step_that_goes_on_advancing_is_nothing_wrong() -> None:
    ex = explain_log(_STALL + "INFO:tensorflow:loss = 2.31, step = 400 (310.2 sec)\n"
                     "INFO:tensorflow:loss = 1.97, step = 500 (305.9 sec)")
    assert not any(c.severity in ("failure", "warning") for c in ex.causes)


def test_slims_rising_global_step_lines_are_progress_too() -> None:
    ex = explain_log(_STALL + "INFO:tensorflow:global step 401: loss = 7.9 (20.2 sec/step)\n"
                     "INFO:tensorflow:global step 402: loss = 7.8 (19.9 sec/step)")
    assert not any(c.severity in ("failure", "warning") for c in ex.causes)


def test_a_global_step_rate_of_zero_stays_a_warning() -> None:
    ex = explain_log(_STALL + "INFO:tensorflow:global_step/sec: 0")
    assert ex.causes[0].label == "global-step-stalled"
    assert ex.causes[0].severity == "warning"


def test_tensorflow_addons_known_range_erratum_is_a_false_alarm() -> None:
    ex = explain_log("UserWarning: Tensorflow Addons supports using Python ops for all Tensorflow "
                     "versions above or equal to 2.2.0 and strictly below 2.3.0 (nightly versions "
                     "are not supported).\n The versions of TensorFlow you are currently using is "
                     "2.3.1 and is not supported.")
    assert not any(c.severity in ("failure", "warning") for c in ex.causes)


def test_tensorflow_addons_range_warning_names_the_release_for_the_tensorflow_shown() -> None:
    ex = explain_log("UserWarning: Tensorflow Addons supports using Python ops for all Tensorflow "
                     "versions above or equal to 2.3.0 and strictly below 2.5.0 (nightly versions "
                     "are not supported).\n The versions of TensorFlow you are currently using is "
                     "2.6.0 and is not supported.")
    assert ex.causes[0].label == "tf-addon-version-mismatch"
    assert ex.causes[0].severity == "failure"
    assert "tensorflow-addons==0.14.0" in ex.causes[0].install


def test_a_traceback_cut_inside_tensorflows_import_is_tensorflows() -> None:
    # the paste stops before the exception line; its frames run through tensorflow/__init__.py
    ex = explain_log("Traceback (most recent call last):\n  File \"main.py\", line 4, in <module>\n"
                     "    import tensorflow as tf\n  File \"/home/u/venv/lib/python3.11/"
                     "site-packages/tensorflow/__init__.py\", line 40, in <module>\n"
                     "    from tensorflow.python import pywrap_tensorflow")
    assert not ex.not_tensorflow
    # stop 41: no longer "not recognised": the floor reads it as an import failure, cut
    assert ex.verdict == "failure" and ex.causes[0].label == "import-error"
    assert "paste ends inside the traceback" in ex.causes[0].cause


def test_a_traceback_cut_in_the_programs_own_code_stays_not_tensorflows() -> None:
    ex = explain_log("Traceback (most recent call last):\n  File \"main.py\", line 4, in <module>\n"
                     "    import pandas as pd\n  File \"/home/u/venv/lib/python3.11/site-packages/"
                     "pandas/__init__.py\", line 22, in <module>\n    from pandas.compat import x")
    assert ex.not_tensorflow


@pytest.mark.parametrize(("check", "words"), [
    ("work_element_count > 0 (0 vs. 0)", "no elements"),
    ("work_element_count > 0.", "2^31"),
])
def test_a_launch_count_check_without_a_negative_count_ranks_its_two_causes(
        check: str, words: str) -> None:
    _, lead = first_cause(
        f"F ./tensorflow/core/util/gpu_launch_config.h:129] Check failed: {check}")
    assert words in lead


def test_load_layers_model_on_a_graph_model() -> None:
    assert_reads("ValueError: 'className' and 'config' must set.\n    at deserializeKerasObject "
                 "(node_modules/@tensorflow/tfjs-layers/dist/tf-layers.node.js:429:19)",
                 "tfjs-wrong-model-loader", "tf.loadGraphModel(url) for graph-model")
