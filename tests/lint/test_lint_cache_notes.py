"""The lint cache keeps a file's notes (stop 42): before, a file whose lint said something on
stderr (read as Python 2 source, a Python 2 kernel notebook) was never stored, so every warm
run analysed it again (``bench_lint_speed.py`` on a 10-repo tree: 12 of 573 files, all Python
2 kernel notebooks). A warm run over unchanged files now analyses none and says the same
notes; after a callee module changes, it gives what a cold run gives."""

from __future__ import annotations

import json

from project_files import found, write_project

from tfperf.lint.session import LintRequest, run

AGENT = """\
import numpy as np
import tensorflow as tf

class Agent:
    def __init__(self):
        self.model = tf.keras.Sequential([tf.keras.layers.Dense(2)])

    def act(self, state):
        return int(np.argmax(self.model.predict(state, verbose=0)[0]))
"""
AGENT_DIRECT = AGENT.replace("self.model.predict(state, verbose=0)",
                             "self.model(state, training=False).numpy()")
TRAIN = """\
import gym
import numpy as np
from agent import Agent

env = gym.make("CartPole-v1")
agent = Agent()
for episode in range(500):
    state, done = env.reset(), False
    while not done:
        state, reward, done, _ = env.step(agent.act(np.reshape(state, [1, 4])))
"""
# Python 2 source: linted from a normalised copy, with a note.
OLD = """\
import tensorflow as tf
print "building"
x = tf.constant(1.0)
"""


def _py2_notebook() -> str:
    cell = {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": 1,
            "source": "import tensorflow as tf\nprint 'hello'\n"}
    return json.dumps({"cells": [cell], "metadata": {"kernelspec": {"name": "python2"}},
                       "nbformat": 4, "nbformat_minor": 2})


def test_warm_run_analyses_no_file_with_a_note_and_says_the_notes_again(tmp_path):
    root = tmp_path / "proj"
    write_project(root, {"agent.py": AGENT, "train.py": TRAIN, "old.py": OLD,
                         "old.ipynb": _py2_notebook()})
    req = LintRequest(paths=[str(root)], cache_dir=tmp_path / "cache")
    cold = run(req)
    assert cold.analysed == 4
    assert len(cold.notes) == 2 and all("Python 2" in n for n in cold.notes)
    assert ("TFP110", "agent.py", 9) in [f[:3] for f in found(cold, root)]
    warm = run(req)
    assert warm.analysed == 0 and warm.cache_hits == 4
    assert sorted(warm.notes) == sorted(cold.notes)
    assert found(warm, root) == found(cold, root)


def test_warm_run_after_a_callee_edit_equals_a_cold_run(tmp_path):
    root = tmp_path / "proj"
    write_project(root, {"agent.py": AGENT, "train.py": TRAIN, "old.py": OLD})
    req = LintRequest(paths=[str(root)], cache_dir=tmp_path / "cache")
    before = run(req)
    assert ("TFP110", "agent.py", 9) in [f[:3] for f in found(before, root)]
    (root / "agent.py").write_text(AGENT_DIRECT)
    warm = run(req)
    cold = run(LintRequest(paths=[str(root)], cache=False))
    assert warm.analysed == 1  # only the edited callee
    assert found(warm, root) == found(cold, root)
    assert "TFP110" not in [f[0] for f in found(warm, root)]
    assert warm.notes == cold.notes and len(warm.notes) == 1
