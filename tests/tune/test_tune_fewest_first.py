"""Fewest levers first (held-out round 8's c06): plain ``tf.function`` and ``jit_compile`` of
the user's function are measured before any rewrite, and a NumPy "rewrite" that changes no op
(only ``tf.constant`` → ``tf.convert_to_tensor``) is not a candidate."""

from __future__ import annotations

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

from tests.tune.planted import Planted  # noqa: E402

from tfperf.tune import tune  # noqa: E402
from tfperf.tune.levers.numpy_round_trip import NumpyRoundTrip, rewrite  # noqa: E402
from tfperf.tune.levers.tf_function import JitCompile, TfFunction  # noqa: E402
from tfperf.tune.source import SourceEditError  # noqa: E402

CONSTANT_ONLY = """
import tensorflow as tf


def f(x):
    scale = tf.constant(255)
    return tf.cast(x * tf.cast(scale, x.dtype), tf.int32)
"""

LOOP = """
import tensorflow as tf


def f(x):
    out = []
    for i in range(x.shape[0]):
        out.append(tf.reduce_sum(x[i] * x[i]))  # rewrite me
    return tf.stack(out)
"""


def test_a_rewrite_of_tf_constant_alone_is_not_a_numpy_candidate():
    with pytest.raises(SourceEditError):
        rewrite(CONSTANT_ONLY, "f")


def test_tf_constant_is_still_rewritten_beside_a_real_numpy_call():
    source = CONSTANT_ONLY.replace("return tf.cast(", "return np.sqrt(tf.cast(").replace(
        "tf.int32)\n", "tf.int32).numpy())\n").replace("import tensorflow", "import numpy as np\n"
                                                        "import tensorflow")
    new = rewrite(source, "f")
    assert "tf.convert_to_tensor(255)" in new and "np.sqrt" not in new, new


def test_the_numpy_lever_says_why_it_does_not_apply(user_module):
    mod = user_module(CONSTANT_ONLY)
    x = tf.constant(np.linspace(0, 1, 12, dtype=np.float32))
    result = tune(mod.f, (x,), budget=6, levers=[NumpyRoundTrip(), TfFunction()])
    by = {tuple(c.levers): c for c in result.candidates}
    assert by[("NumPy round trip→TF ops",)].rejected.startswith("not applicable"), result.table()


def by_name(result, name):
    return next(c for c in result.candidates if c.name == name)


SLOW_TRACE = LOOP.replace("    out = []\n", "    if not tf.executing_eagerly():\n"
                          "        time.sleep(3.5)  # a trace on a busy machine\n"
                          "    out = []\n").replace("import tensorflow", "import time\n\n"
                                                   "import tensorflow")


@pytest.mark.parametrize("source", [LOOP, SLOW_TRACE], ids=["as-is", "trace-slowed-as-by-load"])
def test_plain_compiled_forms_are_measured_before_any_rewrite_and_built_once(
        user_module, roomy_limits, source):
    # Limits no load reaches (roomy_limits): the order and the verdict are the test's, not
    # the machine's; the second case plants a trace 3.5 s long, past the 3 s a budget of 12
    # gives the plain forms' first call, which rejected tf.function before.
    mod = user_module(source)
    x = tf.constant(np.random.default_rng(3).normal(size=(8, 8)).astype(np.float32))
    rewrite_lever = Planted("planted rewrite", "# rewrite me", "# rewritten")
    result = tune(mod.f, (x,), budget=12,
                  levers=[rewrite_lever, TfFunction(), JitCompile()])
    names = [c.name for c in result.candidates]
    # (jit_compile joins them when its compile is judged to fit their short limit)
    assert names[0] == "tf.function", result.table()
    assert names.index("jit_compile") < names.index("planted rewrite") or \
        by_name(result, "jit_compile").rejected is None, result.table()
    assert len(names) == len(set(names)), result.table()  # none built twice
    by = {c.name: c for c in result.candidates}
    # measured, not rejected for its first call; whether the run tells its speed apart is
    # the load's (stop 45's suite run beside two busy loops: ×1.81, ×0.27-×3.84 over 20 rounds)
    assert by["tf.function"].median_s is not None, result.table()
    assert (by["tf.function"].rejected or "not told apart").startswith("not told apart"), \
        result.table()
    assert by["tf.function"].equivalent is True, result.table()
