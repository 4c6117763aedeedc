"""`tfperf doctor` end to end on this real machine, and the command's dispatch and errors.

The real runs import TensorFlow (in the doctor's subprocess), so there are two of them, each
once per session: `tfperf doctor --json` and `tfperf doctor`.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tfperf.cli import main
from tfperf.doctor.facts import Facts

FIXTURES = Path(__file__).parent / "fixtures"
# Looked up, not imported: TF is imported by the doctor's subprocess, never in this one.
needs_tf = pytest.mark.skipif(importlib.util.find_spec("tensorflow") is None,
                              reason="TensorFlow not installed")
GPU_CHECKS = ("doctor.driver", "doctor.gpu_arch", "doctor.libraries", "doctor.tf_sees_gpu")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def tfperf(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "tfperf", *args], capture_output=True,
                          text=True, timeout=timeout, env=env)


@pytest.fixture(scope="session")
def doctor_json() -> tuple[subprocess.CompletedProcess[str], dict]:
    proc = tfperf("doctor", "--json")
    return proc, json.loads(proc.stdout)


@pytest.fixture(scope="session")
def doctor_text() -> subprocess.CompletedProcess[str]:
    return tfperf("doctor")


def _has_gpu(doc: dict) -> bool:
    return Facts.from_dict(doc["facts"]).has_nvidia_gpu


@pytest.mark.tf
@needs_tf
@pytest.mark.slow
def test_real_doctor_json_on_this_machine(doctor_json):
    proc, doc = doctor_json
    checks = {c["id"]: c for c in doc["checks"]}
    assert all(set(c) >= {"id", "status", "message", "fix"} for c in doc["checks"])
    facts = doc["facts"]
    assert facts["tf_probe"] == "ok"
    assert facts["tf_version"] == facts["tf_packages"][next(iter(facts["tf_packages"]))]
    assert facts["python_version"] and facts["os"]
    assert checks["doctor.tensorflow"]["status"] == "pass"
    assert checks["doctor.python"]["status"] == "pass"
    cpu = checks["live.matmul.cpu"]
    assert cpu["status"] == "pass"
    assert cpu["data"]["tflops"] > 0 and cpu["data"]["median_s"] > 0
    assert cpu["data"]["measurement"]["runs"] >= 1
    assert "GFLOP/s" in cpu["message"] or "TFLOP/s" in cpu["message"]
    assert checks["live.xla"]["status"] == "pass"
    if not _has_gpu(doc):  # the CI machine: GPU checks skip, with the reason
        for code in GPU_CHECKS:
            assert checks[code]["status"] == "skip", code
            assert checks[code]["message"]
        assert checks["live.matmul.gpu"]["status"] == "skip"
        assert checks["doctor.gpu"]["status"] == "skip"
        assert "nvml" in checks["doctor.gpu"]["message"]
        assert proc.returncode == 0, proc.stdout + proc.stderr
    assert doc["exit_status"] == proc.returncode
    # nothing from the environment beyond the whitelist
    assert "HOME" not in facts["env"] and "PATH" not in facts["env"]


@pytest.mark.tf
@needs_tf
@pytest.mark.slow
def test_real_doctor_text_report(doctor_text):
    out = doctor_text.stdout
    assert "\x1b[" not in out  # not a terminal: no colour
    for heading in ("System and TensorFlow", "Driver and GPU", "Live compute checks"):
        assert heading in out
    assert "matmul on /CPU:0" in out and "FLOP/s" in out
    assert "PASS" in out
    if "no NVIDIA GPU found" in out:
        assert "SKIP" in out and doctor_text.returncode == 0, out + doctor_text.stderr


@pytest.mark.tf
@needs_tf
def test_tensorflow_import_timeout_is_a_failing_check_not_a_hang():
    start = time.perf_counter()
    proc = tfperf("doctor", "--json", "--timeout", "0.3", timeout=60)
    elapsed = time.perf_counter() - start
    doc = json.loads(proc.stdout)
    checks = {c["id"]: c for c in doc["checks"]}
    assert proc.returncode == 1
    assert checks["doctor.tensorflow"]["status"] == "fail"
    assert "timed out after 0.3s during import" in checks["doctor.tensorflow"]["message"]
    assert "--timeout" in checks["doctor.tensorflow"]["fix"]
    assert elapsed < 20  # one bounded import attempt, not TF's full import time and more


def test_failing_machine_exits_1_and_markdown(monkeypatch, capsys):
    data = json.loads((FIXTURES / "article_tf25_cuda125.json").read_text())
    monkeypatch.setattr("tfperf.doctor.gather.gather", lambda options: Facts.from_dict(data))
    assert main(["doctor", "--markdown", "--no-compute"]) == 1
    out = capsys.readouterr().out
    assert "| FAIL | `doctor.libraries` |" in out and "cuDNN 8.1" in out


def test_passing_machine_exits_0(monkeypatch, capsys):
    data = json.loads((FIXTURES / "no_gpu_no_nvidia_smi.json").read_text())
    monkeypatch.setattr("tfperf.doctor.gather.gather", lambda options: Facts.from_dict(data))
    assert main(["doctor", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["exit_status"] == 0 and doc["summary"]["fail"] == 0


@pytest.mark.parametrize("argv", [
    ["doctor", "--timeout", "0"], ["doctor", "--timeout", "-3"],
    ["doctor", "--matmul-size", "1"], ["doctor", "--driver", "550.144.03"],
])
def test_bad_arguments_are_usage_errors(argv, capsys):
    assert main(argv) == 2
    assert "error:" in capsys.readouterr().err


def test_json_and_markdown_together_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["doctor", "--json", "--markdown"])
    assert exc.value.code == 2


def test_plan_dispatches_to_the_offline_planner_without_tensorflow(capsys):
    code = ("import sys; from tfperf.cli import main; "
            "rc = main(['doctor', '--plan', '2.5.0', '--driver', '550.144.03', '--json']); "
            "print('TF_IMPORTED' if 'tensorflow' in sys.modules else 'NO_TF'); sys.exit(rc)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    out = proc.stdout.rsplit("\n", 2)
    assert out[-2] == "NO_TF"
    doc = json.loads(proc.stdout[: proc.stdout.rindex("NO_TF")])
    assert "11.2" in json.dumps(doc["cuda"]) and "8.1" in json.dumps(doc["cudnn"])


def test_explain_is_registered(capsys):
    main(["explain", "W dso_loader.cc:64] Could not load dynamic library 'libcudnn.so.8'; "
          "dlerror: libcudnn.so.8: cannot open shared object file: No such file or directory"])
    assert "libcudnn.so.8" in capsys.readouterr().out
