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
minibatch (`for state, action, reward, next_state, done in random.sample(memory, 32)`,
`state, action, ... = minibatch[i]` for `i` over the batch, `minibatch[i][0]`, a list a
`.sample(n)` method returns, a parameter named `minibatch`), or one example made into a batch
of one (`x[i:i + 1]`, `np.expand_dims(x, 0)`, `x.reshape(1, -1)`).

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
F027): 8 findings on 224 mirror repositories, all DQN replay loops, 8 true. Not reported: a
loop over batches (a dataset, a list of batches), a loop over epochs given the whole array,
training on a value that is not one example of the loop's data (online learning from a
stream, where each example only exists once it is seen), and objects of other libraries
(`clf.fit` of scikit-learn).
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
            from sklearn.linear_model import SGDRegressor
            clf = SGDRegressor()
            for s, a, r, s2, d in random.sample(memory, 32):
                clf.partial_fit(s, [r])
        """, spelling="name: another library's fit"),
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
        if one_example(ctx, x, loops[0]):
            yield self.finding(ctx, call)
