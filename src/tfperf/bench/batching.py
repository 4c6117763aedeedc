"""Quick mode's batch slicing, written once: a slow variant runs on the first items of axis 0.

``quick_batch=k`` on a variant means: under ``--quick``, call it on the first ``k`` items of
axis 0 of its *first* argument (the other arguments are shared, such as weights), and scale
its time by ``full / k``. ``tfperf bench``, the ``--isolate`` child and ``tfperf profile
FILE.py:VARIANT --quick`` all slice through :func:`quick_slice`, so they run the same inputs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def leading_size(value: Any) -> int | None:
    """The static size of axis 0 of an array-like, or None (a scalar, an unknown size)."""
    shape = getattr(value, "shape", None)
    try:
        return int(shape[0]) if shape is not None and len(shape) else None
    except (TypeError, ValueError):
        return None


def quick_slice(args: Sequence[Any], quick_batch: int | None) -> tuple[tuple[Any, ...], int | None]:
    """``(args with the first sliced to quick_batch items, full size)``; unchanged when the
    first argument has no more than ``quick_batch`` items (then the size is None)."""
    args = tuple(args)
    if not quick_batch or not args:
        return args, None
    full = leading_size(args[0])
    if full is None or full <= quick_batch:
        return args, None
    return (args[0][:quick_batch], *args[1:]), full


def slice_tree(value: Any, k: int) -> Any:
    """The first ``k`` items along axis 0 of every array leaf of a nesting of lists/dicts."""
    if isinstance(value, Mapping):
        return {key: slice_tree(v, k) for key, v in value.items()}
    if isinstance(value, (list, tuple)):
        items = [slice_tree(v, k) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)
    if leading_size(value) is None:
        return value
    try:
        return value[:k]
    except (TypeError, ValueError):  # no slicing (a SparseTensor): compared whole
        return value


__all__ = ["leading_size", "quick_slice", "slice_tree"]
