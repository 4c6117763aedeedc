"""TFP105: a Keras model called (or ``predict``-ed) one example at a time in a loop."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from tfperf.core.findings import Finding
from tfperf.lint.analysis.examples import one_example, one_sample
from tfperf.lint.analysis.keras_models import is_keras_model
from tfperf.lint.analysis.loops import iterates_dataset
from tfperf.lint.rule import Invalid, Rule, Valid
from tfperf.lint.semantic import Context

_FOR_LOOPS = (ast.For, ast.AsyncFor, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
PREDICT_METHODS = frozenset({"predict", "predict_on_batch"})
def _model_input(call: ast.Call) -> ast.expr | None:
    if call.args:
        return call.args[0]
    for k in call.keywords:
        if k.arg in ("x", "inputs"):
            return k.value
    return None


class ModelCallPerExample(Rule):
    code = "TFP105"
    batches_loops = True
    name = "model-call-per-example"
    message = "Keras model run one example at a time in a loop: batch the examples"
    hint = ("call the model (or model.predict) once on the whole batch, e.g. "
            "model.predict(x, batch_size=256), or iterate a batched tf.data dataset")
    claims = ("S12",)
    group = "preview"  # judged 3/4 true or minor (75 %) over 153 repositories, under the 80 % bar
    docs = """\
## What it does
Finds a Keras model (a name bound to `keras.Model(...)`, `keras.Sequential(...)`,
`keras.models.load_model(...)`, `keras.applications.X(...)`, an instance of a `keras.Model`
subclass, or the result of a module function returning one) called as `model(x)`,
`model.predict(x)` or `model.predict_on_batch(x)` inside a loop, where `x` is one example
of the loop's data made into a batch of one: `x[None]`, `np.expand_dims(x, 0)`,
`x.reshape(1, -1)`, `X[i:i + 1]`, `np.array([x])`.

## Why is this bad?
A model call has a fixed cost (Python dispatch, one kernel launch per layer, and for
`predict` building a data adapter and a step function each time) that a batch of one cannot
amortise, and one example leaves the hardware's parallelism idle. Whole-tensor work beats
Python loops of small ops by orders of magnitude (claim S12); `predict` per example is often
milliseconds each, where one batched call costs about the same as a single example.

## Example
```python
preds = []
for i in range(len(x_test)):
    preds.append(model.predict(x_test[i:i + 1]))
```

## Use instead
```python
preds = model.predict(x_test, batch_size=256)
```
or `model(x_batch, training=False)` on batches from `tf.data`.

## Fix safety
No automatic fix: the loop's body may do more per example than the call.

## Known limitations
In `preview` (not on by default): on the 153 repositories judged so far it fired 4 times, 3
true or minor (75 %), under the 80 % a default rule needs; one false finding was three test
images of different sizes, which cannot be stacked into one batch (docs/lint.md, "Rules that
rarely fire").

Not reported: `predict` on one transition of a sampled replay minibatch (TFP110, a default
rule, reports it), models called on a whole batch per iteration (a loop over a dataset, a
training loop, autoregressive generation that feeds the growing sequence back), the same
example run again by an inner loop (augmenting one image several times to show it), and models
the rule cannot tell are Keras models (a parameter without annotation, an attribute).
"""
    valid = (
        # One batched call.
        Valid("""
            import keras
            model = keras.models.load_model('m.keras')
            preds = model.predict(x_test, batch_size=256)
        """),
        # Per batch, over a dataset.
        Valid("""
            import tensorflow as tf
            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            ds = tf.data.Dataset.from_tensor_slices(xs).batch(64)
            for batch in ds:
                out = model(batch, training=False)
        """),
        # Autoregressive generation: the whole sequence goes back in each step.
        Valid("""
            import keras
            model = keras.models.load_model('lm.keras')
            def generate(tokens, n):
                for _ in range(n):
                    logits = model(tokens)
                    tokens = keras.ops.concatenate([tokens, logits[:, -1:]], axis=1)
                return tokens
        """),
        # Not a Keras model: a user's object with a predict method (e.g. scikit-learn).
        Valid("""
            import numpy as np
            from sklearn.linear_model import LinearRegression
            model = LinearRegression()
            for x in X:
                y = model.predict(x.reshape(1, -1))
        """),
        # A loop over files: each image is new data, loaded per iteration.
        Valid("""
            import numpy as np
            import tensorflow as tf
            model = tf.keras.applications.MobileNetV2()
            for path in paths:
                img = load_image(path)
                label = model.predict(np.expand_dims(img, 0))
        """),
        # One image augmented nine times for display: the inner loop repeats one input.
        Valid("""
            import tensorflow as tf
            augment = tf.keras.Sequential([tf.keras.layers.RandomFlip()])
            for images, labels in batches:
                first_image = images[0]
                for i in range(9):
                    shown = augment(tf.expand_dims(first_image, 0), training=True)
        """),
        # Training loop: one call per batch of a Python list of batches.
        Valid("""
            import keras
            model = keras.Sequential([keras.layers.Dense(1)])
            for x_batch, y_batch in batches:
                loss = model.train_on_batch(x_batch, y_batch)
                y = model(x_batch)
        """),
    )
    invalid = (
        Invalid("""
            import keras
            model = keras.models.load_model('m.keras')
            preds = []
            for i in range(len(x_test)):
                preds.append(model.predict(x_test[i:i + 1]))
        """, count=1, lines=(5,)),
        Invalid("""
            import numpy as np
            import tensorflow as tensorflow_alias
            inputs = tensorflow_alias.keras.Input((4,))
            outputs = tensorflow_alias.keras.layers.Dense(2)(inputs)
            net = tensorflow_alias.keras.Model(inputs, outputs)
            scores = [net(np.expand_dims(x, 0)) for x in samples]
        """, count=1, lines=(6,)),
        # A Model subclass instance; the batch of one built in a variable first.
        Invalid("""
            import tensorflow as tf
            class Net(tf.keras.Model):
                def call(self, x):
                    return x
            net = Net()
            for i, img in enumerate(images):
                batch = img[None, ...].astype('float32') / 255.0
                out = net(batch, training=False)
        """, count=1, lines=(8,)),
        # A model returned by a module function; `from keras.models import load_model`.
        Invalid("""
            from keras.models import load_model
            def build():
                return load_model('m.keras')
            def run(xs):
                model = build()
                out = []
                for i in range(xs.shape[0]):
                    out.append(model.predict_on_batch(xs[i].reshape(1, -1)))
                return out
        """, count=1, lines=(8,)),
    )

    def applies_to(self, ctx: Context) -> bool:
        # Every finding is a call in a `for` loop or comprehension, in a module importing TF.
        return ctx.imports_tf and bool(ctx.nodes_of(*_FOR_LOOPS))

    def check_module(self, ctx: Context) -> Iterator[Finding]:
        # Only `m.predict(...)`/`m.predict_on_batch(...)` and bare-name calls `m(...)` can be
        # model calls: those groups of calls, not a dispatch per call of the module.
        # (`applies_to` has checked that the module imports TF.)
        by_attr, by_name = ctx.call_groups()
        for method in PREDICT_METHODS:
            for node in by_attr.get(method, ()):
                yield from self._check(node, ctx, node.func.value)
        for calls in by_name.values():
            for node in calls:
                yield from self._check(node, ctx, node.func)

    def _check(self, node: ast.Call, ctx: Context, model: ast.AST) -> Iterator[Finding]:
        if tfp105_reports(ctx, node, model):
            yield self.finding(ctx, node)


def tfp105_reports(ctx: Context, node: ast.Call, model: ast.AST) -> bool:
    """Whether TFP105 reports the call ``node`` of ``model`` (TFP110 leaves such calls to
    it, and reports the rest of the same shape)."""
    if type(model) is not ast.Name:
        return False
    arg = _model_input(node)
    if arg is None:
        return False
    b = ctx.binding(model)  # cached; is_keras_model needs an assigned name or a parameter
    if b is None or b.kind not in ("assign", "param"):
        return False
    loops = [lp for lp in ctx.enclosing_loops(node) if type(lp) is not ast.While]
    if not loops or not is_keras_model(ctx, model):
        return False
    if any(iterates_dataset(ctx, loop) for loop in loops):
        return False
    if type(node.func) is ast.Attribute and node.func.attr in PREDICT_METHODS \
            and one_sample(ctx, arg, loops[0]):
        return False  # a predict per sampled replay transition: TFP110's (default)
    # The innermost loop must be the one feeding examples: the same example run again in
    # an inner loop (augmenting one image nine times to show them) is not per-example.
    return one_example(ctx, arg, loops[0])
