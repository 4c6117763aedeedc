"""Retrace causes: the descriptor/diff logic alone, then on real tf.function calls."""

import inspect

import numpy as np

from tfperf.profile import retrace
from tfperf.profile.watcher import watch


def test_describe_keys_values_like_tf_trace_cache():
    assert retrace.describe(3) == ("value", "int", 3)
    assert retrace.describe(np.zeros((2, 3), np.float32)) == ("tensor", "float32", (2, 3))
    assert retrace.describe([1, 2.0])[0] == "list"
    obj = object()
    assert retrace.describe(obj) == ("object", "object", id(obj))


def test_diff_names_the_changed_leaf_and_kind():
    old = retrace.describe({"a": [np.zeros((2,), np.float32), 1]})
    new = retrace.describe({"a": [np.zeros((3,), np.float32), 1]})
    (change,) = retrace.diff("cfg", old, new)
    assert change.argument == "cfg['a'][0]" and change.kind == "shape"
    assert (change.before, change.after) == ("float32[2]", "float32[3]")
    dtype = retrace.diff("x", retrace.describe(np.zeros(2, np.float32)),
                         retrace.describe(np.zeros(2, np.float64)))
    assert [c.kind for c in dtype] == ["dtype"]
    assert retrace.diff("n", retrace.describe(1), retrace.describe("1"))[0].kind == "type"
    assert retrace.diff("xs", retrace.describe([1]), retrace.describe([1, 2]))[0].kind \
        == "structure"


def test_retrace_changes_compares_with_closest_signature():
    sig_a = {"x": ("tensor", "float32", (4,)), "n": ("value", "int", 1)}
    sig_b = {"x": ("tensor", "float32", (8,)), "n": ("value", "int", 1)}
    now = {"x": ("tensor", "float32", (8,)), "n": ("value", "int", 2)}
    changes = retrace.retrace_changes([sig_a, sig_b], now)
    assert [(c.argument, c.kind) for c in changes] == [("n", "python_value")]
    same = retrace.retrace_changes([sig_a], dict(sig_a))
    assert same[0].kind == "context"


def test_bind_arguments_uses_parameter_names():
    def f(x, n=0, *rest, **kw):
        pass

    bound = retrace.bind_arguments(inspect.signature(f), (1, 2, 3), {"k": 4})
    assert bound == {"x": 1, "n": 2, "rest[0]": 3, "k": 4}


def test_python_int_argument_is_named_as_the_cause(tf):
    @tf.function
    def scale(x, n):
        return x * n

    x = tf.ones([3])
    with watch(host_syncs=False, eager_ops=False) as w:
        for n in range(6):
            scale(x, n)
    (fn,) = [f for f in w.obs.functions if f.name.endswith("scale")]
    assert fn.calls == 6 and fn.traces == 6
    d = fn.to_dict()
    top = d["retrace_causes"][0]
    assert (top["argument"], top["kind"]) == ("n", "python_value")
    assert top["retraces"] == 5 and top["distinct"] == 6
    assert top["examples"][:2] == ["0", "1"]
    assert d["trace_s"] > 0 and d["run_s"] >= 0
    rep = w.report(show=False)
    (finding,) = [f for f in rep.findings if f.code == "profile.retrace"]
    assert "traced 6 times" in finding.message and "`n`" in finding.message
    assert finding.data["rule"] == "TFP301"


def test_shape_change_is_the_cause(tf):
    @tf.function
    def total(x):
        return tf.reduce_sum(x)

    with watch(host_syncs=False, eager_ops=False) as w:
        for k in range(1, 5):
            total(tf.ones([k, 2]))
        total(tf.ones([4, 2]))  # a cache hit: no new trace
    (fn,) = w.obs.functions
    assert fn.traces == 4 and fn.calls == 5
    (cause,) = fn.to_dict()["retrace_causes"]
    assert cause["argument"] == "x" and cause["kind"] == "shape"
    assert "float32[1, 2]" in cause["examples"] and "float32[4, 2]" in cause["examples"]


def test_hooks_are_removed_after_the_block(tf):
    from tensorflow.python.eager.polymorphic_function import polymorphic_function as pf
    from tensorflow.python.framework import ops

    call, numpy_ = pf.Function.__call__, ops._EagerTensorBase.__dict__["_numpy"]
    with watch():
        assert pf.Function.__call__ is not call
        assert ops._EagerTensorBase.__dict__["_numpy"] is not numpy_
    assert pf.Function.__call__ is call
    assert ops._EagerTensorBase.__dict__["_numpy"] is numpy_
    assert not tf.executing_eagerly() or not _op_callbacks()


def _op_callbacks():
    from tensorflow.python.eager import context

    return context.context().op_callbacks


def test_missing_private_hook_degrades_to_not_available(tf, monkeypatch):
    from tfperf.profile import watcher

    monkeypatch.setattr(watcher, "TRACE_STEP", (watcher.TRACE_STEP[0], "_gone_in_this_tf"))
    monkeypatch.setattr(watcher, "EAGER_TENSOR_BASE", ("tensorflow.no_such_module", "X"))

    @tf.function
    def f(x):
        return x + 1

    with watch() as w:
        f(tf.constant(1.0))
    assert "trace_time" in w.obs.unavailable and "host_syncs" in w.obs.unavailable
    (fn,) = w.obs.functions
    assert fn.traces == 1 and fn.trace_s > 0  # the traced call's whole time stands in
    assert "Not observed" in w.report(show=False).text()
