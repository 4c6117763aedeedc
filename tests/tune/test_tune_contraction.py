"""The sum of a broadcast product as one contraction: the helper written into the module
agrees with ``tf.reduce_sum(a * b, axis)`` for every broadcast and axis form (and keeps the
product where it cannot contract), and the lever rewrites what the loop levers leave
(a per-example ``r[:, None] * w`` summed, batched) to it. No timing: the search measures."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

tf = pytest.importorskip("tensorflow")
import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from test_tune_loop_model import _agrees, _spelling  # noqa: E402

from tfperf.tune.levers.contraction import HELPER, HELPER_SOURCE, ProductSumToEinsum  # noqa: E402
from tfperf.tune.levers.loop_model import LoopsBatched  # noqa: E402
from tfperf.tune.source import SourceEditError  # noqa: E402


def _helper():
    ns = {"tf": tf}
    exec(HELPER_SOURCE.replace("TF.", "tf."), ns)
    return ns[HELPER]


G = tf.random.Generator.from_seed(7)
FORMS = [  # (a, b, axis): the spellings' batched sums, and the broadcast forms around them
    (G.normal([6, 12, 8]), G.normal([12])[None, :, None], 1),   # a weighted window sum
    (G.normal([6, 12, 8]), tf.reshape(G.normal([12]), [12, 1]), 1),  # rank-2 weights
    (G.normal([5, 7])[:, :, None], G.normal([7, 3]), 1),        # x[:, :, None] * w: a matmul
    (G.normal([5, 7]), G.normal([5, 7]), None),                 # a dot product of all
    (G.normal([5, 7]), G.normal([5, 7]), -1),                   # row-wise dots
    (G.normal([5, 1, 7]), G.normal([1, 4, 7]), [0, 2]),         # both sides broadcast
    (G.normal([3, 4, 5]), G.normal([3, 4, 5]), (1, 2)),
    (G.normal([5, 7]), 2.0, 1),                                 # a Python scalar: kept
    (tf.constant([[1, 2], [3, 4]]), tf.constant([5, 6]), 1),    # integers: kept
]


@pytest.mark.parametrize("k", range(len(FORMS)))
def test_the_contraction_agrees_with_the_sum_of_the_product(k):
    a, b, axis = FORMS[k]
    want = tf.reduce_sum(a * b, axis=axis)
    got = _helper()(a, b, axis)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)


def test_the_contraction_traces_and_vectorises():
    contract = _helper()
    a, b, _ = FORMS[0]
    traced = tf.function(lambda a, b: contract(a, b, 1))
    np.testing.assert_allclose(traced(a, b).numpy(), tf.reduce_sum(a * b, 1).numpy(),
                               rtol=1e-5, atol=1e-5)
    x, w = G.normal([8, 7]), G.normal([7, 3])
    mapped = tf.vectorized_map(lambda r: contract(r[:, None], w, 0), x)
    np.testing.assert_allclose(mapped.numpy(), tf.matmul(x, w).numpy(), rtol=1e-5, atol=1e-5)


def test_the_batched_per_example_sum_becomes_one_contraction():
    # r[:, None] * w summed over the features, per example: batched, the product is
    # [n, f, u]; contracted, it is one matrix product.
    text, args, ctx = _spelling("per_example/enumerate_prealloc")
    batched = LoopsBatched(True).build(text, ctx)
    lever = ProductSumToEinsum()
    assert lever.applies(ctx) is None
    new = lever.build(batched, ctx)
    # x and w are parameters of known shapes: the one einsum, no helper (stop 46)
    assert 'tf.einsum("ab,bc->ac", x, w)' in new and HELPER not in new, new
    assert "reduce_sum(" not in new, new
    _agrees(text, new, args)


def test_no_sum_of_a_product_is_no_edit():
    text, _, ctx = _spelling("lookups/index_append")
    with pytest.raises(SourceEditError):
        ProductSumToEinsum().build(text, ctx)


# Stop 40 (held-out round 10's c04/c04m, 0.24-0.36 before): the product spelled
# tf.multiply(a, b) (tf.math.multiply, with a name) is the same contraction; one example's
# [k, d] by its [d] vector lines up as u[:, None] on the batch, then one einsum.
MULTIPLY = """
import tensorflow as tf

SIZE = 16


def f(c, u):
    return tf.stack([tf.reduce_sum({product}, axis=-1) for i in range(0, SIZE)], axis=0)
"""


@pytest.mark.parametrize("product", ["tf.multiply(c[i], u[i])",
                                     "tf.math.multiply(c[i], u[i], name='w')"])
def test_a_sum_of_tf_multiply_is_one_contraction_after_the_batching(product):
    from rewrites import lever_context

    text = MULTIPLY.replace("{product}", product)
    args = (G.normal([16, 5, 8]), G.normal([16, 8]))
    ctx = lever_context(text, args, "m.py")
    batched = LoopsBatched(True).build(text, ctx)
    new = ProductSumToEinsum().build(batched, ctx)
    body = new.split(f"def {HELPER}")[0]
    assert f"{HELPER}(" in body and "multiply" not in body and "reduce_sum" not in body, new
    # range(0, SIZE) is range(SIZE): the index itself, no gather of every row
    assert "gather" not in body, new
    _agrees(text, new, args)


def test_valid_a_range_that_starts_past_zero_still_gathers_its_rows():
    from rewrites import lever_context

    text = MULTIPLY.replace("{product}", "tf.multiply(c[i], u[i])").replace(
        "range(0, SIZE)", "range(2, SIZE)")
    args = (G.normal([16, 5, 8]), G.normal([16, 8]))
    ctx = lever_context(text, args, "m.py")
    new = LoopsBatched(True).build(text, ctx)
    assert "gather" in new, new
    _agrees(text, new, args)


def test_valid_a_multiply_with_other_arguments_is_not_read_as_a_product():
    # tf.math.multiply_no_nan is not multiply; a sum of it stays as written
    text = MULTIPLY.replace("{product}", "tf.math.multiply_no_nan(c[i], u[i])")
    from rewrites import lever_context

    args = (G.normal([16, 5, 8]), G.normal([16, 8]))
    ctx = lever_context(text, args, "m.py")
    batched = LoopsBatched(True).build(text, ctx)
    with pytest.raises(SourceEditError):
        ProductSumToEinsum().build(batched, ctx)


OWN_MULTIPLY = """
import tensorflow as tf


def multiply(a, b):
    return a * b + 1.0


def f(c, u):
    return tf.reduce_sum({call}(c, u), axis=-1)
"""


def test_valid_a_users_own_multiply_is_not_read_as_a_product():
    # Review 40: the product was matched by the text after the dot, so a function of the
    # user's named multiply (a * b + 1) became an einsum; it is matched by what it names.
    from rewrites import lever_context

    text = OWN_MULTIPLY.replace("{call}", "multiply")
    args = (G.normal([6, 8]), G.normal([6, 8]))
    with pytest.raises(SourceEditError):
        ProductSumToEinsum().build(text, lever_context(text, args, "m.py"))


def test_tf_multiply_beside_a_users_own_multiply_is_still_a_product():
    # The VALID twin: tf.multiply in the same module is the contraction (two parameters
    # of known shapes: the one einsum, stop 46).
    from rewrites import lever_context

    text = OWN_MULTIPLY.replace("{call}", "tf.multiply")
    args = (G.normal([6, 8]), G.normal([6, 8]))
    new = ProductSumToEinsum().build(text, lever_context(text, args, "m.py"))
    assert 'tf.einsum("ab,ab->a", c, u)' in new and f"def {HELPER}" not in new, new
    _agrees(text, new, args)


def test_the_written_helper_keeps_its_line_breaks():
    # A backslash line break inside the template string is a continuation of the string
    # literal: the patch showed "not (ra and rb)             or not ..." on one line.
    import types

    ctx = types.SimpleNamespace(target=types.SimpleNamespace(name="f"))
    new = ProductSumToEinsum().build(SQUARES, ctx)  # type: ignore[arg-type]
    helper = new.split(f"def {HELPER}(", 1)[1]
    runs = [line for line in helper.splitlines()
            if "  " in line.split("#", 1)[0].strip()]
    assert not runs, runs
    assert "\\\n" not in helper


SQUARES = """
import tensorflow as tf


def f(x, w):
    out = []
    for i in range(x.shape[0]):
        out.append(tf.reduce_sum(x[i] * x[i]) + tf.reduce_sum(x[i][:, None] * w, 0))
    return tf.stack(out)
"""


def test_a_sum_of_a_factor_times_itself_is_left_as_written():
    # x[i] * x[i]: both factors one tensor, one shape, no broadcast product to save; the
    # patch of reduce_sum(x[i] * x[i]) carried the 30-line generic helper for nothing.
    import types

    ctx = types.SimpleNamespace(target=types.SimpleNamespace(name="f"))
    only = SQUARES.replace(" + tf.reduce_sum(x[i][:, None] * w, 0)", "")
    with pytest.raises(SourceEditError, match="the same factor"):
        ProductSumToEinsum().build(only, ctx)  # type: ignore[arg-type]
    new = ProductSumToEinsum().build(SQUARES, ctx)  # type: ignore[arg-type]
    assert "tf.reduce_sum(x[i] * x[i])" in new
    assert f"{HELPER}(x[i][:, None], w, 0)" in new
