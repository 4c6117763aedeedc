"""A loop adding to several totals as one loop per total (issue 26; held-out round 5's c02 adds
each window's padded predictions to one total and its padded count of ones to another): each
new loop holds only the statements its term needs, so each is a loop the loop model reads
(one associative accumulation), for every loop lever alike.
"""

from __future__ import annotations

import ast

from tfperf.tune.iterations import text_of
from tfperf.tune.source import (
    SourceEditError,
    find_function,
    names_in,
    parse,
    replace_nodes,
    stmt_text,
    sum_of,
)


def _split(text: str, fn: ast.FunctionDef, loop: ast.For) -> str | None:
    """The text of one loop per total for ``loop`` (None if it is not a loop of sums only)."""
    if loop.orelse:
        return None
    sums: list[tuple[str, ast.stmt, ast.expr]] = []
    assigns: list[ast.Assign] = []
    for s in loop.body:
        got = sum_of(s)
        if got is not None:
            sums.append((got[0], s, got[1]))
        elif isinstance(s, ast.Assign) and all(isinstance(t, ast.Name) for t in s.targets):
            assigns.append(s)
        else:
            return None
    totals = [t for t, _, _ in sums]
    if len(sums) < 2 or len(set(totals)) != len(totals):
        return None
    stored = {t.id for s in assigns for t in s.targets if isinstance(t, ast.Name)}
    if stored & set(totals) or any(set(totals) & names_in(s.value) for s in assigns) \
            or any(set(totals) & names_in(term) for _, _, term in sums):
        return None
    block = next((b for n in ast.walk(fn) for f in ("body", "orelse", "finalbody")
                  for b in [getattr(n, f, None)] if isinstance(b, list) and loop in b), None)
    if block is None:
        return None
    after = {n.id for s in block[block.index(loop) + 1:] for n in ast.walk(s)
             if isinstance(n, ast.Name)}
    if (names_in(loop.target) | stored) & after:
        return None
    pad = " " * loop.col_offset
    head = f"for {text_of(text, loop.target)} in {text_of(text, loop.iter)}:"
    out = []
    for _, stmt, term in sums:
        need = names_in(term)
        body = [stmt_text(text, stmt)]
        for s in reversed(loop.body[:loop.body.index(stmt)]):
            if isinstance(s, ast.Assign) and need & {t.id for t in s.targets
                                                      if isinstance(t, ast.Name)}:
                body.insert(0, stmt_text(text, s))
                need |= names_in(s.value)
        out.append(("\n" + pad).join([head] + ["    " + r for b in body
                                                for r in b.splitlines()]))
    return ("\n" + pad).join(out)


def split_sums(text: str, name: str) -> str:
    """Every ``for`` loop of ``name`` whose body adds to several totals (and assigns what the
    terms need) as one loop per total."""
    try:
        fn = find_function(parse(text), name)
    except SourceEditError:
        return text
    for loop in ast.walk(fn):
        if isinstance(loop, ast.For):
            new = _split(text, fn, loop)
            if new is not None:
                return split_sums(replace_nodes(text, [(loop, new)]), name)
    return text
