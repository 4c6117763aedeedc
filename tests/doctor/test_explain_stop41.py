"""Stop 41's mechanisms (the ``rounds41`` split holds round 25's logs), on other wordings than
that round's: the floor never lets a TensorFlow error through (a message pasted without its class,
a class named in prose, a loader failure in words, a traceback cut inside TensorFlow's import),
a symbol version named in the poster's prose, an input that ended because a file is missing.
And VALID twins: start-up noise, warnings in a run that went on, a traceback quoted inside a
warning, the program's own error: still "nothing wrong" or "not TensorFlow's".
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tfperf.doctor.explainer import explain_log

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from score_explain import first_explanation

_TF_FRAMES = (
    "Traceback (most recent call last):\n"
    '  File "train.py", line 61, in <module>\n'
    "    model.fit(ds, epochs=3)\n"
    '  File "/opt/conda/lib/python3.9/site-packages/keras/engine/training.py", line 1184, in fit\n'
    "    tmp_logs = self.train_function(iterator)\n"
    '  File "/opt/conda/lib/python3.9/site-packages/tensorflow/python/eager/execute.py", line 54,'
    " in quick_execute\n"
    "    tensors = pywrap_tfe.TFE_Py_Execute(ctx._handle, device_name, op_name,\n")


def _first(text: str) -> tuple[str, str, str]:
    ex = explain_log(text)
    assert ex.causes, ex.verdict
    return ex.causes[0].label, ex.causes[0].severity, first_explanation(ex.causes[0])


@pytest.mark.parametrize("message, label, words", [
    # a stack of tensors of different shapes, the message without 'InvalidArgumentError:'
    ("Shapes of all inputs must match: values[0].shape = [32,10] != values[1].shape = [16,10]",
     "invalid-argument-error", ""),
    # a range check's message without its class
    ("Expected begin[0] in [0, 10], but got -1", "invalid-argument-error", ""),
    # a class named in prose, not as 'Class: message'
    ("An InvalidArgumentError was raised while the step ran", "invalid-argument-error", ""),
])
def test_a_message_without_its_class_under_tensorflows_frames_gets_a_reading(
        message: str, label: str, words: str) -> None:
    ex = explain_log(_TF_FRAMES + message + "\n")
    assert ex.verdict == "failure"
    cause = ex.causes[0]
    assert (cause.label, cause.confidence) == (label, "low")
    assert "inferred" in cause.cause or "named in the words" in cause.cause
    assert words in first_explanation(cause)


def test_a_class_named_alone_with_tensorflows_file_read_is_a_missing_file() -> None:
    label, severity, first = _first(
        "OutOfRangeError occurred while reading the training list\n"
        "NewRandomAccessFile failed to Create/Open: /data/coco/train2017/000000391895.jpg : "
        "No such file or directory\n")
    assert (label, severity) == ("out-of-range-error", "failure")
    assert "does not exist" in first


def test_tensorflows_file_read_failure_alone_is_tensorflows() -> None:
    ex = explain_log("NewWriteableFile failed to create /mnt/ro/ckpt/model.ckpt-100.tempstate\n")
    assert ex.verdict == "failure"
    assert ex.causes[0].confidence == "low"


@pytest.mark.parametrize("tail", [
    '  File "/usr/lib/python3.6/site-packages/tensorflow/python/pywrap_tensorflow.py", line 58, in'
    " <module>\n    from tensorflow.python.pywrap_tensorflow_internal import *\n",
    '  File "/home/u/.local/lib/python3.7/site-packages/tensorflow_core/__init__.py", line 28, in'
    " <module>\n    from tensorflow.python import pywrap_tensorflow\n",
])
def test_a_traceback_cut_inside_tensorflows_import_is_an_import_failure(tail: str) -> None:
    ex = explain_log("Traceback (most recent call last):\n"
                     '  File "app.py", line 3, in <module>\n    import tensorflow as tf\n' + tail)
    assert ex.verdict == "failure"
    cause = ex.causes[0]
    assert (cause.label, cause.confidence) == ("import-error", "low")
    assert "paste ends inside the traceback" in cause.cause


def test_valid_a_traceback_quoted_inside_a_warning_that_goes_on_is_not_cut() -> None:
    # autograph's verbose warning quotes a traceback, then the log goes on: no cut traceback
    ex = explain_log(_TF_FRAMES + "\nEpoch 1/3\n10/10 [==============================] - 1s "
                     "12ms/step - loss: 0.31\n")
    assert ex.verdict != "failure"


@pytest.mark.parametrize("line, detail", [
    ("We get a missing dependency on GLIBCXX_3.4.22 on the cluster nodes", "GLIBCXX_3.4.22"),
    ("the wheel requires `GLIBC_2.27` but CentOS 7 ships 2.17", "glibc 2.27"),
    ("ImportError says CXXABI_1.3.11 is missing", "CXXABI_1.3.11"),
])
def test_a_symbol_version_in_prose_is_glibc_too_old(line: str, detail: str) -> None:
    label, severity, first = _first(line + "\n")
    assert (label, severity) == ("glibc-too-old", "failure")
    assert detail in first


@pytest.mark.parametrize("line", [
    "strings /usr/lib64/libstdc++.so.6 | grep GLIBCXX_3.4.21",
    "GLIBCXX_3.4.21 is present in the conda env's libstdc++",
])
def test_valid_a_symbol_version_without_a_failure_word_is_not_read(line: str) -> None:
    assert not any(c.label == "glibc-too-old" for c in explain_log(line + "\n").causes)


@pytest.mark.parametrize("log", [
    # start-up noise of a CPU-only machine: the cudart line and its own hint
    "2023-01-05 10:00:00.000001: W tensorflow/stream_executor/platform/default/dso_loader.cc:64]"
    " Could not load dynamic library 'libcudart.so.11.0'; dlerror: libcudart.so.11.0: cannot open"
    " shared object file: No such file or directory\n2023-01-05 10:00:00.000002: I tensorflow/"
    "stream_executor/cuda/cudart_stub.cc:29] Ignore above cudart dlerror if you do not have a GPU"
    " set up on your machine.\n",
    # oneDNN's note and a deprecation warning in a run that went on
    "2024-02-01 09:00:00.1: I tensorflow/core/util/port.cc:113] oneDNN custom operations are on."
    "\nWARNING:tensorflow:From train.py:12: The name tf.losses.sparse_softmax_cross_entropy is "
    "deprecated.\nEpoch 1/2\n5/5 [==============================] - 1s - loss: 0.5\n",
])
def test_valid_benign_logs_stay_nothing_wrong(log: str) -> None:
    assert explain_log(log).verdict == "nothing-wrong"


def test_valid_the_programs_own_error_stays_not_tensorflows() -> None:
    ex = explain_log("Reading config.yaml\nKeyError: 'learning_rate'\n")
    assert not ex.problems
    assert ex.not_tensorflow


# --- the numbers a message gives (round 25's partly answers, by mechanism) ---

def test_an_oom_converting_the_whole_array_in_fit_is_not_a_batch_size() -> None:
    label, _, first = _first(
        "2024-05-02 11:00:00.1: W tensorflow/core/common_runtime/bfc_allocator.cc:479] "
        "Allocator (GPU_0_bfc) ran out of memory trying to allocate 14.90GiB (rounded to "
        "16003200000)requested by op _EagerConst\n"
        "Traceback (most recent call last):\n"
        '  File "run.py", line 40, in <module>\n'
        "    history = model.predict(images, batch_size=16)\n"
        '  File "/usr/lib/python3/site-packages/tensorflow/python/framework/constant_op.py", '
        "line 102, in convert_to_eager_tensor\n"
        "    return ops.EagerTensor(value, ctx.device_name, dtype)\n"
        "tensorflow.python.framework.errors_impl.ResourceExhaustedError: failed to allocate "
        "memory [Op:_EagerConst]\n")
    assert label in ("out-of-memory", "resource-exhausted-error")
    assert "whole input" in first and "predict(images" in first
    assert "generator" in first


def test_valid_a_batch_sized_oom_in_fit_keeps_its_reading() -> None:
    # the same frames with a small request: a batch that does not fit, not the whole array
    _, _, first = _first(
        "W tensorflow/core/common_runtime/bfc_allocator.cc:479] Allocator (GPU_0_bfc) ran out "
        "of memory trying to allocate 96.00MiB (rounded to 100663296)requested by op Conv2D\n"
        "    history = model.fit(x_train, y_train, batch_size=256)\n"
        "    return ops.EagerTensor(value, ctx.device_name, dtype)  # convert_to_eager_tensor\n"
        "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating "
        "tensor with shape[256,64,64,24] and type float\n")
    assert "whole input" not in first


@pytest.mark.parametrize("shapes, flat", [
    ("[4096] vs. [64,64]", True),
    ("[64,50] vs. [3200]", True),
    ("[4096] vs. [64,63]", False),  # another count: not one side flattened
    ("[32,10] vs. [16,10]", False),  # same rank
])
def test_incompatible_shapes_of_one_count_in_two_ranks_is_a_flattened_side(
        shapes: str, flat: bool) -> None:
    ex = explain_log(f"tensorflow.python.framework.errors_impl.InvalidArgumentError: "
                     f"Incompatible shapes: {shapes}\n")
    assert ("flattened" in first_explanation(ex.causes[0])) is flat


@pytest.mark.parametrize("value, classes, other", [
    (91, 3, True),  # a COCO id against three classes
    (19, 4, True),
    (5, 5, False),  # 1-based labels: off by one
    (12, 10, False),  # a few classes too many
])
def test_a_label_far_past_the_class_count_is_another_class_list(
        value: int, classes: int, other: bool) -> None:
    ex = explain_log(f"InvalidArgumentError: Received a label value of {value} which is outside "
                     f"the valid range of [0, {classes}).  Label values: 1 {value} 0\n")
    first = first_explanation(ex.causes[0])
    assert ex.causes[0].label == "label-out-of-range"
    assert ("another, larger class list" in first) is other


@pytest.mark.parametrize("log", [
    "I set up CUDA 11 in the env\nbut libcublas.so.11 not found when tensorflow starts\nthen I "
    "reinstalled the driver\nand rebooted\n",
    "the loader says cudnn64_8.dll is missing\nI added it to PATH\nand rebooted\nno change\n",
])
def test_a_gpu_library_named_missing_in_prose_mid_log_gets_a_reading(log: str) -> None:
    ex = explain_log(log)
    assert ex.verdict == "failure"
    cause = ex.causes[0]
    assert (cause.label, cause.confidence) == ("library-load-error", "low")
    assert "CUDA/cuDNN" in first_explanation(cause)


def test_valid_another_librarys_missing_file_in_prose_is_not_tensorflows() -> None:
    ex = explain_log("libfoo.so is missing from my build\nthe program went on\nDone.\n")
    assert not ex.problems and ex.not_tensorflow


_CUDNN_MISSING = ("2023-01-01 10:00:00.1: W tensorflow/stream_executor/platform/default/"
                  "dso_loader.cc:64] Could not load dynamic library 'libcudnn.so.8'; dlerror: "
                  "libcudnn.so.8: cannot open shared object file: No such file or directory\n"
                  "2023-01-01 10:00:00.2: W tensorflow/core/common_runtime/gpu/gpu_device.cc:1850]"
                  " Cannot dlopen some GPU libraries. Please make sure the missing libraries "
                  "mentioned above are installed properly if you would like to use GPU.\n")


def test_a_missing_cuda_library_in_a_conda_env_leads_with_the_loader_path() -> None:
    ex = explain_log(_CUDNN_MISSING + '  File "/opt/mambaforge/envs/gpu/lib/python3.10/'
                     'site-packages/tensorflow/__init__.py", line 3, in <module>\n')
    cause = next(c for c in ex.causes if c.label == "cuda-library-missing")
    assert "conda environment" in cause.cause.split(" Otherwise: ")[0]
    assert "activate.d" in cause.fix.split(" Otherwise: ")[0]


@pytest.mark.parametrize("where", [
    "",  # no environment named
    '  File "C:\\Users\\u\\anaconda3\\envs\\gpu\\lib\\site-packages\\tensorflow\\__init__.py",'
    " line 3\n",  # Windows: the DLL search uses PATH, which the env's activation sets
])
def test_valid_without_a_linux_conda_env_the_general_fix_leads(where: str) -> None:
    ex = explain_log(_CUDNN_MISSING + where)
    cause = next(c for c in ex.causes if c.label == "cuda-library-missing")
    assert "conda environment" not in cause.cause.split(" Otherwise: ")[0]
    assert cause.fix.startswith("Find the file first")


def test_macos_crash_with_its_signal_number_after_tensorflow_is_a_crash() -> None:
    ex = explain_log("Python 3.9.6\n>>> import tensorflow as tf\nSegmentation fault: 11\n")
    assert ex.verdict == "failure" and ex.causes[0].label == "process-crash"


def test_valid_a_crash_in_a_program_without_tensorflow_stays_not_tensorflows() -> None:
    ex = explain_log("python app.py --input photos/\nBus error: 10\n")
    assert not ex.problems and ex.not_tensorflow


def test_valid_a_quoted_traceback_followed_by_the_runs_progress_is_no_error() -> None:
    ex = explain_log(_TF_FRAMES + "Epoch 1/3\n10/10 [==============================] - 1s 12ms/step"
                     " - loss: 0.31\n")
    assert ex.verdict != "failure"


@pytest.mark.parametrize("last, words", [
    ('  File "/srv/venv/lib/python3.8/site-packages/tensorflow/python/pywrap_tensorflow.py", line '
     "64, in <module>\n    from tensorflow.python._pywrap_tensorflow_internal import *\n",
     "native library"),
    ('  File "/srv/venv/lib/python3.8/site-packages/tensorflow/python/framework/dtypes.py", line '
     "20, in <module>\n    import numpy as np\n", "NumPy"),
    ('  File "/srv/venv/lib/python3.8/site-packages/tensorflow/core/framework/types_pb2.py", line '
     "5, in <module>\n    from google.protobuf.internal import builder as _builder\n", "protobuf"),
])
def test_a_cut_import_traceback_ranks_the_module_its_last_frame_loads(last: str,
                                                                     words: str) -> None:
    ex = explain_log("Traceback (most recent call last):\n"
                     '  File "serve.py", line 1, in <module>\n    import tensorflow as tf\n'
                     '  File "/srv/venv/lib/python3.8/site-packages/tensorflow/__init__.py", line '
                     "41, in <module>\n    from tensorflow.python.tools import module_util\n"
                     + last)
    assert ex.causes[0].label == "import-error"
    assert words in first_explanation(ex.causes[0])
