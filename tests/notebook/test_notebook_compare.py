"""%tfcompare: statements in the notebook's namespace → bench.compare → table as text and HTML."""

from __future__ import annotations

import pytest

from tfperf.bench.report import CompareReport

pytestmark = pytest.mark.tf


def _ns():
    from IPython.core.interactiveshell import InteractiveShell

    return InteractiveShell.instance().user_ns


def test_compare_statements_shows_speedups_and_equivalence(run, tf_cells):
    ran = run("rep = %tfcompare -o slow(samples, weights) vec(samples, weights) "
              "xla(samples, weights) --budget 0.5")
    assert ran.error is None, ran.everything
    rep = _ns()["rep"]
    assert isinstance(rep, CompareReport)
    assert [v.name for v in rep.variants] == ["slow", "vec", "xla"]
    assert rep.baseline == "slow"
    assert all(v.equivalent for v in rep.variants[1:])
    assert rep.variants[1].speedup > 1  # the loop of 16 slices is slower than one op
    text, html = ran.shown("text/plain"), ran.shown("text/html")
    assert "slow (baseline)" in text and "speedup" in text and "yes" in text
    # the HTML report's notebook fragment (docs/html-report.md): scoped, no page around it
    assert html.startswith('<div class="tfperf"') and '<table class="sortable">' in html
    assert "<html" not in html and "Speedup over the baseline" in html
    assert '<td data-value="vec">vec</td>' in html and "\x1b[" not in html


def test_named_variants_baseline_and_a_wrong_variant(run, tf_cells):
    ran = run("rep = %tfcompare -o fast=vec(samples,weights) wrong=vec(samples,weights)*2 "
              "--baseline fast --budget 0.3")
    assert ran.error is None, ran.everything
    rep = _ns()["rep"]
    assert rep.baseline == "fast"
    wrong = rep.variants[1]
    assert wrong.name == "wrong" and wrong.equivalent is False
    assert "NOT EQUIVALENT to fast" in ran.shown("text/plain")
    assert '<li class="loud">wrong: NOT EQUIVALENT to fast' in ran.shown("text/html")


def test_cell_form_one_statement_per_line_and_a_plot(run, tf_cells):
    import tempfile
    from pathlib import Path

    def left() -> set[Path]:
        return set(Path(tempfile.gettempdir()).glob("tfperf-compare-*"))

    before = left()
    ran = run("%%tfcompare --budget 0.3 --plot\n# variants\nloop = slow(samples, weights)\n"
              "vector = vec(samples, weights)\n")
    assert ran.error is None, ran.everything
    assert any("image/png" in o for o in ran.outputs)
    assert left() == before  # the image is embedded: no file left behind per plot
    assert "loop (baseline)" in ran.shown()


@pytest.mark.parametrize("line", [
    "vec(samples,weights) ; xla(samples,weights)",   # issue 24: ';' was timed as a variant
    "vec(samples,weights); xla(samples,weights);",   # a trailing ';' (IPython's quiet habit)
    "vec(samples,weights);xla(samples,weights)",
])
def test_a_semicolon_separates_variants_as_a_space_does(run, tf_cells, line):
    ran = run(f"rep = %tfcompare -o -q {line} --budget 0.2")
    assert ran.error is None, ran.everything
    assert [v.name for v in _ns()["rep"].variants] == ["vec", "xla"]


def test_quiet_shows_nothing(run, tf_cells):
    ran = run("%tfcompare -q vec(samples,weights) xla(samples,weights) --budget 0.2")
    assert ran.error is None and ran.outputs == []


@pytest.mark.parametrize("line, message", [
    ("%tfcompare vec(samples, weights)", "give at least two statements"),
    ("%tfcompare a=vec(samples,weights) b=xla(samples,weights) --baseline c",
     "--baseline 'c' is not one of the variants ['a', 'b']"),
    ("%tfcompare vec(samples, weights) xla(samples,", "syntax error in the statement"),
    ("%tfcompare vec(samples,weights) xla(samples,weights) --bogus", "unknown option --bogus"),
    # IPython syntax is no variant: timed, it ran the command every round, "NOT EQUIVALENT"
    ("%%tfcompare\nvec(samples, weights)\n%timeit -n1 -r1 vec(samples, weights)\n",
     "'%timeit -n1 -r1 vec(samples, weights)' is a magic or shell command, not a statement"),
    ("%%tfcompare\nvec(samples, weights)\n!echo hi\n", "line 3: '!echo hi' is a magic"),
    ("%%tfcompare\nvec(samples, weights)\nfiles = !ls\n", "line 3: '!ls' is a magic"),
])
def test_bad_input_is_one_clear_line(run, tf_cells, line, message):
    ran = run(line)
    assert ran.error is not None and message in str(ran.error), str(ran.error)
    assert "Traceback" not in ran.stdout + ran.stderr


def test_a_raising_variant_is_reported_in_the_table(run, tf_cells):
    ran = run("rep = %tfcompare -o ok=vec(samples,weights) boom=1/0 --budget 0.2")
    assert ran.error is None, ran.everything
    boom = _ns()["rep"].variants[1]
    assert boom.status == "error" and "ZeroDivisionError" in boom.error
    assert "boom: error: ZeroDivisionError" in ran.shown()


def test_ctrl_c_during_the_rounds_keeps_the_rounds_done(run, tf_cells):
    run("""\
import time
_calls = 0
def stopper():
    global _calls
    _calls += 1
    if _calls > 6:  # first call, warm-up, calibration, then three rounds
        raise KeyboardInterrupt
    end = time.perf_counter() + 0.025
    while time.perf_counter() < end:
        pass
    return 1.0
""")
    ran = run("rep = %tfcompare -o base=stopper() other=float(1) --budget 5")
    assert ran.error is None, ran.everything
    rep = _ns()["rep"]
    assert [v.measurement.runs for v in rep.variants] == [3, 3]
    assert "base: interrupted (Ctrl-C) after 3 rounds" in ran.shown()
