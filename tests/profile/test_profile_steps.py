"""The training step read from a script's code, its loop marked, and the automatic fix
(``@tf.function`` on the step) written into a copy: no TensorFlow needed."""

import ast
import textwrap

import pytest

from tfperf.profile import fixes
from tfperf.profile.script_exec import (
    StepClock,
    StepsDone,
    compile_marked,
    exec_as_main,
    main_module,
)
from tfperf.profile.training_step import find_steps

INLINE = """\
import tensorflow as tf
model, optimizer, dataset = make()
total = 0.0
for epoch in range(3):
    for step, x in enumerate(dataset):
        x = tf.reshape(x, [-1, 4])
        with tf.GradientTape() as tape:
            out = model(x)
            loss = tf.reduce_mean(out)
        gradients = tape.gradient(loss, model.trainable_variables)
        total = total + loss
        for g in gradients:
            tf.clip_by_norm(g, 15)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))
        if step % 10 == 0:
            print(float(loss))
"""

FUNCTION = """\
import tensorflow as tf

def train_step(model, opt, x):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(model(x))
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))
    return loss

def fit(model, opt, ds):
    for epoch in range(2):
        for x in ds:
            loss = train_step(model, opt, x)
"""


def test_an_inline_step_is_found_in_its_batch_loop_not_the_epoch_loop():
    (step,) = find_steps(INLINE, "train.py")
    assert (step.kind, step.loop_line, step.first_line, step.last_line) == ("inline", 5, 7, 14)
    assert step.tape_line == 7 and step.loss == "loss" and not step.compiled


def test_a_step_function_is_found_at_the_loop_that_calls_it():
    (step,) = find_steps(FUNCTION, "train.py")
    assert (step.kind, step.function, step.loop_line, step.call_line) == \
        ("function", "train_step", 12, 13)
    assert step.loss == "loss" and not step.compiled
    compiled = FUNCTION.replace("def train_step", "@tf.function\ndef train_step")
    (step,) = find_steps(compiled, "train.py")
    assert step.compiled and step.first_line == 3


def test_the_users_own_step_markers_win():
    source = INLINE.replace(
        "        x = tf.reshape",
        "        with tf.profiler.experimental.Trace('train', step_num=step, _r=1):\n"
        "            pass\n        x = tf.reshape")
    (step,) = find_steps(source, "train.py")
    assert step.kind == "inline" and step.user_marked and step.loop_line == 5
    plain = "import tensorflow as tf\nfor i in range(3):\n" \
            "    with tf.profiler.experimental.Trace('s', step_num=i, _r=1):\n        work()\n"
    (step,) = find_steps(plain, "x.py")
    assert step.kind == "marked" and step.loop_line == 2


@pytest.mark.parametrize("source", [
    # Keras runs and compiles its own train_step
    """\
import tensorflow as tf
class M(tf.keras.Model):
    def train_step(self, data):
        with tf.GradientTape() as tape:
            loss = self.compiled_loss(data[1], self(data[0]))
        self.optimizer.apply_gradients(zip(tape.gradient(loss, self.trainable_variables),
                                           self.trainable_variables))
        return {}
""",
    # a tape that does not train (a saliency map) in a loop
    """\
import tensorflow as tf
for img in images:
    with tf.GradientTape() as tape:
        tape.watch(img)
        score = model(img)
    maps.append(tape.gradient(score, img))
""",
])
def test_no_step_where_nothing_trains_per_iteration(source):
    assert find_steps(source, "x.py") == []


def test_a_step_function_nested_in_a_method_is_a_step_not_kerass_train_step():
    source = textwrap.dedent("""\
        import tensorflow as tf
        class Trainer:
            def train(self, dataset):
                @tf.function
                def train_step(x):
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_mean(self.model(x))
                    grads = tape.gradient(loss, self.model.trainable_variables)
                    self.opt.apply_gradients(zip(grads, self.model.trainable_variables))
                    return loss
                for x in dataset:
                    loss = train_step(x)
    """)
    (step,) = find_steps(source, "trainer.py")
    assert (step.kind, step.function, step.compiled, step.loop_line) == \
        ("function", "train_step", True, 11)


def test_the_inline_step_moves_into_a_tf_function_defined_before_the_epoch_loop():
    (step,) = find_steps(INLINE, "train.py")
    patch = fixes.tf_function_on_step(INLINE, "train.py", step)
    assert patch.source is not None, patch.reason
    tree = ast.parse(patch.source)
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef))
    assert fn.name == "train_step" and ast.unparse(fn.decorator_list[0]) == "tf.function"
    # x changes per batch: a parameter; total is read and rebound by the step: in and out;
    # loss is read after the step (the print): returned
    assert [a.arg for a in fn.args.args] == ["total", "x"]
    assert ast.unparse(fn.body[-1]) == "return (loss, total)"
    # defined once, before `for epoch`, so that it is not re-created (and retraced) per epoch
    loop = next(n for n in tree.body if isinstance(n, ast.For))
    assert tree.body.index(fn) + 1 == tree.body.index(loop)
    assert "loss, total = train_step(total, x)" in patch.source
    assert "tf.clip_by_norm(g, 15)" in patch.source  # the discarded op is not touched
    assert patch.function == "train_step"


def test_a_step_function_gets_the_decorator():
    (step,) = find_steps(FUNCTION, "train.py")
    patch = fixes.tf_function_on_step(FUNCTION, "train.py", step)
    assert patch.source == FUNCTION.replace("def train_step", "@tf.function\ndef train_step")
    assert "+@tf.function" in patch.diff(FUNCTION, "train.py")


@pytest.mark.parametrize(("change", "reason"), [
    (("loss = tf.reduce_mean(out)", "loss = tf.reduce_mean(out).numpy()"), ".numpy()"),
    (("out = model(x)", "out = model(x) * step"), "loop counter step"),
    (("out = model(x)", "out = model(x)\n            if epoch: break"), "break"),
])
def test_a_step_that_cannot_be_compiled_as_it_is_gets_no_patch(change, reason):
    source = INLINE.replace(*change)
    (step,) = find_steps(source, "train.py")
    patch = fixes.tf_function_on_step(source, "train.py", step)
    assert patch.source is None and reason in patch.reason


def test_the_marked_loop_keeps_every_line_number(tf, tmp_path):
    """A step's time is taken per iteration; an error after the loop is still reported at
    its own line; the loss name is read after each step; a limit stops the script."""
    source = textwrap.dedent("""\
        import tensorflow as tf
        v = tf.Variable(1.0)
        opt = tf.keras.optimizers.SGD(0.5)
        for i in range(5):
            with tf.GradientTape() as tape:
                loss = v * float(i)
            opt.apply_gradients(zip(tape.gradient(loss, [v]), [v]))
        raise ValueError('after the loop')
    """)
    path = tmp_path / "s.py"
    path.write_text(source)
    (step,) = find_steps(source, str(path))
    code = compile_marked(source, path, [step])
    clock = StepClock(loss=step.loss)
    with pytest.raises(ValueError) as info:
        exec_as_main(code, main_module(path, {"__tfperf_step__": clock}))
    assert info.traceback[-1].lineno + 1 == 8  # pytest's lineno is 0-based
    assert len(clock.durations) == 5
    # v: 1 → 1 → 0.5 → -0.5 → -2 (each step subtracts 0.5·i): loss = v·i before the update
    assert [float(x) for x in clock.losses] == [0.0, 1.0, 1.0, -1.5, -8.0]
    limited = StepClock(limit=2)
    with pytest.raises(StepsDone):
        exec_as_main(code, main_module(path, {"__tfperf_step__": limited}))
    assert len(limited.durations) == 2


AGENT = """\
import numpy as np
import tensorflow as tf


class Agent:
    def __init__(self):
        self.w = tf.Variable(tf.ones([3, 1]))
        self.opt = tf.keras.optimizers.SGD(0.01)
        self.clip = 0.2

    def learn(self, states, targets):
        batches = [np.arange(i, i + 4) for i in range(0, 12, 4)]
        for batch in batches:
            with tf.GradientTape() as tape:
                x = tf.convert_to_tensor(states[batch])
                loss = tf.reduce_mean((tf.matmul(x, self.w) - targets[batch]) ** 2)
                loss = loss * (1 + self.clip)
            grads = tape.gradient(loss, [self.w])
            self.opt.apply_gradients(zip(grads, [self.w]))
        return float(loss)


agent = Agent()
states = np.random.default_rng(0).normal(size=(12, 3)).astype(np.float32)
targets = np.ones((12, 1))  # float64, as NumPy makes it: eager code mixes it with float32
losses = [agent.learn(states, targets) for _ in range(3)]
"""


def test_a_step_in_a_method_indexing_numpy_by_the_loop_is_compiled_once_at_module_level(
        tf, tmp_path):
    """p03 (round 2, PPO): the step indexed NumPy arrays by the loop variable (a TypeError
    once traced) and was defined inside learn(), re-created and retraced per call."""
    (step,) = find_steps(AGENT, "agent.py")
    patch = fixes.tf_function_on_step(AGENT, "agent.py", step)
    assert patch.source is not None, patch.reason
    tree = ast.parse(patch.source)
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "train_step")
    assert tree.body.index(fn) < next(i for i, n in enumerate(tree.body)
                                      if isinstance(n, ast.ClassDef))
    assert [a.arg for a in fn.args.args] == ["self", "states_batch", "targets_batch"]
    assert "[batch]" not in ast.unparse(fn)
    assert "train_step(self, tfperf_host_input(states[batch]), " \
           "tfperf_host_input(targets[batch]))" in patch.source
    eager: dict = {}
    exec(compile(AGENT, "agent.py", "exec"), eager)
    compiled: dict = {}
    exec(compile(patch.source, "agent.py", "exec"), compiled)
    assert compiled["train_step"].experimental_get_tracing_count() <= 2  # not once per learn()
    np = eager["np"]
    np.testing.assert_allclose(compiled["losses"], eager["losses"], rtol=1e-5)
