"""Causes read through the code's helpers: a ``predict`` in a method the loop calls, and an
optimizer update in a method the tape is passed to, are named for what they are (predict's
per-call overhead, an eager update), not as compiled computation or a model called per item.
Planted scripts on real TensorFlow (CPU)."""

import profile_scripts
from profile_scripts import causes_at, line_of, run_planted, write_script

from tfperf.profile import remedies, runner

PREDICT_IN_A_HELPER = """
    import numpy as np
    import tensorflow as tf

    class Agent:
        def __init__(self):
            self.model = tf.keras.Sequential([tf.keras.Input([4]),
                                              tf.keras.layers.Dense(8, activation="relu"),
                                              tf.keras.layers.Dense(2)])

        def predict(self, state):
            return self.model.predict(state, verbose=0)  # one row a call

        def act(self, state):
            return int(np.argmax(self.predict(state)[0]))

    agent = Agent()
    rng = np.random.default_rng(0)
    for t in range(30):
        agent.act(rng.random((1, 4), dtype=np.float32))
"""


def test_predict_in_a_helper_called_from_a_loop_is_predict_overhead_not_compiled(
        tf, tmp_path):
    path, rep = run_planted(tmp_path, PREDICT_IN_A_HELPER)
    line = line_of(path, "one row a call")
    at_line = causes_at(rep, line)
    assert at_line, [c.title for c in rep.causes]
    assert all(c.kind != "compiled-step" for c in at_line), [c.title for c in at_line]
    assert at_line[0].kind == "predict-per-call"
    assert at_line[0].fix == remedies.PREDICT_PER_ITEM.hint
    assert rep.causes[0] is at_line[0]
    # no advice at that line tells to vectorise a Python loop it does not have
    for f in rep.findings:
        if f.location is not None and f.location.line == line:
            assert f.hint != remedies.EAGER_STORM.hint, f


UPDATE_IN_A_METHOD = profile_scripts.UPDATE_PER_TIME_STEP.format(time_steps=8)


def test_an_optimizer_update_in_a_loop_is_an_eager_update_not_a_model_call(tf, tmp_path):
    path, rep = run_planted(tmp_path, UPDATE_IN_A_METHOD)
    update = line_of(path, "apply_gradients")
    (cause,) = causes_at(rep, update)
    assert cause.kind in ("eager-update", "eager-training-step"), cause.title
    assert "tf.function" in cause.fix and "act = tf.function(model)" not in cause.fix
    # the tape's gradient, taken in a method the tape was passed to, is part of the update
    gradient = line_of(path, "tape.gradient")
    assert causes_at(rep, gradient) == [cause]



UPDATES_WITHOUT_A_STEP = """
    import tensorflow as tf

    model = tf.keras.Sequential([tf.keras.Input([4]), tf.keras.layers.Dense(2)])
    optimizer = tf.keras.optimizers.Adam(0.01)
    x = tf.ones([1, 4])
    with tf.GradientTape(persistent=True) as tape:  # once, outside any loop: no step loop
        losses = [tf.reduce_sum(model(x)) * (i + 1) for i in range(24)]
    for loss in losses:  # one update per loss
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
"""


def test_updates_in_a_loop_no_step_holds_are_one_eager_update_cause(tf, tmp_path):
    path, rep = run_planted(tmp_path, UPDATES_WITHOUT_A_STEP)
    assert rep.obs.steps is None  # no training step: the lines are read one by one
    update, gradient = line_of(path, "apply_gradients"), line_of(path, "tape.gradient")
    (cause,) = causes_at(rep, update)
    assert cause.kind == "eager-update" and cause.fix == remedies.EAGER_UPDATE.hint
    assert {h.line for h in cause.lines} == {update, gradient}


def test_a_tape_passed_into_the_method_that_updates_makes_the_loop_a_step_loop(
        tf, tmp_path):
    path, rep = run_planted(tmp_path, UPDATE_IN_A_METHOD, capture=True)
    steps = rep.obs.steps
    assert steps is not None and steps.count == 4  # one step per episode, not the whole run
    assert steps.loop_line == line_of(path, "for episode")
    assert rep.capture is not None and rep.capture.steps == 4


def test_a_step_loop_in_a_module_the_script_adds_to_sys_path_is_marked(tf, tmp_path):
    (tmp_path / "utils").mkdir()
    (tmp_path / "scripts").mkdir()
    write_script(tmp_path / "utils", name="trainer.py", body="""
        import tensorflow as tf

        def train(model, optimizer, x, y, steps):
            for _ in range(steps):  # the step loop
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(model(x) - y))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
    """)
    path = write_script(tmp_path / "scripts", name="main.py", body="""
        import os
        import sys
        sys.path.append(os.path.join(os.path.dirname(__file__), "..", "utils"))
        import tensorflow as tf
        from trainer import train

        model = tf.keras.Sequential([tf.keras.Input([4]), tf.keras.layers.Dense(1)])
        train(model, tf.keras.optimizers.SGD(0.01), tf.ones([8, 4]), tf.ones([8, 1]), 6)
    """)
    rep = runner.run_script(path, capture=False)
    assert rep.error is None, rep.error
    steps = rep.obs.steps
    assert steps is not None and steps.count == 6
    assert steps.path.endswith("trainer.py")
    top = rep.causes[0]
    assert top.kind == "eager-training-step" and top.step is not None
    assert top.step.path.endswith("trainer.py")


SOFT_UPDATE = """
    import tensorflow as tf

    actor = tf.keras.Sequential([tf.keras.Input([4]), tf.keras.layers.Dense(8),
                                 tf.keras.layers.Dense(8), tf.keras.layers.Dense(2)])
    target = tf.keras.models.clone_model(actor)
    tau = 0.005
    for step in range(40):
        weights = []
        targets = target.weights
        for i, weight in enumerate(actor.weights):
            weights.append(weight * tau + targets[i] * (1 - tau))  # soft update
        target.set_weights(weights)
"""


def test_a_soft_target_update_is_a_per_weight_loop_not_a_model_called_per_item(tf, tmp_path):
    """p10 (round 2, DDPG): arithmetic on a model's weights in a loop over them runs inside
    Keras's variable operators; it was named "model called per item" with act = tf.function
    (model) as its fix."""
    path, rep = run_planted(tmp_path, SOFT_UPDATE)
    line = line_of(path, "soft update")
    (cause,) = causes_at(rep, line)
    assert cause.kind == "weight-loop" and cause.fix == remedies.WEIGHT_LOOP.hint
    assert "per-weight Python loop" in cause.title and "tf.function(model)" not in cause.fix
