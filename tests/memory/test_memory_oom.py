"""tfperf explain links an out-of-memory log to the memory view: host RAM told from device
memory, the failed tensor's size from the shape it names. No TensorFlow."""

from __future__ import annotations

from tfperf.doctor.explainer import explain_log

GPU = ("OP_REQUIRES failed at conv_ops.cc:1068 : RESOURCE_EXHAUSTED: OOM when allocating tensor "
       "with shape[64,256,56,56] and type float on /job:localhost/replica:0/task:0/device:GPU:0 "
       "by allocator GPU_0_bfc")
HOST = ("OOM when allocating tensor with shape[1000000,512] and type float on "
        "/job:localhost/replica:0/task:0/device:CPU:0 by allocator mklcpu")


def _oom(text: str):
    (cause,) = [c for c in explain_log(text).causes if "memory" in c.label]
    return cause


def test_device_memory_and_the_failed_tensor():
    see = _oom(GPU).see
    assert "GPU:0 memory (allocator GPU_0_bfc) ran out" in see
    assert "[64,256,56,56] float32 = 196.0 MiB" in see
    assert "tfperf profile --memory" in see and "--fit" in see


def test_host_ram_is_not_gpu_memory():
    see = _oom(HOST).see
    assert see.startswith("host RAM") and "not GPU memory" in see
    assert "[1000000,512] float32 = 1.91 GiB" in see


def test_which_memory_reads_the_allocator():
    from tfperf.memory.oom import which_memory

    assert which_memory({"allocator": ["cuda_host_bfc"]}).startswith("pinned host")
    assert which_memory({"device": ["/device:CPU:0"]}).startswith("host RAM")
    assert which_memory({}) == ""


def test_explain_still_imports_no_tensorflow():
    import subprocess
    import sys

    code = ("import sys; from tfperf.doctor.explainer import explain_log; "
            f"explain_log({GPU!r}); print('tensorflow' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "False"
