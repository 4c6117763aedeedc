"""tfperf: why TensorFlow tensor code is slow, and how to make it fast.

Capabilities live in subpackages (``doctor``, ``lint``, ``bench``, ``profile``); all of them
share ``tfperf.core`` (one finding type, one measurement core, one way to render).
TensorFlow is imported lazily, only by the capabilities that run tensors, so the
top-level names below load their subpackage on first use.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

__all__ = ["__version__", "inputs", "load_ipython_extension", "profile", "serve_profiler",
           "tune", "unload_ipython_extension", "variant", "watch"]


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext tfperf``: the notebook magics (IPython is imported only now)."""
    importlib.import_module("tfperf.notebook.extension").load_ipython_extension(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    """``%unload_ext tfperf``."""
    importlib.import_module("tfperf.notebook.extension").unload_ipython_extension(ipython)


def __getattr__(name: str) -> Any:
    # ``tfperf.profile`` is a callable package (``tfperf.profile(fn, *args, steps=N)``).
    if name == "profile":
        return importlib.import_module("tfperf.profile")
    if name in ("variant", "inputs"):  # bench-file decorators: ``@tfperf.variant``
        return getattr(importlib.import_module("tfperf.bench.declare"), name)
    if name == "serve_profiler":  # one line in a job for `tfperf profile --remote`
        return importlib.import_module("tfperf.profile.server").serve_profiler
    if name == "tune":  # a callable package: ``tfperf.tune(fn, args)``, ``tfperf.tune.TuneResult``
        return importlib.import_module("tfperf.tune")
    if name == "watch":
        return importlib.import_module("tfperf.profile").watch
    raise AttributeError(f"module 'tfperf' has no attribute {name!r}")
