"""Read Python 2 source (TF 1.x research code) as Python 3 without moving any code.

When ``ast.parse`` fails, :func:`normalise` rewrites a copy of the text for the common
Python 2 forms, each in place, so every line keeps its number and every token not rewritten
keeps its column (at most the rest of a rewritten line moves right):

- ``print x, y`` and ``print >>f, x`` → ``print(x, y)``, ``print(  f, x)`` (a ``)`` added
  after the statement's last token);
- ``exec code in g`` → ``exec(code,   g)``;
- ``raise E, "msg"`` → ``raise E( "msg")``;
- ``except E, e:`` → ``except E as e:``;
- backticks `` `x` `` → ``(x)``;
- ``0777`` → `` 511`` and ``10L`` → ``10 `` (the same value, padded);
- ``ur'...'`` → `` r'...'``; ``<>`` → ``!=``.

The user's file is never rewritten: the copy exists only to be parsed. ``None`` when the text
holds none of these forms or cannot be tokenised.
"""

from __future__ import annotations

import io
import keyword
import tokenize
from dataclasses import dataclass

NOTE = ("read as Python 2 source (print statements and the like normalised in a copy; "
        "the file is unchanged)")

# Tokens after which a NAME starts a statement.
_STATEMENT_START = frozenset({tokenize.NEWLINE, tokenize.NL, tokenize.INDENT,
                              tokenize.DEDENT})
_SKIP = frozenset({tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT,
                   tokenize.DEDENT, tokenize.ENDMARKER})


@dataclass(frozen=True)
class _Edit:
    line: int  # 1-based
    col: int
    length: int  # characters replaced
    text: str


def normalise(source: str) -> str | None:
    """A copy of ``source`` with the Python 2 forms above rewritten in place, or ``None``
    where there is nothing to rewrite (or the text cannot be tokenised)."""
    try:
        tokens = [t for t in tokenize.generate_tokens(io.StringIO(source).readline)
                  if t.type != tokenize.ERRORTOKEN or t.string.strip()]
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None
    edits = _edits(tokens)
    if not edits:
        return None
    return _apply(source, edits)


def _edits(tokens: list[tokenize.TokenInfo]) -> list[_Edit]:
    edits: list[_Edit] = []
    backtick_open = False
    for i, tok in enumerate(tokens):
        prev = tokens[i - 1] if i else None
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        if tok.type == tokenize.ERRORTOKEN and tok.string == "`":
            edits.append(_Edit(*tok.start, 1, ")" if backtick_open else "("))
            backtick_open = not backtick_open
        elif tok.type == tokenize.NUMBER and nxt is not None and _touching(tok, nxt):
            edits.extend(_number_edits(tok, nxt))
        elif (tok.type == tokenize.OP and tok.string == "<" and nxt is not None
              and nxt.string == ">" and _touching(tok, nxt)):
            edits.append(_Edit(*tok.start, 2, "!="))
        elif (tok.type == tokenize.NAME and tok.string.lower() == "ur" and nxt is not None
              and nxt.type == tokenize.STRING and _touching(tok, nxt)):
            edits.append(_Edit(*tok.start, 2, " r"))
        elif tok.type == tokenize.NAME and _starts_statement(prev):
            edits.extend(_statement_edits(tokens, i))
    return edits


def _touching(a: tokenize.TokenInfo, b: tokenize.TokenInfo) -> bool:
    return a.end == b.start


def _number_edits(tok: tokenize.TokenInfo, nxt: tokenize.TokenInfo) -> list[_Edit]:
    """``0777`` (tokenised as ``0`` then ``777``) and ``10L`` (``10`` then the name ``L``)."""
    if nxt.type == tokenize.NAME and nxt.string in ("L", "l"):
        return [_Edit(*nxt.start, 1, " ")]
    if (tok.string == "0" and nxt.type == tokenize.NUMBER and nxt.string.isdigit()
            and set(nxt.string) <= set("01234567")):
        value = str(int(nxt.string, 8))
        width = 1 + len(nxt.string)
        return [_Edit(*tok.start, width, value.rjust(width))]
    return []


def _starts_statement(prev: tokenize.TokenInfo | None) -> bool:
    return prev is None or prev.type in _STATEMENT_START or (
        prev.type == tokenize.OP and prev.string in (";", ":"))


def _statement_edits(tokens: list[tokenize.TokenInfo], i: int) -> list[_Edit]:
    tok = tokens[i]
    nxt = tokens[i + 1] if i + 1 < len(tokens) else None
    if nxt is None:
        return []
    if tok.string == "except":
        return _except_edits(tokens, i)
    if tok.string in ("print", "exec"):
        if nxt.type == tokenize.OP and nxt.string in ("(", "=", ".", "[", ")", ",", ":"):
            return []  # already a call, or the name used as a value
        if nxt.type in _SKIP or (nxt.type == tokenize.OP and nxt.string == ";"):
            return [_Edit(*tok.end, 0, "()")]
        if nxt.type == tokenize.NAME and keyword.iskeyword(nxt.string) \
                and nxt.string not in ("not", "lambda", "None", "True", "False"):
            return []
        end = _statement_end(tokens, i + 1)
        # The blank after the keyword becomes the parenthesis (``print"x"`` has none).
        edits = [_Edit(*tok.end, 0 if tok.end == nxt.start else 1, "(")]
        if tok.string == "print" and nxt.string == ">>":
            # ``print>>f``: no blank, so the ``>>`` itself becomes the parenthesis (two
            # edits at one column would overwrite each other)
            edits = [_Edit(*nxt.start, 2, "( ")] if tok.end == nxt.start \
                else [*edits, _Edit(*nxt.start, 2, "  ")]
        if tok.string == "exec":
            edits.extend(_Edit(*t.start, 2, ", ") for t in _depth0(tokens, i + 1, end)
                         if t.type == tokenize.NAME and t.string == "in")
        edits.append(_Edit(*tokens[end - 1].end, 0, ")"))
        return edits
    if tok.string == "raise":
        end = _statement_end(tokens, i + 1)
        commas = [t for t in _depth0(tokens, i + 1, end)
                  if t.type == tokenize.OP and t.string == ","]
        if not commas:
            return []
        return [_Edit(*commas[0].start, 1, "("), _Edit(*tokens[end - 1].end, 0, ")")]
    return []


def _except_edits(tokens: list[tokenize.TokenInfo], i: int) -> list[_Edit]:
    """``except E, e:`` → ``except E as e:`` (a tuple in parentheses is left alone)."""
    end = _statement_end(tokens, i + 1, stop_at_colon=True)
    commas = [t for t in _depth0(tokens, i + 1, end)
              if t.type == tokenize.OP and t.string == ","]
    if len(commas) != 1:
        return []
    comma = commas[0]
    after = tokens[tokens.index(comma) + 1]
    return [_Edit(*comma.start, after.start[1] - comma.start[1] if after.start[0]
                  == comma.start[0] else 1, " as ")]


def _statement_end(tokens: list[tokenize.TokenInfo], start: int,
                   stop_at_colon: bool = False) -> int:
    """Index one past the statement's last significant token at bracket depth 0."""
    depth = 0
    last = start
    for j in range(start, len(tokens)):
        t = tokens[j]
        if t.type == tokenize.OP:
            if t.string in "([{":
                depth += 1
            elif t.string in ")]}":
                depth -= 1
            elif depth == 0 and (t.string == ";" or (stop_at_colon and t.string == ":")):
                return j
        if t.type in (tokenize.NEWLINE, tokenize.ENDMARKER) and depth <= 0:
            return last + 1
        if t.type not in _SKIP:
            last = j
    return last + 1


def _depth0(tokens: list[tokenize.TokenInfo], start: int, end: int
            ) -> list[tokenize.TokenInfo]:
    out = []
    depth = 0
    for t in tokens[start:end]:
        if t.type == tokenize.OP and t.string in "([{":
            depth += 1
        elif t.type == tokenize.OP and t.string in ")]}":
            depth -= 1
        elif depth == 0:
            out.append(t)
    return out


def _apply(source: str, edits: list[_Edit]) -> str:
    lines = source.splitlines(keepends=True)
    # Right to left on each line, so an edit never moves the ones still to apply.
    for e in sorted(edits, key=lambda e: (e.line, e.col), reverse=True):
        if not 1 <= e.line <= len(lines):
            continue
        line = lines[e.line - 1]
        lines[e.line - 1] = line[:e.col] + e.text + line[e.col + e.length:]
    return "".join(lines)
