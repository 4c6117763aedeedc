"""TensorFlow's import log survives a child that crashes or hangs mid-import, and the doctor
explains it.

The child's stderr (fd 2, where TensorFlow's C++ log goes) is a file the parent owns, so what
the child wrote before SIGKILL, SIGILL or a timeout is still there. Stand-in children write
like TensorFlow's C++ logger (straight to fd 2, no Python buffering) and then die or hang.
"""

from __future__ import annotations

import json
import os
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tfperf.doctor.checks import check_import_log, check_tensorflow
from tfperf.doctor.explain import explain_log
from tfperf.doctor.facts import Facts
from tfperf.doctor.probes import tf_runtime
from tfperf.doctor.probes.tf_child import IMPORT_DONE
from tfperf.doctor.report import report_markdown

posix_only = pytest.mark.skipif(os.name != "posix", reason="stand-in children are scripts")
FIXTURES = Path(__file__).parent / "fixtures"

CUDNN_LINES = [
    "2024-03-11 14:02:33.160812: W tensorflow/stream_executor/platform/default/dso_loader.cc:64]"
    " Could not load dynamic library 'libcudnn.so.8'; dlerror: libcudnn.so.8: cannot open shared"
    " object file: No such file or directory",
    "2024-03-11 14:02:33.160825: W tensorflow/core/common_runtime/gpu/gpu_device.cc:1766] Cannot"
    " dlopen some GPU libraries. Please make sure the missing libraries mentioned above are "
    "installed properly if you would like to use GPU.",
]


def child(tmp_path: Path, lines: list[str], then: str) -> str:
    """A stand-in ``python``: writes ``lines`` to fd 2 as C++ code would, then runs ``then``."""
    script = tmp_path / "fake_python"
    script.write_text(f"#!{sys.executable}\nimport json, os, signal, sys, time\n"
                      f"for line in {lines!r}:\n    os.write(2, (line + '\\n').encode())\n"
                      + textwrap.dedent(then))
    script.chmod(0o755)
    return str(script)


def facts_on_a_gpu_machine(**probe: Any) -> Facts:
    data = json.loads((FIXTURES / "tf221_driver535.json").read_text())
    data.update(probe)
    return Facts.from_dict(data)


@posix_only
@pytest.mark.parametrize("signal_name", ["SIGKILL", "SIGILL"])
def test_a_child_killed_mid_import_leaves_its_import_log(tmp_path, signal_name):
    python = child(tmp_path, CUDNN_LINES, f"os.kill(os.getpid(), signal.{signal_name})\n")
    got = tf_runtime.probe_tensorflow(timeout=30, python=python)
    assert got["tf_probe"] == f"import crashed (killed by {signal_name})"
    assert got["tf_import_log"].splitlines() == CUDNN_LINES
    # the explainer reads it, and so does the doctor, in every report format
    assert explain_log(got["tf_import_log"]).causes[0].label == "cuda-library-missing"
    facts = facts_on_a_gpu_machine(tf_probe=got["tf_probe"],
                                   tf_import_log=got["tf_import_log"])
    tf = check_tensorflow(facts)
    assert tf.failed and "its import log says: Could not load dynamic library " \
                         "'libcudnn.so.8'" in tf.message
    log = check_import_log(facts)
    assert log.failed and "import did not finish" in log.message
    assert {m["id"] for m in log.data["matches"]} == {"cuda-library-missing"}
    assert "libcudnn.so.8" in report_markdown(facts, [tf, log])


@posix_only
def test_an_avx_crash_is_explained_from_the_log(tmp_path):
    avx = ("2024-03-11 14:02:31.000000: F tensorflow/core/platform/cpu_feature_guard.cc:37] The "
           "TensorFlow library was compiled to use AVX instructions, but these aren't available "
           "on your machine.")
    python = child(tmp_path, [avx], "os.kill(os.getpid(), signal.SIGABRT)\n")
    got = tf_runtime.probe_tensorflow(timeout=30, python=python)
    assert got["tf_probe"] == "import crashed (killed by SIGABRT)"
    facts = facts_on_a_gpu_machine(tf_probe=got["tf_probe"], tf_import_log=got["tf_import_log"])
    tf = check_tensorflow(facts)
    assert "AVX" in tf.message and "AVX" in tf.hint


@posix_only
def test_a_child_hanging_mid_import_leaves_its_import_log(tmp_path):
    python = child(tmp_path, CUDNN_LINES, "time.sleep(60)\n")
    got = tf_runtime.probe_tensorflow(timeout=1, python=python)
    assert got["tf_probe"] == "timed out after 1s during import"
    assert got["tf_import_log"].splitlines() == CUDNN_LINES
    facts = facts_on_a_gpu_machine(tf_probe=got["tf_probe"], tf_import_log=got["tf_import_log"])
    assert check_import_log(facts).failed


@posix_only
def test_only_the_import_part_of_stderr_is_the_import_log(tmp_path):
    python = child(tmp_path, CUDNN_LINES, f"""\
        os.write(2, b"\\n{IMPORT_DONE}\\n")
        os.write(2, b"E cuda_dnn.cc:329] Could not create cudnn handle: CUDNN_STATUS_\\n")
        print(json.dumps(dict(kind="facts", tf_version="2.21.0", tf_gpus=[])), flush=True)
        """)
    got = tf_runtime.probe_tensorflow(timeout=30, python=python)
    assert got["tf_probe"] == "ok"
    assert got["tf_import_log"].splitlines() == CUDNN_LINES  # what came later is not import


@posix_only
def test_a_silent_crash_keeps_an_empty_log_and_says_so(tmp_path):
    python = child(tmp_path, [], "os.kill(os.getpid(), signal.SIGSEGV)\n")
    got = tf_runtime.probe_tensorflow(timeout=30, python=python)
    assert got["tf_probe"] == "import crashed (killed by SIGSEGV)" and got["tf_import_log"] == ""
    facts = facts_on_a_gpu_machine(tf_probe=got["tf_probe"], tf_import_log="")
    assert check_import_log(facts).status.value == "skip"
