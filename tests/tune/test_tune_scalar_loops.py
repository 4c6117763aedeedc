"""Scalars carried through a loop over a tensor's items (held-out round 14's c09, written
here as another computation): ``max``/``min`` of two values, which AutoGraph leaves to
Python, become ``tf.maximum``/``tf.minimum``, and a carried Python number's first value takes
the items' dtype, so the loop traces and compiles. Twins: what must stay as written."""

from __future__ import annotations

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

from tfperf.tune import tune  # noqa: E402
from tfperf.tune.levers.tf_function import JitCompile, TfFunction  # noqa: E402
from tfperf.tune.levers.traceable import Traceable, rewrite  # noqa: E402
from tfperf.tune.source import SourceEditError  # noqa: E402

PEAK_GAP = """
import numpy as np


def peak_gap(series):
    top, widest = 0, 0
    for v in series:
        top = max(v, top)
        widest = max(widest, top - v)
    return widest
"""


def test_max_in_the_loop_and_the_carried_numbers_are_rewritten():
    new = rewrite(PEAK_GAP, "peak_gap", {"series"})
    assert "top, widest = (tf.cast(0, series.dtype), tf.cast(0, series.dtype))" in new \
        or "top, widest = tf.cast(0, series.dtype), tf.cast(0, series.dtype)" in new, new
    assert "top = tf.maximum(v, top)" in new and "widest = tf.maximum(widest, top - v)" in new
    # a counter reads no item: left an int
    counted = PEAK_GAP.replace("    for v", "    steps = 0\n    for v").replace(
        "top - v)\n", "top - v)\n        steps += 1\n")
    new = rewrite(counted, "peak_gap", {"series"})
    assert "steps += 1" in new and "steps = 0\n" in new and "tf.cast(0, series" in new, new


@pytest.mark.parametrize("source", [
    # max with a key, of one iterable, or rebound in the module: not the two-value builtin
    PEAK_GAP.replace("max(v, top)", "max(v, top, key=abs)")
            .replace("max(widest, top - v)", "max([widest, top - v])"),
    PEAK_GAP.replace("import numpy as np", "import numpy as np\nfrom numpy import maximum as max"),
])
def test_other_maxes_are_left_alone(source):
    new = rewrite(source, "peak_gap", {"series"})
    assert "tf.maximum" not in new, new


@pytest.mark.parametrize("before, after", [
    ("top, widest = 0, 0", "top, widest = 0.5, 0.5"),  # not a whole number: a cast changes it
    ("for v in series:", "for v in list(series):"),  # not a tensor's items
])
def test_first_values_left_alone(before, after):
    new = rewrite(PEAK_GAP.replace(before, after), "peak_gap", {"series"})
    assert "tf.cast" not in new, new


def test_code_without_such_a_loop_is_still_left_alone():
    plain = "import tensorflow as tf\n\n\ndef f(x):\n    m = 0\n    for v in x:\n        m += 1\n" \
            "    return m\n"
    with pytest.raises(SourceEditError):
        rewrite(plain, "f", {"x"})


@pytest.mark.parametrize("dtype", [np.float64, np.int32])
def test_the_carried_loop_compiles_and_agrees(user_module, roomy_limits, dtype):
    mod = user_module(PEAK_GAP)
    rng = np.random.default_rng(3)
    series = (100 * np.exp(np.cumsum(rng.normal(0, 0.02, 2000)))).astype(dtype)
    # budget 60: the compiled candidate's first call runs in a child process whose start-up
    # comes out of what is left of the budget; at load 8-9 a child took more than the 8 s that a
    # 20 s budget left it ("child process did not start"), and the candidate went unmeasured
    result = tune(mod.peak_gap, (series,), budget=60,
                  levers=[Traceable(), TfFunction(), JitCompile()])
    by = {tuple(c.levers): c for c in result.candidates}
    assert by[("jit_compile",)].rejected.startswith("raises"), result.table()
    both = by[(Traceable.name, "jit_compile")]
    # traced, compiled and equal (whether the run tells its speed apart is the load's)
    assert both.equivalent is True, result.table()
    assert not (both.rejected or "").startswith(("raises", "disagrees")), result.table()
    compiled = tf.function(user_module(rewrite(PEAK_GAP, "peak_gap", {"series"}), "new")
                           .peak_gap, jit_compile=True)
    other = (50 * np.exp(np.cumsum(rng.normal(0, 0.03, 500)))).astype(dtype)
    assert mod.peak_gap(other) > 0
    np.testing.assert_allclose(compiled(other).numpy(), mod.peak_gap(other), rtol=1e-12)


def test_the_compile_rung_stacks_on_a_traceable_loop_too_slow_eagerly(user_module, roomy_limits,
                                                                     monkeypatch):
    """Held-out round 14's c09: the traceable code, run eagerly, is a tf op per item (13 s a
    call on 60 000 items) and was rejected as too slow, so its compiled form was never
    built. Planted: a call limit the eager loop overruns and the baseline's NumPy does not."""
    from tfperf.tune import search

    monkeypatch.setattr(search.Search, "call_limit", lambda self: 0.2)
    mod = user_module(PEAK_GAP)
    series = 100 * np.exp(np.cumsum(np.random.default_rng(5).normal(0, 0.02, 8000)))
    result = tune(mod.peak_gap, (series,), budget=60,  # the child's start-up: see above
                  levers=[Traceable(), TfFunction(), JitCompile()])
    by = {tuple(c.levers): c for c in result.candidates}
    assert by[(Traceable.name,)].rejected.startswith("too slow: a call"), result.table()
    both = by[(Traceable.name, "jit_compile")]
    assert both.equivalent is True, result.table()
    assert not (both.rejected or "").startswith(("raises", "disagrees")), result.table()
