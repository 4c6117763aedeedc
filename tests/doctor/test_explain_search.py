"""``explain_search.Lines.search`` is ``rx.search(text)`` on fewer lines: the same match (span,
groups) for every evidence row on real logs, and the whole text is searched where a pattern
can cross a line or its literals are not known."""

from __future__ import annotations

import re
from pathlib import Path

from tfperf.doctor.explain_evidence import _rows
from tfperf.doctor.explain_search import Lines, line_needles

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "explain_logs"


def _same(a: re.Match[str] | None, b: re.Match[str] | None) -> bool:
    if a is None or b is None:
        return a is b
    return a.span() == b.span() and a.groups() == b.groups()


def test_every_evidence_row_finds_the_same_match_on_the_set() -> None:
    logs = sorted(FIXTURES.glob("*.log"))
    # the set's logs joined: every row's needles occur somewhere, most rows match somewhere
    text = "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in logs)
    chunks = [text] + [p.read_text(encoding="utf-8", errors="replace") for p in logs[::7]]
    matched = 0
    for chunk in chunks:
        lines = Lines(chunk)
        for row in _rows():
            rx = row[2]
            want, got = rx.search(chunk), lines.search(rx)
            assert _same(want, got), rx.pattern[:80]
            matched += want is not None
    assert matched > 50  # the comparison met real matches, not only misses


def test_patterns_that_can_cross_a_line_are_searched_whole() -> None:
    for pattern in (r"(?s)foo.*bar", r"foo\s+bar", r"foo[^x]bar", r"\Afoo", r"foo\nbar"):
        assert line_needles(pattern, re.compile(pattern).flags) == ()
    assert line_needles(r"foo[^\n]*barbaz", 0) == ("barbaz",)  # one line: its longest literal


def test_a_match_across_lines_is_still_found() -> None:
    rx = re.compile(r"foo\s+bar")
    assert Lines("x\nfoo\nbar\n").search(rx) is not None


def test_a_caseless_pattern_on_non_ascii_text_is_searched_whole() -> None:
    # 'ſ' (long s) matches 's' without case but lower-cases to itself: no needle would see it
    rx = re.compile(r"(?i)status: unresolved")
    text = "x\nſtatus: unresolved\n"
    assert _same(Lines(text).search(rx), rx.search(text))


def test_a_text_whose_lower_case_changes_length_is_searched_whole() -> None:
    rx = re.compile(r"undefined symbol: \w+")
    text = "\u0130stanbul\nlib.so: undefined symbol: _ZN3foo\n"  # 'İ' lower-cases to two chars
    assert _same(Lines(text).search(rx), rx.search(text))


def test_a_verbose_pattern_s_spaces_are_no_literals() -> None:
    # re.X ignores the spaces: 'foo bar' matches 'foobar', so ' ' may not be part of a needle
    for rx in (re.compile(r"foo bar", re.X), re.compile(r"(?x)abc | de f"),
               re.compile(r"foo\ bar | baz qux", re.X)):
        for text in ("x\nfoobar\n", "x\ndef\n", "x\nbazqux\n"):
            assert _same(Lines(text).search(rx), rx.search(text)), (rx.pattern, text)


def test_a_branch_that_names_another_branch_s_group_is_searched() -> None:
    rx = re.compile(r"(?P<g>xyz)abc|def(?(g)a|b)")
    text = "x\ndefb\n"
    assert _same(Lines(text).search(rx), rx.search(text))
    rx = re.compile(r"(abc)x|def\1")
    assert _same(Lines("q\ndefabc\n").search(rx), rx.search("q\ndefabc\n"))
