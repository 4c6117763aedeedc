"""Judging a reduced-precision candidate by its dtype's tolerance: its float32 outputs (a
Keras mixed policy keeps a float32 last layer, a loss) are rounded to the dtype it computed
in, so that :func:`tfperf.bench.equivalence.compare_outputs` applies that dtype's tolerance
to them, against the float64 truth or, for a stateful function, the float32 baseline rounded
the same way."""

from __future__ import annotations

from typing import Any

import numpy as np


def as_dtype(snapshot: Any, dtype: str) -> Any:
    """``snapshot`` (bench's snapshot of an output) with float32 arrays rounded to ``dtype``."""
    if isinstance(snapshot, dict):
        return {k: as_dtype(v, dtype) for k, v in snapshot.items()}
    if isinstance(snapshot, (list, tuple)) and type(snapshot) in (list, tuple):
        return type(snapshot)(as_dtype(v, dtype) for v in snapshot)
    if isinstance(snapshot, np.ndarray) and snapshot.dtype == np.float32:
        if dtype == "bfloat16":
            import ml_dtypes

            return snapshot.astype(ml_dtypes.bfloat16)
        return snapshot.astype(np.dtype(dtype))
    return snapshot
