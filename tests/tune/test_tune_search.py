"""The search on real TensorFlow: planted levers that must be rejected (fast but wrong,
raising, retracing every call), pfor's while_loop fallback, precision judged against the
float64 truth with injected device facts, and the rejected candidates' reasons."""

from __future__ import annotations

import pytest

from tfperf.tune.device import DeviceFacts

tf = pytest.importorskip("tensorflow")

from planted import Planted  # noqa: E402  (tests/tune/planted.py)

from tfperf.tune import tune  # noqa: E402

CHAIN = """
import tensorflow as tf


def chain(x):
    y = x
    for _ in range(20):
        y = tf.sin(y) * 0.5 + y * 0.5
    return y
"""




def _inputs():
    return (tf.random.Generator.from_seed(0).normal([64, 32]),)


def test_a_fast_but_wrong_lever_is_never_picked(user_module):
    mod = user_module(CHAIN)
    wrong = Planted("planted: skip the loop", "    for _ in range(20):\n"
                    "        y = tf.sin(y) * 0.5 + y * 0.5\n", "")
    raising = Planted("planted: raises", "    y = x\n", "    raise ValueError('planted')\n")
    result = tune(mod.chain, _inputs(), budget=4, levers=[wrong, raising])
    by = {c.name: c for c in result.candidates}
    assert by["planted: skip the loop"].equivalent is False
    assert by["planted: skip the loop"].rejected.startswith("disagrees with the baseline")
    assert by["planted: raises"].rejected == "raises: ValueError: planted"
    assert result.best is None and result.patch == ""
    assert "disagrees with the baseline" in result.table()


def test_a_lever_that_retraces_every_call_is_rejected(user_module):
    mod = user_module(CHAIN)
    retrace = Planted(
        "planted: retrace", "    return y\n",
        "    return _step(y, next(_calls))\n\n\nimport itertools\n_calls = itertools.count()\n\n\n"
        "@tf.function\ndef _step(y, n):\n    return y\n")
    result = tune(mod.chain, _inputs(), budget=4, levers=[retrace])
    (cand,) = result.candidates
    assert cand.rejected is not None and cand.rejected.startswith("retraces on every call")


def test_pfor_falling_back_to_a_while_loop_is_rejected(user_module):
    mod = user_module("""
        import tensorflow as tf


        def histograms(x):
            out = []
            for i in range(x.shape[0]):
                out.append(tf.histogram_fixed_width(x[i], [-3.0, 3.0], nbins=5))
            return tf.stack(out)
        """)
    from tfperf.tune.levers.tf_function import TfFunction
    from tfperf.tune.levers.vectorized_map import VectorizedMap

    result = tune(mod.histograms, _inputs(), budget=5, levers=[VectorizedMap(), TfFunction()])
    rejected = {c.name: c.rejected for c in result.candidates}
    assert "falls back: Using a while_loop for converting HistogramFixedWidth" in \
        rejected["vectorized_map"]


def test_float16_is_rejected_on_cpu_and_tried_with_gpu_facts(user_module):
    mod = user_module("""
        import tensorflow as tf


        def dense(x, w):
            return tf.nn.relu(tf.matmul(x, w))
        """)
    from tfperf.tune.levers.precision import ReducedPrecision

    g = tf.random.Generator.from_seed(0)
    args = (g.normal([32, 64]), g.normal([64, 16]) * 0.1)
    cpu = tune(mod.dense, args, budget=3, levers=[ReducedPrecision("float16")],
               facts=DeviceFacts())
    (cand,) = cpu.candidates
    assert cand.rejected.startswith("not applicable: float16 needs a GPU")
    # An A100's facts: the lever is tried, and judged against the float64 truth with
    # float16's tolerance (the candidate returns float16).
    gpu = tune(mod.dense, args, budget=3, levers=[ReducedPrecision("float16")],
               facts=DeviceFacts(gpus=((8, 0),)))
    (cand,) = gpu.candidates
    assert cand.equivalent is True, cand.rejected
    assert cand.max_rel_err is not None and 1e-5 < cand.max_rel_err < 1e-2
    assert "+    x = tf.cast(x, tf.float16)" in cand.patch


def test_precision_too_far_from_the_truth_is_rejected(user_module):
    # A sum of many terms that cancel: bfloat16's 8 bits of mantissa lose it.
    mod = user_module("""
        import tensorflow as tf


        def cancel(x):
            return tf.reduce_sum(x * 1000.0 + 1.0, axis=1) - tf.reduce_sum(x * 1000.0, axis=1)
        """)
    from tfperf.tune.levers.precision import ReducedPrecision

    result = tune(mod.cancel, (tf.random.Generator.from_seed(0).normal([4, 512]),), budget=3,
                  levers=[ReducedPrecision("bfloat16")],
                  facts=DeviceFacts(cpu_flags=frozenset({"avx512_bf16"})))
    (cand,) = result.candidates
    assert cand.equivalent is False
    assert cand.rejected.startswith("disagrees with the baseline")


BATCHABLE = """
import tensorflow as tf


def rows(x, w):
    out = []
    for i in range(x.shape[0]):
        out.append(tf.nn.relu(tf.linalg.matvec(w, x[i], transpose_a=True)) + 1.0)
    return tf.stack(out)


def rows_m(x, m):
    out = []
    for i in range(x.shape[0]):
        out.append(tf.linalg.matvec(m, x[i]))
    return tf.stack(out)


def centred(x):
    out = []
    for i in range(x.shape[0]):
        out.append(x[i] - tf.reduce_mean(x[i], axis=0))
    return tf.stack(out)
"""


def test_batched_ops_agree_where_ops_broadcast_and_are_rejected_where_they_do_not(user_module):
    from tfperf.tune.levers.vectorized_map import BatchedBody

    mod = user_module(BATCHABLE, "batchable")
    x = tf.random.stateless_normal([12, 12], seed=[1, 2])  # square: shapes cannot tell
    good = tune(mod.rows, (x, tf.random.stateless_normal([12, 5], seed=[3, 4])), budget=3,
                levers=[BatchedBody()])
    assert good.best is not None and good.best.equivalent is True, good.table()
    # one example's matvec becomes one matmul of the batch (not a matvec per example)
    assert "+    out = tf.nn.relu(tf.matmul(x, w)) + 1.0" in good.patch
    other = tune(mod.rows_m, (x, tf.random.stateless_normal([5, 12], seed=[5, 6])), budget=3,
                 levers=[BatchedBody()])
    assert other.candidates[0].equivalent is True, other.table()
    assert "tf.matmul(x, m, transpose_b=True)" in other.candidates[0].patch
    # the mean over one example's axis 0 becomes a mean over the batch: same shape, other values
    bad = tune(mod.centred, (x,), budget=3, levers=[BatchedBody()])
    (cand,) = bad.candidates
    assert cand.rejected.startswith("disagrees with the baseline"), bad.table()
    assert bad.best is None


def test_ties_go_to_lint_then_to_the_smallest_patch_within_noise():
    from types import SimpleNamespace

    from tfperf.tune.search import break_tie

    def cand(name, speedup, levers):
        return SimpleNamespace(record=SimpleNamespace(name=name, speedup=speedup,
                                                      levers=levers, notes=[]))

    # Within 5 %: the extra lever adds nothing measurable, the smaller patch wins.
    three = cand("a + b + c", 2.87, ["a", "b", "c"])
    two = cand("a + c", 2.81, ["a", "c"])
    assert break_tie([three, two], [0, 0]) is two and "fewer levers" in two.record.notes[0]
    # 10 % apart is more than noise: the faster keeps it, whatever its size.
    fast = cand("a + b + c", 3.10, ["a", "b", "c"])
    assert break_tie([fast, two], [0, 0]) is fast and not fast.record.notes
    # Lint first: the candidate lint flags least wins even when slower (within TIE).
    flagged = cand("x", 3.0, ["x"])
    clean = cand("y + z", 2.6, ["y", "z"])
    assert break_tie([flagged, clean], [2, 0]) is clean
    assert "lint flags it least" in clean.record.notes[0]


def test_a_slow_baseline_leaves_room_for_what_compare_runs_past_its_budget():
    from tfperf.tune.search import OVERSHOOT_CALLS, rounds_plan

    # The §5 case: a 9.15 s baseline and 184 s of final timing (it overran 240 s by 9 s when
    # the baseline joined the rounds with the whole 184 s).
    assert rounds_plan(9.15, 184.0) == (False, 184.0)
    with_base, seconds = rounds_plan(0.5, 60.0)
    assert with_base and seconds == 60.0 - OVERSHOOT_CALLS * 0.5
    assert seconds + OVERSHOOT_CALLS * 0.5 <= 60.0
