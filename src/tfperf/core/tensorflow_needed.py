"""Whether TensorFlow is installed, asked before a command that runs tensors starts.

The base install (``pip install tfperf``) has neither TensorFlow nor NumPy: ``bench``,
``profile``, ``tune`` and the demo's timing steps then say so in one line, with the extra to
install, instead of failing deep inside on the first ``import numpy``. No third-party import
here.
"""

from __future__ import annotations

import importlib.util

INSTALL = "pip install 'tfperf[tf-cpu]' (or [tf], [gpu])"


def tensorflow_missing(why: str = "") -> str | None:
    """None where TensorFlow can be imported, else the one line that tells the user, with
    ``why`` (e.g. ``" (its profiler client does the capture)"``) after its first clause."""
    try:
        found = importlib.util.find_spec("tensorflow") is not None
    except (ImportError, ValueError):  # a broken install: importing it will say why
        found = True
    if found:
        return None
    return f"TensorFlow is not installed here{why}; install it with {INSTALL}"
