"""Do two variants compute the same thing? Structure, shapes, dtypes, and every element's value.

The rule, per element of every floating array leaf::

    |a - b| <= atol + rtol * |b|          (b: the baseline's value, a: the variant's)

``rtol`` and ``atol`` default by dtype (:data:`DEFAULT_TOLERANCES`). The default ``atol`` is a
floor proportional to the leaf's largest baseline magnitude, ``atol_scale * max|b|``: variants
that sum in another order (a loop, ``reduce_sum``, ``einsum``, XLA) differ by rounding that
grows with the terms summed, which an element near zero (a sum that cancels) does not show.
The floor is a few dozen ulps of the largest element (float32: 8e-6 ≈ 64 ulps), so an element
that is wrong by more than that fails, however small it is; a given ``atol`` replaces it.

Everything else must match exactly: container types (a tuple is not a list, dict keys, None),
shapes, dtypes, integer/bool/string values, where NaNs are, where and which infinities are.
``RaggedTensor`` (row lengths exactly, flat values by the rule), ``SparseTensor`` (shape and
indices exactly, values by the rule), ``IndexedSlices`` (their dense value), ``tf.Variable``
and Python scalars are compared by value. What the checker does not know is *not* passed: the
result is ``equivalent=None`` with the reason.

Outputs must be snapshotted (:func:`snapshot`) right after the call that made them: a variant
returning a ``tf.Variable`` it keeps updating would otherwise be read after later calls.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

#: dtype → (rtol, atol_scale): atol = atol_scale · max|baseline| of the leaf unless given.
DEFAULT_TOLERANCES: dict[str, tuple[float, float]] = {
    "float16": (1e-2, 4e-3),
    "bfloat16": (3e-2, 1.6e-2),
    "float32": (1e-4, 8e-6),
    "float64": (1e-9, 1e-12),
    "complex64": (1e-4, 8e-6),
    "complex128": (1e-9, 1e-12),
}


# ---------------------------------------------------------------------------------------------
# snapshots: outputs as host values, taken right after the call


@dataclass(frozen=True)
class Ragged:
    """A RaggedTensor: the row lengths of each ragged dimension, and the flat values."""

    row_lengths: tuple[np.ndarray, ...]
    flat_values: np.ndarray


@dataclass(frozen=True)
class Sparse:
    """A SparseTensor in canonical (row-major) index order."""

    indices: np.ndarray
    values: np.ndarray
    dense_shape: tuple[int, ...]


@dataclass(frozen=True)
class Opaque:
    """A value the checker cannot compare."""

    type_name: str


def _tf() -> Any | None:
    return sys.modules.get("tensorflow")


def _leaf(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
        return value
    if isinstance(value, (np.ndarray, np.generic)):
        return np.array(value)  # a copy: the caller may reuse its buffer
    if isinstance(value, (Ragged, Sparse, Opaque)):
        return value
    tf = _tf()
    if tf is not None:
        if isinstance(value, tf.RaggedTensor):
            lengths = tuple(np.asarray(r.numpy()) for r in value.nested_row_lengths())
            return Ragged(lengths, np.asarray(value.flat_values.numpy()))
        if isinstance(value, tf.SparseTensor):
            value = tf.sparse.reorder(value)
            return Sparse(np.asarray(value.indices.numpy()), np.asarray(value.values.numpy()),
                          tuple(int(d) for d in value.dense_shape.numpy()))
        if isinstance(value, tf.IndexedSlices):
            if value.dense_shape is None:
                return Opaque("IndexedSlices without a dense_shape")
            return np.asarray(tf.convert_to_tensor(value).numpy())
    numpy = getattr(value, "numpy", None)
    if callable(numpy):  # tf.Tensor, tf.Variable (its value now), and the like
        try:
            return np.array(numpy())
        except Exception:  # symbolic tensors and friends: not comparable
            return Opaque(type(value).__name__)
    return Opaque(type(value).__name__)


def map_leaves(value: Any, fn: Callable[[Any, str], Any], where: str = "output") -> Any:
    """``value`` with each leaf replaced by ``fn(leaf, where)`` (``where``: its path,
    ``output[0]['k']``); containers (mappings, lists, tuples) kept with their exact types."""
    if isinstance(value, Mapping):
        out = {k: map_leaves(v, fn, f"{where}[{k!r}]") for k, v in value.items()}
        if type(value) is dict:
            return out
        try:  # OrderedDict and the like keep their type: a dict is not an OrderedDict
            mapping_type: Any = type(value)
            return mapping_type(out)
        except TypeError:
            return out
    if isinstance(value, (list, tuple)):
        items = [map_leaves(v, fn, f"{where}[{i}]") for i, v in enumerate(value)]
        if hasattr(value, "_fields"):  # namedtuple
            return type(value)(*items)
        return type(value)(items)
    return fn(value, where)


def snapshot(value: Any) -> Any:
    """Host copy of an output: containers kept with their exact types, leaves as NumPy."""
    return map_leaves(value, lambda leaf, _: _leaf(leaf))


# ---------------------------------------------------------------------------------------------
# the verdict


@dataclass
class Worst:
    """The element that came closest to (or went furthest past) its tolerance."""

    path: str
    index: list[int]
    expected: Any
    actual: Any
    abs_err: float | None
    allowed: float | None

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "index": self.index, "expected": _json_num(self.expected),
                "actual": _json_num(self.actual), "abs_err": _json_num(self.abs_err),
                "allowed": _json_num(self.allowed)}

    def where(self) -> str:
        return self.path + (str(self.index) if self.index else "")


@dataclass
class Equivalence:
    """``equivalent``: True, False, or None (could not be compared; ``reason`` says why)."""

    equivalent: bool | None
    reason: str = ""
    max_abs_err: float | None = None
    max_rel_err: float | None = None  # max |a-b| over max|b|, the largest leaf's
    tolerance_used: float | None = None  # worst |a-b| / allowed; ≤ 1 passes
    worst: Worst | None = None
    tolerance: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"equivalent": self.equivalent, "reason": self.reason,
                "max_abs_err": _json_num(self.max_abs_err),
                "max_rel_err": _json_num(self.max_rel_err),
                "tolerance_used": _json_num(self.tolerance_used),
                "worst": self.worst.to_dict() if self.worst else None,
                "tolerance": self.tolerance}


def _json_num(x: Any) -> Any:
    """Numbers JSON can hold; infinities and NaN as their names, complex as a string."""
    if isinstance(x, (np.generic,)):
        x = x.item()
    if isinstance(x, complex):
        return str(x)
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
    return x


def dtype_name(arr: np.ndarray) -> str:
    # TF's bfloat16 reaches NumPy as ml_dtypes.bfloat16, whose name is "bfloat16".
    return str(arr.dtype)


def tolerance_for(dtype: str, rtol: float | None = None,
                  atol: float | None = None) -> tuple[float, float | None, float]:
    """(rtol, absolute atol or None, atol_scale) for ``dtype``; given values win."""
    default_rtol, scale = DEFAULT_TOLERANCES.get(dtype, (0.0, 0.0))
    return (default_rtol if rtol is None else rtol), atol, scale


def describe_tolerance(dtype: str, rtol: float | None = None, atol: float | None = None) -> str:
    r, a, scale = tolerance_for(dtype, rtol, atol)
    floor = f"{a:.3g}" if a is not None else f"{scale:.3g}·max|b|"
    return f"{dtype}: |a−b| ≤ {floor} + {r:.3g}·|b|"


def compare_outputs(baseline: Any, candidate: Any, rtol: float | None = None,
                    atol: float | None = None, reference: Any = None) -> Equivalence:
    """Compare two outputs (raw or snapshots); ``rtol``/``atol`` None: by dtype.

    ``reference``: the baseline's output computed in float64 (same structure). Then values
    are judged against it (the truth), with the tolerance of the candidate's dtype; structure
    and dtypes are still checked against ``baseline``.
    """
    b, c = snapshot(baseline), snapshot(candidate)
    ref = snapshot(reference) if reference is not None else None
    checker = _Checker(rtol, atol)
    parts = checker.compare(b, c, ref, "output")
    result = _merge(parts)
    result.tolerance = "; ".join(sorted(checker.tolerances))
    return result


class _Checker:
    def __init__(self, rtol: float | None, atol: float | None) -> None:
        self.rtol, self.atol = rtol, atol
        self.tolerances: set[str] = set()

    def compare(self, b: Any, c: Any, ref: Any, where: str) -> list[Equivalence]:
        if isinstance(b, (Mapping, list, tuple)) or isinstance(c, (Mapping, list, tuple)):
            return self._containers(b, c, ref, where)
        if isinstance(b, Opaque) or isinstance(c, Opaque):
            what = b if isinstance(b, Opaque) else c
            return [Equivalence(None, f"{where}: cannot compare a {what.type_name}")]
        if b is None or c is None:
            if b is None and c is None:
                return [Equivalence(True, max_abs_err=0.0)]
            return [Equivalence(False, f"{where}: {_kind(c)}, the baseline has {_kind(b)}")]
        if isinstance(b, Ragged) or isinstance(c, Ragged):
            return self._ragged(b, c, ref, where)
        if isinstance(b, Sparse) or isinstance(c, Sparse):
            return self._sparse(b, c, ref, where)
        if not isinstance(b, np.ndarray) or not isinstance(c, np.ndarray):
            return [self._scalars(b, c, ref, where)]
        r = ref if isinstance(ref, np.ndarray) else None
        return [self._arrays(b, c, r, where)]

    # -- containers and composites ------------------------------------------------------------

    def _containers(self, b: Any, c: Any, ref: Any, where: str) -> list[Equivalence]:
        if type(b) is not type(c):
            return [Equivalence(False, f"{where}: {_kind(c)}, the baseline has {_kind(b)}")]
        if isinstance(b, Mapping):
            if set(b) != set(c):
                extra = sorted(map(str, set(c) - set(b)))
                missing = sorted(map(str, set(b) - set(c)))
                said = ", ".join(([f"extra keys {extra}"] if extra else []) +
                                 ([f"missing keys {missing}"] if missing else []))
                return [Equivalence(False, f"{where}: {said}")]
            out: list[Equivalence] = []
            for k in b:
                sub = ref[k] if isinstance(ref, Mapping) and k in ref else None
                out += self.compare(b[k], c[k], sub, f"{where}[{k!r}]")
            return out
        if len(b) != len(c):
            return [Equivalence(False, f"{where}: length {len(c)}, the baseline's is {len(b)}")]
        out = []
        for i, (x, y) in enumerate(zip(b, c, strict=True)):
            sub = ref[i] if isinstance(ref, (list, tuple)) and len(ref) == len(b) else None
            out += self.compare(x, y, sub, f"{where}[{i}]")
        return out

    def _ragged(self, b: Any, c: Any, ref: Any, where: str) -> list[Equivalence]:
        if not (isinstance(b, Ragged) and isinstance(c, Ragged)):
            return [Equivalence(False, f"{where}: {_kind(c)}, the baseline has {_kind(b)}")]
        if len(b.row_lengths) != len(c.row_lengths):
            return [Equivalence(False, f"{where}: {len(c.row_lengths)} ragged dimensions, "
                                       f"the baseline has {len(b.row_lengths)}")]
        for level, (rb, rc) in enumerate(zip(b.row_lengths, c.row_lengths, strict=True)):
            if rb.shape != rc.shape:
                return [Equivalence(False, f"{where}: {rc.size} rows at ragged level {level}, "
                                           f"the baseline has {rb.size}")]
            diff = np.flatnonzero(rb != rc)
            if diff.size:
                i = int(diff[0])
                return [Equivalence(
                    False, f"{where}: row {i} has {int(rc[i])} values at ragged level {level}, "
                           f"the baseline's has {int(rb[i])}",
                    worst=Worst(f"{where}.row_lengths[{level}]", [i], int(rb[i]), int(rc[i]),
                                None, None))]
        r = ref.flat_values if isinstance(ref, Ragged) else None
        return [self._arrays(b.flat_values, c.flat_values, r, f"{where}.flat_values")]

    def _sparse(self, b: Any, c: Any, ref: Any, where: str) -> list[Equivalence]:
        if not (isinstance(b, Sparse) and isinstance(c, Sparse)):
            return [Equivalence(False, f"{where}: {_kind(c)}, the baseline has {_kind(b)}")]
        if b.dense_shape != c.dense_shape:
            return [Equivalence(False, f"{where}: dense shape {list(c.dense_shape)}, "
                                       f"the baseline has {list(b.dense_shape)}")]
        if b.indices.shape != c.indices.shape or not np.array_equal(b.indices, c.indices):
            return [Equivalence(False, f"{where}: {len(c.indices)} stored values at other "
                                       f"indices than the baseline's {len(b.indices)}")]
        r = ref.values if isinstance(ref, Sparse) else None
        return [self._arrays(b.values, c.values, r, f"{where}.values")]

    # -- leaves -----------------------------------------------------------------------------

    def _scalars(self, b: Any, c: Any, ref: Any, where: str) -> Equivalence:
        if type(b) is not type(c):
            return Equivalence(False, f"{where}: {_kind(c)}, the baseline has {_kind(b)}")
        if isinstance(b, float):
            return self._arrays(np.array(b), np.array(c),
                                np.array(ref) if isinstance(ref, float) else None, where)
        if isinstance(b, complex):
            return self._arrays(np.array(b), np.array(c), None, where)
        if b == c:
            return Equivalence(True, max_abs_err=0.0 if isinstance(b, (int, bool)) else None)
        return Equivalence(False, f"{where}: {c!r}, the baseline has {b!r}",
                           worst=Worst(where, [], _plain(b), _plain(c), None, None))

    def _arrays(self, b: np.ndarray, c: np.ndarray, ref: np.ndarray | None,
                where: str) -> Equivalence:
        if b.shape != c.shape:
            return Equivalence(False, f"{where}: shape {list(c.shape)}, "
                                      f"the baseline has {list(b.shape)}")
        name = dtype_name(c)
        against_truth = ref is not None and ref.shape == b.shape
        floating = name in DEFAULT_TOLERANCES and dtype_name(b) in DEFAULT_TOLERANCES
        # Against the float64 truth, a reduced-precision output is judged by its own dtype's
        # tolerance; against the baseline, the dtypes must match.
        if dtype_name(b) != name and not (against_truth and floating):
            return Equivalence(False, f"{where}: dtype {name}, the baseline has {dtype_name(b)}")
        if name not in DEFAULT_TOLERANCES:
            return _exact(b, c, where)
        self.tolerances.add(describe_tolerance(name, self.rtol, self.atol))
        if not against_truth and np.array_equal(b, c):  # bit for bit (NaNs fall through)
            return Equivalence(True, max_abs_err=0.0, max_rel_err=0.0, tolerance_used=0.0)
        truth = ref if against_truth and ref is not None else b
        return _by_tolerance(truth, c, name, self.rtol, self.atol, where)


def _kind(x: Any) -> str:
    if x is None:
        return "None"
    if isinstance(x, np.ndarray):
        return f"an array {list(x.shape)}"
    if isinstance(x, Ragged):
        return "a RaggedTensor"
    if isinstance(x, Sparse):
        return "a SparseTensor"
    if isinstance(x, Opaque):
        return f"a {x.type_name}"
    return f"a {type(x).__name__}"


def _plain(x: Any) -> Any:
    return x.item() if isinstance(x, np.generic) else x


def _exact(b: np.ndarray, c: np.ndarray, where: str) -> Equivalence:
    """Integers, booleans, strings: every element equal."""
    if b.dtype.kind == "O" and not all(isinstance(v, (bytes, str)) for v in b.flat):
        return Equivalence(None, f"{where}: cannot compare an array of {b.dtype} objects")
    differ = np.flatnonzero(b.reshape(-1) != c.reshape(-1)) if b.size else np.array([], int)
    err = None
    if b.dtype.kind in "biu" and b.size:
        err = float(np.max(np.abs(b.astype(np.float64) - c.astype(np.float64))))
    if not differ.size:
        return Equivalence(True, max_abs_err=err)
    i = int(differ[0])
    idx = [int(k) for k in np.unravel_index(i, b.shape)] if b.ndim else []
    exp, act = _plain(b.reshape(-1)[i]), _plain(c.reshape(-1)[i])
    where_i = where + (str(idx) if idx else "")
    return Equivalence(False, f"{where_i}: {act!r}, the baseline has {exp!r} "
                              f"({differ.size} of {b.size} elements differ; {b.dtype} is exact)",
                       max_abs_err=err, worst=Worst(where, idx, exp, act, None, None))


#: Elements per slice of the value check: bounds its float64 temporaries (~40 B/element).
CHUNK = 1 << 21


def _slices(n: int) -> list[slice]:
    return [slice(i, min(n, i + CHUNK)) for i in range(0, n, CHUNK)]


def _by_tolerance(b: np.ndarray, c: np.ndarray, dtype: str, rtol: float | None,
                  atol: float | None, where: str) -> Equivalence:
    r, a, scale = tolerance_for(dtype, rtol, atol)
    wide = np.complex128 if np.iscomplexobj(b) or np.iscomplexobj(c) else np.float64
    bflat, cflat = b.reshape(-1), c.reshape(-1)
    n = bflat.size
    if n == 0:
        return Equivalence(True, max_abs_err=0.0, max_rel_err=0.0, tolerance_used=0.0)

    def index(i: int) -> list[int]:
        return [int(k) for k in np.unravel_index(i, b.shape)] if b.ndim else []

    def at(i: int) -> tuple[Any, Any]:
        return np.asarray(bflat[i], wide).item(), np.asarray(cflat[i], wide).item()

    # Pass 1: NaNs and infinities in the same places, and the largest finite |b| (the floor).
    big, odd_nan, odd_inf, first = 0.0, 0, 0, None
    for part in _slices(n):
        bb, cc = np.asarray(bflat[part], wide), np.asarray(cflat[part], wide)
        nan_b = np.isnan(bb)
        bad_nan = np.flatnonzero(nan_b != np.isnan(cc))
        bad_inf = np.flatnonzero((np.isinf(bb) | np.isinf(cc)) & ~nan_b & (bb != cc))
        odd_nan, odd_inf = odd_nan + bad_nan.size, odd_inf + bad_inf.size
        if first is None and (bad_nan.size or bad_inf.size):
            hits = [int(k[0]) for k in (bad_nan, bad_inf) if k.size]
            first = part.start + min(hits)
        finite = np.abs(bb[np.isfinite(bb)])
        if finite.size:
            big = max(big, float(finite.max()))
    if first is not None:
        exp, act = at(first)
        what = (f"NaN in other places: {odd_nan} elements" if odd_nan else
                f"infinities differ: {odd_inf} elements")
        w = Worst(where, index(first), exp, act, None if odd_nan else math.inf, None)
        return Equivalence(False, f"{w.where()}: {_fmt(act)}, the baseline has {_fmt(exp)} "
                                  f"({what})", worst=w)
    # Pass 2: every finite element within atol + rtol·|b|.
    floor = a if a is not None else scale * big
    worst_i, used, max_abs, bad = 0, -1.0, 0.0, 0
    for part in _slices(n):
        bb, cc = np.asarray(bflat[part], wide), np.asarray(cflat[part], wide)
        finite = np.isfinite(bb)
        with np.errstate(divide="ignore", invalid="ignore"):  # inf - inf where both agree
            diff = np.where(finite, np.abs(bb - cc), 0.0)
            allowed = floor + r * np.abs(np.where(finite, bb, 0.0))
            ratio = np.where(allowed > 0, diff / np.where(allowed > 0, allowed, 1.0),
                             np.where(diff > 0, np.inf, 0.0))
        k = int(np.argmax(ratio))
        if ratio[k] > used:
            worst_i, used = part.start + k, float(ratio[k])
        max_abs = max(max_abs, float(diff.max()))
        bad += int(np.count_nonzero(ratio > 1.0))
    exp, act = at(worst_i)
    err = 0.0 if exp == act else abs(act - exp)  # equal infinities: no error
    allowed_i = floor + r * abs(exp) if math.isfinite(abs(exp)) else math.inf
    rel = max_abs / big if big > 0 else (0.0 if max_abs == 0 else math.inf)
    w = Worst(where, index(worst_i), exp, act, float(err), float(allowed_i))
    if used <= 1.0:
        return Equivalence(True, max_abs_err=max_abs, max_rel_err=rel, tolerance_used=used,
                           worst=w)
    return Equivalence(
        False, f"{w.where()}: {_fmt(act)}, the baseline has {_fmt(exp)} (|a−b| = "
               f"{err:.3g} > {allowed_i:.3g} allowed; {bad} of {n} elements out of "
               "tolerance)",
        max_abs_err=max_abs, max_rel_err=rel, tolerance_used=used, worst=w)


def _fmt(x: Any) -> str:
    x = _plain(x)
    if isinstance(x, complex):
        return f"{x:.6g}"
    return f"{x:.6g}" if isinstance(x, float) else repr(x)


def _merge(parts: list[Equivalence]) -> Equivalence:
    if not parts:
        return Equivalence(True, max_abs_err=0.0, max_rel_err=0.0, tolerance_used=0.0)
    bad = [p for p in parts if p.equivalent is False]
    unknown = [p for p in parts if p.equivalent is None]
    if bad:
        verdict: bool | None = False
        reasons = [p.reason for p in bad]
    elif unknown:
        verdict, reasons = None, [p.reason for p in unknown]
    else:
        verdict, reasons = True, []
    if len(reasons) > 3:
        reasons = [*reasons[:3], f"and {len(reasons) - 3} more"]

    def biggest(values: list[float | None]) -> float | None:
        known = [v for v in values if v is not None]
        return max(known) if known else None

    ranked = [p for p in (bad or parts) if p.worst is not None]
    worst = max(ranked, key=lambda p: -1 if p.tolerance_used is None else p.tolerance_used,
                default=None)
    return Equivalence(verdict, "; ".join(reasons),
                       max_abs_err=biggest([p.max_abs_err for p in parts]),
                       max_rel_err=biggest([p.max_rel_err for p in parts]),
                       tolerance_used=biggest([p.tolerance_used for p in parts]),
                       worst=worst.worst if worst else None)


__all__ = ["DEFAULT_TOLERANCES", "Equivalence", "Opaque", "Ragged", "Sparse", "Worst",
           "compare_outputs", "describe_tolerance", "dtype_name", "snapshot", "tolerance_for"]
