"""A long run's capture stays bounded: the profiler stops once the process has grown by the
capture's memory budget, and the report says what part of the run the capture holds. Real TF
profiler captures of a planted eager loop; counts from the capture itself."""

import json
import subprocess
import sys

from profile_scripts import write_script

from tfperf.profile import runner

LONG_EAGER_RUN = """
    import tensorflow as tf

    x = tf.ones([4, 4])
    for _ in range(6000):  # about 24,000 eager ops, no training step, no tf.function
        x = tf.tanh(x) + tf.sin(x) * 0.5 - 0.25
"""


_CHILD = """
import json, sys
from tfperf.profile import runner
rep = runner.run_script(sys.argv[1], logdir=sys.argv[2], capture_mb=1)
eager = sum(s.total_s for s in rep.obs.eager_ops.values())
print(json.dumps({"error": repr(rep.error) if rep.error else None,
                  "capture_eager": rep.capture.eager_share if rep.capture else None,
                  "run_eager": eager / rep.obs.wall_s,
                  "advice": [f.code for f in rep.findings],
                  "held": {f.code: f.data.get("not_advice") for f in rep.not_advice},
                  "ran": rep.obs.eager_op_count, "note": rep.capture_note,
                  "text": rep.text(),
                  "captured": sum(o.count for o in rep.capture.ops if o.eager)
                  if rep.capture else None}))
"""




def _bounded_run(path, logdir) -> dict:
    """``run_script(path, capture_mb=1)`` in a fresh process: memory an earlier capture in
    this one freed would hide the new capture's growth."""
    child = subprocess.run([sys.executable, "-c", _CHILD, str(path), str(logdir)],
                           capture_output=True, text=True, timeout=300)
    assert child.returncode == 0, child.stderr[-2000:]
    got = json.loads(child.stdout.strip().splitlines()[-1])
    assert got["error"] is None, got
    return got


def _captured_eager_ops(rep: runner.ProfileReport) -> int:
    assert rep.capture is not None, rep.capture_note
    return sum(o.count for o in rep.capture.ops if o.eager)


def test_a_capture_past_its_memory_budget_stops_and_the_report_says_so(tf, tmp_path):
    path = write_script(tmp_path, name="long.py", body=LONG_EAGER_RUN)
    bounded = _bounded_run(path, tmp_path / "bounded")
    whole = runner.run_script(path, logdir=tmp_path / "whole", capture_mb=None)
    ran = bounded["ran"]
    assert ran >= 24_000 and whole.obs.eager_op_count == ran  # the run itself is the same
    # unbounded: the capture holds the whole run; bounded: it stopped early
    assert _captured_eager_ops(whole) >= ran * 0.9
    assert bounded["captured"] < ran * 0.5
    assert whole.capture_note is None
    assert "first" in bounded["note"] and "1 MiB" in bounded["note"]
    assert bounded["note"] in bounded["text"]


def test_a_negative_capture_budget_is_bad_input(tmp_path, capsys):
    from tfperf.cli import main

    path = write_script(tmp_path, name="s.py", body="print('ran')\n")
    assert main(["profile", str(path), "--capture-mb", "-1"]) == 2
    err = capsys.readouterr().err
    assert "--capture-mb" in err and "Traceback" not in err


SETUP_THEN_COMPILED = """
    import tensorflow as tf

    x = tf.ones([4, 4])
    for _ in range(400):  # setup: eager, at the start of the run
        x = tf.tanh(x) + 1.0

    @tf.function
    def work(a):
        for _ in range(12):
            a = tf.tanh(tf.matmul(a, a) * 1e-3)
        return a

    a = tf.ones([512, 512])
    for _ in range(100):  # the run's time: compiled (enough that load, which slows the eager
                          # setup more than the matmuls, cannot lift it to 10 %: 0.109 at 40)
        a = work(a)
"""


def test_a_bounded_captures_eager_start_is_not_advice_when_the_run_is_compiled(
        tf, tmp_path):
    path = write_script(tmp_path, name="setup.py", body=SETUP_THEN_COMPILED)
    got = _bounded_run(path, tmp_path / "logs")
    # the capture, mostly setup, is over the eager-share threshold (10 %); the run is not
    assert got["capture_eager"] > 0.10 and got["run_eager"] < 0.10, got
    assert "profile.eager_share" not in got["advice"]
    assert "only the start of the run" in got["held"]["profile.eager_share"]
