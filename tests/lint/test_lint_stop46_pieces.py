"""Stop 46, through the real engine: ``predict`` on the batch a loop over a dataset takes,
reached through a step method of another module (the project model's ``CallFact.batches``),
and a tape's Jacobian taken per iteration through a helper of another module; a warm run
after the callee is fixed gives what a cold run gives; the new call fact survives the
summary's JSON round trip."""

from __future__ import annotations

from project_files import found, write_project

from tfperf.lint.session import LintRequest, run

TRAINER = """\
import tensorflow as tf

class Trainer:
    def __init__(self, model):
        self.model = model

    def val_step(self, x, y):
        y_pred = tf.convert_to_tensor(self.model.predict(x))
        return tf.reduce_mean(tf.square(y_pred - y))
"""

MAIN = """\
import tensorflow as tf
from trainer import Trainer

trainer = Trainer(tf.keras.models.load_model("net.h5"))
val_ds = tf.data.Dataset.from_tensor_slices((xs, ys)).batch(64)
for x, y in val_ds:
    trainer.val_step(x, y)
"""

SENS = """\
import tensorflow as tf

def input_gradients(model, x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = model(x)
    return tape.batch_jacobian(y, x).numpy().sum(0)
"""

JAC_MAIN = """\
import tensorflow as tf
from sens import input_gradients

enc = tf.keras.models.load_model("enc.h5")
for x in tf.data.Dataset.from_tensor_slices(xs).batch(64):
    print(input_gradients(enc, x))
"""


def _found(root, code, paths=None, cache=False):
    outcome = run(LintRequest(paths=[str(p) for p in (paths or [root])], cache=cache,
                              cache_dir=root / ".cache", tf_version="2.15"))
    return [(p, line, msg) for _, p, line, msg in found(outcome, root, code)]


def test_predict_on_a_callers_dataset_batch_is_found_at_the_predict(tmp_path):
    write_project(tmp_path, {"trainer.py": TRAINER, "main.py": MAIN})
    got = _found(tmp_path, "TFP110")
    assert [(p, line) for p, line, _ in got] == [("trainer.py", 8)]
    assert "main.py:7" in got[0][2]


def test_a_file_named_alone_finds_it_through_its_project(tmp_path):
    write_project(tmp_path, {"trainer.py": TRAINER, "main.py": MAIN})
    (tmp_path / ".git").mkdir()
    got = _found(tmp_path, "TFP110", [tmp_path / "trainer.py"])
    assert [(p, line) for p, line, _ in got] == [("trainer.py", 8)]


def test_valid_twins_and_a_warm_run_agrees_after_the_fix(tmp_path):
    write_project(tmp_path, {"trainer.py": TRAINER, "main.py": MAIN})
    assert len(_found(tmp_path, "TFP110", cache=True)) == 1
    fixed = TRAINER.replace("self.model.predict(x)", "self.model(x, training=False)")
    write_project(tmp_path, {"trainer.py": fixed})
    warm = _found(tmp_path, "TFP110", cache=True)
    cold = _found(tmp_path, "TFP110", cache=False)
    assert warm == cold == []
    # the whole dataset given once: no batch per iteration
    write_project(tmp_path, {"trainer.py": TRAINER,
                             "main.py": MAIN.replace("for x, y in val_ds:\n    trainer",
                                                     "if True:\n    trainer").replace(
                                 "val_step(x, y)", "val_step(val_ds, None)")})
    assert _found(tmp_path, "TFP110") == []


def test_a_jacobian_per_batch_in_another_modules_helper(tmp_path):
    write_project(tmp_path, {"sens.py": SENS, "main.py": JAC_MAIN})
    got = _found(tmp_path, "TFP306")
    assert [(p, line) for p, line, _ in got] == [("sens.py", 7)]
    assert "main.py:6" in got[0][2]
    compiled = SENS.replace("def input_gradients", "@tf.function\ndef input_gradients")
    write_project(tmp_path, {"sens.py": compiled.replace(".numpy().sum(0)", "")})
    assert _found(tmp_path, "TFP306") == []


def test_batches_survive_the_summary_json(tmp_path):
    import ast

    from tfperf.analysis.summary import ModuleSummary, summarize
    from tfperf.lint.semantic import Context

    ctx = Context(ast.parse(MAIN), MAIN, str(tmp_path / "main.py"))
    summary = summarize(ctx, (), complete=True)
    calls = [c for c in summary.calls if c.callee[1].endswith("val_step")]
    assert calls and calls[0].batches == ["0", "1"] and calls[0].loop == "dataset"
    again = ModuleSummary.loads(summary.path, summary.dumps())
    assert [c.batches for c in again.calls] == [c.batches for c in summary.calls]


TF1_PIPELINE = """\
import tensorflow as tf

def mk_iterator(dataset, batch_size):
    dataset = dataset.shuffle(1000)
    dataset = dataset.batch(batch_size)
    iterator = dataset.make_one_shot_iterator()
    return iterator.get_next()
"""


def test_a_tf1_iterators_finding_spans_to_the_iterator(tmp_path):
    (tmp_path / "data.py").write_text(TF1_PIPELINE)
    outcome = run(LintRequest(paths=[str(tmp_path / "data.py")], cache=False,
                              tf_version="1.12", preview=True, select=["TFP601"]))
    got = [(f.location.line, f.location.end_line) for f in outcome.findings
           if f.code == "TFP601"]
    assert got == [(5, 6)]  # from the last step through the iterator: the prefetch goes between
