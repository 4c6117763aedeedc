"""Training steps that ``@tf.function`` on the whole step does not fix, named for what they
are: an episode loop that steps an environment (compile the model parts, keep the env in
Python) and one optimizer update per time step (update once per episode). Planted scripts:
read as code, and run on real TensorFlow (CPU)."""

import ast

import profile_scripts
from profile_scripts import causes_at, line_of, run_planted, write_script

from tfperf.lint.semantic import Context
from tfperf.profile import runner
from tfperf.profile.fixes import tf_function_on_step
from tfperf.profile.step_shape import read_shape
from tfperf.profile.training_step import find_steps

# An actor-critic episode: the env is stepped and the action sampled on the host inside the
# tape; the returns are normalised with NumPy on a list of Python floats (not a blocker).
ACTOR_CRITIC = """
    import numpy as np
    import tensorflow as tf

    class Env:  # a stand-in for gym's CartPole: Python state, a 4-tuple step
        def __init__(self):
            self.t = 0

        def reset(self):
            self.t = 0
            return np.zeros(4, np.float32)

        def step(self, action):
            self.t += 1
            return np.full(4, 0.1 * self.t, np.float32), 1.0, self.t >= 20, {}

    env = Env()
    model = tf.keras.Sequential([tf.keras.Input([4]), tf.keras.layers.Dense(16, "relu"),
                                 tf.keras.layers.Dense(2, "softmax")])
    optimizer = tf.keras.optimizers.Adam(0.01)
    for episode in range(4):
        state = env.reset()
        with tf.GradientTape() as tape:
            log_probs, rewards = [], []
            for t in range(100):
                probs = model(tf.expand_dims(tf.convert_to_tensor(state), 0))
                action = np.random.choice(2, p=np.squeeze(probs))  # host sampling
                log_probs.append(tf.math.log(probs[0, action]))
                state, reward, done, _ = env.step(action)
                rewards.append(reward)
                if done:
                    break
            returns = np.array(rewards[::-1])  # a list of floats
            loss = -sum(lp * float(r) for lp, r in zip(log_probs, returns))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
"""

UPDATE_PER_TIME_STEP = profile_scripts.UPDATE_PER_TIME_STEP.format(time_steps=12)


def _shape(source: str):
    import textwrap

    source = textwrap.dedent(source)
    tree = ast.parse(source)
    (step,) = find_steps(source, "<t>", tree)
    return source, step, read_shape(Context(tree, source, "<t>"), tree, step)


def test_the_environment_not_numpy_on_floats_is_what_keeps_an_episode_eager():
    source, step, shape = _shape(ACTOR_CRITIC)
    assert shape.env is not None and shape.env.text == "env.step()"
    assert shape.host_sample is not None and shape.host_sample.text == "np.random.choice()"
    assert shape.update_per_item is None
    patch = tf_function_on_step(source, "<t>", step)
    assert patch.source is None
    assert "env.step()" in patch.reason and "np.array" not in patch.reason


def test_an_update_per_time_step_is_found_in_the_method_the_step_calls():
    _, _, shape = _shape(UPDATE_PER_TIME_STEP)
    assert shape.update_per_item is not None and shape.update_function == "train_net"
    assert shape.env is None


def test_an_episode_loop_is_named_with_the_env_kept_in_python(tf, tmp_path):
    path, rep = run_planted(tmp_path, ACTOR_CRITIC)
    top = rep.causes[0]
    assert top.kind == "eager-training-step" and "environment" in top.title, top.title
    assert f"env.step() at line {line_of(path, 'env.step(action)')}" in top.fix
    assert "np.random.choice()" in top.fix and "tf.function(model)" in top.fix
    assert "np.array" not in top.fix and top.automatic is None


def test_one_update_per_time_step_is_named_with_one_update_per_episode(tf, tmp_path):
    _, rep = run_planted(tmp_path, UPDATE_PER_TIME_STEP)
    top = rep.causes[0]
    assert "one optimizer update per time step" in top.title, top.title
    assert "train_net()" in top.title
    assert "one apply_gradients per episode" in top.fix
    assert "act = tf.function(model)" not in top.fix and top.automatic is None


# An L-BFGS-style loss-and-gradient helper, eager, called from the optimiser's loop: its lines
# are one cause (one function to compile), not one "eager ops" cause per line.
EAGER_HELPER = """
    import tensorflow as tf

    w1 = tf.Variable(tf.ones([8, 8]) * 0.1)
    w2 = tf.Variable(tf.ones([8, 1]) * 0.1)
    x = tf.ones([16, 8])

    def loss_and_grad():
        with tf.GradientTape() as tape:
            h = tf.tanh(tf.matmul(x, w1) + 0.5) * 2.0 - tf.sigmoid(x)  # the forward pass
            loss = tf.reduce_mean(tf.square(tf.matmul(h, w2) - 1.0))
        grads = tape.gradient(loss, [w1, w2])  # a list of variables: not an update
        flat = tf.concat([tf.reshape(g, [-1]) for g in grads], 0)
        return loss, flat

    for it in range(60):
        loss, flat = loss_and_grad()
        w1.assign_sub(0.01 * tf.reshape(flat[:64], [8, 8]))
"""


def test_the_eager_lines_of_one_function_are_one_cause_naming_it(tf, tmp_path):
    path, rep = run_planted(tmp_path, EAGER_HELPER)
    lines = {line_of(path, "the forward pass"), line_of(path, "not an update")}
    holding = [c for c in rep.causes if {h.line for h in c.lines} & lines]
    assert len(holding) == 1, [(c.title, [h.line for h in c.lines]) for c in rep.causes]
    (cause,) = holding
    assert lines <= {h.line for h in cause.lines}
    assert "loss_and_grad()" in cause.title
    assert cause.fix.startswith(f"decorate loss_and_grad() (line {line_of(path, 'def loss_')})")
    assert abs(cause.seconds - sum(h.seconds for h in cause.lines)) < 1e-9


FIT = """
    import numpy as np
    import tensorflow as tf

    width, rows = {width}, {rows}
    model = tf.keras.Sequential([tf.keras.Input([width]), tf.keras.layers.Dense(width),
                                 tf.keras.layers.Dense(width), tf.keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    x = np.ones([rows * 12, width], np.float32)
    model.fit(x, np.ones([rows * 12, 1], np.float32), batch_size=rows, epochs=1, verbose=0)
"""


def test_a_compute_bound_fit_is_not_told_to_cut_kerass_python(tf, tmp_path):
    """Long compiled calls with little eager work around them: the time is the model's
    computation, so no steps_per_execution boilerplate; a fit of tiny steps keeps it."""
    from tfperf.profile import remedies

    big = runner.run_script(write_script(tmp_path, FIT.format(width=2048, rows=512),
                                         "big.py"), capture=False)
    small = runner.run_script(write_script(tmp_path, FIT.format(width=4, rows=2), "small.py"),
                              capture=False)
    for rep in (big, small):
        assert rep.error is None, rep.error
    (fit_big,) = [c for c in big.causes if c.kind == "keras-fit"]
    (fit_small,) = [c for c in small.causes if c.kind == "keras-fit"]
    assert fit_big.fix.startswith("compute-bound"), (fit_big.fix, fit_big.detail)
    assert "steps_per_execution" not in fit_big.fix
    assert fit_small.fix == remedies.KERAS_FIT.hint, fit_small.detail


# A GAN step updating its two networks in a loop over (optimizer, network) pairs: one step.
GAN_PAIRS = """
    import tensorflow as tf

    gen = tf.keras.Sequential([tf.keras.Input([4]), tf.keras.layers.Dense(4)])
    disc = tf.keras.Sequential([tf.keras.Input([4]), tf.keras.layers.Dense(1)])
    g_opt, d_opt = tf.keras.optimizers.Adam(), tf.keras.optimizers.Adam()
    for batch in range(10):
        with tf.GradientTape(persistent=True) as tape:
            fake = gen(tf.ones([2, 4]))
            g_loss = -tf.reduce_mean(disc(fake))
            d_loss = tf.reduce_mean(disc(fake))
        for opt, net, loss in ((g_opt, gen, g_loss), (d_opt, disc, d_loss)):
            grads = tape.gradient(loss, net.trainable_variables)
            opt.apply_gradients(zip(grads, net.trainable_variables))
"""


def test_a_loop_over_a_gans_two_networks_is_not_an_update_per_time_step():
    _, step, shape = _shape(GAN_PAIRS)
    assert step.kind == "inline" and shape.update_per_item is None and shape.env is None


# DQN as a tutorial writes it: one fit() of a replay batch per environment step, in a helper.
FIT_PER_BATCH = """
    import numpy as np
    import tensorflow as tf

    class Agent:
        def __init__(self):
            self.model = tf.keras.Sequential([tf.keras.Input([4]), tf.keras.layers.Dense(8),
                                              tf.keras.layers.Dense(2)])
            self.model.compile(loss="mse", optimizer="adam")

        def train(self, states, targets):
            self.model.fit(states, targets, epochs=1, verbose=0)  # one small batch a call

    agent = Agent()
    rng = np.random.default_rng(0)
    for step in range(15):
        agent.train(rng.random((8, 4), dtype=np.float32), rng.random((8, 2), dtype=np.float32))
"""


def test_fit_called_per_small_batch_is_its_set_up_not_compiled_compute(tf, tmp_path):
    path, rep = run_planted(tmp_path, FIT_PER_BATCH)
    line = line_of(path, "one small batch a call")
    (cause,) = causes_at(rep, line)
    assert cause.kind == "fit-per-call", (cause.title, cause.detail)
    assert "model.train_on_batch(x, y)" in cause.fix
    assert rep.causes[0] is cause


TRAIN_ON_BATCH = """
    import numpy as np
    import tensorflow as tf

    model = tf.keras.Sequential([tf.keras.Input([256]), tf.keras.layers.Dense(256),
                                 tf.keras.layers.Dense(1)])
    model.compile(loss="mse", optimizer="adam")
    x, y = np.ones([64, 256], np.float32), np.ones([64, 1], np.float32)
    for step in range(20):
        model.train_on_batch(x, y)  # Keras's compiled step, one batch a call
"""


def test_a_compiled_keras_batch_call_is_named_by_the_users_call(tf, tmp_path):
    path, rep = run_planted(tmp_path, TRAIN_ON_BATCH)
    line = line_of(path, "one batch a call")
    (cause,) = causes_at(rep, line)
    assert cause.kind == "compiled-step" and "(Keras train_on_batch)" in cause.title, cause.title
