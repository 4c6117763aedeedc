"""A candidate must keep the function's contract: the same structure (container types, keys,
lengths), shapes and dtypes of every output as the baseline, whatever its values. A
reduced-precision candidate is judged against the float64 truth, where bench's equivalence
core lets a leaf's dtype differ (a bfloat16 result is judged by bfloat16's tolerance); the
caller of the function would still get a bfloat16 tensor where it had a float32 one
(``norms + tf.ones([128])`` then raises). So the contract is checked apart, by the same core
(:func:`tfperf.bench.equivalence.compare_outputs`, no reference) on the outputs with every
value zeroed: only what is not a value can differ, and the reason is bench's own
("output: dtype bfloat16, the baseline has float32")."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from tfperf.bench.equivalence import Equivalence, Ragged, Sparse, compare_outputs


def blank(snapshot: Any) -> Any:
    """``snapshot`` (bench's snapshot of an output) with every value zeroed, everything else
    (containers and their types, shapes, dtypes, ragged row lengths) kept."""
    if isinstance(snapshot, Mapping):
        out = {k: blank(v) for k, v in snapshot.items()}
        if type(snapshot) is dict:
            return out
        try:
            mapping_type: Any = type(snapshot)
            return mapping_type(out)
        except TypeError:
            return out
    if isinstance(snapshot, (list, tuple)):
        items = [blank(v) for v in snapshot]
        return type(snapshot)(*items) if hasattr(snapshot, "_fields") else type(snapshot)(items)
    if isinstance(snapshot, np.ndarray):
        return _zeros(snapshot)
    if isinstance(snapshot, Ragged):
        return Ragged(snapshot.row_lengths, _zeros(snapshot.flat_values))
    if isinstance(snapshot, Sparse):
        return Sparse(np.zeros_like(snapshot.indices), _zeros(snapshot.values),
                      snapshot.dense_shape)
    if isinstance(snapshot, (bool, int, float, complex, str, bytes)):
        return type(snapshot)()
    return snapshot  # None, or what the core cannot compare (it says so)


def _zeros(a: np.ndarray) -> np.ndarray:
    if a.dtype.kind == "O":  # strings: the core compares them as bytes/str
        return np.full(a.shape, b"", dtype=object)
    return np.zeros(a.shape, dtype=a.dtype)


def check(baseline: Any, candidate: Any) -> Equivalence:
    """The candidate's output against the baseline's, on everything but the values."""
    return compare_outputs(blank(baseline), blank(candidate))
