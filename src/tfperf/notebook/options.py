"""Options of a magic line: ``-n 10 -q --budget 2 STATEMENT``, the way ``%timeit`` reads them.

Options come first; the first word that is not a known option starts the statement, which is
kept as typed (spaces, quotes and all). ``--`` ends the options. A magic whose statements may
come before its options (``%tfcompare a(x) b(x) --baseline a``) splits the line into
top-level words first (:func:`split_words`): brackets and strings hold their spaces.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tfperf.notebook.errors import MagicError


@dataclass(frozen=True)
class Option:
    names: tuple[str, ...]    # ("-n",) or ("--budget",) or ("-c", "--capture")
    key: str                  # the attribute of the parsed result
    kind: type = bool         # bool: a flag; int / float / str: takes a value
    help: str = ""

    def convert(self, magic: str, raw: str) -> Any:
        try:
            value = self.kind(raw)
        except ValueError:
            what = {int: "a whole number", float: "a number"}.get(self.kind, "a value")
            raise MagicError(magic, f"{self.names[0]} wants {what}, not {raw!r}") from None
        if self.kind in (int, float) and value <= 0:
            raise MagicError(magic, f"{self.names[0]} must be positive, not {raw}")
        return value


def usage(magic: str, options: tuple[Option, ...], tail: str) -> str:
    parts = []
    for o in options:
        name = o.names[0]
        parts.append(f"[{name}]" if o.kind is bool else f"[{name} {o.key.upper()}]")
    return f"%{magic} {' '.join(parts)} {tail}".strip()


def _find(options: tuple[Option, ...], word: str) -> tuple[Option | None, str | None]:
    """The option ``word`` names, and its attached value (``-n5``, ``--budget=2``)."""
    name, eq, value = word.partition("=")
    for o in options:
        if name in o.names and word.startswith("--"):
            return o, value if eq else None
        if word in o.names:
            return o, None
        short = [n for n in o.names if len(n) == 2]
        if short and word.startswith(short[0]) and len(word) > 2 and o.kind is not bool:
            return o, word[2:]
    return None, None


def _looks_like_option(word: str) -> bool:
    return word.startswith("-") and len(word) > 1 and (word[1].isalpha() or word[1] == "-")


def parse_leading(magic: str, line: str, options: tuple[Option, ...],
                  tail: str) -> tuple[dict[str, Any], str]:
    """Options at the start of ``line`` → (values by key, the rest of the line as typed)."""
    values: dict[str, Any] = {o.key: (False if o.kind is bool else None) for o in options}
    pos = 0
    while True:
        while pos < len(line) and line[pos].isspace():
            pos += 1
        end = pos
        while end < len(line) and not line[end].isspace():
            end += 1
        word = line[pos:end]
        if word == "--":
            return values, line[end:].strip()
        if not _looks_like_option(word):
            return values, line[pos:].strip()
        opt, attached = _find(options, word)
        if opt is None:
            raise MagicError(magic, f"unknown option {word}; usage: "
                                    f"{usage(magic, options, tail)}")
        pos = end
        if opt.kind is bool:
            values[opt.key] = True
            continue
        if attached is None:
            while pos < len(line) and line[pos].isspace():
                pos += 1
            end = pos
            while end < len(line) and not line[end].isspace():
                end += 1
            attached = line[pos:end]
            pos = end
            if not attached:
                raise MagicError(magic, f"{word} wants a value; usage: "
                                        f"{usage(magic, options, tail)}")
        values[opt.key] = opt.convert(magic, attached)


def split_words(line: str, separators: str = "") -> list[str]:
    """Split at whitespace outside brackets and string literals; each character of
    ``separators`` found there is a word of its own (``%tfcompare a(x); b(x)``)."""
    words: list[str] = []
    current: list[str] = []
    depth = 0
    quote: str | None = None
    i = 0
    while i < len(line):
        c = line[i]
        if quote:
            current.append(c)
            if c == "\\" and i + 1 < len(line):
                current.append(line[i + 1])
                i += 2
                continue
            if line.startswith(quote, i):
                current.extend(quote[1:])
                i += len(quote)
                quote = None
                continue
        elif c in "\"'":
            quote = line[i:i + 3] if line[i:i + 3] in ('"""', "'''") else c
            current.append(quote)
            i += len(quote)
            continue
        elif c in "([{":
            depth += 1
            current.append(c)
        elif c in ")]}":
            depth = max(0, depth - 1)
            current.append(c)
        elif (c.isspace() or c in separators) and depth == 0:
            if current:
                words.append("".join(current))
                current = []
            if c in separators:
                words.append(c)
        else:
            current.append(c)
        i += 1
    if current:
        words.append("".join(current))
    return words


def parse_anywhere(magic: str, words: list[str], options: tuple[Option, ...],
                   tail: str) -> tuple[dict[str, Any], list[str]]:
    """Options anywhere among ``words`` → (values by key, the other words in order)."""
    values: dict[str, Any] = {o.key: (False if o.kind is bool else None) for o in options}
    rest: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        i += 1
        if not _looks_like_option(word):
            rest.append(word)
            continue
        opt, attached = _find(options, word)
        if opt is None:
            raise MagicError(magic, f"unknown option {word}; usage: "
                                    f"{usage(magic, options, tail)}")
        if opt.kind is bool:
            values[opt.key] = True
            continue
        if attached is None:
            if i >= len(words):
                raise MagicError(magic, f"{word} wants a value; usage: "
                                        f"{usage(magic, options, tail)}")
            attached = words[i]
            i += 1
        values[opt.key] = opt.convert(magic, attached)
    return values, rest
