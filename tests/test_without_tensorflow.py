"""The base install (``pip install tfperf``, no extra) as a user meets it: no TensorFlow, no
NumPy. ``tfperf lint``, ``tfperf doctor --plan``, ``tfperf explain`` and ``tfperf doctor``
work; ``bench``, ``profile``, ``tune`` and the demo say in one line that TensorFlow is needed
and how to install it, never a traceback.

The environment is real, not a poisoned import: a fresh virtual environment (no pip, no
system site-packages) whose path holds tfperf's source and the base install's own
dependencies only (pathspec, nvidia-ml-py), so the child processes tfperf starts (the
doctor's probes) lack TensorFlow too; the first cell checks that TensorFlow and NumPy cannot
be found there, so the others prove what they claim.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from user_files import BENCH_FILE as BENCH
from user_files import EXPLAIN_LOG
from user_files import SLOW_LOOP as SLOW

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "examples" / "notebooks" / "case_study.ipynb"
BASE_DEPENDENCIES = ("pathspec", "pynvml")  # pyproject's [project] dependencies, by module

NEEDS_TF = "TensorFlow is not installed here"


def _base_install(folder: Path) -> Path:
    """A folder holding (links to) the base install's dependencies and nothing else."""
    folder.mkdir()
    for name in BASE_DEPENDENCIES:
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.origin, f"{name} is a base dependency"
        origin = Path(spec.origin)
        source = origin.parent if origin.name == "__init__.py" else origin
        (folder / source.name).symlink_to(source)
    return folder


@pytest.fixture(scope="module")
def no_tf(tmp_path_factory: pytest.TempPathFactory):
    """``run(*argv, stdin=None)`` → (exit status, stdout, stderr) of ``tfperf ARGV`` in the
    environment without TensorFlow, run in a user's folder holding the files below."""
    base = tmp_path_factory.mktemp("no-tf")
    deps = _base_install(base / "deps")
    user = base / "user"
    (user / "proj").mkdir(parents=True)
    (user / "slow.py").write_text(SLOW)
    (user / "proj" / "a.py").write_text(SLOW)
    (user / "proj" / "case_study.ipynb").write_bytes(NOTEBOOK.read_bytes())
    (user / "bench_me.py").write_text(BENCH)
    (user / "tf.log").write_bytes(EXPLAIN_LOG.read_bytes())
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   timeout=120)
    (site,) = venv.glob("lib/python*/site-packages")
    (site / "tfperf_base_install.pth").write_text(f"{deps}\n{ROOT / 'src'}\n")
    python = str(venv / "bin" / "python")
    boot = "import sys\nfrom tfperf.cli import main\nsys.exit(main(sys.argv[1:]))\n"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env.update({"XDG_CACHE_HOME": str(base / "cache"), "COLUMNS": "200", "NO_COLOR": "1"})

    def run(*argv: str, stdin: str | None = None) -> tuple[int, str, str]:
        proc = subprocess.run([python, "-c", boot, *argv], cwd=user, env=env,
                              input=stdin, capture_output=True, text=True, timeout=120)
        return proc.returncode, proc.stdout, proc.stderr

    run.user = user  # type: ignore[attr-defined]
    run.python = python  # type: ignore[attr-defined]
    run.env = env  # type: ignore[attr-defined]
    return run


def test_the_environment_really_lacks_tensorflow_and_numpy(no_tf):
    code = textwrap.dedent("""\
        import importlib.util
        print([importlib.util.find_spec(m) is None for m in ("tensorflow", "numpy")],
              importlib.util.find_spec("tfperf") is not None)
        """)
    out = subprocess.run([no_tf.python, "-c", code], env=no_tf.env,
                         capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.strip() == "[True, True] True"


def _no_traceback(out: str, err: str) -> None:
    assert "Traceback" not in out + err, out + err


def test_help_lists_every_command(no_tf):
    rc, out, err = no_tf("--help")
    _no_traceback(out, err)
    assert rc == 0
    for command in ("doctor", "explain", "lint", "bench", "profile", "tune", "demo"):
        assert f"\n    {command}" in out


@pytest.mark.parametrize("target", ["slow.py", "proj", "proj/case_study.ipynb"])
def test_lint_finds_the_loop_in_a_file_a_folder_and_a_notebook(no_tf, target):
    rc, out, err = no_tf("lint", "--format", "json", target)
    _no_traceback(out, err)
    assert rc == 1
    codes = {f["code"] for f in json.loads(out)}
    assert "TFP101" in codes


def test_lint_sarif_and_github_outputs_are_well_formed(no_tf):
    rc, out, _ = no_tf("lint", "--format", "sarif", "proj")
    assert rc == 1
    results = json.loads(out)["runs"][0]["results"]
    assert {r["ruleId"] for r in results} >= {"TFP101", "TFP102"}
    rc, out, _ = no_tf("lint", "--format", "github", "slow.py")
    assert rc == 1
    lines = out.strip().splitlines()
    assert lines and all(line.startswith("::warning file=slow.py,line=") for line in lines)


def test_lint_fix_rewrites_without_tensorflow(no_tf, tmp_path):
    target = no_tf.user / "fixme.py"
    target.write_text(SLOW)
    rc, out, err = no_tf("lint", "--unsafe-fixes", "fixme.py")
    _no_traceback(out, err)
    assert rc == 0  # the loop became one reduction: nothing left to find
    fixed = target.read_text()
    assert "for i in" not in fixed and "tf.reduce_sum(x, axis=0)" in fixed


@pytest.mark.parametrize(("argv", "status", "says"), [
    (["--plan", "2.5.0", "--driver", "550.144.03"], 0, "pip install 'tensorflow==2.5.0'"),
    (["--plan", "latest", "--driver", "470.57"], 0, "tensorflow[and-cuda]==2.14.0"),
    (["--plan", "2.16.1", "--python", "3.13"], 1, "use Python 3.9–3.12"),
    (["--plan", "2.16.1", "--gpu", "RTX 4090"], 0, "RTX 4090 (cc 8.9) runs natively"),
    (["--plan", "2.15", "--markdown"], 0, "### Install"),
])
def test_doctor_plan_works_offline_without_tensorflow(no_tf, argv, status, says):
    rc, out, err = no_tf("doctor", *argv)
    _no_traceback(out, err)
    assert rc == status, out + err
    assert says in out


def test_doctor_plan_json_is_a_document(no_tf):
    rc, out, _ = no_tf("doctor", "--plan", "2.5.0", "--driver", "550.144.03", "--json")
    assert rc == 0
    assert "11.2" in json.dumps(json.loads(out)["cuda"])


def test_doctor_says_tensorflow_is_missing_and_how_to_install_it(no_tf):
    rc, out, err = no_tf("doctor", "--json", "--no-compute")
    _no_traceback(out, err)
    assert rc == 1
    checks = {c["id"]: c for c in json.loads(out)["checks"]}
    assert checks["doctor.tensorflow"]["status"] == "fail"
    assert "pip install" in checks["doctor.tensorflow"]["fix"]


def test_explain_reads_a_log_without_tensorflow(no_tf):
    rc, out, err = no_tf("explain", "--file", "tf.log")
    _no_traceback(out, err)
    assert "libcudart.so.11.0" in out
    piped = no_tf("explain", stdin=EXPLAIN_LOG.read_text())
    assert piped[:2] == (rc, out)


@pytest.mark.parametrize("argv", [
    ["bench", "bench_me.py"],
    ["bench", "--suite", "article", "--quick"],
    ["profile", "slow.py"],
    ["profile", "bench_me.py:plain"],
    ["profile", "--memory", "slow.py"],
    ["profile", "--remote", "localhost:6009"],
    ["tune", "bench_me.py:plain"],
])
def test_commands_that_run_tensors_say_tensorflow_is_needed_in_one_line(no_tf, argv):
    rc, out, err = no_tf(*argv)
    _no_traceback(out, err)
    assert rc == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"tfperf {argv[0]}: error: {NEEDS_TF}")
    assert "pip install 'tfperf[tf-cpu]'" in lines[0]


def test_bad_input_is_still_named_first(no_tf):
    rc, _, err = no_tf("bench", "missing.py")
    assert (rc, err.strip()) == (2, "tfperf bench: error: missing.py: no such file")


def test_saved_runs_are_read_without_numpy(no_tf):
    # --history and --compare-to read JSON: the base install reads them (a CI's store
    # copied to a laptop), and a file that is not a run is said to be one, not a traceback
    rc, out, err = no_tf("bench", "--history", "proj")
    assert (rc, err.strip()) == (2, "tfperf bench: error: proj: no saved runs (write some "
                                    "with `tfperf bench FILE.py --store DIR`)")
    rc, out, err = no_tf("bench", "bench_me.py", "--compare-to", "bench_me.py")
    _no_traceback(out, err)
    assert rc == 2 and err.startswith("tfperf bench: error: bench_me.py: not JSON"), err


def test_the_demo_runs_what_needs_no_tensorflow_and_says_why_it_skips_the_rest(no_tf):
    rc, out, err = no_tf("demo")
    _no_traceback(out, err)
    assert "=== 2a. Lint the article's slow code" in out
    assert "→ lint found findings: expected on the slow example" in out
    assert out.count(f"skipped: {NEEDS_TF}") == 2  # the bench and the profile steps
    assert rc == 1  # the doctor's failing check: TensorFlow is not installed


def test_doctor_devices_skips_the_collectives_and_says_why(no_tf):
    # the doctor's own check fails once (TensorFlow is not installed, with the fix); the
    # collectives are not a second failure with a child's exit status
    rc, out, err = no_tf("doctor", "--devices", "--json", "--no-compute")
    assert rc == 1  # the one failing check
    _no_traceback(out, err)
    checks = {c["id"]: c for c in json.loads(out)["checks"]}
    strategy = checks["devices.strategy"]
    assert strategy["status"] == "skip", strategy
    assert NEEDS_TF in strategy["message"]
    assert [c["id"] for c in checks.values() if c["status"] == "fail"] == ["doctor.tensorflow"]


def test_doctor_workers_skips_the_join_and_says_why(no_tf):
    rc, out, err = no_tf("doctor", "--workers", "127.0.0.1:1,127.0.0.1:2", "--worker-index",
                         "0", "--json", "--no-compute")
    _no_traceback(out, err)
    assert rc == 1  # the one failing check
    checks = {c["id"]: c for c in json.loads(out)["checks"]}
    join = checks["workers.join"]
    assert join["status"] == "skip" and NEEDS_TF in join["message"], join
    assert [c["id"] for c in checks.values() if c["status"] == "fail"] == ["doctor.tensorflow"]
