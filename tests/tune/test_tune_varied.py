"""The equivalence check's second, varied set of inputs (tune/varied.py): rewrites that agree
with the baseline on uniform user inputs by accident (the max of the whole batch for each
example's, the first row for the mean of identical rows, a transposed symmetric matrix, a
gather of ids equal to their positions dropped) are rejected; an honest rewrite is kept; the
check is turned off, with why, where the baseline itself fails on the varied inputs."""

from __future__ import annotations

import numpy as np
import pytest

from tfperf.tune.varied import nonfinite, vary, vary_array

tf = pytest.importorskip("tensorflow")

from planted import Planted  # noqa: E402  (tests/tune/planted.py)

from tfperf.tune import tune  # noqa: E402


def test_varied_arrays_keep_shape_dtype_range_sign_and_whole_numbers():
    rng = np.random.default_rng(0)
    images = rng.uniform(0.0, 255.0, size=(6, 5, 5, 3))
    images[:, 0, 0, 0] = 255.0  # every image reaches 255
    v = vary_array(images)
    assert v.shape == images.shape and v.dtype == images.dtype
    assert images.min() <= v.min() and v.max() <= images.max()
    assert len(set(np.round(v.reshape(6, -1).max(axis=1), 6))) == 6  # each its own max
    ones = vary_array(np.ones((4, 4), np.float32))
    assert ones.dtype == np.float32 and ones.min() >= 1.0 and ones.max() <= 2.0
    assert not np.allclose(ones, ones.T) and not np.allclose(ones[0], ones[1])
    neg = vary_array(-np.ones((3, 3)))
    assert (neg < 0).all()
    assert (vary_array(np.zeros((3, 3))) == 0).all()  # zero stays zero
    labels = np.array([[0, 1, 2, 3], [3, 2, 1, 0]], np.float32)  # whole numbers stay whole
    lv = vary_array(labels)
    assert (lv == np.round(lv)).all() and lv.min() >= 0 and lv.max() <= 3
    ids = np.arange(6, dtype=np.int64)  # indices: the same values, rolled
    assert sorted(vary_array(ids)) == list(ids) and (vary_array(ids) != ids).any()
    mask = np.array([True, False, False, True, True])
    assert vary_array(mask).sum() == mask.sum()
    pixels = np.full((4, 3), 200, np.uint8)  # pixel data: varied like floats, in range
    pv = vary_array(pixels)
    assert pv.dtype == np.uint8 and len(set(pv.ravel().tolist())) > 1


def test_vary_keeps_structures_and_leaves_what_is_not_an_array():
    value = ((tf.ones([3, 2]), 7, 0.5, "s", tf.constant(2.0)), {"ids": tf.range(4)})
    (x, n, f, s, scalar), kw = vary(value)
    assert x.shape == (3, 2) and x.dtype == tf.float32 and (n, f, s) == (7, 0.5, "s")
    assert float(scalar) == 2.0  # a scalar: no axis to vary along
    assert kw["ids"].dtype == tf.int32 and sorted(kw["ids"].numpy()) == [0, 1, 2, 3]
    assert nonfinite([np.array([1.0, np.nan]), {"a": np.inf}, 3]) == 2


PER_IMAGE = """
import tensorflow as tf


def normalise(images):
    out = []
    for im in tf.unstack(images):
        out.append(im / tf.reduce_max(im))
    return tf.stack(out)
"""


def _images_all_reaching_255():
    rng = np.random.default_rng(1)
    images = rng.uniform(0.0, 255.0, size=(6, 8, 8)).astype(np.float32)
    images[:, 0, 0] = 255.0
    return tf.constant(images)


LOOP = ("    out = []\n    for im in tf.unstack(images):\n"
        "        out.append(im / tf.reduce_max(im))\n    return tf.stack(out)\n")


def test_the_max_of_the_whole_batch_for_each_examples_max_is_rejected(user_module):
    # Stop 36's wrong pick: every image of the inputs has max 255, so the batch's max
    # equals each image's; on the varied inputs each image has its own.
    mod = user_module(PER_IMAGE)
    wrong = Planted("planted: batch max", LOOP,
                    "    return images / tf.reduce_max(images)\n")
    honest = Planted("planted: per-image max", LOOP,
                     "    return images / tf.reduce_max(images, axis=[1, 2], keepdims=True)\n")
    result = tune(mod.normalise, (_images_all_reaching_255(),), budget=4,
                  levers=[wrong, honest])
    by = {c.name: c for c in result.candidates}
    assert by["planted: batch max"].equivalent is False
    assert by["planted: batch max"].rejected.startswith(
        "disagrees with the baseline on varied inputs"), by["planted: batch max"].rejected
    assert by["planted: per-image max"].equivalent is True
    assert not (by["planted: per-image max"].rejected or "").startswith(("disagrees", "fails"))
    assert result.baseline["varied_inputs"].startswith("also checked on varied inputs")
    assert "equivalence: also checked on varied inputs" in result.table()


MEAN = """
import tensorflow as tf


def centre(x):
    return x - tf.reduce_mean(x, axis=0)
"""


@pytest.mark.parametrize("new", [
    "    return x - tf.reduce_mean(x, axis=1, keepdims=True)\n",  # the wrong axis
    "    return x - x[0]\n",  # the first row for the mean of the rows
])
def test_a_mean_over_the_wrong_axis_on_identical_rows_is_rejected(user_module, new):
    mod = user_module(MEAN)
    wrong = Planted("planted: wrong axis", "    return x - tf.reduce_mean(x, axis=0)\n", new)
    x = tf.fill([6, 6], 3.0)  # a square of identical rows (and columns)
    result = tune(mod.centre, (x,), budget=4, levers=[wrong])
    (cand,) = result.candidates
    assert cand.equivalent is False
    assert cand.rejected.startswith("disagrees with the baseline on varied inputs"), cand.rejected


SWAP = """
import tensorflow as tf


def project(w, x):
    return tf.linalg.matvec(w, x)
"""


def test_an_axis_swap_on_a_symmetric_input_is_rejected(user_module):
    mod = user_module(SWAP)
    wrong = Planted("planted: transposed", "tf.linalg.matvec(w, x)",
                    "tf.linalg.matvec(w, x, transpose_a=True)")
    a = tf.random.Generator.from_seed(3).normal([5, 5])
    w = a + tf.transpose(a)  # symmetric: w and its transpose agree
    result = tune(mod.project, (w, tf.ones([5])), budget=4, levers=[wrong])
    (cand,) = result.candidates
    assert cand.rejected.startswith("disagrees with the baseline on varied inputs"), cand.rejected


GATHER = """
import tensorflow as tf


def lookup(table, ids):
    return tf.gather(table, ids) * 2.0
"""


def test_a_gather_of_ids_equal_to_their_positions_dropped_is_rejected(user_module):
    mod = user_module(GATHER)
    wrong = Planted("planted: no gather", "tf.gather(table, ids)", "table")
    table = tf.random.Generator.from_seed(4).normal([6, 3])
    result = tune(mod.lookup, (table, tf.range(6)), budget=4, levers=[wrong])
    (cand,) = result.candidates
    assert cand.rejected.startswith("disagrees with the baseline on varied inputs"), cand.rejected


SEGMENTS = """
import tensorflow as tf


def sums(x, ids):
    return tf.math.segment_sum(x, ids)
"""


def test_the_check_is_off_with_why_where_the_baseline_fails_on_the_varied_inputs(user_module):
    # sorted segment ids rolled are not sorted: the baseline raises there, so the varied
    # inputs are outside what the function takes; candidates are judged on the user's.
    mod = user_module(SEGMENTS)
    same = Planted("planted: same", "    return", "    return")
    result = tune(mod.sums, (tf.ones([4, 2]), tf.constant([0, 0, 1, 2])), budget=4,
                  levers=[same])
    note = result.baseline["varied_inputs"]
    assert note.startswith("checked on the user's inputs only: the baseline fails on the "
                           "varied inputs"), note
    (cand,) = result.candidates
    assert cand.equivalent is True


def test_the_check_is_off_where_the_baseline_turns_non_finite(user_module):
    mod = user_module("import tensorflow as tf\n\n\ndef f(x):\n    return tf.sqrt(1.0 - x)\n")
    same = Planted("planted: same", "    return", "    return")
    result = tune(mod.f, (tf.ones([3, 3]),), budget=4, levers=[same])
    assert "non-finite values on the varied inputs" in result.baseline["varied_inputs"]


def test_a_stateful_function_keeps_its_inputs(user_module):
    mod = user_module(MEAN)
    same = Planted("planted: same", "    return", "    return")
    result = tune(mod.centre, inputs=lambda: ((tf.ones([3, 3]),), {}), budget=4,
                  levers=[same])
    assert "stateful function" in result.baseline["varied_inputs"]


@pytest.mark.parametrize("value, dtype", [(255, np.uint8), (-100, np.int8), (127, np.int8),
                                          (60000, np.uint16), (40000.0, np.float16)],
                         ids=["uint8-255", "int8-minus-100", "int8-max", "uint16", "float16"])
def test_a_constant_array_scaled_up_stays_within_its_dtype(value, dtype):
    # scaled by up to 2: uint8 255 wrapped to 62..., int8 -100 flipped sign, float16 became inf
    x = np.full((6, 5), value, dtype=dtype)
    v = vary_array(x)
    assert v.dtype == x.dtype and np.all(np.isfinite(v.astype(np.float64)))
    assert np.all(np.sign(v.astype(np.float64)) == np.sign(float(x.flat[0])))
    assert np.all(np.abs(v.astype(np.float64)) >= abs(float(x.flat[0]))), v


def test_a_constant_whole_number_float_array_stays_whole():
    v = vary_array(np.full((6, 5), 3.0, np.float32))  # a tf.ones-like count or mask
    assert np.all(v == np.round(v)) and v.min() >= 3.0 and v.max() <= 6.0, v
    assert len(np.unique(v)) > 1


def test_clipping_keeps_what_was_not_finite():
    x = np.full((4, 4), 40000.0, np.float16)
    x[0, 0], x[1, 1] = np.inf, np.nan
    v = vary_array(x)
    assert v[0, 0] == np.inf and np.isnan(v[1, 1]) and np.isfinite(v).sum() == 14
