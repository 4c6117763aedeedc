"""TFP119: a Keras model, weighted layer or optimizer built in code that runs per step, and
used there: new weights (or optimizer state) and new traces on every call."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from tfperf.core.findings import Finding
from tfperf.lint.analysis.callers import calls_of
from tfperf.lint.analysis.imports import imported_from
from tfperf.lint.analysis.keras_models import is_keras_model
from tfperf.lint.analysis.loops import iterates_dataset
from tfperf.lint.analysis.trips import trip_count
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context

if TYPE_CHECKING:
    from tfperf.analysis.project import Project

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
_LAYER_PREFIXES = ("keras.layers.", "tensorflow.compat.v1.keras.layers.")
# Layers that own weights: one built per call starts from new random weights each time.
_WEIGHTED = frozenset({"Dense", "Embedding", "LSTM", "GRU", "SimpleRNN", "Bidirectional",
                       "BatchNormalization", "LayerNormalization", "MultiHeadAttention",
                       "EinsumDense", "PReLU", "LSTMCell", "GRUCell", "SimpleRNNCell"})
_OPTIMIZER_PREFIXES = ("keras.optimizers.", "tensorflow.optimizers.")
# What a model is given when it is trained where it is built (a model per fold, per trial,
# per ensemble member): building it there is the point.
_TRAINED = frozenset({"fit", "compile", "train_on_batch", "fit_generator",
                      # saved where it is built: a conversion or export per iteration
                      "save", "save_weights", "to_json", "export"})
# Calls that keep what they are given (a container, a registry): the object outlives the call.
_KEEPERS = frozenset({"append", "extend", "add", "insert", "setdefault", "put", "update",
                      "register", "appendleft"})
_USES = frozenset({"predict", "predict_on_batch", "apply_gradients", "minimize", "call",
                   "evaluate", "__call__"})
# Methods run once per object (or per build): a model made there is made once.
_SETUP = frozenset({"__init__", "build", "setup", "set_up", "setUp", "__post_init__",
                    "build_model", "_build", "create_model", "make_model", "get_model",
                    "reset", "init", "compile"})
# A loop body doing one of these is a step (a batch trained or inferred, an environment
# stepped, a session run), not the construction of a model layer by layer.
# (`.numpy()` is not one: a conversion script compares outputs that way.)
_STEP_METHODS = frozenset({"gradient", "apply_gradients", "train_on_batch", "predict",
                           "predict_on_batch", "run", "step", "minimize"})
_HANDFUL = 8


def built_object(ctx: Context, call: ast.Call) -> str | None:
    """What ``call`` builds, when it is a Keras model, a weighted layer or an optimizer:
    "model", "layer", "optimizer"; else None."""
    q = ctx.call_qualname(call) or ""
    last = q.rsplit(".", 1)[-1]
    if q.startswith(_LAYER_PREFIXES):
        return "layer" if last in _WEIGHTED or last.startswith(
            ("Conv", "DepthwiseConv", "SeparableConv")) else None
    # (a learning-rate schedule is no optimizer: `optimizers.schedules.ExponentialDecay`)
    if q.startswith(_OPTIMIZER_PREFIXES) and last[:1].isupper() and ".schedules." not in q:
        return "optimizer"
    if is_keras_model(ctx, call):
        return "model"
    return None


def _uses(ctx: Context, call: ast.Call) -> list[ast.AST] | None:
    """How the new object is used where it is built: called on the spot (``Dense(8)(x)``)
    or bound to a name only called or used through ``predict``/``apply_gradients``. None
    when it escapes (returned, stored on ``self`` or in a container, passed on) or is
    trained there (``fit``/``compile``)."""
    parent = ctx.parent(call)
    if type(parent) is ast.Call and parent.func is call:
        return [parent]
    if type(parent) is not ast.Assign or len(parent.targets) != 1 \
            or type(parent.targets[0]) is not ast.Name:
        return None
    name = parent.targets[0].id
    uses: list[ast.AST] = []
    for n in ctx.name_loads(name):
        b = ctx.binding(n)
        if b is None or b.value is not call:
            continue
        use = ctx.parent(n)
        if type(use) is ast.Call and use.func is n:
            uses.append(use)
        elif type(use) is ast.Attribute and use.attr in _TRAINED:
            return None
        elif type(use) is ast.Attribute and use.attr in _USES:
            uses.append(use)
        elif type(use) is ast.Attribute:
            continue  # `model.summary()`, `opt.learning_rate`: neither a use nor an escape
        elif type(use) is ast.Call and n in use.args and not (
                type(use.func) is ast.Attribute and use.func.attr in _KEEPERS):
            continue  # handed to a helper for this call (`grad_cam(img, model)`): not kept
        else:
            return None
    return uses or None


def _step_loop(ctx: Context, loop: ast.AST) -> bool:
    """The loop runs steps: it walks a dataset, or its body trains, infers, steps an
    environment or runs a session (a loop that only stacks layers builds a model)."""
    if type(loop) not in (ast.For, ast.AsyncFor, ast.While):
        return False
    n = trip_count(ctx, loop)
    if n is not None and n <= _HANDFUL:
        return False
    if iterates_dataset(ctx, loop):
        return True
    for c in ast.walk(loop):
        if type(c) is not ast.Call or type(c.func) is not ast.Attribute \
                or c.func.attr not in _STEP_METHODS:
            continue
        if c.func.attr != "run" or "sess" in ctx.source_of(c.func.value):
            return True
    return False


def _builds_functional(ctx: Context) -> bool:
    """The module builds a functional model (``keras.Input``): helpers that apply layers to
    a symbolic input are model construction, run once."""
    def compute() -> bool:
        return any((ctx.call_qualname(c) or "").endswith(("keras.Input", "keras.layers.Input"))
                   for c in ctx.calls)
    return bool(ctx.cached("tfp119_functional", compute))


def _keras_call_method(ctx: Context, fn: ast.AST) -> bool:
    """``call``/``__call__`` of a Keras layer or model subclass: runs on every call."""
    cls = ctx.parent(fn)
    return type(cls) is ast.ClassDef and getattr(fn, "name", "") in ("call", "__call__") \
        and ctx.is_keras_class(cls)


def _rebuilt_default(ctx: Context, call: ast.Call, fn: ast.AST) -> bool:
    """``if model is None: model = build(...)`` where ``model`` is a parameter of ``fn``
    defaulting to None: every call not handed a model builds (and loads) one anew."""
    stmt = ctx.parent(call)
    if type(stmt) is not ast.Assign or len(stmt.targets) != 1 \
            or type(stmt.targets[0]) is not ast.Name:
        return False
    name = stmt.targets[0].id
    args: Any = getattr(fn, "args", None)
    if args is None:
        return False
    params = [*args.posonlyargs, *args.args]
    defaults = dict(zip([a.arg for a in params[len(params) - len(args.defaults):]],
                        args.defaults, strict=True))
    defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)
                     if d is not None})
    default = defaults.get(name)
    if type(default) is not ast.Constant or default.value is not None:
        return False
    test = getattr(ctx.parent(stmt), "test", None)
    if not ((type(test) is ast.Compare and type(test.left) is ast.Name
             and test.left.id == name and len(test.ops) == 1 and type(test.ops[0]) is ast.Is)
            or (type(test) is ast.UnaryOp and type(test.op) is ast.Not
                and type(test.operand) is ast.Name and test.operand.id == name)):
        return False
    # Called here, and only outside loops (a script's one `classify(all_images)`): the
    # default is built once per run. Not called here (a library's API): its callers loop.
    calls = calls_of(ctx, fn)
    return not calls or any(ctx.enclosing_loops(c) for c in calls)


# A function whose name says it builds or loads a model (`make_open_nsfw_model`,
# `build_model`, `load_model`, `create_keras_model`): where its module is not linted with
# this one (a file named alone), the name is all there is.
_FACTORY_NAME = re.compile(r"^_?(?:make|build|create|get|load|init|construct|new)_?\w*model$",
                           re.IGNORECASE)


def _named_factory(call: ast.Call) -> bool:
    f = call.func
    name = f.id if type(f) is ast.Name else (f.attr if type(f) is ast.Attribute else "")
    return bool(_FACTORY_NAME.match(name))


def _names_read(call: ast.Call) -> set[str]:
    return {n.id for a in (*call.args, *(k.value for k in call.keywords))
            for n in ast.walk(a) if type(n) is ast.Name}


_WEIGHT_LOADS = frozenset({"load_weights", "set_weights"})


def _weight_loads(ctx: Context, call: ast.Call) -> list[ast.Call]:
    """``model.load_weights(...)``/``set_weights(...)`` on the name ``call`` is bound to:
    what the built model holds comes from there."""
    parent = ctx.parent(call)
    if type(parent) is not ast.Assign or len(parent.targets) != 1 \
            or type(parent.targets[0]) is not ast.Name:
        return []
    out = []
    for n in ctx.name_loads(parent.targets[0].id):
        b = ctx.binding(n)
        use = ctx.parent(n)
        if b is not None and b.value is call and type(use) is ast.Attribute \
                and use.attr in _WEIGHT_LOADS:
            loader = ctx.parent(use)
            if type(loader) is ast.Call and loader.func is use:
                out.append(loader)
    return out


def _varies_with(ctx: Context, call: ast.Call, scope: ast.AST) -> bool:
    """The builder is given something bound in ``scope`` (the loop's own variables or
    values made in its body; a function's parameters): each iteration or call may build a
    different object (a model per path, a sub-model per layer, one model per checkpoint
    whose weights it loads), not the same one again."""
    names = _names_read(call).union(*(_names_read(c) for c in _weight_loads(ctx, call)))
    if not names:
        return False
    if type(scope) in _DEFS:
        args: Any = scope.args
        params = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
        return bool(names & params)
    bound = {n.id for n in ast.walk(scope) if type(n) is ast.Name and type(n.ctx) is ast.Store}
    return bool(names & bound)


def _used_in_this_loop(ctx: Context, uses: list[ast.AST], loop: ast.AST) -> bool:
    """A use runs once per iteration of ``loop`` itself, and none in a loop nested in it (an
    optimizer per ensemble member stepping over that member's batches, a model per fold
    trained over its batches and then scored once: built per run)."""
    chains = [ctx.enclosing_loops(u) for u in uses]
    return any(c[:1] == [loop] for c in chains) \
        and not any(any(outer is loop for outer in c[1:]) for c in chains)


def _guard_of(ctx: Context, call: ast.Call) -> ast.AST:
    """The ``if model is None:`` around ``model = build()`` (``call`` itself if none)."""
    stmt = ctx.parent(call)
    guard = ctx.parent(stmt) if stmt is not None else None
    return guard if type(guard) is ast.If else call


def _factories(ctx: Context) -> list[str]:
    """Module-level functions of this module that return a Keras model on every path
    (``def make_model(...): ... return keras.Model(inputs, outputs)``)."""
    out = []
    for stmt in ctx.tree.body:
        if type(stmt) in _DEFS:
            rets = [n for n in ast.walk(stmt) if type(n) is ast.Return and n.value is not None
                    and ctx.enclosing_function(n) is stmt]
            if rets and all(is_keras_model(ctx, r.value) for r in rets):
                out.append(stmt.name)
    return out


def _imported_call(ctx: Context, call: ast.Call) -> tuple[str, str] | None:
    """(module, name) of a call of a function imported from another module."""
    return imported_from(ctx, call.func)


def _steps_itself(ctx: Context, uses: list[ast.AST], model: bool = False) -> bool:
    """The helper runs one step with the object it built (``predict``, ``apply_gradients``;
    for a model, calling it too), not in a loop of its own: whatever loop calls it runs that
    step per iteration. A helper that loops over batches itself is a training run, built
    once per run; a layer called once may be a model being put together."""
    return any((type(u) is ast.Attribute and u.attr in _STEP_METHODS)
               or (model and type(u) is ast.Call) for u in uses) \
        and not any(ctx.enclosing_loops(u) for u in uses)


def _per_step_function(ctx: Context, fn: ast.AST, stepping: bool = False) -> ast.AST | None:
    """A call of ``fn`` in a step loop of this module (not traced); ``stepping``: ``fn``
    itself runs a step, so any loop of more than a handful of iterations counts."""
    for c in calls_of(ctx, fn):
        loops = ctx.enclosing_loops(c)
        if not loops or ctx.in_tf_function(c) or type(loops[0]) not in (ast.For, ast.While):
            continue
        if _step_loop(ctx, loops[0]):
            return c
        n = trip_count(ctx, loops[0])
        if stepping and (n is None or n > _HANDFUL):
            return c
    return None


_STEP_MESSAGE = ("a Keras {what} is built and used in code that runs per step: new weights, "
                 "new state and new traces on every call")
_DEFAULT_MESSAGE = ("a Keras {what} is built (and its weights loaded) on every call not "
                    "handed one, then used once: callers in a loop rebuild it per item")


class ModelBuiltPerCall(Rule):
    code = "TFP119"
    name = "model-built-per-call"
    # The summary `tfperf rule` and SARIF show: plain text (a finding names what is built).
    message = ("a Keras model is built and used in code that runs per step: new weights, "
               "new state and new traces on every call")
    hint = ("build it once (module level, __init__, or a cached attribute) and reuse it; "
            "load a saved model once, not per call")
    claims = ("S13",)
    group = "preview"  # judged on too little user code yet (stop 42: docs/lint.md)
    node_types = (ast.Call,)
    requires_imports = frozenset({"tensorflow", "keras", "keras_core"})
    docs = """\
## What it does
Finds a Keras model (`Sequential`, `Model`, `load_model`, `keras.applications.X`, a model
class or a module function that returns one), a layer that owns weights (`Dense`, `Conv*`,
`Embedding`, recurrent and normalisation layers) or an optimizer built and then used (called,
`predict`, `apply_gradients`) in code that runs per step:
- the body of an eager loop that runs steps (it walks a dataset, or trains, infers, steps an
  environment or runs a session; not a loop of eight iterations or fewer);
- a function called from such a loop in this module, or run per iteration of one in another
  module of the project (an agent's `act()` called every environment step);
- `call()` of a Keras layer or model subclass.
- the default of a `model=None` parameter, `if model is None: model = build(...)`, then one
  use (a single-item API whose callers loop; not where this module calls it only outside
  loops): the builder a Keras factory of this module,
  one of another module (through the project), or a function named for a model
  (`make_*_model`, `build_model`, `load_model`) when its module is not linted alongside.
Not reported: objects built in `__init__`/`build`/setup methods, stored on `self`, returned or
put in a container, models trained or saved where they are built (`fit`/`compile`/`save`: a
model per fold, per trial, a conversion), builders given values bound by the loop or by the
function's parameters (a model per path the caller names, a sub-model per layer, a model
whose `load_weights`/`set_weights` is given such a value: one per checkpoint), objects used
in a loop nested inside the iteration (an optimizer per ensemble member, stepped over that
member's batches; a model per fold, trained there and scored once), and learning-rate
schedules.

## Why is this bad?
Each build makes new variables with new random values (the "model" forgets what it learned:
usually a bug), runs Keras's build, and a traced call traces again: a new optimizer starts its
moments from zero on every step. Measured (`benchmarks/lint_fixes/rule_claims.py --cases
TFP119`, TF 2.21 CPU, a 64-128-10 dense model on 32 inputs, 50 calls): built per call vs
once, model 14x, layer 9.9x, optimizer 2.6x; a model built and traced with `tf.function` per
call 77x.

## Example
```python
def act(state):
    q_net = tf.keras.Sequential([tf.keras.layers.Dense(64), tf.keras.layers.Dense(2)])
    return tf.argmax(q_net(state[None]), axis=1)

for t in range(steps):
    state, reward, done, _ = env.step(act(state))
```

## Use instead
```python
q_net = tf.keras.Sequential([tf.keras.layers.Dense(64), tf.keras.layers.Dense(2)])

def act(state):
    return tf.argmax(q_net(state[None]), axis=1)
```

## Fix safety
No automatic fix. Building once changes what the code computes where the per-call object
was meant to be fresh (a random projection drawn anew each call): keep such code, or draw the
random values explicitly.

## Known limitations
Third-party detectors and wrappers that build a model inside (`MTCNN()`, a library's
`Predictor`) are not known as models. A helper that applies layers to a symbolic input in a
module that builds a functional model (`keras.Input`) is taken as model construction.
"""
    valid = (
        Valid("""
            import tensorflow as tf
            q_net = tf.keras.Sequential([tf.keras.layers.Dense(2)])
            def act(state):
                return q_net(state[None])
            for t in range(1000):
                state, reward, done, _ = env.step(act(state))
        """, spelling="loop: the model built once, outside"),
        Valid("""
            import tensorflow as tf
            from sklearn.model_selection import KFold
            def build():
                return tf.keras.Sequential([tf.keras.layers.Dense(1)])
            for train_idx, val_idx in KFold(5).split(X):
                model = build()
                model.compile("adam", "mse")
                model.fit(X[train_idx], y[train_idx], epochs=3)
                model.predict(X[val_idx])
        """, spelling="index: a model per fold, trained where it is built"),
        Valid("""
            import tensorflow as tf
            from tensorflow.keras import layers
            def block(x, filters):
                y = layers.Conv2D(filters, 3, padding="same")(x)
                return layers.Add()([x, y])
            inputs = tf.keras.Input((32, 32, 16))
            x = inputs
            for i in range(num_blocks):
                x = block(x, 16)
            model = tf.keras.Model(inputs, x)
        """, spelling="name: a functional model built block by block"),
        Valid("""
            import tensorflow as tf
            from agent import Agent
            agent = Agent()
            for t in range(1000):
                state, reward, done, _ = env.step(agent.act(state))
        """, files={"agent.py": """
            import tensorflow as tf
            class Agent:
                def __init__(self):
                    self.q_net = tf.keras.Sequential([tf.keras.layers.Dense(2)])
                def act(self, state):
                    return self.q_net(state[None])
        """}, spelling="module"),
        Valid("""
            import tensorflow as tf
            # %%
            opt = tf.keras.optimizers.Adam(1e-3)
            # %%
            for x, y in ds:
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean((model(x) - y) ** 2)
                grads = tape.gradient(loss, model.trainable_variables)
                opt.apply_gradients(zip(grads, model.trainable_variables))
        """, notebook=True, spelling="notebook"),
        Valid("""
            import tensorflow as tf
            class Block(tf.keras.layers.Layer):
                def __init__(self):
                    super().__init__()
                    self.dense = tf.keras.layers.Dense(8)
                def call(self, x):
                    return tf.nn.relu(self.dense(x))
        """, spelling="name: a layer built in __init__, used in call"),
        Valid("""
            import tensorflow as tf
            for units in [16, 32, 64]:
                probe = tf.keras.Sequential([tf.keras.layers.Dense(units)])
                print(probe(x).shape)
        """, spelling="loop: a sweep over three sizes"),
        # A conversion script: a model built per checkpoint, saved, outputs compared.
        Valid("""
            import numpy as np
            import tensorflow as tf
            for name in names:
                mm = tf.keras.Sequential([tf.keras.layers.Dense(4)])
                out = mm(tf.ones([1, 4]))
                mm.load_weights(name + ".h5")
                mm.save(name + "_converted.h5")
                print(np.allclose(out.numpy(), ref[name].numpy()))
        """, spelling="index: a model built and saved per checkpoint"),
        # A whole training run per call (its own loop over batches): one optimizer per run.
        Valid("""
            import tensorflow as tf
            def train(model, batches, lr):
                optimizer = tf.keras.optimizers.Adam(lr)
                for x, y in batches:
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_mean((model(x) - y) ** 2)
                    optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables),
                                                  model.trainable_variables))
            for lr in learning_rates:
                train(build(), batches, lr)
        """, spelling="loop: a training run per learning rate"),
        # The model handed in, or kept in a module-level cache: built once.
        Valid("""
            import tensorflow as tf
            from nets import make_model
            _MODEL = None
            def predict_image(path, model=None):
                global _MODEL
                if model is None:
                    if _MODEL is None:
                        _MODEL = make_model("weights.h5")
                    model = _MODEL
                return float(model(load(path)[None])[0][1])
        """, files={"nets.py": """
            import tensorflow as tf
            def make_model(weights):
                m = tf.keras.Sequential([tf.keras.layers.Dense(2)])
                m.load_weights(weights)
                return m
        """}, spelling="module"),
        Valid("""
            import tensorflow as tf
            def predict_image(path, model):
                return float(model(load(path)[None])[0][1])
        """, spelling="name: the model a required parameter"),
        Valid("""
            from ._model import make_open_nsfw_model
            def predict_images(paths, model=None):
                if model is None:
                    model = make_open_nsfw_model()
                return [float(model(load(p)[None])[0][1]) for p in paths]
        """, spelling="loop: a default model built once per batch of paths"),
        # A model per path (the caller picks it), a sub-model per layer, an optimizer per
        # ensemble member: a different object each time, not the same one rebuilt.
        Valid("""
            import tensorflow as tf
            def get_prediction(model_path, ds):
                model = tf.keras.models.load_model(model_path)
                return model.predict(ds.batch(32))
            for path in model_paths:
                results.append(get_prediction(path, ds))
        """, spelling="name: a model per path, given by the caller"),
        Valid("""
            import tensorflow as tf
            acts = []
            for name in conv_layer_names:
                out = model.get_layer(name).output
                sub = tf.keras.Model(inputs=[model.input], outputs=[out])
                acts.append(sub.predict(image))
        """, spelling="loop: a sub-model per layer"),
        Valid("""
            import tensorflow as tf
            for i in range(ensemble_size):
                model = make_member()
                optimizer = tf.keras.optimizers.Adam(1e-3)
                for x, y in train_ds:
                    with tf.GradientTape() as tape:
                        loss = loss_fn(model(x), y)
                    grads = tape.gradient(loss, model.trainable_variables)
                    optimizer.apply_gradients(zip(grads, model.trainable_variables))
        """, spelling="loop: an optimizer per ensemble member, stepped in its own loop"),
        # A model per fold, trained over its batches in a nested loop, then scored once.
        Valid("""
            import tensorflow as tf
            def build_model():
                return tf.keras.Sequential([tf.keras.layers.Dense(64), tf.keras.layers.Dense(1)])
            for fold, (tr, va) in enumerate(folds):
                model = build_model()
                opt = tf.keras.optimizers.Adam(1e-3)
                for xb, yb in tf.data.Dataset.from_tensor_slices((X[tr], Y[tr])).batch(32):
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_mean((model(xb) - yb) ** 2)
                    grads = tape.gradient(loss, model.trainable_variables)
                    opt.apply_gradients(zip(grads, model.trainable_variables))
                scores.append(float(tf.reduce_mean((model(X[va]) - Y[va]) ** 2)))
        """, spelling="loop: a model per fold, trained in a nested loop, scored once"),
        # One model per checkpoint (its weights loaded from the loop's item, or from a
        # parameter): a different model each time.
        Valid("""
            import tensorflow as tf
            def build_model():
                return tf.keras.Sequential([tf.keras.layers.Dense(64), tf.keras.layers.Dense(10)])
            for ckpt in checkpoints:
                model = build_model()
                model.load_weights(ckpt)
                preds.append(model.predict(x_test))
        """, spelling="name: a model per checkpoint, its weights loaded from the loop's item"),
        Valid("""
            import tensorflow as tf
            def evaluate_run(run_dir):
                model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
                model.load_weights(run_dir + "/ckpt")
                return model.predict(x_test)
            for run in range(12):
                print(evaluate_run(f"runs/{run}"))
        """, spelling="index: a model per run directory the caller names"),
        Valid("""
            import tensorflow as tf
            for step, (x, y) in enumerate(train_ds):
                lr = tf.keras.optimizers.schedules.ExponentialDecay(0.1, 1000, 0.9)(step)
                opt.learning_rate.assign(lr)
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean((model(x) - y) ** 2)
                opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables),
                                        model.trainable_variables))
        """, spelling="loop: a learning-rate schedule (no optimizer) made per step"),
        Valid("""
            import tensorflow as tf
            def classify(images, model=None):
                if model is None:
                    model = tf.keras.applications.MobileNetV2()
                return model.predict(images)
            preds = classify(all_images)
        """, spelling="name: a default model, the function called once here, outside loops"),
    )
    invalid = (
        Invalid("""
            import tensorflow as tf
            def act(state):
                q_net = tf.keras.Sequential([tf.keras.layers.Dense(64), tf.keras.layers.Dense(2)])
                return tf.argmax(q_net(state[None]), axis=1)
            for t in range(1000):
                state, reward, done, _ = env.step(act(state))
        """, count=1, lines=(3,), spelling="loop: a helper called every environment step"),
        Invalid("""
            import tensorflow as tf
            for x, y in train_ds:
                opt = tf.keras.optimizers.Adam(1e-3)
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean((model(x) - y) ** 2)
                grads = tape.gradient(loss, model.trainable_variables)
                opt.apply_gradients(zip(grads, model.trainable_variables))
        """, count=1, lines=(3,), spelling="loop: an optimizer built per batch"),
        Invalid("""
            import tensorflow as tf
            def predict_image(path):
                model = tf.keras.models.load_model("model.h5")
                return model.predict(load(path))
            for i in range(len(paths)):
                preds.append(predict_image(paths[i]))
        """, count=1, lines=(3,), spelling="index: a saved model loaded per image"),
        Invalid("""
            import tensorflow as tf
            class Head(tf.keras.layers.Layer):
                def call(self, x):
                    return tf.keras.layers.Dense(10)(x)
        """, count=1, lines=(4,), spelling="name: a layer built in call()"),
        Invalid("""
            import tensorflow as tf
            from agent import Agent
            agent = Agent()
            for t in range(1000):
                state, reward, done, _ = env.step(agent.act(state))
        """, files={"agent.py": """
            import tensorflow as tf
            class Agent:
                def act(self, state):
                    net = tf.keras.Sequential([tf.keras.layers.Dense(2)])
                    return net(state[None])
        """}, count=1, spelling="module"),
        Invalid("""
            import tensorflow as tf
            # %%
            def score(batch):
                head = tf.keras.layers.Dense(1)
                return head(batch)
            # %%
            for x in tf.data.Dataset.from_tensor_slices(X).batch(32):
                print(score(x).numpy())
        """, count=1, notebook=True, spelling="notebook"),
        # Round 2's F026 shape (a library's single-image API): a default model built and its
        # weights loaded on every call not handed one.
        Invalid("""
            import tensorflow as tf
            from ._nets import open_nsfw
            def predict_image(image_path, model=None, weights_path="w.h5"):
                image = preprocess(image_path)
                if model is None:
                    model = open_nsfw(weights_path=weights_path)
                return float(model(image[None])[0][1])
        """, files={"_nets.py": """
            import tensorflow as tf
            def open_nsfw(weights_path=None):
                inputs = tf.keras.Input((224, 224, 3))
                outputs = tf.keras.layers.Dense(2)(tf.keras.layers.Flatten()(inputs))
                model = tf.keras.Model(inputs, outputs)
                if weights_path is not None:
                    model.load_weights(weights_path)
                return model
        """}, count=1, lines=(5,), spelling="module: a default model built per call"),
        Invalid("""
            import tensorflow as tf
            def build():
                return tf.keras.models.load_model("clf.h5")
            def classify(x, model=None):
                if model is None:
                    model = build()
                return model.predict(x[None])
        """, count=1, lines=(5,), spelling="name: a default model loaded per call"),
        # The file named alone: the builder's name says what it makes.
        Invalid("""
            import numpy as np
            from keras_core import Model
            from ._model import make_open_nsfw_model
            def predict_image(image_path, model: Model = None):
                image = preprocess(image_path)
                if model is None:
                    model = make_open_nsfw_model()
                return float(model(np.expand_dims(image, 0))[0][1])
        """, count=1, lines=(6,), spelling="name: a builder named for a model, module unseen"),
    )

    def applies_to(self, ctx: Context) -> bool:
        # (publish also runs here: a helper may use a model an imported factory builds)
        return ctx.imports_tf or not ctx.imported_roots.isdisjoint(("keras", "keras_core"))

    @staticmethod
    def _spells_keras(ctx: Context) -> bool:
        """Every object the module check reports is Keras's, spelt in the module."""
        return bool(ctx.cached("tfp119.keras", lambda: "keras" in ctx.source))

    def _site(self, ctx: Context, call: ast.Call, uses: list[ast.AST]) -> str | None:
        """Why the code around ``call`` runs per step ("loop", "call()", "caller"), or
        None."""
        loops = ctx.enclosing_loops(call)
        if loops:
            loop = loops[0]
            return "loop" if _step_loop(ctx, loop) and _used_in_this_loop(ctx, uses, loop) \
                and not _varies_with(ctx, call, loop) else None
        fn = ctx.enclosing_function(call)
        if fn is None or type(fn) not in _DEFS or fn.name in _SETUP:
            return None
        if _keras_call_method(ctx, fn):
            return "call()"
        if _rebuilt_default(ctx, call, fn) and _steps_itself(ctx, uses, model=True):
            return "default"
        if _builds_functional(ctx):
            return None
        if _varies_with(ctx, call, fn):
            return None  # the caller picks what is built (`load_model(model_path)`)
        return "caller" if _per_step_function(ctx, fn, _steps_itself(ctx, uses)) is not None \
            else None

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Finding]:
        call: Any = node
        if _named_factory(call) and built_object(ctx, call) is None:
            yield from self._default_by_name(ctx, call)
            return
        if not self._spells_keras(ctx):
            return
        what = built_object(ctx, call)
        uses = _uses(ctx, call) if what is not None else None
        if what is None or uses is None:
            return
        site = self._site(ctx, call, uses)
        # Keras traces call(): still a new layer per call there; elsewhere traced code
        # builds once per trace.
        if site == "default" and not ctx.in_tf_function(call):
            # the `if model is None:` block is the cause: reported over it
            yield self.finding(ctx, _guard_of(ctx, call), end_node=call,
                               message=_DEFAULT_MESSAGE.format(what=what))
        elif site == "call()" or (site is not None and not ctx.in_tf_function(call)):
            yield self.finding(ctx, call, message=_STEP_MESSAGE.format(what=what))

    def _default_by_name(self, ctx: Context, call: ast.Call) -> Iterator[Finding]:
        """``if model is None: model = make_model(...)`` with a builder named for what it
        makes, then one use: the default path rebuilds the model on every call."""
        fn = ctx.enclosing_function(call)
        if fn is None or type(fn) not in _DEFS or fn.name in _SETUP \
                or ctx.in_tf_function(call) or ctx.enclosing_loops(call) \
                or not _rebuilt_default(ctx, call, fn):
            return
        uses = _uses(ctx, call)
        if uses is not None and _steps_itself(ctx, uses, model=True):
            yield self.finding(ctx, _guard_of(ctx, call), end_node=call,
                               message=_DEFAULT_MESSAGE.format(what="model"))

    def publish(self, ctx: Context) -> list[dict] | None:
        """Functions that build and use a model, layer or optimizer, not reported here (no
        step loop of this module runs them): the project says whether one runs them."""
        src = ctx.source
        # what a helper using a model it did not build here spells (a cheap gate)
        steps = "model" in src or ".predict" in src or "apply_gradients" in src
        keras_here = self.applies_to(ctx) and self._spells_keras(ctx)
        if not (ctx.imports_tf or "keras" in src or steps):
            return None
        # a module that puts a functional model together: its layer calls are construction
        # (its factories are still published)
        keras_here = keras_here and not _builds_functional(ctx)
        from tfperf.analysis.summary import enclosing_qualname, position

        facts: list[dict] = [{"factory": name} for name in _factories(ctx)] \
            if "keras" in src else []
        for call in ctx.calls:
            imported = _imported_call(ctx, call) if steps else None
            if imported is not None and built_object(ctx, call) is None \
                    and not ctx.in_tf_function(call) and not _named_factory(call):
                fn = ctx.enclosing_function(call)
                uses = _uses(ctx, call)
                if fn is not None and type(fn) in _DEFS and fn.name not in _SETUP \
                        and uses is not None and not ctx.enclosing_loops(call) \
                        and _steps_itself(ctx, uses, model=True):
                    default = _rebuilt_default(ctx, call, fn)
                    at = position(ctx, call)
                    if default:  # over the `if model is None:` block, as the module check
                        at[:2] = position(ctx, _guard_of(ctx, call))[:2]
                    facts.append({"fn": enclosing_qualname(ctx, call),
                                  "pos": at, "what": "model",
                                  "callee": list(imported),
                                  "default": default,
                                  "local": _per_step_function(ctx, fn, True) is not None
                                  and not _varies_with(ctx, call, fn)})
                    continue
            what = built_object(ctx, call) if keras_here else None
            if what is None or ctx.enclosing_loops(call) or ctx.in_tf_function(call):
                continue
            fn = ctx.enclosing_function(call)
            if fn is None or type(fn) not in _DEFS or fn.name in _SETUP \
                    or _keras_call_method(ctx, fn):
                continue
            uses = _uses(ctx, call)
            if uses is None or _per_step_function(ctx, fn, _steps_itself(ctx, uses)) is not None \
                    or _rebuilt_default(ctx, call, fn):
                continue  # reported by the module's own check
            if _varies_with(ctx, call, fn):
                continue  # the caller picks what is built
            facts.append({"fn": enclosing_qualname(ctx, call), "pos": position(ctx, call),
                          "what": what})
        return facts or None

    def check_project(self, project: Project) -> Iterator[Finding]:
        for module in project.modules.values():
            for fact in module.facts.get(self.code, ()):
                if "fn" not in fact:
                    continue
                if "callee" in fact:
                    spec, name = fact["callee"]
                    other = project.module(module.path, spec)
                    if other is None or not any(f.get("factory") == name
                                                for f in other.facts.get(self.code, ())):
                        continue
                    if fact["default"]:
                        yield self.project_finding(
                            module.path, fact["pos"],
                            f"{name}() builds a Keras model (and loads its weights) on every "
                            f"call of {fact['fn'].rsplit('.', 1)[-1]}() not handed one, then "
                            "uses it once: callers in a loop rebuild it per item")
                        continue
                    if fact["local"]:
                        yield self.project_finding(
                            module.path, fact["pos"],
                            f"{name}() builds a Keras model, used once in "
                            f"{fact['fn'].rsplit('.', 1)[-1]}(), which a loop here calls: new "
                            "weights, new state and new traces on every call")
                        continue
                site = project.hot_call(module.path, fact["fn"], env=True)
                if site is None:
                    continue
                yield self.project_finding(
                    module.path, fact["pos"],
                    f"a Keras {fact['what']} is built and used in {fact['fn']}(), run every "
                    f"environment step (at {project.where(site)}): new weights, new state and "
                    "new traces on every call")
