"""Stop 46, wave 2: ``tensor.eval`` read as a session run by TFP704, outside test files,
with messages that name it."""

from __future__ import annotations

import textwrap

from tfperf.lint import registry
from tfperf.lint.engine import Dispatcher
from tfperf.lint.runner import lint_file

EVALS = textwrap.dedent("""\
    import tensorflow as tf
    sess = tf.InteractiveSession()
    for batch in batches:
        sess.run(train_op, feed_dict={x: batch})
        err_d = d_loss.eval({x: batch})
        err_g = g_loss.eval({x: batch})
""")

PER_ITEM = textwrap.dedent("""\
    import tensorflow as tf
    sess = tf.Session()
    weights = []
    for w in tf.global_variables():
        weights.append((w.name, w.eval(session=sess)))
""")


def _tfp704(path) -> list[str]:
    return [f.message for f in lint_file(path, Dispatcher(registry.all_rules())).findings
            if f.code == "TFP704"]


def test_evals_per_step_are_runs_outside_tests(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(EVALS)
    assert [m.split(":")[0] for m in _tfp704(script)] == ["2 .eval() calls in each loop iteration"]
    test = tmp_path / "model_test.py"  # a test checks values one by one on purpose
    test.write_text(EVALS)
    assert _tfp704(test) == []


def test_one_eval_per_item_is_named_as_eval(tmp_path):
    script = tmp_path / "dump.py"
    script.write_text(PER_ITEM)
    assert [m.split(" once")[0] for m in _tfp704(script)] == ["tensor.eval()"]
