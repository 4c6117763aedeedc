"""Just enough of PEP 440 specifiers to test pip's ``[and-cuda]`` pins offline.

The pins are simple (``==12.2.5.6``, ``>=12.5.3.2,<13.0``); ``packaging`` is not a
dependency of the base install, so this small matcher covers ==, !=, <, <=, >, >=, ~= and
``==X.*``.
"""

from __future__ import annotations

import re

from tfperf.doctor import versions as V

_CLAUSE = re.compile(r"^\s*(~=|==|!=|<=|>=|<|>)\s*([0-9][0-9A-Za-z.*+-]*)\s*$")


def satisfies(version: str, specifier: str) -> bool | None:
    """True/False, or None when the specifier or version cannot be read."""
    have = V.try_parse(version)
    if have is None:
        return None
    for clause in filter(None, (c.strip() for c in specifier.split(","))):
        m = _CLAUSE.match(clause)
        if not m:
            return None
        op, text = m.groups()
        if text.endswith(".*"):
            prefix = V.try_parse(text[:-2])
            if prefix is None or op not in ("==", "!="):
                return None
            ok = V.same_prefix(have, prefix)
            if (op == "==") != ok:
                return False
            continue
        want = V.try_parse(text)
        if want is None:
            return None
        c = V.compare(have, want)
        if op == "~=":
            ok = c >= 0 and V.same_prefix(have, want[:-1] if len(want) > 1 else want)
        else:
            ok = {"==": c == 0, "!=": c != 0, "<": c < 0, "<=": c <= 0, ">": c > 0,
                  ">=": c >= 0}[op]
        if not ok:
            return False
    return True
