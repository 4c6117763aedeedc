"""``tfperf tune``: the article's ladder (vectorise, tf.function, XLA, precision, lint's fixes)
as a search on the user's own function, shapes and machine. Every candidate is an edit of a
copy of the user's module, measured through :func:`tfperf.bench.compare` and checked against
the baseline's outputs; the winner comes back as a patch.

``tune`` and ``TuneResult`` load on first use: importing this package costs nothing.
"""

from __future__ import annotations

import sys
import types
from typing import Any

__all__ = ["TuneResult", "tune"]


def __getattr__(name: str) -> Any:
    if name == "tune":
        from tfperf.tune.search import tune

        return tune
    if name in ("TuneResult", "CandidateResult"):
        from tfperf.tune import result

        return getattr(result, name)
    raise AttributeError(f"module 'tfperf.tune' has no attribute {name!r}")


class _CallablePackage(types.ModuleType):
    """``tfperf.tune(fn, args)`` is ``tfperf.tune.tune(fn, args)``: the package and the
    function share the name, so the package is callable."""

    def __call__(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        return __getattr__("tune")(fn, *args, **kwargs)


sys.modules[__name__].__class__ = _CallablePackage
