"""A ``tf.cond`` in a per-example body (held-out round 8's c01: a ``tf.map_fn`` of a lambda
whose ``tf.cond`` returns 1 or 0) is read as ``tf.where`` by the loop levers, so the body is
batched: one comparison over the batch instead of one cond per row."""

from __future__ import annotations

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

from tfperf.tune import tune  # noqa: E402
from tfperf.tune.levers.loop_model import LoopsBatched, conds_as_wheres  # noqa: E402

SHARE = """
import tensorflow as tf


def f(scores, weights):
    one = tf.constant(1.0)
    zero = tf.constant(0.0)
    hits = tf.map_fn(lambda r: tf.cond(tf.reduce_max(r) > 0.5, lambda: one, lambda: zero),
                     scores * weights)
    return tf.reduce_mean(hits)
"""

RANDOM = """
import tensorflow as tf


def f(x):
    return tf.map_fn(lambda r: tf.cond(r[0] > 0, lambda: tf.random.uniform([]),
                                       lambda: r[1]), x)
"""


def test_a_cond_of_plain_branches_in_a_body_is_a_where():
    new = conds_as_wheres(SHARE, "f", "tf")
    assert "tf.where(tf.reduce_max(r) > 0.5, one, zero)" in new and "tf.cond" not in new, new


def test_a_cond_with_a_random_branch_stays():
    assert conds_as_wheres(RANDOM, "f", "tf") == RANDOM


def test_a_per_row_cond_is_batched(user_module):
    # (a cond choosing between rows by a per-row test is not batched yet: the where's
    # condition would need the row's axes lined up after it)
    lever = LoopsBatched(axes=True)
    mod = user_module(SHARE)
    rng = np.random.default_rng(11)
    scores = tf.constant(rng.normal(size=(512, 6)).astype(np.float32))
    weights = tf.constant(rng.uniform(0.2, 1.5, size=(512, 6)).astype(np.float32))
    result = tune(mod.f, (scores, weights), budget=10, levers=[lever])
    found = {c.name: c for c in result.candidates}[lever.name]
    assert found.rejected is None and found.equivalent is True, result.table()
    assert result.best_name == lever.name, result.table()  # 512 eager conds → a few ops


GUARDED_LOG = """
import tensorflow as tf


def f(x):
    return tf.map_fn(lambda r: tf.cond(r > 0.0, lambda: tf.math.log(r),
                                       lambda: tf.constant(0.0)), x)
"""

USER_BRANCH = """
import tensorflow as tf

counts = tf.Variable(0.0)


def update_counts(r):
    counts.assign_add(1.0)
    return r


def f(x):
    return tf.map_fn(lambda r: tf.cond(r > 0.0, lambda: update_counts(r), lambda: r), x)
"""

DIVIDED = """
import tensorflow as tf


def f(x):
    return tf.map_fn(lambda r: tf.cond(tf.abs(r) > 0.0, lambda: 1.0 / r, lambda: r / 2), x)
"""


@pytest.mark.parametrize("source", [GUARDED_LOG, USER_BRANCH, DIVIDED],
                         ids=["guarded-log", "user-function", "division-by-data"])
def test_a_cond_whose_branch_is_not_total_stays(source):
    # both branches of a where run: log(0), 1/0 or a user's assignment on the excluded side
    assert conds_as_wheres(source, "f", "tf") == source


def test_a_cond_of_total_ops_and_a_constant_division_is_a_where():
    source = DIVIDED.replace("1.0 / r", "tf.maximum(r, 0.0) * 3").replace("tf.abs(r)", "r")
    assert "tf.where(r > 0.0, tf.maximum(r, 0.0) * 3, r / 2)" in conds_as_wheres(
        source, "f", "tf")


def test_the_gradient_check_sees_nan_through_a_where_of_a_guarded_log():
    from tfperf.tune.gradient_check import finite_gradient_lost

    def guarded(x):
        return tf.map_fn(lambda r: tf.cond(r > 0.0, lambda: tf.math.log(r),
                                           lambda: tf.constant(0.0)), x)

    def where(x):
        return tf.where(x > 0.0, tf.math.log(x), 0.0)

    x = tf.constant([0.0, 1.5, -2.0, 3.0])
    assert np.array_equal(guarded(x).numpy(), where(x).numpy())  # forward: the same
    why = finite_gradient_lost(guarded, where, (x,), {})
    assert why is not None and "NaN or Inf" in why, why
    assert finite_gradient_lost(guarded, guarded, (x,), {}) is None


def test_the_search_rejects_a_where_whose_gradient_is_nan(user_module):
    from planted import Planted

    old = "tf.cond(r > 0.0, lambda: tf.math.log(r),\n                                       " \
          "lambda: tf.constant(0.0))"
    assert old in GUARDED_LOG
    lever = Planted("planted where", old, "tf.where(r > 0.0, tf.math.log(r), 0.0)")
    mod = user_module(GUARDED_LOG)
    x = tf.constant(np.linspace(-2.0, 2.0, 65).astype(np.float32))  # with 0: 1/0
    result = tune(mod.f, (x,), budget=10, levers=[lever])
    found = {c.name: c for c in result.candidates}["planted where"]
    assert found.rejected is not None and "gradient" in found.rejected, result.table()
    assert result.best_name != "planted where"


SHORT_GUARD = """
import tensorflow as tf


def f(ts):
    out = []
    for t in ts:
        out.append(tf.cond(tf.size(t) > 3, lambda: t[3] * 2.0, lambda: tf.constant(0.0)))
    return tf.stack(out)
"""


@pytest.mark.parametrize("branch", [
    "t[3] * 2.0", "tf.reshape(t, [2, 2])[0, 0]", "tf.reduce_sum(tf.concat([t, t[:1]], 0))",
    "tf.reduce_sum(tf.stack([t[:4], tf.ones([4])]))", "tf.reduce_sum(tf.fill([4], t[0]))",
    "tf.reduce_sum(tf.matmul(tf.reshape(t, [2, 2]), tf.ones([2, 2])))",
    "tf.reduce_sum(tf.einsum('i,i->', t[:4], tf.ones([4])))"],
    ids=["constant-index", "reshape", "concat", "stack", "fill", "matmul", "einsum"])
def test_a_branch_that_raises_where_the_guard_excludes_stays_a_cond(branch):
    # review 38b item 4: both sides of a where run, and on a short t these raise where
    # the user's function returns 0.0
    source = SHORT_GUARD.replace("t[3] * 2.0", branch)
    assert conds_as_wheres(source, "f", "tf") == source


def test_a_slice_in_a_branch_is_total():
    new = conds_as_wheres(SHORT_GUARD.replace("t[3] * 2.0", "tf.reduce_sum(t[1:]) * 2.0"),
                          "f", "tf")
    assert "tf.where(tf.size(t) > 3, tf.reduce_sum(t[1:]) * 2.0, tf.constant(0.0))" in new


def test_the_pick_runs_where_the_users_function_runs(user_module, roomy_limits):
    # All the sample inputs are long, so a where of t[3] agreed on them; the pick must
    # still run on a short t, as the user's function does (it returns 0.0 there).
    mod = user_module(SHORT_GUARD)
    long = [tf.constant(np.arange(k, k + 6, dtype=np.float32)) for k in range(48)]
    result = tune(mod.f, (long,), budget=10, levers=[LoopsBatched(axes=True)])
    short = [tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0])]  # same shape: a batch
    expected = mod.f(short).numpy()
    for cand in result.candidates:
        assert "tf.where(tf.size(t) > 3" not in (cand.patch or ""), result.table()
    # The outcome is the lever's, not the budget's (the check below ran only when a pick
    # was left): a cond whose branch reads t[3] is not batched (no pick), or, batched, the
    # pick runs on the short t.
    batched = next(c for c in result.candidates if c.name.startswith("loops→batched ops"))
    if result.best is None:
        assert (batched.rejected or "").startswith("not applicable"), result.table()
        return
    picked = user_module(result.patched_source, name="picked")
    assert np.array_equal(picked.f(short).numpy(), expected), result.table()
