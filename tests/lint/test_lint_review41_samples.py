"""Stop 41 review: what counts as one transition of a sampled replay minibatch
(analysis/examples.py ``one_sample``/``_sampled``), the shapes issue 25 judged false and the
DQN replay loops that must stay found."""

from __future__ import annotations

import ast
import textwrap

import pytest

from tfperf.lint.analysis.examples import _sampled, one_sample
from tfperf.lint.semantic import Context


def _fit_arg(src: str) -> tuple[Context, ast.expr, ast.AST]:
    """The first argument of the (last) ``model.fit``/``train_on_batch`` call and its
    innermost loop."""
    src = textwrap.dedent(src)
    tree = ast.parse(src)
    ctx = Context(tree, src)
    call = [n for n in ast.walk(tree) if type(n) is ast.Call
            and type(n.func) is ast.Attribute
            and n.func.attr in ("fit", "train_on_batch", "predict")][-1]
    loops = ctx.enclosing_loops(call)
    assert loops, "the probe's call is in a loop"
    return ctx, call.args[0], loops[0]


DQN_KEON = """
    import random
    class Agent:
        def remember(self, state, action, reward, next_state, done):
            self.memory.append((state, action, reward, next_state, done))
        def replay(self, n):
            minibatch = random.sample(self.memory, n)
            for state, action, reward, next_state, done in minibatch:
                self.model.fit(state, reward)
"""


@pytest.mark.parametrize("src", [
    DQN_KEON,
    # fields that name a transition, store unknown
    """
    import random
    for s, a, r, s2, done in random.sample(memory, 32):
        model.fit(s, r)
    """,
    # index form, store appended here, read by field
    """
    import random
    D.append((s_t, a_t, r_t, s_t1, terminal))
    minibatch = random.sample(D, 32)
    for i in range(len(minibatch)):
        model.fit(minibatch[i][0], minibatch[i][1])
    """,
    # unpacked by index into a transition's names
    """
    import random
    def train(model, memory, n):
        mini_batch = random.sample(memory, n)
        for i in range(n):
            state, action, reward, next_state, done = mini_batch[i]
            model.train_on_batch(state, reward)
    """,
    # a parameter named minibatch: no assignment known, the name says it
    """
    def learn(model, minibatch):
        for sample in minibatch:
            state = sample[0]
            model.fit(state, sample[2])
    """,
    # a minibatch list filled by append: `[]` says nothing, the name counts
    """
    def replay(model, memory, n):
        mini_batch = []
        for k in range(len(memory) - n, len(memory)):
            mini_batch.append(memory[k])
        for s, a, r, s2, done in mini_batch:
            model.fit(s, r)
    """,
    # a replay memory's own sample(n), of a store that appends transitions
    """
    class Agent:
        def remember(self, *t):
            self.buffer.append((t[0], t[1], t[2], t[3]))
        def replay(self):
            for item in self.buffer.sample(32):
                self.model.fit(item[0], item[1])
    """,
])
def test_replay_transitions_are_one_sample(src: str) -> None:
    ctx, arg, loop = _fit_arg(src)
    assert one_sample(ctx, arg, loop)


@pytest.mark.parametrize("src", [
    # a batch generator's batch, read by field (the right way)
    """
    def batch_generator(x, y, n):
        for i in range(0, len(x), n):
            yield x[i:i + n], y[i:i + n]
    train_batch_gen = batch_generator(X, Y, 128)
    for batch in train_batch_gen:
        model.train_on_batch(batch[0], batch[1])
    """,
    # a list of batches, unpacked into three fields by index
    """
    batch_data = [(X[i:i + 64], Y[i:i + 64], W[i:i + 64]) for i in range(0, len(X), 64)]
    for i in range(len(batch_data)):
        xb, yb, wb = batch_data[i]
        model.train_on_batch(xb, yb, sample_weight=wb)
    """,
    # names with batch/sample in them, no transition fields
    """
    def go(batch_list):
        for batch_x, batch_y, batch_w in batch_list:
            model.train_on_batch(batch_x, batch_y)
    """,
    """
    def go(sampled_batches):
        for x_sample, y_sample, meta in sampled_batches:
            model.train_on_batch(x_sample, y_sample)
    """,
    # per-task datasets in a list named samples
    """
    samples = [(X1, Y1, W1), (X2, Y2, W2)]
    for x, y, w in samples:
        model.fit(x, y, sample_weight=w)
    """,
    # a memory of whole episodes
    """
    class T:
        def train(self):
            for states, actions, returns in self.episode_memory:
                model.fit(states, returns)
    """,
    # Reptile: random.sample of tasks; REINFORCE: of episodes
    """
    import random
    tasks = [(X1, Y1, "sin"), (X2, Y2, "cos")]
    for task_x, task_y, task_name in random.sample(tasks, 2):
        model.fit(task_x, task_y)
    """,
    """
    import random
    for states, actions, returns in random.sample(episodes, 4):
        model.fit(states, actions)
    """,
    # PPO minibatches and chunks: a method whose name only contains "sample"
    """
    def update(buffer):
        for obs_b, act_b, adv_b in buffer.sample_minibatches(64):
            model.train_on_batch(obs_b, adv_b)
    """,
    """
    def update(buffer):
        for minibatch in buffer.sample_chunks(4):
            model.train_on_batch(minibatch[0], minibatch[1])
    """,
    # a test loader's batches
    """
    def evaluate(test_batch_loader):
        for images, labels, names in test_batch_loader:
            model.predict(images)
    """,
])
def test_batches_and_datasets_are_not_one_sample(src: str) -> None:
    ctx, arg, loop = _fit_arg(src)
    assert not one_sample(ctx, arg, loop)


def test_sampled_needs_transition_fields_where_the_store_is_unknown() -> None:
    src = textwrap.dedent("""
        import random
        a = random.sample(memory, 4)
        b = random.sample(self.memory, 4)
        c = buffer.upsample(4)
    """)
    tree = ast.parse(src)
    ctx = Context(tree, src)
    values = [n.value for n in tree.body if type(n) is ast.Assign]
    five = ast.parse("s, a, r, s2, done").body[0].value  # type: ignore[attr-defined]
    three = ast.parse("x, y, w").body[0].value  # type: ignore[attr-defined]
    assert _sampled(ctx, values[0], five) and not _sampled(ctx, values[0], three)
    assert not _sampled(ctx, values[0])
    assert _sampled(ctx, values[1], five) and not _sampled(ctx, values[1], three)
    assert not _sampled(ctx, values[2], five)  # upsample is not a replay draw
