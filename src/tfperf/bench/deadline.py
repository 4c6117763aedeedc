"""A time limit on one call, so that a variant that runs away does not stop the others.

It uses ``SIGALRM``, which interrupts Python code between bytecodes: a Python loop of small
ops (the article's slow baseline) stops within a few ops. A single long native call (one huge
kernel) is interrupted only when it returns. Where signals are unavailable (Windows, a
non-main thread) no limit applies, and the caller is told so by :func:`limits_supported`.

The timeout is raised only in code that could have raised by itself: the user's code, a
candidate tfperf wrote, tfperf's own loops. Raised at a random bytecode inside TensorFlow's
Python layer (half-way through building a tensor, a trace, a context switch), it left the
runtime's state half-updated, and the process crashed with a segmentation fault minutes
later in an unrelated call (seen in the test suite under load, reproduced by interrupting
eager ``map_fn`` calls). So when the alarm lands in library code (site-packages, the
standard library, a ``__del__``), a profile hook waits for the first safe place: a call, a
return or a C call in a safe frame, or a library call returning into one (the library's
work is then complete, and the timeout reads as if that call had raised it). Two places
look safe and are not: the return of a library ``__enter__`` (raised there, the ``with``
never calls ``__exit__``, and TensorFlow's stacks of name scopes, tapes and stack-trace
mappers stay pushed: "Concurrent access?" on a later trace), and code generated from a
string (a namedtuple's ``__new__``, a dataclass's ``__init__``: ``<string>``), which is as
safe as the code that called it.
"""

from __future__ import annotations

import inspect
import os
import signal
import sys
import sysconfig
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from types import FrameType

_GENERATOR_FLAGS = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR


class CallTimeout(BaseException):
    """Raised inside a call that outlived its limit. A BaseException, so that the variant's
    own ``except Exception`` does not swallow it."""


def limits_supported() -> bool:
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


def _library_dirs() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    dirs = {paths[key] for key in ("stdlib", "platstdlib", "purelib", "platlib") if key in paths}
    dirs |= {p for p in sys.path if p and os.path.basename(p) in ("site-packages", "dist-packages")}
    out = set()
    for d in dirs:
        out.add(os.path.join(os.path.normcase(d), ""))
        out.add(os.path.join(os.path.normcase(os.path.realpath(d)), ""))
    return tuple(sorted(out))


_LIBRARY_DIRS = _library_dirs()
_OWN_DIR = os.path.join(os.path.normcase(os.path.dirname(os.path.dirname(__file__))), "")


@lru_cache(maxsize=4096)
def _file_is_safe(filename: str) -> bool:
    """Whether an exception may be raised at any bytecode of this file's code."""
    if filename.startswith("<frozen"):
        return False  # importlib: a module left half-imported
    if filename.startswith("<"):
        return True  # exec'd or typed source: a candidate, a notebook cell
    name = os.path.normcase(filename)
    if os.path.normcase(os.path.abspath(__file__)) == os.path.abspath(name):
        return False  # this module's own bookkeeping
    if name.startswith(_OWN_DIR):
        return True  # tfperf's Python loops hold no native state between bytecodes
    real = os.path.normcase(os.path.realpath(name))
    return not any(name.startswith(d) or real.startswith(d) for d in _LIBRARY_DIRS)


# Sources typed by a person: a console, a terminal IPython cell. Any other "<...>" name is
# code a library generated from a string (namedtuple, dataclasses, attrs).
_TYPED_SOURCES = ("<stdin>", "<console>", "<ipython-input-")
_ENTER_NAMES = frozenset({"__enter__", "__aenter__"})


def safe_to_raise(frame: FrameType | None) -> bool:
    """Whether the timeout may be raised in ``frame`` (the one the alarm interrupted)."""
    for _ in range(64):
        if frame is None:
            return True  # the outermost code: a script's top level, `python -c`
        code = frame.f_code
        if code.co_name == "__del__":
            return False  # raised there, it is printed and lost, and the finaliser is cut short
        name = code.co_filename
        if not name.startswith("<") or name.startswith(("<frozen", *_TYPED_SOURCES)):
            return _file_is_safe(name)
        frame = frame.f_back  # generated from a string: as safe as its caller
    return False


def _safe_event(frame: FrameType, event: str) -> bool:
    """Whether a profile event is a place the timeout may be raised."""
    if safe_to_raise(frame):
        return True
    # a library function returning (not a generator pausing) into a safe caller: its work
    # is done, and raising here reads as that call raising. Not an __enter__: the `with`
    # would take it as failed and never call the __exit__ that undoes its work.
    code = frame.f_code
    return (event == "return" and frame.f_back is not None
            and not code.co_flags & _GENERATOR_FLAGS and code.co_name not in _ENTER_NAMES
            and safe_to_raise(frame.f_back))


@contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    if not seconds or seconds <= 0 or not limits_supported():
        yield
        return

    message = f"did not finish within {seconds:g} s"
    active = [True]
    profile_before = sys.getprofile()

    def watch(frame: FrameType, event: str, arg: object) -> None:
        if active[0] and _safe_event(frame, event):
            active[0] = False
            raise CallTimeout(message)  # CPython drops the hook when it raises

    def on_alarm(signum: int, frame: FrameType | None) -> None:
        if not active[0]:
            return  # the call already returned: an alarm delivered late
        if safe_to_raise(frame):
            active[0] = False
            raise CallTimeout(message)
        sys.setprofile(watch)  # in library code: raise at the first safe place instead

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        active[0] = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if sys.getprofile() is not profile_before:
            sys.setprofile(profile_before)
