"""TFP703 across functions: TF1 graph ops built in a method, helper or callback that a
session's step loop calls (held-out recall round 7 F024/F025/F026, F012's shape)."""

from __future__ import annotations

import textwrap

import pytest
from project_files import found, write_project

from tfperf.lint.analysis.graph_growth import SETUP_PREFIXES
from tfperf.lint.engine import lint_source
from tfperf.lint.rules.tfp703_op_built_per_run import OpBuiltPerRun
from tfperf.lint.session import LintRequest, run


def _tfp703(src: str) -> list[int]:
    return [f.location.line for f in lint_source(textwrap.dedent(src), "train.py")
            if f.code == "TFP703"]


METHOD = """\
import tensorflow as tf
class Trainer:
    def __init__(self):
        self.sess = tf.Session()
        self.lr = tf.Variable(0.1)
        self.loss = tf.reduce_sum(self.lr)
    def summary(self):
        return tf.summary.scalar("loss", self.loss)
    def lr_op(self, v):
        return tf.exp(tf.add_n([self.lr, v]))
    def fit(self, n):
        for step in range(n):
            self.sess.run(self.train_op)
            self.sess.run(self.summary())
"""

HELPER_CHAIN = """\
import tensorflow as tf
sess = tf.Session()
w = tf.Variable(1.0)
def set_w(v):
    return tf.assign(w, v)
def update(v):
    return set_w(v * 0.5)
for step in range(100):
    sess.run(train)
    sess.run(update(step))
"""

CALLBACK = """\
import tensorflow as tf
sess = tf.Session()
counter = tf.Variable(0)
def optimize(session, n, step_callback):
    for i in range(n):
        session.run(train)
        step_callback(i)
def bump(i):
    sess.run(tf.assign_add(counter, 1))
optimize(sess, 100, bump)
"""

WHILE_METHOD = METHOD.replace("for step in range(n):", "while not self.done:")


@pytest.mark.parametrize(("src", "lines"), [
    (METHOD, [14]),                # a method on self
    (WHILE_METHOD, [14]),          # the same in a while loop
    (HELPER_CHAIN, [10]),          # through a helper that calls a helper
    (CALLBACK, [10]),              # a callback passed to the loop (reported at the argument)
])
def test_ops_built_by_a_function_the_session_loop_calls_are_reported(src, lines):
    assert _tfp703(src) == lines


@pytest.mark.parametrize("src", [
    # TF2 eager: no session, no graph that grows
    """
    import tensorflow as tf
    lr = tf.Variable(0.1)
    def decay(v):
        return lr.assign(v)
    for step in range(100):
        decay(0.1 / (step + 1))
    """,
    # built once: the ops are made by __init__ / build_graph before the loop
    """
    import tensorflow as tf
    class M:
        def __init__(self):
            self.x = tf.placeholder(tf.float32)
        def build_graph(self):
            self.y = tf.reduce_sum(self.x)
        def fit(self, sess, n):
            self.build_graph()
            for step in range(n):
                sess.run(self.y)
    """,
    # the helper only runs prebuilt ops
    METHOD.replace("return tf.summary.scalar(\"loss\", self.loss)", "return self.summ_op"),
    # the helper is traced
    METHOD.replace("    def summary(self):", "    @tf.function\n    def summary(self):"),
    # the op is kept for later calls (built once under a guard)
    METHOD.replace("        return tf.summary.scalar(\"loss\", self.loss)",
                   "        if self._s is None:\n"
                   "            self._s = tf.summary.scalar(\"loss\", self.loss)\n"
                   "        return self._s"),
    # a callback that builds nothing
    CALLBACK.replace("sess.run(tf.assign_add(counter, 1))", "print(i)"),
    # the function is called per epoch, around the step loop
    """
    import tensorflow as tf
    sess = tf.Session()
    w = tf.Variable(1.0)
    def set_w(v):
        return tf.assign(w, v)
    for epoch in range(10):
        sess.run(set_w(epoch))
        for b in range(100):
            sess.run(train)
    """,
])
def test_valid_twins_stay_quiet(src):
    assert _tfp703(src) == []


MODEL = """\
import tensorflow as tf
class Model:
    def __init__(self):
        self.x = tf.placeholder(tf.float32, [None, 3])
        self.lr = tf.Variable(0.1)
        self.loss = tf.reduce_sum(self.x)
    def summary(self):
        return tf.summary.merge([tf.summary.scalar("loss", self.loss)])
    def summary_op(self):
        return self._summary
"""

TRAIN = """\
import tensorflow as tf
from model import Model
model = Model()
sess = tf.Session()
for step in range(1000):
    sess.run(train_op)
    sess.run(model.summary())
"""


def _project(root):
    return [(f[1], f[2]) for f in found(run(LintRequest(paths=[str(root)], cache=False)), root)
            if f[0] == "TFP703"]


def test_a_method_of_another_module_building_ops_per_step_is_reported(tmp_path):
    write_project(tmp_path, {"model.py": MODEL, "train.py": TRAIN})
    assert _project(tmp_path) == [("train.py", 7)]


def test_a_method_of_another_module_running_prebuilt_ops_is_quiet(tmp_path):
    write_project(tmp_path, {"model.py": MODEL,
                             "train.py": TRAIN.replace("model.summary()", "model.summary_op()")})
    assert _project(tmp_path) == []


def test_the_file_named_alone_sees_the_callee_through_its_project(tmp_path):
    write_project(tmp_path, {".git/HEAD": "", "model.py": MODEL, "train.py": TRAIN})
    out = run(LintRequest(paths=[str(tmp_path / "train.py")], cache=False))
    assert [f.location.line for f in out.findings if f.code == "TFP703"] == [7]


MODEL_WITH_TRAIN = MODEL + """\
    def train(self, batch):
        return self.sess.run(self.train_op, feed_dict={self.x: batch})
"""

# The shape of round 7's F026: the script imports no TensorFlow; the session runs inside the
# model's own train(), and summary() builds summary ops on every call.
SCRIPT = """\
from model import Model
model = Model()
for epoch in range(10):
    for i in range(100):
        model.train(data[i])
        model.summary()
"""


def test_a_script_without_tensorflow_whose_loop_runs_the_session_through_a_method(tmp_path):
    write_project(tmp_path, {"model.py": MODEL_WITH_TRAIN, "train.py": SCRIPT})
    assert _project(tmp_path) == [("train.py", 6)]


def test_the_same_script_calling_summary_per_epoch_is_quiet(tmp_path):
    per_epoch = SCRIPT.replace("        model.summary()\n", "    model.summary()\n")
    write_project(tmp_path, {"model.py": MODEL_WITH_TRAIN, "train.py": per_epoch})
    assert _project(tmp_path) == []


def test_a_loop_that_never_runs_the_session_is_quiet(tmp_path):
    no_run = SCRIPT.replace("        model.train(data[i])\n", "")
    write_project(tmp_path, {"model.py": MODEL_WITH_TRAIN, "train.py": no_run})
    assert _project(tmp_path) == []


@pytest.mark.parametrize("src", [
    # a handful of iterations (a test over two options): a handful of copies, no growth
    HELPER_CHAIN.replace("for step in range(100):", "for keepdims in [True, False]:"),
    # once per variable of a model, not per step
    HELPER_CHAIN.replace("for step in range(100):", "for step in self.weights:"),
    HELPER_CHAIN.replace("for step in range(100):", "for step in tf.trainable_variables():"),
    HELPER_CHAIN.replace("for step in range(100):", "for i, (v, g) in enumerate(zip(params, gs)):"),
    HELPER_CHAIN.replace("for step in range(100):", "for step in range(len(self.layers)):"),
    # the op is built only under a debugging option that is off unless asked for
    HELPER_CHAIN.replace("def set_w(v):\n    return tf.assign(w, v)",
                         "def set_w(v, dump=False):\n    if dump:\n"
                         "        tf.io.write_graph(g, '.', 'g.pb')\n    return v"),
])
def test_valid_twins_of_the_loop_and_the_option(src):
    assert _tfp703(src) == []


@pytest.mark.parametrize("bound", ["hparams.steps", "self.hparams.train_steps",
                                   "params.num_steps", "FLAGS.num_layers_steps"])
def test_a_step_loop_bounded_by_hyper_parameters_is_not_a_loop_over_variables(bound):
    # review 38, item 8: `params`/`layers` in the bound's text read as "a model's variables"
    assert _tfp703(HELPER_CHAIN.replace("range(100)", f"range({bound})")) == [10]


def test_a_helper_of_another_module_that_builds_and_runs_its_op(tmp_path):
    # round 4 F026's shape: utils.add_noise runs sess.run(tf.truncated_normal(...)) per batch
    utils = ("import tensorflow as tf\n"
             "def add_noise(data, sess):\n"
             "    return data + sess.run(tf.truncated_normal(data.shape))\n")
    train = ("import tensorflow as tf\nfrom utils import *\nsess = tf.Session()\n"
             "for b in range(n):\n    x = add_noise(batch, sess)\n    sess.run(train_op)\n")
    write_project(tmp_path, {"utils.py": utils, "train.py": train})
    assert _project(tmp_path) == [("train.py", 5)]


def test_a_helper_reading_the_graph_collections_builds_nothing():
    # WorldModels' get_model_params: runs each existing variable, adds no node
    src = HELPER_CHAIN.replace(
        "def set_w(v):\n    return tf.assign(w, v)",
        "def set_w(v):\n    return [sess.run(x) for x in tf.trainable_variables()]")
    assert _tfp703(src) == []


def test_the_setup_names_the_docs_list_are_the_ones_the_rule_treats_as_setup():
    # review 38, item 15: the docs listed `add_*`, which the code never treated as setup
    listed = OpBuiltPerRun.docs.split("in functions named as setup\n(", 1)[1].split(")")[0]
    names = [n.strip("`*. \n") for n in listed.replace("\n", " ").split(",")]
    assert [n for n in names if n and not n.startswith(SETUP_PREFIXES)] == []


HELPERS = """\
import tensorflow as tf
def add_noise(x):
    return x + tf.random.normal(tf.shape(x))
"""
CELLS = ["# title\nsome text\nmore",
         "import tensorflow as tf\nfrom helpers import add_noise\n"
         "tf.compat.v1.disable_eager_execution()",
         "x = tf.compat.v1.placeholder(tf.float32, [None])\nsess = tf.compat.v1.Session()",
         "def local_noise(x):\n    return x + tf.random.normal(tf.shape(x))",
         "for step in range(100000):\n    z = local_noise(x)\n    y = add_noise(x)\n"
         "    sess.run(y, {x: [1.0]})"]


def _notebook(cells: list[str]) -> str:
    import json
    return json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "markdown" if i == 0 else "code", "metadata": {}, "source": c,
         **({} if i == 0 else {"outputs": [], "execution_count": None})}
        for i, c in enumerate(cells)]})


def test_a_notebook_calling_a_helper_of_another_module_is_reported_in_its_cell(tmp_path):
    # review 38, item 2: the cross-module finding kept the joined-line position (13:9)
    write_project(tmp_path, {"helpers.py": HELPERS, "train.ipynb": _notebook(CELLS)})
    out = run(LintRequest(paths=[str(tmp_path)], cache=False))
    assert sorted((f.location.cell or 0, f.location.line, f.location.column,
                   f.message.split("(")[0])
                  for f in out.findings if f.code == "TFP703") == [
        (5, 2, 8, "tf.random.normal built on every call of local_noise"),
        (5, 3, 8, "tf.random.normal built on every call of add_noise")]
    # and its noqa is looked up on the cell's line
    noqa = [*CELLS[:4], CELLS[4].replace("add_noise(x)", "add_noise(x)  # noqa: TFP703")]
    (tmp_path / "train.ipynb").write_text(_notebook(noqa))
    out = run(LintRequest(paths=[str(tmp_path)], cache=False))
    assert [f.message.split("(")[0] for f in out.findings if f.code == "TFP703"] == [
        "tf.random.normal built on every call of local_noise"]


# review 38, item 1: TF2 code serving a frozen graph in a session of its own; the
# preprocessing runs eagerly (`.numpy()`): nothing grows
FROZEN = """\
import tensorflow as tf
class Detector:
    def __init__(self, path):
        self.graph = tf.Graph()
        with self.graph.as_default():
            gd = tf.compat.v1.GraphDef()
            with tf.io.gfile.GFile(path, "rb") as f:
                gd.ParseFromString(f.read())
            tf.import_graph_def(gd, name="")
        self.sess = tf.compat.v1.Session(graph=self.graph)
    def detect(self, image):
        return self.sess.run("boxes:0", {"image:0": image})
"""
PREP = """\
import tensorflow as tf
def preprocess(image):
    image = tf.image.resize(image, (320, 320))
    return tf.cast(image, tf.uint8).numpy()
"""
SERVE = """\
import cv2
from frozen import Detector
from prep import preprocess
det = Detector("model.pb")
cap = cv2.VideoCapture(0)
while True:
    ok, frame = cap.read()
    if not ok:
        break
    boxes = det.detect(preprocess(frame))
"""


@pytest.mark.parametrize("pin", [None, "tensorflow==2.15.0\n"])
def test_tf2_eager_helpers_called_per_run_of_a_frozen_graph_session_are_quiet(tmp_path, pin):
    files = {"frozen.py": FROZEN, "prep.py": PREP, "run.py": SERVE}
    write_project(tmp_path, {**files, **({"requirements.txt": pin} if pin else {})})
    assert _project(tmp_path) == []


def test_an_eager_helper_in_the_frozen_graph_module_itself_is_quiet(tmp_path):
    frozen = FROZEN.replace('        return self.sess.run("boxes:0", {"image:0": image})',
                            "        image = tf.image.resize(image, (320, 320)).numpy()\n"
                            '        return self.sess.run("boxes:0", {"image:0": image})')
    serve = SERVE.replace("det.detect(preprocess(frame))", "det.detect(frame)")
    write_project(tmp_path, {"frozen.py": frozen, "run.py": serve,
                             "requirements.txt": "tensorflow==2.15.0\n"})
    assert _project(tmp_path) == []


def test_the_same_program_in_tf1_grows_the_default_graph(tmp_path):
    # TF1: every op goes into the default graph, whichever graph the session runs
    write_project(tmp_path, {"frozen.py": FROZEN, "prep.py": PREP.replace(".numpy()", ""),
                             "run.py": SERVE, "requirements.txt": "tensorflow==1.15.0\n"})
    assert _project(tmp_path) == [("run.py", 10)]


def test_a_tf2_program_with_eager_off_in_its_loop_module_grows_the_graph(tmp_path):
    # the helper's module is plain TF, the loop's module turns eager off: graph code
    serve = ("import tensorflow as tf\ntf.compat.v1.disable_eager_execution()\n"
             + SERVE.replace("boxes = det.detect(preprocess(frame))",
                             "boxes = sess.run(preprocess(frame))"))
    write_project(tmp_path, {"prep.py": PREP.replace(".numpy()", ""), "run.py": serve,
                             "requirements.txt": "tensorflow==2.15.0\n"})
    assert _project(tmp_path) == [("run.py", 12)]


def test_a_loop_in_the_frozen_graph_module_calling_its_eager_helper_is_quiet():
    src = FROZEN + """\
    def prep(self, image):
        return tf.image.resize(image, (320, 320)).numpy()
    def serve(self, frames):
        for f in frames:
            self.sess.run("boxes:0", {"image:0": self.prep(f)})
"""
    assert _tfp703(src) == []
    assert _tfp703(src.replace("tf.compat.v1.Session(graph=self.graph)",
                               "tf.compat.v1.Session()")) == [17]
