"""Which of TensorFlow's C++ start-up lines tfperf hides (real lines from TF 2.16–2.21)."""

import json
import subprocess
import sys

import pytest

from tfperf.core.tensorflow_logs import (
    QUIET_LEVEL,
    QUIETED_BY_TFPERF,
    VARIABLE,
    is_startup_notice,
    last_line_worth_showing,
    quiet_child_startup,
)

NOTICES = [
    "WARNING: All log messages before absl::InitializeLog() is called are written to STDERR\n",
    "I0000 00:00:1796357250.842562   19278 port.cc:153] oneDNN custom operations are on.\n",
    "2024-03-29 13:15:53.388917: I tensorflow/core/util/port.cc:113] oneDNN custom operations\n",
    "W0000 00:00:1758131045.228 3722035 computation_placer.cc:177] computation placer already\n",
]
KEPT = [
    "E0000 00:00:1758131045.203198 3722035 cuda_dnn.cc:8579] Unable to register cuDNN factory\n",
    "2025-09-17 14:44:05.176998: E external/local_xla/xla/stream_executor/cuda/cuda_fft.cc:467]\n",
    "F0000 00:00:1.0 1 check.cc:1] Check failed\n",
    "Traceback (most recent call last):\n",
    "hello from the user's script\n",
]


def test_info_and_warning_lines_are_notices():
    assert all(is_startup_notice(line) for line in NOTICES)


def test_errors_fatal_and_other_output_are_kept():
    assert not any(is_startup_notice(line) for line in KEPT)


CHILD_BENCH = """\
import os
import sys
import tensorflow as tf
import tfperf

@tfperf.inputs
def make():
    return (tf.ones([8]),)

@tfperf.variant(baseline=True)
def fine(x):
    return x * 2.0

@tfperf.variant
def dies(x):
    os._exit(3)  # as a crash would: no traceback, only what was printed before
"""


@pytest.mark.tf
def test_a_bench_child_quiets_tensorflow_as_its_parent_did_and_says_why_it_failed(
        tmp_path, monkeypatch):
    # Issue 24: `tfperf bench --isolate` children printed TensorFlow's absl/oneDNN start-up
    # lines, and a child that died was reported by its last one ("isolated run failed:
    # I0000 ... oneDNN custom operations are on").
    pytest.importorskip("tensorflow")
    from tfperf.bench.isolate import measure_isolated

    bench = tmp_path / "child_bench.py"
    bench.write_text(CHILD_BENCH)
    # What quiet_tensorflow_startup leaves in the parent's environment.
    monkeypatch.setenv(VARIABLE, QUIET_LEVEL)
    monkeypatch.setenv(QUIETED_BY_TFPERF, "1")
    spec = {"file": str(bench), "variant": "fine", "quick": False}
    child = subprocess.run([sys.executable, "-m", "tfperf.bench.isolate", json.dumps(spec)],
                           capture_output=True, text=True, timeout=300)
    assert child.returncode == 0, child.stderr
    assert not [line for line in child.stderr.splitlines() if is_startup_notice(line)], \
        child.stderr

    from types import SimpleNamespace

    dies = SimpleNamespace(source={**spec, "variant": "dies"}, fn=None)
    memory = measure_isolated(dies, (), {}, timeout=300)
    assert memory == {"peak_bytes": None, "source": "isolated run failed: exited with status 3"}


def test_a_childs_reason_is_its_last_line_that_is_not_a_notice():
    stderr = "".join(KEPT[3:4]) + "ValueError: bad\n" + "".join(NOTICES)
    assert last_line_worth_showing(stderr) == "ValueError: bad"
    assert last_line_worth_showing("".join(NOTICES)) == ""


def test_a_child_is_quieted_only_where_its_parent_was(monkeypatch):
    import tfperf.core.tensorflow_logs as logs

    calls: list[bool] = []
    monkeypatch.setattr(logs, "quiet_tensorflow_startup", lambda verbose=False: calls.append(1))
    monkeypatch.delenv(QUIETED_BY_TFPERF, raising=False)
    quiet_child_startup()  # the parent ran with --verbose, or the user chose a level
    assert calls == []
    monkeypatch.setenv(QUIETED_BY_TFPERF, "1")
    quiet_child_startup()
    assert calls == [1]


def _startup_lines(level: str) -> list[str]:
    """TensorFlow's start-up notices that reach stderr in a process that quiets its start-up
    as bench and profile do, under the user's own TF_CPP_MIN_LOG_LEVEL."""
    import os
    from pathlib import Path

    import tfperf

    code = ("from tfperf.core.tensorflow_logs import quiet_tensorflow_startup\n"
            "quiet_tensorflow_startup()\n"
            "import tensorflow\n")  # where nothing is hidden, TF is imported only here
    env = {k: v for k, v in os.environ.items() if k != QUIETED_BY_TFPERF}
    env.update({VARIABLE: level, "PYTHONPATH": str(Path(tfperf.__file__).parents[1])})
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return [line for line in done.stderr.splitlines(keepends=True) if is_startup_notice(line)]


@pytest.mark.tf
def test_the_users_own_level_hides_what_it_says():
    """TF 2.21 prints its absl start-up lines whatever TF_CPP_MIN_LOG_LEVEL says: a user who
    set 2 (the usual advice) saw them in bench's and profile's output."""
    pytest.importorskip("tensorflow")
    everything = _startup_lines("0")  # the user asked for every line: all through
    if not any(line.startswith("I") for line in everything):
        pytest.skip("this TensorFlow prints no INFO notice at import")
    assert _startup_lines("2") == []
    assert all(not line.startswith("I") for line in _startup_lines("1"))


@pytest.mark.parametrize("level", [None, "2"])
def test_a_broken_tensorflow_keeps_its_error_lines_and_raises_no_traceback(tmp_path, level):
    """A TensorFlow whose import fails (a missing CUDA library) writes its error line to fd 2
    while the start-up is quieted: the line is kept, under tfperf's level and the user's own
    alike, and the failure is left to the command's own import (it used to be a traceback
    out of the quieting, the error line lost in its temporary file)."""
    import os
    from pathlib import Path

    import tfperf

    fake = tmp_path / "tensorflow"
    fake.mkdir()
    (fake / "__init__.py").write_text(
        "import os\n"
        "os.write(2, b'I0000 00:00:1.0 1 port.cc:153] oneDNN custom operations are on.\\n')\n"
        "os.write(2, b'E0000 00:00:1.0 1 dso_loader.cc:1] libcudnn.so.9: cannot open\\n')\n"
        "raise ImportError('libcudnn.so.9: cannot open shared object file')\n")
    code = ("from tfperf.core.tensorflow_logs import quiet_tensorflow_startup\n"
            "quiet_tensorflow_startup()\n")
    env = {k: v for k, v in os.environ.items() if k not in (QUIETED_BY_TFPERF, VARIABLE)}
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), str(Path(tfperf.__file__).parents[1])])
    if level is not None:
        env[VARIABLE] = level
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "E0000 00:00:1.0 1 dso_loader.cc:1] libcudnn.so.9: cannot open" in done.stderr
    assert "Traceback" not in done.stderr and "oneDNN" not in done.stderr
