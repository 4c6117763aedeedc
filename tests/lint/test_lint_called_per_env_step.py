"""The project model's "called per step" fact across modules: a function that predicts on
its parameter, run once per environment step by a loop in another function, class or
module (reached through imports, star imports, ``self`` attributes and, where an
attribute's class is chosen at run time, a method name only project classes define), is
reported by TFP110 at its ``predict`` call, the caller's loop named in the message. Five
spellings, each with VALID twins that stay silent."""

from __future__ import annotations

import json

import pytest
from project_files import found, write_project

from tfperf.lint.session import LintRequest, run

# A network class whose method predicts on whatever batch it is given.
NETS = """\
import numpy as np
import tensorflow as tf

class QNet:
    def __init__(self, n):
        self._model = tf.keras.Sequential([tf.keras.layers.Dense(n)])

    def predict_movement(self, data, epsilon):
        q = self._model.predict(data)
        return np.argmax(q, axis=-1)
"""

# The agent holds a network whose class is chosen at run time (`nn_cls`).
AGENT = """\
from nets import QNet

class Agent:
    def __init__(self, n, nn_cls=QNet):
        self.deep_q = nn_cls(n)

    def act(self, obs):
        return self.deep_q.predict_movement(self.convert(obs), 0.1)

    def convert(self, obs):
        return obs
"""

TRAIN_BY_ATTRIBUTE = """\
import gym
from agent import Agent
from nets import QNet

env = gym.make("CartPole-v1")
agent = Agent(2, QNet)
obs, done, steps = env.reset(), False, 0
while steps < 10000:
    obs, reward, done, info = env.step(agent.act(obs))
    steps += 1
"""

HELPERS = """\
import numpy as np

def choose(model, states):
    return int(np.argmax(model.predict(states)[0]))

def features(obs):
    return obs
"""

TRAIN_BY_IMPORT = """\
import gym
import tensorflow as tf
from helpers import choose, features

env = gym.make("CartPole-v1")
model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
for episode in range(100):
    obs, done = env.reset(), False
    while not done:
        obs, reward, done, info = env.step(choose(model, features(obs)))
"""

TRAIN_BY_STAR = TRAIN_BY_IMPORT.replace("from helpers import choose, features",
                                        "from helpers import *")

# A runner class: the loop steps `self.env` and calls a policy chosen by name.
RUNNER = """\
from policies import POLICIES

class Runner:
    def __init__(self, env, name):
        self.env = env
        self.policy = POLICIES[name]()

    def run(self, steps):
        obs = self.env.reset()
        for t in range(steps):
            action = self.policy.select_action(self.encode(obs))
            obs, reward, done, info = self.env.step(action)

    def encode(self, obs):
        return obs
"""

POLICIES = """\
import tensorflow as tf

class Greedy:
    def __init__(self):
        self.net = tf.keras.Sequential([tf.keras.layers.Dense(2)])

    def select_action(self, batch):
        return self.net.predict(batch).argmax()

POLICIES = {"greedy": Greedy}
"""

# VALID twins: the same callees, not run per environment step.
TRAIN_PER_EPOCH = """\
import numpy as np
import tensorflow as tf
from helpers import choose, features

model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
x_test = np.load("x.npy")
for epoch in range(10):
    model.fit(x_test, x_test)
    print(choose(model, features(x_test)))
"""

TRAIN_ONCE = """\
import gym
from agent import Agent
from nets import QNet

env = gym.make("CartPole-v1")
agent = Agent(2, QNet)
first = agent.act(env.reset())
"""

# The method name is one library objects define: the attribute may be a Keras model.
AGENT_LIBRARY_NAME = AGENT.replace("predict_movement", "predict")
NETS_LIBRARY_NAME = NETS.replace("predict_movement", "predict")


def _notebook(*cells: str) -> str:
    return json.dumps({"cells": [{"cell_type": "code", "source": c, "metadata": {},
                                  "outputs": [], "execution_count": None} for c in cells],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def _tfp110(root) -> list[tuple[str, int | None, str]]:
    outcome = run(LintRequest(paths=[str(root)], cache=False, select=["TFP110"],
                              tf_version="2.15"))
    return [(p, line, msg) for _, p, line, msg in found(outcome, root, "TFP110")]


SPELLINGS = {
    "attribute-of-run-time-class": (
        {"nets.py": NETS, "agent.py": AGENT, "train.py": TRAIN_BY_ATTRIBUTE},
        ("nets.py", 9), "train.py:9"),
    # The agent imports neither TensorFlow nor a module of the project: the network is
    # handed to it.
    "agent-importing-nothing": (
        {"nets.py": NETS, "agent.py": AGENT.replace("from nets import QNet\n\n", "")
         .replace("nn_cls=QNet", "nn_cls=None"), "train.py": TRAIN_BY_ATTRIBUTE},
        ("nets.py", 9), "train.py:9"),
    "imported-helper-in-nested-loops": (
        {"helpers.py": HELPERS, "train.py": TRAIN_BY_IMPORT}, ("helpers.py", 4), "train.py:10"),
    "star-imported-helper": (
        {"helpers.py": HELPERS, "train.py": TRAIN_BY_STAR}, ("helpers.py", 4), "train.py:10"),
    "runner-method-self-env": (
        {"runner.py": RUNNER, "policies.py": POLICIES}, ("policies.py", 8), "runner.py:11"),
}

VALID = {
    "per-epoch-on-a-dataset": {"helpers.py": HELPERS, "train.py": TRAIN_PER_EPOCH},
    "once-at-start-up": {"nets.py": NETS, "agent.py": AGENT, "train.py": TRAIN_ONCE},
    "library-method-name": {"nets.py": NETS_LIBRARY_NAME, "agent.py": AGENT_LIBRARY_NAME,
                            "train.py": TRAIN_BY_ATTRIBUTE},
    "runner-without-env-step": {
        "runner.py": RUNNER.replace("self.env.step(action)", "self.queue.put(action)"),
        "policies.py": POLICIES},
}


@pytest.mark.parametrize("name", sorted(SPELLINGS))
def test_found_at_the_callee_with_the_loop_named(tmp_path, name):
    files, where, loop = SPELLINGS[name]
    write_project(tmp_path, files)
    got = _tfp110(tmp_path)
    assert [(p, line) for p, line, _ in got] == [where]
    assert "per environment step" in got[0][2] and loop in got[0][2]


@pytest.mark.parametrize("name", sorted(VALID))
def test_valid_twins_stay_silent(tmp_path, name):
    write_project(tmp_path, VALID[name])
    assert _tfp110(tmp_path) == []


def test_a_notebook_loop_calling_a_helper_module(tmp_path):
    write_project(tmp_path, {"helpers.py": HELPERS})
    cells = TRAIN_BY_IMPORT.split("for episode")
    (tmp_path / "play.ipynb").write_text(_notebook(cells[0], "for episode" + cells[1]))
    got = _tfp110(tmp_path)
    assert [(p, line) for p, line, _ in got] == [("helpers.py", 4)]
    assert "play.ipynb, cell 2, line 4" in got[0][2]
    # Its VALID twin: the notebook predicts once per epoch on the whole test set.
    (tmp_path / "play.ipynb").write_text(_notebook(TRAIN_PER_EPOCH))
    assert _tfp110(tmp_path) == []


def test_warm_run_after_the_loop_moved_out_equals_a_cold_run(tmp_path):
    root = tmp_path / "proj"
    write_project(root, {"nets.py": NETS, "agent.py": AGENT, "train.py": TRAIN_BY_ATTRIBUTE})
    req = LintRequest(paths=[str(root)], cache_dir=tmp_path / "cache", select=["TFP110"],
                      tf_version="2.15")
    assert len(found(run(req), root, "TFP110")) == 1
    (root / "train.py").write_text(TRAIN_ONCE)
    warm = found(run(req), root, "TFP110")
    cold = found(run(LintRequest(paths=[str(root)], cache=False, select=["TFP110"],
                                 tf_version="2.15")), root, "TFP110")
    assert warm == cold == []


# One image per call, allocated as a batch of one and filled in place, then transposed:
# still one input (the first axis stays first); the loop over files is in another module.
DETECTOR = """\
import numpy as np
import tensorflow as tf

class Detector:
    def __init__(self, path):
        self.model = tf.keras.models.load_model(path)

    def detect(self, img):
        batch = np.zeros((1, 3, img.shape[0], img.shape[1]))
        for c in range(3):
            batch[0, c] = img[:, :, c]
        return self.model.predict(batch.transpose(0, 2, 3, 1))
"""

EVALUATE = """\
import os
import cv2
from detector import Detector

detector = Detector("weights.h5")
for name in os.listdir("images"):
    faces = detector.detect(cv2.imread(name))
"""


def test_one_image_allocated_as_a_batch_of_one(tmp_path):
    write_project(tmp_path, {"detector.py": DETECTOR, "evaluate.py": EVALUATE})
    got = _tfp110(tmp_path)
    assert [(p, line) for p, line, _ in got] == [("detector.py", 12)]
    assert "evaluate.py:7" in got[0][2]
    # VALID twins: every image in one allocated batch; the axes moved so that the
    # allocation's leading one is no longer the batch axis.
    for twin in (DETECTOR.replace("np.zeros((1, 3,", "np.zeros((len(img), 3,"),
                 DETECTOR.replace("transpose(0, 2, 3, 1)", "transpose(2, 3, 1, 0)")):
        write_project(tmp_path, {"detector.py": twin})
        assert _tfp110(tmp_path) == []
