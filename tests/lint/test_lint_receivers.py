"""Receivers resolved, not matched by name: a project's own ``predict`` method is not Keras's
(TFP110 took ``self._actor.predict`` for ``Model.predict``: held-out recall round 6, F016)."""

from __future__ import annotations

import json
import textwrap

import pytest
from project_files import found, write_project

from tfperf.lint.engine import lint_source
from tfperf.lint.session import LintRequest, run

# The project's own actor: a model call plus a squashing, under the name `predict`.
NETWORK = """\
import tensorflow as tf

class Actor:
    def __init__(self, n):
        self.model = tf.keras.Sequential([tf.keras.layers.Dense(n)])

    def predict(self, obs, deterministic=False):
        return tf.tanh(self.model(obs))
"""

# VALID twin's counterpart: a Keras model subclass that keeps Keras's predict.
KERAS_NETWORK = """\
import tensorflow as tf

class Actor(tf.keras.Model):
    def __init__(self, n):
        super().__init__()
        self.dense = tf.keras.layers.Dense(n)

    def call(self, obs):
        return self.dense(obs)

    def predict(self, obs, **kw):
        return super().predict(obs, **kw)
"""

AGENT = """\
import numpy as np
import tensorflow as tf
from network import Actor

class Agent:
    def __init__(self, env):
        self.env = env
        self._actor = Actor(4)

    def run(self, steps):
        obs = self.env.reset()
        for _ in range(steps):
            action = self._actor.predict(tf.expand_dims(obs, 0))
            obs, reward, done, _ = self.env.step(np.asarray(action)[0])
"""


def _tfp110(root):
    return [f for f in found(run(LintRequest(paths=[str(root)], cache=False)), root)
            if f[0] == "TFP110"]


def test_a_project_class_of_another_module_runs_its_own_predict(tmp_path):
    write_project(tmp_path, {"network.py": NETWORK, "agent.py": AGENT})
    assert _tfp110(tmp_path) == []


def test_a_keras_model_subclass_of_another_module_is_still_reported(tmp_path):
    write_project(tmp_path, {"network.py": KERAS_NETWORK, "agent.py": AGENT})
    assert [(f[1], f[2]) for f in _tfp110(tmp_path)] == [("agent.py", 13)]


def test_the_class_not_in_the_linted_files_keeps_the_finding(tmp_path):
    # `network.py` not linted (only agent.py, context off): the receiver is not known.
    write_project(tmp_path, {"network.py": NETWORK, "agent.py": AGENT})
    out = run(LintRequest(paths=[str(tmp_path / "agent.py")], cache=False,
                          project_context=False))
    assert [f.location.line for f in out.findings if f.code == "TFP110"] == [13]


def test_a_file_named_alone_sees_the_class_through_its_project(tmp_path):
    write_project(tmp_path, {".git/HEAD": "", "network.py": NETWORK, "agent.py": AGENT})
    out = run(LintRequest(paths=[str(tmp_path / "agent.py")], cache=False))
    assert [f for f in out.findings if f.code == "TFP110"] == []


SAME_MODULE = NETWORK + "\n" + AGENT.replace("from network import Actor\n", "")
SAME_MODULE_KERAS = KERAS_NETWORK + "\n" + AGENT.replace("from network import Actor\n", "")


@pytest.mark.parametrize("spelling", [
    SAME_MODULE,
    # annotated parameter
    SAME_MODULE.replace("    def run(self, steps):",
                        "    def run(self, steps, actor: Actor = None):")
    .replace("self._actor.predict", "actor.predict"),
    # a local name
    SAME_MODULE.replace("        obs = self.env.reset()",
                        "        actor = Actor(4)\n        obs = self.env.reset()")
    .replace("self._actor.predict", "actor.predict"),
])
def test_a_class_of_the_same_module_runs_its_own_predict(spelling):
    assert [f.code for f in lint_source(spelling, "agent.py")
            if f.code == "TFP110"] == []


def test_same_module_keras_subclass_is_reported():
    assert [f.location.line for f in lint_source(SAME_MODULE_KERAS, "agent.py")
            if f.code == "TFP110"] != []


def test_a_notebook_with_its_own_actor_class(tmp_path):
    cells = [SAME_MODULE, "Agent(None).run(1000)\n"]
    nb = {"cells": [{"cell_type": "code", "metadata": {}, "outputs": [],
                     "execution_count": None, "source": textwrap.dedent(c)} for c in cells],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "play.ipynb").write_text(json.dumps(nb))
    keras_nb = dict(nb, cells=[dict(nb["cells"][0], source=SAME_MODULE_KERAS),
                               nb["cells"][1]])
    (tmp_path / "keras.ipynb").write_text(json.dumps(keras_nb))
    out = run(LintRequest(paths=[str(tmp_path)], cache=False))
    assert sorted({f.location.path.rsplit("/", 1)[-1] for f in out.findings
                   if f.code == "TFP110"}) == ["keras.ipynb"]
