"""``tfperf profile``: where the time goes at run time, and why.

Python API (TensorFlow is imported only when a watch starts)::

    from tfperf.profile import watch, profile

    with watch() as w:
        train()
    w.report()                                # prints, and returns a ProfileReport

    report = profile(step_fn, x, y, steps=5)  # warm-up + 5 captured steps
    print(report)                             # report.to_json(), report.findings

The names are resolved lazily so that importing ``tfperf.profile.command`` (on every
``tfperf`` start) loads nothing heavy. The package itself is callable, so that
``tfperf.profile(fn, *args, steps=N)`` works even though ``tfperf.profile`` names this package.
"""

from __future__ import annotations

import sys
import types
from typing import Any

__all__ = ["ProfileReport", "Watcher", "profile", "watch"]

_EXPORTS = {
    "watch": "tfperf.profile.watcher",
    "Watcher": "tfperf.profile.watcher",
    "profile": "tfperf.profile.runner",
    "ProfileReport": "tfperf.profile.report",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'tfperf.profile' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)


class _CallablePackage(types.ModuleType):
    """``tfperf.profile(fn, *args, steps=N)`` is ``tfperf.profile.profile(...)``."""

    def __call__(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        return __getattr__("profile")(fn, *args, **kwargs)


sys.modules[__name__].__class__ = _CallablePackage
