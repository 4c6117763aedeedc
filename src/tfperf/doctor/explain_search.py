"""A regex search over a long text confined to the lines that can hold a match.

``rx.search(text)`` over 200,000 characters costs 1-6 ms for a pattern that starts with an
alternation (the engine tries every position); the evidence rows did some twenty of them per
long log. When the pattern cannot match a line break (read from its parse tree) every match lies
inside one line, and when each of its top-level alternatives needs a literal, only the lines
holding one of those literals can match. Searching just those lines, in order, gives the same
match object as searching the whole text: ``pos``/``endpos`` keep the text's own positions, and
what lies past a line's ends (a line break) is nothing the pattern could match.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from tfperf.doctor.knowledge.errors import MIN_NEEDLE, needles_of

try:  # the regex parser moved in Python 3.11
    import re._parser as _sre  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - Python 3.10
    import sre_parse as _sre

_NL = 10
_MOST_LINES = 500  # past this many candidate lines, one search of the whole text
# categories a set may name that hold a line break
_NL_CATEGORIES = {_sre.CATEGORY_SPACE, _sre.CATEGORY_NOT_DIGIT, _sre.CATEGORY_NOT_WORD,
                  _sre.CATEGORY_LINEBREAK, _sre.CATEGORY_UNI_SPACE,
                  _sre.CATEGORY_UNI_NOT_DIGIT, _sre.CATEGORY_UNI_NOT_WORD,
                  _sre.CATEGORY_UNI_LINEBREAK}
_REPEATS = {_sre.MAX_REPEAT, _sre.MIN_REPEAT, getattr(_sre, "POSSESSIVE_REPEAT", None)}


def _set_has_newline(items: list[tuple[Any, Any]]) -> bool:
    negate = bool(items) and items[0][0] is _sre.NEGATE
    inside = False
    for op, av in items[1:] if negate else items:
        if op not in (_sre.LITERAL, _sre.RANGE, _sre.CATEGORY):
            return True  # a set item not read here: assume the worst
        inside = inside or bool(
            (op is _sre.LITERAL and av == _NL) or (op is _sre.RANGE and av[0] <= _NL <= av[1])
            or (op is _sre.CATEGORY and av in _NL_CATEGORIES))
    return not inside if negate else inside


def _local(items: Any, dotall: bool, multiline: bool) -> bool:
    """Whether no element of ``items`` can match a line break or needs the text's ends."""
    for op, av in items:
        if op is _sre.LITERAL:
            if av == _NL:
                return False
        elif op is _sre.NOT_LITERAL:
            if av != _NL:
                return False
        elif op is _sre.IN:
            if _set_has_newline(av):
                return False
        elif op is _sre.ANY:
            if dotall:
                return False
        elif op is _sre.AT:
            if av in (_sre.AT_BEGINNING_STRING, _sre.AT_END_STRING):
                return False
            if av in (_sre.AT_BEGINNING, _sre.AT_END) and not multiline:
                return False
        elif op is _sre.SUBPATTERN:
            _group, add, remove, sub = av
            d = (dotall or bool(add & re.S)) and not remove & re.S
            m = (multiline or bool(add & re.M)) and not remove & re.M
            if not _local(sub, d, m):
                return False
        elif op is _sre.BRANCH:
            if not all(_local(b, dotall, multiline) for b in av[1]):
                return False
        elif op in _REPEATS:
            if not _local(av[2], dotall, multiline):
                return False
        elif op in (_sre.ASSERT, _sre.ASSERT_NOT):
            if not _local(av[1], dotall, multiline):
                return False
        elif op is getattr(_sre, "ATOMIC_GROUP", None):
            if not _local(av, dotall, multiline):
                return False
        elif op is _sre.GROUPREF_EXISTS:
            _group, yes, no = av
            if not _local(yes, dotall, multiline) or (no is not None
                                                      and not _local(no, dotall, multiline)):
                return False
        elif op in (_sre.GROUPREF, _sre.CATEGORY):
            if op is _sre.CATEGORY and av in _NL_CATEGORIES:
                return False
        else:
            return False  # an element not read here: search the whole text
    return True


@functools.cache
def line_needles(pattern: str, flags: int) -> tuple[str, ...]:
    """Lower-case literals one of which every match holds, when every match lies in one line;
    () when either is not known (then the whole text is searched)."""
    try:
        tree = _sre.parse(pattern, flags)
    except re.error:
        return ()
    if not _local(tree, bool(tree.state.flags & re.S), bool(tree.state.flags & re.M)):
        return ()
    # needles_of reads each top-level branch alone and without the flags: a verbose pattern's
    # spaces would count as literals, and a branch naming a group of another does not parse
    by_branch: tuple[str, ...] = ()
    if not tree.state.flags & re.X:
        try:
            by_branch = needles_of(pattern)
        except re.error:
            by_branch = ()
    needles = by_branch or _required(list(tree)) or ()
    return needles if all(n.isascii() and "\n" not in n for n in needles) else ()


def _required(items: list[tuple[Any, Any]]) -> tuple[str, ...] | None:
    """Literals (lower-case) one of which every match of the sequence ``items`` holds: a run
    of literals in it, or one from each alternative of a group in it; None when none is known.
    Of several, the set whose shortest literal is longest."""
    options: list[tuple[str, ...]] = []
    run: list[str] = []
    for op, av in [*items, (None, None)]:
        if op is _sre.LITERAL:
            run.append(chr(av))
            continue
        if run:
            options.append(("".join(run).lower(),))
            run = []
        branch = None
        if op is _sre.BRANCH:
            branch = av[1]
        elif op is _sre.SUBPATTERN:
            sub = list(av[3])
            if len(sub) == 1 and sub[0][0] is _sre.BRANCH:
                branch = sub[0][1][1]
            elif (got := _required(sub)) is not None:
                options.append(got)
        if branch is not None:
            each = [_required(list(b)) for b in branch]
            if all(e is not None for e in each):
                options.append(tuple(dict.fromkeys(n for e in each if e for n in e)))
    options = [o for o in options if o and min(len(n.strip()) for n in o) >= MIN_NEEDLE]
    return max(options, key=lambda o: min(len(n) for n in o)) if options else None


_CASELESS = re.compile(r"\(\?[aiLmsux]*i")


class Lines:
    """A text and, made once on first need, its lower-cased copy."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._lower: str | None = None

    @property
    def lower(self) -> str | None:
        """The lower-cased text when it keeps every position (no character changes length in
        lower-casing: 'İ' becomes two), else None."""
        if self._lower is None:
            low = self.text.lower()
            self._lower = low if len(low) == len(self.text) else ""
        return self._lower or None

    def search(self, rx: re.Pattern[str]) -> re.Match[str] | None:
        """``rx.search(self.text)``, trying only the lines that can hold a match."""
        needles = line_needles(rx.pattern, rx.flags)
        if needles and (rx.flags & re.I or _CASELESS.search(rx.pattern)) and not \
                self.text.isascii():
            # a case-insensitive match of 's' may be 'ſ', which lower-cases to itself
            needles = ()
        low = self.lower if needles else None
        if not needles or low is None:
            return rx.search(self.text)
        text = self.text
        starts: set[int] = set()
        for needle in needles:
            at = low.find(needle)
            while at >= 0:
                if len(starts) > _MOST_LINES:  # a common literal: one search costs less
                    return rx.search(text)
                start = text.rfind("\n", 0, at) + 1
                starts.add(start)
                end = text.find("\n", at)
                if end < 0:
                    break
                at = low.find(needle, end + 1)
        for start in sorted(starts):
            end = text.find("\n", start)
            m = rx.search(text, start, end if end >= 0 else len(text))
            if m is not None:
                return m
        return None


def literal_lines(text: str, literals: tuple[str, ...]) -> list[tuple[int, int]]:
    """(start, end) of each line of ``text`` that holds one of ``literals`` (case as written),
    in text order, each line once. A reader whose pattern matches only inside one line and
    only with one of the literals in the match searches just these lines: an alternation or a
    leading ``\\b`` gives the engine no literal to skip to, so it tries every position of the
    whole text (4 ms on a 10,000-line log), where ``str.find`` skips to the literal."""
    starts: set[int] = set()
    for literal in literals:
        at = text.find(literal)
        while at >= 0:
            start = text.rfind("\n", 0, at) + 1
            starts.add(start)
            end = text.find("\n", at)
            if end < 0:
                break
            at = text.find(literal, end + 1)
    spans = []
    for start in sorted(starts):
        end = text.find("\n", start)
        spans.append((start, end if end >= 0 else len(text)))
    return spans


def finditer_lines(rx: re.Pattern[str], text: str,
                   literals: tuple[str, ...]) -> list[re.Match[str]]:
    """``list(rx.finditer(text))`` for a pattern whose every match lies inside one line and
    holds one of ``literals``: the same matches, in order, from the lines that hold one."""
    return [m for start, end in literal_lines(text, literals)
            for m in rx.finditer(text, start, end)]


def search_lines(rx: re.Pattern[str], text: str,
                 literals: tuple[str, ...]) -> re.Match[str] | None:
    """``rx.search(text)`` under the same condition as ``finditer_lines``."""
    for start, end in literal_lines(text, literals):
        if (m := rx.search(text, start, end)) is not None:
            return m
    return None
