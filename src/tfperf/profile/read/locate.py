"""PATH (a logdir, a run folder or one file) → the capture files in it, and what is odd about
where they are.

XProf and TensorBoard look for ``LOGDIR/plugins/profile/<run>/<host>.xplane.pb`` and nothing
else: a capture one folder off shows "No profile data was found". tfperf reads it wherever it
is, and says where it should be.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

CAPTURE_SUFFIX = ".xplane.pb"
# Other files a profile folder may hold, and what they are.
OLD_FORMATS = {".trace": "a TensorFlow ≤ 2.1 profiler trace (tfprof's `*.trace`)",
               ".trace.json.gz": "a Chrome trace (`*.trace.json.gz`) that TF 2.2-2.3 wrote "
                                 "beside the XSpace",
               ".xplane.pb.gz": "a gzip-compressed capture",
               ".xplane.riegeli": "a Riegeli-framed capture (JAX's newer writer)"}
_MAX_FILES = 10_000  # a walk of a huge folder stops here


@dataclass
class Located:
    """What PATH holds: capture files (newest run first) and files that are not captures."""

    path: Path
    captures: list[Path] = field(default_factory=list)
    misplaced: list[Path] = field(default_factory=list)  # captures off the XProf layout
    other_formats: list[tuple[Path, str]] = field(default_factory=list)
    runs: list[Path] = field(default_factory=list)  # run folders, newest first
    tensorboard_events: bool = False  # TensorBoard event files, but maybe no profile

    @property
    def chosen_run(self) -> Path | None:
        return self.runs[0] if self.runs else None


def well_placed(p: Path) -> bool:
    """Is ``p`` at ``LOGDIR/plugins/profile/<run>/<host>.xplane.pb``?"""
    parts = p.parts
    return len(parts) >= 4 and parts[-3] == "profile" and parts[-4] == "plugins"


def _old_format(p: Path) -> str | None:
    name = p.name
    for suffix, what in OLD_FORMATS.items():
        if name.endswith(suffix):
            return what
    return None


def locate(path: str | Path) -> Located:
    """Capture files at or under ``path``. Raises FileNotFoundError when it does not exist."""
    root = Path(path)
    if not root.exists():
        raise FileNotFoundError(str(path))
    out = Located(root)
    if root.is_file():
        what = _old_format(root)
        if what and not root.name.endswith(CAPTURE_SUFFIX):
            out.other_formats.append((root, what))
        else:
            out.captures.append(root)
            if not well_placed(root.resolve()):
                out.misplaced.append(root)
        return out
    files: list[Path] = []
    for i, p in enumerate(sorted(root.rglob("*"))):
        if i > _MAX_FILES:
            break
        if not p.is_file():
            continue
        if p.name.endswith(CAPTURE_SUFFIX):
            files.append(p)
        elif (what := _old_format(p)) is not None:
            out.other_formats.append((p, what))
        elif p.name.startswith("events.out.tfevents"):
            out.tensorboard_events = True
    by_run: dict[Path, list[Path]] = {}
    for f in files:
        by_run.setdefault(f.parent, []).append(f)
        if not well_placed(f.resolve()):
            out.misplaced.append(f)
    # Run folders are named by their start time (YYYY_MM_DD_HH_MM_SS): newest = last name;
    # elsewhere, the newest file.
    out.runs = sorted(by_run, key=lambda d: (d.name, max(f.stat().st_mtime for f in by_run[d])),
                      reverse=True)
    if out.runs:
        out.captures = sorted(by_run[out.runs[0]])
    return out
