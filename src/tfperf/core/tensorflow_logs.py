"""TensorFlow's own start-up logging, kept out of tfperf's output.

Importing TensorFlow prints C++ notices to stderr (``All log messages before
absl::InitializeLog() is called...``, the CPU-feature and oneDNN notices, GPU device
creation, NUMA and TensorRT warnings). In ``bench``, ``profile`` and ``demo`` they would sit
between tfperf's own lines and say nothing about the user's code; the doctor is where they
matter, and it captures them in a subprocess of its own (at level 0) and explains them.
"""

from __future__ import annotations

import os

VARIABLE = "TF_CPP_MIN_LOG_LEVEL"
QUIET_LEVEL = "2"  # INFO and WARNING lines hidden; errors still shown


def quiet_tensorflow_startup(verbose: bool = False) -> None:
    """Hide TensorFlow's C++ INFO/WARNING lines in this process (before TF is imported),
    unless ``verbose`` or the user chose a level themselves."""
    if not verbose:
        os.environ.setdefault(VARIABLE, QUIET_LEVEL)
