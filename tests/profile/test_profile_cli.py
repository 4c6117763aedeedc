"""`tfperf profile` through the real CLI entry point."""

import json
import textwrap

import pytest

from tfperf.cli import main
from tfperf.examples import BENCH

pytestmark = pytest.mark.usefixtures("tf")


@pytest.fixture()
def script(tmp_path):
    def write(body):
        path = tmp_path / "prog.py"
        path.write_text(textwrap.dedent(body))
        return path

    return write


def test_missing_script_is_a_usage_error(tmp_path, capsys):
    assert main(["profile", str(tmp_path / "nope.py")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_unknown_function_is_a_usage_error(capsys):
    assert main(["profile", "tfperf.examples:no_such_fn", "--no-capture"]) == 2
    assert "tfperf.examples: no function 'no_such_fn'" in capsys.readouterr().err
    assert main(["profile", f"{BENCH}:no_such_variant", "--no-capture"]) == 2
    assert "case_study_bench.py: no function 'no_such_variant'" in capsys.readouterr().err


def test_bad_steps_is_a_usage_error(script, capsys):
    path = script("print('hi')\n")
    assert main(["profile", str(path), "--steps", "0"]) == 2
    assert "--steps" in capsys.readouterr().err


def test_json_report_keeps_the_scripts_prints_off_stdout(script, capsys):
    path = script("""
        import sys
        import tensorflow as tf

        @tf.function
        def f(x, n):
            return x * n

        for n in range(4):
            print("from the script", f(tf.ones([2]), n).numpy(), sys.argv[1:])
    """)
    rc = main(["profile", str(path), "--no-capture", "--json", "--", "--lr", "3"])
    out, err = capsys.readouterr()
    doc = json.loads(out)
    assert "from the script" in err and "['--lr', '3']" in err
    assert rc == 1  # 4 traces of `f`: advice warns
    (fn,) = doc["functions"]
    assert fn["name"] == "f" and fn["traces"] == 4 and fn["calls"] == 4
    assert fn["retrace_causes"][0]["argument"] == "n"
    assert set(fn) >= {"name", "traces", "retrace_causes", "trace_s", "calls"}
    (sync,) = doc["host_syncs"]
    assert sync["count"] == 4 and sync["path"] == str(path)
    assert set(sync) >= {"path", "line", "count", "total_s"}
    assert doc["logdir"] is None and doc["ops"] == [] and doc["error"] is None
    assert any(a["code"] == "profile.retrace" for a in doc["advice"])


def test_raising_script_prints_report_and_error_exit_1(script, capsys):
    path = script("""
        import tensorflow as tf
        t = tf.constant([1.0, 2.0])
        print(float(tf.reduce_sum(t)))
        1 / 0
    """)
    assert main(["profile", str(path), "--no-capture"]) == 1
    out = capsys.readouterr().out
    assert "Host syncs" in out and "ZeroDivisionError" in out
    assert "The run raised an error" in out


def test_bench_variant_with_capture_json_and_plot(tmp_path, capsys):
    png = tmp_path / "profile.png"
    logdir = tmp_path / "logs"
    rc = main(["profile", f"{BENCH}:tf.function", "--quick", "--steps", "2", "--json",
               "--logdir", str(logdir), "--plot", str(png)])
    doc = json.loads(capsys.readouterr().out)
    assert rc in (0, 1)
    assert doc["logdir"] == str(logdir) and doc["capture"]["steps"] == 2
    op_types = {op["type"] for op in doc["ops"]}
    assert {"Mul", "Sum"} & op_types, op_types  # the vectorised graph: broadcast multiply, sum
    assert doc["capture"]["host_only"] is True and doc["capture"]["device_op_s"] is None
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000


def test_without_tensorflow_the_error_says_how_to_install(script, capsys, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "tensorflow" else real(name, *a))
    assert main(["profile", str(script("print(1)\n"))]) == 2
    assert "pip install 'tfperf[tf-cpu]'" in capsys.readouterr().err


def test_sys_exit_in_a_profiled_module_or_function_is_reported_not_raised(script, capsys):
    # At import: a usage error (exit 2) with the reason, no traceback.
    path = script("import sys\nsys.exit(3)\ndef step():\n    pass\n")
    assert main(["profile", f"{path}:step", "--no-capture"]) == 2
    err = capsys.readouterr().err
    assert "SystemExit" in err and "Traceback" not in err
    # In the function itself: the run's own error (exit 1), the report still printed.
    path = script("import sys\ndef step():\n    sys.exit(4)\n")
    assert main(["profile", f"{path}:step", "--no-capture"]) == 1
    out = capsys.readouterr().out
    assert "SystemExit" in out and "The run raised an error" in out
    # In the inputs function: a usage error.
    path = script("import sys\ndef step(x):\n    pass\ndef inputs():\n    sys.exit(5)\n")
    assert main(["profile", f"{path}:step", "--inputs", f"{path}:inputs", "--no-capture"]) == 2
    assert "SystemExit" in capsys.readouterr().err


def test_tensorflow_start_up_notices_stay_out_unless_verbose(script):
    # In a fresh process (TF's C++ logging reads its level once, at import).
    import os
    import subprocess
    import sys

    path = script("import tensorflow as tf\nprint(float(tf.reduce_sum(tf.ones([2]))))\n")
    env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}

    def run(*extra):
        return subprocess.run([sys.executable, "-m", "tfperf", "profile", str(path),
                               "--no-capture", *extra], capture_output=True, text=True,
                              env=env, timeout=300)

    quiet, loud = run(), run("--verbose")
    assert quiet.returncode == loud.returncode == 0, quiet.stderr + loud.stderr
    assert "absl::InitializeLog" not in quiet.stderr + quiet.stdout
    assert "cpu_feature_guard" not in quiet.stderr + quiet.stdout
    assert "absl::InitializeLog" in loud.stderr  # the notice exists; --verbose lets it through


def test_a_scripts_sys_exit_status_is_said_without_a_traceback(script, capsys):
    """`sys.exit(3)` in a script is its exit status, as Python prints none: the report said
    "The run raised an error" with a SystemExit traceback. A function's sys.exit (above)
    stays an error."""
    path = script("import sys\nimport tensorflow as tf\nx = tf.ones([2])\nsys.exit(3)\n")
    assert main(["profile", str(path), "--no-capture"]) == 1  # the run did not succeed
    out = capsys.readouterr().out
    assert f"The script exited with status 3 (sys.exit at {path}:4)" in out
    assert "Traceback" not in out and "raised an error" not in out


def test_a_scripts_sys_exit_message_is_status_1(script, capsys):
    """`sys.exit("bad config")` exits with status 1 (Python prints the message): the report
    said "exited with status bad config"."""
    path = script("import sys\nimport tensorflow as tf\nx = tf.ones([2])\nsys.exit('bad config')\n")
    assert main(["profile", str(path), "--no-capture"]) == 1
    out = capsys.readouterr().out
    assert f"The script exited with status 1: bad config (sys.exit at {path}:4)" in out


LOOP_THEN_STOP = """\
import os
import signal
import tensorflow as tf

x = tf.ones([8, 8])
for i in range(50):
    x = tf.tanh(tf.matmul(x, x) * 0.01)
    if i == 30:
        {stop}
print("never reached")
"""


def test_a_script_interrupted_by_ctrl_c_still_gets_its_report(script, capsys):
    """Ctrl-C in a long training script printed 'interrupted' and nothing of what ran
    (`%%tfprofile` in a notebook did show it)."""
    path = script(LOOP_THEN_STOP.format(stop="raise KeyboardInterrupt"))
    assert main(["profile", str(path), "--no-capture"]) == 130
    out = capsys.readouterr().out
    assert "Eager ops, by line" in out and f"{path.name}:7" in out
    assert f"The run was interrupted (Ctrl-C) at {path}:9; the report covers what ran" in out
    assert "never reached" not in out and "Traceback" not in out


def test_a_script_ended_by_sigterm_gets_its_report_and_status_143(script):
    """`timeout 600 tfperf profile train.py`: SIGTERM ended tfperf at once, without a word, a
    report or its cleanup (exit -15)."""
    import subprocess
    import sys

    path = script(LOOP_THEN_STOP.format(stop="os.kill(os.getpid(), signal.SIGTERM)"))
    ran = subprocess.run([sys.executable, "-m", "tfperf", "profile", str(path), "--no-capture"],
                         capture_output=True, text=True, timeout=300)
    assert ran.returncode == 143, ran.stderr[-2000:]
    assert f"The run was interrupted (SIGTERM) at {path}:9" in ran.stdout
    assert "Eager ops, by line" in ran.stdout and "never reached" not in ran.stdout


def test_sigterm_outside_a_profiled_script_says_interrupted(tmp_path):
    """The same for every command: `tfperf bench` under `timeout` ends with a word and 143."""
    import subprocess
    import sys

    bench = tmp_path / "b.py"
    bench.write_text("import os, signal\nimport tfperf.bench as bench\n\n"
                     "@bench.variant\ndef stop():\n    os.kill(os.getpid(), signal.SIGTERM)\n")
    ran = subprocess.run([sys.executable, "-m", "tfperf", "bench", str(bench), "--no-progress"],
                         capture_output=True, text=True, timeout=300)
    assert ran.returncode == 143 and "interrupted (SIGTERM)" in ran.stderr, ran.stderr[-2000:]
