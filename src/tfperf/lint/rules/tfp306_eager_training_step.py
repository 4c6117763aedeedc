"""TFP306: a GradientTape training step run eagerly, step after step, in a loop."""

from __future__ import annotations

import ast
import dataclasses
import re
import textwrap
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from tfperf.core.findings import Finding, Fix
from tfperf.lint.analysis.callers import calls_of
from tfperf.lint.analysis.eager_steps import is_tape_with, trains
from tfperf.lint.analysis.host import host_conversion
from tfperf.lint.analysis.sessions import graph_mode_module
from tfperf.lint.analysis.tf_functions import decorated_into_tf_function
from tfperf.lint.analysis.traced import eager_guarded
from tfperf.lint.analysis.trips import FEW_MODEL_CALLS, few_runs
from tfperf.lint.analysis.varying import episode_list_input
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context

if TYPE_CHECKING:
    from tfperf.analysis.project import Project

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


_GRADIENTS_MESSAGE = ("gradients of the model's weights (GradientTape) computed eagerly in a "
                      "loop")


def _updates(nodes: list[ast.AST]) -> bool:
    """The statements apply an update themselves (``apply_gradients``/``minimize``)."""
    return any(type(n) is ast.Call and type(n.func) is ast.Attribute
               and n.func.attr in ("apply_gradients", "minimize")
               for stmt in nodes for n in ast.walk(stmt))


# Calls that need eager execution: a step that makes them cannot just be decorated.
_EAGER_ONLY_ATTRS = frozenset({"numpy", "predict", "predict_on_batch", "evaluate", "fit"})


def _host_work(ctx: Context, fn: ast.AST) -> tuple[str, bool] | None:
    """What in the step needs eager execution (``model.predict``, ``.numpy()``, a NumPy
    function, ``int(t)``), named for the message, and whether it surely does: a NumPy call
    none of whose arguments is known to be a tensor may run on Python values, which works
    at trace time (``np.delete(np.arange(n), i)``). ``None`` when there is none."""
    maybe = None
    for n in ast.walk(fn):
        if type(n) is not ast.Call:
            continue
        func = n.func
        if type(func) is ast.Attribute and func.attr in _EAGER_ONLY_ATTRS:
            return f".{func.attr}()", True
        conv = host_conversion(ctx, n)
        if conv is not None and conv.kind == "builtin" and type(conv.operand) is not ast.Constant:
            return conv.label, True  # int(action): a symbolic tensor has no Python value
        q = ctx.qualname(func)
        if q is not None and q.startswith("numpy."):
            label = "np." + q[len("numpy."):] + "()"
            args = [*n.args, *(k.value for k in n.keywords)]
            if q.startswith("numpy.random.") or any(ctx.is_tensor_like(a) for a in args):
                return label, True  # random draws would be frozen into the trace
            maybe = maybe or label
    return (maybe, False) if maybe else None


# Draws of a batch from a replay store or a list: `random.sample(memory, n)`,
# `np.random.choice(len(buffer), n)`, `self.memory.sample_buffer(n)`, `self.sample_batch()`.
_DRAWS = frozenset({"random.sample", "random.choices", "random.choice", "random.shuffle"})
_INDEX_DRAWS = frozenset({"choice", "randint", "permutation", "shuffle", "integers",
                          "random_integers"})
_SAMPLE_METHOD = re.compile(r"^(?:get_)?(?:sample|sample_(?:batch|buffer|memory|minibatch|"
                            r"transitions?|experiences?|replay)|random_batch|get_batch)$")
_STORE_NAME = re.compile(r"mem|buffer|replay|experience|storage|pool|(?:^|_)rb$|(?:^|_)per$",
                         re.IGNORECASE)


def _draws_own_batch(ctx: Context, fn: ast.AST) -> str | None:
    """The call by which the step ``fn`` draws its own batch (``random.sample``, a NumPy
    index draw, a replay buffer's ``sample``), as written; ``None`` when it draws none.
    Compiled as it is, that draw would run once, while tracing: every step would train on
    the first batch. (A distribution's ``sample()`` is a TF op: not a draw here.)"""
    for n in ast.walk(fn):
        if type(n) is not ast.Call:
            continue
        f = n.func
        q = ctx.qualname(f)
        if q in _DRAWS or (q is not None and q.startswith("numpy.random.")
                           and q.rsplit(".", 1)[-1] in _INDEX_DRAWS):
            return ctx.source_of(f) + "()"
        if q is None and type(f) is ast.Attribute and _SAMPLE_METHOD.match(f.attr):
            owner = f.value
            name = owner.attr if type(owner) is ast.Attribute else getattr(owner, "id", "")
            if _STORE_NAME.search(name) or (name == "self" and f.attr != "sample"):
                return ctx.source_of(f) + "()"
    return None


def _step_function(ctx: Context, fn: Any, tape: ast.AST) -> bool:
    """``fn`` is a training step, not compiled, and ``tape`` is its first tape (one
    finding per step function)."""
    if not trains(fn.body) or decorated_into_tf_function(ctx, fn):
        return False  # (the module's own decorator compiles it)
    first_tape = next((n for n in ast.walk(fn) if type(n) in (ast.With, ast.AsyncWith)
                       and is_tape_with(ctx, n)), None)
    return first_tape is tape


def eager_step_names(ctx: Context) -> frozenset[str]:
    """The names of this module's functions that hold an eager training step (a tape and a
    weight update, not compiled): what this rule reports once something runs them per
    iteration."""
    def find() -> frozenset[str]:
        if not ctx.imports_tf or not _mentions_training(ctx):
            return frozenset()
        names = set()
        for w in ctx.nodes_of(ast.With, ast.AsyncWith):
            fn: Any = ctx.enclosing_function(w)
            if type(fn) in _DEFS and is_tape_with(ctx, w) and not ctx.in_tf_function(w) \
                    and not eager_guarded(ctx, w) and _step_function(ctx, fn, w):
                names.add(fn.name)
        return frozenset(names)
    return ctx.cached("tfp306.eager_step_names", find)


def loop_runs_eager_step(ctx: Context, loop: Any) -> bool:
    """Every iteration of ``loop`` also runs an eager training step of this module: a tape
    that trains in its body, or a call of a step function (by its name: ``agent.train()``,
    ``learn(...)``), not under a branch (an update once per episode, when the episode ends,
    is not one per step)."""
    steps = eager_step_names(ctx)
    for n in ast.walk(loop):
        if type(n) in (ast.With, ast.AsyncWith) and is_tape_with(ctx, n):
            hit = trains(loop.body) and not ctx.in_tf_function(n)
        elif steps and type(n) is ast.Call:
            f = n.func
            hit = (f.attr if type(f) is ast.Attribute else getattr(f, "id", None)) in steps
        else:
            continue
        if hit and _every_iteration(ctx, n, loop):
            return True
    return False


def _hot_local_call(ctx: Context, fn: Any) -> ast.Call | None:
    """A call of ``fn`` in this module run per iteration of an eager loop that the code
    does not say runs it only a handful of times (``for _ in range(2)`` in a checkpoint
    demo: two eager steps cost less than one trace, see ``analysis.trips``)."""
    for call in calls_of(ctx, fn):
        if ctx.in_loop(call) and not ctx.in_tf_function(call) \
                and not eager_guarded(ctx, call) and not few_runs(ctx, call, FEW_MODEL_CALLS):
            return call
    return None


def _every_iteration(ctx: Context, node: ast.AST, loop: ast.AST) -> bool:
    """``node`` runs on every iteration of ``loop``: no branch, handler or inner function
    between them."""
    p: Any = ctx.parent(node)
    while p is not None and p is not loop:
        if type(p) in (ast.If, ast.IfExp, ast.Try, ast.ExceptHandler, ast.Lambda, *_DEFS):
            return False
        p = ctx.parent(p)
    return p is loop


def _in_outer_tape(ctx: Context, node: ast.AST, stop: ast.AST) -> bool:
    """``node`` lies inside another ``with tf.GradientTape()`` block below ``stop`` (a
    gradient-penalty or higher-order tape inside the step's own tape)."""
    for p in ctx.ancestors(node):
        if p is stop:
            return False
        if type(p) in (ast.With, ast.AsyncWith) and is_tape_with(ctx, p):
            return True
    return False


def _mentions_training(ctx: Context) -> bool:
    """Cheap text test, once per module: both halves of a training step appear (or a
    tape and a Jacobian taken of it)."""
    src = ctx.source
    return ctx.cached("tfp306_mentions_training", lambda: "GradientTape" in src and (
        "apply_gradients" in src or "minimize" in src or "trainable_" in src
        or "jacobian" in src))


# Stop 46 (held-out round 16 F004): a Jacobian of a tape taken per iteration of an eager
# loop, no update. Eagerly, jacobian/batch_jacobian vectorise their gradient loop with pfor
# traced anew on every call (rule_claims.py --cases TFP306jac, TF 2.21 CPU, a 2-layer
# encoder, 10 batches of 64: batch_jacobian 3228 ms eager vs 25 ms in a tf.function, 129.5x;
# jacobian 22.1x).
_JACOBIANS = frozenset({"jacobian", "batch_jacobian"})
JACOBIAN_MESSAGE = ("a GradientTape's {name} taken eagerly once per loop iteration: each eager "
                    "call vectorises the gradient loop anew (pfor traced per call)")
JACOBIAN_HINT = ("put the tape and the {name} in one function compiled with @tf.function, "
                 "made once outside the loop, and call it per batch (convert to NumPy after)")


def _jacobian_of(node: ast.AST, nodes: list[ast.AST]) -> ast.Call | None:
    """A Jacobian (``tape.batch_jacobian(y, x)``) that ``nodes`` take of the tape ``node``
    (a ``with tf.GradientTape() as tape`` block), else None."""
    tapes = {item.optional_vars.id for item in node.items
             if type(item.optional_vars) is ast.Name}
    for stmt in nodes:
        for n in ast.walk(stmt):
            if type(n) is ast.Call and type(n.func) is ast.Attribute \
                    and n.func.attr in _JACOBIANS and type(n.func.value) is ast.Name \
                    and n.func.value.id in tapes:
                return n
    return None


def _step_in_loop(decorator: str = "") -> str:
    """The reference example: an eager step called per batch; ``decorator`` is the line the
    fix adds above it (the INVALID example and its fixed form share everything else)."""
    head = f"{decorator}\n" if decorator else ""
    return ("import tensorflow as tf\n" + head + textwrap.dedent("""\
        def train_step(model, opt, x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(x) - y))
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))
            return loss
        def fit(model, opt, ds):
            for x, y in ds:
                train_step(model, opt, x, y)
    """))


def _aliased_step(decorator: str = "") -> str:
    """A method step called through a local alias (syngen's VAE wrapper, dev row F086);
    ``decorator`` is the line the fix adds above the step (the INVALID example and its fixed
    form share everything else)."""
    head = f"    {decorator}\n" if decorator else ""
    return textwrap.dedent("""\
        import tensorflow as tf
        class Wrapper:
            def __init__(self, model):
                self.model = model
                self.optimizer = tf.keras.optimizers.Adam()
    """) + head + textwrap.indent(textwrap.dedent("""\
        def _train_step(self, batch):
            with tf.GradientTape() as tape:
                self.model(batch)
                loss = sum(self.model.losses)
            self.optimizer.minimize(loss=loss, var_list=self.model.trainable_weights,
                                    tape=tape)
            return loss
        def train(self, dataset, epochs):
            step = self._train_step
            for epoch in range(epochs):
                for batch in dataset:
                    step(batch)
    """), "    ")


class EagerTrainingStep(Rule):
    code = "TFP306"
    name = "eager-training-step"
    message = "training step (GradientTape + apply_gradients) runs eagerly in a loop"
    hint = "decorate the step function with @tf.function (one trace, then a graph per step)"
    claims = ("S13",)
    group = "perf"
    node_types = (ast.With, ast.AsyncWith)
    needs_tf = True  # nothing to report where neither TF nor Keras is imported
    fixable = True
    docs = """\
## What it does
Finds a custom training step, a `with tf.GradientTape()` block plus
`optimizer.apply_gradients(...)` (or the gradients of a model's `trainable_variables`, the
costly half, when another function applies them), that runs eagerly once per iteration of a
Python loop: either a step function called in a loop without `tf.function`, or the tape
block written directly in the body of the training loop.

Also, with no update at all: a tape whose `jacobian`/`batch_jacobian` is taken once per
iteration of an eager loop (gradients of an encoder's output to its input, batch by batch),
in the loop's body or in a function the loop calls (in any module), reported at the
Jacobian. Eagerly, each call vectorises the gradient loop with `pfor`, traced anew per call:
`rule_claims.py --cases TFP306jac` (TF 2.21 CPU, a 2-layer encoder, 10 batches of 64):
`batch_jacobian` 3228 ms eager vs 25 ms in a `tf.function` (129.5x), `jacobian` 22.1x.

## Why is this bad?
Eagerly, every op of the forward pass, the gradient computation and the update is dispatched
from Python one by one. Under `tf.function` the step is traced once and then runs as one
optimised graph per call; the article measured about 4× from `tf.function` on a small
function (claim S13), and TF's custom-training guide decorates the step for this reason.

## Example
```python
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss

for x, y in ds:
    train_step(x, y)
```

## Use instead
```python
@tf.function
def train_step(x, y):
    ...
```

## Fix safety
For a step function without other decorators the fix adds `@tf.function`. It is **unsafe**:
inside `tf.function`, Python side effects (`print`, appending to lists) run only while
tracing, and Python-number arguments cause retracing (see TFP301, TFP304). Check the step,
then run it. No fix where decorating would break the step: it calls `model.predict`,
`.numpy()` or NumPy functions, which need eager tensors (the message names the call; move
it out, then compile the rest). No fix either where the step draws its own batch
(`random.sample(self.memory, n)`, `np.random.choice(len(buffer), n)`,
`self.memory.sample_buffer(n)`): compiled as it is, the draw would run once, while tracing,
and every step would train on that batch; the hint says to draw it outside and pass it in.
The inline form (tape written in the loop body) is reported without a fix: the step must
first be moved into a function (taking the batch as arguments, where the loop draws one).

## Known limitations
One finding per step written in a loop: a tape nested in the step's tape (the inner tape of a
gradient penalty, a second-order gradient) is part of the same step. Not reported: steps that
are already compiled (decorated, wrapped with `tf.function(step)`,
Keras `train_step`), steps called once, steps this module never calls (their callers,
elsewhere, may compile them: `tf.function(step)`, `strategy.run` in a `tf.function`), loops
in a branch that asks for eager execution on purpose (`if mode == 'eager_tf':`, a debug
mode), tapes that do not train (gradients for saliency maps, for instance), and steps the
code runs fewer than 16 times in all by its literal bounds (`for _ in range(2)` in a
checkpoint demo, through names and callers: `tfperf.lint.analysis.trips`): a trace costs
more than a handful of eager steps save.
"""
    valid = (
        # A step the code runs twice (a checkpoint demo): a trace costs more than it saves.
        Valid("""
            import tensorflow as tf
            def train_one_step(model, opt, x):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(model(x) ** 2)
                grads = tape.gradient(loss, model.trainable_variables)
                opt.apply_gradients(zip(grads, model.trainable_variables))
            def demo(model, opt, x, manager):
                for _ in range(2):
                    train_one_step(model, opt, x)
                    manager.save()
        """),
        # Compiled step.
        Valid("""
            import tensorflow as tf
            @tf.function
            def train_step(model, opt, x):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(model(x))
                grads = tape.gradient(loss, model.trainable_variables)
                opt.apply_gradients(zip(grads, model.trainable_variables))
            for x in tf.data.Dataset.range(3):
                train_step(None, None, x)
        """),
        # Compiled by the module's own decorator (a tf.function around strategy.run).
        Valid("""
            import tensorflow as tf
            strategy = tf.distribute.MirroredStrategy()
            def replicated(reduce_op):
                def wrap(step):
                    @tf.function
                    def run(*args):
                        out = strategy.run(step, args=args)
                        return strategy.reduce(reduce_op, out, axis=None)
                    return run
                return wrap
            @replicated(tf.distribute.ReduceOp.SUM)
            def train_step(model, opt, x):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(model(x))
                grads = tape.gradient(loss, model.trainable_variables)
                opt.apply_gradients(zip(grads, model.trainable_variables))
                return loss
            for x in tf.data.Dataset.range(3):
                train_step(None, None, x)
        """),
        # Wrapped elsewhere.
        Valid("""
            import tensorflow as tf
            def train_step(model, opt, x):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(model(x))
                grads = tape.gradient(loss, model.trainable_variables)
                opt.apply_gradients(zip(grads, model.trainable_variables))
            fast_step = tf.function(train_step)
        """),
        # Gradients for a saliency map: no weight update.
        Valid("""
            import tensorflow as tf
            def saliency(model, images):
                maps = []
                for img in images:
                    with tf.GradientTape() as tape:
                        tape.watch(img)
                        score = tf.reduce_max(model(img))
                    maps.append(tape.gradient(score, img))
                return maps
        """),
        # A step that is called once (a smoke test), not in a loop.
        Valid("""
            import tensorflow as tf
            def train_step(model, opt, x):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(model(x))
                grads = tape.gradient(loss, model.trainable_variables)
                opt.apply_gradients(zip(grads, model.trainable_variables))
            def smoke_test(model, opt):
                train_step(model, opt, tf.ones([1, 4]))
        """),
        # Keras traces train_step itself.
        Valid("""
            import tensorflow as tf
            class M(tf.keras.Model):
                def train_step(self, data):
                    x, y = data
                    with tf.GradientTape() as tape:
                        loss = self.compiled_loss(y, self(x, training=True))
                    grads = tape.gradient(loss, self.trainable_variables)
                    self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
                    return {}
        """),
        # Somebody else's GradientTape (a lookalike).
        Valid("""
            from mylib import GradientTape
            def step(opt):
                with GradientTape() as tape:
                    pass
                opt.apply_gradients([])
            for i in range(100):
                step(None)
        """),
        # A public step this module never calls: its caller may compile it.
        Valid("""
            import tensorflow as tf
            def train_step(model, optimizer, loss_fn, inputs, targets):
                with tf.GradientTape() as tape:
                    loss = loss_fn(targets, model(inputs, training=True))
                grads = tape.gradient(loss, model.trainable_weights)
                optimizer.apply_gradients(zip(grads, model.trainable_weights))
                return loss
        """),
        # Eager on purpose: a debug mode next to model.fit.
        Valid("""
            import tensorflow as tf
            def train(model, opt, ds, mode):
                if mode == 'eager_tf':
                    for x, y in ds:
                        with tf.GradientTape() as tape:
                            loss = tf.reduce_mean(model(x) - y)
                        grads = tape.gradient(loss, model.trainable_variables)
                        opt.apply_gradients(zip(grads, model.trainable_variables))
                else:
                    model.fit(ds)
        """),
    )
    invalid = (
        # A WGAN-GP step written in the loop: the penalty's tape, nested in the step's tape,
        # is the same step: one finding, on the outer tape.
        Invalid("""
            import tensorflow as tf
            def fit(gen, disc, opt, ds):
                for z, real in ds:
                    with tf.GradientTape() as d_tape:
                        fake = gen(z)
                        with tf.GradientTape() as gp_tape:
                            gp_tape.watch(real)
                            critic = disc(real)
                        penalty = tf.reduce_mean(gp_tape.gradient(critic, real) ** 2)
                        d_loss = tf.reduce_mean(disc(fake)) + penalty
                    grads = d_tape.gradient(d_loss, disc.trainable_variables)
                    opt.apply_gradients(zip(grads, disc.trainable_variables))
        """, count=1, lines=(4,)),
        Invalid(_step_in_loop(), count=1, lines=(2,), fixed=_step_in_loop("@tf.function")),
        # Inline in the training loop: reported at the tape, no fix.
        Invalid("""
            import tensorflow as tf
            def fit(model, opt, ds, epochs):
                for epoch in range(epochs):
                    for x, y in ds:
                        with tf.GradientTape() as tape:
                            loss = tf.reduce_mean(tf.square(model(x) - y))
                        grads = tape.gradient(loss, model.trainable_variables)
                        opt.apply_gradients(zip(grads, model.trainable_variables))
        """, count=1, lines=(5,)),
        # Method called per batch, alias import, minimize with a tape.
        Invalid("""
            import tensorflow as tensorflow_alias
            class Trainer:
                def step(self, x):
                    with tensorflow_alias.GradientTape() as tape:
                        loss = tensorflow_alias.reduce_sum(self.model(x))
                    self.opt.minimize(loss, self.model.trainable_variables, tape=tape)
                def fit(self, batches):
                    for x in batches:
                        self.step(x)
        """, count=1, lines=(3,), fixed="""
            import tensorflow as tensorflow_alias
            class Trainer:
                @tensorflow_alias.function
                def step(self, x):
                    with tensorflow_alias.GradientTape() as tape:
                        loss = tensorflow_alias.reduce_sum(self.model(x))
                    self.opt.minimize(loss, self.model.trainable_variables, tape=tape)
                def fit(self, batches):
                    for x in batches:
                        self.step(x)
        """),
        # `from tensorflow import GradientTape`; decorated otherwise: reported, not fixed.
        Invalid("""
            import functools
            from tensorflow import GradientTape
            @functools.lru_cache(None)
            def noop():
                return None
            def step(model, opt, x):
                with GradientTape() as tape:
                    loss = model(x)
                opt.apply_gradients(zip(tape.gradient(loss, model.weights), model.weights))
            while True:
                step(None, None, 1)
        """, count=1, lines=(6,)),
        # Host work in the step (model.predict, NumPy): reported, no @tf.function offered.
        Invalid("""
            import numpy as np
            import tensorflow as tf
            def training_step(model, optimizer, replay, batch_size):
                states, actions, rewards, next_states = replay.sample(batch_size)
                next_q = model.predict(next_states)
                targets = rewards + 0.95 * np.max(next_q, axis=1)
                with tf.GradientTape() as tape:
                    q = tf.reduce_sum(model(states) * tf.one_hot(actions, 2), axis=1)
                    loss = tf.reduce_mean(tf.square(targets - q))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
            for episode in range(600):
                training_step(None, None, None, 32)
        """, count=1, lines=(3,)),
        # The step split in two: gradients computed eagerly per batch, applied elsewhere.
        Invalid("""
            import tensorflow as tf
            def compute_gradients(model, x):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(model(x))
                return tape.gradient(loss, model.trainable_variables), loss
            def apply_gradients(optimizer, gradients, variables):
                optimizer.apply_gradients(zip(gradients, variables))
            for x in tf.data.Dataset.range(10):
                gradients, loss = compute_gradients(None, x)
                apply_gradients(None, gradients, [])
        """, count=1, lines=(2,), fixed="""
            import tensorflow as tf
            @tf.function
            def compute_gradients(model, x):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(model(x))
                return tape.gradient(loss, model.trainable_variables), loss
            def apply_gradients(optimizer, gradients, variables):
                optimizer.apply_gradients(zip(gradients, variables))
            for x in tf.data.Dataset.range(10):
                gradients, loss = compute_gradients(None, x)
                apply_gradients(None, gradients, [])
        """),
    )

    # Issue 25's spellings: the step in another module of the project, called per epoch
    # from a training script (the project's check), through a method of an instance, and
    # in a notebook that imports it; each with its VALID twin.
    valid = (  # type: ignore[assignment]
        *valid,
        Valid("""
            import tensorflow as tf
            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            opt = tf.keras.optimizers.Adam()
            @tf.function
            def train_step(x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean((model(x) - y) ** 2)
                grads = tape.gradient(loss, model.trainable_variables)
                opt.apply_gradients(zip(grads, model.trainable_variables))
            def epoch(batches):
                for x, y in batches:
                    one(x, y)
            def one(x, y):
                train_step(x, y)
        """, spelling="loop: through a chain of calls"),
        Valid("""
            import tensorflow as tf
            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            opt = tf.keras.optimizers.Adam()
            @tf.function
            def train_step(x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean((model(x) - y) ** 2)
                grads = tape.gradient(loss, model.trainable_variables)
                opt.apply_gradients(zip(grads, model.trainable_variables))
            def fit(xs, ys):
                for i in range(len(xs)):
                    train_step(xs[i], ys[i])
        """, spelling="index: x[i]"),
        Valid("""
            from agent import Agent
            agent = Agent()
            for epoch in range(100):
                agent.train_step(1.0, 2.0)
        """, files={"agent.py": """
            import tensorflow as tf
            class Agent:
                def __init__(self):
                    self.model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                    self.opt = tf.keras.optimizers.Adam()
                @tf.function
                def train_step(self, x, y):
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_mean((self.model(x) - y) ** 2)
                    grads = tape.gradient(loss, self.model.trainable_variables)
                    self.opt.apply_gradients(zip(grads, self.model.trainable_variables))
                    return loss
        """}, spelling="module"),
        Valid("""
            from steps import train_step
            train_step(1.0, 2.0)
        """, files={"steps.py": """
            import tensorflow as tf
            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            opt = tf.keras.optimizers.Adam()
            def train_step(x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean((model(x) - y) ** 2)
                grads = tape.gradient(loss, model.trainable_variables)
                opt.apply_gradients(zip(grads, model.trainable_variables))
        """}, spelling="name: called once"),
        Valid("""
            from steps import train_step
            # %%
            train_step(1.0, 2.0)
        """, files={"steps.py": """
            import tensorflow as tf
            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            opt = tf.keras.optimizers.Adam()
            @tf.function
            def train_step(x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean((model(x) - y) ** 2)
                grads = tape.gradient(loss, model.trainable_variables)
                opt.apply_gradients(zip(grads, model.trainable_variables))
        """}, notebook=True, spelling="notebook"),
    )
    invalid = (  # type: ignore[assignment]
        *invalid,
        Invalid("""
            import tensorflow as tf
            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            opt = tf.keras.optimizers.Adam()
            def train_step(x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean((model(x) - y) ** 2)
                grads = tape.gradient(loss, model.trainable_variables)
                opt.apply_gradients(zip(grads, model.trainable_variables))
            def fit(xs, ys):
                for i in range(len(xs)):
                    train_step(xs[i], ys[i])
        """, count=1, lines=(4,), fixed="""
            import tensorflow as tf
            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            opt = tf.keras.optimizers.Adam()
            @tf.function
            def train_step(x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean((model(x) - y) ** 2)
                grads = tape.gradient(loss, model.trainable_variables)
                opt.apply_gradients(zip(grads, model.trainable_variables))
            def fit(xs, ys):
                for i in range(len(xs)):
                    train_step(xs[i], ys[i])
        """, spelling="index: x[i]"),
        Invalid("""
            from agent import Agent
            agent = Agent()
            for epoch in range(100):
                agent.train_step(1.0, 2.0)
        """, files={"agent.py": """
            import tensorflow as tf
            class Agent:
                def __init__(self):
                    self.model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                    self.opt = tf.keras.optimizers.Adam()
                def train_step(self, x, y):
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_mean((self.model(x) - y) ** 2)
                    grads = tape.gradient(loss, self.model.trainable_variables)
                    self.opt.apply_gradients(zip(grads, self.model.trainable_variables))
                    return loss
        """}, count=1, lines=(), spelling="module"),
        Invalid("""
            from steps import train_step
            def fit(batches):
                for x, y in batches:
                    train_step(x, y)
        """, files={"steps.py": """
            import tensorflow as tf
            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            opt = tf.keras.optimizers.Adam()
            def train_step(x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean((model(x) - y) ** 2)
                grads = tape.gradient(loss, model.trainable_variables)
                opt.apply_gradients(zip(grads, model.trainable_variables))
        """}, count=1, lines=(), spelling="name: a module's function"),
        Invalid("""
            from steps import train_step
            # %%
            for epoch in range(100):
                train_step(1.0, 2.0)
        """, files={"steps.py": """
            import tensorflow as tf
            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            opt = tf.keras.optimizers.Adam()
            def train_step(x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean((model(x) - y) ** 2)
                grads = tape.gradient(loss, model.trainable_variables)
                opt.apply_gradients(zip(grads, model.trainable_variables))
        """}, count=1, notebook=True, spelling="notebook"),
        Invalid("""
            import tensorflow as tf
            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            opt = tf.keras.optimizers.Adam()
            def train_step(x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean((model(x) - y) ** 2)
                grads = tape.gradient(loss, model.trainable_variables)
                opt.apply_gradients(zip(grads, model.trainable_variables))
            def epoch(batches):
                for x, y in batches:
                    one(x, y)
            def one(x, y):
                train_step(x, y)
        """, count=1, lines=(4,), spelling="loop: through a chain of calls"),
        # Called through a local alias, the update made by `optimizer.minimize(..., tape=)`
        # (syngen's VAE wrapper, dev row F086).
        Invalid(_aliased_step(), count=1, lines=(6,), fixed=_aliased_step("@tf.function"),
                tf_version="2.15", spelling="name: a local alias"),
        # The step draws its own batch (held-out precision round 2: 8 RL agents). Reported,
        # but without the @tf.function fix: compiled as it is, the draw would run once,
        # while tracing (the hint says to draw outside and pass the batch in).
        Invalid("""
            import random
            import numpy as np
            import tensorflow as tf
            class Agent:
                def replay(self):
                    batch = random.sample(self.memory, 64)
                    s, a, r = (np.array(x) for x in zip(*batch))
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_mean(tf.square(self.model(s) - r))
                    grads = tape.gradient(loss, self.model.trainable_variables)
                    self.opt.apply_gradients(zip(grads, self.model.trainable_variables))
                def run(self, env):
                    for t in range(10000):
                        self.replay()
        """, count=1, lines=(5,), spelling="name: random.sample"),
        Invalid("""
            import numpy as np
            import tensorflow as tf
            def learn(model, opt, states, targets):
                idx = np.random.choice(len(states), 32)
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(model(states[idx]) - targets[idx]))
                grads = tape.gradient(loss, model.trainable_variables)
                opt.apply_gradients(zip(grads, model.trainable_variables))
            def train(model, opt, states, targets):
                step = 0
                while step < 1000:
                    learn(model, opt, states, targets)
                    step += 1
        """, count=1, lines=(3,), spelling="index: np.random.choice"),
        Invalid("""
            import tensorflow as tf
            class DDPG:
                def learn(self):
                    state, action, reward, new_state, done = \
                        self.memory.sample_buffer(self.batch_size)
                    with tf.GradientTape() as tape:
                        loss = -tf.reduce_mean(self.critic(state, self.actor(state)))
                    grads = tape.gradient(loss, self.actor.trainable_variables)
                    self.actor.optimizer.apply_gradients(
                        zip(grads, self.actor.trainable_variables))
                def play(self, env, n):
                    for _ in range(n):
                        self.learn()
        """, count=1, lines=(3,), spelling="loop: a replay buffer's sample_buffer"),
        # The tape written in the training loop's body, after the draw.
        Invalid("""
            import tensorflow as tf
            def train(model, opt, replay, steps):
                for _ in range(steps):
                    s, r = replay.sample(64)
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_mean(tf.square(model(s) - r))
                    grads = tape.gradient(loss, model.trainable_variables)
                    opt.apply_gradients(zip(grads, model.trainable_variables))
        """, count=1, lines=(5,), spelling="loop: inline tape"),
    )
    valid = (  # type: ignore[assignment]
        *valid,
        # The alias is the compiled step.
        Valid("""
            import tensorflow as tf
            class Wrapper:
                def __init__(self, model):
                    self.model = model
                    self.optimizer = tf.keras.optimizers.Adam()
                def _train_step(self, batch):
                    with tf.GradientTape() as tape:
                        loss = sum(self.model.losses)
                    self.optimizer.minimize(loss=loss, var_list=self.model.trainable_weights,
                                            tape=tape)
                def train(self, dataset, epochs):
                    step = tf.function(self._train_step)
                    for epoch in range(epochs):
                        for batch in dataset:
                            step(batch)
        """, tf_version="2.15"),
    )

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Finding]:
        if not ctx.imports_tf or not _mentions_training(ctx) or not is_tape_with(ctx, node):
            return
        if ctx.in_tf_function(node) or eager_guarded(ctx, node):
            return  # compiled, or in a branch that runs eagerly on purpose (debug mode)
        loops = ctx.enclosing_loops(node)
        if loops:
            loop = loops[0]
            if _in_outer_tape(ctx, node, loop):
                return  # a tape nested in the step's own tape: the same step, reported once
            if type(loop) in (ast.For, ast.AsyncFor, ast.While) and not trains(loop.body) \
                    and ctx.tf_version >= (2, 0) and not graph_mode_module(ctx) \
                    and (jac := _jacobian_of(node, loop.body)) is not None \
                    and not few_runs(ctx, node, FEW_MODEL_CALLS):
                # at the Jacobian: the call that pays per iteration
                name = jac.func.attr
                yield self.finding(ctx, jac, JACOBIAN_MESSAGE.format(name=name),
                                   hint=JACOBIAN_HINT.format(name=name))
                return
            if type(loop) in (ast.For, ast.AsyncFor, ast.While) and trains(loop.body) \
                    and not few_runs(ctx, node, FEW_MODEL_CALLS):
                draw = _draws_own_batch(ctx, loop)
                yield self.finding(
                    ctx, node, end_node=node.items[-1].context_expr,
                    hint=None if draw is None else
                    f"move the step (the tape and the update) into a function that takes the "
                    f"batch as arguments, draw the batch in the loop ({draw}) and pass it in, "
                    "then compile the function with @tf.function (a draw inside it would run "
                    "once, while tracing)")
            return
        fn = ctx.enclosing_function(node)
        if type(fn) not in _DEFS or not _step_function(ctx, fn, node):
            return
        if _hot_local_call(ctx, fn) is None:
            return  # called elsewhere: the project's check (a caller may compile it)
        yield self._step_finding(ctx, fn)

    def _step_finding(self, ctx: Context, fn: Any, where: str = "") -> Finding:
        """The finding on the step function ``fn``'s header (``where``: the call in another
        module that runs it per iteration, named in the message)."""
        found = _host_work(ctx, fn)
        message = self.message if _updates(fn.body) else _GRADIENTS_MESSAGE
        if where:
            message = f"{message} (called per iteration at {where})"
        draw = _draws_own_batch(ctx, fn)
        if draw is not None:
            also = f"; move {found[0]} out too (or use TF ops)" \
                if found is not None and found[0] != draw else ""
            finding = self.finding(
                ctx, fn, f"{message} (it draws its own batch: {draw})",
                hint=f"draw the batch outside the step ({draw}) and pass it in as arguments, "
                     "then compile the step with @tf.function: compiled as it is, the draw "
                     f"would run once, while tracing, and every step reuse that batch{also}")
        elif (episode := episode_list_input(ctx, fn)) is not None:
            # one update per variable-length episode: a bare tf.function traces per new
            # length (round 9's scorer: 7x slower than eager); only a relaxed one helps
            relax = "reduce_retracing=True" if ctx.tf_version >= (2, 9) \
                else "experimental_relax_shapes=True"
            finding = self.finding(
                ctx, fn, f"{message} (its inputs are as long as an episode: {episode})",
                hint=f"build the arrays outside the step ({episode}) and pass them in, then "
                     f"compile the step with @tf.function({relax}) or an input_signature "
                     "with None for the length (tf.TensorSpec([None, ...])): a bare "
                     "tf.function would trace again for every new episode length")
        elif found is None:
            finding = self.finding(ctx, fn, message,
                                   fix=None if where else self._fix(ctx, fn))
        elif found[1]:
            host = found[0]
            finding = self.finding(
                ctx, fn, f"{message} (it calls {host}: not compilable as it is)",
                hint=f"move {host} out of the step (or use TF ops), then compile the tensor "
                     "part with @tf.function")
        else:
            host = found[0]
            finding = self.finding(
                ctx, fn, f"{message} (it calls {host}: compilable only if that runs on Python "
                "values, not tensors)",
                hint=f"check what {host} receives: on Python values it runs once, while "
                     "tracing; on tensors move it out of the step or use TF ops; then "
                     "compile the step with @tf.function")
        loc = finding.location
        header = dataclasses.replace(loc, end_line=loc.line,  # type: ignore[type-var]
                                     end_column=len(ctx.lines[loc.line - 1].rstrip("\r\n")))  # type: ignore[operator]
        return dataclasses.replace(finding, location=header)

    # Stop 39, pass B: the step of another module reached through a name that holds it:
    # a parameter defaulting to it, an attribute of `self` assigned it.
    valid = (  # type: ignore[assignment]
        *valid,
        Valid("""
            import tensorflow as tf
            from lib import train_step
            def fit(model, opt, ds, epochs, step_fn=train_step):
                for epoch in range(epochs):
                    for x, y in ds:
                        step_fn(model, opt, x, y)
            ds = tf.data.Dataset.from_tensor_slices((tf.ones([64, 4]), tf.ones([64, 1]))).batch(8)
            fit(tf.keras.Sequential([tf.keras.layers.Dense(1)]), tf.keras.optimizers.Adam(), ds, 10,
                step_fn=tf.function(train_step))
        """, files={"lib.py": """
            import tensorflow as tf
            def train_step(model, opt, x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(model(x) - y))
                grads = tape.gradient(loss, model.trainable_variables)
                opt.apply_gradients(zip(grads, model.trainable_variables))
                return loss
        """}, spelling="module: a default the caller replaces"),
        Valid("""
            import tensorflow as tf
            from lib import train_step
            class Trainer:
                def __init__(self):
                    self.model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                    self.opt = tf.keras.optimizers.Adam()
                    self.step = tf.function(train_step)
                def fit(self, ds, epochs):
                    for epoch in range(epochs):
                        for x, y in ds:
                            self.step(self.model, self.opt, x, y)
            ds = tf.data.Dataset.from_tensor_slices((tf.ones([64, 4]), tf.ones([64, 1]))).batch(8)
            Trainer().fit(ds, 10)
        """, files={"lib.py": """
            import tensorflow as tf
            def train_step(model, opt, x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(model(x) - y))
                grads = tape.gradient(loss, model.trainable_variables)
                opt.apply_gradients(zip(grads, model.trainable_variables))
                return loss
        """}, spelling="module: self.step compiled"),
    )
    invalid = (  # type: ignore[assignment]
        *invalid,
        Invalid("""
            import tensorflow as tf
            from lib import train_step
            def fit(model, opt, ds, epochs, step_fn=train_step):
                for epoch in range(epochs):
                    for x, y in ds:
                        step_fn(model, opt, x, y)
            ds = tf.data.Dataset.from_tensor_slices((tf.ones([64, 4]), tf.ones([64, 1]))).batch(8)
            fit(tf.keras.Sequential([tf.keras.layers.Dense(1)]), tf.keras.optimizers.Adam(), ds, 10)
        """, files={"lib.py": """
            import tensorflow as tf
            def train_step(model, opt, x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(model(x) - y))
                grads = tape.gradient(loss, model.trainable_variables)
                opt.apply_gradients(zip(grads, model.trainable_variables))
                return loss
        """}, count=1, spelling="module: a parameter defaulting to the step"),
        Invalid("""
            import tensorflow as tf
            from lib import train_step
            class Trainer:
                def __init__(self):
                    self.model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                    self.opt = tf.keras.optimizers.Adam()
                    self.step = train_step
                def fit(self, ds, epochs):
                    for epoch in range(epochs):
                        for x, y in ds:
                            self.step(self.model, self.opt, x, y)
            ds = tf.data.Dataset.from_tensor_slices((tf.ones([64, 4]), tf.ones([64, 1]))).batch(8)
            Trainer().fit(ds, 10)
        """, files={"lib.py": """
            import tensorflow as tf
            def train_step(model, opt, x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(model(x) - y))
                grads = tape.gradient(loss, model.trainable_variables)
                opt.apply_gradients(zip(grads, model.trainable_variables))
                return loss
        """}, count=1, spelling="module: self.step assigned the step"),
        # Stop 39 wave 2 (held-out precision round 9, RL agents): one update per episode on
        # the whole episode, stacked from lists grown per step and emptied per episode; the
        # hint names reduce_retracing / an input_signature (a bare tf.function retraces per
        # length). tests/lint/test_lint_wave2_stop39.py checks the hint.
        Invalid("""
            import numpy as np
            import tensorflow as tf
            class Agent:
                def __init__(self, model, opt):
                    self.model, self.opt, self.rewards = model, opt, []
                def learn(self):
                    returns = np.array(self.rewards)
                    with tf.GradientTape() as tape:
                        loss = -tf.reduce_mean(self.model(returns[:, None]))
                    grads = tape.gradient(loss, self.model.trainable_variables)
                    self.opt.apply_gradients(zip(grads, self.model.trainable_variables))
                    self.rewards = []
            agent = Agent(tf.keras.Sequential([tf.keras.layers.Dense(1)]), tf.optimizers.SGD())
            for episode in range(500):
                for t in range(200):
                    agent.rewards.append(1.0)
                agent.learn()
        """, count=1, lines=(6,)),
    )
    valid = (  # type: ignore[assignment]
        *valid,
        # Its twin compiled as the hint says: the episode passed in, shapes relaxed.
        Valid("""
            import numpy as np
            import tensorflow as tf
            class Agent:
                def __init__(self, model, opt):
                    self.model, self.opt, self.rewards = model, opt, []
                @tf.function(reduce_retracing=True)
                def update(self, returns):
                    with tf.GradientTape() as tape:
                        loss = -tf.reduce_mean(self.model(returns[:, None]))
                    grads = tape.gradient(loss, self.model.trainable_variables)
                    self.opt.apply_gradients(zip(grads, self.model.trainable_variables))
                def learn(self):
                    self.update(tf.constant(np.array(self.rewards, np.float32)))
                    self.rewards = []
            agent = Agent(tf.keras.Sequential([tf.keras.layers.Dense(1)]), tf.optimizers.SGD())
            for episode in range(500):
                for t in range(200):
                    agent.rewards.append(1.0)
                agent.learn()
        """),
    )

    # Stop 46: a tape's Jacobian taken per iteration of an eager loop, no update (held-out
    # round 16 F004, sfaira's gradients to the input). VALID twins: the tape and Jacobian
    # compiled once, a Jacobian taken once, a plain gradient per batch (no pfor), TF 1.x.
    invalid = (  # type: ignore[assignment]
        *invalid,
        Invalid("""
            import tensorflow as tf
            enc = tf.keras.models.load_model("enc.h5")
            total = 0.0
            for x in ds:
                with tf.GradientTape() as tape:
                    tape.watch(x)
                    z = enc(x)
                total += tape.batch_jacobian(z, x).numpy().sum(0)
        """, count=1, lines=(8,), spelling="loop: for over a dataset"),
        Invalid("""
            import tensorflow as tf
            net = tf.keras.models.load_model("net.h5")
            i = 0
            out = []
            while i < len(xs):
                x = tf.constant(xs[i])
                with tf.GradientTape(persistent=True) as g:
                    g.watch(x)
                    y = net(x)
                out.append(g.jacobian(y, x))
                i += 1
        """, count=1, lines=(10,), spelling="index: xs[i] in a while loop"),
        Invalid("""
            import tensorflow as tf
            from tqdm import tqdm
            model = tf.keras.models.load_model("vae.h5")
            for step, (x_batch, y_batch) in tqdm(enumerate(ds)):
                x, sf = x_batch
                with tf.GradientTape(persistent=True) as tape:
                    tape.watch(x)
                    out = model((x, sf))
                grads = tape.batch_jacobian(out, x)
                keep(grads.numpy())
        """, count=1, lines=(9,), spelling="name: the batch unpacked through names"),
        Invalid("""
            import tensorflow as tf
            from sens import input_gradients
            enc = tf.keras.models.load_model("enc.h5")
            for x in tf.data.Dataset.from_tensor_slices(xs).batch(64):
                print(input_gradients(enc, x))
        """, files={"sens.py": """
            import tensorflow as tf
            def input_gradients(model, x):
                with tf.GradientTape() as tape:
                    tape.watch(x)
                    y = model(x)
                return tape.batch_jacobian(y, x).numpy().sum(0)
        """}, count=1, spelling="module: the Jacobian in a helper of another module"),
        Invalid("""
            import tensorflow as tf
            enc = tf.keras.models.load_model("enc.h5")
            # %%
            sens = []
            for x in ds:
                with tf.GradientTape() as tape:
                    tape.watch(x)
                    z = enc(x)
                sens.append(tape.batch_jacobian(z, x))
        """, count=1, notebook=True, spelling="notebook"),
    )
    valid = (  # type: ignore[assignment]
        *valid,
        Valid("""
            import tensorflow as tf
            enc = tf.keras.models.load_model("enc.h5")
            @tf.function
            def jac(x):
                with tf.GradientTape() as tape:
                    tape.watch(x)
                    z = enc(x)
                return tape.batch_jacobian(z, x)
            total = 0.0
            for x in ds:
                total += jac(x).numpy().sum(0)
        """, spelling="loop: the tape and Jacobian compiled once"),
        Valid("""
            import tensorflow as tf
            net = tf.keras.models.load_model("net.h5")
            x = tf.constant(xs)
            with tf.GradientTape() as g:
                g.watch(x)
                y = net(x)
            J = g.jacobian(y, x)
            for i in range(len(xs)):
                show(J[i])
        """, spelling="index: one Jacobian, then indexed"),
        Valid("""
            import tensorflow as tf
            model = tf.keras.models.load_model("vae.h5")
            for step, (x_batch, y_batch) in enumerate(ds):
                x, sf = x_batch
                with tf.GradientTape() as tape:
                    tape.watch(x)
                    out = tf.reduce_sum(model((x, sf)))
                grads = tape.gradient(out, x)
                keep(grads.numpy())
        """, spelling="name: a plain gradient per batch"),
        Valid("""
            import tensorflow as tf
            from sens import input_gradients
            enc = tf.keras.models.load_model("enc.h5")
            print(input_gradients(enc, tf.constant(xs)))
        """, files={"sens.py": """
            import tensorflow as tf
            def input_gradients(model, x):
                with tf.GradientTape() as tape:
                    tape.watch(x)
                    y = model(x)
                return tape.batch_jacobian(y, x).numpy().sum(0)
        """}, spelling="module: the helper called once"),
        Valid("""
            import tensorflow as tf
            tf.compat.v1.disable_eager_execution()
            enc = tf.keras.models.load_model("enc.h5")
            # %%
            for x in batches:
                with tf.GradientTape() as tape:
                    tape.watch(x)
                    z = enc(x)
                sens = tape.batch_jacobian(z, x)
        """, notebook=True, spelling="notebook: graph mode"),
    )

    def publish(self, ctx: Context) -> list[dict] | None:
        """Step functions this module does not call in a loop: another module may."""
        if not ctx.imports_tf or not _mentions_training(ctx):
            return None
        from tfperf.analysis.summary import position_of, qualnames

        names = qualnames(ctx)
        # Only functions that hold a tape are walked (most of a module's functions hold none).
        holding: set[int] = set()
        for w in ctx.nodes_of(ast.With, ast.AsyncWith):
            if is_tape_with(ctx, w):
                holding.update(id(f) for f in ctx.enclosing_functions(w))
        facts = []
        for fn, q in names.items():
            if type(fn) not in _DEFS or id(fn) not in holding:
                continue
            tape = next((n for n in ast.walk(fn) if type(n) in (ast.With, ast.AsyncWith)
                         and is_tape_with(ctx, n)), None)
            if tape is None or ctx.enclosing_function(tape) is not fn \
                    or ctx.in_tf_function(tape) or eager_guarded(ctx, tape) \
                    or ctx.enclosing_loops(tape):
                continue
            if not _step_function(ctx, fn, tape):
                # Stop 46: a function that takes a Jacobian of its tape, run per iteration
                # of an eager loop here or in another module (asked in check_project).
                jac = _jacobian_of(tape, fn.body) if not trains(fn.body) \
                    and ctx.tf_version >= (2, 0) and not graph_mode_module(ctx) \
                    and not decorated_into_tf_function(ctx, fn) else None
                if jac is not None:
                    name = jac.func.attr
                    f = self.finding(ctx, jac, JACOBIAN_MESSAGE.format(name=name)
                                     + " (called per iteration at {where})",
                                     hint=JACOBIAN_HINT.format(name=name))
                    facts.append({"fn": q, "pos": position_of(f), "message": f.message,
                                  "hint": f.hint})
                continue
            if _hot_local_call(ctx, fn) is not None:
                continue  # reported by the module's own check
            f = self._step_finding(ctx, fn, "{where}")
            facts.append({"fn": q, "pos": position_of(f), "message": f.message,
                          "hint": f.hint})
        return facts

    def check_project(self, project: Project) -> Iterator[Finding]:
        for module in project.modules.values():
            for fact in module.facts.get(self.code, ()):
                site = project.hot_call(module.path, fact["fn"], few=FEW_MODEL_CALLS)
                if site is None:
                    continue
                yield self.project_finding(module.path, fact["pos"],
                                           fact["message"].replace("{where}",
                                                                   project.where(site)),
                                           hint=fact["hint"])

    def _fix(self, ctx: Context, fn: ast.AST) -> Fix | None:
        tf = ctx.module_alias("tensorflow")
        if tf is None or fn.decorator_list:
            return None
        return self.unsafe_fix(ctx.insert_before(fn, f"@{tf}.function\n{ctx.indent_of(fn)}"),
                               description="compile the training step with tf.function")
