"""``tfperf explain`` on the classes held-out round 15 (split ``heldout15``) missed at 2335c30,
checked on other wordings and other ops than the round's logs: where an op that is not registered
lives (a tf.contrib op gone in TF 2, a contrib op that moved into core, a core op of a newer
TensorFlow, an add-on's op), Keras errors by what they say about the model's state (not built,
variables not loaded, a KerasTensor handed to TensorFlow by Keras's own backend, a standalone
keras newer than TensorFlow), C asserts and kernel CHECKs by the failing file, a collective gather
of per-worker sizes, and cuInit finding no device while the driver is not loaded. The guards keep
what must stay: the user's own TF call on a KerasTensor, a CPU container's cuInit lines."""

from __future__ import annotations

import pytest
from explain_reading import assert_reads, first_cause

from tfperf.doctor.explainer import explain_log

_NOT_REGISTERED = ("NotFoundError: Op type not registered '{op}' in binary running on host. "
                   "Make sure the Op and Kernel are registered in the binary running in this "
                   "process.")


@pytest.mark.parametrize(("op", "words"), [
    ("BipartiteMatch", "tf.contrib.image"),  # tf.contrib, removed in TF 2.0
    ("MaskedMatmul", "tf.contrib.factorization"),
    ("StatelessRandomGetKeyCounter", "saved by a newer TensorFlow"),  # a core op since TF 2.5
    ("UniformQuantizedDot", "saved by a newer TensorFlow"),
    ("BlockLSTM", "import tensorflow.contrib.rnn"),  # contrib in TF 1.x, core in TF 2
])
def test_an_op_not_registered_is_read_by_where_it_lives(op: str, words: str) -> None:
    assert_reads(_NOT_REGISTERED.format(op=op), "op-not-registered", words)


def test_tf1_importers_wording_names_the_contrib_module() -> None:
    assert_reads("ValueError: No op named GatherTree in defined operations.",
                 "op-not-registered", "tf.contrib.seq2seq")


def test_an_add_ons_op_still_leads_with_importing_it() -> None:
    assert_reads(_NOT_REGISTERED.format(op="Addons>ImageProjectiveTransformV2"),
                 "op-not-registered", "import")
    _, lead = first_cause(_NOT_REGISTERED.format(op="Addons>ImageProjectiveTransformV2"))
    assert "tf.contrib" not in lead


@pytest.mark.parametrize("text", [
    "ValueError: You are trying to load a weight file containing 12 layers into a model with 0 "
    "layers.",
    "ValueError: Weights for model sequential_3 have not yet been created. Weights are created "
    "when the Model is first called on inputs or `build()` is called with an `input_shape`.",
])
def test_weights_loaded_into_a_model_not_built_say_build_it(text: str) -> None:
    assert_reads(text, "keras-model-not-built", "Build the model")


def test_a_layer_whose_variables_were_not_loaded_names_the_layer() -> None:
    cause, lead = first_cause(
        "ValueError: Layer 'dense_7' expected 2 variables, but received 0 variables during "
        "loading. Expected: ['kernel', 'bias']")
    assert cause.label == "keras-variables-not-loaded"
    assert "dense_7" in cause.detail
    assert "Upgrade" in lead


_KERAS_BACKEND_TB = """Traceback (most recent call last):
  File "/work/model.py", line 12, in <module>
    y = keras.ops.cumsum(x)
  File "/venv/lib/python3.11/site-packages/keras/src/ops/numpy.py", line 2001, in cumsum
    return backend.numpy.cumsum(x, axis=axis)
  File "/venv/site-packages/keras/src/backend/tensorflow/numpy.py", line 903, in cumsum
    return tf.math.cumsum(x, axis=axis)
  File "/venv/site-packages/keras/src/backend/common/keras_tensor.py", line 138, in __tf_tensor__
    raise ValueError(
ValueError: A KerasTensor cannot be used as input to a TensorFlow function."""

_USER_TF_CALL_TB = """Traceback (most recent call last):
  File "/work/model.py", line 9, in <module>
    y = tf.one_hot(x, 10)
  File "/venv/site-packages/keras/src/backend/common/keras_tensor.py", line 138, in __tf_tensor__
    raise ValueError(
ValueError: A KerasTensor cannot be used as input to a TensorFlow function."""


def test_a_keras_tensor_given_to_tensorflow_by_keras_itself_is_a_keras_bug() -> None:
    assert_reads(_KERAS_BACKEND_TB, "keras-tf-version-mismatch", "called by Keras itself")


def test_the_users_own_tf_call_on_a_keras_tensor_keeps_its_reading() -> None:
    cause, lead = first_cause(_USER_TF_CALL_TB)
    assert cause.label == "keras-tf-version-mismatch"
    assert "called by Keras itself" not in lead


def test_a_bare_cannot_import_dtensor_is_keras_newer_than_tensorflow() -> None:
    assert_reads("Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n"
                 "    from tensorflow import keras\nImportError: cannot import name 'dtensor'",
                 "keras-tf-version-mismatch", "keras")


@pytest.mark.parametrize("text", [
    "python3: external/eigen_archive/unsupported/Eigen/CXX11/src/Tensor/TensorDeviceGpu.h:280: "
    "void Eigen::GpuDevice::synchronize() const: Assertion `err == gpuSuccess' failed.\n"
    "Aborted (core dumped)",
    "python: external/eigen_archive/unsupported/Eigen/CXX11/src/Tensor/TensorDeviceCuda.h:260: "
    "void Eigen::GpuDevice::memset(void*, int, size_t) const: Assertion `err == cudaSuccess' "
    "failed.\nAborted (core dumped)",
])
def test_an_eigen_gpu_device_assertion_is_a_failed_cuda_call(text: str) -> None:
    assert_reads(text, "check-failed", "CUDA runtime call")


def test_a_kernel_check_leads_with_upgrading_tensorflow() -> None:
    assert_reads("2017-03-01 10:00:00.000000: F tensorflow/core/kernels/concat_lib_cpu.cc:55] "
                 "Check failed: dim_sizes.size() == inputs.size()\nAborted (core dumped)",
                 "check-failed", "Upgrade TensorFlow")


def test_a_collective_gather_of_different_sizes_is_a_sparse_gradient() -> None:
    text = ("tensorflow.python.framework.errors_impl.InternalError: Inconsistent output shapes, "
            "got [8,128], but expected is [4,128].\n"
            "\t [[{{node SGD/allreduce/CollectiveGather_3}}]]")
    assert_reads(text, "collective-mismatch", "sparse gradient")


def test_inconsistent_output_shapes_without_a_gather_is_a_collective_mismatch() -> None:
    cause, lead = first_cause("InternalError: Inconsistent output shapes, got [2], but expected "
                              "is [1].\n\t [[{{node CollectiveReduceV2}}]]")
    assert cause.label == "collective-mismatch"
    assert "is a gather" not in lead


_CUINIT = ("2017-05-01 12:00:00.000000: E tensorflow/stream_executor/cuda/cuda_driver.cc:406] "
           "failed call to cuInit: CUDA_ERROR_NO_DEVICE\n"
           "2017-05-01 12:00:00.000000: I tensorflow/stream_executor/cuda/cuda_diagnostics.cc:158] "
           "retrieving CUDA diagnostic information for host: {host}\n"
           "2017-05-01 12:00:00.000000: I tensorflow/stream_executor/cuda/cuda_diagnostics.cc:165] "
           "kernel driver does not appear to be running on this host ({host}): "
           "/proc/driver/nvidia/version does not exist\n")


def test_cuinit_without_the_kernel_driver_on_a_host_is_a_failure() -> None:
    ex = explain_log(_CUINIT.format(host="lab-workstation"))
    assert ex.verdict != "nothing-wrong"
    assert ex.causes[0].severity == "failure"


def test_cuinit_without_the_kernel_driver_in_a_container_stays_benign() -> None:
    assert explain_log(_CUINIT.format(host="3f2a9c1b7d0e")).verdict == "nothing-wrong"


@pytest.mark.parametrize(("text", "words"), [
    ("ValueError: Unknown activation function: swish. Please ensure this object is passed to the "
     "`custom_objects` argument.", "built-in activation from TF 2.2"),
    ("ValueError: Unknown loss function: focal_loss", "a custom loss"),
    ("ValueError: Unknown metric function: f1_score", "a custom metric"),
])
def test_keras_2s_unknown_function_wording_is_an_unknown_object(text: str, words: str) -> None:
    cause, _ = first_cause(text)
    assert cause.label == "keras-unknown-object"
    assert words in cause.detail


def test_nvidia_smi_failing_to_reach_the_driver_is_a_driver_not_running() -> None:
    ex = explain_log("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA "
                     "driver. Make sure that the latest NVIDIA driver is installed and running.")
    assert ex.causes[0].label == "kernel-driver-not-running"
    assert ex.causes[0].severity == "failure"


@pytest.mark.parametrize(("text", "label"), [
    ("ValueError: Could not interpret loss function identifier: focal", "keras-unknown-object"),
    ("TypeError: Unexpected keyword argument passed to optimizer: amsgrad",
     "keras-optimizer-api-changed"),
])
def test_keras_identifier_and_optimizer_argument_errors_are_read(text: str, label: str) -> None:
    cause, _ = first_cause(text)
    assert cause.label == label


@pytest.mark.parametrize(("what", "label", "words"), [
    # a row since stop 38 (held-out round 21's ssdtf8): the host's memory
    ("std::bad_alloc'\n  what():  std::bad_alloc", "host-out-of-memory", "C++ allocation"),
    ("google::protobuf::FatalException'\n  what():  CHECK failed: (index) < (current_size_):",
     "process-crash", "C++ exception nobody caught"),
])
def test_an_uncaught_cpp_exception_is_read_from_its_terminate_line(what: str, label: str,
                                                                  words: str) -> None:
    text = ("2024-01-01 10:00:00.000000: I tensorflow/core/platform/cpu_feature_guard.cc:182] "
            "This TensorFlow binary is optimized\nterminate called after throwing an instance "
            f"of '{what}\nAborted (core dumped)")
    assert_reads(text, label, words)
