"""%tftimeit on a real shell: known durations, the first call split, %timeit's line, errors."""

from __future__ import annotations

import re

import pytest

from tfperf.core.measure import Measurement
from tfperf.notebook.timeit import TimeitResult

BUSY = """\
import time
def busy(seconds=0.002):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass
"""


BUSY_RECORDING = """\
import statistics, time
took = []
def busy_recording(seconds=0.01):
    start = time.perf_counter()
    end = start + seconds
    while time.perf_counter() < end:
        pass
    took.append(time.perf_counter() - start)
"""


def test_busy_wait_of_known_length_is_reported_within_5_percent(run):
    assert run(BUSY_RECORDING).error is None
    ran = run("m = %tftimeit -o -n 1 -r 21 busy_recording(0.01)")
    assert ran.error is None, ran.everything
    m = _ns(run)["m"]
    assert isinstance(m, Measurement) and isinstance(m, TimeitResult)
    # A busy-wait lasts its length plus any time the scheduler took the CPU away at its end:
    # on a loaded machine that tail is milliseconds, and a median may fall on either side of
    # it. Each call records what it really lasted (the last 21 are the timed runs, one call
    # each): run by run, the time reported must match within 5 %; and the median must match
    # the nominal 10 ms within 5 % when the calls were on time (a quiet machine: CI).
    took = _ns(run)["took"][-21:]
    ratios = sorted(t / k for t, k in zip(m.times, took, strict=True))
    assert ratios[len(ratios) // 2] == pytest.approx(1.0, rel=0.05)
    if _ns(run)["statistics"].median(took) < 0.01 * 1.01:
        assert m.median == pytest.approx(0.01, rel=0.05)
    adaptive = run("m = %tftimeit -o --budget 0.5 busy_recording(0.01)")
    assert adaptive.error is None and _ns(run)["m"].median >= 0.01
    assert m.runs >= 2 and len(m.times) == m.runs
    assert m.first_call_s >= 0.01 and m.iqr >= 0
    # the line has %timeit's shape
    line = ran.shown().splitlines()[0]
    assert re.match(r"^[\d.]+ ms ± .+ per loop \(median ± IQR/2 of 21 runs, 1 loop each\); "
                    r"first call [\d.]+ ms$", line), line


def _ns(run):
    from IPython.core.interactiveshell import InteractiveShell

    return InteractiveShell.instance().user_ns


def test_n_and_r_fix_the_loops_and_the_runs(run):
    assert run(BUSY).error is None
    ran = run("m = %tftimeit -o -n 3 -r 4 busy(0.0005)")
    assert ran.error is None, ran.everything
    m = _ns(run)["m"]
    assert (m.number, m.runs) == (3, 4)
    assert "of 4 runs, 3 loops each" in ran.shown()


def test_quiet_shows_nothing_and_without_o_nothing_is_returned(run):
    ran = run("%tftimeit -q -n 2 -r 2 sum(range(10))")
    assert ran.error is None and ran.outputs == [] and ran.stdout == ""
    ran = run("_r = %tftimeit -n 2 -r 2 sum(range(10))")
    assert ran.error is None and _ns(run)["_r"] is None
    assert "per loop" in ran.shown()


def test_cell_form_times_the_cell_and_returns_its_last_value(run):
    ran = run("%%tftimeit -o -n 5 -r 3\nxs = list(range(100))\nsum(xs)\n")
    assert ran.error is None, ran.everything
    m = ran.result.result
    assert isinstance(m, TimeitResult) and m.runs == 3 and m.number == 5


@pytest.mark.tf
def test_jit_compile_function_reports_trace_and_xla_compile_apart(run, tf_cells):
    run("fresh_xla = tf.function(vec, jit_compile=True)")  # not traced by another test
    ran = run("m = %tftimeit -o -n 5 -r 5 fresh_xla(samples, weights)")
    assert ran.error is None, ran.everything
    m = _ns(run)["m"]
    assert m.xla and m.traces == 1
    assert m.trace_s is not None and m.trace_s > 0
    assert m.compile_s is not None and m.compile_s > 0
    # the compile is apart: the steady-state median is far below the first call
    assert m.first_call_s > m.trace_s + m.compile_s * 0.99
    assert m.median < m.first_call_s / 5
    assert re.search(r"first call [\d.]+ \w?s \(trace [\d.]+ \w?s \+ XLA compile [\d.]+ \w?s\)",
                     ran.shown()), ran.shown()
    # called again, nothing traces: the first call has no split
    ran = run("m2 = %tftimeit -o -n 5 -r 3 fresh_xla(samples, weights)")
    m2 = _ns(run)["m2"]
    assert m2.traces == 0 and "(trace" not in ran.shown()


@pytest.mark.tf
def test_plain_tf_function_names_no_xla(run, tf_cells):
    run("plain = tf.function(vec)")
    ran = run("m = %tftimeit -o -n 5 -r 3 plain(samples, weights)")
    m = _ns(run)["m"]
    assert m.traces == 1 and not m.xla
    assert "XLA" not in ran.shown() and "(trace " in ran.shown()


def test_a_noisy_measurement_is_flagged(run):
    # one run in three is ten times longer: the IQR is a large share of the median
    run("import itertools\n_lengths = itertools.cycle([0.0002, 0.0002, 0.002, 0.002])")
    run(BUSY)
    ran = run("%tftimeit -n 1 -r 8 busy(next(_lengths))")
    assert ran.error is None, ran.everything
    assert "warning: noisy" in ran.shown()


@pytest.mark.parametrize("line, message", [
    ("%tftimeit -x 1", "%tftimeit: unknown option -x; usage: %tftimeit [-n NUMBER]"),
    ("%tftimeit -n zero 1", "%tftimeit: -n wants a whole number, not 'zero'"),
    ("%tftimeit -n 0 1", "%tftimeit: -n must be positive, not 0"),
    ("%tftimeit --budget", "%tftimeit: --budget wants a value"),
    ("%tftimeit", "%tftimeit: no statement given"),
    ("%tftimeit f(", "%tftimeit: syntax error in the statement: '(' was never closed"),
    ("%tftimeit 1/0", "%tftimeit: the statement raised ZeroDivisionError: division by zero "
                      "(cell "),
])
def test_bad_input_is_one_clear_line(run, line, message):
    ran = run(line)
    assert ran.error is not None
    assert str(ran.error).startswith(message), str(ran.error)
    printed = (ran.stdout + ran.stderr).strip()
    assert printed.startswith(message) and "\n" not in printed, printed
    assert "Traceback" not in printed and "tfperf/" not in printed


def test_a_raising_function_is_located_in_its_cell(run):
    defined = run("def bad(x):\n    y = x + 1\n    return y / 0\n")
    n = defined.result.execution_count
    ran = run("%tftimeit bad(1)")
    assert str(ran.error) == ("%tftimeit: the statement raised ZeroDivisionError: division by "
                              f"zero (cell {n}, line 3)")


INTERRUPTED_AFTER = """\
import time
calls = 0
def interrupted_after(n, seconds=0.001):
    global calls
    calls += 1
    if calls > n:
        raise KeyboardInterrupt  # what Ctrl-C raises in the kernel's main thread
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass
"""


@pytest.mark.parametrize("options, calls, runs", [
    ("-n 1 -r 50", 10, 8),     # first call, warm-up, then 8 runs
    ("--budget 5", 80, None),  # the adaptive core: whatever runs were in
])
def test_ctrl_c_keeps_the_runs_so_far(run, options, calls, runs):
    assert run(INTERRUPTED_AFTER).error is None
    ran = run(f"m = %tftimeit -o {options} interrupted_after({calls})")
    assert ran.error is None, ran.everything
    m = _ns(run)["m"]
    assert m.runs == runs if runs else m.runs >= 1
    assert f"note: interrupted (Ctrl-C) after {m.runs} runs" in ran.shown()


def test_ctrl_c_before_any_run_is_one_line(run):
    assert run(INTERRUPTED_AFTER).error is None
    ran = run("%tftimeit -n 1 -r 5 interrupted_after(0)")
    assert str(ran.error) == "%tftimeit: interrupted before a run completed"


def test_cell_form_takes_a_setup_on_the_magic_line_as_timeit_does(run):
    run("seen_setups = []")
    ran = run("%%tftimeit -o -n 2 -r 2 setup_data = list(range(50)); seen_setups.append(1)\n"
              "sum(setup_data)\n")
    assert ran.error is None, ran.everything
    assert ran.result.result.runs == 2
    assert _ns(run)["seen_setups"] == [1]  # the setup ran once, not per call
    assert "setup_data" not in _ns(run)  # its names stay with the statement
    bad = run("%%tftimeit -n 1 -r 1 1/0\nx = 1\n")
    assert str(bad.error) == "%tftimeit: the setup raised ZeroDivisionError: division by zero"
