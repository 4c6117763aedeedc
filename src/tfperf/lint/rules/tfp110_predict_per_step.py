"""TFP110: ``model.predict`` on one input at a time, once per step of a loop."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from tfperf.analysis.kinds import MODEL, kind_of, model_like, uses_keras
from tfperf.core.findings import Finding
from tfperf.lint.analysis.examples import batch_of_one, one_example, one_input
from tfperf.lint.analysis.keras_models import is_keras_model
from tfperf.lint.analysis.loops import iterates_dataset
from tfperf.lint.analysis.pieces import array_slice, dataset_batch, peeks
from tfperf.lint.analysis.receivers import project_classes_defining, receiver
from tfperf.lint.analysis.sessions import graph_mode_module
from tfperf.lint.analysis.traced import eager_guarded, traced
from tfperf.lint.analysis.trips import FEW_MODEL_CALLS, few_runs_in_all
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.rules.tfp105_model_call_per_example import tfp105_reports
from tfperf.lint.semantic import Context

if TYPE_CHECKING:
    from tfperf.analysis.project import Project, Site
    from tfperf.analysis.summary import ModuleSummary

def _parameter(ctx: Context, arg: Any) -> str:
    """The name of the enclosing function's parameter ``arg`` is, else ""."""
    if type(arg) is not ast.Name:
        return ""
    b = ctx.binding(arg)
    return arg.id if b is not None and b.kind == "param" else ""


def _parameter_source(ctx: Context, arg: Any, depth: int = 0) -> str:
    """The enclosing function's parameter ``arg`` is made from, through names and calls
    that take it first (``np_state = self.flatten_observation(state)``,
    ``x = preprocess(obs)``, ``obs.reshape(1, -1)``), else "": one input per call if the
    callers pass one."""
    if depth > 3:
        return ""
    if type(arg) is ast.Name:
        b = ctx.binding(arg)
        if b is None:
            return ""
        if b.kind == "param":
            return arg.id
        if b.kind == "assign" and b.value is not arg and type(b.value) is not ast.Name:
            return _parameter_source(ctx, b.value, depth + 1)
        return ""
    if type(arg) is ast.Call:
        if arg.args:
            return _parameter_source(ctx, arg.args[0], depth + 1)
        f = arg.func
        if type(f) is ast.Attribute and ctx.call_qualname(arg) is None:
            return _parameter_source(ctx, f.value, depth + 1)  # `obs.flatten()`
    if type(arg) is ast.Subscript:
        return _parameter_source(ctx, arg.value, depth + 1)
    return ""


def _caller_passing_one(project: Project, path: str, fn: str, param: str,
                        few: int = 0) -> Site | None:
    """A call in an eager loop that passes one input (a batch of one, one observation) as
    the parameter ``param`` of the function ``fn`` of ``path``; ``few``: not in a loop that
    the code says runs fewer times than this."""
    fact = project.function(path, fn)
    if fact is None or param not in fact.params:
        return None
    index = fact.params.index(param)
    if fact.method and fact.params[:1] in (["self"], ["cls"]):
        index -= 1  # `agent.act(state)`: slot 0 is the parameter after `self`
    for site in project.calls_to(path, fn):
        c = site.call
        if c.loop and not c.traced and not c.guarded and not c.star \
                and (str(index) in c.ones or param in c.ones) \
                and (c.trips is None or c.trips >= few):
            return site
    return None


def _caller_passing_batch(project: Project, path: str, fn: str, param: str) -> Site | None:
    """A call in an eager loop over a ``tf.data`` dataset that passes the batch it takes
    (or a part of it) as the parameter ``param`` of the function ``fn`` of ``path``
    (``for x, y in self.val_ds: self.val_step(x, y)``)."""
    fact = project.function(path, fn)
    if fact is None or param not in fact.params:
        return None
    index = fact.params.index(param)
    if fact.method and fact.params[:1] in (["self"], ["cls"]):
        index -= 1
    for site in project.calls_to(path, fn):
        c = site.call
        if c.loop and not c.traced and not c.guarded and not c.star \
                and (str(index) in c.batches or param in c.batches) \
                and (c.trips is None or c.trips >= FEW_MODEL_CALLS):
            return site
    return None


def _project_method(project: Project, module: ModuleSummary, cls: list | None,
                    code: str) -> bool:
    """``cls`` (module spec, qualname: a published call's receiver class) is a class of
    another project module that defines ``predict`` and is no Keras model."""
    if not cls:
        return False
    target = project.module(module.path, cls[0])
    if target is None:
        return False
    return any(f.get("defines") == cls[1] and not f.get("keras")
               for f in target.facts.get(code, ()))


def _batch_of_its_parameter(ctx: Context, arg: Any, depth: int = 0) -> bool:
    """``arg`` is a parameter of the enclosing function made into a batch of one
    (``x = x.reshape((1,) + x.shape)``, ``x[None]``): the function predicts one input per
    call."""
    if depth > 4:
        return False
    example = batch_of_one(ctx, arg)
    if example is not None:
        while type(example) in (ast.Attribute, ast.Subscript):  # `obs.image[None]`
            example = example.value
        return bool(_parameter(ctx, example))
    if type(arg) is ast.Name:
        b = ctx.binding(arg)
        if b is not None and b.kind == "assign" and b.value is not arg:
            return _batch_of_its_parameter(ctx, b.value, depth + 1)
    return False


# No pin, and the module's own APIs are TF 1.x / multi-backend Keras (the held-out
# precision rounds' one false class: 2017-2019 standalone-Keras agents linted at the
# installed TF 2). The target is then TF 1.15 (lint/code_target.py): predict is the
# graph-mode call there. Each VALID has an INVALID twin: the same code pinned to TF 2, or
# with TF 2-only APIs beside the old spelling.
_AGENT_STEPS = """
            for e in range(100):
                state = np.reshape(env.reset(), [1, 4])
                for t in range(500):
                    action = np.argmax(model.predict(state)[0])
                    state, reward, done, _ = env.step(action)
"""  # the INVALID twins' loop; the VALIDs' reshapes the next state too
_AGENT_LOOP = _AGENT_STEPS + """\
                    state = np.reshape(state, [1, 4])
"""


def _imports_tf1(project: Project, module: ModuleSummary) -> bool:
    """``module`` (no pin targets it) imports a module of the project that targets TF 1.x
    (its own APIs say so: lint/code_target.py): one process runs one TensorFlow, so this
    module runs on TF 1.x too (an agent script importing its TF1 actor and critic)."""
    for spec, _ in module.imports.values():
        other = project.module(module.path, spec)
        if other is not None and other.tf and tuple(other.tf[:2]) < (2, 0):
            return True
    return False


def _keras_module(module: ModuleSummary, code: str) -> bool:
    """``module`` uses TensorFlow or Keras: its TFP110 facts say so (a marker, or a call
    fact published without ``notf``)."""
    return any(f.get("tfmod") or ("notf" not in f and "defines" not in f)
               for f in module.facts.get(code, ()))


def _program_uses_keras(project: Project, module: ModuleSummary, code: str) -> bool:
    """``module`` (no TensorFlow or Keras of its own) imports a module of the project that
    uses them (a detector built by a factory), or is imported by one (a helper given the
    script's Keras model): a model named so may be Keras's there."""
    for spec, _ in module.imports.values():
        other = project.module(module.path, spec)
        if other is not None and _keras_module(other, code):
            return True
    for other in project.modules.values():
        if other is module or not _keras_module(other, code):
            continue
        if any(project.module(other.path, spec) is module for spec, _ in other.imports.values()):
            return True
    return False


EXAMPLE_MESSAGE = ("model.predict on one example of the loop's own data per iteration: "
                   "predict them all in one call")
EXAMPLE_HINT = ("model.predict(x, batch_size=256) on the whole array (or a batched "
                "tf.data dataset), then loop over the predictions")
# Stop 46: a piece that is already a batch, handed to predict once per iteration (held-out
# rounds 14 F010, 16 F018, F019). rule_claims.py --cases TFP110c, TF 2.21 CPU, a small
# convnet, 640 images: predict per batch of 32 of a dataset 15.5x model(x) per batch and
# 64.7x one predict(dataset); 40 uneven slices of one array 35.2x one predict then slices.
PIECE_MESSAGES = {
    "batch": ("model.predict on each batch of a tf.data dataset in a Python loop: every call "
              "pays predict's set-up (a data adapter, its batching loop) for one batch"),
    "slice": ("model.predict on one slice of an array per loop iteration: every call pays "
              "predict's set-up for a piece of data that exists whole before the loop"),
}
PIECE_HINTS = {
    "batch": ("predict the dataset in one call (model.predict(ds)), or call the model per "
              "batch: model(x, training=False), or a tf.function around it"),
    "slice": ("predict the whole array once (model.predict(x, batch_size=...)) and slice "
              "the predictions per piece, or call the model per slice: "
              "model(x[a:b], training=False)"),
}
BATCH_FROM_CALLER = ("model.predict on each batch of a tf.data dataset, given per iteration "
                     "by a loop at {where}: every call pays predict's set-up for one batch")


# A model with a recurrent layer called eagerly steps its time loop op by op: model(x) is no
# faster than predict there (precision round 12, LSTM(128) on one 40-step input, TF 2.21
# CPU: predict 246 ms, model(x) 336 ms, tf.function(model) 7.7 ms per call).
RECURRENT_LAYERS = frozenset({"LSTM", "GRU", "SimpleRNN", "RNN", "ConvLSTM1D", "ConvLSTM2D",
                              "ConvLSTM3D", "CuDNNLSTM", "CuDNNGRU"})
RECURRENT_HINT = ("wrap the model in a tf.function once (step = tf.function(model), then "
                  "step(x, training=False) per step): its LSTM/GRU layers run their time loop "
                  "op by op when called eagerly, so a plain model(x) is no faster than predict "
                  "here; keep predict for many inputs at once")


# TFP111's hint where an argument is the call's own output fed back (a decoder's `past`
# cache): a shape that changes per step traces tf.function(model) on every call
# (rule_claims.py --cases TFP111cache, TF 2.21 CPU: 40 traces in 40 steps, 2.51 s, 15x the
# eager loop; reduce_retracing=True 2 traces 0.18 s; an input_signature 1 trace 0.12 s).
FED_BACK_HINT = ("build a tf.function around the model once, outside the loop, and call that; "
                 "`{arg}` comes back from the call's own output: if its shape changes per step "
                 "(a growing cache), a plain tf.function(model) traces on every call, so give it "
                 "reduce_retracing=True or an input_signature with None for the growing sizes")


def _fed_back(ctx: Context, call: ast.Call) -> str | None:
    """A name passed to ``call`` that the same statement rebinds from its result
    (``logits, past = model(prev, past=past)``): the next step's input is this output."""
    stmt = ctx.parent(call)
    if type(stmt) is not ast.Assign:
        return None
    bound = {n.id for t in stmt.targets for n in ast.walk(t) if type(n) is ast.Name}
    for a in [*call.args, *(k.value for k in call.keywords)]:
        if type(a) is ast.Name and a.id in bound:
            return a.id
    return None


def _builds_recurrent_layer(ctx: Context) -> bool:
    """The module builds a recurrent Keras layer (``LSTM(64)``, ``layers.GRU(8)``): the
    model it predicts with is recurrent, as far as one module shows."""
    if not any(name in ctx.source for name in ("LSTM", "GRU", "RNN")):
        return False
    for call in ctx.calls:
        f = call.func
        name = f.attr if type(f) is ast.Attribute else f.id if type(f) is ast.Name else ""
        if name in RECURRENT_LAYERS:
            return True
    return False


class PredictPerStep(Rule):
    code = "TFP110"
    name = "predict-per-step"
    # Said by what was measured (stop 42, TF 2.21 CPU, loaded 2-core machine, medians):
    # predict's fixed per-call set-up, tens of ms here, against 1.4 ms for a 4-24-2 dense
    # net's own call (54x). Not "more than the model itself": on InceptionV3, one image,
    # predict took 438 ms and eager model(x) 808 ms (held-out round 13's five-image loop).
    message = ("model.predict on one input per loop step: each call pays predict's fixed "
               "set-up (a data adapter and Keras's batching loop, milliseconds a call), far "
               "more than a small model's own forward pass")
    hint = ("call the model directly, model(x, training=False), or a tf.function around it "
            "(a recurrent model needs the tf.function: called eagerly, its LSTM/GRU layers step "
            "op by op); keep predict for many inputs at once")
    claims = ("S13",)
    group = "perf"  # judged: dev 8/3/0, held-out 25/11/0 (true/minor/false): docs/lint.md
    node_types = ()
    # A function that predicts on its parameter and runs once per environment step is
    # reported even where no caller shows the input is one (a step's few observations).
    per_env_step = True
    # Loops the code says run a call fewer times than this are not hot (0: every loop is).
    # predict's fix (a direct call) costs no trace, so any count pays here.
    few_calls = 0
    # One example of the loop's own data per call (`x[i:i + 1]` for `i` over `x`), where
    # TFP105 (preview) cannot tell the model is Keras's: reported on any TensorFlow.
    per_example = True
    docs = """\
## What it does
Finds `model.predict(x)` run once per iteration of an eager Python loop, where `x` is one
input: one example made into a batch of one (`np.reshape(s, [1, n])`, `s[None]`,
`np.expand_dims(s, 0)`) or one observation of an environment (`env.reset()`,
`env.step(a)`). The model is a Keras model by construction or by its name (`self.model`,
`q_net`), or a parameter that every caller in its module gives a Keras model
(`def predict_one(m, row)` called as `predict_one(model, r)`). The loop may be in the same
function or anywhere in the
project that calls the function (through any chain of calls): an agent's `act(state)` called
per environment step from a training script is found. The one input may also be made by the
caller and passed in: `act(self, state)` that predicts `state`, called per step with
`np.reshape(state, [1, n])` or an environment's observation (the classic DQN agent); one
image allocated as a batch of one and filled in place (`np.zeros((1, h, w, 3))`, then
`.transpose(0, ...)`/`.astype(...)`) is one input too, and so is a batch of one passed
through `np.transpose(x, (0, ...))`/`tf.transpose` keeping axis 0 first or a `tf.cast`
(an image per scale of a detector's pyramid). A function that predicts its
parameter and runs once per step of an environment loop (a loop whose body calls
`env.step(...)`), through any chain of callers, is reported whatever its callers pass: a
step's few observations or a replay batch, each call pays `predict`'s set-up. Chains follow
`self` attributes whose class is chosen at run time by method name (`self.deep_q
.predict_movement(x)` reaches the project's `predict_movement` methods, where the name is not
one library objects define) and star imports. The
model is a Keras model by construction, or an object named like one (`self.model`,
`q_network`, `actor`). Where the code says predict runs fewer than 16 times in all (a
`range(4)` plot loop at module level, a 14-step forecast in a helper the script calls once:
`analysis.trips.runs_in_all`, through this module's callers) the saving is paid once and
nothing is reported, unless another module calls into the file. A name's count is read from
the binding that reaches the loop: `steps = 1` then `for j in range(0, steps)` runs once even
where the cell rebinds `steps = 8` further down; a rebinding that may happen first (under an
`if`, later in an enclosing loop) leaves the count unknown, and the call is reported.

Also a piece that is already a batch, given to `predict` once per iteration: each batch of a
`tf.data` dataset the loop walks (`for x, y in val_ds: model.predict(x)`, a field of the
batch, `zip`/`enumerate`/`tqdm` around it, a dataset from the project's own factory named
so), also through a function the loop calls with the batch (`val_step(x, y)` predicting its
parameter, in any module); and a slice of one array cut by the segments the loop walks
(`for lab, start, stop in segments: nn.predict(patches[start:stop])`). Fixed-size chunks
of a `range` (`x[i:i + 64]`) are the caller's own batching and stay quiet.
`rule_claims.py --cases TFP110c` (TF 2.21 CPU, a small convnet, 640 images): predict per
batch of 32 is 15.5x `model(x)` per batch and 64.7x one `predict(ds)`; per batch of 128
3.6x and 10.3x; 40 uneven slices of one array 35.2x one predict then slices.

## Why is this bad?
`predict` is built for many inputs: each call builds a data adapter over its input, and runs
its predict function through Keras's batching loop with callbacks. For one input that set-up
costs milliseconds, far more than a small network's forward pass (stop 42, TF 2.21 CPU, a
loaded machine: 75 ms against 1.4 ms for a 4-24-2 dense net); a large network's own time
can outweigh it (InceptionV3 on one image: predict 438 ms, an eager `model(x)` 808 ms, so
there the `tf.function` is the fix); Keras's own documentation
of `Model.predict` says to call the model directly (`model(x)`) for small inputs that fit in
one batch. Per environment step, that is most of an RL loop's time. Calling `model(x)` (under
`tf.function` for more; claim S13) runs only the layers. Not so for a recurrent model called
eagerly: its LSTM/GRU layers step their time loop op by op, so `model(x)` is no faster than
`predict` there (LSTM(128) on one 40-step input, TF 2.21 CPU: predict 246 ms, `model(x)` 336
ms, `tf.function(model)` 7.7 ms per call); where the module builds a recurrent layer, the
hint leads with the traced call.

## Example
```python
state = env.reset()
while not done:
    q = model.predict(np.reshape(state, [1, n]))
    state, reward, done, _ = env.step(np.argmax(q))
```

## Use instead
```python
    q = model(np.reshape(state, [1, n]), training=False).numpy()
```

## Fix safety
No automatic fix: `model(x)` returns a tensor where `predict` returned a NumPy array (add
`.numpy()` where the caller needs one), and `predict` accepts inputs `model(x)` does not
(generators, datasets). In a replay loop that also trains per sample (keon-style: `predict`
then `fit` on each transition in turn), predicting all the states before the loop uses the
weights from before the per-sample updates, where the loop predicted each sample with the
weights the previous samples' `fit` had just changed: the targets, so the training, change.
Batch the predicts together with the fits (TFP118's fix: one `fit` on the stacked
minibatch), or keep the per-sample predicts where the per-sample updates are meant.

## Known limitations
Not reported on TensorFlow 1.x or in a module that builds TF1 graphs (sessions, placeholders,
eager execution turned off): there `predict` runs a prebuilt graph and `model(x)` would add
ops to the graph at every call. A project with no pin is read as the installed TensorFlow,
except a module whose own APIs are TF 1.x or multi-backend Keras (`tf.Session`,
`K.set_session`, `tf.train.AdamOptimizer`, `Model(input=, output=)`, `fit(nb_epoch=)`,
standalone `keras.optimizers.Adam(lr=...)`, an import of `keras.backend.tensorflow_backend`)
and no TF 2-only API (`tf.function`, `tf.GradientTape`): that module targets TF 1.15, and
so does, for this rule, an unpinned module that imports such a module of the project (one
process runs one TensorFlow: an agent script importing its TF1 actor). Likewise a module that
imports standalone `keras` where the project's requirements pin multi-backend Keras 2.2 or older
(`Keras==2.2.4`, a TF 1.x graph backend) and no TensorFlow; a `tf.keras` module beside it is
still read as the installed TensorFlow. A multi-backend Keras program with none of these is
still read as TF 2 (pin the project, or pass `--tf-version`).
One example of the loop's own data per call (`model.predict(x[i:i + 1])` for `i` over `x`,
`np.expand_dims(x[i], 0)`, a slice through a name) is reported on any TensorFlow, TF 1.x and
session code included, with its own advice: one `predict` over all the examples. So is one
field of one transition of a sampled replay minibatch (`for state, action, reward,
next_state, done in random.sample(memory, 32): model.predict(state)`, `state, ... =
mini_batch[i]` for `i` over the batch, `minibatch[i][0]`, a list from a `.sample(n)` method
or a parameter named `minibatch`; the items must show they are transitions, as TFP118's
"What it does" says, so a batch loader's or a list of datasets' items are not): the classic
DQN replay, where stacking the states and
predicting once per network is the fix (34x for 32 samples of a small dense network,
`rule_claims.py --cases TFP118`). A helper of another module handed such a sample per
transition (`agent.q_values(next_state)`) is reported where it predicts. In graph
mode a session run per example costs 46-49x one batched run for a small dense network and 3.5x
for a small convnet on 80x80x4 frames, before Keras's own per-call work
(`benchmarks/bench_lint_graph_predict.py`, TF 2.21's v1 graph mode).
Not reported: `predict` on a batch per iteration (a loop over a dataset or over chunks),
calls TFP105 reports (a model it can tell is Keras's, one example of the loop's own data per
iteration: its finding says the same), objects that do not look like a model (a
scikit-learn estimator named `clf`), an object named like one in a module that imports
neither TensorFlow nor Keras, nor any module of the project that does (a scikit-learn or
XGBoost `model`), and an instance of a class the project defines with its
own `predict` that is no Keras model (`self._actor = Actor(...)`, from this module or another
one linted with it), or a Keras model class whose own `predict` does not hand on to Keras's
(`super().predict`), also as `self.predict(x)` in its methods: that call runs the project's
method; a Keras `predict` inside it is reported where it is.
"""
    valid = (
        # Review 43: a Keras model class whose own `predict` runs `self(x)`, not Keras's
        # (TFP111 reports that eager call per step).
        Valid("""
            import numpy as np
            import tensorflow as tf
            class Policy(tf.keras.Model):
                def __init__(self):
                    super().__init__()
                    self.d = tf.keras.layers.Dense(2)
                def call(self, x):
                    return self.d(x)
                def predict(self, x):
                    return self(x).numpy()
                def act(self, state):
                    return int(np.argmax(self.predict(state[None])[0]))
            agent = Policy()
            state = np.zeros(4, np.float32)
            for t in range(1000):
                a = agent.act(state)
        """, spelling="name: a model class's own predict"),
        # The project's own `predict` (a model call and a squashing), not Keras's (round 6).
        Valid("""
            import numpy as np
            import tensorflow as tf
            class Actor:
                def __init__(self, n):
                    self.model = tf.keras.Sequential([tf.keras.layers.Dense(n)])
                def predict(self, obs):
                    return tf.tanh(self.model(obs))
            class Agent:
                def __init__(self, env):
                    self.env = env
                    self._actor = Actor(4)
                def run(self):
                    obs, done = self.env.reset(), False
                    while not done:
                        action = self._actor.predict(tf.expand_dims(obs, 0))
                        obs, reward, done, _ = self.env.step(np.asarray(action)[0])
        """, spelling="name: a project class's own predict"),
        # One predict over all inputs.
        Valid("""
            import numpy as np
            import tensorflow as tf
            model = tf.keras.models.load_model("m.keras")
            preds = model.predict(np.stack(states))
        """, spelling="name"),
        # The model called directly per step.
        Valid("""
            import numpy as np
            import tensorflow as tf
            def run(env, model, n):
                state, done = env.reset(), False
                while not done:
                    q = model(np.reshape(state, [1, n]), training=False)
                    state, reward, done, _ = env.step(int(np.argmax(q)))
        """, spelling="loop: while"),
        # predict once, outside any loop.
        Valid("""
            import numpy as np
            def first_action(model, env, n):
                state = env.reset()
                return np.argmax(model.predict(np.reshape(state, [1, n])))
        """, spelling="index: reshape"),
        # A batch per iteration.
        Valid("""
            def predict_all(model, batches):
                out = []
                for batch in batches:
                    out.append(model.predict(batch))
                return out
        """, spelling="loop: for"),
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
                    self.n = n
                def act(self, state):
                    return int(np.argmax(self.model(np.reshape(state, [1, self.n]))))
        """}, spelling="module"),
        Valid("""
            import numpy as np
            import tensorflow as tf
            model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
            # %%
            for state in [np.ones(4)] * 3:
                q = model(state[None], training=False)
        """, notebook=True, spelling="notebook"),
        # TF 1.x: predict is the ordinary graph-mode call there, and model(x) would add new
        # ops to the graph at every call (a held-out repository pinned TF 1.1).
        Valid("""
            import numpy as np
            def run(env, model, n):
                state, done = env.reset(), False
                while not done:
                    q = model.predict(np.reshape(state, [1, n]))
                    state, reward, done, _ = env.step(int(np.argmax(q)))
        """, tf_version="1.15", spelling="loop: while"),
        # The caller passes a whole batch through the parameter: predict is right there.
        Valid("""
            import numpy as np
            import tensorflow as tf
            class DQNAgent:
                def __init__(self, n):
                    self.model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
                def q_values(self, states):
                    return self.model.predict(states)
            agent = DQNAgent(4)
            for e in range(100):
                batch = np.stack(replay_states(e))
                q = agent.q_values(batch)
        """, spelling="name: through a parameter"),
        # TF1 graph mode under TF 2 (a session, placeholders): the same.
        Valid("""
            import numpy as np
            import tensorflow as tf
            tf.compat.v1.disable_eager_execution()
            def run(env, model, n):
                state, done = env.reset(), False
                while not done:
                    q = model.predict(np.reshape(state, [1, n]))
                    state, reward, done, _ = env.step(int(np.argmax(q)))
        """, spelling="loop: while"),
        # Issue 25's spellings (ninth pass): one example of the loop's own data per predict,
        # on any TensorFlow. VALID twins: one predict over all, a chunk per iteration, not a
        # model, one image shown nine times, TFP105's own call (a model it can see is Keras).
        Valid("""
            import numpy as np
            from .models import get_embedding_model
            def embed(x):
                model = get_embedding_model()
                return model.predict(x, batch_size=32)
        """, tf_version="1.12", spelling="loop: one predict over all frames"),
        Valid("""
            import numpy as np
            import tensorflow as tf
            class Scorer:
                def __init__(self, path):
                    self.model = tf.keras.models.load_model(path)
                def score(self, x):
                    out = []
                    for i in range(0, len(x), 64):
                        out.append(self.model.predict(x[i:i + 64]))
                    return np.concatenate(out)
        """, spelling="index: a chunk per iteration"),
        Valid("""
            import numpy as np
            import tensorflow as tf
            def fit_all(clf, x):
                sess = tf.Session()
                preds = []
                for i in range(len(x)):
                    row = x[i:i + 1]
                    preds.append(clf.predict(row))
                return preds
        """, tf_version="1.15", spelling="name: not a model"),
        Valid("""
            import numpy as np
            from nets import build
            def classify(images):
                model = build()
                return model.predict(np.stack(images))
        """, files={"nets.py": """
            import tensorflow as tf
            def build():
                return tf.keras.Sequential([tf.keras.layers.Dense(2)])
        """}, spelling="module"),
        Valid("""
            import numpy as np
            from nets import build
            model = build()
            # %%
            preds = model.predict(frames, batch_size=64)
        """, notebook=True, spelling="notebook"),
        Valid("""
            import keras
            model = keras.models.load_model("m.keras")
            preds = []
            for i in range(len(x_test)):
                preds.append(model.predict(x_test[i:i + 1]))
        """, spelling="loop: TFP105's own call"),
    )
    invalid = (
        # The run-once VALIDs' twins (stop 37): a count the code does not give.
        Invalid("""
            import tensorflow as tf
            model = tf.keras.models.load_model("m.h5")
            for i in range(len(test_images)):
                f1 = model.predict(test_images[0].reshape(1, 28, 28, 1))[i]
        """, count=1, lines=(4,), spelling="loop: range(len(x)) at module level"),
        Invalid("""
            import numpy as np
            import tensorflow as tf
            model = tf.keras.models.load_model("m.h5")
            def forecast(series):
                out = []
                for step in range(14):
                    out.append(model.predict(series[None, -30:])[0, 0])
                    series = np.append(series, out[-1])
                return out
            if __name__ == "__main__":
                for path in paths:
                    print(forecast(np.load(path)))
        """, count=1, lines=(7,), spelling="name: a helper called per file"),
        Invalid("""
            import numpy as np
            import tensorflow as tf
            model = tf.keras.models.load_model("m.h5")
            def forecast(series):
                out = []
                for step in range(14):
                    out.append(model.predict(series[None, -30:])[0, 0])
                    series = np.append(series, out[-1])
                return out
            if __name__ == "__main__":
                print(forecast(np.load("s.npy")))
        """, files={"serve.py": """
            from example import forecast
            def handle(requests):
                return [forecast(r) for r in requests]
        """}, count=1, lines=(7,), spelling="module: called per request by another module"),
        Invalid("""
            import numpy as np
            import tensorflow as tf
            def run(env, model, n):
                state, done = env.reset(), False
                while not done:
                    q = model.predict(np.reshape(state, [1, n]))
                    state, reward, done, _ = env.step(int(np.argmax(q)))
        """, count=1, lines=(6,), spelling="loop: while"),
        # An episode loop with a for over steps; the observation from env.step.
        Invalid("""
            import numpy as np
            import tensorflow as tf
            def play(env, q_network, steps):
                obs = env.reset()
                for t in range(steps):
                    action = np.argmax(q_network.predict(obs[None])[0])
                    obs, reward, done, info = env.step(action)
        """, count=1, lines=(6,), spelling="loop: for"),
        # expand_dims of the state, in a method using self.model.
        Invalid("""
            import numpy as np
            import tensorflow as tf
            class Agent:
                def __init__(self):
                    self.model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
                def run(self, env):
                    state = env.reset()
                    for _ in range(1000):
                        probs = self.model.predict(np.expand_dims(state, 0))
                        state, _, done, _ = env.step(np.random.choice(2, p=probs[0]))
        """, count=1, lines=(9,), spelling="index: expand_dims"),
        # act(state) makes a batch of one; the loop is in the same module.
        Invalid("""
            import numpy as np
            import tensorflow as tf
            class Agent:
                def act(self, state):
                    return int(np.argmax(self.model.predict(state[np.newaxis])))
                def episode(self, env):
                    state, done = env.reset(), False
                    while not done:
                        state, _, done, _ = env.step(self.act(state))
        """, count=1, lines=(5,), spelling="name"),
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
                    return int(np.argmax(self.model.predict(np.reshape(state, [1, self.n]))))
        """}, count=1, spelling="module"),
        Invalid("""
            import numpy as np
            import tensorflow as tf
            model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
            # %%
            state = env.reset()
            for t in range(200):
                action = np.argmax(model.predict(state[None]))
                state, reward, done, _ = env.step(action)
        """, count=1, notebook=True, spelling="notebook"),
        # The batch of one made by the caller, passed through a parameter (the classic DQN
        # agent: `act(state)` predicts what the environment loop reshaped).
        Invalid("""
            import numpy as np
            import tensorflow as tf
            class DQNAgent:
                def __init__(self, n):
                    self.model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
                def act(self, state):
                    act_values = self.model.predict(state)
                    return np.argmax(act_values[0])
            agent = DQNAgent(4)
            for e in range(100):
                state = np.reshape(env.reset(), [1, 4])
                for time in range(500):
                    action = agent.act(state)
                    next_state, reward, done, _ = env.step(action)
                    state = np.reshape(next_state, [1, 4])
        """, count=1, lines=(7,), spelling="name: through a parameter"),
        Invalid("""
            import numpy as np
            from agent import act
            for e in range(100):
                obs = env.reset()
                for time in range(500):
                    obs, reward, done, _ = env.step(act(model, obs[None]))
        """, files={"agent.py": """
            import tensorflow as tf
            import numpy as np
            def act(model, x):
                return int(np.argmax(model.predict(x)))
        """}, count=1, spelling="module: a value through a parameter"),
        # A vehicle part whose `run` a framework calls per tick (donkeycar, dev row F089):
        # the batch of one is made from the argument, and no code here calls `run`.
        Invalid("""
            import tensorflow as tf
            class KerasPilot:
                def __init__(self):
                    self.model = tf.keras.models.load_model("pilot.h5")
                def run(self, img_arr):
                    img_arr = img_arr.reshape((1,) + img_arr.shape)
                    steering, throttle = self.model.predict(img_arr)
                    return steering[0][0], throttle[0][0]
        """, count=1, lines=(7,), tf_version="2.2", spelling="module: run from outside"),
        # One row per filter, `np.atleast_2d` of a parameter vector (nmma, dev row F096).
        Invalid("""
            import numpy as np
            import tensorflow as tf
            def calc_lc(params, models, filters):
                out = {}
                for filt in filters:
                    model = models[filt]["model"]
                    x = np.array(params)
                    out[filt] = model.predict(np.atleast_2d(x)).T.flatten()
                return out
        """, count=1, lines=(8,), tf_version="2.9", spelling="loop: np.atleast_2d rows"),
        # A batch of one converted on the way (shape kept): anita-hu/TF2-RL's agents,
        # `np.expand_dims(state, axis=0).astype(np.float32)` in `act()` per env step.
        Invalid("""
            import numpy as np
            import tensorflow as tf
            class DDPG:
                def __init__(self):
                    self.actor = tf.keras.Sequential([tf.keras.layers.Dense(2)])
                def act(self, state):
                    state = np.expand_dims(state, axis=0).astype(np.float32)
                    return self.actor.predict(state)
                def train(self, env):
                    s, done = env.reset(), False
                    while not done:
                        s, r, done, _ = env.step(self.act(s))
        """, count=1, lines=(8,), spelling="name: astype of expand_dims"),
        Invalid("""
            import numpy as np
            import tensorflow as tf
            def run(env, model):
                obs = env.reset()
                for t in range(1000):
                    x = tf.cast(obs[None], tf.float32)
                    obs, r, done, _ = env.step(np.argmax(model.predict(x)))
        """, count=1, lines=(7,), spelling="index: tf.cast of x[None]"),
        Invalid("""
            import numpy as np
            import tensorflow as tf
            def run(env, model):
                obs = env.reset()
                for t in range(1000):
                    q = model.predict(np.asarray(np.reshape(obs, (1, -1)), dtype=np.float32))
                    obs, r, done, _ = env.step(np.argmax(q))
        """, count=1, lines=(6,), spelling="loop: np.asarray of a reshape"),
        # The twins of the TF 1.x / multi-backend Keras VALIDs below: pinned to TF 2 ...
        Invalid("""
            import numpy as np
            from keras.models import Sequential
            from keras.layers import Dense
            from keras.optimizers import Adam
            model = Sequential([Dense(2)])
            model.compile(optimizer=Adam(lr=0.001), loss="mse")""" + _AGENT_STEPS,
                count=1, lines=(10,), tf_version="2.3", spelling="name: pinned TF 2, lr="),
        # ... `lr=` spelled through tf.keras (TF 2 code up to 2.15), beside a standalone import
        Invalid("""
            import numpy as np
            import tensorflow as tf
            import keras
            model = keras.models.Sequential([keras.layers.Dense(2)])
            model.compile(optimizer=tf.keras.optimizers.RMSprop(lr=0.001), loss="mse")"""
                + _AGENT_STEPS,
                count=1, lines=(9,), spelling="module: tf.keras optimizer lr="),
        # ... or a TF 2-only API in the same module (the old spelling is a leftover).
        Invalid("""
            import numpy as np
            import tensorflow as tf
            from keras.models import Sequential
            from keras.layers import Dense
            from keras.optimizers import Adam
            model = Sequential([Dense(2)])
            model.compile(optimizer=Adam(lr=0.001), loss="mse")
            @tf.function
            def train_step(x):
                return model(x)""" + _AGENT_STEPS,
                count=1, lines=(14,), spelling="loop: lr= beside tf.function"),
        # Issue 25's spellings (ninth pass): one example of the loop's own data per predict
        # (`x[idx:idx + 1]` per frame), reported on TF 1.x too: one predict over all frames
        # is the fix on any TensorFlow.
        Invalid("""
            import numpy as np
            import tensorflow as tf
            from .models import get_embedding_model
            def embed(x):
                model = get_embedding_model()
                embedding = []
                for idx in range(x.shape[0]):
                    embedding.append(model.predict(x[idx:idx+1]).flatten())
                return np.array(embedding)
        """, count=1, lines=(8,), tf_version="1.12", spelling="loop: one frame per iteration"),
        Invalid("""
            import numpy as np
            import tensorflow as tf
            class Scorer:
                def __init__(self, path):
                    self.model = tf.keras.models.load_model(path)
                def score(self, x):
                    return [self.model.predict(np.expand_dims(x[i], 0)) for i in range(len(x))]
        """, count=1, lines=(7,), spelling="index: expand_dims of x[i] on self.model"),
        Invalid("""
            import numpy as np
            import tensorflow as tf
            def run_all(net, x):
                sess = tf.Session()
                preds = []
                for i in range(len(x)):
                    row = x[i:i + 1]
                    preds.append(net.predict(row))
                return preds
        """, count=1, lines=(8,), tf_version="1.15", spelling="name: a slice through a name"),
        Invalid("""
            from nets import build
            def classify(images):
                model = build()
                return [model.predict(img[None]) for img in images]
        """, files={"nets.py": """
            import tensorflow as tf
            def build():
                return tf.keras.Sequential([tf.keras.layers.Dense(2)])
        """}, count=1, spelling="module"),
        Invalid("""
            import numpy as np
            import tensorflow as tf
            from nets import build
            model = build()
            # %%
            preds = [model.predict(frames[i:i + 1]) for i in range(len(frames))]
        """, count=1, notebook=True, spelling="notebook"),
    )
    valid = (  # type: ignore[assignment]
        *valid,
        # Stop 37 (how often the code runs, analysis/trips.py): loops and callers that the
        # code says run predict a handful of times in all: the saving is paid once.
        Valid("""
            import tensorflow as tf
            model = tf.keras.models.load_model("m.h5")
            for i in range(4):
                f1 = model.predict(test_images[0].reshape(1, 28, 28, 1))[i]
        """, spelling="loop: range(4) at module level"),
        Valid("""
            import tensorflow as tf
            model = tf.keras.models.load_model("m.h5")
            for i, path in enumerate(["cat.png", "dog.png", "bird.png"]):
                pred = model.predict(load(path)[None])
        """, spelling="index: enumerate of a literal list"),
        Valid("""
            import numpy as np
            import tensorflow as tf
            model = tf.keras.models.load_model("m.h5")
            def forecast(series):
                out = []
                for step in range(14):
                    out.append(model.predict(series[None, -30:])[0, 0])
                    series = np.append(series, out[-1])
                return out
            if __name__ == "__main__":
                print(forecast(np.load("s.npy")))
        """, spelling="name: a helper the script calls once"),
        Valid("""
            import numpy as np
            from nets import build
            model = build()
            # %%
            labels = ["cat", "dog", "bird"]
            for name in labels:
                print(name, model.predict(np.load(name + ".npy")[None]))
        """, notebook=True, spelling="notebook: a literal list of three"),
        Valid("""
            import numpy as np
            from keras.models import Sequential
            from keras.layers import Dense
            from keras.optimizers import Adam
            model = Sequential([Dense(2)])
            model.compile(optimizer=Adam(lr=0.001), loss="mse")
        """ + _AGENT_LOOP, spelling="name: standalone keras optimizer lr="),
        Valid("""
            import numpy as np
            import keras
            model = keras.models.Sequential([keras.layers.Dense(2)])
            model.compile(optimizer=keras.optimizers.RMSprop(lr=0.00025), loss="mse")
        """ + _AGENT_LOOP, spelling="module: import keras, lr="),
        Valid("""
            import numpy as np
            import tensorflow as tf
            from keras import backend as K
            from keras.models import load_model
            K.set_session(tf.Session())
            model = load_model("q.h5")
        """ + _AGENT_LOOP, spelling="name: K.set_session"),
        Valid("""
            import numpy as np
            from keras.models import Model
            from keras.layers import Input, Dense
            inp = Input(shape=(4,))
            model = Model(input=[inp], output=[Dense(2)(inp)])
        """ + _AGENT_LOOP, spelling="name: Keras 1 Model(input=, output=)"),
        Valid("""
            import numpy as np
            import tensorflow as tf
            from keras.models import Sequential
            from keras.layers import Dense
            model = Sequential([Dense(2)])
            train_op = tf.train.AdamOptimizer(1e-3)
        """ + _AGENT_LOOP, spelling="name: tf.train optimizer"),
        Valid("""
            import numpy as np
            import keras.backend.tensorflow_backend as KTF
            from keras.models import load_model
            model = load_model("q.h5")
            model.fit(xs, ys, nb_epoch=1)
        """ + _AGENT_LOOP, spelling="loop: Keras 1 fit(nb_epoch=)"),
        # The same helper, run once by the script: predict's set-up is paid once.
        Valid("""
            import numpy as np
            import tensorflow as tf
            model = tf.keras.models.load_model("m.h5")
            def classify(image):
                x = image[None]
                return int(np.argmax(model.predict(x)))
            print(classify(np.load("cat.npy")))
        """),
        # A converted batch of many (the twin of the astype INVALID): predict is right.
        Valid("""
            import numpy as np
            import tensorflow as tf
            def run(env, model, episodes):
                for e in range(episodes):
                    states = np.stack(collect(env)).astype(np.float32)
                    values = model.predict(states)
        """, spelling="name: astype of a stacked batch"),
        # A batch made from the argument whose first axis is not one.
        Valid("""
            import tensorflow as tf
            class Pilot:
                def __init__(self):
                    self.model = tf.keras.models.load_model("pilot.h5")
                def run(self, frames):
                    frames = frames.reshape((-1,) + frames.shape[2:])
                    return self.model.predict(frames)
        """),
    )

    # Said of a function that makes a batch of one from its argument and runs the model on
    # it, called from outside the linted code (TFP111 says it of a direct call).
    own_message = ("model.predict on a batch of one made from the function's argument: "
                   "each call pays predict's set-up for one input (the function is "
                   "called from outside this code, once per input)")

    # Stop 39, pass B: a model through a parameter that does not say so
    # (`def predict_one(m, row)`), every caller here passing a Keras model.
    valid = (  # type: ignore[assignment]
        *valid,
        Valid("""
            import numpy as np
            import tensorflow as tf
            model = tf.keras.models.load_model("m.h5")
            def predict_one(m, rows):
                return m.predict(rows)
            res = predict_one(model, np.load("x.npy"))
        """, spelling="name: a model passed in once, all rows at once"),
        Valid("""
            import numpy as np
            import tensorflow as tf
            class Lookup:
                def predict(self, row):
                    return row.sum()
            model = tf.keras.models.load_model("m.h5")
            def predict_one(m, row):
                return m.predict(row[None])
            first = predict_one(model, np.zeros(4))
            res = [predict_one(Lookup(), r) for r in np.load("x.npy")]
        """, spelling="loop: one caller passes something else"),
    )
    invalid = (  # type: ignore[assignment]
        *invalid,
        Invalid("""
            import numpy as np
            import tensorflow as tf
            model = tf.keras.models.load_model("m.h5")
            def predict_one(m, row):
                return m.predict(row[None])
            res = [predict_one(model, r) for r in np.load("x.npy")]
        """, count=1, lines=(5,), spelling="name: a model passed in as m"),
        Invalid("""
            import numpy as np
            import tensorflow as tf
            def predict_one(m, row):
                return m.predict(row[None])
            def main():
                model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
                X = np.load("x.npy")
                for i in range(len(X)):
                    predict_one(model, X[i])
        """, count=1, lines=(4,), spelling="loop: a model passed in as m, x[i]"),
        # Stop 40 (round 10's F024): a batch of one moved through a library transpose that
        # keeps the batch axis first, one image scale per iteration.
        Invalid("""
            import numpy as np
            import tensorflow as tf
            class Detector:
                def stage1(self, image, scales):
                    boxes = []
                    for scale in scales:
                        img_x = np.expand_dims(resize(image, scale), 0)
                        img_y = np.transpose(img_x, (0, 2, 1, 3))
                        boxes.append(self._pnet.predict(img_y))
                    return boxes
        """, count=1, lines=(9,), spelling="index: np.transpose of a batch of one"),
        Invalid("""
            import tensorflow as tf
            model = tf.keras.models.load_model("m.keras")
            def score(rows):
                return [model.predict(tf.cast(tf.transpose(r[None], perm=[0, 2, 1]),
                                              tf.float32)) for r in rows]
        """, count=1, lines=(4,), spelling="name: tf.cast of a transposed batch of one"),
    )
    valid = (  # type: ignore[assignment]
        *valid,
        # The twin: the transpose moves the boxes' axis first, a batch of all candidates.
        Valid("""
            import numpy as np
            class Detector:
                def stage2(self, crops_per_image):
                    out = []
                    for crops in crops_per_image:
                        x = np.transpose(crops, (3, 1, 0, 2))
                        out.append(self._rnet.predict(x))
                    return out
        """, spelling="index: a transpose that moves another axis first"),
        # Review 40: a scikit-learn or XGBoost estimator named like a model, in a module
        # (and a program) that never imports TensorFlow or Keras: its own predict.
        Valid("""
            import numpy as np
            from sklearn.svm import SVC
            svm_model = SVC().fit(np.eye(3), [0, 1, 0])
            for sample in np.load("samples.npy"):
                label = svm_model.predict(np.transpose(sample[None], (0, 1)))
        """, spelling="index: np.transpose of a batch of one, no Keras"),
        Valid("""
            import numpy as np
            import xgboost
            def label_rows(rows, booster_model: xgboost.XGBRegressor):
                return [booster_model.predict(np.asarray(r)[None]) for r in rows]
            model = xgboost.XGBRegressor()
            scores = [model.predict(row.reshape(1, -1)) for row in np.load("rows.npy")]
        """, spelling="name: no Keras"),
    )

    # Stop 41 (round 11's F027-F029): one transition of a sampled replay minibatch per
    # iteration, unpacked in the loop's target or from `minibatch[i]`, or handed to a
    # helper of another module that predicts it. VALID twins: the states stacked first.
    invalid = (  # type: ignore[assignment]
        *invalid,
        Invalid("""
            import random
            import numpy as np
            from keras.models import Sequential
            class DQNAgent:
                def train_replay(self):
                    mini_batch = random.sample(self.memory, self.batch_size)
                    for i in range(self.batch_size):
                        state, action, reward, next_state, done = mini_batch[i]
                        target = self.model.predict(state)[0]
                        q_next = self.target_model.predict(next_state)[0]
        """, count=2, lines=(9, 10), tf_version="1.0",
            spelling="index: mini_batch[i] unpacked, TF 1.0"),
        # A model Keras builds here (TFP105's, preview, for other examples): the replay
        # sample is this rule's (dev set F202, Keras-FlappyBird).
        Invalid("""
            import random
            from keras.models import Sequential
            from keras.layers import Dense
            model = Sequential()
            model.add(Dense(2, input_dim=4))
            D.append((s_t, a_t, r_t, s_t1, terminal))
            minibatch = random.sample(D, 32)
            for i in range(0, len(minibatch)):
                state_t = minibatch[i][0]
                targets_i = model.predict(state_t)
        """, count=1, lines=(10,), spelling="name: a Keras model built here, minibatch[i][0]"),
        Invalid("""
            import random
            from agent import Agent
            def replay(agent: Agent, memory, n):
                for state, action, reward, next_state, done in random.sample(memory, n):
                    q = agent.q_values(next_state)
        """, files={"agent.py": """
            import tensorflow as tf
            class Agent:
                def __init__(self):
                    self.model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
                def q_values(self, state):
                    return self.model.predict(state, verbose=0)
        """}, count=1, spelling="module: a replay sample handed to another module's helper"),
    )
    valid = (  # type: ignore[assignment]
        *valid,
        Valid("""
            import random
            import numpy as np
            from keras.models import Sequential
            class DQNAgent:
                def train_replay(self):
                    mini_batch = random.sample(self.memory, self.batch_size)
                    states = np.vstack([m[0] for m in mini_batch])
                    targets = self.model.predict(states)
                    for i in range(self.batch_size):
                        state, action, reward, next_state, done = mini_batch[i]
                        targets[i][action] = reward
        """, tf_version="1.0", spelling="index: the minibatch's states stacked, TF 1.0"),
        Valid("""
            import random
            import numpy as np
            from agent import Agent
            def replay(agent: Agent, memory, n):
                batch = random.sample(memory, n)
                q = agent.q_values(np.vstack([b[3] for b in batch]))
                for state, action, reward, next_state, done in batch:
                    pass
        """, files={"agent.py": """
            import tensorflow as tf
            class Agent:
                def __init__(self):
                    self.model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
                def q_values(self, state):
                    return self.model.predict(state, verbose=0)
        """}, spelling="module: the helper given the stacked minibatch"),
        # Review 41: a loader's batches of three fields are not sampled transitions, in
        # another module's helper either.
        Valid("""
            from agent import Agent
            def evaluate(agent: Agent, test_batch_loader):
                out = []
                for obs, acts, rets in test_batch_loader:
                    out.append(agent.q_values(obs))
                return out
        """, files={"agent.py": """
            import tensorflow as tf
            class Agent:
                def __init__(self):
                    self.model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
                def q_values(self, state):
                    return self.model.predict(state, verbose=0)
        """}, spelling="module: a loader's batches to the helper"),
    )

    # Stop 42 (held-out round 13's 8 false findings, a course notebook): `steps = 1`, then
    # `for j in range(0, steps)`, the name rebound later in the same cell (`steps = 8`). The
    # count is read from the binding that reaches the loop (analysis/trips.reaching_value).
    # INVALID twins: the name rebound to a large count before the loop, a count read from the
    # data, a rebinding that only may happen, and one in an enclosing loop.
    valid = (  # type: ignore[assignment]
        *valid,
        Valid("""
            import numpy as np
            from keras.models import load_model
            model = load_model("m.h5")
            # %%
            steps = 1
            i = 950
            data = X[i:i + 1]
            for j in range(0, steps):
                res = model.predict(data)[0]
                data = np.concatenate((data[0:1].reshape(128), res))[-128:].reshape((1, 128, 1))
            steps = 8
            i = 950
            data = X[i:i + 1]
            for j in range(0, steps):
                res = model.predict(data)[0]
                data = np.concatenate((data[0:1].reshape(128), res))[-128:].reshape((1, 128, 1))
        """, notebook=True, spelling="notebook: a name rebound later in the cell, range(0, n)"),
        Valid("""
            import numpy as np
            import tensorflow as tf
            model = tf.keras.models.load_model("m.h5")
            i = 950
            data = X[i:i + 1]
            for j in range(len(["1 h", "2 h", "3 h"])):
                res = model.predict(data)[0]
                data = np.concatenate((data[0:1].reshape(128), res))[-128:].reshape((1, 128, 1))
        """, spelling="index: range(len(...)) of a literal list"),
        Valid("""
            import numpy as np
            import tensorflow as tf
            SHOWN = 6
            model = tf.keras.models.load_model("m.h5")
            shown = SHOWN
            i = 950
            data = X[i:i + 1]
            for j in range(0, shown, 2):
                res = model.predict(data)[0]
                data = np.concatenate((data[0:1].reshape(128), res))[-128:].reshape((1, 128, 1))
        """, spelling="name: a constant through two names, range(a, b, s)"),
    )
    invalid = (  # type: ignore[assignment]
        *invalid,
        Invalid("""
            import numpy as np
            from keras.models import load_model
            model = load_model("m.h5")
            # %%
            steps = 1
            steps = 200
            i = 950
            data = X[i:i + 1]
            for j in range(0, steps):
                res = model.predict(data)[0]
                data = np.concatenate((data[0:1].reshape(128), res))[-128:].reshape((1, 128, 1))
        """, count=1, notebook=True, spelling="notebook: rebound to 200 before the loop"),
        Invalid("""
            import numpy as np
            from keras.models import load_model
            model = load_model("m.h5")
            steps = 1
            steps = len(X)
            i = 950
            data = X[i:i + 1]
            for j in range(0, steps):
                res = model.predict(data)[0]
                data = np.concatenate((data[0:1].reshape(128), res))[-128:].reshape((1, 128, 1))
        """, count=1, spelling="name: a count read from the data"),
        Invalid("""
            import sys
            import numpy as np
            from keras.models import load_model
            model = load_model("m.h5")
            steps = 1
            if len(sys.argv) > 1:
                steps = 500
            i = 950
            data = X[i:i + 1]
            for j in range(0, steps):
                res = model.predict(data)[0]
                data = np.concatenate((data[0:1].reshape(128), res))[-128:].reshape((1, 128, 1))
        """, count=1, spelling="name: rebound under an if"),
        Invalid("""
            import numpy as np
            from keras.models import load_model
            model = load_model("m.h5")
            steps = 1
            for episode in range(100):
                data = X[episode:episode + 1]
                for j in range(steps):
                    res = model.predict(data)[0]
                    data = np.concatenate((data[0:1].reshape(128), res))[-128:].reshape((1, 128, 1))
                steps = 50
        """, count=1, spelling="loop: rebound later in the enclosing loop"),
    )
    # Stop 45: a camera frame scaled after it is made a batch of one (`frame[None] /
    # 255.0`), and an agent's input made from its parameter by a helper (`s =
    # self.prep(state)`): one input per call when the callers pass one.
    invalid = (  # type: ignore[assignment]
        *invalid,
        Invalid("""
            import cv2
            import tensorflow as tf
            model = tf.keras.models.load_model("m.h5")
            cap = cv2.VideoCapture(0)
            while True:
                ok, frame = cap.read()
                x = cv2.resize(frame, (224, 224))[None] / 255.0
                label = model.predict(x)
        """, count=1, lines=(8,), spelling="loop: a frame per step, scaled"),
        Invalid("""
            import numpy as np
            import tensorflow as tf
            class Agent:
                def __init__(self):
                    self.model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
                def prep(self, state):
                    return np.reshape(state, (1, -1))
                def act(self, state):
                    s = self.prep(state)
                    return int(np.argmax(self.model.predict(s)[0]))
        """, files={"run.py": """
            import gym
            from example import Agent
            env = gym.make("CartPole-v1")
            agent = Agent()
            obs = env.reset()
            for t in range(10000):
                obs, r, done, _ = env.step(agent.act(obs))
        """}, count=1, lines=(10,), spelling="module: the input made from a parameter"),
    )
    valid = (  # type: ignore[assignment]
        *valid,
        Valid("""
            import cv2
            import tensorflow as tf
            model = tf.keras.models.load_model("m.h5")
            frames = []
            cap = cv2.VideoCapture(0)
            while len(frames) < 64:
                ok, frame = cap.read()
                frames.append(cv2.resize(frame, (224, 224)) / 255.0)
            labels = model.predict(np.stack(frames))
        """, spelling="loop: frames stacked, one predict"),
        Valid("""
            import numpy as np
            import tensorflow as tf
            class Agent:
                def __init__(self):
                    self.model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
                def prep(self, states):
                    return np.stack(states)
                def values(self, states):
                    s = self.prep(states)
                    return self.model.predict(s)
        """, files={"run.py": """
            from example import Agent
            agent = Agent()
            for epoch in range(10):
                agent.values(replay_states)
        """}, spelling="module: a whole batch from the parameter"),
    )
    # Stop 46: a piece that is already a batch, given to predict per iteration: each batch
    # of a dataset the loop walks (held-out rounds 14 F010, 16 F018) or a slice of one
    # array cut by the segments the loop walks (round 16 F019). VALID twins: one predict
    # over the dataset or the array, the model called per batch, fixed-size chunks of a
    # `range` (the caller's own batching, above), a helper given the whole dataset once.
    invalid = (  # type: ignore[assignment]
        *invalid,
        Invalid("""
            import numpy as np
            import tensorflow as tf
            model = tf.keras.models.load_model("net.h5")
            val_ds = tf.data.Dataset.from_tensor_slices((xs, ys)).batch(32)
            preds = []
            for x, y in val_ds:
                preds.append(model.predict(x))
        """, count=1, lines=(7,), spelling="loop: for over a dataset's batches"),
        Invalid("""
            import numpy as np
            import tensorflow as tf
            class Segmenter:
                def __init__(self, path):
                    self.nn = tf.keras.models.load_model(path)
                def __call__(self, patches, segments):
                    out = []
                    for label, start, stop in segments:
                        out.append(self.nn.predict(patches[start:stop]))
                    return out
        """, count=1, lines=(9,), spelling="index: a slice per segment"),
        Invalid("""
            import tensorflow as tf
            from tqdm import tqdm
            from .data import make_test_dataset
            model = tf.keras.models.load_model("net.h5")
            test_set = make_test_dataset("/data/test")
            for step, (example, name) in enumerate(tqdm(zip(test_set, names))):
                images = example["image"]
                write(name, model.predict(images))
        """, count=1, lines=(8,), spelling="name: a field of the batch through a name"),
        Invalid("""
            import tensorflow as tf
            from trainer import Trainer
            trainer = Trainer(tf.keras.models.load_model("net.h5"))
            val_ds = tf.data.Dataset.from_tensor_slices((xs, ys)).batch(64)
            for x, y in val_ds:
                trainer.val_step(x, y)
        """, files={"trainer.py": """
            import tensorflow as tf
            class Trainer:
                def __init__(self, model):
                    self.model = model
                def val_step(self, x, y):
                    y_pred = tf.convert_to_tensor(self.model.predict(x))
                    return tf.reduce_mean(tf.square(y_pred - y))
        """}, count=1, spelling="module: the step in another module"),
        Invalid("""
            import tensorflow as tf
            model = tf.keras.models.load_model("net.h5")
            # %%
            test_ds = tf.keras.utils.image_dataset_from_directory("test", batch_size=32)
            # %%
            for images, labels in test_ds:
                print(model.predict(images).argmax(-1), labels)
        """, count=1, notebook=True, spelling="notebook"),
    )
    valid = (  # type: ignore[assignment]
        *valid,
        Valid("""
            import tensorflow as tf
            model = tf.keras.models.load_model("net.h5")
            val_ds = tf.data.Dataset.from_tensor_slices((xs, ys)).batch(32)
            preds = model.predict(val_ds)
            for x, y in val_ds:
                preds = model(x, training=False)
        """, spelling="loop: one predict, the model called per batch"),
        Valid("""
            import tensorflow as tf
            class Segmenter:
                def __init__(self, path):
                    self.nn = tf.keras.models.load_model(path)
                def __call__(self, patches, segments):
                    pred = self.nn.predict(patches)
                    return [pred[start:stop] for label, start, stop in segments]
        """, spelling="index: one predict, then slices"),
        Valid("""
            import tensorflow as tf
            model = tf.keras.models.load_model("net.h5")
            for path in files:
                batch = load_batch(path)
                write(path, model.predict(batch["image"]))
        """, spelling="name: a batch loaded per file, no dataset"),
        Valid("""
            import tensorflow as tf
            from trainer import Trainer
            trainer = Trainer(tf.keras.models.load_model("net.h5"))
            trainer.val_step(val_ds, None)
        """, files={"trainer.py": """
            import tensorflow as tf
            class Trainer:
                def __init__(self, model):
                    self.model = model
                def val_step(self, x, y):
                    return self.model.predict(x)
        """}, spelling="module: the helper given the whole dataset once"),
        Valid("""
            import tensorflow as tf
            model = tf.keras.models.load_model("net.h5")
            # %%
            test_ds = tf.keras.utils.image_dataset_from_directory("test", batch_size=32)
            # %%
            print(model.predict(test_ds).argmax(-1))
        """, notebook=True, spelling="notebook: one predict over the dataset"),
        # The first few batches shown (TensorFlow's segmentation tutorial's
        # show_predictions(test_batches, 3)): a look at some data, not a pass over it.
        Valid("""
            import tensorflow as tf
            model = tf.keras.models.load_model("unet.h5")
            test_batches = tf.data.Dataset.from_tensor_slices((xs, ys)).batch(32)
            def show_predictions(dataset, num=1):
                for image, mask in dataset.take(num):
                    pred_mask = model.predict(image)
                    display([image[0], mask[0], pred_mask[0]])
            show_predictions(test_batches, 3)
        """, spelling="loop: the first few batches shown"),
        # A project class whose predict is inherited from a base class of the module (a
        # JAX model's wrapper: google-research/skai's WebliViT(VLM)), not Keras's.
        Valid("""
            import numpy as np
            import tensorflow as tf
            class VLM:
                def predict(self, images):
                    return np.asarray(self.apply(images))
            class WebliViT(VLM):
                def apply(self, images):
                    return images.mean(-1)
            model = WebliViT()
            dataset = tf.data.Dataset.from_tensor_slices({"image": images}).batch(8)
            for examples in dataset.as_numpy_iterator():
                scores = model.predict(examples["image"])
        """, spelling="name: a project class's inherited predict"),
    )

    def model_calls(self, ctx: Context) -> list[tuple[ast.Call, Any]]:
        """The calls this rule asks about, each with the model it runs: ``model.predict(x)``
        with a model-like owner."""
        by_attr, _ = ctx.call_groups()
        return [(c, c.func.value) for c in by_attr.get("predict", ())
                if c.args and receiver(ctx, c.func.value, "predict") != "own"
                and model_like(ctx, c.func.value)]

    # Stop 46, wave 2 (precision round 15's miss, a seq2seq decoder): the decoder's
    # predict per generated token, given its one token and the carried states as one list.
    invalid = (  # type: ignore[assignment]
        *invalid,
        Invalid("""
            import numpy as np
            from tensorflow import keras
            decoder = keras.models.load_model("decoder.h5")
            def decode(states, n_words, max_len=50):
                token = np.zeros((1, 1, n_words))
                token[0, 0, 0] = 1.0
                words = []
                while len(words) < max_len:
                    out, h, c = decoder.predict([token] + states)
                    words.append(int(np.argmax(out[0, -1, :])))
                    token = np.zeros((1, 1, n_words))
                    token[0, 0, words[-1]] = 1.0
                    states = [h, c]
                return words
        """, count=1, lines=(9,), spelling="index: a list of inputs, the first a batch of one"),
    )
    valid = (  # type: ignore[assignment]
        *valid,
        # Its twin: 64 sequences decoded together, a token of each per step.
        Valid("""
            import numpy as np
            from tensorflow import keras
            decoder = keras.models.load_model("decoder.h5")
            def decode(states, n_words, max_len=50):
                token = np.zeros((64, 1, n_words))
                words = []
                while len(words) < max_len:
                    out, h, c = decoder.predict([token] + states)
                    words.append(np.argmax(out[:, -1, :], axis=-1))
                    token = np.zeros((64, 1, n_words))
                    states = [h, c]
                return words
        """, spelling="index: a list of inputs, a batch of 64"),
        # Chunks of 500 rows cut by a range inside a progress bar: the caller's batching.
        Valid("""
            import numpy as np
            from tqdm import tqdm
            from tensorflow import keras
            model = keras.models.load_model("m.h5")
            feats = np.load("feats.npy")
            outs = []
            for lix in tqdm(range(0, len(feats), 500)):
                uix = min(len(feats), lix + 500)
                outs.append(model.predict([feats[lix:uix], np.zeros((uix - lix, 20))]))
        """, spelling="loop: a range in a progress bar"),
    )

    @staticmethod
    def model_input(call: ast.Call) -> ast.expr:
        """What the model is given: the call's first argument; for a model of several
        inputs given a list or tuple, its first input, also where the list is the first
        input joined to the others (``[target_seq] + states``, a decoder's token and its
        carried states)."""
        first = call.args[0]
        if type(first) is ast.BinOp and type(first.op) is ast.Add \
                and type(first.left) in (ast.List, ast.Tuple) and first.left.elts:
            return first.left.elts[0]
        if type(first) in (ast.List, ast.Tuple) and first.elts \
                and type(first.elts[0]) is not ast.Starred:
            return first.elts[0]
        return first

    def _piece(self, ctx: Context, given: Any, loop: Any) -> str:
        """Stop 46: ``given`` is a piece that is already a batch, taken per iteration of
        ``loop``: "batch" (a dataset's batch) or "slice" (of one array); "" otherwise.
        Asked only by ``predict`` (a direct model call per batch is the fix, not a cost)."""
        if type(self).model_calls is not PredictPerStep.model_calls:
            return ""
        if dataset_batch(ctx, given, loop):
            return "" if peeks(ctx, loop) else "batch"
        if array_slice(ctx, given, loop):
            return "slice"
        return ""

    def keep_fact(self, project: Project, module: ModuleSummary, fact: dict) -> bool:
        """Whether a published call is still reported once the whole project is seen."""
        return True

    def publish(self, ctx: Context) -> list[dict] | None:
        from tfperf.analysis.summary import position, qualnames

        # This module's classes defining `predict`: another module's `x.predict(...)` on an
        # instance of one runs that method, not Keras's (asked in check_project). Only
        # where this rule keys on the name (not a subclass's own calls).
        predict_rule = type(self).model_calls is PredictPerStep.model_calls
        defined = [{"defines": qualnames(ctx)[c], "keras": keras, "pos": position(ctx, c)}
                   for c, keras in project_classes_defining(ctx, "predict")
                   if c in qualnames(ctx)] \
            if type(self).model_calls is PredictPerStep.model_calls else []
        facts = self._call_facts(ctx) or []
        if predict_rule and not facts and uses_keras(ctx, tensorflow=True):
            # another module's predict on a name like a model is Keras's only if the program
            # uses Keras: importing this module says it may (check_project asks)
            facts = [{"tfmod": True}]
        return facts + defined or None

    def _call_facts(self, ctx: Context) -> list[dict] | None:
        calls = self.model_calls(ctx)
        if not calls:
            return None
        from tfperf.analysis.summary import enclosing_qualname, position
        # TF1's predict runs a graph in a session: the normal call there, and `model(x)`
        # would add ops per call. One example of the loop's own data per call is slow on
        # any TensorFlow (a session run per example: bench_lint_graph_predict.py), and
        # its fix, one predict over all of them, holds there too.
        graph = ctx.tf_version < (2, 0) or graph_mode_module(ctx)
        if graph and not self.per_example:
            return None
        facts: list[dict] = []
        for call, owner in calls:
            if traced(ctx, call) or eager_guarded(ctx, call):
                continue
            given = self.model_input(call)
            loops = ctx.enclosing_loops(call)
            if self.per_example and loops and one_example(ctx, given, loops[0]) \
                    and not iterates_dataset(ctx, loops[0]) \
                    and not tfp105_reports(ctx, call, owner):
                facts.append({"fn": enclosing_qualname(ctx, call), "pos": position(ctx, call),
                              "loop": True, "example": True})
                if few_runs_in_all(ctx, call, FEW_MODEL_CALLS):
                    facts[-1]["few"] = True
                continue
            if graph:
                continue
            piece = self._piece(ctx, given, loops[0]) if loops else ""
            if piece:
                fact = {"fn": enclosing_qualname(ctx, call), "pos": position(ctx, call),
                        "loop": True, "piece": piece}
                if few_runs_in_all(ctx, call, FEW_MODEL_CALLS):
                    fact["few"] = True
                facts.append(fact)
                continue
            if not one_input(ctx, given):
                # `def act(self, state): ... predict(state)`: one input only if the callers
                # pass one (asked of the project: the call sites' `ones`)
                param = _parameter(ctx, given)
                if not param and (is_keras_model(ctx, owner) or kind_of(ctx, owner) == MODEL):
                    # made from a parameter by a helper: asked only of a known Keras model
                    # (a project class's own `predict` takes other inputs)
                    param = _parameter_source(ctx, given)
                if param and not loops:
                    facts.append({"fn": enclosing_qualname(ctx, call),
                                  "pos": position(ctx, call), "loop": False, "param": param})
                continue
            if loops and one_example(ctx, given, loops[0]):
                continue  # the loop's own data, one example per iteration: TFP105's
            fact = {"fn": enclosing_qualname(ctx, call), "pos": position(ctx, call),
                    "loop": bool(loops)}
            if not loops and _batch_of_its_parameter(ctx, given):
                fact["own"] = True
            if loops and few_runs_in_all(ctx, call, FEW_MODEL_CALLS):
                fact["few"] = True
            if loops and self.code == "TFP111":
                arg = _fed_back(ctx, call)
                if arg is not None:
                    fact["fed_back"] = arg
            facts.append(fact)
        if ctx.tf_unpinned:
            for fact in facts:
                fact["unpinned"] = True
        if facts and type(self).model_calls is PredictPerStep.model_calls \
                and _builds_recurrent_layer(ctx):  # (TFP111's hint is about model(x) already)
            for fact in facts:
                fact["rnn"] = True
        if facts and type(self).model_calls is PredictPerStep.model_calls:
            tf_here = uses_keras(ctx, tensorflow=True)
            owners = {tuple(position(ctx, c)): owner for c, owner in calls}
            for fact in facts:
                pos: list[int] = fact["pos"]  # type: ignore[assignment]
                ref = receiver(ctx, owners.get(tuple(pos)), "predict")
                if isinstance(ref, tuple):
                    fact["cls"] = list(ref)  # a class of another project module
                owner = owners.get(tuple(pos))
                if not tf_here and not is_keras_model(ctx, owner) \
                        and kind_of(ctx, owner) != MODEL:
                    # named like a model in a module with no TensorFlow or Keras: another
                    # library's predict (scikit-learn, XGBoost) unless a project module
                    # it imports uses Keras (check_project)
                    fact["notf"] = True
        return facts

    def check_project(self, project: Project) -> Iterator[Finding]:
        predicts = type(self).model_calls is PredictPerStep.model_calls
        for module in project.modules.values():
            facts = [f for f in module.facts.get(self.code, ()) if "defines" not in f
                     and "tfmod" not in f
                     and not _project_method(project, module, f.get("cls"), self.code)]
            if any(f.get("notf") for f in facts) and not _program_uses_keras(
                    project, module, self.code):
                facts = [f for f in facts if not f.get("notf")]
            if facts and facts[0].get("unpinned") and _imports_tf1(project, module):
                # the program runs on TF 1.x: predict is the graph-mode call
                facts = [f for f in facts if f.get("example")]
            for fact in facts:
                if not self.keep_fact(project, module, fact):
                    continue
                if fact.get("few") and not project.called_from_other_modules(module.path):
                    # the loops and this module's callers run it a handful of times in all
                    # (a 4-image plot loop, a helper a script calls once): the saving is
                    # paid back once, a fraction of a second
                    continue
                if fact.get("example"):
                    yield self.project_finding(module.path, fact["pos"], EXAMPLE_MESSAGE,
                                               hint=EXAMPLE_HINT)
                    continue
                if fact.get("piece"):
                    yield self.project_finding(module.path, fact["pos"],
                                               PIECE_MESSAGES[fact["piece"]],
                                               hint=PIECE_HINTS[fact["piece"]])
                    continue
                hint = RECURRENT_HINT if fact.get("rnn") else None
                if fact.get("fed_back"):
                    hint = FED_BACK_HINT.format(arg=fact["fed_back"])
                if fact["loop"]:
                    yield self.project_finding(module.path, fact["pos"], hint=hint)
                    continue
                if "param" in fact:
                    site = _caller_passing_one(project, module.path, fact["fn"], fact["param"],
                                               self.few_calls)
                    if site is not None:
                        yield self.project_finding(
                            module.path, fact["pos"],
                            f"{self.message} (given one input per step at "
                            f"{project.where(site)})", hint=hint)
                    elif predicts and (batch := _caller_passing_batch(
                            project, module.path, fact["fn"], fact["param"])) is not None:
                        yield self.project_finding(
                            module.path, fact["pos"],
                            BATCH_FROM_CALLER.format(where=project.where(batch)),
                            hint=PIECE_HINTS["batch"])
                    elif self.per_env_step:
                        # Run once per environment step (through any chain of callers,
                        # in any module): a step's few observations, never a dataset.
                        site = project.hot_call(module.path, fact["fn"], env=True)
                        if site is not None:
                            yield self.project_finding(
                                module.path, fact["pos"],
                                "model.predict at every environment step: its per-call "
                                "set-up costs more than a small model's forward pass (called "
                                f"per environment step at {project.where(site)})", hint=hint)
                    continue
                site = project.hot_call(module.path, fact["fn"], few=self.few_calls) \
                    if fact["fn"] else None
                if site is not None:
                    yield self.project_finding(
                        module.path, fact["pos"],
                        f"{self.message} (called per step at {project.where(site)})", hint=hint)
                elif fact.get("own") and project.entered_from_outside(module.path, fact["fn"]):
                    yield self.project_finding(module.path, fact["pos"], self.own_message,
                                               hint=hint)
