"""``tfperf explain`` on the error classes held-out round 11 (split ``heldout11``) missed at
46fc06b, checked on other wordings than the round's logs: each test reads what the error class
means, not one log's text."""

from __future__ import annotations

import pytest
from explain_reading import assert_reads, first_cause

from tfperf.doctor.explainer import explain_log


@pytest.mark.parametrize("text", [
    # a loader error with no TensorFlow word in it: the glibc the wheel needs, straight quotes
    "OSError: /lib/x86_64-linux-gnu/libm.so.6: version 'GLIBC_2.29' not found",
    "ImportError: /usr/lib64/libstdc++.so.6: version 'GLIBCXX_3.4.26' not found",
])
def test_a_glibc_symbol_version_in_straight_quotes_is_the_glibc(text: str) -> None:
    assert_reads(text, "glibc-too-old", "C library")


def test_an_import_error_of_a_native_library_is_never_set_aside() -> None:
    """The loader's words in an ImportError are what importing TensorFlow or an add-on prints,
    even with no TensorFlow frame pasted (46fc06b listed it as 'not TensorFlow's')."""
    from tfperf.doctor.explain_floor import tf_reason

    line = "ImportError: /opt/libs/libfoo.so.3: undefined symbol: foo_init_v2"
    assert tf_reason([line], 0, "ImportError", surely_tf=False)
    assert not tf_reason(["ImportError: cannot import name 'x' from 'mymodule'"], 0,
                         "ImportError", surely_tf=False)


def test_fewer_bytes_than_requested_is_a_truncated_checkpoint_not_the_end_of_a_dataset() -> None:
    text = ("tensorflow.python.framework.errors_impl.OutOfRangeError: Read less bytes than "
            "requested [Op:RestoreV2]")
    cause, lead = first_cause(text)
    assert cause.label == "out-of-range-error"
    assert "truncated" in lead and ".repeat()" not in lead.split("this is no dataset")[0]


def test_a_variable_that_does_not_exist_under_reuse_is_the_graph_built_twice() -> None:
    assert_reads("ValueError: Variable generator/conv1/Momentum/ does not exist, or was not "
                 "created with tf.get_variable(). Did you mean to set reuse=tf.AUTO_REUSE in "
                 "VarScope?", "value-error", "reset_default_graph")


def test_a_fed_shape_against_a_fixed_batch_placeholder() -> None:
    assert_reads("ValueError: Cannot feed value of shape (16, 28, 28, 1) for Tensor 'input_x:0', "
                 "which has shape '(64, 28, 28, 1)'", "value-error", "fixed batch")


@pytest.mark.parametrize("text", [
    "NotFoundError: Key rnn/multi_rnn_cell/cell_0/basic_lstm_cell/kernel not found in checkpoint",
    'NotFoundError (see above for traceback): Tensor name "decoder/lstm_cell/weights" not found '
    "in checkpoint files /models/ckpt/model.ckpt-20000",
])
def test_an_rnn_cell_variable_missing_from_a_checkpoint_names_the_tf_renaming(text: str) -> None:
    assert_reads(text, "checkpoint-mismatch", "RNN cell")


def test_a_missing_ordinary_variable_keeps_the_checkpoint_rows_order() -> None:
    cause, lead = first_cause("NotFoundError: Key dense_3/kernel not found in checkpoint")
    assert cause.label == "checkpoint-mismatch" and "RNN cell" not in lead


_ADDON = ("tensorflow.python.framework.errors_impl.NotFoundError: {path}/site-packages/"
          "tensorflow_text/python/ops/_normalize_ops.so: undefined symbol: "
          "_ZN10tensorflow8OpKernel11TraceStringEPNS_15OpKernelContextEb")


def test_an_addon_in_a_conda_environment_names_condas_tensorflow() -> None:
    assert_reads(_ADDON.format(path="/home/u/miniconda3/envs/nlp/lib/python3.7"),
                 "tf-addon-version-mismatch", "came from conda")
    # a const method's symbol (_ZNK...), tensorflow-io's library, an Anaconda environment
    assert_reads("NotFoundError: /home/u/anaconda3/envs/x/lib/python3.9/site-packages/"
                 "tensorflow_io/core/python/ops/libtensorflow_io.so: undefined symbol: "
                 "_ZNK10tensorflow8OpKernel11TraceStringERKNS_15OpKernelContextEb",
                 "tf-addon-version-mismatch", "came from conda")
    _, lead = first_cause(_ADDON.format(path="/usr/local/lib/python3.8"))
    assert "came from conda" not in lead


def test_a_core_op_missing_in_tf_serving_is_a_newer_export_not_a_custom_op() -> None:
    core = ("2020-05-01 10:00:00.000: E tensorflow_serving/util/retrier.cc:37] Loading servable: "
            "{name: default version: 1} failed: Not found: Op type not registered "
            "'StatelessRandomUniformV2' in binary running on host.")
    assert_reads(core, "op-not-registered", "core TensorFlow op")
    # a core op by TensorFlow's own list, with no suffix to tell it (tensorflow/serving#924)
    assert_reads(core.replace("StatelessRandomUniformV2", "ClipByValue"), "op-not-registered",
                 "core TensorFlow op")
    custom = core.replace("StatelessRandomUniformV2", "RoiAlignFused")
    assert_reads(custom, "op-not-registered", "custom op")


def test_several_gpus_with_little_memory_each_is_a_warning_not_nothing_wrong() -> None:
    text = "\n".join(
        f"2021-03-01 10:00:0{i}.000000: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1418] "
        f"Created TensorFlow device (/job:localhost/replica:0/task:0/device:GPU:{i} with 412 MB "
        f"memory) -> physical GPU (device: {i}, name: GeForce GTX 1080 Ti, pci bus id: "
        f"0000:0{i}:00.0, compute capability: 6.1)" for i in range(4))
    ex = explain_log(text)
    assert ex.verdict != "nothing-wrong"
    assert_reads(text, "gpu-devices-little-memory", "one GPU")


@pytest.mark.parametrize("text", [
    # one GPU with little memory (a Jetson shares it with the CPU) and several large GPUs
    "I tensorflow/core/common_runtime/gpu/gpu_device.cc:1304] Created TensorFlow device "
    "(/job:localhost/replica:0/task:0/device:GPU:0 with 211 MB memory) -> physical GPU "
    "(device: 0, name: NVIDIA Tegra X1, pci bus id: 0000:00:00.0, compute capability: 5.3)",
    "I tensorflow/core/common_runtime/gpu/gpu_device.cc:1304] Created TensorFlow device "
    "(/job:localhost/replica:0/task:0/device:GPU:1 with 10413 MB memory) -> physical GPU "
    "(device: 1, name: GeForce GTX 1080 Ti, pci bus id: 0000:02:00.0, compute capability: 6.1)",
])
def test_gpu_devices_with_memory_enough_or_one_gpu_stay_nothing_wrong(text: str) -> None:
    assert explain_log(text).verdict == "nothing-wrong"


def test_a_tensorflow_private_name_missing_inside_another_library_is_that_librarys() -> None:
    """46fc06b read TensorLayer's ``tf_ops._TensorLike`` as standalone Keras's mismatch."""
    tb = ('  File "/usr/lib/python3.9/site-packages/{lib}/layers/utils.py", line 12, in '
          "<module>\n    if isinstance(x, tf_ops._TensorLike):\nAttributeError: module "
          "'tensorflow.python.framework.ops' has no attribute '_TensorLike'")
    assert_reads(tb.format(lib="tensorlayer"), "tf-addon-version-mismatch", "tensorlayer")
    assert first_cause(tb.format(lib="keras"))[0].label == "keras-tf-version-mismatch"


def test_a_fed_value_in_another_layout_names_the_reshape() -> None:
    assert_reads("ValueError: Cannot feed value of shape (128, 784) for Tensor 'Placeholder:0', "
                 "which has shape '(?, 28, 28, 1)'", "value-error", "x.reshape(-1, 28, 28, 1)")


def test_a_placeholder_left_out_of_the_feed_names_the_feed_dict() -> None:
    assert_reads("InvalidArgumentError: You must feed a value for placeholder tensor 'labels' "
                 "with dtype int64 and shape [?]", "invalid-argument-error", "feed_dict")


def test_a_tensorflow_name_a_library_cannot_import_is_that_librarys_not_mixed_installs() -> None:
    tb = ('  File "/usr/local/lib/python3.8/site-packages/{lib}/__init__.py", line 4, in <module>\n'
          "    from tensorflow.python.framework.ops import _TensorLike\nImportError: cannot import "
          "name '_TensorLike' from 'tensorflow.python.framework.ops' (/usr/local/lib/python3.8/"
          "site-packages/tensorflow/python/framework/ops.py)")
    assert_reads(tb.format(lib="tensorlayer"), "tf-addon-version-mismatch", "tensorlayer")
    # inside TensorFlow's own files it stays two releases' files in one environment
    assert first_cause(tb.format(lib="tensorflow/python"))[0].label == "tf-installs-mixed"


@pytest.mark.parametrize(("text", "label", "words"), [
    # TF 1.x graph-mode errors of the kind round 11 held (code written for another TF release)
    ("ValueError: Attempt to have a second RNNCell use the weights of a variable scope that "
     "already has weights: 'rnn/basic_lstm_cell'; and the cell was not constructed as "
     "BasicLSTMCell(..., reuse=True).", "value-error", "new cell for each layer"),
    ("ValueError: Only call `sparse_softmax_cross_entropy_with_logits` with named arguments "
     "(labels=..., logits=..., ...)", "value-error", "labels=y, logits=logits"),
    ("TypeError: Expected int32, got list containing Tensors of type '_Message' instead.",
     "type-error", "tf.concat([a, b], axis)"),
    ("InvalidArgumentError: Cannot assign a device for operation 'MatMul': Operation was "
     "explicitly assigned to /device:GPU:0 but available devices are [ /job:localhost/replica:0/"
     "task:0/cpu:0 ].", "invalid-argument-error", "allow_soft_placement"),
])
def test_tf1_graph_errors_of_code_written_for_another_release(text: str, label: str,
                                                              words: str) -> None:
    assert_reads(text, label, words)
