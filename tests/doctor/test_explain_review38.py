"""Review 38's explain items (stop 38): each judgement reads only what its facts support.

An OOM tensor is "a layer too big" only when it is a real share of the memory, and it overrides
the fragmentation reading only when it needs most of the free memory; the user-site judgement
shows the env's root and leads only install-shaped failures; native Windows leads a no-GPU
answer only on evidence of Windows; the TF-version pattern does not read another package's
version; the CUDA-runtime judgement compares the log's CUDA with the build's and reads no OS it
was not shown.
"""

from __future__ import annotations

import sys
from pathlib import Path

from tfperf.doctor.explain_facts import read_facts
from tfperf.doctor.explain_versions import read_versions
from tfperf.doctor.explainer import explain_log

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from score_explain import first_explanation


def _first(text: str) -> tuple[str, str]:
    ex = explain_log(text)
    assert ex.causes, ex.verdict
    return ex.causes[0].label, first_explanation(ex.causes[0])


_OOM = ("ResourceExhaustedError: OOM when allocating tensor with shape[{shape}] and type float "
        "on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc [Op:MatMul]\n")


# --- (4) "one layer is too big" needs a size ---------------------------------------------------

def test_a_small_wide_oom_tensor_is_not_a_layer_too_big():
    label, text = _first(_OOM.format(shape="8,120000"))  # 4 MiB: the last straw, not the cause
    assert label == "out-of-memory" and "layer is too big" not in text, text


def test_a_wide_oom_tensor_of_gibibytes_is_a_layer_too_big():
    _, text = _first(_OOM.format(shape="8,40000000"))  # 1.2 GiB with no limit shown
    assert "layer is too big" in text, text


def test_a_wide_tensor_that_is_a_small_share_of_the_limit_is_not_a_layer_too_big():
    _, text = _first("Limit:                 80000000000\nInUse:                 79000000000\n"
                     + _OOM.format(shape="8,40000000"))  # 1.2 GiB of 74.5 GiB: 1.6 %
    assert "layer is too big" not in text, text


# --- (10) a large tensor overrides fragmentation only when it needs most of the free memory ---

_DUMP = ("I tensorflow/core/common_runtime/bfc_allocator.cc:702] Stats:\nLimit:                 "
         "{limit}\nInUse:                 {inuse}\nW tensorflow/core/common_runtime/"
         "bfc_allocator.cc:275] Ran out of memory trying to allocate {gib}GiB.  See logs for "
         "memory state.\n")


def test_a_large_tensor_with_ample_free_memory_is_fragmentation():
    # 1.34 GiB (3,000 x 120,000 floats) with 5 GiB free of 12: fragmentation by the dump's numbers
    ex = explain_log(_DUMP.format(limit=12 << 30, inuse=7 << 30, gib="1.34")
                     + _OOM.format(shape="3000,120000"))
    assert ex.causes[0].label == "gpu-memory-fragmentation", ex.causes[0].label
    assert "not fragmentation" not in ex.causes[0].detail


def test_a_large_tensor_that_needs_all_the_free_memory_is_its_size():
    # the same tensor with 1.4 GiB free: it needs nearly all of it, its size is the cause
    ex = explain_log(_DUMP.format(limit=12 << 30, inuse=(12 << 30) - (1400 << 20), gib="1.34")
                     + _OOM.format(shape="3000,120000"))
    assert ex.causes[0].label == "out-of-memory", ex.causes[0].label
    assert "not fragmentation, is the cause" in ex.causes[0].detail


# --- (5) (6) the user-site judgement --------------------------------------------------------------

_SHADOW = ('Traceback (most recent call last):\n  File "/home/u/anaconda3/envs/tf/lib/python3.7/'
           'contextlib.py", line 130, in __exit__\n    self.gen.throw(type, value, traceback)\n'
           '  File "/home/u/.local/lib/python3.7/site-packages/tensorflow/python/framework/ops.py"'
           ', line 5000, in get_controller\n    yield g\n')


def test_the_user_site_judgement_shows_the_envs_root():
    text = _SHADOW + ("ImportError: libcudart.so.10.0: cannot open shared object file: No such "
                      "file or directory\n")
    assert read_facts(text).env_site == "/home/u/anaconda3/envs/tf"
    label, first = _first(text)
    assert label == "cuda-library-missing", label
    assert "user site" in first and "(/home/u/anaconda3/envs/tf)" in first, first


def test_the_user_site_does_not_lead_the_users_own_bug():
    ex = explain_log(_SHADOW + "ValueError: Shapes (None, 10) and (None, 1) are incompatible\n")
    head = ex.causes[0]
    assert head.label == "labels-output-mismatch", head.label
    assert "user site" not in head.cause and "user site" not in head.fix, head.cause
    shadow = [c for c in ex.causes[1:] if "user site" in c.cause]
    assert shadow and shadow[0].severity == "warning", [c.label for c in ex.causes]


# --- (9) native Windows only on evidence of Windows ----------------------------------------------

_NO_GPU = (">>> import tensorflow as tf\n>>> print(tf.__version__)\n2.13.0\n>>> print(\"Num "
           "GPUs Available: \", len(tf.config.list_physical_devices(\"GPU\")))\n"
           "Num GPUs Available:  0\n")


def test_no_gpu_without_evidence_of_windows_does_not_lead_with_windows():
    ex = explain_log("tf version 2.13.1\nGPU not found\n")
    head = ex.causes[0]
    assert head.label == "gpu-not-visible", head.label
    assert not head.cause.startswith("The log shows TensorFlow"), head.cause
    assert "If this is native Windows" in head.cause and "2.11" in head.cause, head.cause


def test_no_gpu_with_a_windows_path_leads_with_windows():
    label, text = _first('  File "C:\\Users\\me\\anaconda3\\lib\\site-packages\\x.py", line 1\n'
                         "tf version 2.13.1\nGPU not found\n")
    assert label == "gpu-not-visible" and "native Windows" in text.split(". ")[0], text
    assert "WSL2" in text, text


def test_a_repl_check_without_windows_keeps_the_rows_cause_first():
    ex = explain_log(_NO_GPU)
    head = ex.causes[0]
    assert head.label == "gpu-not-visible" and "If this is native Windows" in head.cause
    assert head.cause.index("If this is native Windows") > 0, head.cause


# --- (11) the TF-version pattern's left boundary ------------------------------------------------

def test_another_packages_tf_version_is_not_tensorflows():
    assert read_versions("onnx-tf version 1.10.0\n").tensorflow is None
    assert read_versions("tensorflow_tf_version 1.10.0\n").tensorflow is None
    assert read_versions("tf version 2.13.1\n").tensorflow == "2.13.1"
    assert read_versions("print(tf.__version__) 2.4.0\n").tensorflow == "2.4.0"


# --- (12) the CUDA-runtime judgement compares versions and reads no OS it was not shown ---------

_CUDART = ("E tensorflow/stream_executor/cuda/cuda_driver.cc:328] cudaGetDevice() failed. Status: "
           "cudaGetDevice symbol not found.\n")


def test_a_cuda_the_build_matches_is_not_called_another_version():
    text = ("tf.__version__ 2.4.0\nCUDA Version: 11.0\nI tensorflow/stream_executor/platform/"
            "default/dso_loader.cc:49] Successfully opened dynamic library cudart64_110.dll\n"
            + _CUDART)
    label, first = _first(text)
    assert label == "cuda-runtime-mismatch", label
    assert "another version's" not in first, first
    assert "CUDA 11.0" in first and ("PATH" in first or "driver" in first), first


def test_a_cuda_of_another_version_is_still_a_mismatch():
    label, first = _first("tf.__version__ 2.4.0\nCUDA Version: 10.1\n" + _CUDART)
    assert label == "cuda-runtime-mismatch" and "another version's" in first, first
    assert "built for CUDA 11.0" in first, first


def test_a_log_with_no_os_is_not_read_as_windows():
    # TF 2.12 has no native-Windows GPU build: a GPU error with no OS shown is Linux's build
    label, first = _first("tf.__version__ 2.12.0\n" + _CUDART)
    assert label == "cuda-runtime-mismatch" and "built for CUDA 11.8" in first, first
    # TF 2.0: the Linux table's 10.0 and the Windows table's 10 agree; the precise one is named
    _, first = _first("tf.__version__ 2.0.0\n" + _CUDART)
    assert "built for CUDA 10.0" in first, first


def test_a_log_naming_windows_keeps_the_windows_table():
    _, first = _first("tf.__version__ 2.0.0\nC:\\Python37\\lib\\site-packages\n" + _CUDART)
    assert "built for CUDA 10 " in first, first
