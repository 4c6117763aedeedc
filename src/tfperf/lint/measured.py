"""Each rule's precision as judged on code no one here wrote: the sample of findings in
``benchmarks/lint_fixes/precision.csv``, each judged true, true-but-minor or false, summed per
rule into the package data file ``precision.json`` by ``benchmarks/lint_fixes/precision.py``.
``tfperf rule CODE`` shows it; the rule groups rest on it (docs/lint.md)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources


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
        return (f"{self.true + self.minor}/{self.total} judged true{where} "
                f"({self.true} true, {self.minor} minor, {self.false} false)")


@lru_cache(maxsize=1)
def _table() -> dict[str, Judged]:
    try:
        text = resources.files("tfperf.lint").joinpath("precision.json").read_text("utf-8")
    except (FileNotFoundError, OSError):
        return {}
    data = json.loads(text)
    corpus = data.get("corpus", "")
    return {code: Judged(int(v.get("true", 0)), int(v.get("minor", 0)), int(v.get("false", 0)),
                         corpus) for code, v in data.get("rules", {}).items()}


def measured(code: str) -> Judged | None:
    """The judgement of ``code``'s findings, or ``None`` when none was judged."""
    return _table().get(code)


def judged(code: str) -> str:
    """One line for the rule's docs: ``43/45 judged true on ...``, or that none was."""
    found = measured(code)
    return str(found) if found is not None and found.total else "not judged yet"
