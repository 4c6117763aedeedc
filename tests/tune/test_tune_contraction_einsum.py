"""Stop 46: a sum of a product whose factors are the function's parameters (a new axis the
only broadcast) and whose axis is a constant is patched as the one ``tf.einsum`` it is, not
as the generic helper: a second ``tune --apply`` wrote 37 lines where
``tf.einsum("abc,b->ac", samples, weights)`` says it. Anything the static shapes cannot
settle (a size-1 axis of the data, a rebound parameter, an axis only the run knows,
integers) keeps the helper, which decides when it runs."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

tf = pytest.importorskip("tensorflow")
import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from rewrites import lever_context, run_f  # noqa: E402

from tfperf.tune.levers.contraction import HELPER, ProductSumToEinsum  # noqa: E402
from tfperf.tune.levers.loop_model import LoopsBatched  # noqa: E402

HEAD = "import tensorflow as tf\n\n\n"

# The per-example weighted sum the loop lever batches into reduce_sum(s * w[:, None], 1).
LOOP = HEAD + '''
def f(samples, weights):
    out = []
    for s in samples:
        out.append(tf.reduce_sum(s * weights[:, None], axis=0))
    return tf.stack(out)
'''


def _close(text: str, new: str, args: tuple) -> None:
    want, got = run_f(text, args), run_f(new, args)
    assert got.dtype == want.dtype and got.shape == want.shape, new
    tol = 1e-5 if want.dtype == tf.float32 else 1e-12
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=tol, atol=tol)


def _args(dtype, *shapes):
    g = tf.random.Generator.from_seed(3)
    return tuple(g.normal(s, dtype=dtype) for s in shapes)


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64])
def test_the_batched_weighted_sum_is_patched_as_one_einsum(dtype):
    args = _args(dtype, [8, 20, 4], [20])
    ctx = lever_context(LOOP, args, "m.py")
    batched = LoopsBatched(True).build(LOOP, ctx)
    assert "tf.reduce_sum(samples * weights[:, None], axis=1)" in batched, batched
    new = ProductSumToEinsum().build(batched, lever_context(batched, args, "m.py"))
    assert 'tf.einsum("abc,b->ac", samples, weights)' in new, new
    assert HELPER not in new, new
    _close(LOOP, new, args)


SUM = HEAD + '''
def f(a, b):
    return tf.reduce_sum({product}{axis})
'''

ONE_EINSUM = [  # (product, axis, shapes, the einsum)
    ("a * b[:, None]", ", axis=1", ([8, 20, 4], [20]), '"abc,b->ac", a, b'),
    ("a[:, :, None] * b", ", axis=1", ([5, 7], [7, 3]), '"ab,bc->ac", a, b'),  # a matmul
    ("a * b", "", ([5, 7], [5, 7]), '"ab,ab->", a, b'),                         # all of it
    ("tf.multiply(a, b)", ", axis=-1", ([5, 7], [5, 7]), '"ab,ab->a", a, b'),
    ("a * b", ", axis=(1, 2)", ([3, 4, 5], [4, 5]), '"abc,bc->a", a, b'),     # ranks differ
    ("b[None, :, None] * a", ", 1", ([6, 12, 8], [12]), '"b,abc->ac", b, a'),
]


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64])
@pytest.mark.parametrize("k", range(len(ONE_EINSUM)))
def test_a_sum_of_parameters_is_one_einsum_and_agrees(k, dtype):
    product, axis, shapes, spec = ONE_EINSUM[k]
    text = SUM.replace("{product}", product).replace("{axis}", axis)
    args = _args(dtype, *shapes)
    new = ProductSumToEinsum().build(text, lever_context(text, args, "m.py"))
    assert f"tf.einsum({spec})" in new and HELPER not in new, new
    _close(text, new, args)


KEEPS_HELPER = [  # VALID twins: what the static shapes cannot settle
    ("a * b", ", axis=1", ([8, 20, 4], [20, 1])),   # a size-1 axis of the data broadcasts
    ("a * b[:, None]", ", axis=k", ([8, 20, 4], [20])),  # the axis is the run's
    ("a[:, None] * b[:, None]", ", axis=0", ([5], [5])),  # a new axis on both sides
    ("(a + 1.0) * b", ", axis=1", ([5, 7], [5, 7])),  # a factor that is an expression
]


@pytest.mark.parametrize("k", range(len(KEEPS_HELPER)))
def test_valid_what_static_shapes_cannot_settle_keeps_the_helper(k):
    product, axis, shapes = KEEPS_HELPER[k]
    text = SUM.replace("{product}", product).replace("{axis}", axis).replace(
        "def f(a, b):", "def f(a, b, k=1):")
    args = _args(tf.float32, *shapes)
    new = ProductSumToEinsum().build(text, lever_context(text, args, "m.py"))
    assert f"{HELPER}(" in new and "tf.einsum(\"" not in new.split(f"def {HELPER}")[0], new
    _close(text, new, args)


def test_valid_a_rebound_parameter_keeps_the_helper():
    text = HEAD + '''
def f(a, b):
    b = b * 2.0
    return tf.reduce_sum(a * b[:, None], axis=1)
'''
    args = _args(tf.float32, [8, 20, 4], [20])
    new = ProductSumToEinsum().build(text, lever_context(text, args, "m.py"))
    assert f"{HELPER}(a, b[:, None], 1)" in new, new
    _close(text, new, args)


def test_valid_integer_tensors_keep_the_helper():
    text = SUM.replace("{product}", "a * b").replace("{axis}", ", axis=1")
    args = (tf.constant([[1, 2], [3, 4]]), tf.constant([[5, 6], [7, 8]]))
    new = ProductSumToEinsum().build(text, lever_context(text, args, "m.py"))
    assert f"{HELPER}(a, b, 1)" in new, new
    want, got = run_f(text, args), run_f(new, args)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.numpy(), want.numpy())
