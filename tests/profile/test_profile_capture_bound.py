"""A long run's capture stays bounded: the profiler stops once the process has grown by the
capture's memory budget, and the report says what part of the run the capture holds. Real TF
profiler captures of a planted eager loop; counts from the capture itself."""

from profile_scripts import write_script

from tfperf.profile import runner

LONG_EAGER_RUN = """
    import tensorflow as tf

    x = tf.ones([4, 4])
    for _ in range(6000):  # about 24,000 eager ops, no training step, no tf.function
        x = tf.tanh(x) + tf.sin(x) * 0.5 - 0.25
"""


def _captured_eager_ops(rep: runner.ProfileReport) -> int:
    assert rep.capture is not None, rep.capture_note
    return sum(o.count for o in rep.capture.ops if o.eager)


def test_a_capture_past_its_memory_budget_stops_and_the_report_says_so(tf, tmp_path):
    path = write_script(tmp_path, name="long.py", body=LONG_EAGER_RUN)
    # bounded first: memory the first capture freed would hide the second one's growth
    bounded = runner.run_script(path, logdir=tmp_path / "bounded", capture_mb=1)
    whole = runner.run_script(path, logdir=tmp_path / "whole", capture_mb=None)
    ran = bounded.obs.eager_op_count
    assert ran >= 24_000 and whole.obs.eager_op_count == ran  # the run itself is the same
    # unbounded: the capture holds the whole run; bounded: it stopped early
    assert _captured_eager_ops(whole) >= ran * 0.9
    assert _captured_eager_ops(bounded) < ran * 0.5
    assert whole.capture_note is None
    assert bounded.capture_note is not None and "first" in bounded.capture_note
    assert "1 MiB" in bounded.capture_note and "1 MiB" in bounded.text()


def test_a_negative_capture_budget_is_bad_input(tmp_path, capsys):
    from tfperf.cli import main

    path = write_script(tmp_path, name="s.py", body="print('ran')\n")
    assert main(["profile", str(path), "--capture-mb", "-1"]) == 2
    err = capsys.readouterr().err
    assert "--capture-mb" in err and "Traceback" not in err
