"""The text table says why the pick is the pick (docs/tune.md, "The table's notes say when a
rule decided"): stop 45 found a 93.5× row above the picked 51.1× one with nothing said, the
"picked over …" note only in --json."""

from __future__ import annotations

from tfperf.tune.result import CandidateResult, TuneResult

PICKED_OVER = ("picked over batched + tf.function (93.48×): this run cannot tell them apart "
               "(its speed over this one's ×1.23, ×0.92–×2.02 over 32 rounds of one run "
               "(95%)); fewer levers")


def _result(notes: list[str]) -> TuneResult:
    fast = CandidateResult("batched + tf.function", ["batched", "tf.function"], median_s=5.8e-4,
                           first_call_s=0.19, speedup=93.5, break_even_calls=1,
                           equivalent=True, max_rel_err=0.0)
    pick = CandidateResult("batched", ["batched"], median_s=1.2e-3, first_call_s=8e-3,
                           speedup=51.1, break_even_calls=1, equivalent=True, max_rel_err=0.0,
                           notes=notes)
    slow = CandidateResult("tf.function", ["tf.function"], rejected="raises: TypeError")
    return TuneResult("f", "model.py", {}, {"median_s": 0.062, "first_call_s": 0.29},
                      [fast, pick, slow], "batched", "", 20.0, 20.0)


def test_the_pick_says_why_a_faster_row_lost():
    table = _result([PICKED_OVER, "roofline: 0.657 GFLOP/s"]).table()
    lines = table.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("best: batched "))
    assert lines[at + 1] == "  " + PICKED_OVER, table
    assert "batched roofline: 0.657 GFLOP/s" in lines, table  # as before
    assert sum(PICKED_OVER in line for line in lines) == 1, table


def test_no_notes_no_extra_lines():
    lines = _result([]).table().splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("best: batched "))
    assert lines[at + 1] == "1 rejected (the last column says why)", lines
