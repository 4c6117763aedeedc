"""What a magic shows, through IPython's display system: text everywhere, HTML where the
front end renders it (Jupyter, JupyterLab, Colab), images for plots; a progress line that
updates in place.

Nothing here writes escape codes: a terminal IPython shows ``text/plain``, a notebook picks
``text/html`` when there is one.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from typing import Any


@dataclass
class Rendering:
    """A result as text and, when the front end renders it, HTML."""

    text: str
    html: str | None = None

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(self.text)

    def _repr_html_(self) -> str | None:
        return self.html

    def __str__(self) -> str:
        return self.text


def show(obj: Any) -> None:
    """Display ``obj`` through IPython (its ``_repr_*_`` methods pick the formats)."""
    from IPython.display import display

    display(obj)


def in_kernel(shell: Any) -> bool:
    """True under a Jupyter kernel (a front end renders HTML and updates displays)."""
    return getattr(shell, "kernel", None) is not None


class Progress:
    """A one-line progress bar: a display updated in place under a kernel, a carriage-return
    line on the terminal's stderr otherwise. Updates are at most every 0.2 s."""

    def __init__(self, shell: Any, title: str, enabled: bool = True) -> None:
        self.title = title
        self.enabled = enabled
        self.kernel = in_kernel(shell)
        self._handle: Any = None
        self._last = 0.0
        self._shown = False

    def _line(self, fraction: float | None, what: str) -> str:
        if fraction is None:  # work whose size is not known ahead (a tune search)
            return f"{self.title}: {what}"
        width = 24
        filled = round(max(0.0, min(1.0, fraction)) * width)
        return f"{self.title} [{'#' * filled}{'.' * (width - filled)}] {fraction:4.0%} {what}"

    def __call__(self, fraction: float | None, what: str) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self._last < 0.2 and (fraction is None or fraction < 1.0):
            return
        self._last = now
        line = self._line(fraction, what)
        if self.kernel:
            from IPython.display import display

            if self._handle is None:
                self._handle = display(Rendering(line), display_id=True)
            else:
                self._handle.update(Rendering(line))
        else:
            sys.stderr.write("\r" + line.ljust(79)[:79])
            sys.stderr.flush()
        self._shown = True

    def close(self) -> None:
        """Remove the bar (nothing is shown in its place)."""
        if not self._shown:
            return
        if self.kernel and self._handle is not None:
            self._handle.update({}, raw=True)  # an empty bundle: the front end shows nothing
        elif not self.kernel:
            sys.stderr.write("\r" + " " * 79 + "\r")
            sys.stderr.flush()
        self._shown = False

    def finish(self, result: Any) -> None:
        """Show ``result`` where the bar was (under a kernel), or below the cleared line."""
        if self.kernel and self._handle is not None and self._shown:
            self._handle.update(result)
            self._shown = False
            return
        self.close()
        show(result)
