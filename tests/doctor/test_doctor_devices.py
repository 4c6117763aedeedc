"""`tfperf doctor --devices`: MirroredStrategy over logical CPU devices in a real child process,
planted faults (a replica adding a constant, a replica that never joins), and the GPU verdicts
(bus bandwidth against NVLink/PCIe peaks, the best cross_device_ops, stragglers) from injected
facts of machines this one is not."""

from __future__ import annotations

import pytest

from tfperf.core.findings import Status
from tfperf.doctor.collective_checks import (
    bandwidths,
    bus_factor,
    device_findings,
    link_peak,
)
from tfperf.doctor.facts import Facts
from tfperf.doctor.probes.devices import probe_devices
from tfperf.doctor.report import report_json, report_text

tf = pytest.importorskip("tensorflow")


def by_code(findings):
    return {f.code: f for f in findings}


# ---------------------------------------------------------------------------------------------
# real TensorFlow, in the child process


def test_collectives_over_logical_cpu_devices_pass_and_a_planted_wrong_replica_fails():
    # one child: replica 1 adds 1.0 to its all-reduce result through ReductionToOneDevice
    # only, so the same run shows the check passing and failing
    raw = probe_devices(timeout=60, import_timeout=180, max_bytes=512,
                        plant={"replica": 1, "add": 1.0, "ops": "ReductionToOneDevice"})
    assert raw["status"] == "ok", raw
    found = by_code(device_findings(raw, []))
    assert found["devices.strategy"].status is Status.PASS
    assert "2 CPU devices" in found["devices.strategy"].message
    assert found["devices.replicas"].status is Status.PASS
    for ok in ("default", "HierarchicalCopyAllReduce"):
        assert found[f"devices.allreduce.{ok}"].status is Status.PASS
    wrong = found["devices.allreduce.ReductionToOneDevice"]
    assert wrong.status is Status.FAIL
    assert "replica 1 got [4.0, 7.0, 10.0, 13.0]" in wrong.message
    assert "replica 0 got" not in wrong.message
    assert wrong.data["wrong_replicas"] == [1]
    bw = found["devices.bandwidth"]
    # a wrong choice is never advised, however fast
    assert set(bw.data["sweeps"]) == {"default", "HierarchicalCopyAllReduce"}
    assert bw.data["left_out_wrong"] == ["ReductionToOneDevice"]
    sweep = bw.data["sweeps"]["default"]
    assert [p["bytes"] for p in sweep] == [8, 64, 512]
    assert all(p["busbw_gbps"] > 0 for p in sweep)
    assert found["devices.straggler"].status in (Status.PASS, Status.WARN)


def test_a_replica_that_never_joins_ends_in_the_timeout_with_a_verdict():
    raw = probe_devices(timeout=8, import_timeout=180, bandwidth=False,
                        plant={"replica": 1, "hang": True, "ops": "default"})
    assert raw["status"] == "timed out after 8s in allreduce.default"
    found = by_code(device_findings(raw, []))
    assert found["devices.strategy"].status is Status.FAIL
    assert "allreduce.default hung" in found["devices.strategy"].message
    assert found["devices.allreduce.default"].status is Status.FAIL
    assert "did not finish" in found["devices.allreduce.default"].message
    assert raw["seconds"] < 180 + 30  # the hung child was killed, not waited for


# ---------------------------------------------------------------------------------------------
# GPU verdicts from injected facts


def gpu_raw(n=8, default_s=None, nccl_s=None, matmul=None, copies=None):
    """Raw --devices results of an n-GPU machine: 128 MiB all-reduce times per choice."""
    size = 128 * 2**20
    devices = [f"/device:GPU:{i}" for i in range(n)]
    stages = {"setup": {"device_type": "GPU", "devices": devices, "tf_version": "2.21.0"},
              "replicas": {"replicas": [{"replica": i, "expected": d, "seen": d, "replica_id": i}
                                        for i, d in enumerate(devices)],
                           "num_replicas": n, "default_ops": "NcclAllReduce"}}
    for name, seconds in (("default", default_s), ("NcclAllReduce", nccl_s),
                          ("ReductionToOneDevice", 0.2)):
        if seconds is None:
            continue
        stages[f"strategy.{name}"] = "ok"
        expected = [v * n * (n + 1) / 2 for v in (1.0, 2.0, 3.0, 4.0)]
        stages[f"allreduce.{name}"] = {"ops": name, "num_replicas": n, "expected": expected,
                                       "replicas": [{"replica": i, "value": expected}
                                                    for i in range(n)]}
        stages[f"bandwidth.{name}"] = [{"bytes": 8, "seconds": 2e-5},
                                       {"bytes": size, "seconds": seconds}]
    matmul = matmul or [0.01] * n
    stages["per_device"] = [{"device": d, "matmul_s": matmul[i],
                             **({"copy_s": copies[i]} if copies and i else {})}
                            for i, d in enumerate(devices)]
    return {"status": "ok", "stages": stages, "seconds": 30.0}


H100_NVLINK = [{"index": i, "nvlinks": 18, "nvlink_version": 4, "pcie_gen": 5,
                "pcie_width": 16} for i in range(8)]


def test_nccl_tests_bandwidth_definitions():
    assert bus_factor(8) == pytest.approx(1.75)
    assert bus_factor(2) == pytest.approx(1.0)
    (p,) = bandwidths([{"bytes": 10**9, "seconds": 0.01}], 8)
    assert p["algbw_gbps"] == pytest.approx(100.0)
    assert p["busbw_gbps"] == pytest.approx(175.0)


def test_link_peak_from_nvml_facts():
    assert link_peak(H100_NVLINK) == (450.0, "NVLink 4 ×18")
    pcie = [{"index": 0, "nvlinks": 0, "pcie_gen": 4, "pcie_width": 16},
            {"index": 1, "nvlinks": 0, "pcie_gen": 3, "pcie_width": 16}]
    peak, what = link_peak(pcie)
    assert peak == pytest.approx(15.76) and what == "PCIe 3.0 x16"  # the slower GPU bounds it
    assert link_peak([{"index": 0}])[0] is None


def test_nvlink_machine_near_peak_passes_and_names_the_best_choice():
    # 128 MiB in 0.6 ms on 8 ranks: busbw = 134217728 / 6e-4 / 1e9 × 1.75 ≈ 391 GB/s (87 %)
    found = by_code(device_findings(gpu_raw(default_s=6e-4, nccl_s=6e-4), H100_NVLINK))
    bw = found["devices.bandwidth"]
    assert bw.status is Status.PASS, bw.message
    assert "of the NVLink 4 ×18 peak (450 GB/s)" in bw.message
    assert bw.data["share_of_peak"] == pytest.approx(134217728 / 6e-4 / 1e9 * 1.75 / 450)
    assert bw.data["best"] in ("default", "NcclAllReduce")


def test_slow_links_and_a_worse_default_warn_with_the_fix():
    found = by_code(device_findings(gpu_raw(default_s=0.01, nccl_s=0.004), H100_NVLINK))
    bw = found["devices.bandwidth"]
    assert bw.status is Status.WARN
    assert bw.data["best"] == "NcclAllReduce"
    assert "below half its peak" in bw.hint
    assert "cross_device_ops=tf.distribute.NcclAllReduce()" in bw.hint
    assert "2.5× the default" in bw.hint


def test_a_slow_device_and_a_slow_link_are_named_stragglers():
    matmul = [0.01] * 7 + [0.03]
    copies = [None, 0.01, 0.01, 0.04, 0.01, 0.01, 0.01, 0.01]
    found = by_code(device_findings(gpu_raw(default_s=6e-4, matmul=matmul, copies=copies),
                                    H100_NVLINK))
    s = found["devices.straggler"]
    assert s.status is Status.WARN
    assert "/device:GPU:7 (matmul 3.0× slower" in s.message
    assert "/device:GPU:3 (copy from device 0 4.0× slower" in s.message
    assert "GPU:1" not in s.message


def test_devices_verdicts_go_through_the_doctor_report():
    facts = Facts(devices=gpu_raw(default_s=6e-4), gpus=H100_NVLINK)
    findings = device_findings(facts.devices, facts.gpus)
    text = report_text(facts, findings)
    assert "Devices and collectives" in text
    assert '"devices.bandwidth"' in report_json(facts, findings)


def test_one_gpu_is_skipped_and_a_dead_child_fails():
    one = {"status": "ok", "stages": {"setup": {"device_type": "GPU",
                                                "devices": ["/device:GPU:0"]}}}
    (f,) = device_findings(one, [])
    assert f.status is Status.SKIP and "nothing to reduce across" in f.message
    dead = gpu_raw(default_s=6e-4)
    dead["status"] = "ended (killed by SIGSEGV) in bandwidth.default"
    found = by_code(device_findings(dead, H100_NVLINK))
    assert found["devices.strategy"].status is Status.FAIL
    assert "SIGSEGV" in found["devices.strategy"].message


def test_judge_adds_the_devices_and_workers_verdicts_only_when_they_ran():
    from tfperf.doctor.checks import judge

    plain = {f.code for f in judge(Facts(), compute=False)}
    assert not any(c.startswith(("devices.", "workers.")) for c in plain)
    workers = {"status": "ok", "workers": ["a:1", "b:2"], "index": 0,
               "stages": {"setup": {}, "join": "ok"}}
    codes = {f.code for f in judge(Facts(devices=gpu_raw(default_s=6e-4), gpus=H100_NVLINK,
                                         workers=workers), compute=False)}
    assert {"devices.strategy", "devices.bandwidth", "workers.join"} <= codes
