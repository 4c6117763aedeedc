"""A log of repeated lines costs no more work than the distinct lines in it (counted, not timed):
each distinct line is matched, shaped and read once, and the answers name every repeat."""

from __future__ import annotations

from typing import Any

import pytest

from tfperf.doctor import explain_memory, explain_quiet
from tfperf.doctor.explain_readings import gpu_not_visible
from tfperf.doctor.explainer import explain_log
from tfperf.doctor.knowledge import errors

_OOM = ("2024-01-01 10:00:00.000000: W tensorflow/core/common_runtime/bfc_allocator.cc:479] "
        "Allocator (GPU_0_bfc) ran out of memory trying to allocate 1.00GiB (rounded to "
        "1073741824)requested by op MatMul")


class _Counting:
    """A compiled regex that counts its searches."""

    def __init__(self, rx: Any, counts: list[int]) -> None:
        self._rx, self._counts = rx, counts

    def search(self, *args: Any) -> Any:
        self._counts[0] += 1
        return self._rx.search(*args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._rx, name)


def _row_searches(monkeypatch: pytest.MonkeyPatch, text: str) -> tuple[int, Any]:
    counts = [0]
    compile_row = errors._compile
    monkeypatch.setattr(errors, "_compile", lambda pattern: _Counting(compile_row(pattern), counts))
    ex = explain_log(text)
    monkeypatch.undo()
    return counts[0], ex


def test_a_repeated_line_is_matched_once_and_every_repeat_is_reported(monkeypatch):
    once, one = _row_searches(monkeypatch, _OOM)
    many, repeated = _row_searches(monkeypatch, "\n".join([_OOM] * 500))
    distinct, _ = _row_searches(monkeypatch, "\n".join(
        _OOM.replace("MatMul", f"Op{i}") for i in range(500)))
    assert once > 0 and many == once
    assert distinct > 10 * once  # the count is of lines matched: distinct lines cost each
    assert [c.label for c in repeated.causes] == [c.label for c in one.causes]
    assert len(repeated.causes[0].lines) == 500


def test_a_repeated_unexplained_warning_is_shaped_and_owned_once(monkeypatch):
    calls = {"shape": 0, "owner": 0}
    shape, owner = explain_quiet._shape, explain_quiet.is_tf_line

    def counted_shape(text: str) -> str:
        calls["shape"] += 1
        return shape(text)

    def counted_owner(text: str) -> bool:
        calls["owner"] += 1
        return owner(text)

    monkeypatch.setattr(explain_quiet, "_shape", counted_shape)
    monkeypatch.setattr(explain_quiet, "is_tf_line", counted_owner)
    line = "W0713 10:00:00.000000 140 my_loader.py:12] skipped a malformed record in shard"
    ex = explain_log("\n".join([line] * 300))
    assert calls == {"shape": 1, "owner": 1}
    assert not ex.problems


def test_a_repeated_line_is_read_once_looking_for_the_kill(monkeypatch):
    counts = [0]
    monkeypatch.setattr(explain_memory, "_KILLED",
                        _Counting(explain_memory._KILLED, counts))
    lines = ["Filling up shuffle buffer (this may take a while): 100 of 1000"] * 400 + ["Killed"]
    assert explain_memory.killed_after(lines, -1) == 400
    assert counts[0] == 2


@pytest.mark.parametrize(("answer", "where"), [
    ("Num GPUs Available:  0", (300, 300)),
    (">>> tf.test.is_gpu_available()\nFalse", (300, 301)),
    ("GPU devices seen: 1", None)])
def test_the_gpu_check_answer_is_found_after_many_repeated_lines(answer, where):
    noise = "2024-01-01 10:00:00.000000: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1" \
            "] Created device /job:localhost/replica:0/task:0/device:GPU:0 with 9 MB memory"
    text = "\n".join([noise] * 300 + [answer] + [noise] * 300)
    assert gpu_not_visible(text) == where


@pytest.fixture(params=["word-index", "matcher"])
def lookup(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each candidate lookup in turn: the pure-Python word index, and the compiled multi-pattern
    matcher (the optional ahocorasick_rs package, in the test extra; skipped where missing)."""
    from tfperf.doctor import explain_multimatch

    if request.param == "matcher":
        monkeypatch.setattr(explain_multimatch, "_AC", pytest.importorskip("ahocorasick_rs"))
    else:
        monkeypatch.setattr(explain_multimatch, "_AC", None)
    return str(request.param)


def test_the_word_index_finds_the_same_candidate_rows_as_reading_every_line(lookup):
    from pathlib import Path

    from tfperf.doctor.explainer import _candidates, _keys, _needle_keys
    from tfperf.doctor.knowledge import error_patterns

    fixtures = Path(__file__).parent / "fixtures" / "explain_logs"
    lines = [ln for log in sorted(fixtures.glob("*.log"))[:150]
             for ln in log.read_text(errors="replace").splitlines()]
    lines += ["x i tensorflow/ y", "  not found", "resource exhaustedError", "\t[errno 2] z"]
    patterns = error_patterns()
    keys = _keys(lines)
    every_line = {li: rows for li, key in enumerate(keys) if (rows := [
        ri for ri, p in enumerate(patterns)
        if not p.needles or any(n in key for n, _ in _needle_keys(p.needles))])}
    assert len(every_line) > 100
    assert _candidates(lines, patterns) == every_line


def test_a_shared_needle_and_a_word_repeated_in_a_line_give_the_rows_reading_every_line(lookup):
    """A needle several rows share is looked for once and each of those rows gets its lines; a
    line holding a word twice is listed twice in the word index and still found once."""
    from collections import Counter

    from tfperf.doctor.explainer import _candidates, _keys, _needle_keys
    from tfperf.doctor.knowledge import error_patterns

    patterns = error_patterns()
    shared = Counter(n for p in patterns for n, _ in _needle_keys(p.needles))
    needle = next(n for n, c in shared.items() if c > 1 and b" " in n.strip())
    sharing = [ri for ri, p in enumerate(patterns)
               if needle in dict(_needle_keys(p.needles))]
    text = needle.decode()
    lines = [f"E0101 {text} and again {text}", "not found, not found: not here",
             "nothing to see", f"W {text.upper()}"]
    keys = _keys(lines)
    every_line = {li: rows for li, key in enumerate(keys) if (rows := [
        ri for ri, p in enumerate(patterns)
        if not p.needles or any(n in key for n, _ in _needle_keys(p.needles))])}
    got = _candidates(lines, patterns)
    assert got == every_line
    assert set(sharing) <= set(got[0]) and set(sharing) <= set(got[3]) and len(sharing) > 1
    assert 2 not in got  # a line holding no needle has no candidate row


def test_a_needle_holding_a_line_break_leaves_the_lookup_to_the_word_index(monkeypatch):
    """The matcher reads the distinct keys joined by line breaks: a needle holding one could
    match across two keys, so it declines and the word index answers (no row has one today)."""
    ac = pytest.importorskip("ahocorasick_rs")
    from tfperf.doctor import explain_multimatch

    monkeypatch.setattr(explain_multimatch, "_AC", ac)
    keys = [b"first half", b"second half"]
    assert explain_multimatch.rows_by_key(keys, ((b"half\nsecond",), (b"half",))) is None
    assert explain_multimatch.rows_by_key(keys, ((b"st ha",), (b"half",))) == {0: [0, 1], 1: [1]}
    assert explain_multimatch.rows_by_key(keys, ((), (b"second",))) == {0: [0], 1: [0, 1]}
