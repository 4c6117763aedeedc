"""Content-hash cache: an unchanged file is not analysed again.

Key: SHA-256 of the file's bytes, its kind (``.py``/``.ipynb``), the tfperf version, a
fingerprint of the lint code itself (so editing a rule invalidates), and the selected rule
codes. Value: the findings as JSON, without the path (the same content elsewhere reuses them).
Stored under ``.tfperf_cache/lint/`` in the project root, else ``$XDG_CACHE_HOME/tfperf``.
Only plain lint runs use it (``--fix``/``--diff`` always analyse).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

from tfperf import __version__
from tfperf.core.findings import Applicability, Edit, Finding, Fix, Location, Status


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """Changes whenever any module of ``tfperf.lint`` (rules included) changes."""
    root = Path(__file__).resolve().parent
    h = hashlib.sha256(__version__.encode())
    for p in sorted(root.rglob("*.py")):
        st = p.stat()
        h.update(f"{p.relative_to(root)}:{st.st_size}:{st.st_mtime_ns}".encode())
    return h.hexdigest()[:16]


def default_dir(project_root: Path) -> Path:
    if os.access(project_root, os.W_OK):
        return project_root / ".tfperf_cache" / "lint"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tfperf" / "lint"


def _finding_to_json(f: Finding) -> dict:
    d = f.to_dict()
    d.pop("path", None)
    return d


def _finding_from_json(d: dict, path: str) -> Finding:
    fix = None
    if d.get("fix"):
        fix = Fix(Applicability(d["fix"]["applicability"]),
                  tuple(Edit(**e) for e in d["fix"]["edits"]), d["fix"].get("description", ""))
    loc = Location(path=path, line=d.get("line"), column=d.get("column"),
                   end_line=d.get("end_line"), end_column=d.get("end_column"),
                   cell=d.get("cell"))
    return Finding(code=d["code"], message=d["message"], status=Status(d["status"]),
                   name=d.get("name", ""), hint=d.get("hint", ""), location=loc, fix=fix,
                   data=d.get("data") or {})


class LintCache:
    def __init__(self, directory: Path, rule_codes: Sequence[str]) -> None:
        self.dir = directory
        self.salt = f"{code_fingerprint()}|{','.join(sorted(rule_codes))}".encode()
        self.hits = self.misses = 0

    def key(self, data: bytes, path: str) -> str:
        h = hashlib.sha256(self.salt)
        h.update(b"ipynb" if path.endswith(".ipynb") else b"py")
        h.update(data)
        return h.hexdigest()

    def _file(self, key: str) -> Path:
        return self.dir / key[:2] / f"{key[2:]}.json"

    def get(self, key: str, path: str) -> list[Finding] | None:
        try:
            raw = json.loads(self._file(key).read_text("utf-8"))
            found = [_finding_from_json(d, path) for d in raw]
        except (OSError, ValueError, KeyError, TypeError):
            self.misses += 1
            return None
        self.hits += 1
        return found

    def put(self, key: str, findings: Sequence[Finding]) -> None:
        target = self._file(key)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            marker = self.dir / ".gitignore"  # keeps the cache out of git and of linting
            if not marker.exists():
                marker.write_text("*\n")
            tmp = target.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps([_finding_to_json(f) for f in findings]), "utf-8")
            os.replace(tmp, target)
        except OSError:
            pass  # a cache that cannot be written only costs time
