"""Review 39 (issue 25): false findings of pass B on valid code whose step, pipeline or rate
is decided outside the scope the rule reads, each next to an invalid twin that still fires;
TFP301's fix kept to ints; TFP708's merged name resolved in scope."""

from __future__ import annotations

from project_files import found, write_project

from tfperf.lint.session import LintRequest, run

STEP = """\
import tensorflow as tf

def train_step(model, opt, x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))
    return loss
"""

# A library module: `fit` runs whatever step it is given, its default only when the caller
# gives none.
LIBRARY = STEP + """
def fit(model, opt, ds, epochs, step_fn=train_step):
    for epoch in range(epochs):
        for x, y in ds:
            step_fn(model, opt, x, y)
"""

DATA = ("ds = tf.data.Dataset.from_tensor_slices((tf.ones([32, 2]), tf.ones([32, 1])))"
        ".batch(4)\n")


def _lint(root, code: str) -> list[tuple[str, str, int | None, str]]:
    return found(run(LintRequest(paths=[str(root)], cache=False, select=[code])), root, code)


def test_a_default_step_replaced_by_a_caller_in_another_module_is_not_reported(tmp_path):
    main = ("import tensorflow as tf\nfrom lib import fit, train_step\n" + DATA
            + "fit(tf.keras.Sequential([tf.keras.layers.Dense(1)]), tf.keras.optimizers.SGD(),"
              " ds, 3, step_fn=tf.function(train_step))\n")
    write_project(tmp_path, {"lib.py": LIBRARY, "main.py": main})
    assert _lint(tmp_path, "TFP306") == []


def test_a_default_step_a_caller_of_the_same_module_leaves_is_reported(tmp_path):
    lib = LIBRARY + DATA + ("fit(tf.keras.Sequential([tf.keras.layers.Dense(1)]), "
                            "tf.keras.optimizers.SGD(), ds, 3)\n")
    write_project(tmp_path, {"lib.py": lib})
    assert [(p, line) for _, p, line, _ in _lint(tmp_path, "TFP306")] == [("lib.py", 3)]


TRAINER = """\
import tensorflow as tf
from lib import train_step

class Trainer:
    def __init__(self):
        self.model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        self.opt = tf.keras.optimizers.SGD()
        self.step = train_step

    def fit(self, ds, epochs):
        for epoch in range(epochs):
            for x, y in ds:
                self.step(self.model, self.opt, x, y)

""" + DATA + "trainer = Trainer()\n"


def test_self_step_compiled_from_outside_the_class_is_not_reported(tmp_path):
    main = TRAINER + "trainer.step = tf.function(trainer.step)\ntrainer.fit(ds, 3)\n"
    write_project(tmp_path, {"lib.py": STEP, "main.py": main})
    assert _lint(tmp_path, "TFP306") == []


def test_self_step_compiled_in_a_subclass_is_not_reported(tmp_path):
    main = TRAINER + ("class Compiled(Trainer):\n    def __init__(self):\n"
                      "        super().__init__()\n        self.step = tf.function(self.step)\n"
                      "Compiled().fit(ds, 3)\n")
    write_project(tmp_path, {"lib.py": STEP, "main.py": main})
    assert _lint(tmp_path, "TFP306") == []


def test_self_step_only_the_class_assigns_is_reported(tmp_path):
    write_project(tmp_path, {"lib.py": STEP, "main.py": TRAINER + "trainer.fit(ds, 3)\n"})
    assert [(p, line) for _, p, line, _ in _lint(tmp_path, "TFP306")] == [("lib.py", 3)]


PIPELINE = """\
import tensorflow as tf

class Trainer:
    def load(self, x):
        return tf.io.decode_raw(x, tf.uint8)

    def build(self, files):
        self.ds = tf.data.TFRecordDataset(files).map(self.load).batch(32)

    def train(self, model, epochs):
        for epoch in range(epochs):
            for batch in self.ds:
                model(batch)

t = Trainer()
t.build(["a.tfrecord"])
"""


def test_a_pipeline_attribute_cached_from_outside_the_class_is_not_reported(tmp_path):
    write_project(tmp_path, {"main.py": PIPELINE + "t.ds = t.ds.cache()\nt.train(None, 10)\n"})
    assert _lint(tmp_path, "TFP607") == []


def test_a_pipeline_attribute_left_uncached_is_reported(tmp_path):
    write_project(tmp_path, {"main.py": PIPELINE + "t.train(None, 10)\n"})
    assert [(p, line) for _, p, line, _ in _lint(tmp_path, "TFP607")] == [("main.py", 8)]


def _rate(loop: str) -> str:
    return ("import tensorflow as tf\n\n@tf.function\ndef train_step(x, lr):\n"
            "    return x * lr\n\nlr = 0.1\n" + loop)


def test_a_rate_changed_once_an_epoch_or_at_a_few_steps_is_not_reported(tmp_path):
    write_project(tmp_path, {
        "epoch.py": _rate("for epoch in range(5):\n    for i in range(1000):\n"
                          "        train_step(tf.ones([3]), lr)\n    lr *= 0.5\n"),
        "piecewise.py": _rate("for step in range(10000):\n    if step in (5000, 8000):\n"
                              "        lr *= 0.1\n    train_step(tf.ones([3]), lr)\n")})
    assert _lint(tmp_path, "TFP301") == []


def test_a_rate_changed_on_every_inner_step_is_reported(tmp_path):
    write_project(tmp_path, {
        "inner.py": _rate("for epoch in range(5):\n    for i in range(1000):\n"
                          "        train_step(tf.ones([3]), lr)\n        lr *= 0.999\n")})
    assert [(p, line) for _, p, line, _ in _lint(tmp_path, "TFP301")] == [("inner.py", 10)]


def _fixes(root):
    outcome = run(LintRequest(paths=[str(root)], cache=False, select=["TFP301"]))
    return {f.location.path.rsplit("/", 1)[-1]: f.fix for f in outcome.findings}


def test_the_fix_is_left_out_for_a_python_float_and_kept_for_an_int(tmp_path):
    # A float64 batch times tf.constant(lr) (float32) fails; tf.constant(i) is int32 as
    # the docs say.
    write_project(tmp_path, {
        "f64.py": ("import tensorflow as tf\n@tf.function\ndef step(x, lr):\n    return x * lr\n"
                   "lr = 0.1\nfor batch in [tf.ones([3], tf.float64)] * 100:\n"
                   "    lr *= 0.99\n    step(batch, lr)\n"),
        "index.py": ("import tensorflow as tf\n@tf.function\ndef step(x, i):\n    return x[i]\n"
                     "for i in range(100):\n    step(tf.ones([100]), i)\n")})
    fixes = _fixes(tmp_path)
    assert set(fixes) == {"f64.py", "index.py"}
    assert fixes["f64.py"] is None
    assert fixes["index.py"] is not None


MERGED = """\
import tensorflow.compat.v1 as tf

def build_summaries(loss):
    tf.summary.scalar("loss", loss)
    merged = tf.summary.merge_all()
    return merged

def infer(sess, pred, a, b, batches, x):
    merged = tf.concat([a, b], axis=0)
    for batch in batches:
        sess.run([pred, merged], {x: batch})

def train(sess, train_op, loss, batches, x):
    merged = build_summaries(loss)
    for batch in batches:
        sess.run([train_op, merged], {x: batch})
"""


def test_a_tensor_named_merged_is_not_the_merged_summary(tmp_path):
    write_project(tmp_path, {"main.py": MERGED})
    # infer()'s `merged` is a concat: quiet; train()'s is the summary from the helper.
    assert [(p, line) for _, p, line, _ in _lint(tmp_path, "TFP708")] == [("main.py", 16)]
