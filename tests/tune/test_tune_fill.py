"""Buffers filled element by element (``out[i, j] = f(i, j)`` after ``np.zeros``), whatever
the loops' spelling, become ``f`` mapped over the index grid; checked by running the rewrite
against the loops on the same inputs (no timing). A buffer read inside its own loop (a
recurrence) is not a fill."""

from __future__ import annotations

import ast
import sys
import types
from pathlib import Path

import pytest

tf = pytest.importorskip("tensorflow")

sys.path.insert(0, str(Path(__file__).parent))
from test_tune_loop_model import _agrees, _loops_left, _spelling  # noqa: E402

from tfperf.bench.equivalence import snapshot  # noqa: E402
from tfperf.tune.device import DeviceFacts  # noqa: E402
from tfperf.tune.lever import LeverContext  # noqa: E402
from tfperf.tune.levers.fill import FillToMap  # noqa: E402

HEAD = "import numpy as np\nimport tensorflow as tf\n\n\n"

# A scalar helper over two rows, called in two loops over the rows (enumerate), written
# into a float64 NumPy matrix (np.zeros' default dtype).
OVERLAP = HEAD + '''
def overlap(p, q):
    lo = tf.maximum(p[0], q[0])
    hi = tf.minimum(p[1], q[1])
    return tf.maximum(hi - lo, 0.0) / (p[1] - p[0] + q[1] - q[0])


def f(a, b):
    out = np.zeros((a.shape[0], b.shape[0]))
    for i, p in enumerate(a):
        for j, q in enumerate(b):
            out[i, j] = overlap(p, q)
    return tf.convert_to_tensor(out)
'''

# Counters, a value computed in the outer loop, out[i][j] and float().
WHILE_KERNEL = HEAD + '''
def f(a, b):
    n, m = a.shape[0], b.shape[0]
    k = np.zeros((n, m), dtype=np.float32)
    i = 0
    while i < n:
        row = a[i]
        j = 0
        while j < m:
            d = row - b[j]
            k[i][j] = float(tf.exp(-tf.reduce_sum(d * d)))
            j += 1
        i += 1
    return tf.constant(k)
'''

ONE_AXIS = HEAD + '''
def f(a, b):
    s = tf.zeros([a.shape[0]])
    s = np.zeros(a.shape[0], dtype=np.float32)
    for i in range(a.shape[0]):
        s[i] = tf.reduce_max(a[i]) - tf.reduce_min(a[i])
    return tf.convert_to_tensor(s)
'''

RECURRENCE = HEAD + '''
def f(a, b):
    out = np.zeros(a.shape[0], dtype=np.float32)
    for i in range(1, a.shape[0]):
        out[i] = out[i - 1] + tf.reduce_sum(a[i]).numpy()
    return tf.constant(out)
'''


def _context(text: str, args: tuple) -> LeverContext:
    ns: dict = {}
    exec(compile(text, "<fill>", "exec"), ns)
    target = types.SimpleNamespace(source=text, name="f", args=args, kwargs={},
                                   path=Path("fill.py"), inputs=None)
    ctx = LeverContext(target, DeviceFacts())  # type: ignore[arg-type]
    ctx.returns = [snapshot(ns["f"](*args))]
    return ctx


def _inputs() -> tuple:
    g = tf.random.Generator.from_seed(3)
    a = tf.sort(g.uniform([6, 2], 0.0, 10.0), axis=1)
    return a, tf.sort(g.uniform([5, 2], 0.0, 10.0), axis=1)


@pytest.mark.parametrize("text", [OVERLAP, WHILE_KERNEL, ONE_AXIS], ids=["enumerate_helper",
                                                                       "while_counters",
                                                                       "one_axis"])
def test_a_fill_becomes_its_element_mapped_over_the_grid(text):
    args = _inputs()
    ctx = _context(text, args)
    lever = FillToMap()
    assert lever.applies(ctx) is None
    new = lever.build(text, ctx)
    assert "vectorized_map" in new and not [k for k in _loops_left(new)
                                            if k in ("For", "While")], new
    _agrees(text, new, args)
    # The buffer's dtype is the result's (float64 from a bare np.zeros): kept.
    ns: dict = {}
    exec(compile(new, "<fill>", "exec"), ns)
    assert ns["f"](*args).dtype == ctx.returns[0].dtype


def test_the_spellings_numpy_fill_is_mapped():
    text, args, ctx = _spelling("pairwise/numpy_fill")
    new = FillToMap().build(text, ctx)
    assert ".numpy()" not in ast.unparse(ast.parse(new)), new
    _agrees(text, new, args)


def test_a_buffer_read_in_its_own_loop_is_not_a_fill():
    ctx = _context(RECURRENCE, _inputs())
    assert FillToMap().applies(ctx) is not None


@pytest.mark.parametrize("spelling", ["numpy_double_range", "numpy_enumerate_helper",
                                      "while_item_float", "row_fill", "tf_zeros_numpy_value"])
def test_every_grid_fill_spelling_is_mapped(spelling):
    text, args, ctx = _spelling(f"grid_fill/{spelling}")
    new = FillToMap().build(text, ctx)
    assert not [k for k in _loops_left(new) if k in ("For", "While")], new
    _agrees(text, new, args)


def test_the_filled_tensor_traces_where_tf_constant_took_the_buffer():
    # tf.constant(d) of the NumPy buffer, once d is a tensor, raises under tf.function.
    text, args, ctx = _spelling("pairwise/numpy_fill")
    new = FillToMap().build(text, ctx)
    assert "tf.convert_to_tensor(d)" in new, new
    ns: dict = {}
    exec(compile(new, "<fill>", "exec"), ns)
    traced = tf.function(ns["f"])
    assert traced(*args).shape == ns["f"](*args).shape


def test_a_matrix_filled_one_scatter_per_element_over_tensor_bounds_is_mapped():
    # Held-out round 5 (c04, pairwise Mahalanobis distances): the element is written by
    # `d = tf.tensor_scatter_nd_update(d, [[i, j]], [v])` in two loops over int64 tensor
    # bounds; the lever said "no buffer filled element by element in loops".
    text = HEAD + '''
def f(s1, s2, chol):
    n = tf.cast(tf.shape(s1)[0], tf.int64)
    b = tf.cast(tf.shape(s2)[0], tf.int64)
    d = tf.zeros([n, b], dtype=tf.float64)
    for i in range(n):
        for j in range(b):
            diff = s1[i] - s2[j]
            w = tf.linalg.triangular_solve(chol, diff[:, tf.newaxis], lower=True)
            d = tf.tensor_scatter_nd_update(d, [[i, j]], [tf.sqrt(tf.reduce_sum(w ** 2))])
    return d
'''
    g = tf.random.Generator.from_seed(4)
    a = g.normal([4, 4], dtype=tf.float64)
    chol = tf.linalg.cholesky(tf.matmul(a, a, transpose_b=True) + tf.eye(4, dtype=tf.float64))
    args = (g.normal([5, 4], dtype=tf.float64), g.normal([3, 4], dtype=tf.float64), chol)
    ctx = _context(text, args)
    lever = FillToMap()
    assert lever.applies(ctx) is None, lever.applies(ctx)
    new = lever.build(text, ctx)
    assert "vectorized_map" in new and "tensor_scatter_nd_update" not in new \
        and not _loops_left(new), new
    _agrees(text, new, args)
