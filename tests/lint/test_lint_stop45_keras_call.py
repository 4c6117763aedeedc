"""TFP314 across modules, through the real engine: a Keras class's ``call`` run by another
module's eager GradientTape loop is reported at the ``call``'s ``def``; a file named alone
finds it through its project context; a warm run after the loop's module is fixed gives what
a cold run gives (the class module's facts are cached, the project's check is not stale); a
module whose facts are positions and names keeps a lean summary."""

from __future__ import annotations

import ast

from project_files import found, write_project

from tfperf.lint.session import LintRequest, run

MODEL = """\
import tensorflow as tf

class BoxLoss(tf.keras.Model):
    def call(self, pred, target):
        d = tf.square(pred - target)
        m = tf.cast(target > 0, tf.float32)
        a = tf.reduce_sum(d * m, -1)
        b = tf.reduce_max(d, -1)
        c = tf.sqrt(tf.abs(pred))
        return tf.reduce_mean(a + b) + tf.reduce_mean(c)
"""

TRAIN = """\
import tensorflow as tf
from model import BoxLoss

def main(net, ds):
    loss_fn = BoxLoss()
    opt = tf.keras.optimizers.Adam()
    for x, y in ds:
        with tf.GradientTape() as tape:
            loss = loss_fn(net(x), y)
        grads = tape.gradient(loss, net.trainable_variables)
        opt.apply_gradients(zip(grads, net.trainable_variables))
"""

COMPILED = TRAIN.replace("    for x, y in ds:\n        with", "    @tf.function\n"
                         "    def step(x, y):\n        with").replace(
    "net.trainable_variables))\n",
    "net.trainable_variables))\n    for x, y in ds:\n        step(x, y)\n")


def _tfp314(root, paths=None, cache=False):
    outcome = run(LintRequest(paths=[str(p) for p in (paths or [root])], cache=cache,
                              cache_dir=root / ".cache", tf_version="2.15"))
    return [(p, line, msg) for _, p, line, msg in found(outcome, root, "TFP314")]


def test_found_at_the_call_def_with_the_loop_named(tmp_path):
    write_project(tmp_path, {"model.py": MODEL, "train.py": TRAIN})
    got = _tfp314(tmp_path)
    assert [(p, line) for p, line, _ in got] == [("model.py", 4)]
    assert "BoxLoss.call" in got[0][2] and "train.py:9" in got[0][2]


def test_a_file_named_alone_is_modelled_with_its_project(tmp_path):
    write_project(tmp_path, {"model.py": MODEL, "train.py": TRAIN})
    (tmp_path / ".git").mkdir()
    got = _tfp314(tmp_path, [tmp_path / "model.py"])
    assert [(p, line) for p, line, _ in got] == [("model.py", 4)]


def test_valid_twin_the_step_compiled_and_a_warm_run_agrees(tmp_path):
    write_project(tmp_path, {"model.py": MODEL, "train.py": TRAIN})
    assert len(_tfp314(tmp_path, cache=True)) == 1
    write_project(tmp_path, {"train.py": COMPILED})
    compile(COMPILED, "train.py", "exec")
    warm = _tfp314(tmp_path, cache=True)
    cold = _tfp314(tmp_path, cache=False)
    assert warm == cold == []


def test_facts_of_positions_and_names_keep_the_summary_lean(tmp_path):
    from tfperf.analysis.summary import summarize
    from tfperf.lint import registry
    from tfperf.lint.semantic import Context

    text = MODEL + "\n\ndef scale(x):\n    return x * 2\n"
    path = tmp_path / "model.py"
    path.write_text(text)
    rule = registry.get("TFP314")
    summary = summarize(Context(ast.parse(text), text, str(path)), [rule])
    assert summary.facts["TFP314"][0]["cls"] == "BoxLoss"
    # lean: the traced Keras call is kept, an eager helper no one asks about is not
    assert "BoxLoss.call" in summary.functions and "scale" not in summary.functions
    full = summarize(Context(ast.parse(text), text, str(path)), [rule], complete=True)
    assert "scale" in full.functions
