"""Which files ``tfperf lint PATH...`` reads: ``.py`` and ``.ipynb`` under the given paths.

Directories are walked skipping hidden and cache folders, virtual environments (any folder
holding ``pyvenv.cfg``) and whatever the ``.gitignore`` files on the way ignore. Globs
(``src/**/*.py``) are expanded. A file named explicitly is always read.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

SUFFIXES = (".py", ".pyi", ".ipynb")
SKIP_DIRS = frozenset({"__pycache__", "node_modules", "site-packages", "build", "dist",
                       ".tfperf_cache"})


class DiscoveryError(Exception):
    """A path given on the command line does not exist or matches nothing."""


def _gitignore_spec(directory: Path):
    path = directory / ".gitignore"
    if not path.is_file():
        return None
    import pathspec  # a base dependency; imported here to keep start-up light

    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    return pathspec.GitIgnoreSpec.from_lines(lines)


def _ignored(specs: list[tuple[Path, object]], path: Path, is_dir: bool) -> bool:
    for base, spec in specs:
        rel = path.relative_to(base).as_posix() + ("/" if is_dir else "")
        if spec.match_file(rel):  # type: ignore[attr-defined]
            return True
    return False


def _parent_specs(directory: Path) -> list[tuple[Path, object]]:
    """``.gitignore`` files of the directories above ``directory`` up to the repo root."""
    specs: list[tuple[Path, object]] = []
    for parent in directory.parents:
        spec = _gitignore_spec(parent)
        if spec is not None:
            specs.append((parent, spec))
        if (parent / ".git").exists():
            break
    return specs


def walk(root: Path, excluded=None) -> Iterable[Path]:
    """Lintable files under ``root``, in a stable order, spelled from ``root`` as given."""
    shown, root = root, root.resolve()
    base_specs = _parent_specs(root)
    if base_specs and _ignored(base_specs, root, True):
        base_specs = []  # a directory named explicitly is linted even if git ignores it
    stack: list[tuple[Path, list[tuple[Path, object]]]] = [(root, base_specs)]
    while stack:
        directory, specs = stack.pop()
        own = _gitignore_spec(directory)
        if own is not None:
            specs = [*specs, (directory, own)]
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError:
            continue
        subdirs = []
        for entry in entries:
            name = entry.name
            path = Path(entry.path)
            try:
                is_dir = entry.is_dir()
            except OSError:
                continue
            if is_dir:
                if name.startswith(".") or name in SKIP_DIRS or name.endswith(".egg-info") \
                        or (path / "pyvenv.cfg").exists() or _ignored(specs, path, True) \
                        or (excluded and excluded(path)):
                    continue
                subdirs.append(path)
            elif name.endswith(SUFFIXES) and not name.startswith(".") \
                    and not _ignored(specs, path, False) and not (excluded and excluded(path)):
                yield shown / path.relative_to(root)
        stack.extend((d, specs) for d in reversed(subdirs))


def discover(paths: Sequence[str], excluded=None) -> list[Path]:
    """Files to lint for the command-line ``paths`` (files, directories, globs)."""
    found: list[Path] = []
    seen: set[Path] = set()
    for raw in paths:
        p = Path(raw)
        if p.is_file():
            candidates: Iterable[Path] = [p]
        elif p.is_dir():
            candidates = walk(p, excluded)
        elif glob.has_magic(raw):
            matches = sorted(glob.glob(raw, recursive=True))
            if not matches:
                raise DiscoveryError(f"{raw}: no file matches")
            candidates = []
            for m in matches:
                mp = Path(m)
                if mp.is_dir():
                    candidates.extend(walk(mp, excluded))  # type: ignore[attr-defined]
                elif mp.suffix in SUFFIXES:
                    candidates.append(mp)  # type: ignore[attr-defined]
        else:
            raise DiscoveryError(f"{raw}: no such file or directory")
        for c in candidates:
            key = c.resolve()
            if key not in seen:
                seen.add(key)
                found.append(c)
    return found
