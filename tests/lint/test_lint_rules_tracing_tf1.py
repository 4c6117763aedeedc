"""Focused tests for the tracing rules (TFP301-306) and TF1 rules (TFP701-702): the context
detection they rest on, and their fixes run with real TensorFlow (original and fixed code
must compute the same values)."""

from __future__ import annotations

import ast

import pytest

from tfperf.lint import registry
from tfperf.lint.analysis.tf_functions import tf_function_called
from tfperf.lint.analysis.varying import varying_scalar
from tfperf.lint.engine import lint_source
from tfperf.lint.fix import fix_source
from tfperf.lint.semantic import Context


def _codes(source: str, code: str) -> list[int]:
    rule = registry.get(code)
    return [f.location.line for f in lint_source(source, "t.py", rules=[rule])
            if f.code == code]


def _fixed(source: str, code: str) -> str:
    rule = registry.get(code)
    result = fix_source(source, lambda s: lint_source(s, "t.py", rules=[rule]), unsafe=True)
    assert result.error is None and result.applied >= 1
    return result.source


def _ctx(source: str) -> Context:
    return Context(ast.parse(source), source, "t.py")


def _call_named(ctx: Context, name: str) -> ast.Call:
    for n in ast.walk(ctx.tree):
        if type(n) is ast.Call and getattr(n.func, "id", getattr(n.func, "attr", None)) == name:
            return n
    raise AssertionError(name)


# ---------------------------------------------------------------- context detection


@pytest.mark.parametrize(("source", "varies"), [
    ("for i in range(n):\n    f(i)\n", True),
    ("for i in range(2):\n    f(i)\n", False),  # a handful of values
    ("for i, x in enumerate(xs):\n    f(i)\n", True),
    ("for x, i in enumerate(xs):\n    f(i)\n", False),  # the element, not the index
    ("k = 0\nwhile k < n:\n    f(k)\n    k += 1\n", True),
    ("k = 0\nwhile k < n:\n    f(k)\n    k = g(k)\n", False),  # not a plain counter
    ("for i in range(n):\n    f(i * 0.5 + 1)\n", True),
    ("for i in range(n):\n    f(len(i))\n", False),
    ("for i in range(n):\n    pass\nf(i)\n", False),  # after the loop: one value
    ("for lr in [0.1, 0.01, 0.001, 1e-4, 1e-5]:\n    f(lr)\n", True),
])
def test_varying_scalar_recognises_values_that_change_per_iteration(source, varies):
    ctx = _ctx("import tensorflow as tf\n" + source)
    call = _call_named(ctx, "f")
    assert (varying_scalar(ctx, call.args[0], call) is not None) is varies


def test_tf_function_called_resolves_attribute_set_in_init():
    ctx = _ctx("import tensorflow as tf\n"
               "class T:\n"
               "    def __init__(self):\n"
               "        self.step = tf.function(self._step, jit_compile=True)\n"
               "    def _step(self, x):\n"
               "        return x\n"
               "    def run(self, x):\n"
               "        return self.step(x)\n")
    target = tf_function_called(ctx, _call_named(ctx, "step").func)
    assert target is not None and getattr(target.fn, "name", None) == "_step"
    assert set(target.options) == {"jit_compile"}


def test_tf_function_called_ignores_rebound_names():
    ctx = _ctx("import tensorflow as tf\n"
               "@tf.function\n"
               "def f(x):\n"
               "    return x\n"
               "f = print\n"
               "f(1)\n")
    assert tf_function_called(ctx, _call_named(ctx, "f").func) is None


def test_tfp301_one_finding_per_call_even_with_two_varying_arguments():
    src = ("import tensorflow as tf\n"
           "@tf.function\n"
           "def f(a, b):\n"
           "    return a + b\n"
           "for i in range(10):\n"
           "    for j in range(10):\n"
           "        f(i, j)\n")
    assert _codes(src, "TFP301") == [7]
    assert "f(tf.constant(i), tf.constant(j))" in _fixed(src, "TFP301")


def test_tfp302_quiet_for_a_module_level_factory_called_once():
    src = ("import tensorflow as tf\n"
           "def build():\n"
           "    f = tf.function(lambda x: x)\n"
           "    f(1)\n"
           "build()\n")
    assert _codes(src, "TFP302") == []
    assert _codes(src.replace("build()\n", "for _ in range(9):\n    build()\n"),
                  "TFP302") == [3]


def test_tfp304_quiet_inside_py_function_callback_and_loud_outside_it():
    src = ("import tensorflow as tf\n"
           "seen = []\n"
           "@tf.function\n"
           "def f(x):\n"
           "    seen.append(x)\n"
           "    def cb(v):\n"
           "        seen.append(v)\n"
           "        return v\n"
           "    return tf.py_function(cb, [x], tf.float32)\n")
    assert _codes(src, "TFP304") == [5]


def test_tfp701_opt_in_anywhere_in_the_module_silences_it():
    body = "x = tf.compat.v1.placeholder(tf.float32)\n"
    assert _codes("import tensorflow as tf\n" + body, "TFP701") == [2]
    late = "import tensorflow as tf\n" + body + "tf.compat.v1.disable_v2_behavior()\n"
    assert _codes(late, "TFP701") == []


def test_tfp702_quiet_when_a_read_hands_the_variable_on():
    src = ("import tensorflow as tf\n"
           "v = tf.Variable([1.0], trainable=False)\n"
           "y = v * 2.0\n"
           "register(v)\n")
    assert _codes(src, "TFP702") == []
    assert _codes(src.replace("register(v)\n", ""), "TFP702") == [2]


def test_every_rule_of_the_group_is_registered_with_its_claims():
    claims = {r.code: r.claims for r in registry.all_rules()}
    for code in ("TFP301", "TFP302", "TFP303", "TFP304", "TFP305", "TFP306"):
        assert "S13" in claims[code] or "S14" in claims[code]
    assert claims["TFP701"] == ("S9",) and claims["TFP702"] == ("S9",)


# ---------------------------------------------------------------- fixes, run with real TF


def _run(source: str) -> dict:
    namespace: dict = {}
    exec(compile(source, "<snippet>", "exec"), namespace)  # our own snippet
    return namespace


@pytest.fixture(scope="module")
def tf():
    return pytest.importorskip("tensorflow")


def test_tfp301_fix_computes_the_same_values_with_one_trace(tf):
    src = ("import tensorflow as tf\n"
           "@tf.function\n"
           "def step(x, i):\n"
           "    return x * tf.cast(i, tf.float32) + 1.0\n"
           "x = tf.constant([1.0, 2.0, 3.0])\n"
           "out = []\n"
           "for i in range(7):\n"
           "    out.append(step(x, i))\n"
           "result = tf.stack(out).numpy()\n"
           "traces = step.experimental_get_tracing_count()\n")
    fixed = _fixed(src, "TFP301")
    assert "step(x, tf.constant(i))" in fixed
    before, after = _run(src), _run(fixed)
    assert (before["result"] == after["result"]).all()
    assert before["traces"] == 7 and after["traces"] == 1


def test_tfp306_fix_trains_to_the_same_weights(tf):
    src = ("import tensorflow as tf\n"
           "w = tf.Variable([0.5, -0.25])\n"
           "opt = tf.keras.optimizers.SGD(0.1)\n"
           "def train_step(x, y):\n"
           "    with tf.GradientTape() as tape:\n"
           "        loss = tf.reduce_mean(tf.square(tf.reduce_sum(x * w, axis=1) - y))\n"
           "    grads = tape.gradient(loss, [w])\n"
           "    opt.apply_gradients(zip(grads, [w]))\n"
           "    return loss\n"
           "x = tf.constant([[1.0, 2.0], [3.0, 4.0], [0.5, -1.0]])\n"
           "y = tf.constant([1.0, 2.0, 0.0])\n"
           "def fit(steps):\n"  # a bound no literal gives: not a handful of steps
           "    for _ in range(steps):\n"
           "        train_step(x, y)\n"
           "fit(5)\n"
           "result = w.numpy()\n")
    fixed = _fixed(src, "TFP306")
    assert "@tf.function\ndef train_step" in fixed
    before, after = _run(src), _run(fixed)
    assert abs(before["result"] - after["result"]).max() < 1e-6


def test_tfp702_fix_computes_the_same_values(tf):
    src = ("import numpy as np\n"
           "import tensorflow as tf\n"
           "mask = tf.Variable(np.tril(np.ones((4, 4))), trainable=False, dtype=tf.float32,"
           " name='mask')\n"
           "scores = tf.reshape(tf.range(16.0), [4, 4])\n"
           "result = (scores * mask).numpy()\n")
    fixed = _fixed(src, "TFP702")
    assert "tf.constant(np.tril(np.ones((4, 4))), dtype=tf.float32, name='mask')" in fixed
    before, after = _run(src), _run(fixed)
    assert (before["result"] == after["result"]).all()
    assert before["result"].dtype == after["result"].dtype


# Three helpers that each build an op and run it (lines 6, 9, 12), for TFP703's messages.
_TFP703_HELPERS = (
    "import tensorflow as tf\nimport numpy as np\n"
    "x = tf.placeholder(tf.float32, [None, 3])\nsess = tf.Session()\n"
    "def accuracy(a):\n    acc = tf.reduce_mean(x)\n"
    "    return sess.run(acc, feed_dict={x: a})\n"
    "def total(a):\n    y = tf.reduce_sum(x)\n    return sess.run(y, feed_dict={x: a})\n"
    "def peak(a):\n    m = tf.reduce_max(x)\n    return sess.run(m, feed_dict={x: a})\n")


def _tfp703_messages(calls: str) -> dict[int, str]:
    found = lint_source(_TFP703_HELPERS + calls, "t.py", rules=[registry.get("TFP703")])
    return {f.location.line: f.message for f in found}


def test_tfp703_says_when_the_helper_runs_only_on_some_iterations():
    # Round 9's TF1 lesson: an accuracy helper called every 50th step is not called "once per
    # loop iteration"; the graph still grows on each call.
    found = _tfp703_messages(
        "for step in range(1000):\n    if step % 50 == 0:\n        accuracy(np.ones([2, 3]))\n"
        "    total(np.ones([2, 3]))\n")
    assert "(called in a loop, under a condition)" in found[6]
    assert "(called once per loop iteration)" in found[9]


def test_tfp703_a_helper_in_the_condition_or_a_comprehension_runs_every_iteration():
    # `if accuracy(b) > 0.9: break` calls it on every step; a comprehension under an `if`
    # calls it once per element. Only what the `if` guards, or a later operand of
    # `and`/`or`, runs on some iterations.
    found = _tfp703_messages(
        "for step in range(1000):\n    if accuracy(np.ones([2, 3])) > 0.9:\n        break\n"
        "    step > 10 and peak(np.ones([2, 3]))\n"
        "if verbose:\n    sums = [total(b) for b in batches]\n")
    assert "(called once per loop iteration)" in found[6]
    assert "(called once per loop iteration)" in found[9]
    assert "(called in a loop, under a condition)" in found[12]
