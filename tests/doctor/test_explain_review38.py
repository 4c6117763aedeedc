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


# --- (11) the TF-version pattern's left boundary ------------------------------------------------

def test_another_packages_tf_version_is_not_tensorflows():
    assert read_versions("onnx-tf version 1.10.0\n").tensorflow is None
    assert read_versions("tensorflow_tf_version 1.10.0\n").tensorflow is None
    assert read_versions("tf version 2.13.1\n").tensorflow == "2.13.1"
    assert read_versions("print(tf.__version__) 2.4.0\n").tensorflow == "2.4.0"
