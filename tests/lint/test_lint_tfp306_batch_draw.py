"""TFP306 on a step that draws its own batch (random.sample, a NumPy index draw, a replay
buffer's sample): compiled as it is, the draw would run once, while tracing, and every step
would train on that batch. The hint says to draw outside and pass the batch in, and no
@tf.function fix is offered (held-out precision round 2: 8 such RL agents)."""

import pytest

from tfperf.lint.engine import lint_source
from tfperf.lint.rules.tfp306_eager_training_step import EagerTrainingStep

STEP = """\
import random
import numpy as np
import tensorflow as tf
import tensorflow_probability as tfp

class Agent:
    def learn(self{params}):
        {draw}
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self.model(s) - r))
        grads = tape.gradient(loss, self.model.trainable_variables)
        self.opt.apply_gradients(zip(grads, self.model.trainable_variables))

    def run(self, n):
        for _ in range(n):
            self.learn({args})
"""

DRAWS = [
    ("s, r = zip(*random.sample(self.memory, 32))", "random.sample()"),
    ("s, r = zip(*random.choices(self.buffer, k=32))", "random.choices()"),
    ("i = np.random.randint(0, len(self.s), 32); s, r = self.s[i], self.r[i]",
     "np.random.randint()"),
    ("i = np.random.permutation(len(self.s))[:32]; s, r = self.s[i], self.r[i]",
     "np.random.permutation()"),
    ("s, r = self.memory.sample(32)", "self.memory.sample()"),
    ("s, r = self.replay_buffer.sample_batch(32)", "self.replay_buffer.sample_batch()"),
    ("s, r = self.sample_batch()", "self.sample_batch()"),
    ("s, r = self.rb.sample(32)", "self.rb.sample()"),
]
# Twins: the batch comes in as arguments, or what is sampled is a TF op (a distribution's
# sample, an actor's reparameterised action): the step compiles as it is.
NOT_DRAWS = [
    ("s, r = batch", ", batch", "batch"),
    ("s, r = self.s, tfp.distributions.Normal(0., 1.).sample(32)", "", ""),
    ("s, r = self.s, self.actor.sample_normal(self.s)", "", ""),
    ("s, r = self.s, tf.random.uniform([32])", "", ""),
]


def _finding(draw, params="", args=""):
    src = STEP.format(draw=draw, params=params, args=args)
    found = [f for f in lint_source(src, "agent.py", rules=[EagerTrainingStep()])
             if f.code == "TFP306"]
    assert len(found) == 1, src
    return found[0]


@pytest.mark.parametrize(("draw", "label"), DRAWS)
def test_a_step_that_draws_its_own_batch_says_draw_outside_and_offers_no_fix(draw, label):
    f = _finding(draw)
    assert f"draws its own batch: {label}" in f.message
    assert f.hint.startswith(f"draw the batch outside the step ({label}) and pass it in")
    assert "once, while tracing" in f.hint
    assert f.fix is None


@pytest.mark.parametrize(("draw", "params", "args"), NOT_DRAWS)
def test_a_step_given_its_batch_keeps_the_plain_hint(draw, params, args):
    f = _finding(draw, params, args)
    assert "draw" not in f.message and "draw the batch" not in f.hint
    assert f.fix is not None  # decorating it is the fix


def test_a_host_draw_and_other_host_work_are_both_named():
    f = _finding("s, r = self.memory.sample(32); r = r + np.random.normal(size=32)")
    assert f.hint.startswith("draw the batch outside the step (self.memory.sample())")
    assert "move np.random.normal() out too" in f.hint


def test_an_inline_step_after_a_draw_says_to_make_it_a_function_of_the_batch():
    src = """\
import tensorflow as tf
for _ in range(1000):
    s, r = memory.sample(64)
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(s) - r))
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))
"""
    [f] = [f for f in lint_source(src, "t.py", rules=[EagerTrainingStep()])]
    assert "draw the batch in the loop (memory.sample())" in f.hint
    plain = [f for f in lint_source(src.replace("memory.sample(64)", "next(it)"), "t.py",
                                    rules=[EagerTrainingStep()])]
    assert plain[0].hint == EagerTrainingStep.hint
