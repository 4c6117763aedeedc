"""Known TensorFlow/CUDA log lines: one row per pattern, grouped by root cause (``label``).

``data/error_patterns.csv`` is curated by hand; each row keeps its ``source``. Several rows can
share a label (the library lines that lead to "Skipping registering GPU devices" are one cause);
the first row of a label carries its cause, fix and ``see`` (the tfperf command or lint rule
that goes further). ``explained_by`` names labels that, when also present, are the root cause
of this one (a "DNN library is not found" after a cuDNN version mismatch). A ``notice`` row
marked ``escalate=gpu`` becomes a failure when the log shows a GPU (rows with
``gpu_evidence``) or the caller knows one is expected: "no CUDA runtime" is fine on a laptop
without a GPU and the problem on a GPU server.

``data/error_needles.csv`` is derived from it (``python -m tfperf.doctor.knowledge.build_data
--needles``): each row's needles, the literals one of which a line must hold before the row's
regex is tried. A row may give its own in the ``needles`` column instead.

``data/cuda_errors.csv`` gives the meaning of CUDA driver error codes (``failed call to cuInit``).
"""

from __future__ import annotations

import functools
import re
import zlib
from dataclasses import dataclass
from typing import Literal

from tfperf.doctor.knowledge.tables import read_table, truthy

try:  # the regex parser moved in Python 3.11; it is only used to find literal needles
    import re._parser as _sre_parse  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - Python 3.10
    import sre_parse as _sre_parse

Severity = Literal["failure", "warning", "notice", "info"]
SEVERITIES: tuple[str, ...] = ("failure", "warning", "notice", "info")
SEVERITY_ORDER: dict[str, int] = {s: i for i, s in enumerate(SEVERITIES)}
MIN_NEEDLE = 3  # shorter literals would select most lines anyway


@dataclass(frozen=True)
class ErrorPattern:
    id: str
    label: str  # the root cause this line belongs to
    severity: Severity
    escalate: bool  # a notice that is a failure when a GPU is present or expected
    gpu_evidence: bool  # a line that proves the process saw a GPU
    explained_by: tuple[str, ...]
    pattern: str  # compiled on first use (``regex``): most rows never meet a line to try
    needles: tuple[str, ...]  # lower-case literals, one per alternative: a line without any
    detail: str               # of them cannot match, so only lines holding one are tried
    cause: str
    fix: str
    see: str
    source: str

    @property
    def regex(self) -> re.Pattern[str]:
        return _compile(self.pattern)

    @property
    def benign(self) -> bool:
        """Nothing to fix: informational, or a notice with no GPU in sight."""
        return self.severity in ("notice", "info")


@dataclass(frozen=True)
class CudaError:
    code: int
    name: str
    meaning: str
    hint: str
    source: str


def _literal_runs(items: list) -> list[str]:
    """Consecutive literal characters at the top level of one regex branch."""
    runs, cur = [], []
    for op, arg in items:
        if op is _sre_parse.LITERAL:
            cur.append(chr(arg))
            continue
        if cur:
            runs.append("".join(cur))
            cur = []
        inner = list(arg[-1]) if op is _sre_parse.SUBPATTERN else []
        if inner and inner[0][0] is not _sre_parse.BRANCH:  # a plain group: its literals count
            runs.extend(_literal_runs(inner))
    if cur:
        runs.append("".join(cur))
    return runs


def _top_level_branches(pattern: str) -> list[str]:
    """The pattern split at its top-level ``|`` (the parser would factor common prefixes)."""
    out, depth, in_class, start, i = [], 0, False, 0, 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        if in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
            if pattern[i + 1:i + 2] == "]":  # "[]...]": a literal ] first
                i += 1
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "|" and depth == 0:
            out.append(pattern[start:i])
            start = i + 1
        i += 1
    out.append(pattern[start:])
    return out


def needles_of(pattern: str) -> tuple[str, ...]:
    """One required literal per top-level alternative (lower-cased); () if any lacks one."""
    out = []
    for branch in _top_level_branches(pattern):
        runs = [r for r in _literal_runs(list(_sre_parse.parse(branch)))
                if len(r.strip()) >= MIN_NEEDLE]
        if not runs:
            return ()
        out.append(max(runs, key=len).lower())
    return tuple(dict.fromkeys(out))


@functools.cache
def _compile(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def pattern_crc(pattern: str) -> str:
    """What ``data/error_needles.csv`` keys a row's derived needles on."""
    return f"{zlib.crc32(pattern.encode('utf-8')):08x}"


@functools.cache
def _derived_needles() -> dict[str, tuple[str, str]]:
    """id → (pattern crc, needles) from ``data/error_needles.csv`` (``build_data --needles``).

    Deriving needles parses every regex, which costs more than explaining a long log; the
    table saves that. A row whose pattern changed since (crc differs) is derived afresh.
    """
    try:
        rows = read_table("error_needles.csv")
    except FileNotFoundError:
        return {}
    return {r["id"]: (r["pattern_crc"], r["needles"]) for r in rows}


def _needles_for(r: dict[str, str]) -> tuple[str, ...]:
    given = tuple(n for n in r["needles"].split("|") if n)
    if given:
        found = given
    else:
        crc, stored = _derived_needles().get(r["id"], ("", ""))
        if crc == pattern_crc(r["pattern"]):
            found = tuple(n for n in stored.split("|") if n)
        else:
            found = needles_of(r["pattern"])
    # the explainer looks for needles in ASCII-lower-cased bytes: a non-ASCII needle could be
    # missed there, so such a row is tried on every line instead
    return found if all(n.isascii() for n in found) else ()


@functools.cache
def _patterns() -> tuple[ErrorPattern, ...]:
    out = []
    for r in read_table("error_patterns.csv"):
        sev = r["severity"]
        if sev not in SEVERITY_ORDER:
            raise ValueError(f"error_patterns.csv: bad severity {sev!r} for {r['id']}")
        out.append(ErrorPattern(
            id=r["id"], label=r["label"], severity=sev,  # type: ignore[arg-type]
            escalate=r["escalate"] == "gpu", gpu_evidence=truthy(r["gpu_evidence"]),
            explained_by=tuple(r["explained_by"].split()), pattern=r["pattern"],
            needles=_needles_for(r), detail=r["detail"], cause=r["cause"],
            fix=r["fix"], see=r["see"], source=r["source"]))
    return tuple(out)


def derived_needle_rows() -> list[dict[str, str]]:
    """Rows of ``data/error_needles.csv`` as they should be now (for ``build_data --needles``)."""
    return [{"id": r["id"], "pattern_crc": pattern_crc(r["pattern"]),
             "needles": "|".join(needles_of(r["pattern"]))}
            for r in read_table("error_patterns.csv") if not r["needles"]]


def error_patterns() -> list[ErrorPattern]:
    """All rows in table order (specific rows first: the first row that matches a line wins)."""
    return list(_patterns())


@functools.cache
def label_rows() -> dict[str, ErrorPattern]:
    """The row that describes each label: the first of the label that has a cause."""
    out: dict[str, ErrorPattern] = {}
    for p in _patterns():
        if p.label not in out and p.cause:
            out[p.label] = p
    return out


@functools.cache
def derived_causes() -> dict[str, dict[str, str]]:
    """label -> cause, fix, see, source for causes concluded from a log's numbers rather than
    matched by a row (``data/derived_causes.csv``: fragmentation told from an OOM dump)."""
    return {r["label"]: dict(r) for r in read_table("derived_causes.csv")}


@functools.cache
def _cuda_errors() -> tuple[dict[int, CudaError], dict[str, CudaError]]:
    by_code, by_name = {}, {}
    for r in read_table("cuda_errors.csv"):
        e = CudaError(code=int(r["code"]), name=r["name"], meaning=r["meaning"], hint=r["hint"],
                      source=r["source"])
        by_code[e.code], by_name[e.name] = e, e
    return by_code, by_name


def cuda_error(code_or_name: int | str) -> CudaError | None:
    """The CUDA driver error for a code (303) or a name (CUDA_ERROR_NO_DEVICE)."""
    by_code, by_name = _cuda_errors()
    if isinstance(code_or_name, int):
        return by_code.get(code_or_name)
    return by_name.get(code_or_name)
