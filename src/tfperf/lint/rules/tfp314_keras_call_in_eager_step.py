"""TFP314: a Keras class's ``call`` run eagerly by a training loop's GradientTape step."""

from __future__ import annotations

import ast
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from tfperf.core.findings import Finding
from tfperf.lint.analysis.eager_steps import MANY_OPS, dispatches, is_tape_with, trains
from tfperf.lint.analysis.receivers import project_instance
from tfperf.lint.analysis.tf_functions import tf_function_decorator_or_wrapper
from tfperf.lint.analysis.traced import eager_guarded, traced
from tfperf.lint.analysis.trips import FEW_MODEL_CALLS, few_runs
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context
from tfperf.lint.semantic.tf_api import TF_FUNCTION_NAMES

if TYPE_CHECKING:
    from tfperf.analysis.project import Project

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_COMMENTED = ("# @tf.function", "#@tf.function")


def _compiled(ctx: Context, cls: ast.ClassDef, call: Any) -> bool:
    """``call`` is compiled: decorated, or wrapped on the instance
    (``self.call = tf.function(self.call)``)."""
    if tf_function_decorator_or_wrapper(ctx, call) is not None:
        return True
    setup = [s for s in cls.body if type(s) in _DEFS and s.name in ("__init__", "build")]
    for node in (n for s in setup for n in ast.walk(s)):
        if type(node) is ast.Call and any(
                type(a) is ast.Attribute and a.attr == "call" and type(a.value) is ast.Name
                and a.value.id == "self" for a in node.args) \
                and ctx.call_qualname(node) in TF_FUNCTION_NAMES:
            return True
    return False


def _callee(func: Any) -> bool:
    """A call of a name or of an attribute of ``self`` (``loss(...)``, ``self.net(x)``)."""
    return type(func) is ast.Name or (type(func) is ast.Attribute
                                      and type(func.value) is ast.Name
                                      and func.value.id == "self")


def _where(path: str, pos: list[int]) -> str:
    name = os.path.basename(path)
    return f"{name}:{pos[0]}" if not pos[4] else f"{name}, cell {pos[4]}, line {pos[0]}"


class KerasCallInEagerStep(Rule):
    code = "TFP314"
    name = "keras-call-in-eager-step"
    message = ("Keras call of many ops run eagerly by a training loop's GradientTape step: "
               "each op and layer is dispatched from Python, one by one, every step")
    hint = ("compile the training step with @tf.function (this call is then traced with "
            "it); where the step must stay eager (NumPy, printing, Python randomness in it), "
            "decorate this call with @tf.function")
    claims = ("S13",)
    group = "perf"  # stop 45: corpus 8 findings judged 4 true / 4 minor / 0 false (docs/lint.md)
    node_types = ()
    requires_imports = frozenset({"tensorflow", "keras"})
    docs = """\
## What it does
Finds the `call` method of a Keras `Model` or `Layer` subclass of the project (a loss, a
detector head, a network) that dispatches six or more ops and layer calls (its TensorFlow
ops, the layers it holds on `self`, the ops of its own methods it calls), not compiled, whose
instance is called inside the `tf.GradientTape` block of a training loop that runs eagerly
(a `for`/`while` loop whose body applies the gradients), in the same module or in another
module of the project: the instance built there (`loss = YoloLoss()`, `self.net = Net()`),
or passed as a parameter by that module's call of the training function
(`train(model, ...)` with `model = WideResNet(...)`). Also where the tape sits in a step
function that another module's loop calls per iteration. Reported at the `call` method's
`def` (from a commented-out `# @tf.function` line right above it, when there is one), naming
the call in the step: that is where the fix goes when the step itself stays eager.

## Why is this bad?
Keras traces `call` only under `fit`/`predict` or inside a `tf.function`. Called by an eager
loop, every op and layer in it is dispatched from Python per step. `rule_claims.py --cases
TFP314` (TF 2.21 CPU, a 40-op box loss on a small conv net, 8 images): 21.9 ms a step eager,
10.3 ms with the loss's `call` compiled (2.1x), 2.3 ms with the whole step compiled (9.5x).

## Example
```python
# model.py
class BoxLoss(tf.keras.Model):
    def call(self, pred, target):
        ...  # forty small ops

# train.py
loss_fn = BoxLoss()
for x, y in ds:
    with tf.GradientTape() as tape:
        loss = loss_fn(model(x), y)
    opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables),
                            model.trainable_variables))
```

## Use instead
Compile the step (`@tf.function def train_step(x, y): ...`), or, where it must stay eager:
```python
class BoxLoss(tf.keras.Model):
    @tf.function
    def call(self, pred, target):
        ...
```

## Fix safety
No automatic fix. A compiled `call` runs its Python once per trace: Python side effects and
NumPy calls in it run once, and Python arguments that change retrace it.

## Known limitations
An instance reached through more than one parameter hop, a container, or a factory is not
followed; a `call` of layer calls in a loop (`for unit in self.units`) counts as one. TFP306
reports the eager step itself, at the loop.
"""
    valid = (
        Valid("""
            import tensorflow as tf
            class Loss(tf.keras.Model):
                @tf.function
                def call(self, p, t):
                    d = tf.square(p - t)
                    m = tf.cast(t > 0, tf.float32)
                    a = tf.reduce_sum(d * m, -1)
                    b = tf.reduce_max(d, -1)
                    c = tf.sqrt(tf.abs(p))
                    return tf.reduce_mean(a + b) + tf.reduce_mean(c)
            model = tf.keras.Sequential([tf.keras.layers.Dense(4)])
            opt = tf.keras.optimizers.SGD()
            loss_fn = Loss()
            for x, y in ds:
                with tf.GradientTape() as tape:
                    loss = loss_fn(model(x), y)
                grads = tape.gradient(loss, model.trainable_variables)
                opt.apply_gradients(zip(grads, model.trainable_variables))
        """, spelling="loop: call compiled"),
        Valid("""
            import tensorflow as tf
            class Loss(tf.keras.Model):
                def call(self, p, t):
                    d = tf.square(p - t)
                    m = tf.cast(t > 0, tf.float32)
                    a = tf.reduce_sum(d * m, -1)
                    b = tf.reduce_max(d, -1)
                    c = tf.sqrt(tf.abs(p))
                    return tf.reduce_mean(a + b) + tf.reduce_mean(c)
            model = tf.keras.Sequential([tf.keras.layers.Dense(4)])
            opt = tf.keras.optimizers.SGD()
            loss_fn = Loss()
            @tf.function
            def train_step(x, y):
                with tf.GradientTape() as tape:
                    loss = loss_fn(model(x), y)
                grads = tape.gradient(loss, model.trainable_variables)
                opt.apply_gradients(zip(grads, model.trainable_variables))
            for x, y in ds:
                train_step(x, y)
        """, spelling="name: the step compiled"),
        Valid("""
            import tensorflow as tf
            class Loss(tf.keras.Model):
                def call(self, p, t):
                    return tf.reduce_mean(tf.square(p - t))
            model = tf.keras.Sequential([tf.keras.layers.Dense(4)])
            opt = tf.keras.optimizers.SGD()
            loss_fn = Loss()
            for i in range(len(xs)):
                with tf.GradientTape() as tape:
                    loss = loss_fn(model(xs[i]), ys[i])
                grads = tape.gradient(loss, model.trainable_variables)
                opt.apply_gradients(zip(grads, model.trainable_variables))
        """, spelling="index: a call of two ops"),
        Valid("""
            from train import run
        """, files={"train.py": """
            import tensorflow as tf
            from nets import Head
            head = Head()
            def run(ds):
                for x in ds:
                    with tf.GradientTape() as tape:
                        y = head(x)
                    print(tape.gradient(y, x))
        """, "nets.py": """
            import tensorflow as tf
            class Head(tf.keras.layers.Layer):
                def call(self, x):
                    a = tf.nn.relu(x)
                    b = tf.reduce_sum(a, -1)
                    c = tf.sqrt(tf.abs(x))
                    d = tf.reduce_max(c, -1)
                    e = tf.exp(-b)
                    return tf.reduce_mean(e + d) + tf.reduce_mean(a)
        """}, spelling="module: a tape that applies no update (saliency)"),
        Valid("""
            import tensorflow as tf
            # %%
            class Net(tf.keras.Model):
                def __init__(self):
                    super().__init__()
                    self.a, self.b = tf.keras.layers.Dense(8), tf.keras.layers.Dense(8)
                    self.c, self.d = tf.keras.layers.Dense(8), tf.keras.layers.Dense(8)
                    self.e, self.f = tf.keras.layers.Dense(8), tf.keras.layers.Dense(1)
                def call(self, x):
                    return self.f(self.e(self.d(self.c(self.b(self.a(x))))))
            # %%
            net = Net()
            net.compile("adam", "mse")
            net.fit(x_train, y_train, epochs=5)
        """, notebook=True, spelling="notebook: trained by fit"),
        Valid("""
            import tensorflow as tf
            class Loss(tf.keras.Model):
                def __init__(self):
                    super().__init__()
                    self.call = tf.function(self.call)
                def call(self, p, t):
                    d = tf.square(p - t)
                    m = tf.cast(t > 0, tf.float32)
                    a = tf.reduce_sum(d * m, -1)
                    b = tf.reduce_max(d, -1)
                    c = tf.sqrt(tf.abs(p))
                    return tf.reduce_mean(a + b) + tf.reduce_mean(c)
            model = tf.keras.Sequential([tf.keras.layers.Dense(4)])
            opt = tf.keras.optimizers.SGD()
            loss_fn = Loss()
            for x, y in ds:
                with tf.GradientTape() as tape:
                    loss = loss_fn(model(x), y)
                grads = tape.gradient(loss, model.trainable_variables)
                opt.apply_gradients(zip(grads, model.trainable_variables))
        """, spelling="name: call wrapped in __init__"),
    )
    invalid = (
        Invalid("""
            import tensorflow as tf
            class Loss(tf.keras.Model):
                def call(self, p, t):
                    d = tf.square(p - t)
                    m = tf.cast(t > 0, tf.float32)
                    a = tf.reduce_sum(d * m, -1)
                    b = tf.reduce_max(d, -1)
                    c = tf.sqrt(tf.abs(p))
                    return tf.reduce_mean(a + b) + tf.reduce_mean(c)
            model = tf.keras.Sequential([tf.keras.layers.Dense(4)])
            opt = tf.keras.optimizers.SGD()
            loss_fn = Loss()
            for x, y in ds:
                with tf.GradientTape() as tape:
                    loss = loss_fn(model(x), y)
                grads = tape.gradient(loss, model.trainable_variables)
                opt.apply_gradients(zip(grads, model.trainable_variables))
        """, count=1, lines=(3,), spelling="loop: for over a dataset"),
        Invalid("""
            import tensorflow as tf
            class Loss(tf.keras.Model):
                def call(self, p, t):
                    d = tf.square(p - t)
                    m = tf.cast(t > 0, tf.float32)
                    a = tf.reduce_sum(d * m, -1)
                    b = tf.reduce_max(d, -1)
                    c = tf.sqrt(tf.abs(p))
                    return tf.reduce_mean(a + b) + tf.reduce_mean(c)
            model = tf.keras.Sequential([tf.keras.layers.Dense(4)])
            opt = tf.keras.optimizers.SGD()
            loss_fn = Loss()
            i = 0
            while i < len(xs):
                with tf.GradientTape() as tape:
                    loss = loss_fn(model(xs[i]), ys[i])
                grads = tape.gradient(loss, model.trainable_variables)
                opt.apply_gradients(zip(grads, model.trainable_variables))
                i += 1
        """, count=1, lines=(3,), spelling="index: xs[i] in a while loop"),
        Invalid("""
            import tensorflow as tf
            class Net(tf.keras.Model):
                def __init__(self):
                    super().__init__()
                    self.a, self.b = tf.keras.layers.Dense(8), tf.keras.layers.Dense(8)
                    self.c, self.d = tf.keras.layers.Dense(8), tf.keras.layers.Dense(8)
                    self.e, self.f = tf.keras.layers.Dense(8), tf.keras.layers.Dense(1)
                # @tf.function
                def call(self, x):
                    return self.f(self.e(self.d(self.c(self.b(self.a(x))))))
            def train(net, opt, ds):
                for x, y in ds:
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_mean(tf.square(net(x) - y))
                    grads = tape.gradient(loss, net.trainable_variables)
                    opt.apply_gradients(zip(grads, net.trainable_variables))
            def main():
                model = Net()
                train(model, tf.keras.optimizers.Adam(), ds)
        """, count=1, lines=(8,), spelling="name: a parameter given the instance"),
        Invalid("""
            import tensorflow as tf
            class YoloLoss(tf.keras.Model):
                def call(self, outputs, labels):
                    iou = self.box_iou(outputs, labels)
                    mask = tf.cast(iou > 0.5, tf.float32)
                    return tf.reduce_sum(mask * tf.square(outputs - labels))
                def box_iou(self, a, b):
                    lo = tf.maximum(a[..., :2], b[..., :2])
                    hi = tf.minimum(a[..., 2:], b[..., 2:])
                    inter = tf.reduce_prod(tf.maximum(hi - lo, 0.0), -1)
                    return inter / (tf.reduce_prod(a[..., 2:], -1) + 1e-9)
        """, files={"train.py": """
            import tensorflow as tf
            from example import YoloLoss
            def main(model, ds):
                yolo_loss = YoloLoss()
                opt = tf.keras.optimizers.Adam()
                for images, labels in ds:
                    with tf.GradientTape() as tape:
                        loss = yolo_loss(model(images), labels)
                    grads = tape.gradient(loss, model.trainable_variables)
                    opt.apply_gradients(zip(grads, model.trainable_variables))
        """}, count=1, lines=(3,), spelling="module"),
        Invalid("""
            import tensorflow as tf
            class Head(tf.keras.layers.Layer):
                def call(self, x):
                    a = tf.nn.relu(x)
                    b = tf.reduce_sum(a, -1)
                    c = tf.sqrt(tf.abs(x))
                    d = tf.reduce_max(c, -1)
                    return tf.reduce_mean(tf.exp(-b) + d)
        """, files={"agent.py": """
            import tensorflow as tf
            from example import Head
            class Agent:
                def __init__(self):
                    self.head = Head()
                    self.opt = tf.keras.optimizers.Adam()
                def learn(self, x):
                    with tf.GradientTape() as tape:
                        loss = self.head(x)
                    grads = tape.gradient(loss, self.head.trainable_variables)
                    self.opt.apply_gradients(zip(grads, self.head.trainable_variables))
        """, "run.py": """
            from agent import Agent
            agent = Agent()
            for step in range(100000):
                agent.learn(batch())
        """}, count=1, lines=(3,), spelling="module: a step method another module loops"),
        Invalid("""
            import tensorflow as tf
            # %%
            class Loss(tf.keras.Model):
                def call(self, p, t):
                    d = tf.square(p - t)
                    m = tf.cast(t > 0, tf.float32)
                    a = tf.reduce_sum(d * m, -1)
                    b = tf.reduce_max(d, -1)
                    c = tf.sqrt(tf.abs(p))
                    return tf.reduce_mean(a + b) + tf.reduce_mean(c)
            # %%
            model = tf.keras.Sequential([tf.keras.layers.Dense(4)])
            opt = tf.keras.optimizers.SGD()
            loss_fn = Loss()
            for epoch in range(10):
                for x, y in ds:
                    with tf.GradientTape() as tape:
                        loss = loss_fn(model(x), y)
                    grads = tape.gradient(loss, model.trainable_variables)
                    opt.apply_gradients(zip(grads, model.trainable_variables))
        """, count=1, notebook=True, spelling="notebook"),
    )

    def facts_need_calls(self, facts: list[Any]) -> bool:
        """Only a step function's facts ask the project who calls it (``hot_call``): the
        rest are positions and names, which a lean summary keeps."""
        return any("fn" in f for f in facts)

    def publish(self, ctx: Context) -> list[dict] | None:
        if ctx.tf_version < (2, 0):
            return None  # TF 1.x: a Keras call builds graph ops once
        from tfperf.analysis.summary import header_position, position, qualnames

        facts: list[dict] = []
        names = qualnames(ctx)
        for cls in ctx.nodes_of(ast.ClassDef):
            if not ctx.is_keras_class(cls):  # type: ignore[arg-type]
                continue
            call = next((s for s in cls.body
                         if type(s) in _DEFS and s.name == "call"), None)
            q = names.get(cls)
            if call is None or q is None:
                continue
            n = dispatches(ctx, cls, call)  # type: ignore[arg-type]
            if n < MANY_OPS or _compiled(ctx, cls, call):  # type: ignore[arg-type]
                continue
            pos = header_position(ctx, call)
            above = ctx.lines[call.lineno - 2].strip() if call.lineno > 1 else ""
            commented = not call.decorator_list and above.replace(" ", "").startswith(
                tuple(c.replace(" ", "") for c in _COMMENTED))
            if commented:  # the fix is to uncomment it: the finding starts there
                pos = [call.lineno - 1, pos[1], pos[2], pos[3], pos[4]]
            facts.append({"cls": q, "pos": pos, "ops": n, "commented": commented})
        for w in ctx.nodes_of(ast.With, ast.AsyncWith):
            if not is_tape_with(ctx, w) or ctx.in_tf_function(w) or traced(ctx, w) \
                    or eager_guarded(ctx, w):
                continue
            loops = ctx.enclosing_loops(w)
            fn_q = ""
            if loops:
                if type(loops[0]) not in _LOOPS or not trains(loops[0].body) \
                        or few_runs(ctx, w, FEW_MODEL_CALLS):
                    continue
            else:
                fn: Any = ctx.enclosing_function(w)
                if type(fn) not in _DEFS or not trains(fn.body):
                    continue
                fn_q = names.get(fn, "")
                if not fn_q:
                    continue
            for stmt in w.body:
                for c in ast.walk(stmt):
                    if type(c) is not ast.Call or not _callee(c.func):
                        continue
                    ref = project_instance(ctx, c.func)
                    if ref is None or ref[0] == "*":
                        continue
                    fact: dict[str, Any] = {"use": list(ref), "pos": position(ctx, c)}
                    if fn_q:
                        fact["fn"] = fn_q  # run per step only if a loop calls it
                    facts.append(fact)
        return facts or None

    def check_project(self, project: Project) -> Iterator[Finding]:
        defs: dict[tuple[str, str], dict] = {}
        for m in project.modules.values():
            for f in m.facts.get(self.code, ()):
                if "cls" in f:
                    defs[(m.path, f["cls"])] = f
        if not defs:
            return
        reported: set[tuple[str, str]] = set()
        for m in project.modules.values():
            for f in m.facts.get(self.code, ()):
                if "use" not in f:
                    continue
                spec, q = f["use"]
                target = m if spec == "" else project.module(m.path, spec)
                if target is None:
                    continue
                key = (target.path, q)
                d = defs.get(key)
                if d is None or key in reported:
                    continue
                where = _where(m.path, f["pos"])
                if "fn" in f:
                    site = project.hot_call(m.path, f["fn"], few=FEW_MODEL_CALLS)
                    if site is None:
                        continue
                    where = f"{where}, in {f['fn'].rsplit('.', 1)[-1]}() called per " \
                            f"iteration at {project.where(site)}"
                reported.add(key)
                note = "; its @tf.function is commented out" if d.get("commented") else ""
                yield self.project_finding(
                    target.path, d["pos"],
                    f"{self.message} ({q}.call, {d['ops']} ops and layer calls; called at "
                    f"{where}{note})")
