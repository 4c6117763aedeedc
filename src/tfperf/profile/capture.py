"""A real TensorFlow profiler capture into a log directory TensorBoard/XProf opens.

``tf.profiler.experimental.start(logdir)`` / ``stop()`` write
``<logdir>/plugins/profile/<run>/<host>.xplane.pb``, the layout the XProf plugin reads.
Steps are marked with ``tf.profiler.experimental.Trace(..., step_num=i, _r=1)`` so that XProf's
step views and tfperf's reader (``xplane.py``) both see them.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

STEP_NAME = "tfperf_step"
# The profiler keeps every event in memory until it stops, and writing and reading them back
# takes several times that again (measured on TF 2.21: 100k eager ops grew the process by
# 75 MiB while captured, by 344 MiB at its peak once read back): a long eager run (millions of
# ops) or a long fit of an RNN reached 7-22 GB. The capture stops once the process has grown
# by this much during it.
DEFAULT_BUDGET_MB = 256


def resident_mb() -> float | None:
    """This process's resident memory in MiB (Linux ``/proc``), None where unknown."""
    try:
        with open("/proc/self/statm") as f:
            pages = int(f.read().split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def default_logdir() -> Path:
    return Path(tempfile.mkdtemp(prefix="tfperf-profile-"))


def find_xplanes(logdir: str | Path) -> list[Path]:
    """Every ``*.xplane.pb`` under ``logdir/plugins/profile``, oldest run first."""
    root = Path(logdir) / "plugins" / "profile"
    if not root.is_dir():
        return []
    return sorted(root.glob("*/*.xplane.pb"), key=lambda p: (p.stat().st_mtime, str(p)))


@dataclass
class Capture:
    """One profiler session. ``start()``; run; ``stop()`` → the new ``xplane.pb`` or None."""

    logdir: Path
    running: bool = False
    error: str | None = None
    xplane: Path | None = None
    budget_mb: float | None = None  # stop once resident memory grew by this much; None: never
    stopped_early: str | None = None  # why the capture ended before the run did
    captured_s: float = 0.0
    _before: set[Path] = field(default_factory=set)
    _t0: float = 0.0
    _rss0: float | None = None

    def start(self) -> bool:
        import tensorflow as tf

        self.logdir.mkdir(parents=True, exist_ok=True)
        self._before = set(find_xplanes(self.logdir))
        try:
            tf.profiler.experimental.start(str(self.logdir))
        except Exception as exc:  # e.g. a profiler session already running
            self.error = f"profiler did not start: {type(exc).__name__}: {exc}"
            return False
        self.running = True
        self._t0, self._rss0 = time.perf_counter(), resident_mb()
        return True

    def check_budget(self) -> None:
        """Stop the capture when the process has grown past the budget since it started."""
        if not self.running or self.budget_mb is None or self._rss0 is None:
            return
        now = resident_mb()
        if now is not None and now - self._rss0 > self.budget_mb:
            self.stopped_early = (f"its memory grew past {self.budget_mb:g} MiB "
                                  "(--capture-mb)")
            self.stop()

    def bound_note(self) -> str | None:
        """What part of the run the capture holds, when it is not the whole run."""
        if self.stopped_early is None:
            return None
        return (f"captured the first {self.captured_s:.1f} s of the run only: stopped when "
                f"{self.stopped_early}; figures outside the capture come from tfperf's hooks")

    def stop(self) -> Path | None:
        if not self.running:
            return self.xplane
        import tensorflow as tf

        self.running = False
        self.captured_s = time.perf_counter() - self._t0
        try:
            tf.profiler.experimental.stop()
        except Exception as exc:
            self.error = f"profiler did not stop cleanly: {type(exc).__name__}: {exc}"
            return None
        new = [p for p in find_xplanes(self.logdir) if p not in self._before]
        self.xplane = new[-1] if new else None
        if self.xplane is None:
            self.error = f"the profiler wrote no xplane.pb under {self.logdir}"
        return self.xplane


@contextlib.contextmanager
def step(number: int) -> Iterator[None]:
    """Mark one step in the capture (a root TraceMe with ``step_num``)."""
    import tensorflow as tf

    with tf.profiler.experimental.Trace(STEP_NAME, step_num=number, _r=1):
        yield
