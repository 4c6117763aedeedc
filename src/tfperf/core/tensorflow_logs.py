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

# absl/glog lines: "I0000 00:00:17... 123 port.cc:153] ..." or TF's older
# "2024-03-29 13:15:53.388917: I tensorflow/core/...". Only I and W are notices.
_NOTICE = re.compile(r"^(?:[IW]\d{4} |\S+ \S+: [IW] |WARNING: All log messages before absl)")


def is_startup_notice(line: str) -> bool:
    """True for an INFO/WARNING line of TensorFlow's C++ logging (errors are kept)."""
    return bool(_NOTICE.match(line))


def quiet_tensorflow_startup(verbose: bool = False) -> None:
    """Hide TensorFlow's C++ INFO/WARNING start-up lines in this process, unless
    ``verbose`` or the user chose a level themselves. Imports TensorFlow now (when it is
    installed and not yet imported), since its notices print at import."""
    if verbose or VARIABLE in os.environ:
        return
    os.environ[VARIABLE] = QUIET_LEVEL
    if "tensorflow" in sys.modules or importlib.util.find_spec("tensorflow") is None:
        return
    kept = _import_with_stderr_captured()
    if kept:
        sys.stderr.write(kept)
        sys.stderr.flush()


def _import_with_stderr_captured() -> str:
    """Import TensorFlow with fd 2 redirected; return the captured lines worth keeping."""
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
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
        tmp.seek(0)
        text = tmp.read().decode("utf-8", "replace")
    return "".join(line for line in text.splitlines(keepends=True)
                   if not is_startup_notice(line))
