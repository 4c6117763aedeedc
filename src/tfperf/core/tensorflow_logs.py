"""TensorFlow's own start-up logging, kept out of tfperf's output.

Importing TensorFlow prints C++ notices to stderr (``All log messages before
absl::InitializeLog() is called...``, the CPU-feature and oneDNN notices, GPU device
creation, NUMA and TensorRT warnings). In ``bench``, ``profile`` and ``demo`` they would sit
between tfperf's own lines and say nothing about the user's code; the doctor is where they
matter, and it captures them in a subprocess of its own (at level 0) and explains them.

``TF_CPP_MIN_LOG_LEVEL`` alone no longer hides them: TF 2.21's wheels log through absl
before absl's logging is initialised, and those lines ignore the variable (measured here:
the absl line and the oneDNN INFO line print at level 3). So TensorFlow is imported once,
early, with file descriptor 2 pointed at a temporary file; errors and fatal lines are
written back, the INFO/WARNING notices are dropped.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
import tempfile

VARIABLE = "TF_CPP_MIN_LOG_LEVEL"
QUIET_LEVEL = "2"  # INFO and WARNING lines hidden; errors still shown
# Set beside VARIABLE when tfperf (not the user) chose the level: a child process tfperf
# starts (bench --isolate) inherits both and quiets its own start-up the same way.
QUIETED_BY_TFPERF = "TFPERF_QUIET_TF_STARTUP"

# absl/glog lines: "I0000 00:00:17... 123 port.cc:153] ..." or TF's older
# "2024-03-29 13:15:53.388917: I tensorflow/core/...". Only I and W are notices.
_NOTICE = re.compile(r"^(?:([IW])\d{4} |\S+ \S+: ([IW]) |(W)ARNING: All log messages before absl)")


def is_startup_notice(line: str) -> bool:
    """True for an INFO/WARNING line of TensorFlow's C++ logging (errors are kept)."""
    return bool(_NOTICE.match(line))


def _notice_level(line: str) -> str | None:
    """"I" or "W" for a start-up notice, None for any other line."""
    m = _NOTICE.match(line)
    return next(g for g in m.groups() if g) if m else None


def _hidden_by(level: str) -> str:
    """The notice levels TF_CPP_MIN_LOG_LEVEL=``level`` promises to hide: "" (0), "I" (1),
    "IW" (2 and up; a value TF cannot read hides nothing)."""
    try:
        n = int(level)
    except ValueError:
        return ""
    return "" if n <= 0 else "I" if n == 1 else "IW"


def quiet_tensorflow_startup(verbose: bool = False) -> None:
    """Hide TensorFlow's C++ INFO/WARNING start-up lines in this process, unless
    ``verbose``; where the user chose a level themselves, the lines that level hides (0:
    none). Imports TensorFlow now (when it is installed and not yet imported), since its
    notices print at import."""
    if verbose:
        return
    if VARIABLE in os.environ and os.environ.get(QUIETED_BY_TFPERF) != "1":
        # the user's level, honoured as TF 2.21 does not: its absl start-up lines print
        # whatever the variable says (a user with TF_CPP_MIN_LOG_LEVEL=2 saw them)
        hidden = _hidden_by(os.environ[VARIABLE])
        if not hidden:
            return
    else:
        os.environ[VARIABLE] = QUIET_LEVEL
        os.environ[QUIETED_BY_TFPERF] = "1"
        hidden = "IW"
    if "tensorflow" in sys.modules or importlib.util.find_spec("tensorflow") is None:
        return
    kept = _import_with_stderr_captured(hidden)
    if kept:
        sys.stderr.write(kept)
        sys.stderr.flush()


def quiet_child_startup() -> None:
    """In a child process tfperf started: quiet TensorFlow's start-up as the parent did.
    The parent's choice comes through the environment, so a parent run with ``--verbose``
    (or under the user's own ``TF_CPP_MIN_LOG_LEVEL``) has children that are not quieted."""
    if os.environ.get(QUIETED_BY_TFPERF) == "1":
        quiet_tensorflow_startup()


def last_line_worth_showing(stderr: str) -> str:
    """The last line of a child's stderr that is not a start-up notice ("" if none): what
    says why the child failed."""
    lines = [line for line in stderr.strip().splitlines()
             if line.strip() and not is_startup_notice(line)]
    return lines[-1] if lines else ""


def _import_with_stderr_captured(hidden: str = "IW") -> str:
    """Import TensorFlow with fd 2 redirected; return the captured lines worth keeping (all
    but the notices of the ``hidden`` levels)."""
    sys.stderr.flush()
    try:
        saved = os.dup(2)
    except OSError:  # no usable stderr (a daemon): import plainly
        import tensorflow
        return ""
    with tempfile.TemporaryFile(mode="w+b") as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            import tensorflow  # noqa: F401
        except Exception:  # a broken install: its error lines are kept below, and the
            pass           # command's own import says why (not a traceback from here)
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
        tmp.seek(0)
        text = tmp.read().decode("utf-8", "replace")
    return "".join(line for line in text.splitlines(keepends=True)
                   if (_notice_level(line) or "-") not in hidden)
