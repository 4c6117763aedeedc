"""Shared helpers for the lint development sets: snapshots, rows, line ranges, notebooks.

Everything here reads git snapshots that the `fetch` tool left under a mirror directory
(``<mirror>/<owner>+<name>/repo``, a bare git directory or a work tree with ``.git``); nothing
touches the network. A row's changed lines are stored as ranges: ``"12-18;40-40"`` for a Python
file, ``"c3:1-4;c7:2-2"`` for a notebook (cell numbered from 1 over all cells, line within the
cell, the way ``tfperf lint`` reports notebook positions).
"""

from __future__ import annotations

import csv
import difflib
import json
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_MIRROR = Path("/work/.mirror")
FIXES_CSV = HERE / "fixes.csv"
CORPUS_CSV = HERE / "corpus.csv"

FIX_COLUMNS = ["id", "repo", "before", "after", "path", "after_path", "before_lines",
               "after_lines", "kind", "style", "form", "why", "after_expect", "tf_version",
               "tf_version_source", "after_tf_version", "claim_check"]
_TF_VERSION = re.compile(r"^\d+\.\d+$")
CLAIM_VERDICTS = ("holds", "doubtful", "does not hold")


class MissingSnapshot(Exception):
    """A repository (or one of its commits) is not in the mirror."""

    def __init__(self, repo: str, detail: str = ""):
        super().__init__(f"{repo}: {detail}" if detail else repo)
        self.repo = repo


def git_dir(mirror: Path, repo: str) -> Path:
    base = mirror / repo.replace("/", "+") / "repo"
    if (base / ".git").is_dir():
        return base / ".git"
    if base.is_dir():
        return base
    raise MissingSnapshot(repo, "no snapshot")


def show(gdir: Path, rev: str, path: str) -> bytes:
    out = subprocess.run(["git", "-C", str(gdir), "show", f"{rev}:{path}"],
                         capture_output=True)
    if out.returncode != 0:
        raise MissingSnapshot(str(gdir), f"{rev}:{path} not found "
                              f"({out.stderr.decode(errors='replace').strip()[:120]})")
    return out.stdout


def fetch_source(repo: str) -> str:
    return f"github:{repo}"


# ---- rows -------------------------------------------------------------------------------

@dataclass(frozen=True)
class FixRow:
    id: str
    repo: str
    before: str
    after: str
    path: str
    after_path: str
    before_lines: str
    after_lines: str
    kind: str
    style: str
    form: str
    why: str
    after_expect: str
    # The TensorFlow the code targeted at the before revision (X.Y) and where that comes from
    # (the repository's pin then, else the newest release at the commit's date); the after
    # file targets the same unless the fix changed the pin (after_tf_version).
    tf_version: str = ""
    tf_version_source: str = ""
    after_tf_version: str = ""
    # Whether the row's claimed speed-up was checked (claims.py, or reading the fix): empty
    # (not checked), "holds: ...", "doubtful: ..." or "does not hold: ...". Recall is also
    # given over the rows whose claim is not in doubt.
    claim_check: str = ""

    @property
    def claim_in_doubt(self) -> bool:
        return self.claim_check.startswith(("doubtful", "does not hold"))

    @property
    def path_after(self) -> str:
        return self.after_path or self.path

    def target(self, side: str) -> str:
        """The TF version (X.Y) the ``side`` ("before"/"after") file targets; "" if unknown."""
        if side not in ("before", "after"):
            raise ValueError(f"side must be before or after, not {side!r}")
        return (self.after_tf_version or self.tf_version) if side == "after" else self.tf_version

    @property
    def expect_clean(self) -> bool:
        return self.after_expect.strip().lower() == "clean"


def read_fixes(path: Path = FIXES_CSV) -> list[FixRow]:
    with path.open(newline="", encoding="utf-8") as fh:
        rows = [FixRow(**{k: (r.get(k) or "").strip() for k in FIX_COLUMNS})
                for r in csv.DictReader(fh)]
    for r in rows:
        for v in (r.tf_version, r.after_tf_version):
            if v and not _TF_VERSION.match(v):
                raise ValueError(f"{path.name}: {r.id}: TF version {v!r} is not X.Y")
        if r.claim_check and not r.claim_check.startswith(CLAIM_VERDICTS):
            raise ValueError(f"{path.name}: {r.id}: claim_check must start with one of "
                             f"{CLAIM_VERDICTS}")
        if r.tf_version and not r.tf_version_source:
            raise ValueError(f"{path.name}: {r.id}: tf_version without tf_version_source")
    ids = [r.id for r in rows]
    dup = {i for i in ids if ids.count(i) > 1}
    if dup:
        raise ValueError(f"{path.name}: duplicate ids {sorted(dup)}")
    return rows


def write_fixes(rows: list[FixRow], path: Path = FIXES_CSV) -> None:
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, FIX_COLUMNS, lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({k: getattr(r, k) for k in FIX_COLUMNS})


# ---- line ranges ------------------------------------------------------------------------

Span = tuple[int, int, int]  # (cell or 0, first line, last line), inclusive
_RANGE = re.compile(r"^(?:c(\d+):)?(\d+)-(\d+)$")


def parse_ranges(text: str) -> list[Span]:
    spans: list[Span] = []
    for part in filter(None, (p.strip() for p in text.split(";"))):
        m = _RANGE.match(part)
        if not m:
            raise ValueError(f"bad line range {part!r} (want 12-18 or c3:1-4)")
        spans.append((int(m.group(1) or 0), int(m.group(2)), int(m.group(3))))
    return spans


def format_ranges(spans: list[Span]) -> str:
    return ";".join(f"c{c}:{a}-{b}" if c else f"{a}-{b}" for c, a, b in spans)


def inside(spans: list[Span], cell: int | None, line: int | None) -> bool:
    if line is None:
        return False
    return any((c or 0) == (cell or 0) and a <= line <= b for c, a, b in spans)


# ---- notebooks as a list of (cell, line) ---------------------------------------------------

def notebook_lines(data: bytes) -> list[tuple[int, int, str]]:
    """Every code-cell line as (cell index over all cells, line in cell, text)."""
    nb = json.loads(data.decode("utf-8"))
    cells = nb.get("cells")
    if cells is None and nb.get("worksheets"):
        cells = nb["worksheets"][0].get("cells", [])
    out: list[tuple[int, int, str]] = []
    for i, cell in enumerate(cells or [], start=1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        src = cell.get("source", cell.get("input", ""))
        text = "".join(src) if isinstance(src, list) else str(src or "")
        for j, line in enumerate(text.split("\n"), start=1):
            out.append((i, j, line))
    return out


def source_lines(data: bytes, path: str) -> list[tuple[int, int, str]]:
    if path.endswith(".ipynb"):
        return notebook_lines(data)
    text = data.decode("utf-8", errors="replace")
    return [(0, j, line) for j, line in enumerate(text.split("\n"), start=1)]


def changed_blocks(before: bytes, after: bytes, path: str,
                   after_path: str | None = None) -> list[tuple[list[Span], list[Span]]]:
    """The changed blocks of a before→after pair, each as (before spans, after spans); a pure
    insertion or deletion has no span on the side where nothing is left."""
    a = source_lines(before, path)
    b = source_lines(after, after_path or path)
    sm = difflib.SequenceMatcher(None, [t for *_, t in a], [t for *_, t in b], autojunk=False)
    blocks: list[tuple[list[Span], list[Span]]] = []
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            continue
        sa: list[Span] = []
        sb: list[Span] = []
        # A pure insertion (or deletion) changes what the next line does (a decorator added
        # above a def, a call removed before a loop): that line stands for the other side.
        _add(sa, a[i1:i2] if i2 > i1 else _next_code(a, i1))
        _add(sb, b[j1:j2] if j2 > j1 else _next_code(b, j1))
        if sa or sb:
            blocks.append((sa, sb))
    return blocks


def _next_code(lines: list[tuple[int, int, str]], i: int) -> list[tuple[int, int, str]]:
    while i < len(lines) and not lines[i][2].strip():
        i += 1
    return lines[i:i + 1]


def _add(spans: list[Span], lines: list[tuple[int, int, str]]) -> None:
    """One changed block (contiguous lines) → one span per cell, blank ends trimmed."""
    by_cell: dict[int, list[int]] = {}
    for cell, line, text in lines:
        if text.strip():  # a blank line is not code; keep ranges tight
            by_cell.setdefault(cell, []).append(line)
    for cell, nums in by_cell.items():
        spans.append((cell, min(nums), max(nums)))
