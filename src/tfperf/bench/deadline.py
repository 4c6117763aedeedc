"""A time limit on one call, so that a variant that runs away does not stop the others.

It uses ``SIGALRM``, which interrupts Python code between bytecodes: a Python loop of small
ops (the article's slow baseline) stops within one op. A single long native call (one huge
kernel) is interrupted only when it returns. Where signals are unavailable (Windows, a
non-main thread) no limit applies, and the caller is told so by :func:`limits_supported`.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class CallTimeout(BaseException):
    """Raised inside a call that outlived its limit. A BaseException, so that the variant's
    own ``except Exception`` does not swallow it."""


def limits_supported() -> bool:
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


@contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    if not seconds or seconds <= 0 or not limits_supported():
        yield
        return

    def on_alarm(signum: int, frame: object) -> None:
        raise CallTimeout(f"did not finish within {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
