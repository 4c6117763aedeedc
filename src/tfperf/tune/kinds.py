"""What kind of value each output leaf is: a tensor, a NumPy array, a NumPy or Python scalar.

Bench's snapshot (:func:`tfperf.bench.equivalence.snapshot`) turns every leaf into NumPy to
compare values, so a candidate returning a list of tensors where the user's function returns
a list of NumPy arrays compared equal (held-out round 7's c06: the caller's
``np.save(..., heatmaps)``, ``a[i] = ...`` then break). The kinds are taken from the live
outputs, before the snapshot, and the contract check compares them leaf by leaf."""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from tfperf.bench.equivalence import map_leaves

#: One output's leaves: (where, kind), in the order bench's core walks them.
Kinds = list[tuple[str, str]]


def kind_of(value: Any) -> str:
    """A leaf's kind, as the caller sees it (``tensor``, ``NumPy array``, ``NumPy float32``,
    ``Python float``...)."""
    if value is None:
        return "None"
    if isinstance(value, np.generic):  # before float: np.float64 is a float
        return f"NumPy {type(value).__name__}"
    if isinstance(value, (bool, int, float, complex, str, bytes)):
        return f"Python {type(value).__name__}"
    if isinstance(value, np.ndarray):
        return "NumPy array"
    tf = sys.modules.get("tensorflow")
    if tf is not None:
        # a variable reads as a tensor (eagerly ``v.assign_add(...)`` returns the variable, a
        # trace of it a tensor: the caller does tensor math with either)
        for name, cls in (("RaggedTensor", tf.RaggedTensor), ("SparseTensor", tf.SparseTensor),
                          ("IndexedSlices", tf.IndexedSlices), ("tensor", tf.Variable),
                          ("tensor", tf.Tensor)):
            if isinstance(value, cls):
                return name
    return type(value).__name__


def leaf_kinds(value: Any, where: str = "output") -> Kinds:
    """Every leaf of ``value`` with its kind (containers are bench's core's to compare)."""
    out: Kinds = []
    map_leaves(value, lambda leaf, at: out.append((at, kind_of(leaf))), where)
    return out


def compare_kinds(baseline: Kinds | None, candidate: Kinds | None) -> str | None:
    """Why the candidate's leaves are not of the baseline's kinds (None: they are, or one side
    was not recorded: a child process's outputs come back as snapshots)."""
    if not baseline or not candidate or len(baseline) != len(candidate):
        return None  # a different structure: bench's core says so, with where
    for (where, b), (_, c) in zip(baseline, candidate, strict=True):
        if b != c:
            return f"{where}: {_article(c)}, the baseline returns {_article(b)}"
    return None


def _article(kind: str) -> str:
    return ("an " if kind[0].lower() in "aeiou" else "a ") + kind
