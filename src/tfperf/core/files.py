"""Files tfperf writes: the user's own sources (fixes, patches) and tfperf's caches.

One rule for each, shared by every capability:

- a user's file is replaced in one rename, through symlinks to the real file, keeping its
  mode, never left half written (``lint --fix`` today; ``tune --apply`` next);
- a cache lives in ``.tfperf_cache/<kind>/`` at the root of the project being worked on, with
  a ``.gitignore`` and a ``CACHEDIR.TAG`` so that git and backup tools leave it alone; where
  there is no project (or it is not writable), in the user's cache directory
  (``$XDG_CACHE_HOME/tfperf/<kind>``, ``~/.cache`` when unset), never in whatever directory
  the user happens to stand in.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

# Files that mark the root of a Python project (the first found walking up wins).
PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")
CACHE_DIR_NAME = ".tfperf_cache"
_CACHEDIR_TAG = ("Signature: 8a477f597d28d172789f06886806bc55\n"
                 "# This file is a cache directory tag created by tfperf.\n"
                 "# For information about cache directory tags see https://bford.info/cachedir/\n")


def write_text_atomically(path: str | Path, text: str, *, encoding: str = "utf-8",
                          bom: bool = False) -> Path:
    """Replace the text of an existing file in one rename and return the file written.

    A symlink is followed: the real file gets the new text and the link stays a link. The
    file keeps its permission bits. The new text goes to a temporary file beside the real
    one first (same file system), so the file is either all old or all new."""
    real = Path(os.path.realpath(path))
    mode = stat.S_IMODE(real.stat().st_mode)
    import tempfile  # imported here: most runs write no user file, and it is slow to import

    fd, tmp = tempfile.mkstemp(prefix=f".{real.name}.", suffix=".tfperf-tmp", dir=real.parent)
    try:
        with os.fdopen(fd, "w", encoding=encoding, newline="") as fh:
            fh.write(("\ufeff" if bom else "") + text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, real)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return real


def project_root(start: str | Path) -> Path | None:
    """The nearest directory at or above ``start`` holding a project marker
    (:data:`PROJECT_MARKERS`); ``None`` outside any project."""
    start = Path(start).resolve()
    directory = start if start.is_dir() else start.parent
    for d in (directory, *directory.parents):
        if any((d / marker).exists() for marker in PROJECT_MARKERS):
            return d
    return None


def user_cache_dir(kind: str) -> Path:
    """``$XDG_CACHE_HOME/tfperf/<kind>`` (``~/.cache`` when the variable is unset)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tfperf" / kind


def cache_dir(kind: str, start: str | Path | None = None) -> Path:
    """Where the ``kind`` cache lives for work on ``start`` (a path being analysed): the
    project's ``.tfperf_cache/<kind>`` when ``start`` is inside a writable project, else
    :func:`user_cache_dir`. Nothing is created here (see :func:`prepare_cache_dir`)."""
    root = project_root(start) if start is not None else None
    if root is not None and os.access(root, os.W_OK):
        return root / CACHE_DIR_NAME / kind
    return user_cache_dir(kind)


def prepare_cache_dir(directory: Path, root: Path | None = None) -> Path:
    """Create a cache directory and write a ``.gitignore`` (ignore everything) and a
    ``CACHEDIR.TAG`` at the top of the ``.tfperf_cache`` it is in, as ruff does, or, outside
    one (a ``--cache-dir`` of the user's), in ``root``."""
    directory.mkdir(parents=True, exist_ok=True)
    top = next((p for p in (directory, *directory.parents) if p.name == CACHE_DIR_NAME), root)
    if top is not None:
        for name, content in ((".gitignore", "# Created by tfperf automatically.\n*\n"),
                              ("CACHEDIR.TAG", _CACHEDIR_TAG)):
            marker = top / name
            if not marker.exists():
                with contextlib.suppress(OSError):
                    marker.write_text(content, encoding="utf-8")
    return directory
