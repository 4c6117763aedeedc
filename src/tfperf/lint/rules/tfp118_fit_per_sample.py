"""TFP118: ``model.fit``/``train_on_batch`` on one example per iteration of a loop."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Any

from tfperf.analysis.kinds import model_like, uses_keras
from tfperf.core.findings import Finding
from tfperf.lint.analysis.examples import one_example
from tfperf.lint.analysis.keras_models import is_keras_model
from tfperf.lint.analysis.loops import iterates_dataset
from tfperf.lint.analysis.receivers import receiver
from tfperf.lint.analysis.traced import traced
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context

# Keras's training entry points that take the examples first.
_TRAIN_METHODS = frozenset({"fit", "train_on_batch"})
_LOOPS = (ast.For, ast.AsyncFor, ast.While, ast.ListComp, ast.SetComp, ast.DictComp,
          ast.GeneratorExp)


def _examples(call: ast.Call) -> Any:
    """The training inputs a ``fit``/``train_on_batch`` call is given (first argument or
    ``x=``)."""
    if call.args:
        return call.args[0]
    return next((k.value for k in call.keywords if k.arg == "x"), None)


def _stateful_model(ctx: Context, owner: Any) -> bool:
    """A stateful recurrent model: a layer built with ``stateful=True`` in this module, or
    ``owner.reset_states()`` called here. Trained one sequence step per call by design (the
    state carries from one batch of one to the next), not a batch split up."""
    def compute() -> tuple[bool, frozenset[str]]:
        stateful, resets = False, set()
        for n in ast.walk(ctx.tree):
            if type(n) is not ast.Call:
                continue
            if any(k.arg == "stateful" and type(k.value) is ast.Constant and k.value.value
                   for k in n.keywords):
                stateful = True
            if type(n.func) is ast.Attribute and n.func.attr in ("reset_states", "reset_state"):
                resets.add(ast.dump(n.func.value))
        return stateful, frozenset(resets)
    stateful, resets = ctx.cached("tfp118_stateful", compute)
    return stateful or ast.dump(owner) in resets


class FitPerSample(Rule):
    code = "TFP118"
    name = "fit-per-sample"
    message = ("Keras model trained on one example per loop iteration (fit/train_on_batch "
               "per sample): each call pays the training set-up for one example")
    hint = ("stack the samples (np.vstack of the states, of the targets) and train once on "
            "the batch: model.fit(states, targets, batch_size=len(states), epochs=1, "
            "verbose=0) or model.train_on_batch(states, targets)")
    claims = ("S12",)
    # Stop 41: 8 findings on the mirror snapshots that spell `.fit(`/`train_on_batch(`
    # (224 repositories, 4,093 files), 8 true (judged by the rule's author: docs/lint.md)
    group = "perf"
    node_types = (ast.Call,)
    docs = """\
## What it does
Finds `model.fit(x, y, ...)` or `model.train_on_batch(x, y)` on a Keras model (by
construction, or an object named like one in a module that uses TensorFlow or Keras) inside
a loop, where `x` is one example of the loop's data: one transition of a sampled replay
minibatch, or one example made into a batch of one (`x[i:i + 1]`, `np.expand_dims(x, 0)`,
`x.reshape(1, -1)`). A sampled replay minibatch is a list drawn by `random.sample`,
`random.choices` or a `.sample(n)` method (that name exactly) and walked item by item
(`for state, action, reward, next_state, done in minibatch`, `... = minibatch[i]`,
`minibatch[i][0]`), with a sign that its items are transitions: this module appends tuples
of four or more fields to the store it is drawn from (`self.memory.append((s, a, r, s2,
done))`), or an item unpacks into four or more names, one a reward, next state or end flag
(`r`, `reward`, `next_state`, `s2`, `done`, `terminal`). A parameter or free name called
`minibatch`/`mini_batch`/`transitions`/`experiences` counts as such a list; one called
`memory`/`replay` needs the same sign.

## Why is this bad?
Each `fit` call builds a data adapter, callbacks and a progress bar and runs one training
step; `train_on_batch` skips the adapter but still runs one optimizer step per call. On one
example the set-up dominates: 32 single-sample `fit` calls cost tens of times one `fit` on the
32 samples stacked (`benchmarks/lint_fixes/rule_claims.py --cases TFP118`, TF 2.21 CPU, a
4-24-24-2 dense Q network: `fit` 35x, `train_on_batch` 38x, a whole DQN replay step of two
predicts and a fit per sample 52x). The gain shrinks where the model's own work per example
is large next to the per-call set-up (an Atari-size convnet: see the benchmark's last lines).

## Example
```python
for state, action, reward, next_state, done in random.sample(memory, 32):
    target = model.predict(state)
    target[0][action] = reward
    model.fit(state, target, epochs=1, verbose=0)
```

## Use instead
```python
batch = random.sample(memory, 32)
states = np.vstack([b[0] for b in batch])
targets = model.predict(states)
# ... fill targets per sample ...
model.fit(states, targets, batch_size=len(batch), epochs=1, verbose=0)
```

## Fix safety
No automatic fix. One step on the averaged gradient of the batch is not the same training as
one step per sample in turn: it is minibatch training as DQN describes it, with fewer,
larger steps (the learning rate may need tuning).

## Known limitations
Judged on real code once (stop 41, by the rule's author, after writing it against round 11's
F027): 8 findings on 224 mirror repositories, all DQN replay loops, 8 true; review 41
narrowed what counts as a replay minibatch (docs/lint.md). Not reported: a loop over batches
(a dataset, a batch generator, a list of batches or of per-task datasets, however named), a
loop over epochs given the whole array, items of a sampled list that show no transition
(`random.sample(tasks, 2)` of `(x, y, name)`, episodes of `(states, actions, returns)`), a
stateful recurrent model (`stateful=True` or `model.reset_states()` in the module: one step
per call is its design), training on a value that is not one example of the loop's data
(online learning from a stream, where each example only exists once it is seen), and
objects of other libraries (a `model` assigned from `SGDRegressor()` or `XGBRegressor()`;
in a module with no TensorFlow or Keras, any `model`). Missed: a replay loop whose store is
filled in another module and whose items are read by index only (`minibatch[i][0]`), and a
`model` attribute assigned from another library's constructor (`self.model = SVR()`) in a
module that uses TensorFlow.
"""
    valid = (
        Valid("""
            import random
            import numpy as np
            import tensorflow as tf
            def replay(model, memory, n):
                batch = random.sample(memory, n)
                states = np.vstack([b[0] for b in batch])
                targets = model.predict(states)
                model.fit(states, targets, batch_size=n, epochs=1, verbose=0)
        """, spelling="loop: one fit on the stacked batch"),
        Valid("""
            import tensorflow as tf
            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            model.compile("adam", "mse")
            for epoch in range(10):
                model.fit(x_train, y_train, epochs=1, verbose=0)
        """, spelling="index: the whole array per epoch"),
        Valid("""
            import random
            import tensorflow as tf
            class Agent:
                def replay(self, batches):
                    for states, targets in batches:
                        self.model.train_on_batch(states, targets)
        """, spelling="name: a batch per iteration"),
        Valid("""
            import random
            import tensorflow as tf
            from sklearn.linear_model import SGDRegressor
            model = SGDRegressor()
            for s, a, r, s2, d in random.sample(memory, 32):
                model.fit(s, [r])
        """, spelling="name: another library's fit"),
        Valid("""
            import tensorflow as tf
            model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
            def make_batches(x, y, n):
                for i in range(0, len(x), n):
                    yield x[i:i + n], y[i:i + n]
            batches = make_batches(X, Y, 128)
            for batch in batches:
                model.train_on_batch(batch[0], batch[1])
        """, spelling="name: a batch from a generator, read by field"),
        Valid("""
            import tensorflow as tf
            model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
            chunks = [(X[i:i + 64], Y[i:i + 64], W[i:i + 64]) for i in range(0, len(X), 64)]
            for i in range(len(chunks)):
                xb, yb, wb = chunks[i]
                model.train_on_batch(xb, yb, sample_weight=wb)
        """, spelling="index: a list of batches of three fields"),
        Valid("""
            import tensorflow as tf
            model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
            def train(batch_list):
                for batch_x, batch_y, batch_w in batch_list:
                    model.train_on_batch(batch_x, batch_y, sample_weight=batch_w)
        """, spelling="name: a parameter named batch, not a minibatch of transitions"),
        Valid("""
            import random
            import tensorflow as tf
            model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
            jobs = [(X1, Y1, "sin"), (X2, Y2, "cos"), (X3, Y3, "tan")]
            for step in range(100):
                for jx, jy, label in random.sample(jobs, 2):
                    model.fit(jx, jy, batch_size=32, epochs=1, verbose=0)
        """, spelling="loop: random.sample of whole datasets (meta-learning)"),
        Valid("""
            import random
            import numpy as np
            import tensorflow as tf
            policy = tf.keras.Sequential([tf.keras.layers.Dense(2)])
            class Learner:
                def __init__(self):
                    self.run_memory = []
                def learn(self):
                    for obs, acts, rets in random.sample(self.run_memory, 4):
                        policy.fit(np.array(obs), np.array(acts), verbose=0)
        """, spelling="loop: a memory of whole episodes"),
        Valid("""
            import tensorflow as tf
            model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
            def update(rollout):
                for epoch in range(4):
                    for o, a, g in rollout.sample_minibatches(64):
                        model.train_on_batch(o, g)
                    for chunk in rollout.sample_chunks(4):
                        model.train_on_batch(chunk[0], chunk[1])
        """, spelling="name: a method named like sample that yields minibatches"),
        Valid("""
            import tensorflow as tf
            model = tf.keras.Sequential([
                tf.keras.layers.LSTM(8, stateful=True, batch_input_shape=(1, 1, 4)),
                tf.keras.layers.Dense(2)])
            model.compile("adam", "mse")
            for epoch in range(20):
                for t in range(len(X)):
                    model.train_on_batch(X[t:t + 1], Y[t:t + 1])
                model.reset_states()
        """, spelling="index: a stateful RNN trained step by step"),
        Valid("""
            import numpy as np
            import tensorflow as tf
            from nets import build
            model = build()
            for k in range(10):
                model.fit(np.load("x.npy"), np.load("y.npy"), epochs=1, verbose=0)
        """, files={"nets.py": """
            import tensorflow as tf
            def build():
                m = tf.keras.Sequential([tf.keras.layers.Dense(2)])
                m.compile("adam", "mse")
                return m
        """}, spelling="module"),
        Valid("""
            import random
            import numpy as np
            import tensorflow as tf
            # %%
            batch = random.sample(memory, 32)
            model.fit(np.vstack([b[0] for b in batch]), np.vstack([b[1] for b in batch]),
                      epochs=1, verbose=0)
        """, notebook=True, spelling="notebook"),
    )
    invalid = (
        # The classic DQN replay: one fit per sampled transition (round 11's F027 shape).
        Invalid("""
            import random
            import numpy as np
            from keras.models import Sequential
            class DQNAgent:
                def replay(self, batch_size):
                    minibatch = random.sample(self.memory, batch_size)
                    for state, action, reward, next_state, done in minibatch:
                        target_f = self.model.predict(state)
                        target_f[0][action] = reward
                        self.model.fit(state, target_f, epochs=1, verbose=0)
        """, count=1, lines=(10,), spelling="loop: for over a sampled minibatch"),
        Invalid("""
            import random
            import tensorflow as tf
            def train(model, memory, n):
                mini_batch = random.sample(memory, n)
                for i in range(n):
                    state, action, reward, next_state, done = mini_batch[i]
                    model.train_on_batch(state, reward)
        """, count=1, lines=(7,), spelling="index: mini_batch[i] unpacked"),
        Invalid("""
            import tensorflow as tf
            class Agent:
                def learn(self, minibatch):
                    for sample in minibatch:
                        state = sample[0]
                        self.q_model.fit(x=state, y=sample[2], verbose=0)
        """, count=1, lines=(6,), spelling="name: a field of the sample through a name"),
        Invalid("""
            import numpy as np
            import tensorflow as tf
            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            model.compile("adam", "mse")
            for i in range(len(X)):
                model.fit(X[i:i + 1], Y[i:i + 1], epochs=1, verbose=0)
        """, count=1, lines=(6,), spelling="index: X[i:i + 1]"),
        Invalid("""
            import random
            import tensorflow as tf
            from nets import build
            model = build()
            for s, a, r, s2, d in random.sample(memory, 32):
                model.fit(s, r, epochs=1, verbose=0)
        """, files={"nets.py": """
            import tensorflow as tf
            def build():
                m = tf.keras.Sequential([tf.keras.layers.Dense(2)])
                m.compile("adam", "mse")
                return m
        """}, count=1, spelling="module"),
        Invalid("""
            import random
            import tensorflow as tf
            model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
            class Agent:
                def __init__(self):
                    self.store = []
                def remember(self, s, a, r, s2, d):
                    self.store.append((s, a, r, s2, d))
                def replay(self, n):
                    picked = random.sample(self.store, n)
                    for item in picked:
                        model.train_on_batch(item[0], item[2])
        """, count=1, lines=(12,), spelling="name: items of a store that appends transitions"),
        # A minibatch built by appending the memory's last items to an empty list: the
        # assignment (`[]`) says nothing of what it holds, so its name still counts.
        Invalid("""
            import tensorflow as tf
            model = tf.keras.Sequential([tf.keras.layers.Dense(3)])
            def recent_replay(memory, n):
                mini_batch = []
                for k in range(len(memory) - n, len(memory)):
                    mini_batch.append(memory[k])
                for obs, act, gain, obs2, over in mini_batch:
                    model.fit(obs, gain, epochs=1, verbose=0)
        """, count=1, lines=(8,), spelling="index: a minibatch list filled by append"),
        Invalid("""
            import random
            import tensorflow as tf
            # %%
            for s, a, r, s2, d in random.sample(memory, 32):
                model.fit(s, r, epochs=1, verbose=0)
        """, count=1, notebook=True, spelling="notebook"),
    )

    def applies_to(self, ctx: Context) -> bool:
        return bool(ctx.nodes_of(*_LOOPS)) and (ctx.imports_tf or uses_keras(ctx))

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Finding]:
        call: Any = node
        func = call.func
        if type(func) is not ast.Attribute or func.attr not in _TRAIN_METHODS:
            return
        x = _examples(call)
        if x is None or not model_like(ctx, func.value) \
                or receiver(ctx, func.value, func.attr) == "own":
            return
        if not is_keras_model(ctx, func.value) and not uses_keras(ctx, tensorflow=True):
            return  # named like a model in a module with no Keras: another library's fit
        loops = ctx.enclosing_loops(call)
        if not loops or traced(ctx, call) or iterates_dataset(ctx, loops[0]):
            return
        if one_example(ctx, x, loops[0]) and not _stateful_model(ctx, func.value):
            yield self.finding(ctx, call)
