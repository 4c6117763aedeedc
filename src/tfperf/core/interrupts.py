"""SIGTERM raised as an interrupt: `timeout 600 tfperf profile train.py`, a cancelled CI job
or `kill` end a run the way Ctrl-C does, through the same ``except KeyboardInterrupt`` paths
(temporary folders removed, children stopped, the report of what ran), not silently.

Python's default SIGTERM ends the process at once: no ``finally``, no ``atexit``, no word.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


class Terminated(KeyboardInterrupt):
    """The process was sent SIGTERM."""


def _raise_terminated(signum: int, frame: FrameType | None) -> None:
    raise Terminated()


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM raises :class:`Terminated` (a ``KeyboardInterrupt``)."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers can only be set from the main thread
        return
    previous = signal.getsignal(signal.SIGTERM)
    signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        # None: a handler set outside Python, which cannot be put back; the default then
        signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)


def interrupt_name(exc: BaseException) -> str:
    return "SIGTERM" if isinstance(exc, Terminated) else "Ctrl-C"


def interrupt_status(exc: BaseException) -> int:
    """The shell's status for a run ended by the signal: 128 + its number."""
    return 128 + (signal.SIGTERM if isinstance(exc, Terminated) else signal.SIGINT)
