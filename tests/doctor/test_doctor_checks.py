"""Verdicts on simulated machines: facts from fixtures (or built here) → checks → report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tfperf.core.findings import Finding, Status
from tfperf.doctor import checks
from tfperf.doctor.checks import judge, run_checks
from tfperf.doctor.facts import Facts
from tfperf.doctor.live import live_findings
from tfperf.doctor.report import exit_status, report_json, report_markdown, report_text
from tfperf.doctor.specifiers import satisfies

FIXTURES = Path(__file__).parent / "fixtures"


def load(name: str, **changes: Any) -> Facts:
    data = json.loads((FIXTURES / f"{name}.json").read_text())
    data.update(changes)
    return Facts.from_dict(data)


def verdicts(facts: Facts, compute: bool = False) -> dict[str, Finding]:
    return {f.code: f for f in judge(facts, compute=compute)}


# ---------------------------------------------------------------------------------------------
# the simulated machines


def test_article_scenario_fails_naming_cudnn8_cuda112_cudnn81():
    v = verdicts(load("article_tf25_cuda125"))
    lib = v["doctor.libraries"]
    assert lib.status is Status.FAIL
    for needle in ("libcudnn.so.8", "CUDA 11.2", "cuDNN 8.1", "libcudart.so.11.0"):
        assert needle in lib.message
    # the CUDA 12.5 toolkit and cuDNN 9 on the machine are named as not helping
    assert "libcudnn.so.9" in lib.message and "CUDA 12.5 toolkit does not provide" in lib.message
    assert "cudatoolkit=11.2 cudnn=8.1" in lib.hint
    # the driver is fine (S7: 550.144.03 ≥ 460.27.03) and the ceiling is explained
    assert v["doctor.driver"].status is Status.PASS
    assert "460.27.03" in v["doctor.driver"].message
    assert "ceiling, not an installed toolkit" in v["doctor.cuda_versions"].message
    assert "not a problem by itself" in v["doctor.cuda_versions"].message
    # TF saw no GPU, and the reason comes from its own import log
    sees = v["doctor.tf_sees_gpu"]
    assert sees.status is Status.FAIL and "libcudnn.so.8" in sees.message
    assert sees.hint == lib.hint
    assert exit_status(list(v.values())) == 1


def test_tf221_on_driver_535_is_minor_version_compatibility_warn():
    facts = load("tf221_driver535")
    v = verdicts(facts)
    drv = v["doctor.driver"]
    assert drv.status is Status.WARN
    assert "minor-version compatibility" in drv.message and "PTX JIT" in drv.message
    assert "555.42.06" in drv.message and "525.60.13" in drv.message
    assert drv.data["verdict"] == "compat"
    assert v["doctor.pip_wheels"].status is Status.PASS
    assert v["doctor.gpu_arch"].status is Status.PASS
    assert exit_status(list(v.values())) == 0  # it runs: a warning, not a failure
    # a driver below the 12.x floor fails outright
    old = verdicts(load("tf221_driver535", driver_version="520.61.05"))["doctor.driver"]
    assert old.status is Status.FAIL and "too old" in old.message
    # and one at the build's full minimum passes
    new = verdicts(load("tf221_driver535", driver_version="555.42.06"))["doctor.driver"]
    assert new.status is Status.PASS


def test_wsl2_reads_the_windows_driver_minimums():
    facts = load("tf221_driver535", wsl=True, driver_version="531.79")
    v = verdicts(facts)
    assert "WSL2" in v["doctor.platform"].message and v["doctor.platform"].status is Status.PASS
    assert v["doctor.driver"].status is Status.WARN
    assert "555.85" in v["doctor.driver"].message and "528.33" in v["doctor.driver"].message
    low = verdicts(load("tf221_driver535", wsl=True, driver_version="527.50"))["doctor.driver"]
    assert low.status is Status.FAIL


def test_tensorflow_cpu_on_a_gpu_machine_fails_with_the_swap_command():
    v = verdicts(load("tfcpu_on_gpu"))
    cpu = v["doctor.cpu_only_build"]
    assert cpu.status is Status.FAIL
    assert "tensorflow-cpu" in cpu.message and "RTX 4090" in cpu.message
    assert cpu.hint == ("pip uninstall -y tensorflow-cpu && "
                        "pip install 'tensorflow[and-cuda]==2.21.0'")
    for gpu_check in ("doctor.driver", "doctor.libraries", "doctor.gpu_arch", "doctor.tf_sees_gpu"):
        assert v[gpu_check].status is Status.SKIP, gpu_check


def test_h100_with_tf215_runs_through_ptx_jit_only():
    arch = verdicts(load("h100_tf215"))["doctor.gpu_arch"]
    assert arch.status is Status.WARN
    assert "H100" in arch.message and "cc 9.0" in arch.message
    assert "JIT-compiled from PTX compute_80" in arch.message
    assert arch.data["gpus"][0]["support"] == "ptx"


def test_h100_arch_read_from_the_wheel_table_when_tf_did_not_run():
    facts = load("h100_tf215", tf_build_info={}, tf_probe="timed out after 5s during import")
    arch = verdicts(facts)["doctor.gpu_arch"]
    assert arch.status is Status.WARN and "PTX" in arch.message
    assert "build_info.py" in arch.data["archs_source"]


def test_blackwell_gpu_on_tf221_is_not_native():
    facts = load("tf221_driver535", driver_version="570.124.06",
                 gpus=[{"index": 0, "name": "NVIDIA GeForce RTX 5090",
                        "compute_capability": "12.0", "memory_mib": 32607}])
    arch = verdicts(facts)["doctor.gpu_arch"]
    assert arch.status in (Status.WARN, Status.FAIL)
    assert arch.data["gpus"][0]["support"] != "native"


def test_native_windows_with_tf212_says_use_wsl2():
    v = verdicts(load("windows_tf212"))
    plat = v["doctor.platform"]
    assert plat.status is Status.FAIL
    assert "2.10" in plat.message and "WSL2" in plat.hint
    # tensorflow + tensorflow-intel is how the Windows wheel installs: not a conflict
    assert v["doctor.tensorflow"].status is Status.PASS
    # the same TF on Windows without a GPU only warns; TF 2.10 there is fine
    no_gpu = load("windows_tf212", gpus=[], driver_version=None, driver_source=None)
    assert verdicts(no_gpu)["doctor.platform"].status is Status.WARN
    tf210 = load("windows_tf212", tf_packages={"tensorflow-gpu": "2.10.0"}, tf_version="2.10.0")
    assert verdicts(tf210)["doctor.platform"].status is Status.PASS


def test_no_nvidia_smi_at_all_skips_gpu_checks_with_the_reason():
    facts = load("no_gpu_no_nvidia_smi")
    v = verdicts(facts, compute=True)
    gpu = v["doctor.gpu"]
    assert gpu.status is Status.SKIP
    assert "nvidia-smi: not found" in gpu.message and "NVML Shared Library Not Found" in gpu.message
    for code in ("doctor.driver", "doctor.libraries", "doctor.gpu_arch", "doctor.tf_sees_gpu",
                 "doctor.cudnn_copies", "doctor.pip_wheels"):
        assert v[code].status is Status.SKIP, code
        assert "no NVIDIA GPU" in v[code].message, code
    # "Could not find cuda drivers" is expected noise without a GPU
    assert v["doctor.import_log"].status is Status.PASS
    assert v["live.matmul.gpu"].status is Status.SKIP
    assert v["live.matmul.cpu"].status is Status.PASS
    assert exit_status(list(v.values())) == 0


def test_gpu_on_pci_without_driver_fails():
    facts = load("no_gpu_no_nvidia_smi", pci_nvidia_gpus=["0000:01:00.0 [10de:2684]"])
    gpu = verdicts(facts)["doctor.gpu"]
    assert gpu.status is Status.FAIL
    assert "no driver answers" in gpu.message and "10de:2684" in gpu.message


def test_driver_library_mismatch_after_an_update_fails():
    facts = load("tf221_driver535", driver_source="/proc/driver/nvidia/version", gpus=[],
                 driver_probes={"nvml": "NVMLError_LibRmVersionMismatch: RM has detected an "
                                        "NVML/RM version mismatch.",
                                "nvidia-smi": "exit status 18: Failed to initialize NVML: "
                                              "Driver/library version mismatch",
                                "/proc/driver/nvidia/version": "ok"})
    gpu = verdicts(facts)["doctor.gpu"]
    assert gpu.status is Status.FAIL and "reboot" in gpu.hint


def test_hung_nvidia_smi_is_reported_not_fatal():
    facts = load("no_gpu_no_nvidia_smi", driver_probes={
        "nvml": "NVMLError_Unknown: Unknown Error", "nvidia-smi": "timed out after 10s",
        "/proc/driver/nvidia/version": "not found"})
    gpu = verdicts(facts)["doctor.gpu"]
    assert gpu.status is Status.WARN
    assert "timed out after 10s" in gpu.message and "wedged driver" in gpu.hint


HUNG = {"nvml": "NVMLError_Unknown: Unknown Error", "nvidia-smi": "timed out after 10s",
        "/proc/driver/nvidia/version": "not found"}


def test_a_hung_driver_tool_is_no_proof_of_a_cpu_only_machine():
    """nvidia-smi hung ("a wedged driver: reboot") beside "tensorflow-cpu ... this machine has
    no NVIDIA GPU: the right build": the two verdicts contradicted each other."""
    cpu_tf = {"tf_packages": {"tensorflow-cpu": "2.21.0"}, "tf_build_info": {}}
    hung = verdicts(load("no_gpu_no_nvidia_smi", driver_probes=HUNG, **cpu_tf))
    build = hung["doctor.cpu_only_build"]
    assert build.status is Status.SKIP and "no NVIDIA GPU" not in build.message
    assert "unknown (nvidia-smi: timed out after 10s)" in build.message
    quiet = verdicts(load("no_gpu_no_nvidia_smi", **cpu_tf))["doctor.cpu_only_build"]
    assert quiet.status is Status.PASS and "the right build" in quiet.message  # valid twin


@pytest.mark.parametrize("changes, first", [
    ({}, "pip install tensorflow-cpu (this machine has no NVIDIA GPU"),
    ({"pci_nvidia_gpus": ["0000:01:00.0 [10de:2684]"]}, "pip install 'tensorflow[and-cuda]'"),
    ({"driver_probes": HUNG}, "pip install 'tensorflow[and-cuda]'"),
    ({"pci_nvidia_gpus": None}, "pip install 'tensorflow[and-cuda]'"),  # could not look
    ({"os": "darwin"}, "pip install 'tensorflow[and-cuda]'"),
])
def test_tensorflow_missing_leads_with_the_build_this_machine_needs(changes, first):
    """Without TensorFlow on a machine with no GPU, the fix led with the CUDA build."""
    facts = load("no_gpu_no_nvidia_smi", tf_packages={}, tf_probe="not installed",
                 tf_build_info={}, **changes)
    tf = verdicts(facts)["doctor.tensorflow"]
    assert tf.status is Status.FAIL and tf.hint.startswith(first)


# ---------------------------------------------------------------------------------------------
# single checks


def test_python_outside_the_tested_range_fails():
    py = {f.code: f for f in run_checks(load("article_tf25_cuda125", python_version="3.11.4"))}
    assert py["doctor.python"].status is Status.FAIL
    assert "3.6–3.9" in py["doctor.python"].message and "3.9" in py["doctor.python"].hint


def test_two_tensorflow_distributions_fail():
    facts = load("tf221_driver535", tf_packages={"tensorflow": "2.21.0",
                                                 "tensorflow-cpu": "2.20.0"})
    tf = verdicts(facts)["doctor.tensorflow"]
    assert tf.status is Status.FAIL and "pip uninstall -y" in tf.hint


def test_tensorflow_import_crash_is_a_failing_check():
    facts = load("tf221_driver535", tf_probe="import crashed (killed by SIGILL)")
    tf = verdicts(facts)["doctor.tensorflow"]
    assert tf.status is Status.FAIL and "AVX" in tf.hint


def test_tf_sees_no_gpu_because_cuda_visible_devices_hides_them():
    facts = load("tf221_driver535", tf_gpus=[], env={"CUDA_VISIBLE_DEVICES": "-1"})
    sees = verdicts(facts)["doctor.tf_sees_gpu"]
    assert sees.status is Status.FAIL and "CUDA_VISIBLE_DEVICES" in sees.message


def test_pip_wheels_off_the_pins_warn():
    facts = load("tf221_driver535")
    facts.nvidia_wheels = {**facts.nvidia_wheels, "nvidia-cudnn-cu12": "9.1.0.70",
                           "nvidia-cudnn-cu11": "8.6.0.163"}
    wheels = verdicts(facts)["doctor.pip_wheels"]
    assert wheels.status is Status.WARN
    assert "nvidia-cudnn-cu12 9.1.0.70" in wheels.message
    assert "nvidia-cudnn-cu11" in wheels.message
    assert wheels.hint == "pip install 'tensorflow[and-cuda]==2.21.0'"


def test_two_different_cudnns_reachable_warn():
    facts = load("tf221_driver535")
    facts.cuda_libraries = [
        *facts.cuda_libraries,
        {"name": "libcudnn.so.9", "path": "/venv/lib/python3.12/site-packages/torch/lib/"
         "libcudnn.so.9", "origin": "torch", "version": "9.1.0"},
        {"name": "libcudnn.so.8", "path": "/usr/lib/x86_64-linux-gnu/libcudnn.so.8",
         "origin": "ldconfig", "version": "8.9.7"}]
    copies = verdicts(facts)["doctor.cudnn_copies"]
    assert copies.status is Status.WARN
    assert "3 different cuDNNs" in copies.message and "torch" in copies.message


def test_found_library_that_does_not_load_fails_with_the_loader_error():
    facts = load("tf221_driver535")
    facts.needed_libraries["libcusolver.so.11"] = {
        "found": [{"path": "/venv/nvidia/cusolver/lib/libcusolver.so.11", "origin": "pip",
                   "dlopen": "libnvJitLink.so.12: cannot open shared object file"}],
        "dlopen": "libcusolver.so.11: cannot open shared object file"}
    lib = verdicts(facts)["doctor.libraries"]
    assert lib.status is Status.FAIL
    assert "does not load: libnvJitLink.so.12" in lib.message


def test_a_check_that_raises_becomes_a_failing_verdict():
    def broken(facts: Facts) -> Finding:
        raise KeyError("boom")

    (f,) = run_checks(Facts(), (broken,))
    assert f.status is Status.FAIL and "internal error" in f.message and f.code == "doctor.broken"


def test_empty_facts_never_crash_a_check():
    for f in run_checks(Facts()):
        assert "internal error" not in f.message, f
    assert verdicts(Facts())["doctor.tensorflow"].status is Status.FAIL  # nothing installed


def test_every_check_has_a_fix_when_it_fails_or_warns():
    for name in ("article_tf25_cuda125", "tf221_driver535", "tfcpu_on_gpu", "h100_tf215",
                 "windows_tf212", "no_gpu_no_nvidia_smi"):
        for f in run_checks(load(name)):
            if f.status in (Status.FAIL, Status.WARN) and f.code != "doctor.cuda_versions":
                assert f.hint, (name, f.code, f.message)


# ---------------------------------------------------------------------------------------------
# live verdicts


def _gpu_matmul(**over: Any) -> dict[str, Any]:
    r = {"id": "live.matmul.gpu0", "device": "/GPU:0", "n": 4096, "dtype": "float32",
         "median_s": 0.004, "tflops": 34.4, "rel_error_vs_cpu": 3e-7, "speedup_vs_cpu": 500.0,
         "tf32_enabled": False, "measurement": {"warning": None}}
    r.update(over)
    return r


CPU = {"id": "live.matmul.cpu", "device": "/CPU:0", "n": 4096, "dtype": "float32",
       "median_s": 2.0, "tflops": 0.069, "measurement": {"warning": None}}


def _live(results: dict[str, Any]) -> dict[str, Finding]:
    return {f.code: f for f in live_findings(results, compute=True, gpus_expected=True,
                                             tf_ran=True)}


def test_live_gpu_matmul_agreement_and_ratio():
    v = _live({"live.matmul": [CPU, _gpu_matmul()]})
    gpu = v["live.matmul.gpu0"]
    assert gpu.status is Status.PASS
    assert "34.4 TFLOP/s" in gpu.message and "500× the CPU" in gpu.message
    assert "agrees with the CPU" in gpu.message
    assert "69.0 GFLOP/s" in v["live.matmul.cpu"].message


def test_live_tf32_error_is_explained_not_failed():
    v = _live({"live.matmul": [CPU, _gpu_matmul(rel_error_vs_cpu=4e-4, tf32_enabled=True)]})
    assert v["live.matmul.gpu0"].status is Status.PASS
    assert "TF32" in v["live.matmul.gpu0"].message


def test_live_disagreement_fails():
    v = _live({"live.matmul": [CPU, _gpu_matmul(rel_error_vs_cpu=0.3)]})
    assert v["live.matmul.gpu0"].status is Status.FAIL
    assert "DISAGREES" in v["live.matmul.gpu0"].message


def test_live_timeout_and_reduced_precision():
    v = _live({"live.matmul": {"error": "timed out after 5s"},
               "live.reduced_precision": [
                   {"id": "live.float16", "supported": True, "device": "/GPU:0", "n": 4096,
                    "dtype": "float16", "median_s": 0.001, "tflops": 137.0,
                    "speedup_vs_float32": 4.0},
                   {"id": "live.bfloat16", "supported": False,
                    "error": "NotFoundError: no kernel"}]})
    assert v["live.matmul"].status is Status.FAIL
    assert "timed out after 5s" in v["live.matmul"].message
    assert v["live.float16"].status is Status.PASS and "4.0× float32" in v["live.float16"].message
    assert v["live.bfloat16"].status is Status.WARN


def test_no_compute_skips_live_checks():
    (f,) = live_findings({}, compute=False, gpus_expected=False, tf_ran=True)
    assert f.status is Status.SKIP and "--no-compute" in f.message


# ---------------------------------------------------------------------------------------------
# report


SCHEMA = {
    "type": "object",
    "required": ["facts", "checks", "summary", "exit_status", "schema", "tfperf"],
    "properties": {
        "facts": {"type": "object", "required": ["os", "tf_packages", "driver_version", "gpus",
                                                 "needed_libraries", "tf_version", "live"]},
        "checks": {"type": "array", "items": {
            "type": "object", "required": ["id", "status", "message", "fix"],
            "properties": {"id": {"type": "string"},
                           "status": {"enum": ["pass", "warn", "fail", "skip"]},
                           "message": {"type": "string"}, "fix": {"type": "string"}}}},
        "exit_status": {"enum": [0, 1]},
    },
}


@pytest.mark.parametrize("name", ["article_tf25_cuda125", "no_gpu_no_nvidia_smi"])
def test_json_report_follows_the_documented_schema(name):
    facts = load(name)
    findings = judge(facts, compute=True)
    doc = json.loads(report_json(facts, findings))
    jsonschema.validate(doc, SCHEMA)
    assert Facts.from_dict(doc["facts"]) == facts  # the facts round-trip: a report is a fixture
    assert doc["exit_status"] == exit_status(findings)


def test_text_report_groups_and_colour():
    facts = load("article_tf25_cuda125")
    findings = judge(facts, compute=False)
    plain = report_text(facts, findings, color=False)
    assert "\x1b[" not in plain
    for heading in ("System and TensorFlow", "Driver and GPU", "CUDA libraries",
                    "TensorFlow at run time", "Live compute checks"):
        assert f"\n{heading}\n" in plain
    assert "FAIL" in plain and "fix: install the CUDA 11.2 runtime" in plain
    assert "550.144.03" in plain and "supports CUDA ≤ 12.4" in plain
    assert "\x1b[31" in report_text(facts, findings, color=True)


def test_markdown_report_for_bug_reports():
    facts = load("article_tf25_cuda125")
    md = report_markdown(facts, judge(facts, compute=False))
    assert md.startswith("## tfperf doctor")
    assert "| FAIL | `doctor.libraries` |" in md
    assert "<summary>TensorFlow import log</summary>" in md and "libcudnn.so.8" in md


# ---------------------------------------------------------------------------------------------
# helpers


@pytest.mark.parametrize(("version", "spec", "ok"), [
    ("12.5.82", "<13.0,>=12.5.82", True), ("12.4.99", "<13.0,>=12.5.82", False),
    ("13.0.1", "<13.0,>=12.5.82", False), ("8.9.4.25", "==8.9.4.25", True),
    ("8.9.4", "==8.9.4.25", False), ("11.8.89", "==11.8.*", True), ("12.1", "~=12.0", True),
    ("13.0", "~=12.0", False), ("2.0", "!=2.0", False), ("1.2.3", ">=x", None),
])
def test_specifiers(version, spec, ok):
    assert satisfies(version, spec) is ok


def test_windows_build_info_versions():
    assert checks.windows_build_version("64_112") == "11.2"
    assert checks.windows_build_version("64_8", cudnn=True) == "8"
    assert checks.windows_build_version("12.5.1") == "12.5.1"
    facts = load("windows_tf212", tf_packages={"tensorflow-gpu": "2.10.0"}, tf_version="2.10.0",
                 tf_build_info={"is_cuda_build": True, "cuda_version": "64_112",
                                "cudnn_version": "64_8"}, driver_version="551.86")
    assert checks.build_cuda(facts)[:2] == ("11.2", "8.1")
    assert verdicts(facts)["doctor.driver"].status is Status.PASS


def test_first_sentence_keeps_abbreviations():
    text = "No lib (e.g. libcudnn.so.8). More."
    assert checks.first_sentence(text) == "No lib (e.g. libcudnn.so.8)"
