"""``tfperf doctor --plan``: the offline planner, against the tables and the article's questions."""

from __future__ import annotations

import csv
import json
import re
from importlib import resources

import jsonschema
import pytest

from tfperf.cli import main
from tfperf.core.findings import Status
from tfperf.doctor.planner import PlanError, plan

PLAN_SCHEMA = {
    "type": "object",
    "required": ["tensorflow", "python", "cuda", "cudnn", "min_driver", "checks", "facts",
                 "exit_status"],
    "properties": {
        "tensorflow": {"type": ["string", "null"]},
        "python": {"type": "object", "required": ["min", "max", "text", "versions"]},
        "cuda": {"type": ["string", "null"]},
        "cudnn": {"type": ["string", "null"]},
        "min_driver": {"type": "object", "required": ["linux", "windows"],
                       "properties": {"linux": {"type": ["string", "null"]},
                                      "windows": {"type": ["string", "null"]}}},
        "min_driver_compat": {"type": "object", "required": ["linux", "windows"]},
        "needed_libraries": {"type": "array", "items": {"type": "string"}},
        "install": {"type": "array", "items": {"type": "string"}},
        "checks": {"type": "array", "items": {
            "type": "object", "required": ["id", "status", "message", "fix"],
            "properties": {"id": {"type": "string", "pattern": r"^plan\."},
                           "status": {"enum": ["pass", "warn", "fail", "skip", "info"]},
                           "message": {"type": "string", "minLength": 1},
                           "fix": {"type": "string"}}}},
        "facts": {"type": "object",
                  "required": ["tf_version", "driver", "gpu", "cc", "os", "python"]},
        "exit_status": {"enum": [0, 1]},
    },
}


def _raw_rows(os_name: str) -> list[dict[str, str]]:
    with resources.files("tfperf.doctor.knowledge").joinpath(
            "data", "tf_gpu_build_configs.csv").open(encoding="utf-8") as fh:
        return [r for r in csv.DictReader(fh) if r["os"] == os_name]


def _python_bounds(cell: str) -> tuple[str, str]:
    nums = sorted(re.findall(r"\d+\.\d+", cell), key=lambda v: tuple(map(int, v.split("."))))
    return nums[0], nums[-1]


def _check(p, code):
    hits = [c for c in p.checks if c.code == code]
    assert hits, f"no {code} in {[c.code for c in p.checks]}"
    return hits[0]


@pytest.mark.parametrize("os_name", ["linux", "windows"])
def test_planner_agrees_with_every_tested_build_row(os_name):
    rows = _raw_rows(os_name)
    assert len(rows) > 20
    for row in rows:
        p = plan(row["tf_version"], os=os_name)
        assert (p.tensorflow, p.cuda, p.cudnn) == (row["tf_version"], row["cuda"],
                                                    row["cudnn"]), row
        assert (p.python["min"], p.python["max"]) == _python_bounds(row["python"]), row
        assert not p.failed, row
        if V_at_least(row["cuda"], "10.0"):
            assert p.needed_libraries, row  # we know the SONAMEs from CUDA 10.0 on


def V_at_least(a: str, b: str) -> bool:
    from tfperf.doctor.versions import at_least

    return at_least(a, b)


def test_article_scenario_tf25_on_driver_550():
    p = plan("2.5.0", driver="550.144.03")
    assert (p.cuda, p.cudnn, p.python["text"]) == ("11.2", "8.1", "3.6–3.9")
    assert p.min_driver["linux"] == "460.27.03"
    drv = _check(p, "plan.driver")
    assert drv.status is Status.PASS and "460.27.03" in drv.message
    libs = _check(p, "plan.libraries")
    assert "libcudnn.so.8" in libs.message and "CUDA 12.x" in libs.message
    assert "does not" in libs.message and libs.status is Status.WARN
    assert "12.4" in _check(p, "plan.nvidia_smi").message
    assert not p.failed


def test_reverse_question_driver_470():
    p = plan("latest", driver="470.57")
    assert p.tensorflow == "2.14.0" and p.cuda == "11.8"
    rev = _check(p, "plan.reverse")
    assert p.reverse["full_support"] == "2.11.0" and p.reverse["driver_cuda"] == "11.4"
    assert "525.60.13" in rev.message and "450.80.02" in rev.message
    assert _check(p, "plan.driver").status is Status.WARN  # minor-version compatibility only


def test_reverse_with_a_gpu_that_needs_ptx_jit():
    # an H100 needs PTX JIT on every CUDA 11 build; that fails under minor-version
    # compatibility, so 2.12-2.14 (CUDA 11.8 > driver's 11.4) drop out
    p = plan("latest", driver="470.57", gpu="NVIDIA H100 80GB HBM3")
    assert p.tensorflow == "2.11.0"
    assert _check(p, "plan.gpu_arch").status is Status.WARN


def test_reverse_without_driver_and_with_a_hopeless_driver():
    assert plan("latest").tensorflow == "2.21.0"
    assert plan("latest", os="windows").tensorflow == "2.10.0"
    p = plan("latest", driver="300.1")
    assert p.failed and p.reverse["answer"] is None


def test_windows_native_after_2_10_says_wsl2():
    p = plan("2.12.0", os="windows")
    plat = _check(p, "plan.platform")
    assert plat.status is Status.FAIL and "WSL2" in plat.message + plat.hint
    assert p.os == "wsl" and p.cuda == "11.8"
    assert not plan("2.10.0", os="windows").failed


def test_h100_on_tf215_is_ptx_jit_and_native_from_216():
    p = plan("2.15.0", gpu="NVIDIA H100 80GB HBM3", driver="535.104.05")
    arch = _check(p, "plan.gpu_arch")
    assert arch.status is Status.WARN and "compute_80" in arch.message
    assert "2.16.1" in arch.hint and p.gpu["support"] == "ptx"
    assert _check(plan("2.16.1", cc="9.0"), "plan.gpu_arch").status is Status.PASS


def test_blackwell_on_tf221():
    p = plan("2.21.0", gpu="NVIDIA B200", driver="570.124.06")
    arch = _check(p, "plan.gpu_arch")
    assert arch.status is Status.WARN and "compute_90" in arch.message and "12.8" in arch.message
    p = plan("2.21.0", cc="12.0", driver="535.104.05")  # PTX JIT under minor-version compat
    assert _check(p, "plan.gpu_arch").status is Status.FAIL and p.failed


def test_maxwell_on_tf217_is_unsupported():
    arch = _check(plan("2.17.0", gpu="GeForce GTX 980"), "plan.gpu_arch")
    assert arch.status is Status.FAIL and "2.16.1" in arch.hint


def test_unknown_gpu_and_assumed_arch_list():
    assert _check(plan("2.15", gpu="NVIDIA A10G"), "plan.gpu_arch").status is Status.WARN
    arch = _check(plan("2.5.0", gpu="Tesla V100-SXM2-16GB"), "plan.gpu_arch")
    assert "assumed" in arch.message and arch.status is Status.WARN


def test_python_outside_the_range_fails_with_the_versions_that_support_it():
    py = _check(plan("2.5.0", python="3.11"), "plan.python")
    assert py.status is Status.FAIL and "2.12.0–2.21.0" in py.hint
    assert _check(plan("2.5.0", python="3.8"), "plan.python").status is Status.PASS


def test_driver_too_old_names_the_newest_tf_it_runs():
    drv = _check(plan("2.18.0", driver="470.57"), "plan.driver")
    assert drv.status is Status.FAIL and "555.42.06" in drv.message and "2.14.0" in drv.hint


def test_and_cuda_install_lines():
    assert "tensorflow[and-cuda]==2.15.0.post1" in plan("2.15.0").install[0]
    assert "tensorflow[and-cuda]==2.15.1'" in plan("2.15.1").install[0]
    assert "tensorflow[and-cuda]==2.14.0'" in plan("2.14").install[0]
    assert plan("2.13.0").install[0] == "pip install 'tensorflow==2.13.0'"
    assert "tensorflow-gpu==1.15.0" in plan("1.15.0").install[0]


@pytest.mark.parametrize(("kwargs", "needle"), [
    ({"tf_version": "2.99"}, "nearest known: 2.21.0"),
    ({"tf_version": "banana"}, "not a TensorFlow version"),
    ({"tf_version": "2.5", "driver": "new"}, "not a driver version"),
    ({"tf_version": "2.5", "cc": "nine"}, "compute capability"),
    ({"tf_version": "2.5", "python": "3"}, "not a Python version"),
    ({"tf_version": "2.5", "os": "macos"}, "unknown --os"),
    ({"tf_version": "2.5", "gpu": "H100", "cc": "9.0"}, "not both")])
def test_bad_input_is_a_plan_error(kwargs, needle):
    with pytest.raises(PlanError, match=re.escape(needle)):
        plan(**kwargs)


@pytest.mark.parametrize("argv", [
    ["2.5.0", "--driver", "550.144.03"], ["latest", "--driver", "470.57"],
    ["2.15", "--gpu", "NVIDIA H100 80GB HBM3"], ["2.12", "--os", "windows"],
    ["2.21", "--cc", "12.0", "--driver", "535.104.05", "--python", "3.9"]])
def test_cli_json_matches_schema(argv, capsys):
    rc = main(["doctor", "--plan", *argv, "--json"])
    doc = json.loads(capsys.readouterr().out)
    jsonschema.validate(doc, PLAN_SCHEMA)
    assert rc == doc["exit_status"] == (1 if any(c["status"] == "fail" for c in doc["checks"])
                                        else 0)


def test_cli_text_markdown_and_usage_errors(capsys):
    assert main(["doctor", "--plan", "2.5.0", "--driver", "550.144.03"]) == 0
    out = capsys.readouterr().out
    assert "CUDA 11.2" in out and "libcudnn.so.8" in out and "no failing check" in out
    assert main(["doctor", "--plan", "2.12", "--os", "windows", "--markdown"]) == 1
    md = capsys.readouterr().out
    assert md.startswith("## tfperf doctor --plan 2.12") and "| FAIL | `plan.platform`" in md
    assert main(["doctor", "--plan", "3.0"]) == 2
    assert "nearest known" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["doctor", "--plan", "2.5", "--gpu", "x", "--cc", "9.0"])
    assert exc.value.code == 2
