"""Round 19's miss classes by mechanism, on other wordings than its logs (stop 38).

Facts first, then judgements (``explain_facts``, ``explain_judgements``): versions, platform,
site folders, GPU memory and the tensor an OOM failed on are read from the log, and an
unsupported combination is a finding even when no error line names it. Device loss and vendor
codes, warnings that name slowness, and service status lines are rows. The round's own logs are
the ``heldout19`` split of the development set; these cases are not them.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tfperf.doctor.explain_facts import read_facts
from tfperf.doctor.explainer import explain_log

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from score_explain import first_explanation


def _first(text: str) -> tuple[str, str]:
    ex = explain_log(text)
    assert ex.causes, ex.verdict
    return ex.causes[0].label, first_explanation(ex.causes[0])


# --- (1) device loss and vendor codes ------------------------------------------------------------

@pytest.mark.parametrize("line", [
    "2023-05-01 10:00:00.000000: F tensorflow/c/logging.cc:43] HRESULT failed with 0x887a0006: "
    "queue_->Signal(fence_.Get(), fence_value_)",
    "F tensorflow/core/common_runtime/dml/dml_command_queue.cc:54] Check failed: "
    "(((HRESULT)((dml_device->GetDeviceRemovedReason()))) >= 0) == true (0 vs. 1)",
    "[ 9123.456] NVRM: Xid (PCI:0000:01:00): 79, pid=1234, GPU has fallen off the bus.",
    "Error: command buffer exited with error status.\n\tThe Metal Performance Shaders operations "
    "encoded on it may not have completed.\n\tError: \n\t(null)\n\tCaused GPU Timeout Error "
    "(00000002:kIOGPUCommandBufferCallbackErrorTimeout)",
])
def test_a_gpu_lost_under_the_program_is_device_loss_not_a_code_error(line):
    label, text = _first(line + "\n")
    assert label == "gpu-device-lost", (label, text)
    assert "driver" in text and "TDR" in text, text


def test_an_hresult_of_another_facility_is_not_device_loss():
    ex = explain_log("F tensorflow/c/logging.cc:43] HRESULT failed with 0x80070057: "
                     "CreateCommittedResource\n")
    assert not ex.causes or ex.causes[0].label != "gpu-device-lost"


# --- (2) version facts turned into version advice --------------------------------------------

def test_no_gpu_on_tf_2_11_plus_with_nothing_linux_names_native_windows():
    label, text = _first("tf version 2.13.1\nGPU not found\n")
    assert label == "gpu-not-visible" and "native Windows" in text and "WSL2" in text, text


def test_no_gpu_on_tf_2_11_plus_on_linux_is_not_told_about_windows():
    label, text = _first("  File \"/home/u/venv/lib/python3.10/site-packages/x.py\", line 1\n"
                         "TensorFlow version: 2.13.1\nGPU not found\n")
    assert label == "gpu-not-visible" and "native Windows TensorFlow 2.11" not in text, text


def test_no_gpu_on_tf_2_10_is_not_the_windows_cutoff():
    label, text = _first("TensorFlow version: 2.10.1\nNo GPU available\n")
    assert label == "gpu-not-visible" and "2.11 and later" not in text.split(" Otherwise:")[0]


def test_a_cudart_symbol_error_names_the_cuda_of_the_build():
    label, text = _first(
        '  File "D:\\py\\lib\\site-packages\\tensorflow_core\\python\\eager\\context.py", line '
        "492, in ensure_initialized\ntensorflow.python.framework.errors_impl.InternalError: "
        "cudaSetDevice() failed. Status: cudaGetErrorString symbol not found.\n")
    assert label == "cuda-runtime-mismatch" and "CUDA 10" in text, text


def test_keras_src_missing_is_a_model_saved_by_a_newer_keras():
    label, text = _first("  File \"pickle.py\", line 1\n    obj = pickle.load(f)\n"
                         "ModuleNotFoundError: No module named 'keras.src'\n")
    assert label == "keras-saved-by-newer" and "2.13" in text, text


def test_a_missing_keras_src_submodule_is_not_the_saved_by_newer_row():
    ex = explain_log("ModuleNotFoundError: No module named 'keras.src.legacy'\n")
    assert ex.causes and ex.causes[0].label != "keras-saved-by-newer"


def test_tensorflow_from_the_user_site_over_a_conda_env_is_named_first():
    label, text = _first(
        'Traceback (most recent call last):\n  File "/home/u/miniconda3/envs/gpu/lib/python3.8/'
        'runpy.py", line 194, in _run_module_as_main\n  File "/home/u/.local/lib/python3.8/'
        'site-packages/tensorflow/python/pywrap_tensorflow.py", line 64, in <module>\n'
        "ImportError: libcudart.so.11.0: cannot open shared object file: No such file or "
        "directory\n")
    assert "user site" in text and "PYTHONNOUSERSITE" in text, (label, text)


def test_a_user_site_tensorflow_without_an_env_is_not_called_shadowing():
    _, text = _first(
        'Traceback (most recent call last):\n  File "/home/u/.local/lib/python3.8/'
        'site-packages/tensorflow/python/pywrap_tensorflow.py", line 64, in <module>\n'
        "ImportError: libcudart.so.11.0: cannot open shared object file: No such file or "
        "directory\n")
    assert "user site" not in text, text


# --- (3) performance shown by a warning or a wait ----------------------------------------------

def test_a_warning_that_names_slowness_is_a_performance_finding():
    ex = explain_log("W tensorflow/core/kernels/foo.cc:10] This op runs on the CPU and is "
                     "extremely slow; consider a GPU kernel\n")
    assert ex.verdict == "warning" and ex.causes[0].label == "slowness-warning"


def test_a_minutes_long_wait_after_the_gpu_list_is_a_ptx_jit():
    ex = explain_log(
        "2021-02-03 11:00:00.100000: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1862] "
        "Adding visible gpu devices: 0\n"
        "2021-02-03 11:07:31.500000: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1261] "
        "Device interconnect StreamExecutor with strength 1 edge matrix:\n")
    assert ex.causes and ex.causes[0].label == "ptx-jit-compile", ex.verdict
    assert "7.5 minutes" in ex.causes[0].cause


def test_a_second_after_the_gpu_list_is_no_wait():
    ex = explain_log(
        "2021-02-03 11:00:00.100000: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1862] "
        "Adding visible gpu devices: 0\n"
        "2021-02-03 11:00:01.500000: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1261] "
        "Device interconnect StreamExecutor with strength 1 edge matrix:\n")
    assert not ex.problems


# --- (4) service status lines are benign ---------------------------------------------------------

@pytest.mark.parametrize("line", [
    "I tensorflow_serving/core/loader_harness.cc:86] Successfully loaded servable version "
    "{name: resnet version: 3}",
    "I0501 10:00:00.000 1 grpc_server.cc:4117] Started GRPCInferenceService at 0.0.0.0:8001",
    "I tensorflow_serving/sources/storage_path/file_system_storage_path_source.cc:390] "
    "File-system polling update: Servable:{name: m version: 7}; Servable path: /models/m/7; "
    "Polling frequency: 1",
    "I tensorflow_datasets/core/dataset_builder.py:400] Reusing dataset mnist (/root/"
    "tensorflow_datasets/mnist/3.0.1)",
])
def test_a_service_status_line_is_nothing_wrong(line):
    assert explain_log(line + "\n").verdict == "nothing-wrong"


# --- (5) details the message holds ---------------------------------------------------------------

def test_an_oom_tensor_that_is_a_large_share_of_the_memory_is_a_layer_too_big():
    label, text = _first(
        "I tensorflow/core/common_runtime/bfc_allocator.cc:1040] Limit:                  "
        "8000000000\nI tensorflow/core/common_runtime/bfc_allocator.cc:1040] InUse:     "
        "            2000000000\nW tensorflow/core/common_runtime/bfc_allocator.cc:275] Ran out "
        "of memory trying to allocate 1.49GiB.\nResourceExhaustedError: OOM when allocating "
        "tensor with shape[1000,400000] and type float on /job:localhost/replica:0/task:0/"
        "device:GPU:0 by allocator GPU_0_bfc\n")
    assert label == "out-of-memory" and "layer is too big" in text and "400,000" in text, text


def test_a_small_oom_tensor_is_not_called_a_layer_too_big():
    _, text = _first(
        "I tensorflow/core/common_runtime/bfc_allocator.cc:1040] Limit:                  "
        "8000000000\nI tensorflow/core/common_runtime/bfc_allocator.cc:1040] InUse:     "
        "            2000000000\nW tensorflow/core/common_runtime/bfc_allocator.cc:275] Ran out "
        "of memory trying to allocate 64.0MiB.\nResourceExhaustedError: OOM when allocating "
        "tensor with shape[64,256,32,32] and type float on /job:localhost/replica:0/task:0/"
        "device:GPU:0 by allocator GPU_0_bfc\n")
    assert "layer is too big" not in text, text


def test_an_oom_on_a_jetson_names_the_shared_memory():
    _, text = _first("Jetson Xavier NX, JetPack 5.1\nResourceExhaustedError: OOM when "
                     "allocating tensor with shape[8,64,256,256] and type float\n")
    assert "shares the board's RAM" in text, text


def test_an_op_missing_in_triton_names_the_op_library_not_a_python_import():
    _, text = _first(
        "E0501 tritonserver] failed to load 'bert' version 1: Not found: Op type not registered "
        "'SentencepieceOp' in binary running on abc. Make sure the Op and Kernel are registered "
        "in the binary running in this process.\n")
    assert "LD_PRELOAD" in text, text


def test_facts_read_platform_sites_and_memory():
    facts = read_facts(
        '  File "C:\\Users\\me\\AppData\\Roaming\\Python\\Python39\\site-packages\\tensorflow\\'
        'python\\x.py", line 1\n  File "C:\\Users\\me\\anaconda3\\envs\\tf\\lib\\runpy.py", '
        "line 2\nname: NVIDIA GeForce RTX 3060 major: 8 minor: 6 memoryClockRate(GHz): 1.7\n"
        "totalMemory: 12.00GiB freeMemory: 11.00GiB\n")
    assert facts.versions.os == "windows"
    assert facts.user_site_tf.endswith("site-packages") and "envs" in facts.env_site
    assert facts.compute_capabilities == ("8.6",)
    assert facts.device_memory == 12 << 30


def test_a_gpu_the_wheel_has_no_kernels_for_is_a_ptx_jit_at_start():
    ex = explain_log(
        "TensorFlow version: 2.14.0\n"
        "I tensorflow/core/common_runtime/gpu/gpu_device.cc:1886] Created device "
        "/job:localhost/replica:0/task:0/device:GPU:0 with 79000 MB memory:  -> device: 0, "
        "name: NVIDIA H100 80GB HBM3, pci bus id: 0000:19:00.0, compute capability: 9.0\n")
    assert ex.causes and ex.causes[0].label == "ptx-jit-compile", ex.verdict
    assert "compute capability 9.0 runs only its PTX" in ex.causes[0].cause


def test_a_gpu_the_wheel_has_kernels_for_is_no_finding():
    ex = explain_log(
        "TensorFlow version: 2.14.0\n"
        "I tensorflow/core/common_runtime/gpu/gpu_device.cc:1886] Created device "
        "/job:localhost/replica:0/task:0/device:GPU:0 with 38000 MB memory:  -> device: 0, "
        "name: NVIDIA A100-SXM4-40GB, pci bus id: 0000:19:00.0, compute capability: 8.0\n")
    assert not ex.problems
