"""TFP111: a model called eagerly on one input per step, found through the project model
(the agent in one module, the environment loop in another), and a warm run after the
agent changed gives what a cold run gives."""

from __future__ import annotations

from project_files import found, write_project

from tfperf.lint.session import LintRequest, run

AGENT = """\
import numpy as np
import tensorflow as tf

class Agent:
    def __init__(self, n):
        self.q_net = tf.keras.Sequential([tf.keras.layers.Dense(2)])
        self.n = n

    def act(self, state):
        return int(np.argmax(self.q_net(np.reshape(state, [1, self.n]))))
"""

LOOP = """\
import gym
from agent import Agent

env = gym.make("CartPole-v1")
agent = Agent(4)
for episode in range(500):
    state, done = env.reset(), False
    while not done:
        state, _, done, _ = env.step(agent.act(state))
"""

COMPILED = AGENT.replace("    def act", "    @tf.function\n    def act")


def _found(outcome, root) -> list[tuple[str, str, int | None, str]]:
    return found(outcome, root, "TFP111")


def test_found_at_the_agent_through_the_loop_in_another_module(tmp_path):
    write_project(tmp_path, {"agent.py": AGENT, "train.py": LOOP})
    found = _found(run(LintRequest(paths=[str(tmp_path)], cache=False, select=["TFP111"])),
                   tmp_path)
    assert [(c, p, line) for c, p, line, _ in found] == [("TFP111", "agent.py", 10)]
    assert "train.py:9" in found[0][3]
    # The agent alone: act() makes a batch of one from its argument and is entered from
    # outside, so it is still reported, without a loop to name.
    alone = _found(run(LintRequest(paths=[str(tmp_path / "agent.py")], cache=False,
                                   select=["TFP111"])), tmp_path)
    assert [line for _, _, line, _ in alone] == [10] and "from outside" in alone[0][3]
    # The loop's caller compiled: the one graph runs per step, nothing to report.
    write_project(tmp_path / "c", {"agent.py": COMPILED, "train.py": LOOP})
    assert _found(run(LintRequest(paths=[str(tmp_path / "c")], cache=False,
                                  select=["TFP111"])), tmp_path / "c") == []


def test_warm_run_after_the_agent_changed_equals_a_cold_run(tmp_path):
    root = tmp_path / "proj"
    write_project(root, {"agent.py": AGENT, "train.py": LOOP})
    req = LintRequest(paths=[str(root)], cache_dir=tmp_path / "cache", select=["TFP111"])
    first = run(req)
    assert len(_found(first, root)) == 1
    (root / "agent.py").write_text(COMPILED)  # the agent compiles act(): nothing to say
    warm = run(req)
    assert warm.cache_hits == 1 and warm.analysed == 1
    cold = run(LintRequest(paths=[str(root)], cache=False, select=["TFP111"]))
    assert _found(warm, root) == _found(cold, root) == []
    (root / "agent.py").write_text(AGENT)
    back = run(req)
    assert back.analysed == 0 and _found(back, root) == _found(first, root)
    # The loop removed from the caller shows at the callee too.
    (root / "train.py").write_text(LOOP.replace("for episode in range(500):\n",
                                                "if True:\n"))
    assert _found(run(req), root) == \
        _found(run(LintRequest(paths=[str(root)], cache=False, select=["TFP111"])), root)


def test_predict_stays_tfp110s_and_a_batch_per_step_is_not_one_input(tmp_path):
    write_project(tmp_path, {"agent.py": AGENT.replace("self.q_net(", "self.q_net.predict("),
                      "train.py": LOOP})
    out = run(LintRequest(paths=[str(tmp_path)], cache=False, select=["TFP110", "TFP111"]))
    assert sorted(f.code for f in out.findings) == ["TFP110"]
    write_project(tmp_path / "b", {"main.py": """\
        import tensorflow as tf
        model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
        for batch in tf.data.Dataset.range(10).batch(4):
            model(tf.cast(batch[:, None], tf.float32))
    """})
    out = run(LintRequest(paths=[str(tmp_path / "b")], cache=False, select=["TFP111"]))
    assert out.findings == []


LEARNER = AGENT + """
    def train(self, batch):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(self.q_net(batch))
        grads = tape.gradient(loss, self.q_net.trainable_variables)
        self.opt.apply_gradients(zip(grads, self.q_net.trainable_variables))
"""

LEARNING_LOOP = """\
import gym
import numpy as np
from agent import Agent

env = gym.make("CartPole-v1")
agent = Agent(4)
for episode in range(500):
    state, done = env.reset(), False
    while not done:
        state, _, done, _ = env.step(agent.act(state))
        agent.train(np.zeros([64, 4], np.float32))
"""


def test_left_to_tfp306_where_the_same_loop_runs_an_eager_training_step(tmp_path):
    # Precision round 3: where each step also runs an eager training update (DDPG, TD3
    # agents), the update dominates and TFP306 reports it; TFP111 stays quiet there, and
    # still reports the same act() driven by a loop that only acts.
    inline = LEARNER + "\n" + LEARNING_LOOP.replace("from agent import Agent\n", "")
    write_project(tmp_path / "one", {"run.py": inline})
    found = run(LintRequest(paths=[str(tmp_path / "one")], cache=False,
                            select=["TFP111", "TFP306"]))
    assert sorted(f.code for f in found.findings) == ["TFP306"]
    acting = LEARNER + "\n" + LOOP.replace("from agent import Agent\n", "")
    write_project(tmp_path / "two", {"run.py": acting})
    found = run(LintRequest(paths=[str(tmp_path / "two")], cache=False, select=["TFP111"]))
    assert [f.location.line for f in found.findings] == [10]
