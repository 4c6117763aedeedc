"""Roofs per precision and engine, and the fraction of the right one."""

from __future__ import annotations

import pytest

from tfperf.roofline.roofs import Roof, Roofs, cpu_roofs, gpu_roofs, judge


@pytest.mark.parametrize(("name", "device", "fp32", "tensor"), [
    ("NVIDIA A100-SXM4-80GB", "NVIDIA A100 SXM4 80GB", 19.5e12, True),
    ("NVIDIA A100 80GB PCIe", "NVIDIA A100 PCIe 80GB", 19.5e12, True),
    ("NVIDIA H100 80GB HBM3", "NVIDIA H100 SXM", 67e12, True),
    ("NVIDIA H100 PCIe", "NVIDIA H100 PCIe", 51e12, True),
    ("Tesla T4", "NVIDIA T4", 8.1e12, False),  # Turing: no TF32
    ("Tesla V100-SXM2-16GB", "NVIDIA V100 SXM2", 15.7e12, False),
    ("NVIDIA A10", "NVIDIA A10", 31.2e12, True),  # not the A100
])
def test_gpu_table(name, device, fp32, tensor):
    roofs = gpu_roofs(name)
    assert roofs is not None and roofs.device == device
    assert roofs.compute["fp32"].value == fp32 and roofs.tensor_cores is tensor
    assert roofs.bandwidth is not None and roofs.compute["fp32"].source


def test_an_fp32_kernel_meets_the_fp32_roof_not_the_highest():
    h100 = gpu_roofs("NVIDIA H100 80GB HBM3")
    assert h100 is not None
    elementwise = h100.for_op("float32", matmul_like=False)
    matmul = h100.for_op("float32", matmul_like=True)
    half = h100.for_op("bfloat16")
    highest = max(r.value for r in h100.compute.values() if r.precision != "int8")
    assert elementwise is not None and elementwise.value == 67e12  # CUDA cores
    assert matmul is not None and matmul.precision == "tf32"  # TF32 tensor cores
    assert half is not None and half.value == highest  # BF16 tensor cores
    assert highest / elementwise.value > 14  # XProf's single roof: ~15× too high for FP32
    no_tf32 = gpu_roofs("NVIDIA H100 80GB HBM3", tf32_enabled=False)
    assert no_tf32 is not None and no_tf32.for_op("float32").precision == "fp32"


def test_unknown_gpu_has_no_roof():
    assert gpu_roofs("Imaginary GPU 9000") is None


def test_cpu_roof_from_vector_width():
    roofs = cpu_roofs(threads=2, flags={"avx512f", "fma", "avx512_bf16", "avx512_vnni"},
                      mhz=2000.0)
    assert roofs.compute["fp32"].value == 2 * 2e9 * 16 * 2 * 2
    assert roofs.compute["fp64"].value == roofs.compute["fp32"].value / 2
    assert roofs.compute["bf16"].value == 2 * roofs.compute["fp32"].value
    avx2 = cpu_roofs(threads=1, flags={"avx2", "fma"}, mhz=1000.0)
    assert avx2.compute["fp32"].value == 1e9 * 8 * 2 * 2 and "bf16" not in avx2.compute


def _roofs(flops: float, bw: float) -> Roofs:
    return Roofs("test", {"fp32": Roof("fp32", flops, "vector units", "test")},
                 Roof("memory", bw, "memory", "test"))


def test_compute_bound_fraction():
    r = judge(flops=1e9, nbytes=1e6, seconds=0.1, roofs=_roofs(100e9, 10e9), dtype="float32")
    assert r["bound"] == "compute" and r["fraction"] == pytest.approx(0.1)


def test_memory_bound_fraction_uses_intensity_times_bandwidth():
    # 1 FLOP per byte at 10 GB/s: at most 10 GFLOP/s, whatever the compute roof
    r = judge(flops=1e9, nbytes=1e9, seconds=0.2, roofs=_roofs(100e9, 10e9), dtype="float32")
    assert r["bound"] == "memory" and r["roof"]["attainable"] == pytest.approx(10e9)
    assert r["fraction"] == pytest.approx(0.5)


def test_above_the_roof_is_an_error_not_a_figure():
    r = judge(flops=50e9, nbytes=1e6, seconds=0.1, roofs=_roofs(100e9, 10e9), dtype="float32")
    assert r["fraction"] is None and "above the compute roof" in r["error"]
