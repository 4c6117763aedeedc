"""Round 16's miss classes by mechanism, on other wordings than its logs (stop 37).

Which native component a crash names, an error status on a W-level line, import-time failures
read by what they say about the environment, Keras's target shapes and gather ids by their
numbers, and a version check that contradicts its own numbers. The round's own logs are the
``heldout16`` split of the development set; these cases are not them.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tfperf.doctor.explainer import explain_log

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from score_explain import first_explanation


def _top(text: str):
    ex = explain_log(text)
    assert ex.causes, ex.verdict
    return ex.causes[0], ex


# --- (a) which component crashed -------------------------------------------------------------

@pytest.mark.parametrize(("text", "needle"), [
    # gdb's stop in cuDNN (no TensorFlow line at all)
    ('Thread 17 "python3" received signal SIGSEGV, Segmentation fault.\n'
     "[Switching to Thread 0x7ffe2effd700 (LWP 1234)]\n"
     "0x00007fff8a1b2c3d in ?? () from /usr/lib/x86_64-linux-gnu/libcudnn.so.7\n", "cuDNN"),
    # LLDB in a custom op library
    ("* thread #1, queue = 'com.apple.main-thread', stop reason = EXC_BAD_ACCESS (code=1, "
     "address=0x0)\n  * frame #0: 0x0000000112f0a1b4 _sampler_ops.so`SamplerOp::Compute + 52\n"
     "    frame #1: 0x000000010f1e2a40 libtensorflow_framework.2.dylib`tensorflow::"
     "ThreadPoolDevice::Compute + 40\n", "custom op"),
    # Apple's MPSGraph assertion, then the shell's report of the abort
    ("/System/Volumes/Data/SWE/macOS/BuildRoots/e90674e518/Library/Caches/com.apple.xbs/Sources/"
     "MetalPerformanceShadersGraph/mpsgraph/MetalPerformanceShadersGraph/Core/Files/"
     "MPSGraphUtilities.mm:343: failed assertion `Error: MLIR pass manager failed'\n"
     "zsh: abort      python train.py\n", "Metal"),
    # fish's signal report with TensorFlow's own frames
    ("Fatal Python error: Segmentation fault\n\nThread 0x00007f (most recent call first):\n"
     "  <no Python frame>\n#3 0x7f1 in tensorflow::DirectSession::Run() from "
     "/opt/venv/lib/python3.8/site-packages/tensorflow/python/../libtensorflow_framework.so.2\n"
     "fish: 'python serve.py' terminated by signal SIGSEGV (Address boundary error)\n",
     "TensorFlow's own native code"),
])
def test_a_native_crash_is_read_by_the_component_its_frames_name(text, needle):
    top, ex = _top(text)
    assert ex.verdict != "unrecognised"
    assert top.label == "process-crash" and top.severity == "failure"
    assert needle in first_explanation(top), first_explanation(top)


def test_a_malloc_checksum_abort_on_macos_is_a_crash():
    top, _ = _top("python(811,0x16f) malloc: Incorrect checksum for freed object 0x1380: probably "
                  "modified after being freed.\nCorrupt value: 0x0\nMetal device set to: Apple M1\n"
                  "fish: 'python a.py' terminated by signal SIGABRT (Abort)\n")
    assert top.label == "process-crash" and "Metal" in first_explanation(top)


def test_a_loaded_gpu_library_without_a_crash_stays_benign():
    ex = explain_log("2023-01-01 10:00:00.1: I tensorflow/stream_executor/platform/default/"
                     "dso_loader.cc:53] Successfully opened dynamic library libcudnn.so.8\n"
                     "2023-01-01 10:00:00.2: I tensorflow/stream_executor/platform/default/"
                     "dso_loader.cc:53] Successfully opened dynamic library libcublas.so.11\n")
    assert ex.verdict == "nothing-wrong"


# --- (b) an error status on a W-level line -------------------------------------------------------

@pytest.mark.parametrize(("line", "label"), [
    ("2018-01-02 10:00:00.1: W tensorflow/core/framework/op_kernel.cc:1192] Invalid argument: "
     "Incompatible shapes: [32,10] vs. [32,5]", "invalid-argument-error"),
    ("2018-01-02 10:00:00.1: W tensorflow/core/framework/op_kernel.cc:1192] Data loss: "
     "truncated record at 104857", None),
])
def test_a_status_word_on_a_warning_line_is_an_error(line, label):
    ex = explain_log(line + "\n")
    assert ex.verdict != "nothing-wrong", ex.verdict
    assert ex.causes[0].severity == "failure"
    if label:
        assert ex.causes[0].label == label


def test_an_end_of_sequence_on_a_warning_line_stays_routine():
    ex = explain_log("2018-01-02 10:00:00.1: W tensorflow/core/framework/op_kernel.cc:1192] "
                     "Out of range: End of sequence\n")
    assert not ex.problems or ex.problems[0].severity != "failure"


def test_an_empty_checkpoint_path_is_named_as_such():
    top, _ = _top("tensorflow.python.framework.errors_impl.NotFoundError: Unsuccessful "
                  "TensorSliceReader constructor: Failed to find any matching files for \n")
    assert top.label == "checkpoint-not-found"
    assert "path is empty" in first_explanation(top)
    named, _ = _top("tensorflow.python.framework.errors_impl.NotFoundError: Unsuccessful "
                    "TensorSliceReader constructor: Failed to find any matching files for "
                    "ckpt/model.ckpt-100\n")
    assert "path is empty" not in first_explanation(named)


# --- (c) import-time failures by what they say about the environment -----------------------------

@pytest.mark.parametrize("text", [
    "AttributeError: module 'tensorflow' has no attribute 'constant'",
    "AttributeError: module 'numpy' has no attribute '__version__'",
    "AttributeError: module 'tensorflow' has no attribute 'Variable'",
])
def test_a_module_without_its_core_attributes_is_a_broken_or_shadowed_install(text):
    top, _ = _top(text + "\n")
    assert top.label == "package-broken-or-shadowed"
    assert "__file__" in top.fix


def test_a_tf1_name_missing_stays_an_api_change():
    top, _ = _top("AttributeError: module 'tensorflow' has no attribute 'placeholder'\n")
    assert top.label != "package-broken-or-shadowed"


@pytest.mark.parametrize("text", [
    "ImportError: /usr/lib/python3/dist-packages/numpy/core/_multiarray_umath.cpython-36m-"
    "x86_64-linux-gnu.so: undefined symbol: PyFPE_jbuf",
    "ImportError: /home/u/.local/lib/python2.7/site-packages/tensorflow/python/"
    "_pywrap_tensorflow_internal.so: undefined symbol: PyUnicode_FromFormat\n"
    "Failed to load the native TensorFlow runtime.",
])
def test_an_undefined_cpython_symbol_is_a_wheel_for_another_python(text):
    top, _ = _top(text + "\n")
    assert top.label == "wheel-for-another-python"
    assert "another Python" in top.cause


def test_a_custom_op_missing_a_tensorflow_symbol_is_not_a_python_mismatch():
    top, _ = _top("tensorflow.python.framework.errors_impl.NotFoundError: /x/_lattice_ops.so: "
                  "undefined symbol: _ZN10tensorflow8OpKernelD2Ev\n")
    assert top.label != "wheel-for-another-python"


# --- (d) Keras shapes and gather ids read by their numbers ---------------------------------------

def test_a_target_array_without_an_error_token_is_read_by_its_numbers():
    top, _ = _top("A target array with shape (500, 3) was passed for an output of shape "
                  "(None, 1) while using as loss `binary_crossentropy`. This loss expects "
                  "targets to have the same shape as the output.\n")
    assert top.label == "labels-output-mismatch"
    assert "3 values per sample where one is expected" in top.detail


def test_a_negative_id_is_not_fixed_by_a_bigger_table():
    top, _ = _top("InvalidArgumentError: indices[7,3] = -1 is not in [0, 20000)\n"
                  "\t [[{{node model/embedding/embedding_lookup}}]]\n")
    assert top.label == "embedding-index-out-of-range"
    assert "The id is negative" in first_explanation(top)


def test_a_lookup_in_the_loss_is_a_label_past_the_outputs():
    top, _ = _top("InvalidArgumentError: indices[12] = 10 is not in [0, 10) "
                  "[[{{node loss/dense_2_loss/GatherV2}}]]\n")
    assert "is in the loss" in first_explanation(top)
    layer, _ = _top("InvalidArgumentError: indices[0,5] = 20001 is not in [0, 20000) "
                    "[[{{node model/embedding/embedding_lookup}}]]\n")
    explained = first_explanation(layer)
    assert "is in the loss" not in explained and "The id is negative" not in explained
    assert "input_dim" in explained


# --- version checks and status words read by what they mean --------------------------------------

def test_a_ptxas_not_older_than_its_minimum_is_a_false_alarm():
    ex = explain_log("*** WARNING *** You are using ptxas 11.0.194, which is older than 9.2.88. "
                     "ptxas 9.x before 9.2.88 is known to miscompile XLA code\n")
    assert ex.verdict == "nothing-wrong"
    real = explain_log("*** WARNING *** You are using ptxas 8.0.61, which is older than 9.2.88\n")
    assert real.problems and real.problems[0].label == "ptxas-problem"


def test_cublas_execution_failed_leads_with_a_gpu_newer_than_the_build():
    top, _ = _top("E tensorflow/stream_executor/cuda/cuda_blas.cc:654] failed to run cuBLAS "
                  "routine cublasGemmEx: CUBLAS_STATUS_EXECUTION_FAILED\n")
    assert top.label == "cublas-failed" and "CUDA 11" in first_explanation(top)
    alloc, _ = _top("E tensorflow/stream_executor/cuda/cuda_blas.cc:238] failed to create cublas "
                    "handle: CUBLAS_STATUS_ALLOC_FAILED\n")
    assert "EXECUTION_FAILED" not in first_explanation(alloc)
