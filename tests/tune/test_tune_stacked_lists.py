"""A list of same-shape tensors is a batch (held-out round 8's c09: a loss summed in Python
over a comprehension of a model's six stage outputs): the loop levers read a loop over it as a
loop over the rows of its stack, stacked once at the top of the function."""

from __future__ import annotations

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

from tfperf.tune import tune  # noqa: E402
from tfperf.tune.levers.loop_model import LoopsBatched  # noqa: E402

SUM_OF_STAGES = """
import tensorflow as tf


def f(target, stages):
    return sum([tf.reduce_mean(tf.square(target - s) + 0.5 * tf.abs(target - s)) for s in stages])
"""

ADD_N_OF_STAGES = SUM_OF_STAGES.replace("return sum(", "return tf.add_n(")


def _inputs(seed, stages=48):
    rng = np.random.default_rng(seed)
    target = tf.constant(rng.uniform(size=(4, 8)).astype(np.float32))
    outs = [tf.constant((rng.uniform(size=(4, 8)) * (k + 1)).astype(np.float32))
            for k in range(stages)]
    return target, outs


@pytest.mark.parametrize("source", [SUM_OF_STAGES, ADD_N_OF_STAGES], ids=["sum", "add_n"])
def test_a_sum_over_a_list_of_outputs_is_one_batched_reduction(user_module, source):
    mod = user_module(source)
    result = tune(mod.f, _inputs(1), budget=10, levers=[LoopsBatched(axes=True)])
    by = {c.name: c for c in result.candidates}
    lever = by["loops→batched ops (per-example axes)"]
    assert lever.rejected is None and lever.equivalent is True, result.table()
    assert "stages = tf.stack(stages)" in lever.patch, lever.patch
    assert result.best_name == lever.name, result.table()  # 48 small ops → a few: planted
    target, outs = _inputs(2)
    np.testing.assert_allclose(float(result.best_fn(target, outs)), float(mod.f(target, outs)),
                               rtol=1e-5)


@pytest.mark.parametrize("source", [
    "import tensorflow as tf\ndef f(xs): return sum(xs)\n",
    'import tensorflow as tf\ndef f(xs):\n    "Sum."; return sum(xs)\n',
], ids=["one-line-def", "docstring-and-body-on-a-line"])
def test_stacking_first_on_a_line_shared_with_the_def_is_refused(source):
    # an insert at that line copied the def: a dead duplicate, the stack never ran
    from tfperf.tune.levers.loop_model import stack_lists_first
    from tfperf.tune.source import SourceEditError

    with pytest.raises(SourceEditError):
        stack_lists_first(source, "f", ["xs"], "tf")


def test_stacking_first_goes_after_a_docstring():
    from tfperf.tune.levers.loop_model import stack_lists_first

    source = 'import tensorflow as tf\ndef f(xs):\n    "Sum."\n    return sum(xs)\n'
    assert stack_lists_first(source, "f", ["xs"], "tf") == (
        'import tensorflow as tf\ndef f(xs):\n    "Sum."\n    xs = tf.stack(xs)\n'
        '    return sum(xs)\n')
