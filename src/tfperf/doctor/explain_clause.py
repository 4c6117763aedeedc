"""The floor reads the error message's own clause.

When no row explains an error, the floor ranks the usual causes of its class. The message itself
often says more than its class: a size of 0, a tag or key that is missing (and the ones that
exist), a field the tool does not know, "expected X, got Y", a source file of a component (XLA,
Grappler) in a CHECK. ``data/clause_causes.csv`` holds these readings, each a regex over the
message and its lines, whatever the class; ``{name}`` in a cause or fix is filled from the
regex's named groups (``{match}``: the words matched), and a sentence whose group is empty is
left out. A reading of rank ``first`` comes before the class's own ranked causes (the clause
names the cause: a 0 size, a missing tag); ``after-class`` after the class's regex hits and
before its generic causes ("expected X, got Y" is true of many messages a class row reads
better).
"""

from __future__ import annotations

import functools
import re

_SENTENCE = r"[^.]*\{%s\}[^.]*\.?"


@functools.cache
def _rows() -> tuple[tuple[re.Pattern[str], str, str, str], ...]:
    from tfperf.doctor.knowledge.tables import read_table

    return tuple((re.compile(r["when"], re.M), r["rank"], r["cause"], r["fix"])
                 for r in read_table("clause_causes.csv"))


def _fill(template: str, m: re.Match[str]) -> str:
    values = {k: (v or "").strip(" '\",") for k, v in m.groupdict().items()}
    values["match"] = " ".join(m.group(0).split())[:80]
    for name in [k for k, v in values.items() if not v and "{" + k + "}" in template]:
        template = re.sub(_SENTENCE % name, "", template).strip()
    return re.sub(r"\{(\w+)\}", lambda g: values.get(g.group(1), g.group(0)), template)


def clause_causes(text: str, rank: str) -> list[tuple[str, str]]:
    """(cause, fix) for each reading of ``data/clause_causes.csv`` of that rank the message's
    text meets, in the table's order."""
    out = []
    for rx, row_rank, cause, fix in _rows():
        if row_rank == rank and (m := rx.search(text)):
            filled = _fill(cause, m)
            if filled:  # every sentence named an empty group: the match said nothing
                out.append((filled, _fill(fix, m)))
    return out
