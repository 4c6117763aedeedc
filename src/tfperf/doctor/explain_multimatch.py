"""Every knowledge row's needles found in one pass over a log's distinct line keys.

The explainer's candidate lookup (``explainer._candidates``) needs, for each distinct line key,
the rows one of whose needles it holds. Its pure-Python word index reads each word of each
distinct line (some 100,000 on the benchmark's 10,000-line log) and scans the log's words once per
needle without inner words: 35-45 ms there, near the floor of what Python does per word. A
multi-pattern matcher (Aho-Corasick, the optional ``ahocorasick_rs`` package: ``pip install
tfperf[fast]``) finds all ~700 needles in one pass in compiled code, overlapping matches
included, so the rows are exactly those of testing every needle on every key.

Nothing here changes an answer: ``rows_by_key`` returns None when the package is missing or a
needle could match across keys (empty, or holding a line break), and the word index is used.
"""

from __future__ import annotations

import bisect
import functools
import importlib
import itertools
from typing import Any


def _matcher_module() -> Any:
    try:  # imported by name: the package is optional, and typed only where it is installed
        return importlib.import_module("ahocorasick_rs")
    except ImportError:
        return None


_AC = _matcher_module()


@functools.cache
def _matcher(row_needles: tuple[tuple[bytes, ...], ...]) -> tuple[Any, list[list[int]],
                                                                   list[int]] | None:
    """(matcher over the distinct needles, each needle's rows in order, rows with no needle),
    built once per table; None where a needle could match across two keys of the blob."""
    rows_of: dict[bytes, list[int]] = {}
    bare: list[int] = []
    for ri, needles in enumerate(row_needles):
        if not needles:
            bare.append(ri)
        for needle in needles:
            rows_of.setdefault(needle, []).append(ri)
    if any(not n or b"\n" in n for n in rows_of):
        return None
    return _AC.BytesAhoCorasick(list(rows_of)), list(rows_of.values()), bare


def rows_by_key(keys: list[bytes], row_needles: tuple[tuple[bytes, ...], ...]
                ) -> dict[int, list[int]] | None:
    """key index → the rows (in order) one of whose needles the key holds, for keys without a
    line break; None when the matcher is not there (the caller's word index answers then)."""
    if _AC is None or not keys:
        return None
    built = _matcher(row_needles)
    if built is None:
        return None
    matcher, needle_rows, bare = built
    blob = b"\n".join(keys)
    starts = list(itertools.accumulate((len(k) + 1 for k in keys[:-1]), initial=0))
    needles_in: dict[int, set[int]] = {}
    for ni, start, _ in matcher.find_matches_as_indexes(blob, overlapping=True):
        # a needle holds no line break, so a match lies inside the key it starts in
        needles_in.setdefault(bisect.bisect_right(starts, start) - 1, set()).add(ni)
    out = {ki: sorted({ri for ni in nis for ri in needle_rows[ni]}.union(bare))
           for ki, nis in needles_in.items()}
    if bare:  # a row with no needle is tried on every line (no row has none today)
        for ki in range(len(keys)):
            out.setdefault(ki, list(bare))
    return out
