"""TFP306: a GradientTape training step run eagerly, step after step, in a loop."""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Iterator

from tfperf.core.findings import Finding, Fix
from tfperf.lint.analysis.callers import called_in_loop
from tfperf.lint.rule import Example, Rule
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

Not reported: steps that are already compiled (decorated, wrapped with `tf.function(step)`,
Keras `train_step`), steps called once, and tapes that do not update weights (computing
gradients for saliency maps, for instance).
"""
    valid = (
        # Compiled step.
        "import tensorflow as tf\n"
        "@tf.function\n"
        "def train_step(model, opt, x):\n"
        "    with tf.GradientTape() as tape:\n"
        "        loss = tf.reduce_mean(model(x))\n"
        "    grads = tape.gradient(loss, model.trainable_variables)\n"
        "    opt.apply_gradients(zip(grads, model.trainable_variables))\n"
        "for x in tf.data.Dataset.range(3):\n"
        "    train_step(None, None, x)\n",
        # Wrapped elsewhere.
        "import tensorflow as tf\n"
        "def train_step(model, opt, x):\n"
        "    with tf.GradientTape() as tape:\n"
        "        loss = tf.reduce_mean(model(x))\n"
        "    grads = tape.gradient(loss, model.trainable_variables)\n"
        "    opt.apply_gradients(zip(grads, model.trainable_variables))\n"
        "fast_step = tf.function(train_step)\n",
        # Gradients for a saliency map: no weight update.
        "import tensorflow as tf\n"
        "def saliency(model, images):\n"
        "    maps = []\n"
        "    for img in images:\n"
        "        with tf.GradientTape() as tape:\n"
        "            tape.watch(img)\n"
        "            score = tf.reduce_max(model(img))\n"
        "        maps.append(tape.gradient(score, img))\n"
        "    return maps\n",
        # A step that is called once (a smoke test), not in a loop.
        "import tensorflow as tf\n"
        "def train_step(model, opt, x):\n"
        "    with tf.GradientTape() as tape:\n"
        "        loss = tf.reduce_mean(model(x))\n"
        "    grads = tape.gradient(loss, model.trainable_variables)\n"
        "    opt.apply_gradients(zip(grads, model.trainable_variables))\n"
        "def smoke_test(model, opt):\n"
        "    train_step(model, opt, tf.ones([1, 4]))\n",
        # Keras traces train_step itself.
        "import tensorflow as tf\n"
        "class M(tf.keras.Model):\n"
        "    def train_step(self, data):\n"
        "        x, y = data\n"
        "        with tf.GradientTape() as tape:\n"
        "            loss = self.compiled_loss(y, self(x, training=True))\n"
        "        grads = tape.gradient(loss, self.trainable_variables)\n"
        "        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))\n"
        "        return {}\n",
        # Somebody else's GradientTape (a lookalike).
        "from mylib import GradientTape\n"
        "def step(opt):\n"
        "    with GradientTape() as tape:\n"
        "        pass\n"
        "    opt.apply_gradients([])\n"
        "for i in range(100):\n"
        "    step(None)\n",
    )
    invalid = (
        Example(
            "import tensorflow as tf\n"
            "def train_step(model, opt, x, y):\n"
            "    with tf.GradientTape() as tape:\n"
            "        loss = tf.reduce_mean(tf.square(model(x) - y))\n"
            "    grads = tape.gradient(loss, model.trainable_variables)\n"
            "    opt.apply_gradients(zip(grads, model.trainable_variables))\n"
            "    return loss\n"
            "def fit(model, opt, ds):\n"
            "    for x, y in ds:\n"
            "        train_step(model, opt, x, y)\n",
            count=1, lines=(2,),
            fixed="import tensorflow as tf\n"
                  "@tf.function\n"
                  "def train_step(model, opt, x, y):\n"
                  "    with tf.GradientTape() as tape:\n"
                  "        loss = tf.reduce_mean(tf.square(model(x) - y))\n"
                  "    grads = tape.gradient(loss, model.trainable_variables)\n"
                  "    opt.apply_gradients(zip(grads, model.trainable_variables))\n"
                  "    return loss\n"
                  "def fit(model, opt, ds):\n"
                  "    for x, y in ds:\n"
                  "        train_step(model, opt, x, y)\n"),
        # Inline in the training loop: reported at the tape, no fix.
        Example(
            "import tensorflow as tf\n"
            "def fit(model, opt, ds, epochs):\n"
            "    for epoch in range(epochs):\n"
            "        for x, y in ds:\n"
            "            with tf.GradientTape() as tape:\n"
            "                loss = tf.reduce_mean(tf.square(model(x) - y))\n"
            "            grads = tape.gradient(loss, model.trainable_variables)\n"
            "            opt.apply_gradients(zip(grads, model.trainable_variables))\n",
            count=1, lines=(5,)),
        # Method called per batch, alias import, minimize with a tape.
        Example(
            "import tensorflow as tensorflow_alias\n"
            "class Trainer:\n"
            "    def step(self, x):\n"
            "        with tensorflow_alias.GradientTape() as tape:\n"
            "            loss = tensorflow_alias.reduce_sum(self.model(x))\n"
            "        self.opt.minimize(loss, self.model.trainable_variables, tape=tape)\n"
            "    def fit(self, batches):\n"
            "        for x in batches:\n"
            "            self.step(x)\n",
            count=1, lines=(3,),
            fixed="import tensorflow as tensorflow_alias\n"
                  "class Trainer:\n"
                  "    @tensorflow_alias.function\n"
                  "    def step(self, x):\n"
                  "        with tensorflow_alias.GradientTape() as tape:\n"
                  "            loss = tensorflow_alias.reduce_sum(self.model(x))\n"
                  "        self.opt.minimize(loss, self.model.trainable_variables, tape=tape)\n"
                  "    def fit(self, batches):\n"
                  "        for x in batches:\n"
                  "            self.step(x)\n"),
        # A public step for other modules to call: every call eager.
        Example(
            "import tensorflow as tf\n"
            "def train_step(model, optimizer, loss_fn, inputs, targets):\n"
            "    with tf.GradientTape() as tape:\n"
            "        loss = loss_fn(targets, model(inputs, training=True))\n"
            "    grads = tape.gradient(loss, model.trainable_weights)\n"
            "    optimizer.apply_gradients(zip(grads, model.trainable_weights))\n"
            "    return loss\n",
            count=1, lines=(2,),
            fixed="import tensorflow as tf\n"
                  "@tf.function\n"
                  "def train_step(model, optimizer, loss_fn, inputs, targets):\n"
                  "    with tf.GradientTape() as tape:\n"
                  "        loss = loss_fn(targets, model(inputs, training=True))\n"
                  "    grads = tape.gradient(loss, model.trainable_weights)\n"
                  "    optimizer.apply_gradients(zip(grads, model.trainable_weights))\n"
                  "    return loss\n"),
        # `from tensorflow import GradientTape`; decorated otherwise: reported, not fixed.
        Example(
            "import functools\n"
            "from tensorflow import GradientTape\n"
            "@functools.lru_cache(None)\n"
            "def noop():\n"
            "    return None\n"
            "def step(model, opt, x):\n"
            "    with GradientTape() as tape:\n"
            "        loss = model(x)\n"
            "    opt.apply_gradients(zip(tape.gradient(loss, model.weights), model.weights))\n"
            "while True:\n"
            "    step(None, None, 1)\n",
            count=1, lines=(6,)),
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
