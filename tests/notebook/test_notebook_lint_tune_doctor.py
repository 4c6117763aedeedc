"""%tflint over the cells run so far (and %%tflint on one), %tftune's guard, %tfdoctor."""

from __future__ import annotations

import sys
import types

import pytest

from tfperf.notebook.lint import LintReport

PRINT_IN_FUNCTION = """\
import tensorflow as tf

@tf.function
def step(x):
    loss = tf.reduce_mean(x)
    print('loss', loss)
    return loss
"""


def test_lint_cells_so_far_by_cell_and_line_with_the_fix_as_a_cell_diff(run):
    # the guard keeps the cell from importing TensorFlow; lint reads the code under it (a
    # constant `if False:` would be dead code, which lint skips)
    cell = run("if __name__ == 'never':\n" + "".join("    " + ln + "\n" for ln in [
        "import tensorflow as tf", "@tf.function", "def step(x):",
        "    loss = tf.reduce_mean(x)", "    print('loss', loss)", "    return loss"]))
    assert cell.error is None, cell.everything
    n = cell.result.execution_count
    ran = run("rep = %tflint -o TFP204")
    assert ran.error is None, ran.everything
    rep = ran.result.result if ran.result.result is not None else _ns()["rep"]
    assert isinstance(rep, LintReport)
    item = next(i for i in rep.items if i.finding.location.cell == n)
    assert item.finding.code == "TFP204"
    assert item.where == f"cell {n}, line 6, col 9"
    assert f"--- a/cell {n}" in item.diff and "+        tf.print('loss', loss)" in item.diff
    text, html = ran.shown("text/plain"), ran.shown("text/html")
    assert f"cell {n}, line 6, col 9: TFP204" in text and "+        tf.print" in text
    assert "<table>" in html and "<pre>" in html and "tf.print" in html


def _ns():
    from IPython.core.interactiveshell import InteractiveShell

    return InteractiveShell.instance().user_ns


@pytest.mark.tf
def test_a_cell_run_twice_is_linted_once_and_codes_select_rules(run, tf_cells):
    src = ("import tensorflow as tf\nscores = tf.random.uniform([10])\nkeep = []\n"
           "for i in range(scores.shape[0]):\n    if float(scores[i]) > 0.5:\n"
           "        keep.append(i)\n")
    first = run(src).result.execution_count
    second = run(src).result.execution_count
    rep = run("rep = %tflint -o TFP201").result.result or _ns()["rep"]
    assert {i.finding.code for i in rep.items} == {"TFP201"}  # the codes select the rules
    cells = [i.finding.location.cell for i in rep.items]
    assert second in cells and first not in cells  # the latest run only
    none = run("rep = %tflint -o TFP999").error
    assert "no rule matches TFP999" in str(none)


def test_cell_form_lints_this_cell_only_with_cell_lines(run):
    ran = run("%%tflint -o TFP204\n" + PRINT_IN_FUNCTION)  # a preview rule: by its code
    assert ran.error is None, ran.everything
    rep = ran.result.result
    n = ran.result.execution_count
    codes = {(i.finding.code, i.finding.location.cell, i.finding.location.line) for i in rep.items}
    assert ("TFP204", n, 7) in codes  # line 1 is the magic: lines match the cell as typed
    assert rep.cells == 1


def test_cell_form_reads_the_imports_of_the_cells_run_before(run):
    """`%%tflint` on a cell that uses the `tf` an earlier cell imported: alone, the cell read
    as plain Python and showed "no findings" where `%tflint` flagged it. Only its own
    findings are shown."""
    imported = run("if __name__ == 'never':\n    import tensorflow as tf\n")  # lint reads it
    assert imported.error is None, imported.everything
    body = PRINT_IN_FUNCTION.replace("import tensorflow as tf\n", "")
    earlier = run("if __name__ == 'never':\n" + "".join("    " + ln + "\n"
                                                         for ln in body.splitlines()))
    ran = run("%%tflint -o TFP204\n" + body)
    assert ran.error is None, ran.everything
    rep, n = ran.result.result, ran.result.execution_count
    assert [(i.finding.code, i.finding.location.cell, i.finding.location.line)
            for i in rep.items] == [("TFP204", n, 6)]  # not the earlier cell's own TFP204
    assert earlier.result.execution_count != n and rep.cells == 1
    assert f"cell {n}, line 6, col 5: TFP204" in ran.shown()
    assert f"--- a/cell {n}" in rep.items[0].diff and "+    tf.print(" in rep.items[0].diff


def test_cell_form_without_tensorflow_anywhere_stays_clean(run):
    """Its twin: the same code where `tf` is no module anyone imported is not TF's."""
    ran = run("%%tflint -o TFP204\nclass tf:\n    function = staticmethod(lambda f: f)\n"
              "@tf.function\ndef step(x):\n    print('loss', x)\n    return x\n")
    assert ran.error is None and ran.result.result.items == [], ran.everything


def test_lint_shows_a_clean_notebook_as_such(run):
    ran = run("%%tflint\nx = 1 + 1\n")
    assert ran.error is None and "no findings in 1 cell(s)" in ran.shown()


def test_tune_says_it_is_not_available_where_it_cannot_be_imported(run, monkeypatch):
    import tfperf.notebook.tune as magic_tune

    monkeypatch.setattr(magic_tune, "tune_module", lambda: None)
    ran = run("%tftune len([1, 2])")
    assert ran.error is None
    assert ran.shown().startswith("tune is not available yet")


@pytest.mark.tf
def test_real_tune_on_a_cell_function_shows_the_cell_diff(run, roomy_limits):
    # A function typed in a cell has no .py file: tune edits the cell's text (IPython keeps it
    # in linecache), and the patch is a diff of that cell, its %magic lines as typed. Limits no
    # load reaches (roomy_limits): at load 15 the traced form's first call outlasted 1.2 s and
    # nothing was picked; the pick is this test's premise, not what a busy machine leaves.
    cell = run("import tensorflow as tf\n"
               "rows = tf.random.stateless_normal([24, 6], seed=[1, 2])\n"
               "%time mat = tf.random.stateless_normal([6, 3], seed=[3, 4])\n"
               "def per_row(x, w):\n"
               "    out = []\n"
               "    for i in range(x.shape[0]):\n"
               "        out.append(tf.tanh(tf.linalg.matvec(w, x[i], transpose_a=True)))\n"
               "    return tf.stack(out)\n")
    assert cell.error is None, cell.everything
    n = cell.result.execution_count
    ran = run("r = %tftune -o --budget 8 per_row(rows, mat)")
    assert ran.error is None, ran.everything
    result = _ns()["r"]
    assert result.in_file is False and result.cell == n
    assert result.best is not None, result.table()  # 24 eager rows: a rewrite wins
    text = ran.shown()
    assert f"tune cell {n}:per_row" in text and f"--- a/cell {n}" in text
    assert "a diff of the cell" in text and " %time mat = " in text  # the line as typed
    ns = _ns()
    want = ns["per_row"](ns["rows"], ns["mat"])
    got = result.best_fn(ns["rows"], ns["mat"])
    assert float(tf_max_abs(want, got)) < 3e-2  # bfloat16 casts may win where AVX512-BF16 is
    from tfperf.tune.patch import apply_patch
    from tfperf.tune.target import TuneError

    with pytest.raises(TuneError, match=rf"defined in cell {n}, not in a \.py file"):
        apply_patch(result)


def tf_max_abs(a, b):
    import tensorflow as tf

    return tf.reduce_max(tf.abs(tf.cast(a, tf.float32) - tf.cast(b, tf.float32)))


class _FakeTuneResult:
    def table(self) -> str:
        return "candidate  speedup\nxla        3.0x"


def test_tune_calls_tfperf_tune_when_it_exists(run, monkeypatch):
    seen = []

    def fake_tune(fn, args=(), kwargs=None, *, budget=60.0, progress=None):
        progress("screening levers")
        seen.append((fn, args, kwargs, budget))
        return _FakeTuneResult()

    fake = types.ModuleType("tfperf.tune")
    fake.tune = fake_tune  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "tfperf.tune", fake)
    ran = run("r = %tftune -o --budget 5 max([3, 1], key=abs)")
    assert ran.error is None, ran.everything
    assert seen == [(max, ([3, 1],), {"key": abs}, 5.0)]
    assert isinstance(_ns()["r"], _FakeTuneResult)
    assert "xla        3.0x" in ran.shown()
    bad = run("%tftune not a call")
    assert "syntax error" in str(bad.error) or "give one call" in str(bad.error)
    missing = run("%tftune undefined_fn(1)")
    assert "undefined_fn raised NameError" in str(missing.error)


def test_tune_with_a_star_args_signature(run, monkeypatch):
    fake = types.ModuleType("tfperf.tune")
    fake.tune = lambda fn, *a, **k: f"tuned {fn.__name__}{a}{k}"  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "tfperf.tune", fake)
    ran = run("r = %tftune -o -q max(3, 1)")
    assert ran.error is None and _ns()["r"] == "tuned max(3, 1){}" and ran.outputs == []


def test_doctor_report_as_text_and_html(run, monkeypatch):
    # The facts of a GPU machine (a fixture of the doctor's tests) stand in for this one's:
    # gathering real facts imports TensorFlow in a subprocess (the case-study notebook does).
    import json
    from pathlib import Path

    from tfperf.doctor import gather
    from tfperf.doctor.facts import Facts

    data = json.loads((Path(__file__).parents[1] / "doctor" / "fixtures" /
                       "h100_tf215.json").read_text())
    asked = []
    monkeypatch.setattr(gather, "gather", lambda options: asked.append(options) or
                        Facts.from_dict(data))
    ran = run("d = %tfdoctor -o --no-compute --timeout 30")
    assert ran.error is None, ran.everything
    assert asked[0].compute is False and asked[0].timeout == 30
    d = _ns()["d"]
    assert d.findings and d.exit_status == (1 if any(f.failed for f in d.findings) else 0)
    text, html = ran.shown("text/plain"), ran.shown("text/html")
    assert text.startswith("tfperf doctor") and "Driver and GPU" in text and "H100" in text
    assert html.startswith('<div class="tfperf"') and "<table" in html and "H100" in html
    # the chain's groups, the checks by their short ids (doctor.gpu shown as gpu)
    assert ">Driver and GPU</" in html and "<code>gpu</code>" in html
    assert "<code>doctor.gpu</code>" not in html
    assert "\x1b[" not in text + html
    assert "unexpected" in str(run("%tfdoctor now").error)


def test_doctor_interrupted_is_one_line(run, monkeypatch):
    """Ctrl-C while the doctor gathers (a kernel interrupt lands in the wait on its probes'
    threads): one line, not a traceback through tfperf's thread pool."""
    from tfperf.doctor import gather

    def interrupted(options):
        raise KeyboardInterrupt

    monkeypatch.setattr(gather, "gather", interrupted)
    ran = run("%tfdoctor --no-compute")
    assert str(ran.error) == "%tfdoctor: interrupted"
    assert "Traceback" not in ran.stdout + ran.stderr
