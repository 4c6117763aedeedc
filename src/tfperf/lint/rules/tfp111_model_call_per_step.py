"""TFP111: a model called eagerly on one input per loop step, uncompiled."""

from __future__ import annotations

import ast
import builtins
import re
from typing import TYPE_CHECKING, Any

from tfperf.lint.analysis.examples import one_input
from tfperf.lint.analysis.keras_models import is_keras_model
from tfperf.lint.analysis.tf_functions import tf_function_called
from tfperf.lint.analysis.trips import FEW_MODEL_CALLS, few_runs
from tfperf.lint.rule import Invalid, Valid
from tfperf.lint.rules.tfp110_predict_per_step import PredictPerStep
from tfperf.lint.rules.tfp306_eager_training_step import eager_step_names, loop_runs_eager_step
from tfperf.lint.semantic import Context

if TYPE_CHECKING:
    from tfperf.analysis.project import Project
    from tfperf.analysis.summary import ModuleSummary

# What a network called like a function is usually named where its construction is out of
# sight: `self.model`, `self._network`, `actor`, `q_net`, `policy_net`. Stricter than
# TFP110's names: a bare `policy(...)` or `q(...)` is as often a Python function.
_NETWORK_NAME = re.compile(
    r"(?:^|_)(?:model|net|network|actor|critic|dqn|q_?net(?:work)?|policy_?net(?:work)?)s?"
    r"(?:_|$)|model$|net$", re.IGNORECASE)

# The keywords a model's input is passed by when no positional argument is given.
_INPUT_KEYWORDS = frozenset({"inputs", "x"})
# Binding kinds of a name that is not a network: a function, a class, an import.
_NOT_A_NETWORK = frozenset({"def", "class", "import"})
_BUILTINS = frozenset(dir(builtins))
_LIBRARIES = frozenset({"tensorflow", "keras", "tf_keras"})


def network(ctx: Context, func: Any) -> bool:
    """``func`` (what is called) is a Keras model by construction, or a network by its name
    (``self._network``, ``actor``) that is not a function, class or import of this module,
    nor a ``tf.function``."""
    from tfperf.analysis.kinds import MODEL, kind_of

    assigned = False
    if type(func) is ast.Name:
        b = ctx.binding(func)
        if b is not None and b.kind in _NOT_A_NETWORK:
            return False
        assigned = b is not None and b.kind == "assign"
    elif type(func) is not ast.Attribute:
        return False
    else:
        q = ctx.qualname(func)
        if q and q.split(".", 1)[0] in _LIBRARIES:
            return False  # `tf.keras.Model(inputs, outputs)` builds a model, runs none
    if tf_function_called(ctx, func) is not None:
        return False  # compiled already
    if is_keras_model(ctx, func) or kind_of(ctx, func) == MODEL:
        return True
    if assigned:
        return False  # `model = deepq.learn(...)`: made here, and not as a Keras model
    name = func.attr if type(func) is ast.Attribute else func.id
    return bool(_NETWORK_NAME.search(name))


def _may_be_network(ctx: Context, name: ast.Name) -> bool:
    """A cheap superset of :func:`network` for a bare name: a parameter named like a
    network or annotated, or a name assigned here (a model made by a call)."""
    b = ctx.binding(name)
    if b is None:
        return False
    if b.kind == "param":
        return getattr(b.value, "annotation", None) is not None \
            or bool(_NETWORK_NAME.search(name.id)) or is_keras_model(ctx, name)
    return b.kind == "assign"


def _model_attributes(ctx: Context) -> frozenset[str]:
    """Attributes that a method of a class here assigns a Keras model made on the spot
    (``self.q = keras.Sequential([...])``) and that :data:`_NETWORK_NAME` leaves out: the
    construction says what the name does not (:func:`network` then asks every assignment)."""
    def compute() -> frozenset[str]:
        out: set[str] = set()
        for n in ctx.nodes_of(ast.Assign):
            if type(n.value) is not ast.Call:
                continue
            for tg in n.targets:
                if type(tg) is ast.Attribute and type(tg.value) is ast.Name \
                        and tg.value.id == "self" and not _NETWORK_NAME.search(tg.attr) \
                        and is_keras_model(ctx, n.value):
                    out.add(tg.attr)
        return frozenset(out)
    return ctx.cached("tfp111.model_attributes", compute)


def _compiled_call_here(ctx: Context) -> bool:
    """A class of this module compiles its own ``call``/``__call__`` (``@tf.function def
    call``): its instances run a graph when called, and this module may call them."""
    for fn in ctx.nodes_of(ast.FunctionDef):
        if fn.name in ("call", "__call__") and fn.decorator_list \
                and ctx.tf_function_decorator(fn) is not None:
            return True
    return False


def _few_or_traced_loop(ctx: Context, call: ast.Call) -> bool:
    """The loops around ``call`` run it a few times, as the code says (``range(9)``, a
    literal list, a name bound to one: a trace would not pay), or the innermost walks
    ``tf.range`` (written to be traced by a ``tf.function`` caller)."""
    loops = ctx.enclosing_loops(call)
    if not loops:
        return False
    if few_runs(ctx, call, FEW_MODEL_CALLS):
        return True
    it = getattr(loops[0], "iter", None)
    return type(it) is ast.Call and ctx.call_qualname(it) == "tensorflow.range"


_AGENT_LOOP = """
            for e in range(100):
                state = env.reset()
                for t in range(500):
                    action = np.argmax(model(state[None]))
                    state, reward, done, _ = env.step(action)
"""


class ModelCallPerStep(PredictPerStep):
    code = "TFP111"
    per_env_step = False  # an eager call per step on a few observations: TFP306/TFP310 territory
    # The fix is a tf.function: its trace pays back only after tens of calls (issue 25's
    # precision round 4: 9 URLs, a 20-step loop).
    few_calls = FEW_MODEL_CALLS
    name = "model-call-per-step"
    message = ("model called eagerly on one input per loop step: every layer's ops are "
               "dispatched from Python at each step")
    hint = ("build a tf.function around the model once, outside the loop (policy = "
            "tf.function(model), or decorate the function that calls it), and call that")
    claims = ("S13",)
    # judged by its author on the development and held-out sets: 17 true / 6 minor / 0
    # false (RL steps, autoregressive generation; minor: rendered episodes, a few images)
    group = "perf"
    node_types = ()
    own_message = ("model called eagerly on a batch of one made from the function's "
                   "argument: each call dispatches every layer's ops from Python (the "
                   "function is called from outside this code, once per input)")
    docs = """\
## What it does
Finds a model called directly, `model(x)` or `self.network(x)`, eagerly once per iteration
of a Python loop on one input: one example made into a batch of one (`s[None]`,
`np.reshape(s, [1, n])`, `tf.expand_dims(s, 0)`) or one observation of an environment. As
for TFP110 (its `predict` twin), the loop may be anywhere in the project that calls the
function through a chain of calls (an agent's `act(state)` called per environment step from
a training script), and the one input may be made by the caller and passed in. The model
is a Keras model by construction (also `self.q` where a method of its class assigns
`self.q = keras.Sequential(...)`, and a parameter every caller in the module gives a Keras
model), or an attribute or name that reads like a network
(`self.model`, `self._network`, `actor`, `q_net`, one of `self._adv_networks[player]`) and
is not a function, class or import of the module; a model of several inputs is given them
as a tuple (`net((obs[None], mask))`), the first of which is the one input.

## Why is this bad?
Called eagerly, a Keras model runs each layer's ops one by one from Python, with their
dispatch overhead, on every call. On one input the network's arithmetic is tiny, so that
overhead is the step's cost: a `tf.function` built once around the model runs one graph
per call instead (claim S13). Measured on TF 2.21 here (`rule_claims.py --cases TFP110`,
batch of one, 2 busy cores, medians of 100 calls): a 2-layer dense network `model(x)` 1.05
ms, `tf.function(model)` 0.24 ms (4.4x); 12 layers 8.33 ms vs 0.29 ms (28.9x).

## Example
```python
state = env.reset()
while not done:
    q = model(state[None], training=False)
    state, reward, done, _ = env.step(int(np.argmax(q)))
```

## Use instead
```python
policy = tf.function(model)      # once, outside the loop
while not done:
    q = policy(state[None], training=False)
```

## Fix safety
No automatic fix: where the tf.function is kept decides how often it traces (it must be
built once, outside the loop), and Python arguments of the call (`training=`) become part
of its trace key. Where an argument is the call's own output fed back (`logits, past =
model(prev, past=past)`, a decoder's growing cache), a plain `tf.function(model)` traces on
every call and runs slower than eager: the hint then asks for `reduce_retracing=True` or an
`input_signature` with `None` sizes (`rule_claims.py --cases TFP111cache`, TF 2.21 CPU, 40
steps: eager 0.16 s, `tf.function(model)` 2.51 s with 40 traces, `reduce_retracing=True`
0.18 s with 2, an `input_signature` 0.12 s with 1).

## Known limitations
Judged by its author on the development and held-out sets (23 findings: 17 true, 6 minor,
0 false); no fresh precision round has judged it yet. Not reported on TensorFlow 1.x
or in a module that builds TF1 graphs (there `model(x)` adds ops to a graph), inside
traced code (a function only `tf.function`s call, a loop over `tf.range`), in loops the
code says run the call fewer than 16 times in all (a grid of nine augmented images; a
caller's loop over a literal list of nine URLs, through a name; `for i in range(10)` around
a function given one input; `tfperf.lint.analysis.trips`: a trace does not pay there), on
a batch per iteration (a loop over a dataset or over chunks: the overhead is shared by the
batch), on a name made here by a call that is not a Keras model, in a module that imports
neither TensorFlow nor Keras, on calls TFP105 reports (one example of the loop's own data per
iteration: batch them instead), in a module whose classes compile their own
`call`, and where the loop that runs the call per step also runs an eager training step of
the same module (a tape that trains, or a call of a function TFP306 reports, by its name:
`agent.train()`): the update costs far more than the call, and TFP306's advice is the fix
that matters (issue 25's precision round 3: 15 of 16 findings in one RL repository minor
for that reason). A model that runs its own Python loop per call (autoregressive decoding)
gains more than the figures above.
"""
    valid = (  # type: ignore[assignment]  # its own tuple, not TFP110's
        # Compiled once, outside the loop.
        Valid("""
            import numpy as np
            import tensorflow as tf
            def run(env, model, n):
                policy = tf.function(model)
                state, done = env.reset(), False
                while not done:
                    q = policy(np.reshape(state, [1, n]), training=False)
                    state, reward, done, _ = env.step(int(np.argmax(q)))
        """, spelling="loop: while"),
        # Each step also runs an eager training update (TFP306 reports it): the update
        # dominates, and compiling it is the fix that matters.
        Valid("""
            import numpy as np
            import tensorflow as tf
            class Agent:
                def __init__(self, n):
                    self.actor = tf.keras.Sequential([tf.keras.layers.Dense(2)])
                    self.opt = tf.keras.optimizers.Adam()
                def act(self, state):
                    return self.actor(state[None])
                def train(self, batch):
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_mean(self.actor(batch))
                    grads = tape.gradient(loss, self.actor.trainable_variables)
                    self.opt.apply_gradients(zip(grads, self.actor.trainable_variables))
            agent = Agent(4)
            state, done = env.reset(), False
            while not done:
                state, reward, done, _ = env.step(agent.act(state))
                agent.train(next(batches))
        """, spelling="loop: with a training step"),
        # A batch per iteration.
        Valid("""
            import tensorflow as tf
            def predict_all(model, batches):
                out = []
                for batch in batches:
                    out.append(model(batch, training=False))
                return out
        """, spelling="loop: for"),
        # Called once, outside any loop.
        Valid("""
            import numpy as np
            import tensorflow as tf
            def first_action(model, env, n):
                state = env.reset()
                return np.argmax(model(np.reshape(state, [1, n])))
        """, spelling="index: reshape"),
        # A model built from the library's class, not run.
        Valid("""
            import numpy as np
            import tensorflow as tf
            def build(inputs):
                return tf.keras.Model(inputs, tf.keras.layers.Dense(2)(inputs))
            for n in range(100):
                build(np.reshape(np.ones(4), [1, 4]))
        """, spelling="name: the library's Model class"),
        # A Python function named like a policy is not a network.
        Valid("""
            import numpy as np
            import tensorflow as tf
            def q_net(state):
                return np.ones(2)
            def run(env):
                state, done = env.reset(), False
                while not done:
                    state, _, done, _ = env.step(int(np.argmax(q_net(state[None]))))
        """, spelling="name: a function"),
        # The step that calls the model is a tf.function.
        Valid("""
            import numpy as np
            import tensorflow as tf
            class Agent:
                def __init__(self):
                    self.model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
                @tf.function
                def act(self, state):
                    return tf.argmax(self.model(state[None])[0])
                def run(self, env):
                    state, done = env.reset(), False
                    while not done:
                        state, _, done, _ = env.step(int(self.act(state)))
        """, spelling="name: a compiled method"),
        Valid("""
            from agent import Agent
            def play(env, agent, episodes):
                for _ in range(episodes):
                    state, done = env.reset(), False
                    while not done:
                        state, _, done, _ = env.step(agent.act(state))
        """, files={"agent.py": """
            import numpy as np
            import tensorflow as tf
            class Agent:
                def __init__(self, n):
                    self.model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
                    self.policy = tf.function(self.model)
                    self.n = n
                def act(self, state):
                    return int(np.argmax(self.policy(np.reshape(state, [1, self.n]))))
        """}, spelling="module"),
        Valid("""
            import numpy as np
            import tensorflow as tf
            model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
            policy = tf.function(model)
            # %%
            state = env.reset()
            for t in range(200):
                action = np.argmax(policy(state[None]))
                state, reward, done, _ = env.step(action)
        """, notebook=True, spelling="notebook"),
        # A grid of nine augmented images to show: a few calls, not a hot loop.
        Valid("""
            import tensorflow as tf
            augment = tf.keras.Sequential([tf.keras.layers.RandomFlip()])
            def show(image):
                for i in range(9):
                    shown = augment(tf.expand_dims(image, 0), training=True)
        """, spelling="loop: a few literal iterations"),
        # The episode runs inside a tf.function training step (the TF actor-critic
        # tutorial): traced, one graph.
        Valid("""
            import tensorflow as tf
            def run_episode(state, model, max_steps):
                for t in tf.range(max_steps):
                    state = tf.expand_dims(state, 0)
                    logits, value = model(state)
                return logits
            def run_all(state, model, n):
                out = []
                for i in range(n):
                    state = tf.expand_dims(state, 0)
                    out.append(run_model(state, model))
                return out
            @tf.function
            def run_model(state, model):
                return model(state)
            @tf.function
            def train_step(state, model):
                return run_episode(state, model, 500)
        """, spelling="loop: tf.range in a traced caller"),
        # Not TensorFlow: a Trax model, called alike.
        Valid("""
            import numpy as np
            import trax
            def generate(model, inp, n):
                for _ in range(n):
                    out = model(np.array(inp)[None, :])
                    inp.append(int(out[0, -1].argmax()))
        """, spelling="name: another framework"),
        # A name made here by a call that is no Keras model (TF1 baselines' act function).
        Valid("""
            import tensorflow as tf
            from baselines import deepq
            model = deepq.learn(env, network="conv_only", total_timesteps=0)
            while True:
                obs, done = env.reset(), False
                while not done:
                    obs, rew, done, _ = env.step(model(obs[None])[0])
        """, spelling="name: made by an unknown call"),
        # TF 1.x: model(x) adds ops to the graph; no tf.function to build.
        Valid("""
            import numpy as np
            import tensorflow as tf
            model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
        """ + _AGENT_LOOP, tf_version="1.15", spelling="loop: for"),
    )
    invalid = (  # type: ignore[assignment]
        Invalid("""
            import numpy as np
            import tensorflow as tf
            def run(env, model, n):
                state, done = env.reset(), False
                while not done:
                    q = model(np.reshape(state, [1, n]), training=False)
                    state, reward, done, _ = env.step(int(np.argmax(q)))
        """, count=1, lines=(6,), spelling="loop: while"),
        Invalid("""
            import numpy as np
            import tensorflow as tf
            model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
        """ + _AGENT_LOOP, count=1, lines=(8,), spelling="loop: for"),
        Invalid("""
            import numpy as np
            import tensorflow as tf
            def run(env, actor):
                obs = env.reset()
                for t in range(1000):
                    action = actor(tf.expand_dims(tf.convert_to_tensor(obs), 0))[0]
                    obs, reward, done, _ = env.step(action.numpy())
        """, count=1, lines=(6,), spelling="index: expand_dims"),
        # The batch of one through a name, the network an attribute of the agent.
        Invalid("""
            import numpy as np
            import tensorflow as tf
            class Agent:
                def __init__(self):
                    self._network = tf.keras.Sequential([tf.keras.layers.Dense(2)])
                def act(self, state):
                    batched = state[np.newaxis]
                    return int(np.argmax(self._network(batched)))
                def episode(self, env):
                    state, done = env.reset(), False
                    while not done:
                        state, _, done, _ = env.step(self.act(state))
        """, count=1, lines=(8,), spelling="name"),
        # One of several networks, given a tuple of inputs, per step of a game's traversal.
        Invalid("""
            import tensorflow as tf
            class Solver:
                def __init__(self, n):
                    self._adv_networks = [tf.keras.Sequential([tf.keras.layers.Dense(n)])
                                          for _ in range(2)]
                def _advantages(self, info_state, mask, player):
                    state = tf.constant(info_state, dtype=tf.float32)
                    return self._adv_networks[player]((tf.expand_dims(state, 0), mask))[0]
                def solve(self, states, mask):
                    for s in states:
                        self._advantages(s, mask, 0)
        """, count=1, lines=(8,), spelling="index: one of several networks"),
        # The agent in another module; the environment loop in this one.
        Invalid("""
            import gym
            from agent import Agent
            env = gym.make("CartPole-v1")
            agent = Agent(4)
            for episode in range(500):
                state, done = env.reset(), False
                while not done:
                    state, _, done, _ = env.step(agent.act(state))
        """, files={"agent.py": """
            import numpy as np
            import tensorflow as tf
            class Agent:
                def __init__(self, n):
                    self.model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
                    self.n = n
                def act(self, state):
                    return int(np.argmax(self.model(np.reshape(state, [1, self.n]))))
        """}, count=1, spelling="module"),
        # The batch of one made by the caller, in another module, passed as a parameter.
        Invalid("""
            import numpy as np
            from agent import act
            def play(env, model):
                state, done = env.reset(), False
                while not done:
                    state, _, done, _ = env.step(act(model, np.reshape(state, [1, 4])))
        """, files={"agent.py": """
            import numpy as np
            import tensorflow as tf
            def act(model, state):
                return int(np.argmax(model(state, training=False)))
        """}, count=1, spelling="module: a value through a parameter"),
        Invalid("""
            import numpy as np
            import tensorflow as tf
            model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
            # %%
            state = env.reset()
            for t in range(200):
                action = np.argmax(model(state[None]))
                state, reward, done, _ = env.step(action)
        """, count=1, notebook=True, spelling="notebook"),
    )

    @staticmethod
    def model_input(call: ast.Call) -> ast.expr:
        """The model's input: the first argument, or the first of a tuple or list of inputs
        (``net((obs[None], mask))``, a model of several inputs)."""
        first = call.args[0] if call.args else next(
            k.value for k in call.keywords if k.arg in _INPUT_KEYWORDS)
        if type(first) in (ast.Tuple, ast.List) and first.elts:
            return first.elts[0]
        return first

    # Stop 39, pass B: a model whose name does not say so, called through `self.q` assigned
    # a Keras model in the class, or through a parameter every caller gives a model.
    valid = (  # type: ignore[assignment]
        *valid,
        Valid("""
            import gym
            import numpy as np
            import tensorflow as tf
            class Critic:
                def __init__(self):
                    self.q = tf.function(tf.keras.Sequential([tf.keras.layers.Dense(1)]))
                def value(self, state):
                    return self.q(state)[0]
            env = gym.make("CartPole-v1")
            critic = Critic()
            for episode in range(500):
                state = np.reshape(env.reset(), [1, 4])
                done = False
                while not done:
                    v = critic.value(state)
                    state, reward, done, _ = env.step(0)
                    state = np.reshape(state, [1, 4])
        """, spelling="name: self.q compiled once"),
        Valid("""
            import numpy as np
            import tensorflow as tf
            model = tf.keras.models.load_model("m.h5")
            def call_all(m, rows):
                return m(rows)
            out = call_all(model, np.load("x.npy"))
        """, spelling="name: a model passed in once, all rows at once"),
    )
    invalid = (  # type: ignore[assignment]
        *invalid,
        Invalid("""
            import gym
            import numpy as np
            import tensorflow as tf
            class Critic:
                def __init__(self):
                    self.q = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                def value(self, state):
                    return self.q(state)[0]
            env = gym.make("CartPole-v1")
            critic = Critic()
            for episode in range(500):
                state = np.reshape(env.reset(), [1, 4])
                done = False
                while not done:
                    v = critic.value(state)
                    state, reward, done, _ = env.step(0)
                    state = np.reshape(state, [1, 4])
        """, count=1, lines=(8,), spelling="name: self.q assigned a Sequential"),
        Invalid("""
            import numpy as np
            import tensorflow as tf
            model = tf.keras.models.load_model("m.h5")
            def call_one(m, row):
                return m(row[None])
            out = [call_one(model, r) for r in np.load("x.npy")]
        """, count=1, lines=(5,), spelling="name: a model passed in as m"),
        Invalid("""
            import gym
            import numpy as np
            from critic import Critic
            env = gym.make("CartPole-v1")
            critic = Critic()
            for episode in range(500):
                state = np.reshape(env.reset(), [1, 4])
                done = False
                while not done:
                    v = critic.value(state)
                    state, reward, done, _ = env.step(0)
                    state = np.reshape(state, [1, 4])
        """, files={"critic.py": """
            import tensorflow as tf
            class Critic:
                def __init__(self):
                    self.q = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                def value(self, state):
                    return self.q(state)[0]
        """}, count=1, spelling="module: self.q in another module"),
        # Review 40: the transposed and cast batch of one (`one_input`, shared with TFP110).
        Invalid("""
            import numpy as np
            import tensorflow as tf
            segmenter = tf.keras.models.load_model("seg.keras")
            def masks(slices):
                out = []
                for sl in slices:
                    batch = tf.cast(np.transpose(sl[np.newaxis], (0, 2, 1)), tf.float16)
                    out.append(segmenter(batch, training=False))
                return out
        """, count=1, lines=(8,), spelling="index: tf.cast of a transposed batch of one"),
        # Stop 43 (recall round 13's F009): a model class decoding by calling itself, as
        # `self(x)` or `self.__call__(inputs=x)`, once per generated step.
        Invalid("""
            import tensorflow as tf
            class TTS(tf.keras.Model):
                def call(self, inputs, targets, training=False):
                    return inputs
                def predict_mel(self, inputs, max_len=1000):
                    enc = tf.expand_dims(inputs, 0)
                    out = tf.zeros([1, 1, 80])
                    for i in range(max_len):
                        y = self.__call__(inputs=enc, targets=out, training=False)
                        out = tf.concat([out, y[:, -1:, :]], axis=1)
                    return out
        """, count=1, lines=(9,), spelling="loop: self.__call__ per decoded step"),
        Invalid("""
            import tensorflow as tf
            class Decoder(tf.keras.Model):
                def call(self, x, state):
                    return x
                def generate(self, start, n=500):
                    x = start[None, :]
                    steps = []
                    while len(steps) < n:
                        x = self(x, None)
                        steps.append(x)
                    return steps
        """, count=1, lines=(9,), spelling="name: self(x) per decoded step"),
    )
    valid = (  # type: ignore[assignment]
        *valid,
        # Stop 43: the twins: a decoding step compiled once; a layer (not a model) calling
        # itself; a model's own forward pass over a few inputs.
        Valid("""
            import tensorflow as tf
            class TTS(tf.keras.Model):
                def __init__(self):
                    super().__init__()
                    self.forward = tf.function(self.__call__)
                def call(self, inputs, targets, training=False):
                    return inputs
                def predict_mel(self, inputs, max_len=1000):
                    enc = tf.expand_dims(inputs, 0)
                    out = tf.zeros([1, 1, 80])
                    for i in range(max_len):
                        y = self.forward(inputs=enc, targets=out, training=False)
                        out = tf.concat([out, y[:, -1:, :]], axis=1)
                    return out
        """, spelling="loop: self.__call__ compiled"),
        Valid("""
            import tensorflow as tf
            class Cell:
                def __call__(self, x, state):
                    return x
                def generate(self, start, n=500):
                    x = start[None, :]
                    steps = []
                    while len(steps) < n:
                        x = self(x, None)
                        steps.append(x)
                    return steps
        """, spelling="name: self of a plain class"),
        Valid("""
            import gym
            import numpy as np
            from critic import Critic
            env = gym.make("CartPole-v1")
            critic = Critic()
            for episode in range(500):
                state = np.reshape(env.reset(), [1, 4])
                done = False
                while not done:
                    v = critic.value(state)
                    state, reward, done, _ = env.step(0)
                    state = np.reshape(state, [1, 4])
        """, files={"critic.py": """
            import tensorflow as tf
            class Critic:
                def __init__(self):
                    self.q = tf.function(tf.keras.Sequential([tf.keras.layers.Dense(1)]))
                def value(self, state):
                    return self.q(state)[0]
        """}, spelling="module: self.q compiled in another module"),
    )

    # Stop 46, wave 2 (precision round 15, zaidalyafeai's notebooks): a notebook that
    # defines a function again in a later cell. The loop calls the definition visible at
    # its cell (no model); the later one, which calls the model, runs once.
    valid = (  # type: ignore[assignment]
        *valid,
        Valid("""
            import numpy as np
            import tensorflow as tf
            model = tf.keras.models.load_model("m.h5")
            # %%
            def show(img, label):
                print(label, img.shape)
            # %%
            for img, label in zip(images, labels):
                show(img, label)
            # %%
            def show(img, label):
                print(label, np.argmax(model(img[None])))
            # %%
            show(images[0], labels[0])
        """, notebook=True, spelling="notebook: the loop calls an earlier definition"),
        Valid("""
            import numpy as np
            import tensorflow as tf
            model = tf.keras.models.load_model("m.h5")
            def show(img, label):
                print(label, img.shape)
            for img, label in zip(images, labels):
                show(img, label)
            def show(img, label):
                print(label, np.argmax(model(img[None])))
            show(images[0], labels[0])
        """, spelling="module: the loop calls an earlier definition"),
    )
    invalid = (  # type: ignore[assignment]
        *invalid,
        Invalid("""
            import numpy as np
            import tensorflow as tf
            model = tf.keras.models.load_model("m.h5")
            # %%
            def show(img, label):
                print(label, img.shape)
            # %%
            def show(img, label):
                print(label, np.argmax(model(img[None])))
            # %%
            for img, label in zip(images, labels):
                show(img, label)
        """, count=1, notebook=True, spelling="notebook: the loop calls the later definition"),
    )

    def model_calls(self, ctx: Context) -> list[tuple[ast.Call, Any]]:
        """Direct calls of a network: ``model(x)``, ``self.actor(x)``, whose first argument
        may be one input (made into a batch of one, or a parameter the callers may give
        one: the project decides)."""
        if not ctx.imports_tf:
            return []  # a model of another framework (Trax, PyTorch) called alike
        by_attr, by_name = ctx.call_groups()
        out: list[tuple[ast.Call, Any]] = []
        candidates = [c for a, lst in by_attr.items() if _NETWORK_NAME.search(a) for c in lst]
        candidates += [c for n, lst in by_name.items() if n not in _BUILTINS for c in lst]
        # Stop 39, pass B: `self.q(x)` named like nothing, assigned a Keras model in the class
        candidates += [c for a in _model_attributes(ctx) for c in by_attr.get(a, ())
                       if type(c.func.value) is ast.Name and c.func.value.id == "self"]
        # Stop 43: `self.__call__(inputs=x, ...)` in a method of a model class (a decoder
        # calling itself per generated step), read as `self(x)`.
        candidates += [c for c in by_attr.get("__call__", ())
                       if type(c.func.value) is ast.Name and c.func.value.id == "self"]
        if "](" in ctx.source:  # a call of a subscript somewhere: `nets[i](x)`
            candidates += [c for c in ctx.nodes_of(ast.Call)  # type: ignore[misc]
                           if type(c.func) is ast.Subscript]
        for call in candidates:
            if not (call.args or any(k.arg in _INPUT_KEYWORDS for k in call.keywords)) \
                    or (call.args and type(call.args[0]) is ast.Starred):
                continue
            func: Any = call.func
            # `self._networks[player](x)`: one of several; `self.__call__(x)`: `self(x)`
            if type(func) is ast.Subscript or (
                    type(func) is ast.Attribute and func.attr == "__call__"):
                func = func.value
            if type(func) is ast.Name and not _may_be_network(ctx, func):
                continue  # cheap test first: most bare-name calls are functions, imports
            arg = self.model_input(call)
            if not (one_input(ctx, arg) or type(arg) is ast.Name):
                continue
            if not _few_or_traced_loop(ctx, call) and network(ctx, func):
                out.append((call, func))
        if out and _compiled_call_here(ctx):
            return []
        return sorted(out, key=lambda p: (p[0].lineno, p[0].col_offset))

    def publish(self, ctx: Context) -> list[dict] | None:
        """TFP110's facts, each marked where the loop that runs the call per step also runs
        an eager training step of this module (TFP306's): that step costs far more than the
        call (precision round 3: 15 of 16 findings minor), and compiling it is the fix that
        matters. ``quiet``: the call's own loop; ``quiet_pos``: the call of its function
        from such a loop."""
        from tfperf.analysis.summary import short_name
        facts = super().publish(ctx)
        if not facts or not (eager_step_names(ctx) or "GradientTape" in ctx.source):
            return facts
        from tfperf.analysis.summary import position

        calls = {tuple(position(ctx, c)): c for c, _ in self.model_calls(ctx)}
        for fact in facts:
            call = calls.get(tuple(fact["pos"]))
            loops = ctx.enclosing_loops(call) if call is not None else []
            if loops:
                fact["quiet"] = loop_runs_eager_step(ctx, loops[0])
            elif fact.get("fn"):
                short = short_name(fact["fn"])
                for site in ctx.nodes_of(ast.Call):
                    f: Any = site.func
                    name = f.attr if type(f) is ast.Attribute else getattr(f, "id", None)
                    outer = ctx.enclosing_loops(site) if name == short else []
                    if outer and loop_runs_eager_step(ctx, outer[0]):
                        fact["quiet_pos"] = position(ctx, site)
                        break
        return facts

    def keep_fact(self, project: Project, module: ModuleSummary, fact: dict) -> bool:
        """A call in a function that only traced code calls (an episode run inside a
        ``tf.function`` training step) runs in the graph: nothing is dispatched per step.
        A call whose loop also runs an eager training step is left to TFP306."""
        if fact.get("quiet"):
            return False
        fn = fact.get("fn")
        if fn and "quiet_pos" in fact:
            site = project.hot_call(module.path, fn)
            if site is not None and site.module is module and site.call.pos == fact["quiet_pos"]:
                return False
        if not fn:
            return True
        callers = project.calls_to(module.path, fn)
        return not callers or not all(site.call.traced for site in callers)
