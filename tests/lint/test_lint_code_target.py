"""A project with no pin is linted at the installed TensorFlow, except a module whose own APIs
are TF 1.x / multi-backend Keras: it targets TF 1.15 (lint/code_target.py). The held-out
precision rounds' one false TFP110 class was 2017-2019 standalone-Keras agents, unpinned."""

import ast
import json

import pytest

from tfperf.lint.code_target import inferred_target
from tfperf.lint.semantic import Context
from tfperf.lint.session import LintRequest, run

AGENT = """\
import numpy as np
from keras.models import Sequential
from keras.layers import Dense
from keras.optimizers import Adam

class Agent:
    def __init__(self):
        self.q_eval = Sequential([Dense(2)])
        self.q_eval.compile(optimizer=Adam(lr=0.001), loss="mse")

    def choose_action(self, state):
        state = state[np.newaxis, :]
        return np.argmax(self.q_eval.predict(state))
"""
MAIN = """\
import gym
from agent import Agent
env = gym.make("CartPole-v1")
agent = Agent()
for episode in range(500):
    obs, done = env.reset(), False
    while not done:
        obs, reward, done, info = env.step(agent.choose_action(obs))
"""


def _tfp110(root, **request):
    out = run(LintRequest(paths=[str(root)], select=["TFP110"], cache=False, **request))
    return [f for f in out.findings if f.code == "TFP110"]


def _project(root, agent=AGENT):
    (root / "agent.py").write_text(agent)
    (root / "main.py").write_text(MAIN)


def test_an_unpinned_standalone_keras_agent_targets_tf1_and_predict_is_not_reported(tmp_path):
    _project(tmp_path)
    assert _tfp110(tmp_path) == []


@pytest.mark.parametrize("pin", ["tensorflow==2.3.1\n", "tensorflow>=2.4\nkeras\n"])
def test_the_same_agent_pinned_to_tf2_is_reported(tmp_path, pin):
    _project(tmp_path)
    (tmp_path / "requirements.txt").write_text(pin)
    assert len(_tfp110(tmp_path)) == 1


def test_a_tf_version_setting_wins_over_the_code(tmp_path):
    _project(tmp_path)
    assert len(_tfp110(tmp_path, tf_version="2.9")) == 1


def test_a_tf2_agent_beside_a_keras2_one_keeps_its_finding(tmp_path):
    # One repository, two generations (philtabor: *_keras.py of 2019, *_tf2.py of 2020):
    # the evidence is the module's own, not the project's.
    _project(tmp_path)
    tf2 = AGENT.replace("from keras.", "from tensorflow.keras.").replace("lr=", "learning_rate=")
    (tmp_path / "agent_tf2.py").write_text(tf2)
    (tmp_path / "main_tf2.py").write_text(MAIN.replace("from agent ", "from agent_tf2 "))
    found = _tfp110(tmp_path)
    assert [f.location.path.rsplit("/", 1)[-1] for f in found] == ["agent_tf2.py"]


def test_a_notebook_pip_pin_wins_over_the_code(tmp_path):
    cells = ["!pip install tensorflow==2.4.1", AGENT,
             "state = env.reset()\nfor t in range(200):\n"
             "    action = np.argmax(model.predict(state[None]))\n"
             "    state, reward, done, _ = env.step(action)\n"]
    cells[1] += "model = Sequential([Dense(2)])\nmodel.compile(optimizer=Adam(lr=0.1))\n"
    nb = {"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                     "source": c} for c in cells], "metadata": {}, "nbformat": 4,
          "nbformat_minor": 5}
    (tmp_path / "nb.ipynb").write_text(json.dumps(nb))
    assert _tfp110(tmp_path)
    nb["cells"] = nb["cells"][1:]  # no pip pin: the code's own APIs say TF 1.x
    (tmp_path / "nb.ipynb").write_text(json.dumps(nb))
    assert _tfp110(tmp_path) == []


def _target(src):
    return inferred_target(Context(ast.parse(src), src))


@pytest.mark.parametrize("src", [
    "import tensorflow as tf\nsess = tf.Session()\n",
    "import tensorflow as tf\nx = tf.placeholder(tf.float32)\n",
    "from keras import backend as K\nK.set_session(s)\n",
    "import keras.backend as K\ns = K.get_session()\n",
    "import keras.backend.tensorflow_backend as KTF\n",
    "from keras.backend import tensorflow_backend\n",
    "import keras\nm.fit(x, y, nb_epoch=3)\n",
    "from keras.models import Model\nm = Model(input=a, output=b)\n",
    "import keras\nopt = keras.optimizers.SGD(lr=0.1)\n",
    "from keras.optimizers import Adam\nopt = Adam(lr=0.1)\n",
    "import tensorflow as tf\nopt = tf.train.AdamOptimizer(1e-3)\n",
])
def test_tf1_and_multi_backend_keras_spellings_target_tf_1_15(src):
    found = _target(src)
    assert found is not None and found.version == (1, 15), src


@pytest.mark.parametrize("src", [
    "import tensorflow as tf\nsess = tf.compat.v1.Session()\n",  # TF 2 with compat.v1
    "import tensorflow as tf\nimport keras\nopt = tf.keras.optimizers.Adam(lr=0.1)\n",
    "from tensorflow.keras.optimizers import Adam\nopt = Adam(lr=0.1)\n",
    "from tensorflow import keras\nopt = keras.optimizers.Adam(lr=0.1)\n",
    "from keras.optimizers import Adam\nopt = Adam(learning_rate=0.1)\n",
    "import tensorflow as tf\nsess = tf.Session()\n@tf.function\ndef f(x):\n    return x\n",
    "import tensorflow as tf\nsess = tf.Session()\nwith tf.GradientTape() as t:\n    pass\n",
    "# tf.Session() in TF 1\nimport tensorflow as tf\n",
    "import keras\nm.fit(x, y, epochs=3)\n",
])
def test_tf2_code_and_tf2_spellings_infer_nothing(src):
    assert _target(src) is None, src


def test_a_pin_equal_to_the_installed_tf_is_not_a_cache_hit_of_the_unpinned_run(tmp_path):
    # Unpinned, the module's own APIs chose TF 1.15; pinned to the very release the unpinned
    # run fell back to, the pin chooses: the same bytes and releases, another target.
    from tfperf.lint.target import NEWEST_KNOWN, installed_version

    root, cache = tmp_path / "p", tmp_path / "cache"
    root.mkdir()
    _project(root)
    fallback = installed_version()
    major, minor = fallback.version if fallback is not None else NEWEST_KNOWN
    lint = lambda: [f for f in run(LintRequest(  # noqa: E731
        paths=[str(root)], select=["TFP110"], cache=True, cache_dir=cache)).findings
        if f.code == "TFP110"]
    assert lint() == []
    (root / "requirements.txt").write_text(f"tensorflow=={major}.{minor}\n")
    assert len(lint()) == 1


ACTOR_TF1 = """\
import tensorflow as tf
import keras.backend as K
from keras.models import Model
from keras.layers import Input, Dense

class Actor:
    def __init__(self):
        inp = Input((4,))
        self.model = Model(inp, Dense(2)(inp))
        self.opt = tf.train.AdamOptimizer(1e-3)

    def predict(self, s):
        return self.model.predict(s)
"""
DDPG = """\
import numpy as np
from keras.models import load_model
from actor import Actor

class DDPG:
    def __init__(self):
        self.net = load_model("q.h5")

    def policy_action(self, s):
        return self.net.predict(np.expand_dims(s, axis=0))[0]

    def train(self, env):
        for e in range(1000):
            s, done = env.reset(), False
            while not done:
                s, r, done, _ = env.step(self.policy_action(s))
"""


@pytest.mark.parametrize(("actor", "pin", "found"), [
    (ACTOR_TF1, None, 0),  # imports a TF 1.x module of the project: the program is TF 1.x
    (ACTOR_TF1.replace("tf.train.AdamOptimizer", "tf.keras.optimizers.Adam"), None, 1),
    (ACTOR_TF1, "tensorflow==2.4\n", 1),  # pinned: the pin says
])
def test_a_module_importing_a_tf1_module_of_the_project_runs_on_tf1(tmp_path, actor, pin,
                                                                    found):
    (tmp_path / "actor.py").write_text(actor)
    (tmp_path / "ddpg.py").write_text(DDPG)
    if pin:
        (tmp_path / "requirements.txt").write_text(pin)
    ddpg = [f for f in _tfp110(tmp_path) if f.location.path.endswith("ddpg.py")]
    assert len(ddpg) == found
