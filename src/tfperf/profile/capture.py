"""A real TensorFlow profiler capture into a log directory TensorBoard/XProf opens.

``tf.profiler.experimental.start(logdir)`` / ``stop()`` write
``<logdir>/plugins/profile/<run>/<host>.xplane.pb``, the layout the XProf plugin reads.
Steps are marked with ``tf.profiler.experimental.Trace(..., step_num=i, _r=1)`` so that XProf's
step views and tfperf's reader (``xplane.py``) both see them.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

STEP_NAME = "tfperf_step"


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
    _before: set[Path] = field(default_factory=set)

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
        return True

    def stop(self) -> Path | None:
        if not self.running:
            return self.xplane
        import tensorflow as tf

        self.running = False
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
