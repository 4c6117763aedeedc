"""Facts about TensorFlow releases that both the checks and the planner stand on.

Plain constants, cheap to import (the ``--plan`` arguments need :data:`PLAN_OSES` on every
``tfperf`` start).
"""

from __future__ import annotations

# The platforms the planner plans for (its knowledge tables cover them).
PLAN_OSES = ("linux", "windows", "wsl")
# TensorFlow's last release with GPU support on native Windows (install docs; WSL2 after).
LAST_NATIVE_WINDOWS_GPU = "2.10"
# The first release installable with its CUDA libraries as `tensorflow[and-cuda]` (Linux).
FIRST_AND_CUDA = "2.14"
