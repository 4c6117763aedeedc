"""Each rule's precision as judged on code no one here wrote: every default finding on the
user-style corpus (``benchmarks/lint_fixes/judged.csv``, the code the rules were tuned on) and
on held-out repositories (``heldout*_judged.csv``, judged before any rule was changed for
them), each true, true-but-minor or false, summed per rule into the package data file
``precision.json`` by ``benchmarks/lint_fixes/judge.py score --write``. ``tfperf rule CODE``
shows both; the rule groups rest on them (docs/lint.md)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

# The rounds of code searched out for the rules that seldom fire (precision.json's keys),
# each with its line in the rule's docs: a new round is one more entry here.
RARE_ROUNDS = (("rare", "on code searched out for it"),
               *((f"rare{n}", f"on code searched out for it, round {n}") for n in range(2, 6)))


@dataclass(frozen=True)
class Judged:
    true: int
    minor: int  # true but minor: one-off setup, a 3-iteration loop, a teaching demo
    false: int
    corpus: str = ""

    @property
    def total(self) -> int:
        return self.true + self.minor + self.false

    @property
    def precision(self) -> float:
        """Share of the judged findings that were true (minor ones included)."""
        return (self.true + self.minor) / self.total if self.total else 0.0

    def __str__(self) -> str:
        where = f" on {self.corpus}" if self.corpus else ""
        return (f"{self.true + self.minor}/{self.total} true or minor{where} "
                f"({self.true} true, {self.minor} minor, {self.false} false)")


def _rows(rules: dict, corpus: str) -> dict[str, Judged]:
    return {code: Judged(int(v.get("true", 0)), int(v.get("minor", 0)), int(v.get("false", 0)),
                         corpus) for code, v in rules.items()}


@lru_cache(maxsize=1)
def _tables() -> dict[str, dict[str, Judged]]:
    """``dev``, ``heldout`` (as judged, before any change for it), ``heldout_now``, apart
    ``library``, each of :data:`RARE_ROUNDS` as judged and ``<round>_now`` (code picked for
    the rules that seldom fire), and ``alone``
    (each rule linted alone on user-style code: as judged, ``alone_now``, ``alone_library``)."""
    try:
        text = resources.files("tfperf.lint").joinpath("precision.json").read_text("utf-8")
    except (FileNotFoundError, OSError):
        return {}
    data = json.loads(text)
    held = data.get("heldout", {})
    lib = data.get("library", {})
    alone = data.get("alone", {})
    return {"dev": _rows(data.get("rules", {}), data.get("corpus", "")),
            "heldout": _rows(held.get("judged", {}), held.get("corpus", "")),
            "heldout_now": _rows(held.get("now", {}), held.get("corpus", "")),
            "library": _rows(lib.get("judged", {}), lib.get("corpus", "")),
            **{f"{name}{now}": _rows(data.get(name, {}).get(key, {}),
                                     data.get(name, {}).get("corpus", ""))
               for name, _ in RARE_ROUNDS for now, key in (("", "judged"), ("_now", "now"))},
            "alone": _rows(alone.get("judged", {}), alone.get("corpus", "")),
            "alone_now": _rows(alone.get("now", {}), alone.get("corpus", "")),
            "alone_library": _rows(alone.get("library", {}), "library code")}


def measured(code: str) -> Judged | None:
    """The judgement of ``code``'s findings on the development corpus, or ``None``."""
    return _tables().get("dev", {}).get(code)


def held_out(code: str, now: bool = False) -> Judged | None:
    """``code``'s findings on held-out code as judged before any rule was changed for it
    (``now``: those today's rules still print), or ``None``."""
    return _tables().get("heldout_now" if now else "heldout", {}).get(code)


def combined(code: str) -> Judged | None:
    """Development and held-out figures today, added up: what the rule groups rest on."""
    parts = [j for j in (measured(code), held_out(code, now=True)) if j is not None]
    if not parts:
        return None
    return Judged(sum(j.true for j in parts), sum(j.minor for j in parts),
                  sum(j.false for j in parts))


def judged(code: str) -> str:
    """Lines for the rule's docs: the development figure and the held-out one (``43/45
    true or minor on ...``), or that none was judged."""
    lines = []
    dev = measured(code)
    if dev is not None and dev.total:
        lines.append(str(dev))
    held, now = held_out(code), held_out(code, now=True)
    if held is not None and held.total:
        text = (f"held out: {held.true + held.minor}/{held.total} true or minor as judged "
                f"before any change for it ({held.true} true, {held.minor} minor, "
                f"{held.false} false) on {held.corpus}")
        if now is None or (now.true, now.minor, now.false) != (held.true, held.minor, held.false):
            n = now.total if now is not None else 0
            text += (f"; {now.true + now.minor}/{n} of what today's default output keeps"
                     if now is not None and n else "; today's default output has none of them")
        lines.append(text)
    lib = _tables().get("library", {}).get(code)
    if lib is not None and lib.total:
        lines.append(f"on library code: {lib.true + lib.minor}/{lib.total} true or minor "
                     f"({lib.true} true, {lib.minor} minor, {lib.false} false; {lib.corpus})")
    for name, label in RARE_ROUNDS:
        rare = _tables().get(name, {}).get(code)
        if rare is not None and rare.total:
            text = (f"{label}: {rare.true + rare.minor}/{rare.total} true or minor "
                    f"({rare.true} true, {rare.minor} minor, {rare.false} false; "
                    f"{rare.corpus})")
            now_tab = _tables().get(f"{name}_now")
            if now_tab:  # stored: findings a later fix removed drop out
                kept = now_tab.get(code)
                if kept is None or (kept.true, kept.minor, kept.false) != (
                        rare.true, rare.minor, rare.false):
                    text += (f"; {kept.true + kept.minor}/{kept.total} of what today's rule "
                             "keeps" if kept is not None and kept.total
                             else "; today's rule prints none of them")
            lines.append(text)
    alone, now_alone = _tables().get("alone", {}).get(code), _tables().get(
        "alone_now", {}).get(code)
    if alone is not None and alone.total:
        text = (f"linted alone on user-style code: {alone.true + alone.minor}/{alone.total} "
                f"true or minor as judged before any change for it ({alone.true} true, "
                f"{alone.minor} minor, {alone.false} false)")
        if now_alone is not None and now_alone.total and now_alone != alone:
            text += (f"; {now_alone.true + now_alone.minor}/{now_alone.total} of what "
                     f"today's rule keeps")
        lib_alone = _tables().get("alone_library", {}).get(code)
        if lib_alone is not None and lib_alone.total:
            text += (f"; on library code {lib_alone.true + lib_alone.minor}/"
                     f"{lib_alone.total}")
        lines.append(text)
    return "; ".join(lines) if lines else "not judged yet"
