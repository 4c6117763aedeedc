"""Variants written to fool the equivalence check, run through compare() as a user would: every
wrong one is reported not equivalent (or "cannot compare", exit status 1), none as equivalent;
the honest rewrites of the case study all are."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.tf

tf = pytest.importorskip("tensorflow")

from tfperf.bench import compare  # noqa: E402

QUICK = {"budget": 0.05, "min_rounds": 1, "min_block_time": 0.001}


def _inputs():
    g = tf.random.Generator.from_seed(3)
    return {
        "vec": tf.constant([1000.0, 0.01, 0.02]),
        "square": g.normal([8, 8]),
        "cube": g.normal([4, 16, 16]),
        "weights": g.normal([16]),
        "seq": tf.range(12.0),
        "big": tf.fill([16], 300.0),
        "signed": tf.constant([4.0, 1.0, -1.0, 9.0]),
    }


def _cases():
    x = _inputs()
    acc = tf.Variable(tf.zeros([8, 8]))

    def accumulate(m):  # right on its first call only: each call adds again
        acc.assign_add(m * 2.0)
        return acc

    def mean_square_f16(v):  # squares overflow float16 (max 65504) to inf
        h = tf.cast(v, tf.float16)
        return tf.cast(tf.reduce_sum(h * h) / 16, tf.float32)

    return {
        "dropped small terms": (lambda v: v + 0.0,
                                lambda v: tf.where(tf.abs(v) < 1, 0.0, v), (x["vec"],)),
        "transposed square result": (lambda m: tf.matmul(m, m * 0.5),
                                     lambda m: tf.transpose(tf.matmul(m, m * 0.5)),
                                     (x["square"],)),
        "wrong axis (S20)": (lambda s, w: tf.reduce_sum(s * tf.reshape(w, [-1, 1]), axis=1),
                             lambda s, w: tf.reduce_sum(s * tf.reshape(w, [-1, 1]), axis=2),
                             (x["cube"], x["weights"])),
        "off-by-one slice": (lambda s: s[1:9] * 2.0, lambda s: s[2:10] * 2.0, (x["seq"],)),
        "float16 overflow to inf": (lambda v: tf.reduce_sum(v * v) / 16, mean_square_f16,
                                    (x["big"],)),
        "NaN in another place": (lambda v: tf.sqrt(v), lambda v: tf.sqrt(tf.roll(v, 1, 0)),
                                 (x["signed"],)),
        "tuple vs list": (lambda v: (v, v * 2), lambda v: [v, v * 2], (x["seq"],)),
        "dict with an extra key": (lambda v: {"y": v}, lambda v: {"y": v, "debug": v},
                                   (x["seq"],)),
        "ragged, one row length differs": (
            lambda v: tf.RaggedTensor.from_row_lengths(v, [2, 3, 7]),
            lambda v: tf.RaggedTensor.from_row_lengths(v, [2, 4, 6]), (x["seq"],)),
        "returns a variable it keeps updating": (lambda m: m * 2.0, accumulate,
                                                 (x["square"],)),
    }


CASES = list(_cases())


@pytest.fixture(scope="module")
def verdicts():
    out = {}
    for name, (base, wrong, args) in _cases().items():
        result = compare({"base": base, "wrong": wrong}, args, baseline="base", **QUICK)
        out[name] = result
    return out


@pytest.mark.parametrize("case", CASES)
def test_every_wrong_variant_is_caught(verdicts, case):
    result = verdicts[case]
    wrong = result["wrong"]
    assert wrong.error is None, wrong.error
    assert wrong.equivalent is not True, (case, wrong.equivalence_note)
    assert wrong.equivalence_note  # says why
    assert result.exit_status == 1
    table = result.table()
    assert "NOT EQUIVALENT" in table or "NOT CHECKED" in table


def test_the_wrong_axis_names_its_worst_element(verdicts):
    eq = verdicts["wrong axis (S20)"]["wrong"].equivalence
    assert eq.equivalent is False and len(eq.worst.index) == 2
    assert eq.max_abs_err > 0.1


def test_a_variable_that_drifts_is_named_stateful(verdicts):
    note = verdicts["returns a variable it keeps updating"]["wrong"].equivalence_note
    assert "changes from call to call" in note


def test_an_output_that_cannot_be_compared_fails_unless_allowed():
    class Box:
        pass

    strict = compare({"base": lambda: Box(), "other": lambda: Box()}, baseline="base", **QUICK)
    assert strict["other"].equivalent is None and strict["other"].unchecked
    assert strict.exit_status == 1 and "NOT CHECKED" in strict.table()
    lenient = compare({"base": lambda: Box(), "other": lambda: Box()}, baseline="base",
                      allow_unchecked=True, **QUICK)
    assert lenient.exit_status == 0 and lenient.to_dict()["variants"][1]["equivalent"] is None


def test_honest_rewrites_of_the_case_study_are_equivalent():
    from tfperf.examples.case_study_fixed import (
        compute_feature_tf_einsum,
        compute_feature_tf_vec,
        compute_feature_tf_xla,
    )
    from tfperf.examples.case_study_slow import compute_feature_tf_slow

    g = tf.random.Generator.from_seed(5)
    args = (g.normal([2, 200, 64]), g.normal([200]))
    result = compare({"loop": compute_feature_tf_slow, "vectorised": compute_feature_tf_vec,
                      "tf.function": tf.function(compute_feature_tf_vec),
                      "xla": compute_feature_tf_xla, "einsum": compute_feature_tf_einsum},
                     args, baseline="loop", grad=True, reference="float64", **QUICK)
    for name in ("vectorised", "tf.function", "xla", "einsum"):
        v = result[name]
        assert v.equivalent is True, (name, v.equivalence_note)
        assert v.gradient is not None and v.gradient.equivalent is True
    assert result.exit_status == 0
    # The loop pins tf.float32, so the float64 truth comes from the first variant that
    # agrees with it and can run on float64 inputs; the notes say which.
    assert any("the float64 reference is 'vectorised'" in n for n in result["loop"].notes)


def test_gradients_catch_a_variant_that_agrees_in_value_only():
    g = tf.random.Generator.from_seed(6)
    args = (g.normal([4, 8]), g.normal([8]))
    result = compare({"base": lambda x, w: tf.reduce_sum(x * w, axis=1),
                      "no grad to w": lambda x, w: tf.reduce_sum(x * tf.stop_gradient(w),
                                                                 axis=1)},
                     args, baseline="base", grad=True, **QUICK)
    v = result["no grad to w"]
    assert v.equivalence.equivalent is True and v.gradient.equivalent is False
    assert v.equivalent is False and "gradients:" in v.equivalence_note


def test_float64_reference_judges_a_float16_variant_by_the_truth():
    g = tf.random.Generator.from_seed(7)
    x, w = g.normal([16, 64]), g.normal([64])

    def base(x, w):
        return tf.reduce_sum(x * w, axis=1)

    def half(x, w):
        return tf.reduce_sum(tf.cast(x, tf.float16) * tf.cast(w, tf.float16), axis=1)

    plain = compare({"base": base, "half": half}, (x, w), baseline="base", **QUICK)
    assert plain["half"].equivalent is False and "dtype float16" in plain["half"].equivalence_note
    ref = compare({"base": base, "half": half}, (x, w), baseline="base", reference="float64",
                  **QUICK)
    assert ref["half"].equivalent is True, ref["half"].equivalence_note
    assert any("float64 reference" in n for n in ref["base"].notes)
    # A baseline that cannot run on float64 inputs leaves everything unchecked, loudly.
    pinned = compare({"base": lambda x, w: base(x, w) + tf.zeros([16], tf.float32),
                      "half": half}, (x, w), baseline="base", reference="float64", **QUICK)
    assert pinned["half"].equivalent is None and pinned.exit_status == 1
    assert "could run on float64 inputs" in pinned["half"].equivalence_note
