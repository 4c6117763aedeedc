"""TFP306: a GradientTape training step run eagerly, step after step, in a loop."""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Iterator

from tfperf.core.findings import Finding, Fix
from tfperf.lint.analysis.callers import called_in_loop
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


def _is_tape_with(ctx: Context, node: ast.AST) -> bool:
    return any(ctx.is_call_to(item.context_expr, "tensorflow.GradientTape")
               for item in node.items)  # type: ignore[attr-defined]


def _updates_weights(nodes: list[ast.AST]) -> bool:
    """``opt.apply_gradients(...)``, or ``opt.minimize(loss, var_list=..., tape=...)``."""
    for stmt in nodes:
        for n in ast.walk(stmt):
            if type(n) is ast.Call and type(n.func) is ast.Attribute:
                if n.func.attr == "apply_gradients":
                    return True
                if n.func.attr == "minimize" and any(
                        k.arg in ("tape", "var_list") for k in n.keywords):
                    return True
    return False


def _unreferenced(ctx: Context, fn: ast.FunctionDef) -> bool:
    """A public step function this module never calls, passes or wraps: its callers are in
    other modules (where a training step is called per batch). Tests and private helpers are
    left out."""
    name = fn.name
    if name.startswith(("test", "_")):
        return False
    if type(ctx.parent(fn)) is not ast.Module:
        return False  # a nested or method step: its use is not visible from here
    return not any((type(n) is ast.Name and n.id == name and type(n.ctx) is ast.Load)
                   or (type(n) is ast.Attribute and n.attr == name)
                   for n in ctx.nodes_of(ast.Name, ast.Attribute))


def _mentions_training(ctx: Context) -> bool:
    """Cheap text test, once per module: both halves of a training step appear."""
    src = ctx.source
    return ctx.cached("tfp306_mentions_training", lambda: "GradientTape" in src and (
        "apply_gradients" in src or "minimize" in src))


class EagerTrainingStep(Rule):
    code = "TFP306"
    name = "eager-training-step"
    message = "training step (GradientTape + apply_gradients) runs eagerly in a loop"
    hint = "decorate the step function with @tf.function (one trace, then a graph per step)"
    claims = ("S13",)
    group = "perf"
    node_types = (ast.With, ast.AsyncWith)
    fixable = True
    docs = """\
## What it does
Finds a custom training step, a `with tf.GradientTape()` block plus
`optimizer.apply_gradients(...)`, that runs eagerly once per iteration of a Python loop:
either a step function called in a loop without `tf.function` (or a module-level step that
its module never calls, passes or wraps: its callers live elsewhere), or the tape block
written directly in the body of the training loop.

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
inside `tf.function`, Python side effects (`print`, appending to lists, `.numpy()`) run only
while tracing or fail, and Python-number arguments cause retracing (see TFP301, TFP304).
Check the step, then run it. The inline form (tape written in the loop body) is reported
without a fix: the step must first be moved into a function.

## Known limitations
Not reported: steps that are already compiled (decorated, wrapped with `tf.function(step)`,
Keras `train_step`), steps called once, and tapes that do not update weights (computing
gradients for saliency maps, for instance).
"""
    valid = (
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
    )
    invalid = (
        Invalid("""
            import tensorflow as tf
            def train_step(model, opt, x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(model(x) - y))
                grads = tape.gradient(loss, model.trainable_variables)
                opt.apply_gradients(zip(grads, model.trainable_variables))
                return loss
            def fit(model, opt, ds):
                for x, y in ds:
                    train_step(model, opt, x, y)
        """, count=1, lines=(2,), fixed="""
            import tensorflow as tf
            @tf.function
            def train_step(model, opt, x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(model(x) - y))
                grads = tape.gradient(loss, model.trainable_variables)
                opt.apply_gradients(zip(grads, model.trainable_variables))
                return loss
            def fit(model, opt, ds):
                for x, y in ds:
                    train_step(model, opt, x, y)
        """),
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
        # A public step for other modules to call: every call eager.
        Invalid("""
            import tensorflow as tf
            def train_step(model, optimizer, loss_fn, inputs, targets):
                with tf.GradientTape() as tape:
                    loss = loss_fn(targets, model(inputs, training=True))
                grads = tape.gradient(loss, model.trainable_weights)
                optimizer.apply_gradients(zip(grads, model.trainable_weights))
                return loss
        """, count=1, lines=(2,), fixed="""
            import tensorflow as tf
            @tf.function
            def train_step(model, optimizer, loss_fn, inputs, targets):
                with tf.GradientTape() as tape:
                    loss = loss_fn(targets, model(inputs, training=True))
                grads = tape.gradient(loss, model.trainable_weights)
                optimizer.apply_gradients(zip(grads, model.trainable_weights))
                return loss
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
    )

    def check(self, node: ast.AST, ctx: Context) -> Iterator[Finding]:
        if not ctx.imports_tf or not _mentions_training(ctx) or not _is_tape_with(ctx, node):
            return
        if ctx.in_tf_function(node):
            return
        loops = ctx.enclosing_loops(node)
        if loops:
            loop = loops[0]
            if type(loop) in (ast.For, ast.AsyncFor, ast.While) and _updates_weights(loop.body):  # type: ignore[attr-defined]
                yield self.finding(ctx, node, end_node=node.items[-1].context_expr)  # type: ignore[attr-defined]
            return
        fn = ctx.enclosing_function(node)
        if type(fn) not in _DEFS or not _updates_weights(fn.body):  # type: ignore[union-attr]
            return
        first_tape = next((n for n in ast.walk(fn) if type(n) in (ast.With, ast.AsyncWith)  # type: ignore[arg-type]
                           and _is_tape_with(ctx, n)), None)
        if first_tape is not node:
            return  # one finding per step function
        if called_in_loop(ctx, fn) is not None:  # type: ignore[arg-type]
            message = None
        elif _unreferenced(ctx, fn):  # type: ignore[arg-type]
            message = ("training step (GradientTape + apply_gradients) not compiled with "
                       "tf.function: every call runs eagerly")
        else:
            return
        finding = self.finding(ctx, fn, message, fix=self._fix(ctx, fn))  # type: ignore[arg-type]
        loc = finding.location
        header = dataclasses.replace(loc, end_line=loc.line,
                                     end_column=len(ctx.lines[loc.line - 1].rstrip("\r\n")))
        yield dataclasses.replace(finding, location=header)

    def _fix(self, ctx: Context, fn: ast.AST) -> Fix | None:
        tf = ctx.module_alias("tensorflow")
        if tf is None or fn.decorator_list:  # type: ignore[attr-defined]
            return None
        return self.unsafe_fix(ctx.insert_before(fn, f"@{tf}.function\n{ctx.indent_of(fn)}"),
                               description="compile the training step with tf.function")
