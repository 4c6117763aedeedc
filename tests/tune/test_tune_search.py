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
    # float16's tolerance (it computes in float16 and casts its result back to float32).
    gpu = tune(mod.dense, args, budget=3, levers=[ReducedPrecision("float16")],
               facts=DeviceFacts(gpus=((8, 0),)), reduced_precision=True)
    (cand,) = gpu.candidates
    assert cand.equivalent is True, cand.rejected
    assert cand.max_rel_err is not None and 1e-5 < cand.max_rel_err < 1e-2
    assert "+    x = tf.cast(x, tf.float16)" in cand.patch
    assert "+    return tf.cast(tf.nn.relu(tf.matmul(x, w)), tf.float32)" in cand.patch


BF16_CPU = DeviceFacts(cpu_flags=frozenset({"avx512_bf16"}))

NORMS = """
import tensorflow as tf


def norms(x):
    return tf.reduce_sum(x * x, axis=1)


def stats(x):
    if x.shape[0] == 0:
        return tf.zeros([0]), tf.size(x)
    return tf.reduce_sum(x * x, axis=1), tf.size(x)
"""


def test_a_precision_candidate_must_keep_the_functions_dtypes(user_module):
    """Issue 24: a bfloat16 candidate returned bfloat16 from a float32 function and was called
    equivalent (judged against the float64 truth, where dtypes may differ); its caller's
    `norms + tf.ones([128])` then raised. The contract (structure, shapes, dtypes) is checked
    by bench's equivalence core, apart from the values."""
    class Bfloat16Inside(Planted):  # a precision lever that forgets to cast back
        reduced_precision, dtype = True, "bfloat16"

    mod = user_module(NORMS, "norms_mod")
    x = tf.random.stateless_normal([128, 64], seed=[1, 2])
    forgot = Bfloat16Inside("planted: bfloat16 inside", "    return tf.reduce_sum(x * x, axis=1)",
                            "    return tf.reduce_sum(tf.cast(x, tf.bfloat16) ** 2, axis=1)")
    result = tune(mod.norms, (x,), budget=3, levers=[forgot], facts=BF16_CPU)
    (cand,) = result.candidates
    assert cand.equivalent is False and result.best is None, result.table()
    assert cand.rejected == ("changes the function's contract: output: dtype bfloat16, the "
                             "baseline has float32")


def test_precision_casts_cast_the_float32_outputs_back_at_each_return(user_module):
    from tfperf.tune.levers.precision import ReducedPrecision

    mod = user_module(NORMS, "stats_mod")
    x = tf.random.stateless_normal([16, 64], seed=[1, 2])
    result = tune(mod.stats, (x,), budget=3, levers=[ReducedPrecision("bfloat16")],
                  facts=BF16_CPU, reduced_precision=True)
    (cand,) = result.candidates
    # the size (int32) stays as it is; the float sums come back as float32
    assert cand.equivalent is True, result.table()
    assert "+        return tf.cast(tf.zeros([0]), tf.float32), tf.size(x)" in cand.patch
    assert "+    return tf.cast(tf.reduce_sum(x * x, axis=1), tf.float32), tf.size(x)" \
        in cand.patch


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
                  facts=DeviceFacts(cpu_flags=frozenset({"avx512_bf16"})),
                  reduced_precision=True)
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
    # the mean over one example's axis 0 would be a mean over the batch (same shape, other
    # values; inputs whose rows agree could not tell): refused before it is measured (stop 37)
    bad = tune(mod.centred, (x,), budget=3, levers=[BatchedBody()])
    (cand,) = bad.candidates
    assert "would reduce across the batch" in cand.rejected, bad.table()
    assert bad.best is None


def _timed(name, times, base_times, levers=None, precision=False, run=0):
    """A candidate as the pick sees it: its record, levers and per-round times of one run."""
    import statistics
    from types import SimpleNamespace

    from tfperf.tune.pick import Rounds
    from tfperf.tune.result import CandidateResult

    names = levers or name.split(" + ")
    speedup = statistics.median(b / t for b, t in zip(base_times, times, strict=True))
    record = CandidateResult(name, names, median_s=statistics.median(times), speedup=speedup,
                             equivalent=True)
    lvs = [SimpleNamespace(reduced_precision=precision and k == 0) for k in range(len(names))]
    return SimpleNamespace(record=record, levers=lvs, built=None,
                           rounds=[Rounds(run, tuple(times))])


BASE = [900e-6, 1500e-6, 1100e-6, 800e-6, 1400e-6, 1000e-6, 1200e-6]


def _pick_only():
    """A search that can only pick, and its baseline timed in the rounds of ``BASE``."""
    from types import SimpleNamespace

    from tfperf.tune.pick import Rounds
    from tfperf.tune.result import CandidateResult
    from tfperf.tune.search import Search

    search = Search.__new__(Search)  # no function, no budget
    search.calls = None
    base = SimpleNamespace(record=CandidateResult("baseline", [], median_s=1e-3, speedup=1.0),
                           levers=[], rounds=[Rounds(0, tuple(BASE))], built=None)
    return search, base


def test_a_winner_within_the_runs_noise_loses_to_the_safer_patch():
    """Issue 24: bfloat16 casts won at 355 µs against tf.function's 409 µs on a machine whose
    rounds spread far more. Ratios of one run, planted: tf.function / bfloat16 per round
    spread 0.8-1.5 (median 1.15): not told apart, so the patch without a precision change
    wins; both beat the baseline in every round."""
    tff = [409e-6 * k for k in (1.0, 1.1, 0.9, 1.05, 0.95, 1.0, 1.02)]
    ratio = (0.8, 1.5, 1.15, 0.9, 1.4, 0.85, 1.3)
    bf16 = [t / r for t, r in zip(tff, ratio, strict=True)]
    fast = _timed("bfloat16 casts", bf16, BASE, precision=True)
    safe = _timed("tf.function", tff, BASE)
    assert fast.record.speedup > safe.record.speedup * 1.05  # the old fixed 5 % picked it
    search, base = _pick_only()
    assert search._pick(base, [fast, safe]) is safe
    assert safe.record.notes == [
        "picked over bfloat16 casts (3.44×): this run cannot tell them apart (its speed over "
        "this one's ×1.15, ×0.80–×1.50 over 7 rounds of one run (95%)); no precision change"]
    # The same median gap, steady in every round: the run tells them apart, the faster wins.
    steady = _timed("bfloat16 casts", [t / 1.15 for t in tff], BASE, precision=True)
    safe.record.notes.clear()
    assert search._pick(base, [steady, safe]) is steady and not steady.record.notes


def test_fewer_levers_win_only_within_the_runs_noise_and_lint_comes_first():
    from tfperf.tune.pick import break_tie

    two = [300e-6 * k for k in (1.0, 1.2, 0.9, 1.1, 0.95, 1.0, 1.05)]
    # a third lever: per round 0.9-1.15 of the two-lever time (median 1.03): noise
    three = _timed("a + b + c", [t / r for t, r in zip(two, (0.9, 1.15, 1.0, 1.1, 0.95,
                                                              1.03, 1.05), strict=True)], BASE)
    pair = _timed("a + c", two, BASE)
    assert break_tie([three, pair], [0, 0]) is pair and "fewer levers" in pair.record.notes[0]
    # 10 % faster in every round: more than this run's noise; the faster keeps it.
    fast = _timed("a + b + c", [t / 1.1 for t in two], BASE)
    pair.record.notes.clear()
    assert break_tie([fast, pair], [0, 0]) is fast and not fast.record.notes
    # Times from two different runs cannot be paired: no equality is claimed.
    other_run = _timed("a + b + c", three.rounds[0].times, BASE, run=1)
    assert break_tie([other_run, pair], [0, 0]) is other_run
    # Lint comes after the levers, and only among equals: a candidate lint flags that the run
    # tells apart as faster keeps it.
    flagged = _timed("x", [t / 1.15 for t in two], BASE)
    clean = _timed("y + z", two, BASE)
    assert break_tie([flagged, clean], [2, 0]) is flagged and not flagged.record.notes


def test_the_faster_single_lever_is_not_lost_to_a_lint_preference():
    """Held-out round 14's c10: plain jit_compile measured faster (66.9×) than
    loops→vectorized_map + jit_compile (61.5×); the fixed 1.25× band with the fewest lint
    findings in it picked the slower, two-lever one. Planted: jit_compile 8 % faster in
    every round (told apart), lint flags its patch (the loop is left in)."""
    from tfperf.tune.pick import break_tie

    two = [2.1e-3 * k for k in (1.0, 1.2, 0.9, 1.1, 0.95, 1.0, 1.05)]
    one = _timed("jit_compile", [t / 1.08 for t in two], BASE)
    vmap = _timed("loops→vectorized_map + jit_compile", two, BASE,
                  levers=["loops→vectorized_map", "jit_compile"])
    assert break_tie([vmap, one], [0, 1]) is one and not one.record.notes
    assert break_tie([one, vmap], [1, 0]) is one  # order of the table does not matter


def test_a_real_tie_prefers_fewer_levers_then_fewer_lint_findings():
    """Twins of the c10 test: where the run cannot tell them apart (per-round ratios
    0.9-1.15 around 1.03), the patch with fewer levers wins even when it is the slower and
    lint flags it more; with as many levers, the one lint flags less."""
    from tfperf.tune.pick import break_tie

    two = [2.1e-3 * k for k in (1.0, 1.2, 0.9, 1.1, 0.95, 1.0, 1.05)]
    noise = (0.9, 1.15, 1.0, 1.1, 0.95, 1.03, 1.05)
    vmap = _timed("loops→vectorized_map + jit_compile",
                  [t / r for t, r in zip(two, noise, strict=True)], BASE,
                  levers=["loops→vectorized_map", "jit_compile"])
    one = _timed("jit_compile", two, BASE)
    assert vmap.record.speedup > one.record.speedup
    assert break_tie([vmap, one], [0, 1]) is one
    assert one.record.notes[0].startswith(
        "picked over loops→vectorized_map + jit_compile (")
    assert one.record.notes[0].endswith("; fewer levers")
    # As many levers: lint decides among equals.
    flagged = _timed("a", [t / r for t, r in zip(two, noise, strict=True)], BASE)
    clean = _timed("b", two, BASE)
    assert break_tie([flagged, clean], [2, 0]) is clean
    assert clean.record.notes[0].endswith("; lint flags it less")
    # Nothing to prefer: the faster.
    same = _timed("b", two, BASE)
    assert break_tie([flagged, same], [0, 0]) is flagged and not flagged.record.notes


def test_a_speedup_within_the_runs_noise_is_not_picked():
    """A candidate must beat the baseline by more than the spread of the per-round ratios of
    the run that timed both (not by a fixed 5 %); one never timed beside it, by ×1.5."""
    from types import SimpleNamespace

    from tfperf.tune.result import CandidateResult

    search, base = _pick_only()
    noisy = _timed("tf.function", [b / r for b, r in zip(BASE, (0.8, 1.3, 1.08, 0.85, 1.4,
                                                               0.9, 1.2), strict=True)], BASE)
    assert noisy.record.speedup == pytest.approx(1.08)
    assert search._pick(base, [noisy]) is None
    assert noisy.record.rejected.startswith("not told apart from the baseline: ×1.08, but ×0.")
    assert noisy.record.speedup_interval[0] < 1 < noisy.record.speedup_interval[1]
    steady = _timed("tf.function", [b / 1.08 for b in BASE], BASE)
    assert search._pick(base, [steady]) is steady and steady.record.rejected is None
    assert steady.record.speedup_interval == [pytest.approx(1.08, abs=1e-3)] * 2
    # Known by one call only (no rounds beside the baseline): ×1.5 or it is not told apart.
    for speedup, picked in ((1.3, False), (2.0, True)):
        lone = SimpleNamespace(record=CandidateResult("jit_compile", ["jit_compile"],
                                                      median_s=1e-3 / speedup, speedup=speedup,
                                                      equivalent=True),
                               levers=[SimpleNamespace()], rounds=[], built=None)
        assert (search._pick(base, [lone]) is lone) is picked
        assert (lone.record.rejected is None) is picked


def test_the_gap_needs_rounds_enough_to_measure_the_noise():
    """The interval of the median per-round ratio is the sign test's (exact for any spread):
    six rounds all on one side tell a gain apart, five of six do not; three rounds, too few
    to measure noise at 95 %, count only a gain beyond ×1.5."""
    from tfperf.tune.pick import MIN_ROUNDS, gap, median_interval

    assert MIN_ROUNDS == 6
    assert median_interval([3, 1, 2, 5, 4, 6]) == (1, 6)
    assert median_interval(list(range(1, 10))) == (2, 8)  # nine rounds: one each side left out
    base = [1e-3] * 6
    all_six = _timed("x", [b / 1.1 for b in base], base)
    base_t = _timed("baseline", base, base)
    assert gap(all_six, base_t).low == pytest.approx(1.1)
    five = _timed("x", [b / r for b, r in zip(base, (1.1, 1.1, 1.1, 1.1, 1.1, 0.95),
                                               strict=True)], base)
    assert gap(five, base_t).low < 1 < gap(five, base_t).high
    few = _timed("x", [b / 1.3 for b in base[:3]], base[:3])
    g = gap(few, _timed("baseline", base[:3], base[:3]))
    assert not g.measured and g.low < 1 and "too few to measure its noise" in g.describe()
    far = _timed("x", [b / 3 for b in base[:3]], base[:3])
    assert gap(far, _timed("baseline", base[:3], base[:3])).low == pytest.approx(2.0)


def test_a_slow_baseline_leaves_room_for_what_compare_runs_past_its_budget():
    from tfperf.tune.search import OVERSHOOT_CALLS, rounds_plan

    # The §5 case: a 9.15 s baseline and 184 s of final timing (it overran 240 s by 9 s when
    # the baseline joined the rounds with the whole 184 s).
    assert rounds_plan(9.15, 184.0) == (False, 184.0)
    with_base, seconds = rounds_plan(0.5, 60.0)
    assert with_base and seconds == 60.0 - OVERSHOOT_CALLS * 0.5
    assert seconds + OVERSHOOT_CALLS * 0.5 <= 60.0


def test_the_final_timing_gets_the_fastest_candidate_with_fewer_levers():
    """Issue 26: reduction + vectorized_map + jit_compile was picked at 0.65× of the plain
    reduction, which never reached the final timing; the fewest-levers candidate within the
    one-call doubt of the best joins it."""
    from tfperf.tune.result import CandidateResult
    from tfperf.tune.search import ONE_CALL_DOUBT, _Live, fewest_levers

    def live(levers: tuple[str, ...], median: float) -> _Live:
        out = _Live(tuple(Planted(n, "", "") for n in levers),
                    CandidateResult(" + ".join(levers), list(levers)))
        out.record.median_s = median
        return out

    stack = live(("reduce", "vmap", "xla"), 1.0)
    alone = live(("reduce",), 1.2)
    two = live(("reduce", "vmap"), 1.1)
    far = live(("other",), ONE_CALL_DOUBT * 1.5)
    assert fewest_levers([two, alone, far], [stack]) is alone
    assert fewest_levers([far], [stack]) is None
    assert fewest_levers([stack], [alone]) is None


def test_with_calls_a_candidate_slower_over_those_calls_says_why():
    # stop 44: `tune --calls 1` on a loss: jit_compile 1.28x in the steady state, 183 ms
    # first call against the baseline's 34 ms, listed unpicked with no reason given
    from types import SimpleNamespace

    from tfperf.tune.result import CandidateResult

    search, _ = _pick_only()
    search.calls = 1
    base = SimpleNamespace(record=CandidateResult("baseline", [], median_s=1.06e-3,
                                                  speedup=1.0, first_call_s=0.0344),
                           levers=[], rounds=[], built=None)
    jit = _timed("jit_compile", [0.85e-3] * 7, [1.06e-3] * 7)
    jit.record.first_call_s = 0.183
    assert search._pick(base, [jit]) is None
    assert jit.record.rejected == ("slower over 1 call (--calls), first call included: "
                                   "0.183 s against the baseline's 0.0344 s")
    # over 1000 calls it pays back: picked, no reason
    jit.record.rejected, search.calls = None, 1000
    assert search._pick(base, [jit]) is jit and jit.record.rejected is None
