"""``--interleave-with REF.py``: the baseline revision's bench file timed beside the current one,
in one process, round by round, so that the runner's noise hits both alike.

In CI, REF is the same bench file in a checkout of the base revision (``git worktree add``).
Its own code must be what runs, not the current revision's: while REF is imported, the
modules of the current project (those whose file lies under the current file's project root
or folder) are set aside and REF's project root (and its ``src/``) go first on ``sys.path``,
so REF imports its own copies; the current ones are put back afterwards. A module imported
lazily, inside a function at call time, resolves to the current revision's: keep imports at
the top of the file.

Variants are paired by name: ``step`` of the current file runs beside ``step`` of REF, whose
name in the rounds is ``step [ref]``. The comparison then splits into two runs (REF's and the
current one's) whose per-round times are paired, and the gate judges the median of the
per-round ratios (:func:`tfperf.bench.significance.bootstrap_paired`).
"""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from tfperf.bench.loader import BenchFile, BenchFileError, load_bench_file
from tfperf.bench.report import CompareReport
from tfperf.bench.result import CompareResult
from tfperf.core.files import project_root
from tfperf.profile.attribution import is_user_file

REF_SUFFIX = " [ref]"


def _under(path: str | None, folders: list[str]) -> bool:
    """A user module below one of ``folders`` (never a library: a virtualenv inside the
    project holds TensorFlow, which must stay loaded once)."""
    if not path or not is_user_file(path):
        return False
    real = os.path.realpath(path)
    return any(real.startswith(f + os.sep) for f in folders)


@contextmanager
def _own_modules(ref: Path, current: Path) -> Any:
    """While REF is imported: the current project's modules set aside, REF's root first."""
    cur_root = project_root(current) or current.resolve().parent
    folders = sorted({str(cur_root.resolve()), str(current.resolve().parent)})
    stash = {name: mod for name, mod in list(sys.modules.items())
             if _under(getattr(mod, "__file__", None), folders)}
    for name in stash:
        del sys.modules[name]
    ref_root = project_root(ref) or ref.resolve().parent
    added = [str(p) for p in (ref_root / "src", ref_root) if p.is_dir()]
    sys.path[:0] = added
    try:
        yield
    finally:
        for p in added:
            if p in sys.path:
                sys.path.remove(p)
        sys.modules.update(stash)


def load_pair(current: str, ref: str) -> tuple[BenchFile, BenchFile]:
    cur_file = load_bench_file(current)
    if Path(ref).resolve() == Path(current).resolve():
        raise BenchFileError(f"--interleave-with {ref}: that is FILE.py itself; give the base "
                             "revision's copy (e.g. from `git worktree add`)")
    with _own_modules(Path(ref), Path(current)):
        ref_file = load_bench_file(ref)
    shared = [v.name for v in cur_file.variants if v.name in {r.name for r in ref_file.variants}]
    if not shared:
        raise BenchFileError(f"{ref} and {current} declare no variant of the same name")
    return cur_file, ref_file


def split(result: CompareResult) -> tuple[CompareReport, CompareReport]:
    """(REF's run, the current run) out of one interleaved comparison."""
    ref, cur = [], []
    for v in result.variants:
        if v.name.endswith(REF_SUFFIX):
            ref.append(replace(v, name=v.name[: -len(REF_SUFFIX)]))
        else:
            cur.append(v)
    settings = dict(result.settings, interleaved=True)
    return (CompareReport(result.machine, ref[0].name, ref, settings),
            CompareReport(result.machine, cur[0].name, cur, settings))


__all__ = ["REF_SUFFIX", "load_pair", "split"]
