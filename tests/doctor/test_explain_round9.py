"""``tfperf explain`` on round 9's classes, checked on other wordings than round 9's own logs: a
log that holds no error is "nothing wrong" (a warning no row knows is a note), errors worded
without their class, the checkpoint path and the GPU library read from the message, and an
out-of-memory with a batch of one. Each case is a shape of log with its names and numbers changed
from the held-out log that prompted it, so a test passes only when the reading is general."""

from __future__ import annotations

import pytest
from explain_reading import first_cause

from tfperf.doctor.explain_render import summary
from tfperf.doctor.explainer import explain_log

# --- a log that holds no error is "nothing wrong" -------------------------------------------------

@pytest.mark.parametrize("text", [
    # a Python warning of Keras's no row knows (made up: no row will ever know it)
    "/opt/venv/lib/python3.9/site-packages/keras/engine/frob.py:77: UserWarning: The frobnicator "
    "of layer dense_3 was reset; results may differ.",
    # a W-level TensorFlow line whose words say 'failed' and 'Not found' (the level decides)
    "2023-01-02 03:04:05.678901: W tensorflow/core/platform/cloud/frob_provider.cc:91] All "
    "attempts to frobnicate failed, returning an empty value. Not found: no frob file.",
    # a Python logger's warning and Python's warnings format: the level decides over 'failed'
    "WARNING:tensorflow:Frob saving failed for layer dense_3, will retry",
    "/opt/venv/lib/python3.10/site-packages/keras/src/frob.py:12: UserWarning: frob failed; an "
    "Error will be raised in Keras 4",
    # absl's W-level line of a Python file
    "W0102 03:04:05.678901 139999 frob_utils.py:12] When passing frobs, do not specify `steps`.",
    # a program's own note that it falls back, and then goes on (a plain "could not" that the log
    # does not end in is ordinary output)
    "2023-05-01 12:00:00.000000: I tensorflow/core/platform/cpu_feature_guard.cc:182] This "
    "TensorFlow binary is optimized to use available CPU instructions.\nCould not find a GPU, "
    "training on the CPU\nEpoch 1/2\n10/10 - 1s - loss: 0.2\nsaved to out/model.keras",
    # (a log of only the program's own output, no line tfperf knows, is now "nothing recognised":
    # round 10, test_explain_round10.py)
])
def test_a_log_that_holds_no_error_is_nothing_wrong_and_unknown_warnings_are_notes(text):
    ex = explain_log(text)
    assert ex.verdict == "nothing-wrong" and ex.exit_status == 0
    head = summary(ex)
    assert head.startswith("nothing wrong") and "does not prove" not in head
    if ex.unknown:
        assert all(ln.row == "warning" for ln in ex.unknown)
        assert "informational" in head and "line 1" in head


@pytest.mark.parametrize("text", [
    # an error in words, no class, no level: never "nothing wrong"
    "Could not open /data/run7/model.ckpt-500: Data loss: frob checksum mismatch",
    "module 'tensorflow.contrib.frobnicate' has no attribute 'frob_graph'",
    "Unable to frobnicate tensor frob_3:0 on device GPU:1",
    # a TensorFlow exception no row knows
    "tensorflow.python.framework.errors_impl.FrobError: the frob of tensor x was lost",
])
def test_a_log_that_holds_an_error_is_never_nothing_wrong(text):
    assert explain_log(text).verdict in ("failure", "warning", "unrecognised")


# --- what was passed as the checkpoint path ------------------------------------------------------

_SSTABLE = ": Data loss: not an sstable (bad magic number): perhaps your file is in a different " \
           "file format and you need to use a different restore operator?"


@pytest.mark.parametrize(("text", "needle"), [
    # one shard of a V2 checkpoint: pass its prefix
    ("Could not open /models/run3/model.ckpt-2000.index" + _SSTABLE,
     "Pass the prefix /models/run3/model.ckpt-2000 (without '.index')"),
    # a Keras weights file given to a TF1 saver, logged at W level on Windows
    (r"2019-04-01 10:00:00.000000: W tensorflow/core/util/tensor_slice_reader.cc:95] Could not "
     r"open C:\weights\vgg16_notop.h5" + _SSTABLE, "is a .h5 file"),
    # the TF1 saver's wording, a prefix given without its step
    ("Unable to open table file ./train_dir/model.ckpt" + _SSTABLE, "with its step"),
    # a folder, in the Failed precondition wording
    ("W tensorflow/core/util/tensor_slice_reader.cc:95] Could not open /srv/pretrained/resnet_v2: "
     "Failed precondition: /srv/pretrained/resnet_v2; Is a directory: perhaps your file is in a "
     "different file format and you need to use a different restore operator?", "a folder"),
])
def test_a_checkpoint_path_that_is_not_a_checkpoint_is_read_from_the_message(text, needle):
    cause, lead = first_cause(text)
    assert (cause.label, cause.severity) == ("checkpoint-path-not-a-checkpoint", "failure")
    assert needle in lead


@pytest.mark.parametrize(("text", "lib"), [
    ("F tensorflow/stream_executor/cuda/cuda_dnn.cc:222] could not find cudnnGetVersion in cudnn "
     "DSO; dlerror: undefined symbol: cudnnGetVersion", "cudnn lacks cudnnGetVersion"),
    ("Check failed: s.ok() could not find cublasCreate_v2 in cublas DSO",
     "cublas lacks cublasCreate_v2"),
])
def test_a_gpu_library_without_the_function_tensorflow_calls_is_a_broken_install(text, lib):
    cause, lead = first_cause(text)
    assert cause.label == "gpu-library-incomplete" and lib in cause.detail
    assert "Reinstall" in lead


# --- errors pasted without their class -----------------------------------------------------------

@pytest.mark.parametrize(("text", "label", "needle"), [
    ("module 'tensorflow.contrib.slim' has no attribute 'arg_scope'", "attribute-error",
     "tf.contrib"),
    # a module of TensorFlow's internals (a public tf.X is read by the API table, wave 3)
    ("module 'tensorflow.python.frob' has no attribute 'frobnicate'", "attribute-error",
     "moved or was removed"),
    ("No module named 'tensorflow_frobnicate.ops'", "module-not-found-error", ""),
    ("cannot import name 'frob_op' from 'tensorflow_frob.ops'", "import-error", ""),
    ("Could not open /data/shard-7.tfrecord: Data loss: frob checksum mismatch", "data-loss-error",
     ""),
    ("Connection to /job:worker/task:3 failed: Unavailable: frob socket closed",
     "unavailable-error", ""),
    ("'KerasTensor' object has no attribute 'frob_shape'", "attribute-error", ""),
])
def test_an_error_without_its_class_is_read_by_the_floor(text, label, needle):
    cause, lead = first_cause(text)
    assert (cause.label, cause.severity, cause.confidence) == (label, "failure", "low")
    assert needle in lead


# --- rows that do not hang on punctuation, quotes or one tensor's name ----------------------------

@pytest.mark.parametrize("text", [
    # a Keras loss target, no trailing period (round 9's log had another target and layer)
    "NotImplementedError: Cannot convert a symbolic Tensor (3rd_target:0) to a numpy array",
    # an RNN's zero state with the sentence's period and more
    "NotImplementedError: Cannot convert a symbolic Tensor (encoder/lstm_2/strided_slice_4:0) to "
    "a numpy array. This error may indicate that you're trying to pass a Tensor to a NumPy call",
    # pasted through a web page: typographic quotes around the attribute
    "AttributeError: module \u2018numpy\u2019 has no attribute \u2018object\u2019",
])
def test_numpy_too_new_is_read_whatever_the_tensor_punctuation_or_quotes(text):
    cause, _ = first_cause(text)
    assert (cause.label, cause.confidence) == ("numpy-too-new-for-tf", "high")


def test_windows_self_check_names_cudnn_with_or_without_a_full_stop():
    for text in ("Could not find cuDNN 7.", "Could not find cuDNN 6"):
        cause, _ = first_cause(text)
        assert cause.label == "cuda-library-missing" and cause.details["cudnn"][0] in "76", text


# --- an out-of-memory with a batch of one ---------------------------------------------------------

def _oom(shape: str, stats: str = "") -> str:
    return (f"{stats}W tensorflow/core/common_runtime/bfc_allocator.cc:275] Ran out of memory "
            "trying to allocate 20.00MiB.  See logs for memory state.\n"
            "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating "
            f"tensor with shape[{shape}] and type float on /job:localhost/replica:0/task:0/"
            "device:GPU:0 by allocator GPU_0_bfc")


def test_a_batch_of_one_leads_with_the_input_size_not_the_batch():
    # one large photo: 879 MiB, below tiling's 1 GiB
    cause, lead = first_cause(_oom("1,32,2400,3000"))
    assert cause.label == "out-of-memory"
    assert lead.startswith("The batch is already 1") and "smaller input" in lead
    assert "Lower the batch" not in lead
    # a batch of 64 still names the batch
    _, batch = first_cause(_oom("64,32,240,300"))
    assert "Lower the batch size" in batch and "already 1" not in batch


def test_a_batch_of_one_on_a_small_allocator_limit_names_the_gpu_memory():
    stats = ("I tensorflow/core/common_runtime/bfc_allocator.cc:702] Stats: \n"
             "Limit:                   734003200\nInUse:                   733000000\n"
             "MaxInUse:                734003200\n")
    _, lead = first_cause(_oom("1,300,400,3", stats))
    assert "700 MiB of GPU memory" in lead and "more GPU memory" in lead
    assert "Lower the batch" not in lead


# --- the other misses: causes the message itself names ------------------------------------------

_UNIMPLEMENTED = ("tensorflow.python.framework.errors_impl.UnimplementedError: File system scheme "
                  "'{scheme}' not implemented (file: '{path}')")


def test_a_file_system_scheme_the_build_lacks_is_read_by_its_scheme():
    _, web = first_cause(_UNIMPLEMENTED.format(scheme="http", path="http://example.org/m/params.json"))
    assert "http://" in web and "local" in web
    _, gcs = first_cause(_UNIMPLEMENTED.format(scheme="gs", path="gs://a-bucket/ckpt/model"))
    assert "Google Cloud Storage" in gcs and "Windows" in gcs and "Linux" in gcs


def test_sequences_of_different_lengths_name_the_maximum_length():
    shapes = ("tensorflow.python.framework.errors_impl.InvalidArgumentError: Incompatible shapes: "
              "[{a}] vs. [{b}]\n\t [[Node: loss/sub = Sub[T=DT_FLOAT]]]")
    _, lead = first_cause(shapes.format(a="16,812,128", b="16,600,128"))
    assert "maximum output length" in lead
    _, other = first_cause(shapes.format(a="16,600,128", b="16,600,64"))  # the features differ
    assert "maximum output length" not in other


def test_a_tf1_without_compat_v2_names_the_library_release_that_fits():
    _, lead = first_cause("  File \"/opt/lib/python3.6/site-packages/frob/optimizer.py\", line 9\n"
                          "AttributeError: module 'tensorflow.compat' has no attribute 'v2'")
    assert "TensorFlow Probability 0.6 for TensorFlow 1.13" in lead


def test_a_checksum_that_does_not_match_a_small_download_is_a_stale_url():
    cause, lead = first_cause(
        "NonMatchingChecksumError: Artifact https://example.org/data/frob.tar.gz, downloaded to "
        "/tmp/tfds/downloads/frob.tmp, has wrong checksum:\n* Expected: UrlInfo(size=1.20 GiB, "
        "checksum='ab12', filename='frob.tar.gz')\n* Got: UrlInfo(size=812 bytes, checksum='cd34', "
        "filename='frob.tar.gz')")
    assert cause.label == "non-matching-checksum-error" and "tfds-nightly" in lead


def test_a_record_bad_at_byte_0_is_not_a_tfrecord_at_all():
    _, first = first_cause("DataLossError: corrupted record at 0 [Op:IteratorGetNext]")
    assert "git-lfs" in first and "compression_type" in first
    _, later = first_cause("DataLossError: corrupted record at 52428811 [Op:IteratorGetNext]")
    assert "git-lfs" not in later


def test_cudnn_rnn_dropout_state_that_fails_is_gpu_memory():
    _, lead = first_cause("tensorflow.python.framework.errors_impl.UnknownError: "
                          "CUDNN_STATUS_EXECUTION_FAILED\nFailed to set dropout descriptor\n\t "
                          "[[{{node encoder/bidirectional/CudnnRNNV3}}]]")
    assert "GPU memory ran out" in lead and "Lower the batch size" in lead


def test_a_library_built_for_a_newer_macos_names_the_macos():
    text = ("tensorflow.python.framework.errors_impl.NotFoundError: dlopen(/opt/env/lib/python3.9/"
            "site-packages/tensorflow-plugins/libmetal_plugin.dylib, 0x0006): Symbol not found: "
            "_OBJC_CLASS_$_MPSGraphFrob\n  Referenced from: <ABCD> /opt/env/lib/python3.9/"
            "site-packages/tensorflow-plugins/libmetal_plugin.dylib (which was built for macOS "
            "13.0)")
    _, lead = first_cause(text)
    assert "Upgrade macOS to 13.0" in lead
    # the summary's fix is the log's evidence, not a plugin version to install
    assert "Fix: Upgrade macOS to 13.0" in summary(explain_log(text))


def test_a_log_of_nothing_but_no_cuda_device_is_a_failure_and_a_missing_library_alone_is_not():
    alone = ("E0000 00:00:1712345678.123456   4321 cuda_driver.cc:282] failed call to cuInit: "
             "CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected")
    ex = explain_log(alone)
    assert ex.verdict == "failure" and ex.causes[0].label == "cuinit-no-device"
    # the same line in a run that went on (epochs) is the notice it was
    run = alone + "\nEpoch 1/2\n100/100 [==============================] - 3s - loss: 0.41\n"
    assert explain_log(run).verdict == "nothing-wrong"
    # a machine without a GPU prints a missing CUDA runtime alone: nothing wrong
    lib = ("2023-03-04 05:06:07.000000: W tensorflow/stream_executor/platform/default/"
           "dso_loader.cc:64] Could not load dynamic library 'libcudart.so.11.0'; dlerror: "
           "libcudart.so.11.0: cannot open shared object file: No such file or directory")
    assert explain_log(lib).verdict == "nothing-wrong"


def test_a_checkpoint_file_too_short_is_truncated_not_a_wrong_path():
    cause, lead = first_cause(
        "tensorflow.python.framework.errors_impl.DataLossError: Unable to open "
        "table file ./pretrained/model.ckpt-5000.index: Data loss: file is too "
        "short to be an sstable: perhaps your file is in a different file format "
        "and you need to use a different restore operator?")
    assert cause.label == "checkpoint-path-not-a-checkpoint"
    assert lead.startswith("The checkpoint file ./pretrained/model.ckpt-5000.index is too short")


def test_a_small_allocator_limit_used_up_names_the_gpu_memory_without_a_shape():
    text = ("I tensorflow/core/common_runtime/bfc_allocator.cc:702] Stats: \n"
            "Limit:                   1073741824\nInUse:                   1073000000\n"
            "W tensorflow/core/common_runtime/bfc_allocator.cc:275] Ran out of memory trying to "
            "allocate 8.00MiB.  See logs for memory state.\n"
            "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating "
            "tensor on /job:localhost/replica:0/task:0/device:GPU:0")
    cause, lead = first_cause(text)
    assert cause.label == "out-of-memory"
    assert lead.startswith("TensorFlow could use only 1.00 GiB of GPU memory")
