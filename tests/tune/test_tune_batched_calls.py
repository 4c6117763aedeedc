"""Stop 46 wave 2 (round 17): per-iteration calls with a batched form, lifted by the
array-writes lever. ``np.std``/``np.var`` (``ddof``) of a row or window → one reduction with
an axis; ``np.dot``/``@`` of per-iteration rows → one matmul (rows of separate loops) or an
einsum, a row and a loop-invariant vector or matrix → one matmul; ``math``/``cmath``
functions → their NumPy ufunc of float64/complex128, where the scalar function would not
raise and no float32 array would promote differently. Floats are compared to the loop's
within rounding (a sum's order differs), dtypes and ints exactly; each twin runs the loop."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from no_fallback import load, no_fallback

from tfperf.tune.levers import numpy_writes
from tfperf.tune.source import SourceEditError

HEAD = "import math\nimport cmath\nimport numpy as np\n\n\n"


def close(got, want) -> None:
    """One type and dtype; ints and bools equal, floats within a sum's reordering."""
    assert type(got) is type(want), (type(got), type(want))
    if isinstance(want, dict):
        assert got.keys() == want.keys()
        for k in want:
            close(got[k], want[k])
        return
    assert got.dtype == want.dtype and got.shape == want.shape, (got, want)
    if want.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want)
    else:
        tol = 1e-5 if want.dtype in (np.float32, np.complex64) else 1e-12
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def lifted(text: str, *args, batched: bool = True) -> str:
    """The rewrite agrees with the loop; with the fall-back an error, the batched rows answer
    (``batched``) or the loop was needed (False)."""
    new = numpy_writes.rewrite(HEAD + text, "f")
    want = load(HEAD + text)(*copy.deepcopy(args))
    close(load(new)(*copy.deepcopy(args)), want)
    strict = load(no_fallback(new))
    if batched:
        close(strict(*copy.deepcopy(args)), want)
    else:
        with pytest.raises(AssertionError, match="fell back"):
            strict(*copy.deepcopy(args))
    return new


ROLLING = '''
def f(y, window, stride):
    result = np.full(len(y), np.nan)
    for i in range(0, len(y) - window + 1, stride):
        chunk = y[i:i + window]
        result[i + window - 1] = {call}
    return {{'rolling': result}}
'''


@pytest.mark.parametrize("call", ["np.std(chunk)", "chunk.std()", "np.var(chunk, ddof=1)",
                                  "chunk.std(ddof=1)"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
@pytest.mark.parametrize("stride", [1, 3])
def test_rolling_spread_is_one_reduction_over_the_windows(call, dtype, stride):
    y = (np.cumsum(np.random.default_rng(1).standard_normal(300)) * 10).astype(dtype)
    new = lifted(ROLLING.format(call=call), y, 20, stride)
    assert "_tfperf_reduce(" in new


ROW_STD = '''
def f(x):
    out = np.empty(x.shape[0], dtype=x.dtype)
    for i in range(x.shape[0]):
        out[i] = np.std(x[i], axis={axis})
    return out
'''


def test_row_std_with_an_axis_keeps_the_rows_axes():
    x = np.random.default_rng(2).standard_normal((7, 5))
    lifted(ROW_STD.format(axis=0), x)


def test_std_with_a_dtype_argument_is_left_alone():
    """``dtype=`` is no keyword the reduction model carries: the loop stays."""
    with pytest.raises(SourceEditError):
        numpy_writes.rewrite(HEAD + ROLLING.format(call="np.std(chunk, dtype=np.float32)"), "f")


GRAM = '''
def f(X1, X2):
    K = np.empty((X1.shape[0], X2.shape[0]), dtype={dtype})
    for i in range(X1.shape[0]):
        for j in range(X2.shape[0]):
            K[i, j] = {dot}
    return K
'''


@pytest.mark.parametrize("dot", ["np.dot(X1[i], X2[j])", "X1[i] @ X2[j]", "np.dot(X2[j], X1[i])"])
@pytest.mark.parametrize("dtype", ["np.float64", "np.float32", "np.int64", "np.complex128"])
def test_gram_matrix_is_one_matmul(dot, dtype):
    r = np.random.default_rng(3)
    dt = np.dtype(dtype.split(".")[1])
    X1 = (r.standard_normal((9, 4)) * 5).astype(dt)
    X2 = (r.standard_normal((6, 4)) * 5).astype(dt)
    if dt.kind == "c":
        X1, X2 = X1 + 1j * X1[::-1], X2 - 2j * X2
    new = lifted(GRAM.format(dot=dot, dtype=dtype), X1, X2)
    assert "_tfperf_dot(" in new


def test_rows_of_different_lengths_raise_as_the_loop_does():
    r = np.random.default_rng(4)
    code = GRAM.format(dot="np.dot(X1[i], X2[j])", dtype="float")
    new = numpy_writes.rewrite(HEAD + code, "f")
    with pytest.raises(ValueError):
        load(new)(r.standard_normal((3, 4)), r.standard_normal((2, 5)))


PAIRED = '''
def f(a, b, w, M):
    out = np.empty(a.shape[0])
    for i in range(a.shape[0]):
        out[i] = {value}
    return out
'''


@pytest.mark.parametrize("value", ["np.dot(a[i], b[i])", "np.dot(a[i], w)", "w @ a[i]",
                                   "np.dot(M, a[i]).sum()", "np.sum(a[i] @ M) * 2.0",
                                   "np.dot(a[i] - b[i], a[i] - b[i]) ** 0.5"])
def test_a_row_dotted_with_its_pair_or_a_fixed_operand(value):
    r = np.random.default_rng(5)
    a, b = r.standard_normal((11, 4)), r.standard_normal((11, 4))
    lifted(PAIRED.format(value=value), a, b, r.standard_normal(4), r.standard_normal((4, 4)))


def test_a_dot_of_per_iteration_matrices_runs_the_loop():
    """Twin: ``a[i]`` a matrix per element (np.dot is a matrix product there)."""
    r = np.random.default_rng(6)
    a, b = r.standard_normal((5, 3, 3)), r.standard_normal((5, 3, 3))
    code = PAIRED.format(value="np.dot(a[i], b[i])[0, 0]")
    with pytest.raises(SourceEditError):  # a per-iteration value indexed: never batched
        numpy_writes.rewrite(HEAD + code, "f")
    lifted(PAIRED.format(value="np.trace(np.dot(a[i], b[i]))" if False else
                         "np.sum(np.dot(a[i], b[i]))"), a, b, None, None, batched=False)


def test_a_dot_of_objects_runs_the_loop():
    a = np.array([[1, 2], [3, 4]], dtype=object)
    new = numpy_writes.rewrite(HEAD + PAIRED.format(value="np.dot(a[i], b[i])"), "f")
    with pytest.raises(AssertionError, match="fell back"):
        load(no_fallback(new))(a, a, None, None)


def test_np_inner_is_not_a_dot():
    """``np.inner(v, M)`` contracts M's last axis, ``np.dot`` its first: not lifted."""
    with pytest.raises(SourceEditError):
        numpy_writes.rewrite(HEAD + PAIRED.format(value="np.inner(a[i], b[i])"), "f")


MATH = '''
def f(x, w):
    out = np.empty(len(x), dtype=w.dtype)
    for i in range(len(x)):
        out[i] = {value}
    return out
'''


@pytest.mark.parametrize("value", ["math.exp(-x[i]) * w[i]", "math.sqrt(abs(x[i]))",
                                   "math.pow(abs(x[i]), 1.5)", "math.atan2(x[i], w[i])",
                                   "math.log1p(x[i] * x[i])",
                                   "math.tanh(x[i]) + math.cos(w[i] * 0.5)"])
@pytest.mark.parametrize("dtype", [np.float64, np.int64])
def test_math_functions_become_their_ufuncs(value, dtype):
    r = np.random.default_rng(7)
    x = (r.standard_normal(40) * 3).astype(dtype)
    new = lifted(MATH.format(value=value), x, r.standard_normal(40))
    assert "_tfperf_math(" in new


def test_cmath_exp_is_the_complex_ufunc():
    """A twiddle factor per element from a table of phases: ``cmath.exp(-1j * p[k, m])``."""
    code = '''
def f(x, p):
    n = len(x)
    F = np.zeros((n, n), dtype=complex)
    for k in range(n):
        for m in range(n):
            F[k, m] = x[m] * cmath.exp(-1j * p[k, m])
    return F
'''
    x = np.random.default_rng(8).standard_normal(16)
    p = 2 * np.pi * np.outer(np.arange(16), np.arange(16)) / 16
    lifted(code, x, p)


@pytest.mark.parametrize("dtype", [np.float64, np.int64])
def test_a_loop_index_in_math_arguments(dtype):
    """``math.cos(i * 0.5 + x[i])``: the index is a float64 inside math either way."""
    x = np.arange(12).astype(dtype)
    lifted(MATH.format(value="math.cos(i * 0.5 + x[i]) * w[i]"), x, np.ones(12))


def test_a_loop_index_times_a_narrow_int_array_in_math_runs_the_loop():
    """Twin: ``i * x[i]`` with int8 ``x`` is int8 arithmetic in the loop (wraps past 127),
    int64 batched: the loop runs."""
    x = np.arange(40, dtype=np.int8)
    lifted(MATH.format(value="math.sqrt(abs(i * x[i]))"), x, np.ones(40), batched=False)


def test_a_loop_index_in_arithmetic_outside_math_is_still_refused():
    with pytest.raises(SourceEditError, match="in arithmetic"):
        numpy_writes.rewrite(HEAD + MATH.format(value="math.cos(x[i]) * i"), "f")


def test_twiddle_factors_from_the_indices():
    """``cmath.exp(-2j * cmath.pi * k * m / n)`` per element (a DFT matrix)."""
    code = '''
def f(x):
    n = len(x)
    F = np.zeros((n, n), dtype=complex)
    for k in range(n):
        for m in range(n):
            F[k, m] = x[m] * cmath.exp(-2j * cmath.pi * k * m / n)
    return F
'''
    lifted(code, np.random.default_rng(13).standard_normal(16))


@pytest.mark.parametrize("value,bad", [("math.log(x[i])", 0.0), ("math.sqrt(x[i])", -1.0),
                                       ("math.exp(x[i])", 1000.0), ("math.sin(x[i])", np.inf)])
def test_a_value_the_math_function_refuses_raises_as_in_the_loop(value, bad):
    x = np.array([1.0, 2.0, bad, 3.0])
    new = numpy_writes.rewrite(HEAD + MATH.format(value=value), "f")
    with pytest.raises(ValueError if "exp" not in value else OverflowError):
        load(new)(x, np.ones(4))
    with pytest.raises(AssertionError, match="fell back"):
        load(no_fallback(new))(x, np.ones(4))


def test_nan_in_gives_nan_out_batched():
    x = np.array([1.0, np.nan, 2.0])
    lifted(MATH.format(value="math.exp(x[i])"), x, np.ones(3))


def test_a_float32_array_beside_math_runs_the_loop():
    """Twin: ``math.exp(..) * w[i]`` with float32 ``w`` is float32 arithmetic in the loop (a
    Python float is weak), float64 batched: the loop runs."""
    r = np.random.default_rng(9)
    x = r.standard_normal(10)
    lifted(MATH.format(value="math.exp(x[i]) * w[i]"), x,
           r.standard_normal(10).astype(np.float32), batched=False)


def test_math_of_a_complex_array_runs_the_loop():
    """Twin: ``math.exp`` of a NumPy complex takes its real part (with a warning) in the
    loop; the ufunc would not: the loop runs."""
    with pytest.warns(np.exceptions.ComplexWarning):
        lifted(MATH.format(value="math.exp(x[i])"), np.array([1j, 2 + 2j]), np.ones(2),
               batched=False)


def test_gram_reads_row_views_and_writes_a_view():
    """The rows of separate loops are views of their slices (no gathered copy) and the
    buffer is written as one view, not scattered through index arrays."""
    r = np.random.default_rng(10)
    new = lifted(GRAM.format(dot="np.dot(X1[i], X2[j])", dtype="float"),
                 r.standard_normal((5, 3)), r.standard_normal((4, 3)))
    assert "_tfperf_row_view(X1" in new and "_tfperf_span(" in new, new


def test_rows_past_the_end_raise_as_the_loop_does():
    """Twin: a loop bound past the rows (a slice would stop short silently): IndexError."""
    code = '''
def f(X1, X2, n):
    K = np.empty((n, X2.shape[0]))
    for i in range(n):
        for j in range(X2.shape[0]):
            K[i, j] = np.dot(X1[i], X2[j])
    return K
'''
    r = np.random.default_rng(11)
    new = numpy_writes.rewrite(HEAD + code, "f")
    with pytest.raises(IndexError):
        load(new)(r.standard_normal((3, 2)), r.standard_normal((4, 2)), 5)


def test_rows_of_a_python_list_run_the_loop():
    """Twin: ``X1`` a list of rows: no view, the loop's answer."""
    r = np.random.default_rng(12)
    X1 = list(r.standard_normal((4, 3)))
    code = GRAM.format(dot="np.dot(X1[i], X2[j])", dtype="float").replace(
        "X1.shape[0]", "len(X1)")
    lifted(code, X1, r.standard_normal((2, 3)), batched=False)


DFT = '''
from cmath import exp
from math import pi


def f(x):
    N = len(x)
    F = np.array([0 + 0j] * N)
    for k in range(N):
        for n in range(N):
            F[k] += exp(-1j * 2. * pi * n * k / N) * x[n]
    return F
'''


def test_a_function_imported_from_cmath_is_lifted():
    """``from cmath import exp``: the bare ``exp`` is cmath's (a DFT accumulated per k)."""
    new = lifted(DFT, np.random.default_rng(14).standard_normal(24))
    assert "_tfperf_math('cmath', 'exp'" in new


@pytest.mark.parametrize("shadow", ["def f(x, exp=np.exp):", "def f(x):\n    exp = np.exp"])
def test_a_name_the_function_binds_is_not_the_import(shadow):
    """Twin: ``exp`` a parameter or a local: not cmath's, not lifted as it."""
    code = DFT.replace("def f(x):", shadow)
    try:
        new = numpy_writes.rewrite(HEAD + code, "f")
    except SourceEditError:
        return
    assert "_tfperf_math(" not in new


def test_a_later_definition_hides_the_import():
    code = DFT.replace("from math import pi\n", "from math import pi\n\n\ndef exp(z):\n"
                       "    return z\n")
    with pytest.raises(SourceEditError):
        numpy_writes.rewrite(HEAD + code, "f")


def test_an_accumulation_over_an_axis_the_position_does_not_name():
    """``acc[k] += t(k, n)``: the positions repeated along n, added in the loop's order (the
    same rounding as the loop's adds: equal bit for bit where the terms are)."""
    code = '''
def f(x, w):
    acc = np.zeros(len(w))
    for k in range(len(w)):
        for n in range(len(x)):
            acc[k] += x[n] * w[k] * 0.1
    return acc
'''
    r = np.random.default_rng(15)
    x, w = r.standard_normal(300), r.standard_normal(7)
    new = lifted(code, x, w)
    assert np.array_equal(load(new)(x, w), load(HEAD + code)(x, w))
