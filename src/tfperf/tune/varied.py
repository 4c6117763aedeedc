"""A second set of inputs for the equivalence check, derived from the user's so they stay valid.

User inputs are often uniform (``tf.ones``, ``tf.range``, images of one constant, identical
rows, images that all reach 255), and on such inputs a rewrite that mixes examples (the max
of the whole batch for each example's max), drops an axis's variation (a mean over the wrong
axis) or swaps axes can agree with the baseline by accident. So every candidate is also
compared with the baseline on a varied copy of the inputs, same shapes and dtypes:

- floats (and complex): each element scaled by a factor that changes with its index along
  axis 0 and, differently, along the last axis; a non-constant array keeps its range and
  sign (``lo + (x - lo) · f``, ``f`` in [0.25, 1]); a constant one is scaled by [1, 2] (its
  sign kept, zero stays zero); whole-number arrays (labels, counts) stay whole, and a
  two-valued one (a 0/1 mask) is rolled as booleans are;
- small integer data (``uint8``, ``int8``, ``uint16``, ``int16``: pixels) like floats,
  rounded, within their own range; every scaled array is clipped to its dtype's range (a
  constant 255 ``uint8`` image stays 255, a ``float16`` one does not overflow);
- integer indices (``int32``, ``int64``...) and booleans rolled by one along axis 0 and the
  last axis: the same values, never out of range;
- integer arguments (a Python int, a NumPy integer or a 0-d integer tensor passed as an
  argument itself: a size, a count, ``k``) moved by one towards zero, sign kept (``k`` to
  ``k - 1``, ``-k`` to ``-k + 1``; 1 to 2, -1 to -2): a rewrite that bakes the value into a
  shape, a slice or a range (``x`` for ``x[:k]`` where the measured ``k`` is the row count)
  then disagrees. That is a second set (:func:`vary_inputs` ``ints=True``), never the first
  (``ints=False``): a changed ``k`` may empty the output, where every rewrite agrees; the
  search compares there only where the baseline's output is non-empty and finite;
- other scalars, strings, floats, variables and models as they are.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from tfperf.bench.equivalence import map_leaves

#: Integer dtypes taken as data (pixels) and varied like floats; wider ones are indices.
DATA_INTS = frozenset({"uint8", "int8", "uint16", "int16"})


def vary(value: Any) -> Any:
    """``value`` (a structure of inputs) with every array leaf varied (module docstring)."""
    return map_leaves(value, lambda leaf, _: _vary_leaf(leaf))


def vary_inputs(args: tuple[Any, ...], kwargs: dict[str, Any], ints: bool = True
                ) -> tuple[tuple[Any, ...], dict[str, Any], list[str]]:
    """The call's inputs varied: every array leaf (:func:`vary`) and, with ``ints``, every
    integer argument (module docstring). Also the integer arguments changed, as
    ``"k: 64 -> 63"`` (position ``#0`` for a positional one), for the notes."""
    v_args, v_kwargs = vary((tuple(args), dict(kwargs)))
    changed: list[str] = []
    if not ints:
        return tuple(v_args), dict(v_kwargs), changed
    out_args = list(v_args)
    for i, a in enumerate(args):
        new = other_int(a)
        if new is not None:
            out_args[i] = new
            changed.append(f"#{i}: {_int_of(a)} -> {_int_of(new)}")
    for k, a in kwargs.items():
        new = other_int(a)
        if new is not None:
            v_kwargs[k] = new
            changed.append(f"{k}: {_int_of(a)} -> {_int_of(new)}")
    return tuple(out_args), dict(v_kwargs), changed


def other_int(value: Any) -> Any:
    """Another value of an integer argument, same type and sign, one step towards zero
    (away from it at ±1, which has no smaller value of that sign); None for anything else
    (bools, zero, arrays, floats, an int subclass such as an ``IntEnum``)."""
    if isinstance(value, (bool, np.bool_)):
        return None
    if type(value) is int or isinstance(value, np.integer):  # a subclass (IntEnum): kept,
        n = int(value)  # ``Mode(m)`` may not exist
        if n == 0:
            return None
        m = n - 1 if n > 1 else n + 1 if n < -1 else 2 * n
        return type(value)(m)
    tf = sys.modules.get("tensorflow")
    if tf is not None and isinstance(value, tf.Tensor) and not isinstance(value, tf.Variable) \
            and value.shape.rank == 0 and value.dtype.is_integer:
        m = other_int(int(value.numpy()))
        if m is None:
            return None
        info = np.iinfo(value.dtype.as_numpy_dtype)
        return tf.constant(m, dtype=value.dtype) if info.min <= m <= info.max else None
    return None


def _int_of(value: Any) -> int:
    tf = sys.modules.get("tensorflow")
    if tf is not None and isinstance(value, tf.Tensor):
        return int(value.numpy())
    return int(value)


def _vary_leaf(value: Any) -> Any:
    tf = sys.modules.get("tensorflow")
    if isinstance(value, np.ndarray):
        return vary_array(value)
    if tf is not None and isinstance(value, tf.Tensor) and not isinstance(value, tf.Variable):
        if value.dtype == tf.string or value.dtype == tf.resource or value.dtype == tf.variant:
            return value
        return tf.constant(vary_array(value.numpy()), dtype=value.dtype)
    return value


def vary_array(x: np.ndarray) -> np.ndarray:
    """One array varied, same shape and dtype (module docstring)."""
    if x.ndim == 0 or x.size < 2:
        return x
    kind = x.dtype.kind
    if kind == "b" or (kind in "iu" and x.dtype.name not in DATA_INTS):
        return _rolled(x)
    if kind in "iu":
        return _within(_scaled(x.astype(np.float64), whole=True), x.dtype)
    if kind == "c":
        f = factors(x.shape)
        return (x * f).astype(x.dtype)
    if kind == "f" or x.dtype.kind == "V":  # "V": bfloat16 and friends (ml_dtypes)
        try:
            wide = x.astype(np.float64)
        except (TypeError, ValueError):
            return x
        finite = wide[np.isfinite(wide)]
        whole = finite.size > 0 and bool(np.all(finite == np.round(finite)))
        if whole and np.unique(finite).size == 2:  # a 0/1 mask: permuted, as booleans
            return _rolled(x)
        return _within(_scaled(wide, whole=whole), x.dtype)
    return x


def _within(y: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``y`` cast to ``dtype`` after clipping to its range: a constant scaled up by as much as
    2 would wrap (uint8 255 → 62, int8 -100 → 112) or overflow (float16 40000 → inf)."""
    info: np.iinfo | np.finfo | None
    try:
        info = np.iinfo(dtype) if dtype.kind in "iu" else np.finfo(dtype)
    except (TypeError, ValueError):  # bfloat16 and friends: float32's range, not reached by 2x
        info = None
    if info is not None:
        y = np.where(np.isfinite(y), np.clip(y, info.min, info.max), y)  # inf, nan kept
    return y.astype(dtype)


def factors(shape: tuple[int, ...]) -> np.ndarray:
    """Per-index factors in [0.25, 1]: one pattern along axis 0 times another along the last
    axis (golden-ratio steps: no two neighbours alike, and the two patterns differ, so a
    symmetric input does not stay symmetric)."""
    first = 1.0 - 0.5 * ((np.arange(shape[0]) * 0.6180339887) % 1.0)
    last = 1.0 - 0.5 * ((np.arange(shape[-1]) * 0.3819660113 + 0.5) % 1.0)
    f = first.reshape((shape[0],) + (1,) * (len(shape) - 1))
    return f * last


def _scaled(x: np.ndarray, whole: bool) -> np.ndarray:
    f = factors(x.shape)
    ok = np.isfinite(x)
    finite = x[ok]
    if finite.size == 0:
        return x
    lo, hi = float(finite.min()), float(finite.max())
    # range and sign kept (lo ≤ y ≤ hi); one constant (ones, a plain image): scaled by
    # [1, 2), its sign kept
    y = lo + (x - lo) * f if hi > lo else x * (2.0 - f)
    if whole:  # labels, counts: lo and hi are whole, rounding stays within
        y = np.round(y)
    return np.where(ok, y, x)


def _rolled(x: np.ndarray) -> np.ndarray:
    out = np.roll(x, 1, axis=0)
    return np.roll(out, 1, axis=-1) if x.ndim > 1 else out


def nonfinite(value: Any) -> int:
    """Non-finite float elements in a snapshot (NumPy leaves in containers)."""
    counts: list[int] = []
    map_leaves(value, lambda leaf, _: counts.append(_nonfinite_leaf(leaf)))
    return sum(counts)


def _nonfinite_leaf(value: Any) -> int:
    arr = value if isinstance(value, (np.ndarray, np.generic)) else None
    if arr is None and isinstance(value, float):
        arr = np.asarray(value)
    if arr is None or np.asarray(arr).dtype.kind not in "fc":
        return 0
    return int(np.size(arr) - np.count_nonzero(np.isfinite(arr)))
