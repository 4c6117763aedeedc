"""``tfperf tune``: the article's ladder (vectorise, tf.function, XLA, precision, lint's fixes)
as a search on the user's own function, shapes and machine. Every candidate is an edit of a
copy of the user's module, measured through :func:`tfperf.bench.compare` and checked against
the baseline's outputs; the winner comes back as a patch.

``tune`` and ``TuneResult`` load on first use: importing this package costs nothing.
"""

from __future__ import annotations

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
