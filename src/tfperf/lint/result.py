"""What linting one file gives, and how a run is asked to treat it (shared by the runner, the
notebook reader, the session and the cache)."""

from __future__ import annotations

from dataclasses import dataclass, field

from tfperf.core.findings import Finding


@dataclass
class FileResult:
    path: str
    findings: list[Finding] = field(default_factory=list)
    fixed: int = 0            # fixes applied (written, or shown with --diff)
    diff: str = ""            # unified diff of the fixes (--diff)
    new_text: str | None = None  # fixed file content, when it changed
    notes: list[str] = field(default_factory=list)  # said on stderr: skipped, fixes left out
    # Said on stderr, one line each, and the run exits 2: the file could not be read, or
    # its fixes could not be written (it keeps its findings; the other files go on).
    errors: list[str] = field(default_factory=list)
    cache_key: str = ""       # the file's cache key, when the process that read it made it
    version_key: str = ""     # the target part of that key (TF releases, pinned or not: the
                              # main process need not look up every file's pin to record it)
    # The module's summary as JSON text (tfperf.analysis.summary.ModuleSummary.dumps),
    # when the run's rules have cross-module checks; they run once every file is
    # summarised. One string: it crosses from worker processes and goes to the cache as
    # is, and a run over thousands of files keeps no thousands of small objects alive
    # for the garbage collector to walk while it parses the next files.
    summary: str | None = None


@dataclass(frozen=True)
class RunOptions:
    fix: bool = False
    unsafe: bool = False
    diff: bool = False        # compute the fixes, show them, do not write


DEFAULT_OPTIONS = RunOptions()  # lint only: no fixes, nothing written


def unified_diff(path: str, old: str, new: str) -> str:
    """The change from ``old`` to ``new`` as a unified diff: ``a/path`` → ``b/path`` for a
    relative path (``git apply``, ``patch -p1``), the path itself on both sides for an absolute
    one (``patch -p0``; ``a//tmp/x.py`` would apply nowhere), on POSIX or Windows
    (``C:\\src\\x.py``)."""
    import difflib  # only --diff needs it: not imported on every lint start
    from pathlib import PurePosixPath, PureWindowsPath

    absolute = PurePosixPath(path).is_absolute() or PureWindowsPath(path).is_absolute()
    before, after = (path, path) if absolute else (f"a/{path}", f"b/{path}")
    return "".join(difflib.unified_diff(old.splitlines(keepends=True),
                                        new.splitlines(keepends=True),
                                        fromfile=before, tofile=after))
