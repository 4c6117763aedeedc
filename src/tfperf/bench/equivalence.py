"""Do two variants compute the same thing? Nested structures, shapes, dtypes, values.

Tolerances depend on the dtype, and are taken relative to the baseline's largest magnitude
(``|a - b| <= atol + rtol * max|b|``): variants that sum in another order (a loop versus
``reduce_sum`` versus ``einsum``) differ by rounding that grows with the result's scale,
while an element-wise relative test would fail wherever a sum happens to cancel to near zero.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

# rtol per floating dtype: a few hundred ulps, enough for reordered reductions.
_RTOL = {"float16": 1e-2, "bfloat16": 3e-2, "float32": 1e-4, "float64": 1e-9,
         "complex64": 1e-4, "complex128": 1e-9}


@dataclass
class Equivalence:
    equivalent: bool
    max_abs_err: float | None = None
    max_rel_err: float | None = None
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"equivalent": self.equivalent, "max_abs_err": self.max_abs_err,
                "max_rel_err": self.max_rel_err, "reason": self.reason}


def to_numpy_tree(value: Any) -> Any:
    """Tensors (anything with ``.numpy()``) and arrays → NumPy, keeping the nesting."""
    if isinstance(value, Mapping):
        return {k: to_numpy_tree(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_numpy_tree(v) for v in value]
    if hasattr(value, "numpy") and callable(value.numpy):
        return np.asarray(value.numpy())
    if isinstance(value, (np.ndarray, np.generic)):
        return np.asarray(value)
    if isinstance(value, (bool, int, float, complex)):
        return np.asarray(value)
    return value


def dtype_name(arr: np.ndarray) -> str:
    # TF's bfloat16 reaches NumPy as ml_dtypes.bfloat16, whose name is "bfloat16".
    return str(arr.dtype)


def rtol_for(dtype: str) -> float:
    return _RTOL.get(dtype, 0.0)


def compare_outputs(baseline: Any, candidate: Any, rtol: float | None = None,
                    atol: float = 0.0) -> Equivalence:
    """Compare two outputs (already NumPy trees or raw); ``rtol=None`` picks it by dtype."""
    return _compare(to_numpy_tree(baseline), to_numpy_tree(candidate), rtol, atol, "output")


def _compare(b: Any, c: Any, rtol: float | None, atol: float, where: str) -> Equivalence:
    if isinstance(b, dict) or isinstance(c, dict):
        if not (isinstance(b, dict) and isinstance(c, dict)):
            return Equivalence(False, reason=f"{where}: dict vs {type(c).__name__}")
        if set(b) != set(c):
            return Equivalence(False, reason=f"{where}: keys {sorted(map(str, b))} vs "
                                             f"{sorted(map(str, c))}")
        return _merge([_compare(b[k], c[k], rtol, atol, f"{where}[{k!r}]") for k in b])
    if isinstance(b, list) or isinstance(c, list):
        if not (isinstance(b, list) and isinstance(c, list)):
            return Equivalence(False, reason=f"{where}: sequence vs {type(c).__name__}")
        if len(b) != len(c):
            return Equivalence(False, reason=f"{where}: {len(b)} items vs {len(c)}")
        return _merge([_compare(x, y, rtol, atol, f"{where}[{i}]")
                       for i, (x, y) in enumerate(zip(b, c, strict=True))])
    if not isinstance(b, np.ndarray) or not isinstance(c, np.ndarray):
        same = b == c
        return Equivalence(bool(same), reason="" if same else f"{where}: {b!r} vs {c!r}")
    return _compare_arrays(b, c, rtol, atol, where)


def _compare_arrays(b: np.ndarray, c: np.ndarray, rtol: float | None, atol: float,
                    where: str) -> Equivalence:
    if b.shape != c.shape:
        return Equivalence(False, reason=f"{where}: shape {list(c.shape)}, "
                                         f"baseline has {list(b.shape)}")
    if dtype_name(b) != dtype_name(c):
        return Equivalence(False, reason=f"{where}: dtype {dtype_name(c)}, "
                                         f"baseline has {dtype_name(b)}")
    kind = np.dtype(b.dtype).kind if b.dtype.names is None else "V"
    if kind not in "fc" and dtype_name(b) != "bfloat16":
        equal = bool(np.array_equal(b, c))
        if kind in "biu":
            err = float(np.max(np.abs(b.astype(np.float64) - c.astype(np.float64)))) \
                if b.size else 0.0
            return Equivalence(equal, err, None,
                               "" if equal else f"{where}: values differ (exact dtype)")
        return Equivalence(equal, None, None, "" if equal else f"{where}: values differ")
    bb = b.astype(np.complex128 if kind == "c" else np.float64)
    cc = c.astype(bb.dtype)
    nan_b, nan_c = np.isnan(bb), np.isnan(cc)
    if not np.array_equal(nan_b, nan_c):
        return Equivalence(False, reason=f"{where}: NaN in different places")
    finite = ~nan_b
    diff = np.abs(bb - cc)[finite]
    inf_mismatch = np.any(np.isinf(bb[finite]) != np.isinf(cc[finite])) or \
        np.any(bb[finite][np.isinf(bb[finite])] != cc[finite][np.isinf(bb[finite])])
    diff = np.where(np.isfinite(diff), diff, 0.0)
    max_abs = float(diff.max()) if diff.size else 0.0
    mags = np.abs(bb[finite])
    mags = mags[np.isfinite(mags)]
    scale = float(mags.max()) if mags.size else 0.0
    max_rel = max_abs / scale if scale > 0 else (0.0 if max_abs == 0 else float("inf"))
    tol = (rtol_for(dtype_name(b)) if rtol is None else rtol) * scale + atol
    ok = bool(max_abs <= tol) and not inf_mismatch
    reason = "" if ok else (f"{where}: infinities differ" if inf_mismatch else
                            f"{where}: max abs error {max_abs:.3g} exceeds tolerance {tol:.3g}")
    return Equivalence(ok, max_abs, max_rel, reason)


def _merge(parts: list[Equivalence]) -> Equivalence:
    if not parts:
        return Equivalence(True, 0.0, 0.0)
    abs_errs = [p.max_abs_err for p in parts if p.max_abs_err is not None]
    rel_errs = [p.max_rel_err for p in parts if p.max_rel_err is not None]
    bad = [p.reason for p in parts if not p.equivalent]
    return Equivalence(not bad, max(abs_errs) if abs_errs else None,
                       max(rel_errs) if rel_errs else None, "; ".join(bad))
