"""The run-time helpers of the per-iteration calls the array-writes lever lifts (round 17,
``analysis/batched_calls.py``): each checks what the source cannot settle and raises the
lever's loop-running error where the loop's answer would differ."""

from __future__ import annotations

DOT = "_tfperf_dot"
MATH = "_tfperf_math"
MATH_PROMOTES = "_tfperf_math_promotes"
NP = "_tfperf_np"


def dot_rows(loop: str) -> list[str]:
    """``_tfperf_dot(a, b, g, a_moves, b_moves)``: ``np.dot``/``@`` per element of the grid's
    ``g`` axes. Two per-iteration 1-D rows → their products summed, as one matmul where the
    rows come from separate loops (c08's ``X1[i]``, ``X2[j]``: a Gram matrix), else an
    einsum; a row and a loop-invariant vector or matrix → one matmul. Other ranks (a dot of
    matrices, of scalars) and non-numeric dtypes run the loop."""
    return [
        f"def {DOT}(a, b, g, am, bm):",
        f"    a, b = {NP}.asarray(a), {NP}.asarray(b)",
        "    if a.dtype.kind not in 'iufc' or b.dtype.kind not in 'iufc':",
        f"        raise {loop}('tfperf: a dot of other than numbers')",
        "    if not (am and bm):  # one row per element and a loop-invariant operand",
        "        row, other = (a, b) if am else (b, a)",
        "        if row.ndim != g + 1 or other.ndim not in (1, 2):",
        f"            raise {loop}('tfperf: a dot of other than a row and a vector or matrix')",
        "        if other.ndim == 1 or am:  # row . v, row . M (dot's own order), v . row",
        f"            return {NP}.matmul(row, other)",
        f"        return {NP}.matmul(row, other.T)  # M . row: the row times M's transpose",
        "    if a.ndim != g + 1 or b.ndim != g + 1 or a.shape[g] != b.shape[g]:",
        f"        raise {loop}('tfperf: a dot of other than two rows of one length')",
        "    k = a.shape[g]",
        "    sa, sb = a.shape[:g], b.shape[:g]",
        "    la = [m for m in range(g) if sa[m] != 1]",
        "    lb = [m for m in range(g) if sb[m] != 1]",
        f"    shape = {NP}.broadcast_shapes(sa, sb)",
        "    if all(x < y for x in la for y in lb):  # a's loops outside b's: one matmul",
        f"        return {NP}.matmul(a.reshape(-1, k), b.reshape(-1, k).T).reshape(shape)",
        "    if all(y < x for x in la for y in lb):",
        f"        return {NP}.matmul(b.reshape(-1, k), a.reshape(-1, k).T).reshape(shape)",
        f"    return {NP}.einsum('...k,...k->...', a, b)"]


def math_rows(loop: str) -> list[str]:
    """``_tfperf_math(module, ufunc, *values)``: ``math.exp(v)``/``cmath.exp(v)`` of every
    element as NumPy's ufunc of float64 (complex128) values, as the scalar functions convert
    them. Where the scalar function raises (a domain or range error: ``math.log(0)``,
    ``math.exp(1000)``, ``math.sin(inf)``) the ufunc gives a NaN or an infinity from numbers
    that were not: the loop runs, and raises as it did. ``_tfperf_math_promotes``: the
    scalar function's Python float is weak (float32 * float stays float32), the batch's
    float64 array is not: a float32/float16/complex64 array read by the body runs the loop."""
    return [
        f"def {MATH}(module, name, *vs):",
        f"    vs = [{NP}.asarray(v) for v in vs]",
        "    if any(v.dtype.kind not in ('biuf' if module == 'math' else 'biufc') for v in vs):",
        f"        raise {loop}('tfperf: a math function of a value that is not a number')",
        f"    to = {NP}.float64 if module == 'math' else {NP}.complex128",
        "    vs = [v.astype(to) for v in vs]",
        f"    with {NP}.errstate(all='ignore'):",
        f"        r = getattr({NP}, name)(*vs)",
        "    finite, nan_in = True, False",
        "    for v in vs:  # shapes broadcast (math.pow(x[i], 1.5))",
        f"        finite, nan_in = finite & {NP}.isfinite(v), nan_in | {NP}.isnan(v)",
        f"    if ((~{NP}.isfinite(r) & finite) | ({NP}.isnan(r) & ~nan_in)).any():",
        f"        raise {loop}('tfperf: a value the math function refuses')",
        "    return r",
        # ints: a loop index in a math call's arguments (k * n), an int64 array batched
        f"def {MATH_PROMOTES}(arrays, ints):",
        "    for a in arrays:",
        f"        if isinstance(a, ({NP}.ndarray, {NP}.generic)) and (",
        f"                {NP}.result_type(a.dtype, {NP}.float64) != {NP}.result_type(a.dtype, 0.0)"
        f" or {NP}.result_type(a.dtype, {NP}.complex128) != {NP}.result_type(a.dtype, 0j)"
        f" or (ints and {NP}.result_type(a.dtype, {NP}.int64) != {NP}.result_type(a.dtype, 0))):",
        f"            raise {loop}('tfperf: a Python float from math promotes less than an "
        "array of them')"]
