"""Content-hash cache: an unchanged file is not analysed again.

Key: SHA-256 of the file's bytes, its kind (``.py``/``.ipynb``), the tfperf version, a
fingerprint of the lint code itself (so editing a rule invalidates), the selected rule codes
and the targeted TensorFlow version. Value: the findings as JSON, without the path (the same
content elsewhere reuses them).
Stored where :func:`tfperf.core.files.cache_dir` says (``.tfperf_cache/lint/`` in the project,
else the user's cache directory).
Only plain lint runs use it (``--fix``/``--diff`` always analyse).

A warm run need not read every file: each pack also records, per file, its (path, size,
modification time, inode) and the key its bytes gave, as git's index does. A file whose
stat is unchanged gets its key without being read or hashed. A file modified within
:data:`RACY_S` seconds of the run is not recorded (its next change could keep the same
timestamp: git's "racy" case).

A module's summary (:mod:`tfperf.analysis.summary`, when the run's rules have cross-module
checks) is kept with its findings (a line ``S<tab>key<tab>JSON``, decoded only when asked
for): it too depends on the bytes alone. The project's checks run again from the summaries,
cached or new, whenever a file of the run changed; their findings are kept per set of files
(:func:`project_digest`), so a warm run over the same files decodes no summary.

A file's notes (``read as Python 2 source``, a notebook skipped) depend on its bytes alone
too and are kept with its findings, without the path: before stop 42 a file with a note was
never stored, so every warm run analysed it again (12 of 573 files of a 10-repo tree, the
Python 2 kernel notebooks).

Layout: one "pack" file per run (JSON lines ``{"key": ..., "findings": [...]}``, with
``"summary": {...}`` when there is one), written
once at the end, atomically. A file per entry cost about a millisecond of file-system work
per linted file, a fifth of a cold run; a pack costs one write, and a warm run reads a few
files instead of one per source file. Packs are merged when there are more than
:data:`MAX_PACKS`, keeping the newest :data:`MAX_ENTRIES` entries. Concurrent runs each write
their own pack; a pack that disappears or is damaged is skipped (it only costs time).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

from tfperf import __version__
from tfperf.core.files import prepare_cache_dir
from tfperf.core.findings import Applicability, Edit, Finding, Fix, Location, Status


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """Changes whenever any module of ``tfperf.lint`` (rules included) or of the project
    model ``tfperf.analysis`` changes."""
    package = Path(__file__).resolve().parent.parent
    h = hashlib.sha256(__version__.encode())
    for root in (package / "lint", package / "analysis"):
        for p in sorted(root.rglob("*.py")):
            st = p.stat()
            h.update(f"{p.relative_to(package)}:{st.st_size}:{st.st_mtime_ns}".encode())
    return h.hexdigest()[:16]


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


def project_digest(salt: bytes, keys: Sequence[tuple[str, str]]) -> str:
    """Names a project: the run's salt and each file's path and key (its bytes and targeted
    TF). A warm run over the same files reuses the project's cross-module findings; any
    file changed, added or removed names another project, whose checks run again."""
    h = hashlib.sha256(salt)
    for path, key in keys:
        h.update(f"{os.path.abspath(path)}\0{key}\n".encode())
    return h.hexdigest()


def content_key(salt: bytes, data: bytes, path: str, extra: bytes = b"") -> str:
    """A file's key: what changes its findings (``salt``: lint code, rules, run's target),
    its kind and its bytes (``extra``: the file's own targeted TF)."""
    h = hashlib.sha256(salt)
    h.update(b"ipynb" if path.endswith(".ipynb") else b"py")
    h.update(data)
    h.update(extra)
    return h.hexdigest()


MAX_PACKS = 8
MAX_PROJECTS = 16  # projects' cross-module findings kept when packs are merged
MAX_ENTRIES = 200_000
RACY_S = 2.0


class LintCache:
    def __init__(self, directory: Path, rule_codes: Sequence[str], salt: str = "") -> None:
        self.dir = directory
        # Whatever else changes the findings of the same bytes (the targeted TF version).
        self.salt = f"{code_fingerprint()}|{','.join(sorted(rule_codes))}|{salt}".encode()
        self.hits = self.misses = 0
        self._index: dict[str, list] | None = None
        self._summaries: dict[str, str] = {}  # key → summary JSON ("": the file had none)
        self._notes: dict[str, list[str]] = {}  # key → its notes, each without "path: "
        self._new_summaries: dict[str, str] = {}
        self._projects: dict[str, list] = {}
        self._new_projects: dict[str, list] = {}
        self._stats: dict[str, str] = {}
        self._new: dict[str, list] = {}
        self._new_stats: dict[str, str] = {}
        self._salt_digest = hashlib.sha256(self.salt).hexdigest()[:16]

    @property
    def packs_dir(self) -> Path:
        return self.dir / "packs"

    def key(self, data: bytes, path: str) -> str:
        return content_key(self.salt, data, path)

    def empty(self) -> bool:
        """No entry stored: nothing can hit, so no file needs its key before it is linted
        (the worker that reads it makes the key from the bytes it has)."""
        return not self._load()

    def key_of(self, path: str, extra: bytes = b"") -> str:
        """The key of the file at ``path`` (``extra``: what else its findings depend on,
        such as its targeted TF), from its stat when a pack recorded it, else from its
        bytes. Raises OSError if the file cannot be read."""
        st = os.stat(path)
        sig = self._signature(path, st, extra)
        self._load()
        known = self._stats.get(sig)
        if known is not None:
            return known
        key = content_key(self.salt, Path(path).read_bytes(), path, extra)
        self._remember(sig, st, key)
        return key

    def record(self, path: str, extra: bytes, key: str) -> None:
        """Remember the stat of a file whose ``key`` a worker made from the bytes it read
        (a cold run). A file changed since then only misses: its stat no longer matches."""
        try:
            st = os.stat(path)
        except OSError:
            return
        self._remember(self._signature(path, st, extra), st, key)

    def _signature(self, path: str, st: os.stat_result, extra: bytes) -> str:
        return (f"{os.path.abspath(path)}|{st.st_size}|{st.st_mtime_ns}|{st.st_ino}|"
                f"{self._salt_digest}|{extra.hex()}")

    def _remember(self, sig: str, st: os.stat_result, key: str) -> None:
        if time.time_ns() - st.st_mtime_ns > RACY_S * 1e9:
            self._new_stats[sig] = key

    def _packs(self) -> list[Path]:
        try:
            return sorted(self.packs_dir.glob("*.jsonl"))  # names start with a time: oldest first
        except OSError:
            return []

    def _load(self) -> dict[str, list]:
        if self._index is None:
            index: dict[str, list] = {}
            for pack in self._packs():
                entries, stats = _read_pack(pack, self._summaries, self._projects,
                                            self._notes)
                index.update(entries)
                self._stats.update(stats)
            self._index = index
        return self._index

    def get(self, key: str, path: str) -> list[Finding] | None:
        raw = self._load().get(key)
        if raw is not None:
            try:
                found = [_finding_from_json(d, path) for d in raw]
            except (ValueError, KeyError, TypeError):
                found = None
            if found is not None:
                self.hits += 1
                return found
        self.misses += 1
        return None

    def notes(self, key: str, path: str) -> list[str]:
        """The notes the file of entry ``key`` gave, said of ``path``."""
        return [f"{path}: {n}" for n in self._notes.get(key, ())]

    def has_summary(self, key: str) -> bool:
        """The entry ``key`` was stored by a run that summarised modules (a file with no
        summary, one that does not parse, stores an empty one)."""
        return key in self._summaries

    def summary(self, key: str) -> str | None:
        """The module summary (JSON text) stored with the entry ``key``; ``None`` when it
        has none (the file gave none). Decoded only by whoever asks: a warm run over
        unchanged files reuses the project's findings without them."""
        return self._summaries.get(key) or None

    def project(self, digest: str) -> list[Finding] | None:
        """The cross-module findings of a project whose files and targets ``digest`` names
        (:func:`project_digest`), when a run over exactly those stored them."""
        self._load()
        raw = self._projects.get(digest)
        if raw is None:
            return None
        try:
            return [_finding_from_json(d, d["path"]) for d in raw]
        except (ValueError, KeyError, TypeError):
            return None

    def put_project(self, digest: str, findings: Sequence[Finding]) -> None:
        self._new_projects[digest] = [{**_finding_to_json(f), "path": f.location.path}
                                      for f in findings if f.location is not None]

    def put(self, key: str, findings: Sequence[Finding],
            summary: str | None = None, summarised: bool = False,
            notes: Sequence[str] = (), path: str = "") -> bool:
        """Remember an entry; :meth:`flush` writes the run's entries in one pack.
        ``summarised``: the run summarises modules (an empty summary is kept where this
        file gave none, so that a warm run knows it has nothing to read). ``notes``: what
        the file at ``path`` gave, each ``"path: text"``; an entry whose note does not say
        so is not stored (False)."""
        prefix = f"{path}: "
        if any(not n.startswith(prefix) for n in notes):
            return False
        if notes:
            self._notes[key] = [n[len(prefix):] for n in notes]
        self._new[key] = [_finding_to_json(f) for f in findings]
        if summary is not None:
            self._new_summaries[key] = summary
        elif summarised:
            self._new_summaries[key] = ""
        return True

    def flush(self) -> None:
        if not self._new and not self._new_stats and not self._new_projects:
            return
        entries, self._new = self._new, {}
        stats, self._new_stats = self._new_stats, {}
        summaries, self._new_summaries = self._new_summaries, {}
        projects, self._new_projects = self._new_projects, {}
        try:
            prepare_cache_dir(self.packs_dir, root=self.dir)  # with markers that keep git out
            _write_pack(self.packs_dir / f"{time.time_ns():020d}-{os.getpid()}.jsonl", entries,
                        stats, summaries, projects, self._notes)
            packs = self._packs()
            if len(packs) > MAX_PACKS:
                self._merge(packs)
        except OSError:
            pass  # a cache that cannot be written only costs time

    def _merge(self, packs: list[Path]) -> None:
        merged: dict[str, list] = {}
        merged_stats: dict[str, str] = {}
        summaries: dict[str, str] = {}
        projects: dict[str, list] = {}
        notes: dict[str, list[str]] = {}
        for pack in packs:
            entries, stats = _read_pack(pack, summaries, projects, notes)
            for key, value in entries.items():
                merged.pop(key, None)  # re-insert: the dict's order is the entries' age
                merged[key] = value
            for sig, key in stats.items():
                merged_stats.pop(sig, None)
                merged_stats[sig] = key
        keep = dict(list(merged.items())[-MAX_ENTRIES:])
        keep_stats = {sig: key for sig, key in list(merged_stats.items())[-MAX_ENTRIES:]
                      if key in keep}
        _write_pack(self.packs_dir / f"{time.time_ns():020d}-{os.getpid()}.jsonl", keep,
                    keep_stats, summaries, dict(list(projects.items())[-MAX_PROJECTS:]), notes)
        for pack in packs:
            with contextlib.suppress(OSError):
                pack.unlink()


def _read_pack(pack: Path, summaries: dict[str, str] | None = None,
               projects: dict[str, list] | None = None,
               notes: dict[str, list[str]] | None = None
               ) -> tuple[dict[str, list], dict[str, str]]:
    """→ (key → findings, file stat → key); summaries go to ``summaries`` (key → their
    JSON text, decoded on demand), projects' cross-module findings to ``projects`` (digest →
    findings), files' notes to ``notes`` (key → notes without the path)."""
    out: dict[str, list] = {}
    stats: dict[str, str] = {}
    try:
        text = pack.read_text("utf-8")
    except (OSError, UnicodeDecodeError):
        return out, stats
    for line in text.splitlines():
        if line.startswith("S\t"):  # S<tab>key<tab>summary JSON: kept as text until asked
            parts = line.split("\t", 2)
            if summaries is not None and len(parts) == 3:
                summaries[parts[1]] = parts[2].strip()
            continue
        try:
            entry = json.loads(line)
            if "project" in entry:
                if projects is not None and isinstance(entry["findings"], list):
                    projects[entry["project"]] = entry["findings"]
                continue
            key = entry["key"]
            if "stat" in entry:
                if isinstance(key, str) and isinstance(entry["stat"], str):
                    stats[entry["stat"]] = key
                continue
            findings = entry["findings"]
            said = entry.get("notes", [])
        except (ValueError, KeyError, TypeError, AttributeError):
            continue  # a damaged line: that entry is analysed again
        if isinstance(key, str) and isinstance(findings, list) and isinstance(said, list) \
                and all(isinstance(n, str) for n in said):
            out[key] = findings
            if said and notes is not None:
                notes[key] = said
    return out, stats


def _write_pack(target: Path, entries: dict[str, list], stats: dict[str, str],
                summaries: dict[str, str] | None = None,
                projects: dict[str, list] | None = None,
                notes: dict[str, list[str]] | None = None) -> None:
    tmp = target.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        for key, findings in entries.items():
            entry: dict = {"key": key, "findings": findings}
            if notes and notes.get(key):
                entry["notes"] = notes[key]
            fh.write(json.dumps(entry, separators=(",", ":")))
            fh.write("\n")
            summary = (summaries or {}).get(key)
            if summary is not None:
                fh.write(f"S\t{key}\t{summary}\n")
        for sig, key in stats.items():
            fh.write(json.dumps({"stat": sig, "key": key}, separators=(",", ":")))
            fh.write("\n")
        for digest, found in (projects or {}).items():
            fh.write(json.dumps({"project": digest, "findings": found}, separators=(",", ":")))
            fh.write("\n")
    os.replace(tmp, target)
