"""Why code that does not parse here may be valid: syntax of a newer Python.

tfperf reads code with the ``ast`` of the Python it runs on. Code written for a newer Python
fails there with a message about something else (on 3.11, ``f"{x["a"]}"`` reads as
``f-string: unmatched '['``). When the failing line holds a construct only a newer Python
parses, or a notebook's kernel says it ran a newer Python, TFP000 says which Python the code
needs instead. The constructs (each checked only where the running Python lacks it):

- 3.12, PEP 701: an f-string whose replacement field holds its own quote, a backslash, a
  comment, or (in a one-quote f-string) a line break; so also nested f-strings in the same
  quotes;
- 3.12, PEP 695: type parameters (``def f[T](x: T)``, ``class C[T]:``) and ``type X = ...``;
- 3.14, PEP 758: ``except A, B:`` without parentheses;
- 3.14, PEP 750: template strings (``t"..."``).
"""

from __future__ import annotations

import io
import re
import sys
import tokenize
from collections.abc import Iterator

Version = tuple[int, int]
RUNNING: Version = (sys.version_info[0], sys.version_info[1])

# Python 2's `except ValueError, e:` binds a name; PEP 758 lists classes, which are CapWords:
# a last item in lower case is the Python 2 binding, not newer syntax.
_PY2_EXCEPT_BINDING = re.compile(r"^\s*except\s+[^:]+,\s*[a-z_][a-z0-9_]*\s*:")
_TYPE_STATEMENT = re.compile(r"^\s*type\s+[A-Za-z_]\w*\s*(\[.*\])?\s*=")
_TYPE_PARAMS = re.compile(r"^\s*(?:(?:async\s+)?def|class)\s+[A-Za-z_]\w*\s*\[")
_T_PREFIXES = frozenset({"t", "tr", "rt"})
_STRING_PREFIXES = frozenset({"", "r", "u", "b", "br", "rb", "f", "fr", "rf", "t", "tr", "rt"})


def show(version: Version) -> str:
    return f"{version[0]}.{version[1]}"


def newer_syntax(source: str, exc: SyntaxError,
                 running: Version = RUNNING) -> tuple[Version, str] | None:
    """(the Python that parses it, the feature) for a construct on the line ``exc`` points
    at that only a Python newer than ``running`` parses; ``None`` if there is none."""
    line_no = exc.lineno or 0
    lines = source.splitlines()
    line = lines[line_no - 1] if 1 <= line_no <= len(lines) else (exc.text or "")
    if running < (3, 12):
        if any(start <= line_no <= end for start, end in pep701_fstrings(source)):
            return (3, 12), "PEP 701 f-string"
        if _TYPE_STATEMENT.match(line):
            return (3, 12), "PEP 695 type statement"
        if _TYPE_PARAMS.match(line):
            return (3, 12), "PEP 695 type parameters"
    if running < (3, 14):
        if (exc.msg or "").startswith("multiple exception types must be parenthesized") \
                and " as " not in line and not _PY2_EXCEPT_BINDING.match(line):
            return (3, 14), "PEP 758 except without parentheses"
        if _template_string(line):
            return (3, 14), "PEP 750 template string"
    return None


def reason(source: str, exc: SyntaxError, kernel: Version | None = None,
           running: Version = RUNNING) -> str | None:
    """What TFP000 should say instead of ``exc``'s bare message when the code is for a newer
    Python than ``running`` (``kernel``: the Python a notebook's metadata says it ran on);
    ``None`` when nothing points to a newer Python."""
    found = newer_syntax(source, exc, running)
    ran = f"the notebook's kernel is Python {show(kernel)}" \
        if kernel is not None and kernel > running else ""
    if found is not None:
        version, feature = found
        return (f"needs Python {show(version)} or newer ({feature}"
                f"{'; ' + ran if ran else ''}); tfperf runs on {show(running)}")
    if ran:
        return (f"{exc.msg} on Python {show(running)}, which tfperf runs on; {ran}, whose "
                "syntax may be newer")
    return None


def hint(running: Version = RUNNING) -> str:
    return (f"tfperf reads code with the Python it runs on ({show(running)}): run it on the "
            "Python the code is written for to lint this")


def _template_string(line: str) -> bool:
    """Whether ``line`` holds ``t"..."`` (a name ``t``/``tr``/``rt`` glued to a string)."""
    previous = None
    try:
        for tok in tokenize.generate_tokens(io.StringIO(line + "\n").readline):
            if tok.type == tokenize.STRING and previous is not None \
                    and previous.type == tokenize.NAME and previous.end == tok.start \
                    and previous.string.lower() in _T_PREFIXES:
                return True
            previous = tok
    except (tokenize.TokenError, SyntaxError):
        pass
    return False


def pep701_fstrings(source: str) -> list[tuple[int, int]]:
    """(first line, last line) of each f-string that only PEP 701 (Python 3.12) parses."""
    found = []
    newlines = [i for i, c in enumerate(source) if c == "\n"]

    def line_of(offset: int) -> int:
        import bisect

        return bisect.bisect_left(newlines, offset) + 1

    for start, end in _Scanner(source).pep701():
        found.append((line_of(start), line_of(end)))
    return found


class _Broken(Exception):
    """The f-string is not valid on Python 3.12 either (unterminated, brackets that do not
    match): it does not count as PEP 701 syntax."""


class _Scanner:
    """A light tokenizer that reads strings, comments and f-strings as Python 3.12 does."""

    def __init__(self, source: str) -> None:
        self.s = source
        self.n = len(source)

    def pep701(self) -> Iterator[tuple[int, int]]:
        """(start, end) offsets of top-level f-strings using PEP 701 syntax."""
        i = 0
        while i < self.n:
            c = self.s[i]
            if c == "#":
                i = self._line_end(i)
            elif c in "'\"":
                start = self._prefix_start(i)
                try:
                    end, new = self._string(i, self.s[start:i].lower())
                except _Broken:
                    i = self._line_end(i)
                    continue
                if new:
                    yield start, end
                i = end
            else:
                i += 1

    def _line_end(self, i: int) -> int:
        j = self.s.find("\n", i)
        return self.n if j < 0 else j

    def _prefix_start(self, i: int) -> int:
        """Where the string prefix (``rb``, ``f``...) before the quote at ``i`` begins."""
        j = i
        while j > 0 and self.s[j - 1].isalpha() and i - j < 2:
            j -= 1
        if self.s[j:i].lower() not in _STRING_PREFIXES or (j > 0 and (
                self.s[j - 1].isalnum() or self.s[j - 1] == "_")):
            return i  # a name glued to a string is no prefix
        return j

    def _string(self, i: int, prefix: str) -> tuple[int, bool]:
        """Read the string whose quote is at ``i`` → (offset after it, uses PEP 701);
        :class:`_Broken` if it does not end."""
        quote = self.s[i:i + 3] if self.s[i:i + 3] in ('"""', "'''") else self.s[i]
        i += len(quote)
        fstring = "f" in prefix
        new = False
        while i < self.n:
            c = self.s[i]
            if self.s.startswith(quote, i):
                return i + len(quote), new
            if c == "\\":
                i += 2
            elif c == "\n" and len(quote) == 1:
                break
            elif fstring and c == "{":
                if self.s.startswith("{{", i):
                    i += 2
                else:
                    i, found = self._field(i + 1, quote)
                    new = new or found
            else:
                i += 1
        raise _Broken

    def _field(self, i: int, quote: str) -> tuple[int, bool]:
        """Read a replacement field's expression from ``i`` → (offset after its ``}``, uses
        PEP 701: the enclosing quote, a backslash, a comment, a line break in one quote)."""
        opened: list[str] = []
        new = False
        while i < self.n:
            c = self.s[i]
            if c in "([{":
                opened.append(c)
            elif c in ")]}" and opened:
                if opened.pop() != {")": "(", "]": "[", "}": "{"}[c]:
                    raise _Broken
            elif c == "}":
                return i + 1, new
            elif c in ")]":
                raise _Broken
            elif c == ":" and not opened:  # the format spec: text with fields of its own
                return self._spec(i + 1, quote, new)
            elif c in "'\"":
                start = self._prefix_start(i)
                new = new or self.s.startswith(quote, i)  # it would end the f-string on 3.11
                end, found = self._string(i, self.s[start:i].lower())
                new = new or found or "\\" in self.s[i:end]
                i = end
                continue
            elif c == "\\":
                new = True
            elif c == "#":
                new = True
                i = self._line_end(i)
                continue
            elif c == "\n" and len(quote) == 1:
                new = True
            i += 1
        raise _Broken

    def _spec(self, i: int, quote: str, new: bool) -> tuple[int, bool]:
        while i < self.n:
            c = self.s[i]
            if c == "}":
                return i + 1, new
            if self.s.startswith(quote, i) or (c == "\n" and len(quote) == 1):
                raise _Broken
            if c == "{":
                i, found = self._field(i + 1, quote)
                new = new or found
                continue
            i += 1
        raise _Broken
