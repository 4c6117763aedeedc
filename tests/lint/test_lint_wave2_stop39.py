"""Stop 39, wave 2: a crash found on real TF1 GAN code, and round 9's false classes."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tfperf.lint.session import LintRequest, run


def _lint(tmp_path: Path, source: str, select: str, preview: bool = False) -> list:
    (tmp_path / "m.py").write_text(textwrap.dedent(source))
    out = run(LintRequest(paths=[str(tmp_path)], select=[select], preview=preview, cache=False))
    return out.findings


def test_tfp116_loss_by_keyword_does_not_crash(tmp_path):
    # Two updates of one optimizer spelling on one var_list, the loss passed as loss=: the
    # rule re-read the term by position and got None (TFP001 AttributeError before).
    found = _lint(tmp_path, """
        import tensorflow.compat.v1 as tf
        def build(a_loss, b_loss, ws, sharp):
            first = tf.train.GradientDescentOptimizer(0.1).minimize(loss=a_loss, var_list=ws)
            if sharp:
                second = tf.train.GradientDescentOptimizer(0.1).minimize(loss=b_loss,
                                                                          var_list=ws)
            return first
    """, "TFP116", preview=True)
    assert [f.code for f in found if f.code == "TFP001"] == []


def test_tfp116_terms_by_keyword_still_found(tmp_path):
    found = _lint(tmp_path, """
        import tensorflow.compat.v1 as tf
        ga = tf.gradients(ys=la, xs=ws)
        gb = tf.gradients(xs=ws, ys=lb)
        op = opt.apply_gradients(zip([a + b for a, b in zip(ga, gb)], ws))
    """, "TFP116", preview=True)
    assert [(f.code, f.location.line) for f in found] == [("TFP116", 3)]


_EPISODE_AGENT = """
    import numpy as np
    import tensorflow as tf

    class Memory:
        def __init__(self):
            self.ep_obs, self.ep_act = [], []
        def store(self, obs, act):
            self.ep_obs.append(obs)
            self.ep_act.append(act)
        def reset(self):
            self.ep_obs, self.ep_act = [], []

    class Agent:
        def __init__(self):
            self.model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
            self.opt = tf.keras.optimizers.Adam()
            self.memory = Memory()
        def learn(self):
            obs = {STACK}
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(self.model(obs))
            grads = tape.gradient(loss, self.model.trainable_variables)
            self.opt.apply_gradients(zip(grads, self.model.trainable_variables))
            self.memory.reset()

    agent = Agent()
    for episode in range(500):
        for t in range(200):
            agent.memory.store(np.zeros(4, np.float32), 0)
        agent.learn()
"""


def test_tfp306_episode_step_hint_relaxes_shapes(tmp_path):
    # One update per variable-length episode: a bare tf.function would retrace per length.
    found = _lint(tmp_path, _EPISODE_AGENT.replace("{STACK}", "np.vstack(self.memory.ep_obs)"),
                  "TFP306")
    assert [f.location.line for f in found] == [19]
    assert "as long as an episode" in found[0].message
    assert "reduce_retracing=True" in (found[0].hint or "")
    assert "input_signature" in (found[0].hint or "")


def test_tfp306_fixed_batch_step_keeps_the_plain_hint(tmp_path):
    # The twin: the last 32 transitions (every episode here is 200 steps): one shape.
    found = _lint(tmp_path, _EPISODE_AGENT.replace(
        "{STACK}", "np.vstack(self.memory.ep_obs[-32:])"), "TFP306")
    assert [f.location.line for f in found] == [19]
    assert "episode" not in found[0].message
    assert "reduce_retracing" not in (found[0].hint or "")


def test_tfp306_episode_hint_on_old_tf_names_relax_shapes(tmp_path):
    (tmp_path / "requirements.txt").write_text("tensorflow==2.4.1\n")
    found = _lint(tmp_path, _EPISODE_AGENT.replace("{STACK}", "np.array(self.memory.ep_obs)"),
                  "TFP306")
    assert "experimental_relax_shapes=True" in (found[0].hint or "")


def test_tfp704_gradients_read_then_applied_still_merge(tmp_path):
    # `gvs` comes from the optimizer object but is no update; `tf.train` and
    # `optimizer.apply_gradients` are not values of the ops (the module has `train =
    # optimizer.minimize(...)`): one update, one read, mergeable.
    found = _lint(tmp_path, """
        import tensorflow as tf
        W = tf.Variable(5.)
        cost = tf.reduce_mean(tf.square(W - 1.0))
        optimizer = tf.train.GradientDescentOptimizer(learning_rate=0.01)
        train = optimizer.minimize(cost)
        gvs = optimizer.compute_gradients(cost, [W])
        apply_gradients = optimizer.apply_gradients(gvs)
        sess = tf.Session()
        for step in range(100):
            print(step, sess.run([W, gvs]))
            sess.run(apply_gradients)
    """, "TFP704")
    assert [(f.code, f.location.line) for f in found] == [("TFP704", 12)]


def test_tfp704_second_network_update_not_merged(tmp_path):
    found = _lint(tmp_path, """
        import tensorflow as tf
        d_train = tf.train.AdamOptimizer(1e-4).minimize(d_loss, var_list=d_vars)
        g_train = tf.train.AdamOptimizer(1e-4).minimize(g_loss, var_list=g_vars)
        sess = tf.Session()
        for step in range(100):
            sess.run(d_train, feed_dict={x: xs})
            sess.run(g_train, feed_dict={x: xs})
    """, "TFP704")
    assert found == []


def test_tfp704_names_from_another_module_read_by_their_last_part(tmp_path):
    # Ops of a model built elsewhere: d_op and g_op are train ops (ordered, not merged);
    # train_loss and summary_op are reads (merged with the update: one finding).
    (tmp_path / "model.py").write_text("class GAN:\n    pass\n")
    found = _lint(tmp_path, """
        import tensorflow as tf
        from model import GAN
        model = GAN()
        with tf.Session() as s:
            for step in range(100):
                s.run(model.d_op, feed_dict={model.x: xs})
                s.run(model.g_op, feed_dict={model.x: xs})
                s.run([model.train_loss, model.summary_op], feed_dict={model.x: xs})
    """, "TFP704")
    assert [(f.code, f.location.line) for f in found] == [("TFP704", 9)]
