"""Which files ``tfperf lint PATH...`` reads: ``.py`` and ``.ipynb`` under the given paths.

Directories are walked skipping hidden and cache folders, virtual environments (any folder
holding ``pyvenv.cfg``) and whatever the ``.gitignore`` files on the way ignore. Globs
(``src/**/*.py``) are expanded. A file named explicitly is always read.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

SUFFIXES = (".py", ".pyi", ".ipynb")
SKIP_DIRS = frozenset({"__pycache__", "node_modules", "site-packages", "build", "dist",
                       ".tfperf_cache"})


class DiscoveryError(Exception):
    """A path given on the command line cannot be linted: it does not exist, matches
    nothing, is a symlink loop, cannot be reached, or is neither a file nor a folder."""


def check_paths(paths: Sequence[str]) -> None:
    """Raise :class:`DiscoveryError` for the first command-line path that cannot be linted,
    before any file is read or written (a run never stops half way through its fixes)."""
    for raw in paths:
        if glob.has_magic(raw) and not os.path.lexists(raw):
            continue  # a glob: checked when expanded
        if _broken_link(raw):
            continue  # skipped with a note when reached: the other paths are linted
        _check_path(raw)


def _broken_link(path: str) -> bool:
    """A symlink whose target is gone (a moved checkout, a stale editor link): one note and
    the other files linted, not a failed run. A symlink loop stays an error."""
    if not os.path.islink(path):
        return False
    try:
        os.stat(path)
    except OSError as exc:
        import errno

        return exc.errno in (errno.ENOENT, errno.ENOTDIR)
    return False


def _skip_note(path: object, exc: OSError | None = None) -> str:
    import errno

    what = "symlink loop" if exc is not None and exc.errno == errno.ELOOP else "broken symlink"
    return f"{path}: {what}, skipped"


def _check_path(raw: str) -> None:
    import errno
    import stat

    try:
        st = os.stat(raw)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise DiscoveryError(f"{raw}: symlink loop") from None
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            raise DiscoveryError(f"{raw}: no such file or directory") from None
        raise DiscoveryError(f"{raw}: {exc.strerror or exc}") from None
    if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
        raise DiscoveryError(f"{raw}: not a file or folder")


def _gitignore_spec(directory: Path):
    path = directory / ".gitignore"
    if not os.path.isfile(path):  # False, not an error, in a folder we may not search
        return None
    import pathspec  # a base dependency; imported here to keep start-up light

    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    return pathspec.GitIgnoreSpec.from_lines(lines)


def _ignored(specs: list[tuple[str, object]], path: str, is_dir: bool) -> bool:
    """Whether a ``.gitignore`` on the way ignores ``path`` (resolved, under each base)."""
    for base, spec in specs:
        rel = path[len(base) + 1:] if path != base else "."
        if os.sep != "/":
            rel = rel.replace(os.sep, "/")
        if spec.match_file(rel + ("/" if is_dir else "")):
            return True
    return False


def _parent_specs(directory: Path) -> list[tuple[str, object]]:
    """``.gitignore`` files of the directories above ``directory`` up to the repo root."""
    specs: list[tuple[str, object]] = []
    for parent in directory.parents:
        spec = _gitignore_spec(parent)
        if spec is not None:
            specs.append((str(parent).rstrip(os.sep), spec))
        if (parent / ".git").exists():
            break
    return specs


_NOT_REGULAR = "not a regular file (a named pipe, socket or device), skipped"


def _regular(entry: os.DirEntry) -> bool:
    try:
        return entry.is_file()
    except OSError:
        return False


def walk(root: Path, excluded=None, unlisted: list[str] | None = None,
         skipped: list[str] | None = None) -> Iterable[tuple[Path, str]]:
    """Lintable files under ``root`` in a stable order → (path spelled from ``root`` as
    given, its resolved path). A folder that cannot be listed is said in ``unlisted`` (one
    line each) and the walk goes on; a broken symlink is left out and said in ``skipped``.
    Plain strings inside: a ``Path`` per directory entry and a ``resolve()`` per file (one
    ``lstat`` per path component) cost more than the walk."""
    shown = str(root)
    real_root = str(root.resolve())
    base_specs = _parent_specs(Path(real_root))
    if base_specs and _ignored(base_specs, real_root, True):
        base_specs = []  # a directory named explicitly is linted even if git ignores it
    # (directory as walked, its resolved path, its spelling from `shown`, gitignore specs)
    stack: list[tuple[str, str, str, list[tuple[str, object]]]] = [
        (real_root, real_root, shown, base_specs)]
    visited: set[str] = set()  # resolved directories: a symlink loop is walked once
    while stack:
        directory, real_dir, spelled, specs = stack.pop()
        if real_dir in visited:
            continue
        visited.add(real_dir)
        own = _gitignore_spec(Path(directory))
        if own is not None:
            specs = [*specs, (directory, own)]
        try:
            with os.scandir(directory) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            if unlisted is not None:
                unlisted.append(f"{spelled}: cannot list the folder: {exc.strerror or exc}")
            continue
        subdirs = []
        for entry in entries:
            name = entry.name
            path = entry.path
            try:
                is_dir = entry.is_dir()
                link = entry.is_symlink()
            except OSError as exc:  # a symlink in a loop or through a file: said, not read
                if skipped is not None and name.endswith(SUFFIXES) \
                        and not name.startswith(".") and not _ignored(specs, path, False) \
                        and not (excluded and excluded(Path(path))):
                    skipped.append(_skip_note(os.path.join(spelled, name), exc))
                continue
            real = os.path.realpath(path) if link else os.path.join(real_dir, name)
            if is_dir:
                if name.startswith(".") or name in SKIP_DIRS or name.endswith(".egg-info") \
                        or os.path.exists(os.path.join(path, "pyvenv.cfg")) \
                        or _ignored(specs, path, True) \
                        or (excluded and excluded(Path(path))):
                    continue
                subdirs.append((path, real, os.path.join(spelled, name), specs))
            elif name.endswith(SUFFIXES) and not name.startswith(".") \
                    and not _ignored(specs, path, False) \
                    and not (excluded and excluded(Path(path))):
                if link and _broken_link(path):
                    if skipped is not None:
                        skipped.append(_skip_note(os.path.join(spelled, name)))
                    continue
                if not _regular(entry):  # a named pipe: reading it waited forever (stop 45)
                    if skipped is not None:
                        skipped.append(f"{os.path.join(spelled, name)}: {_NOT_REGULAR}")
                    continue
                yield Path(spelled, name), real
        stack.extend(reversed(subdirs))


def discover(paths: Sequence[str], excluded=None) -> list[Path]:
    """Files to lint for the command-line ``paths`` (files, directories, globs)."""
    return list(iter_discover(paths, excluded))


def iter_discover(paths: Sequence[str], excluded=None, unlisted: list[str] | None = None,
                  skipped: list[str] | None = None) -> Iterator[Path]:
    """:func:`discover` one file at a time, as found (a run hands them to its workers while
    the walk goes on); ``DiscoveryError`` comes when the walk reaches the bad path (see
    :func:`check_paths` to find it first); folders not listed go to ``unlisted``, broken
    symlinks (named, matched or walked) to ``skipped``."""
    seen: set[str] = set()  # resolved paths: a file reached twice is linted once
    for raw in paths:
        p = Path(raw)
        if _broken_link(raw):
            if skipped is not None:
                skipped.append(_skip_note(raw))
            continue
        if p.is_file():
            candidates: Iterable[tuple[Path, str]] = [(p, os.path.realpath(p))]
        elif p.is_dir():
            candidates = walk(p, excluded, unlisted, skipped)
        elif glob.has_magic(raw):
            matches = sorted(glob.glob(raw, recursive=True))
            if not matches:
                raise DiscoveryError(f"{raw}: no file matches")
            candidates = []
            for m in matches:
                mp = Path(m)
                if _broken_link(m):
                    if skipped is not None:
                        skipped.append(_skip_note(m))
                elif mp.is_dir():
                    candidates.extend(walk(mp, excluded, unlisted, skipped))
                elif mp.suffix in SUFFIXES and not os.path.isfile(mp):
                    if skipped is not None:
                        skipped.append(f"{m}: {_NOT_REGULAR}")
                elif mp.suffix in SUFFIXES:
                    candidates.append((mp, os.path.realpath(mp)))
        else:
            _check_path(raw)  # says why: a symlink loop, no access, not a file
            raise DiscoveryError(f"{raw}: no such file or directory")
        for c, key in candidates:
            if key not in seen:
                seen.add(key)
                yield c
