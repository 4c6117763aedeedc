"""%%tfprofile: retraces with their cause, host syncs and eager ops by cell and line."""

from __future__ import annotations

import re

import pytest

from tfperf.profile.report import ProfileReport

pytestmark = pytest.mark.tf


def test_eager_ops_and_host_syncs_are_named_by_cell_and_line(run, tf_cells):
    ran = run("%%tfprofile -o --steps 3\ny = slow(samples, weights)\n"
              "total = float(tf.reduce_sum(y))\n")
    assert ran.error is None, ran.everything
    n = ran.result.execution_count
    rep = ran.result.result
    assert isinstance(rep, ProfileReport)
    text = ran.shown()
    # the loop's ops are charged to the line inside slow(), defined in an earlier cell
    assert re.search(rf"cell {tf_cells}, line 7 +\d+ ", text), text
    assert re.search(rf"cell {n}, line 3 +3 .*float\(\)", text), text  # the host syncs
    assert f"cell {tf_cells}, line 7: profile.eager_ops" in text
    # names the cell assigns stay in the namespace
    assert run("print(type(total).__name__)").stdout.strip() == "float"
    assert "<pre>" in ran.shown("text/html")


def test_retraces_are_reported_with_their_cause(run, tf_cells):
    run("@tf.function\ndef scale(x, k):\n    return x * k\n")
    ran = run("%%tfprofile -o\nfor k in range(4):\n    scale(samples, k)\n")
    assert ran.error is None, ran.everything
    fn = next(f for f in ran.result.result.obs.functions if f.name == "scale")
    assert fn.traces == 4
    assert re.search(r"scale: 3 retrace\(s\): .*k", ran.shown()), ran.shown()


def test_steps_and_capture_add_the_op_time_table(run, tf_cells, tmp_path):
    ran = run(f"%%tfprofile -o --steps 2 --capture --logdir {tmp_path}\n"
              "vec(samples, weights)\n")
    assert ran.error is None, ran.everything
    rep = ran.result.result
    assert rep.capture is not None and rep.capture.steps == 2
    assert "Op time (profiler capture" in ran.shown()
    assert list(tmp_path.rglob("*.xplane.pb"))


def test_one_statement_form(run, tf_cells):
    ran = run("%tfprofile -o vec(samples, weights)")
    assert ran.error is None, ran.everything
    assert ran.result.result.obs.eager_op_count >= 3


def test_a_raising_cell_still_reports_what_ran_then_one_line(run, tf_cells):
    ran = run("%%tfprofile\ny = vec(samples, weights)\nraise ValueError('bad batch')\n")
    n = ran.result.execution_count
    assert str(ran.error) == (f"%tfprofile: the cell raised ValueError: bad batch (cell {n}, "
                              "line 3); the report covers what ran before it")
    shown = ran.shown()
    assert "Eager ops, by line" in shown and f"cell {tf_cells}, line 10" in shown
    assert "tfperf/notebook" not in shown  # the traceback is the user's only
    assert f'File "cell {n}", line 3' in shown  # named as the reader knows the cell


@pytest.mark.parametrize("cell, message", [
    ("%%tfprofile --steps\nvec(samples, weights)\n", "--steps wants a value"),
    ("%%tfprofile\nvec(samples,\n", "syntax error in the statement"),
    ("%tfprofile", "no statement given"),
])
def test_bad_input_is_one_clear_line(run, tf_cells, cell, message):
    ran = run(cell)
    assert ran.error is not None and message in str(ran.error), str(ran.error)
    assert "Traceback" not in ran.stdout + ran.stderr


def test_memory_view_of_a_cell(run, tf_cells):
    """%%tfprofile --memory: each step's peak and the tensors live at it, by cell and line."""
    ran = run("%%tfprofile --memory -o --steps 2\n"
              "big = tf.tile(samples, [256, 1, 1])\n"
              "total = tf.reduce_sum(big)\n")
    assert ran.error is None, ran.everything
    report = ran.result.result
    cpu = next(d for d in report.devices if d.device == "CPU")
    assert any(e.shape == "[4096,40,8]" for e in cpu.worst.live)  # 5 MiB: counted by any
    assert "Peak per step" in ran.shown()


def test_memory_view_interrupted_is_one_line_and_frees_the_profiler(run, tf_cells):
    """Ctrl-C in `%%tfprofile --memory`: TensorFlow's frames as a 25-line traceback, and the
    profiler left running: every later capture in the kernel read "profiler did not start:
    AlreadyExistsError: Another profiler is running"."""
    ran = run("_calls = [0]")
    assert ran.error is None
    ran = run("%%tfprofile --memory --steps 3\n"
              "_calls[0] += 1\n"
              "y = vec(samples, weights)\n"
              "if _calls[0] == 3:\n"
              "    raise KeyboardInterrupt\n")  # in the captured steps (the first warms up)
    assert str(ran.error) == ("%tfprofile: interrupted; the memory view needs its steps to "
                              "finish: nothing to report")
    again = run("%%tfprofile --memory -o --steps 2\n"
                "big = tf.tile(samples, [256, 1, 1])\ntotal = tf.reduce_sum(big)\n")
    assert again.error is None, again.everything
    assert "Another profiler is running" not in again.shown()
    assert "Peak per step" in again.shown()
