"""Stop 39, wave 2 (issue 31): versions read from the log, and held-out round 22's misses made
general rows (the ``heldout22`` split holds those logs). Each test is a wording of its own (not the
round's log) and most have a VALID twin: the same words where the advice does not apply.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tfperf.doctor.explain_evidence import gpu_newer_than_build
from tfperf.doctor.explain_readings import gpu_not_visible
from tfperf.doctor.explain_render import report_text
from tfperf.doctor.explain_versions import wheel_file
from tfperf.doctor.explainer import explain_log

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from score_explain import first_explanation


def _first(text: str) -> tuple[str, str, str]:
    ex = explain_log(text)
    assert ex.causes, ex.verdict
    top = ex.causes[0]
    return top.label, top.severity, first_explanation(top)


# --- a GPU the poster names in words, and the CUDA/TensorFlow they name -----------------------

_GEMM = ("InternalError: Blas GEMM launch failed : a.shape=(128, 64), b.shape=(64, 10), m=128, "
         "n=10, k=64\n\t [[{{node dense/MatMul}}]]\n")


@pytest.mark.parametrize("said, cuda", [
    ("my setup: tensorflow-gpu 1.15, CUDA 10.0, cuDNN 7.6.5, GPU: RTX 3060 Ti\n", "10.0"),
    ("env: tensorflow1.14 cuda10.0, the card is a GeForce RTX 3080\n", "10.0"),
    ("I run TF 1.15 on a laptop GPU 3070\n", "10.0"),  # no CUDA said: TF 1.15's own (10.0)
])
def test_an_rtx30_named_in_words_under_cuda10_leads_a_cublas_failure(said: str,
                                                                     cuda: str) -> None:
    label, severity, first = _first(_GEMM + said)
    assert (label, severity) == ("cublas-failed", "failure")
    assert "compute capability 8.6" in first and f"CUDA {cuda}" in first
    assert "CUDA 11.1" in first  # sm_86 came with CUDA 11.1


@pytest.mark.parametrize("said", [
    "my setup: tensorflow-gpu 2.6, CUDA 11.2, cuDNN 8.1, GPU: RTX 3060 Ti\n",  # CUDA 11: fine
    "my setup: tensorflow-gpu 1.15, CUDA 10.0, GPU: GTX 1080 Ti\n",  # Pascal under CUDA 10: fine
])
def test_valid_twin_a_gpu_that_cuda_has_kernels_for_is_not_blamed(said: str) -> None:
    assert gpu_newer_than_build(_GEMM + said) is None


def test_a_bare_number_far_from_gpu_is_not_read_as_a_card() -> None:
    assert gpu_newer_than_build(_GEMM + "tensorflow 1.14, cuda 10.0, batch 3070\n") is None


# --- the wheel a log installs, for a build that needs AVX2 --------------------------------------

_AVX2 = ("2017-01-10 I tensorflow/core/platform/cpu_feature_guard.cc:35] The TensorFlow library "
         "was compiled to use AVX2 instructions, but these aren't available on your machine.\n")


def test_an_avx2_build_the_log_installs_is_named_as_the_wheel_to_replace() -> None:
    text = ("$ pip install C:\\dl\\tensorflow_gpu-1.9.0-cp36-cp36m-win_amd64.whl\n" + _AVX2)
    assert wheel_file(text) == "tensorflow_gpu-1.9.0-cp36-cp36m-win_amd64.whl"
    label, _, first = _first(text)
    assert label == "cpu-missing-avx2"
    assert "tensorflow_gpu-1.9.0-cp36-cp36m-win_amd64.whl" in first and "source" in first


def test_valid_twin_no_wheel_named_keeps_the_official_wheel_advice() -> None:
    label, _, first = _first(_AVX2)
    assert label == "cpu-missing-avx2"
    assert wheel_file(_AVX2) is None and "official pip wheel" in first


# --- Windows' illegal-instruction status in a DLL load ------------------------------------------

@pytest.mark.parametrize("code", ["3221225501", "-1073741795"])
def test_dll_load_error_code_of_an_illegal_instruction_is_a_cpu_without_avx(code: str) -> None:
    text = ("Traceback (most recent call last):\n  File \"C:\\Python37\\lib\\site-packages\\"
            "tensorflow\\python\\pywrap_tensorflow.py\", line 64, in <module>\n"
            f"ImportError: DLL load failed with error code {code} while importing "
            "_pywrap_tensorflow_internal\n")
    label, _, first = _first(text)
    assert label == "cpu-missing-instructions" and "AVX" in first


def test_valid_twin_another_dll_error_code_stays_a_dll_load_failure() -> None:
    text = ("ImportError: DLL load failed with error code -1073741515 while importing "
            "_pywrap_tensorflow_internal\n")
    assert _first(text)[0] == "windows-dll-load-failed"


# --- a Python if on a tensor --------------------------------------------------------------------

@pytest.mark.parametrize("message", [
    "TypeError: Using a `tf.Tensor` as a Python `bool` is not allowed. Use `if t is not None:` "
    "instead of `if t:` to test if a tensor is defined",
    "OperatorNotAllowedInGraphError: using a `tf.Tensor` as a Python `bool` is not allowed in "
    "Graph execution. Use Eager execution or decorate this function with @tf.function.",
])
def test_a_python_if_on_a_tensor_gets_tf_cond_and_autograph(message: str) -> None:
    label, severity, first = _first(
        "  File \"train.py\", line 30, in loss_fn\n    if mask:\n" + message + "\n")
    assert (label, severity) == ("tensor-used-as-bool", "failure")
    assert "tf.cond" in first and "tf.function" in first and "is not None" in first


# --- NumPy's C API, in the 2016 wording ---------------------------------------------------------

@pytest.mark.parametrize("line", [
    "RuntimeError: module compiled against API version a but this version of numpy is 9",
    "RuntimeError: module compiled against API version 0xe but this version of numpy is 0xd",
])
def test_an_older_numpy_than_the_build_is_told_to_upgrade(line: str) -> None:
    label, _, first = _first(line + "\nImportError: numpy.core.multiarray failed to import\n")
    assert label == "numpy-abi-mismatch" and "--upgrade" in first


# --- a GPU check's index is not a count ---------------------------------------------------------

def test_an_active_gpu_index_of_0_is_not_an_empty_gpu_list() -> None:
    text = "Number of GPUs found on system: 1\n\nActive GPU index: 0\nActive GPU name: RTX A4000\n"
    assert gpu_not_visible(text) is None
    assert gpu_not_visible("Num GPUs Available:  0\n") is not None  # the twin: a count of 0
    opened = ("I tensorflow/stream_executor/platform/default/dso_loader.cc:48] Successfully "
              "opened dynamic library libcudart.so.10.1\n")
    assert report_text(explain_log(text + opened)).startswith("nothing wrong")


# --- a lone missing cudart: nothing wrong for a CPU machine, the install for a GPU user --------

def test_a_lone_missing_cudart_says_both_readings_in_its_headline() -> None:
    text = ("W tensorflow/stream_executor/platform/default/dso_loader.cc:55] Could not load "
            "dynamic library 'cudart64_101.dll'; dlerror: cudart64_101.dll not found\n")
    head = report_text(explain_log(text)).splitlines()[0]
    assert head.startswith("nothing wrong")
    assert "NVIDIA GPU" in head and "CUDA 10.1" in head


# --- ragged Python lists, removed Keras modules, tf_keras against its TensorFlow ---------------

def test_a_non_rectangular_list_gets_ragged_or_padding() -> None:
    label, _, first = _first("  File \"prep.py\", line 12, in <module>\n    x = tf.constant("
                             "token_ids)\nValueError: Can't convert non-rectangular Python "
                             "sequence to Tensor.\n")
    assert label == "ragged-list-to-tensor"
    assert "tf.ragged.constant" in first and "pad_sequences" in first


@pytest.mark.parametrize("module, says", [
    ("tensorflow.keras.engine", "tf.keras.layers.Layer"),
    ("keras.legacy", "keras==2.3.1"),
])
def test_removed_keras_modules_are_named(module: str, says: str) -> None:
    label, _, first = _first(f"ModuleNotFoundError: No module named '{module}'\n")
    assert label == "module-not-found-error" and says in first


def test_valid_twin_keras_engine_of_standalone_keras_is_not_this_row() -> None:
    ex = explain_log("ModuleNotFoundError: No module named 'keras.engine.topology'\n")
    assert not any("never published an engine module" in c.cause for c in ex.causes)


@pytest.mark.parametrize("extra, says", [
    ("", "tf-keras==<your TensorFlow's major.minor>"),
    ("tf-nightly 2.17.0.dev20240301\n", "tf-keras-nightly"),
])
def test_tf_keras_failing_on_tensorflow_internals_gets_its_matching_release(extra: str,
                                                                           says: str) -> None:
    text = (extra + "  File \"/venv/lib/python3.11/site-packages/tf_keras/src/saving/"
            "object_registration.py\", line 9\nAttributeError: module 'tensorflow._api.v2.compat."
            "v2.__internal__' has no attribute 'register_load_context_function'\n")
    label, _, first = _first(text)
    assert label == "keras-tf-version-mismatch" and says in first


# --- a model path with its quotes, a model file read as a SavedModel folder ---------------------

def test_a_path_holding_its_quotes_is_pointed_out() -> None:
    label, _, first = _first("OSError: SavedModel file does not exist at: 'C:\\exports\\m1'/"
                             "{saved_model.pbtxt|saved_model.pb}\n")
    assert label == "model-file-missing" and "quote" in first


def test_a_model_file_read_as_a_savedmodel_folder_gets_h5_or_tf24() -> None:
    label, _, first = _first("OSError: SavedModel file does not exist at: /home/u/det/"
                             "mask_net.model/{saved_model.pbtxt|saved_model.pb}\n")
    assert label == "model-file-missing" and "mask_net.model" in first and "2.4" in first


def test_valid_twin_a_missing_h5_path_stays_a_wrong_path() -> None:
    label, _, first = _first("OSError: SavedModel file does not exist at: ../models/eqt.h5/"
                             "{saved_model.pbtxt|saved_model.pb}\n")
    assert label == "model-file-missing"
    assert "quote" not in first and "not a SavedModel folder" not in first


# --- protobuf 5+'s own gencode/runtime check: the versions it names -----------------------------

@pytest.mark.parametrize("line, says", [
    ("google.protobuf.runtime_version.VersionError: Detected mismatched Protobuf Gencode/Runtime "
     "major versions when loading tensorflow/core/protobuf/struct.proto: gencode 5.28.3 runtime "
     "4.25.3. Same major version is required.", "protobuf>=5.28,<6"),
    ("google.protobuf.runtime_version.VersionError: Detected incompatible Protobuf Gencode/Runtime "
     "versions when loading tensorboard/compat/proto/summary.proto: gencode 5.29.1 runtime 5.27.2."
     " Runtime version cannot be older than the linked gencode version.", "protobuf>=5.29,<6"),
])
def test_protobuf_gencode_and_runtime_versions_name_the_protobuf_to_install(line: str,
                                                                            says: str) -> None:
    label, _, first = _first(line + "\n")
    assert label == "protobuf-incompatible" and says in first
    assert "installed 4.25.3:" in first or "installed 5.27.2:" in first  # the version, no period


def test_valid_twin_protobuf_requires_version_keeps_its_pin() -> None:
    label, _, first = _first("This program requires version 3.19.0 of the Protocol Buffer runtime "
                             "library, but the installed version is 3.11.2.\n")
    assert label == "protobuf-incompatible" and "protobuf==3.19.*" in first


# --- Windows' DLL start-up failure: AVX for official wheels, AVX2 for many community ones ------

def test_a_dll_initialization_failure_names_avx_and_the_avx2_community_wheels() -> None:
    label, _, first = _first("  File \"C:\\Python36\\lib\\site-packages\\tensorflow\\python\\"
                             "pywrap_tensorflow.py\", line 58, in <module>\nImportError: DLL load "
                             "failed: A dynamic link library (DLL) initialization routine "
                             "failed.\n")
    assert label == "cpu-missing-instructions"
    assert "AVX2" in first and "Coreinfo" in first


def test_valid_twin_a_linux_illegal_instruction_keeps_the_general_fix() -> None:
    label, _, first = _first(">>> import tensorflow as tf\nIllegal instruction (core dumped)\n")
    assert label == "cpu-missing-instructions"
    assert "Coreinfo" not in first and "AVX" in first


# --- a TensorFlow version and a cudart of another CUDA major in one log -------------------------

_TF210 = ("  File \"C:\\Users\\a\\AppData\\Local\\Programs\\Python\\Python39\\lib\\site-packages\\"
          "tensorflow\\__init__.py\", line 3\ntensorflow version: 2.10.0\n")
_DSO = "W tensorflow/stream_executor/platform/default/dso_loader.cc:64] "


def test_a_cudart_of_another_cuda_than_the_named_release_is_pointed_out() -> None:
    text = _TF210 + (_DSO + "Could not load dynamic library 'cudart64_100.dll'; dlerror: "
                     "cudart64_100.dll not found\n")
    install = explain_log(text).causes[0].install
    assert "CUDA 11.2 and cuDNN 8.1" in install and "cudart64_100.dll = CUDA 10.0" in install


def test_valid_twin_the_release_own_cudart_gets_no_second_build_note() -> None:
    text = _TF210 + (_DSO + "Could not load dynamic library 'cudart64_110.dll'; dlerror: "
                     "cudart64_110.dll not found\n")
    install = explain_log(text).causes[0].install
    assert "CUDA 11.2 and cuDNN 8.1" in install and "another build" not in install
